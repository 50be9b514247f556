//! A pool of child engine processes serving both roles.
//!
//! `threads` workers, each an actor task owning its child processes: one
//! evaluator and one opponent, or a single process for both roles when their
//! command and options are the same. Searches wait in one queue, most urgent
//! first (see [`Query::urgency`]), then in order of arrival, so at most
//! `threads` run at once. A child that died, stalled or answered nonsense is
//! replaced before its worker takes the next search, and the failed search is
//! tried once more on the fresh child. Shutting the pool down quits every
//! child, kills the ones that do not exit, and leaves no process behind.

use std::{cmp::Reverse, collections::BinaryHeap, sync::Arc, time::Duration};

use tokio::{
    sync::{Notify, oneshot, watch},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

use crate::{
    engine::{
        client::{ChildConfig, ChildError, Client, QUIT_TIMEOUT},
        inprocess::{InProcess, is_builtin},
    },
    mpc::{ChildLimit, Children, Query, Report, Role},
};

/// What the pool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    pub evaluator: ChildConfig,
    pub opponent: ChildConfig,
    /// Concurrent child searches (workers).
    pub threads: usize,
}

impl PoolConfig {
    /// One set of processes serves both roles when they are configured alike.
    pub fn shared_roles(&self) -> bool {
        self.evaluator == self.opponent
    }

    /// How many child processes (or in-process engines) the pool runs.
    pub fn processes(&self) -> usize {
        let per_worker = if self.shared_roles() { 1 } else { 2 };
        self.threads.max(1) * per_worker
    }
}

struct Job {
    query: Query,
    cancel: CancellationToken,
    reply: oneshot::Sender<Result<Report, ChildError>>,
}

/// Jobs waiting for a worker: most urgent first, then first come.
#[derive(Default)]
struct Queue {
    waiting: std::sync::Mutex<Waiting>,
    wakeup: Notify,
}

#[derive(Default)]
struct Waiting {
    /// `(Reverse(urgency), Reverse(arrival))`: the heap's top is the next job.
    order: BinaryHeap<(Reverse<u8>, Reverse<u64>)>,
    /// By arrival number.
    jobs: std::collections::HashMap<u64, Job>,
    arrivals: u64,
    closed: bool,
}

impl Queue {
    fn push(&self, job: Job) -> Result<(), Job> {
        {
            let Ok(mut w) = self.waiting.lock() else {
                return Err(job);
            };
            if w.closed {
                return Err(job);
            }
            let arrival = w.arrivals;
            w.arrivals += 1;
            w.order
                .push((Reverse(job.query.urgency()), Reverse(arrival)));
            w.jobs.insert(arrival, job);
        }
        self.wakeup.notify_one();
        Ok(())
    }

    /// The next job, or `None` once the queue is closed and empty.
    async fn pop(&self) -> Option<Job> {
        loop {
            let wakeup = self.wakeup.notified();
            tokio::pin!(wakeup);
            wakeup.as_mut().enable();
            {
                let mut w = self.waiting.lock().ok()?;
                if let Some((_, Reverse(arrival))) = w.order.pop() {
                    return w.jobs.remove(&arrival);
                }
                if w.closed {
                    return None;
                }
            }
            wakeup.await;
        }
    }

    fn close(&self) {
        if let Ok(mut w) = self.waiting.lock() {
            w.closed = true;
        }
        self.wakeup.notify_waiters();
    }
}

/// The running pool; see the module docs.
pub struct Pool {
    config: PoolConfig,
    queue: Arc<Queue>,
    workers: Vec<JoinHandle<()>>,
    /// Cancelled at shutdown: stops the searches under way.
    closing: CancellationToken,
    /// How many workers have started their children (or failed to).
    started: watch::Receiver<usize>,
    /// What a call costs beyond the search it asked for.
    call_cost: std::sync::Mutex<CallCost>,
}

/// The call cost assumed before any call was measured.
const INITIAL_CALL_COST: Duration = Duration::from_millis(3);

/// What a child call costs beyond the search it asked for (hash clearing,
/// pipes, a child overshooting its movetime): the median of the last
/// [`CallCost::SAMPLES`] calls. A stall of the machine inflates the few calls
/// in flight; the median does not move for them, so one stall never turns
/// the lookahead off for the moves after it.
#[derive(Debug, Clone)]
pub struct CallCost {
    /// The latest samples, oldest first.
    samples: std::collections::VecDeque<Duration>,
}

impl CallCost {
    pub const SAMPLES: usize = 31;

    pub fn new() -> CallCost {
        CallCost {
            samples: std::collections::VecDeque::with_capacity(Self::SAMPLES),
        }
    }

    pub fn add(&mut self, sample: Duration) {
        if self.samples.len() == Self::SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back(sample);
    }

    /// The median so far; [`INITIAL_CALL_COST`] before any sample.
    pub fn estimate(&self) -> Duration {
        let mut sorted: Vec<Duration> = self.samples.iter().copied().collect();
        sorted.sort_unstable();
        sorted
            .get(sorted.len() / 2)
            .copied()
            .unwrap_or(INITIAL_CALL_COST)
    }
}

impl Default for CallCost {
    fn default() -> Self {
        CallCost::new()
    }
}

impl Pool {
    /// Starts the workers; each spawns its children at once, so they are ready
    /// (or known broken) by the first search.
    pub fn start(config: PoolConfig) -> Pool {
        let queue = Arc::new(Queue::default());
        let (started_tx, started) = watch::channel(0);
        let started_tx = Arc::new(started_tx);
        let closing = CancellationToken::new();
        let workers = (1..=config.threads.max(1))
            .map(|n| {
                let worker = Worker {
                    n,
                    closing: closing.clone(),
                    config: config.clone(),
                    evaluator: None,
                    opponent: None,
                };
                tokio::spawn(worker.run(queue.clone(), started_tx.clone()))
            })
            .collect();
        Pool {
            config,
            queue,
            workers,
            closing,
            started,
            call_cost: std::sync::Mutex::new(CallCost::new()),
        }
    }

    /// Resolves when every worker has started its children (or failed to:
    /// that shows again on first use).
    pub async fn ready(&self) {
        let threads = self.workers.len();
        let mut started = self.started.clone();
        let _ = started.wait_for(|n| *n >= threads).await;
    }

    /// What one call costs beyond its search, as measured so far.
    pub fn call_cost(&self) -> Duration {
        self.call_cost
            .lock()
            .map_or(INITIAL_CALL_COST, |c| c.estimate())
    }

    /// Folds one finished call into the cost estimate.
    fn measure(&self, query: &Query, report: &Report) {
        let mut extra = report.busy_time.saturating_sub(report.search_time);
        if let ChildLimit::MoveTime(asked) = query.limit
            && !report.stopped
        {
            extra += report.search_time.saturating_sub(asked);
        }
        if let Ok(mut cost) = self.call_cost.lock() {
            cost.add(extra);
        }
    }

    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    /// Quits every child and waits for the workers (killing what outlives the
    /// deadline). A search still running is stopped first.
    pub async fn shutdown(mut self) {
        self.close();
        // A worker may be draining a stopped search (STOP_TIMEOUT) before it
        // quits its children (QUIT_TIMEOUT each).
        let deadline = super::client::STOP_TIMEOUT + 2 * QUIT_TIMEOUT + Duration::from_millis(500);
        for mut worker in std::mem::take(&mut self.workers) {
            if tokio::time::timeout(deadline, &mut worker).await.is_err() {
                tracing::warn!("a pool worker did not finish within {deadline:?}; aborting it");
                worker.abort();
                // Dropping its clients kills their processes (kill_on_drop).
                let _ = worker.await;
            }
        }
    }

    /// Stops the searches under way and lets the workers quit their children.
    fn close(&self) {
        self.closing.cancel();
        self.queue.close();
    }
}

impl Drop for Pool {
    /// A pool dropped without [`Pool::shutdown`] still ends its workers, which
    /// quit their children on their own.
    fn drop(&mut self) {
        self.close();
    }
}

impl Children for Pool {
    type Error = ChildError;

    async fn search(&self, query: Query, cancel: CancellationToken) -> Result<Report, ChildError> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .push(Job {
                query: query.clone(),
                cancel,
                reply,
            })
            .map_err(|_| ChildError::PoolClosed)?;
        let result = answer.await.unwrap_or(Err(ChildError::PoolClosed));
        if let Ok(report) = &result {
            self.measure(&query, report);
        }
        result
    }
}

/// A child engine: a process, or the built-in engine in this process.
enum Child {
    Process(Box<Client>),
    Builtin(InProcess),
}

impl Child {
    async fn start(config: &ChildConfig, label: String) -> Result<Child, ChildError> {
        if is_builtin(&config.command) {
            Ok(Child::Builtin(InProcess::new(config, label)))
        } else {
            Client::spawn(config, label)
                .await
                .map(|c| Child::Process(Box::new(c)))
        }
    }

    async fn search(
        &mut self,
        query: &Query,
        cancel: &CancellationToken,
    ) -> Result<Report, ChildError> {
        match self {
            Child::Process(client) => client.search(query, cancel).await,
            Child::Builtin(engine) => engine.search(query, cancel).await,
        }
    }

    async fn quit(self, timeout: Duration) {
        if let Child::Process(client) = self {
            client.quit(timeout).await;
        }
    }
}

struct Worker {
    n: usize,
    closing: CancellationToken,
    config: PoolConfig,
    evaluator: Option<Child>,
    opponent: Option<Child>,
}

impl Worker {
    async fn run(mut self, queue: Arc<Queue>, started: Arc<watch::Sender<usize>>) {
        // Start the children now; a failure here shows again on first use.
        for role in [Role::Evaluator, Role::Opponent] {
            if let Err(e) = self.client(role).await {
                tracing::warn!("worker {}: {e}", self.n);
            }
        }
        started.send_modify(|n| *n += 1);
        drop(started);
        loop {
            let job = queue.pop().await;
            let Some(Job {
                query,
                cancel: asked_cancel,
                mut reply,
            }) = job
            else {
                break;
            };
            if asked_cancel.is_cancelled() || reply.is_closed() || self.closing.is_cancelled() {
                let _ = reply.send(Err(ChildError::Cancelled));
                continue;
            }
            // The search stops when the asker cancels, stops waiting (its
            // future was dropped), or the pool closes.
            let cancel = CancellationToken::new();
            let (closing, n) = (self.closing.clone(), self.n);
            let mut result = Err(ChildError::Cancelled);
            for attempt in 0..2 {
                let search = self.search(&query, &cancel);
                tokio::pin!(search);
                result = loop {
                    tokio::select! {
                        r = &mut search => break r,
                        _ = asked_cancel.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
                        _ = reply.closed(), if !cancel.is_cancelled() => cancel.cancel(),
                        _ = closing.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
                    }
                };
                // A crash or a bad answer is tried once more on a fresh child;
                // a stall is not: it already cost a whole deadline, and the
                // decision goes on without it.
                match &result {
                    Err(e @ (ChildError::Died { .. } | ChildError::BadAnswer { .. }))
                        if attempt == 0 && !cancel.is_cancelled() =>
                    {
                        tracing::warn!("worker {n}: {e}; restarting the child and trying again");
                    }
                    _ => break,
                }
            }
            let _ = reply.send(result);
        }
        for client in [self.evaluator.take(), self.opponent.take()]
            .into_iter()
            .flatten()
        {
            client.quit(QUIT_TIMEOUT).await;
        }
    }

    async fn search(
        &mut self,
        query: &Query,
        cancel: &CancellationToken,
    ) -> Result<Report, ChildError> {
        let client = self.client(query.role).await?;
        let result = client.search(query, cancel).await;
        if let Err(e) = &result
            && e.needs_restart()
        {
            // Drop the broken child (killing it) so the next use starts afresh.
            let slot = self.slot(query.role);
            if let Some(client) = slot.take() {
                client.quit(Duration::from_millis(100)).await;
            }
        }
        result
    }

    fn slot(&mut self, role: Role) -> &mut Option<Child> {
        match role {
            Role::Opponent if !self.config.shared_roles() => &mut self.opponent,
            _ => &mut self.evaluator,
        }
    }

    /// The child for `role`, started if there is none.
    async fn client(&mut self, role: Role) -> Result<&mut Child, ChildError> {
        let shared = self.config.shared_roles();
        let (config, label) = match role {
            Role::Opponent if !shared => (self.config.opponent.clone(), "opponent"),
            _ if shared => (self.config.evaluator.clone(), "child"),
            _ => (self.config.evaluator.clone(), "evaluator"),
        };
        let label = format!("{label} {}", self.n);
        let slot = self.slot(role);
        if slot.is_none() {
            *slot = Some(Child::start(&config, label).await?);
        }
        match slot {
            Some(client) => Ok(client),
            None => Err(ChildError::PoolClosed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpc::{ChildLimit, Game};
    use shakmaty::{Move, Position};

    fn job(
        role: Role,
        line: Vec<Move>,
        game: &Arc<Game>,
    ) -> (Job, oneshot::Receiver<Result<Report, ChildError>>) {
        let (reply, rx) = oneshot::channel();
        let query = Query {
            role,
            game: game.clone(),
            line,
            limit: ChildLimit::Nodes(1),
        };
        (
            Job {
                query,
                cancel: CancellationToken::new(),
                reply,
            },
            rx,
        )
    }

    #[test]
    fn one_stall_does_not_move_the_call_cost() {
        let ms = Duration::from_millis;
        let mut cost = CallCost::new();
        assert_eq!(cost.estimate(), INITIAL_CALL_COST);
        for _ in 0..20 {
            cost.add(ms(2));
        }
        // A 2 s stop of the machine hits the calls in flight.
        cost.add(ms(2000));
        cost.add(ms(1900));
        assert_eq!(cost.estimate(), ms(2));
        // A lasting change is followed within SAMPLES calls.
        for _ in 0..CallCost::SAMPLES / 2 + 1 {
            cost.add(ms(9));
        }
        assert_eq!(cost.estimate(), ms(9));
    }

    #[tokio::test]
    async fn the_queue_serves_the_root_then_completions_then_starts() {
        let game = Arc::new(Game::default());
        let m = game.position().legal_moves()[0];
        let mut after = game.position().clone();
        after.play_unchecked(m);
        let w = after.legal_moves()[0];
        let queue = Queue::default();
        let mut receivers = Vec::new();
        // Arrival order: two starts, a completion, the root, a completion.
        for (role, line) in [
            (Role::Opponent, vec![m]),
            (Role::Opponent, vec![m]),
            (Role::Evaluator, vec![m, w]),
            (Role::Evaluator, vec![]),
            (Role::Evaluator, vec![m, w]),
        ] {
            let (j, rx) = job(role, line, &game);
            receivers.push(rx);
            assert!(queue.push(j).is_ok());
        }
        queue.close();
        let mut served = Vec::new();
        while let Some(j) = queue.pop().await {
            served.push((j.query.urgency(), j.query.line.len()));
        }
        assert_eq!(served, vec![(0, 0), (1, 2), (1, 2), (2, 1), (2, 1)]);
        let (j, _rx) = job(Role::Evaluator, vec![], &game);
        assert!(queue.push(j).is_err(), "a closed queue takes no job");
    }
}
