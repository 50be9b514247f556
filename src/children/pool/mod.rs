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

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use tokio::{
    sync::{oneshot, watch},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

use crate::{
    children::client::{Connect, QUIT_TIMEOUT, spawn_processes},
    children::error::{ChildError, SearchError},
    children::rules::{Listed, RulesChild},
    mpc::{ChildLimit, Children, Game, Query, Report, Role},
};

mod config;
mod queue;
mod worker;

pub use config::{PoolConfig, WorkerGroup};
use queue::Queue;
use worker::{Drops, News, Refused, RoundTrips, Tables, Worker};

/// The running pool; see the module docs.
pub struct Pool {
    config: PoolConfig,
    tables: Tables,
    queue: Arc<Queue>,
    workers: Vec<JoinHandle<()>>,
    /// Cancelled at shutdown: stops the searches under way.
    closing: CancellationToken,
    /// How many workers have started their children (or failed to).
    started: watch::Receiver<usize>,
    /// What a call costs beyond the search it asked for.
    call_cost: std::sync::Mutex<Recent<Duration>>,
    /// Nodes per second of the children's searches.
    speed: std::sync::Mutex<Recent<u64>>,
    /// Each worker's latest round trip to its children (the slower one).
    round_trips: RoundTrips,
    /// What the workers have to tell the user, not yet told.
    news: News,
    /// Why a child refused the game, if one did.
    refused: Refused,
    /// Counts `ucinewgame`s: a worker whose children have not seen the
    /// latest clears them before its next search.
    games: Arc<AtomicU64>,
    /// The rules of a game mpcmc knows by name only, from a child.
    rules: RulesChild,
}

/// The call cost assumed before any call was measured.
const INITIAL_CALL_COST: Duration = Duration::from_millis(1);

/// The last `N` samples of a measure (31 by default). Its median is what a
/// child call costs beyond the search it asked for (hash clearing, pipes, a
/// child overshooting its movetime) and how fast the children search: a
/// stall of the machine inflates the few calls in flight, the median does
/// not move for them, so one stall never turns the lookahead off for the
/// moves after it, and a lasting change is followed within half the window.
/// Its most is how late the latest answers came (`uci::lateness::Lateness`).
#[derive(Debug, Clone)]
pub struct Recent<T, const N: usize = 31> {
    /// The latest samples, oldest first.
    samples: std::collections::VecDeque<T>,
}

impl<T: Copy + Ord, const N: usize> Recent<T, N> {
    pub const SAMPLES: usize = N;

    pub fn new() -> Recent<T, N> {
        Recent {
            samples: std::collections::VecDeque::with_capacity(N),
        }
    }

    pub fn add(&mut self, sample: T) {
        if self.samples.len() == N {
            self.samples.pop_front();
        }
        self.samples.push_back(sample);
    }

    /// The median so far; `None` before any sample.
    pub fn median(&self) -> Option<T> {
        let mut sorted: Vec<T> = self.samples.iter().copied().collect();
        sorted.sort_unstable();
        sorted.get(sorted.len() / 2).copied()
    }

    /// The most so far; `None` before any sample.
    pub fn most(&self) -> Option<T> {
        self.samples.iter().max().copied()
    }
}

impl<T: Copy + Ord, const N: usize> Default for Recent<T, N> {
    fn default() -> Self {
        Recent::new()
    }
}

/// Searches shorter than this say little about a child's speed.
const SPEED_MIN_SEARCH: Duration = Duration::from_millis(2);

impl Pool {
    /// Starts the workers; each spawns its children at once, so they are ready
    /// (or known broken) by the first search.
    pub fn start(config: PoolConfig) -> Pool {
        Pool::start_with(config, spawn_processes())
    }

    /// [`Pool::start`], with children that are not built in started by
    /// `connect` (the tests' in-process fakes).
    pub fn start_with(config: PoolConfig, connect: Connect) -> Pool {
        let groups = config.worker_groups();
        let serves = groups
            .iter()
            .map(|&g| {
                let group = &config.groups[g];
                [group.serves(Role::Evaluator), group.serves(Role::Opponent)]
            })
            .collect();
        let roots = (0..groups.len())
            .filter(|&w| config.groups[groups[w]].root)
            .collect();
        let queue = Arc::new(Queue::new(serves, roots));
        let games = Arc::new(AtomicU64::new(0));
        let (started_tx, started) = watch::channel(0);
        let started_tx = Arc::new(started_tx);
        let closing = CancellationToken::new();
        let tables = Tables::new(&config);
        let news = News::default();
        let refused = Refused::default();
        let round_trips: RoundTrips =
            Arc::new(std::sync::Mutex::new(vec![Duration::ZERO; groups.len()]));
        let rules = RulesChild::new(
            config.groups.iter().find_map(|g| g.evaluator.clone()),
            connect.clone(),
        );
        let workers = groups
            .into_iter()
            .enumerate()
            .map(|(i, group)| {
                let worker = Worker {
                    n: i + 1,
                    closing: closing.clone(),
                    group,
                    config: Arc::new(config.groups[group].clone()),
                    evaluator: None,
                    opponent: None,
                    tables: tables.clone(),
                    connect: connect.clone(),
                    games: games.clone(),
                    game: 0,
                    round_trips: round_trips.clone(),
                    news: news.clone(),
                    refused: refused.clone(),
                    drops: Drops::default(),
                };
                tokio::spawn(worker.run(queue.clone(), started_tx.clone()))
            })
            .collect();
        Pool {
            config,
            tables,
            queue,
            workers,
            closing,
            started,
            call_cost: std::sync::Mutex::new(Recent::new()),
            speed: std::sync::Mutex::new(Recent::new()),
            round_trips,
            news,
            refused,
            games,
            rules,
        }
    }

    /// `game` with its current position's legal moves, the GUI's moves
    /// checked, where only a child knows its rules ([`RulesChild::list`]).
    pub async fn list(&self, game: &Game) -> Result<Listed, ChildError> {
        self.rules.list(game).await
    }

    /// A new game (`ucinewgame`): every child forgets what it learned,
    /// before its next search; between calls of a game children stay warm.
    pub fn new_game(&self) {
        self.tables.clear();
        self.queue.new_game();
        self.games.fetch_add(1, Ordering::Relaxed);
    }

    /// Resolves when every worker has started its children (or failed to:
    /// that shows again on first use), and the rules child of a game mpcmc
    /// knows by name only ([`RulesChild::warm`]).
    pub async fn ready(&self) {
        let threads = self.workers.len();
        let mut started = self.started.clone();
        let workers = async {
            let _ = started.wait_for(|n| *n >= threads).await;
        };
        tokio::join!(workers, self.rules.warm());
    }

    /// What one call costs beyond its search, as measured so far.
    pub fn call_cost(&self) -> Duration {
        self.call_cost
            .lock()
            .ok()
            .and_then(|c| c.median())
            .unwrap_or(INITIAL_CALL_COST)
    }

    /// How many nodes a second one child search visits, as measured so far
    /// (`None` before a search long enough to tell).
    pub fn speed(&self) -> Option<u64> {
        self.speed.lock().ok().and_then(|s| s.median())
    }

    /// What the workers have told since the last call (a worker down, up
    /// again): the session says it in `info string`s.
    pub fn news(&self) -> Vec<String> {
        self.news
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    /// Why a child refused to play the configured `UCI_Variant`
    /// ([`ChildError::NoVariant`](crate::children::error::ChildError::NoVariant)),
    /// once its worker tried to start it: the first refusal.
    pub fn refused_variant(&self) -> Option<String> {
        self.refused.lock().ok().and_then(|r| r.clone())
    }

    /// The slowest worker's latest round trip to its children (`isready`
    /// … `readyok`, at its start and at each new game): what a `stop` may
    /// take to be answered, beyond the child's own reaction. Remote
    /// children make it large; the clock keeps it in reserve.
    pub fn round_trip(&self) -> Duration {
        self.round_trips
            .lock()
            .ok()
            .and_then(|r| r.iter().max().copied())
            .unwrap_or_default()
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
        if report.search_time >= SPEED_MIN_SEARCH
            && let Ok(mut speed) = self.speed.lock()
        {
            speed.add((report.nodes as f64 / report.search_time.as_secs_f64()) as u64);
        }
    }

    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    /// Quits every child and waits for the workers (killing what outlives the
    /// deadline). A search still running is stopped first.
    pub async fn shutdown(mut self) {
        self.close();
        self.rules.shutdown(QUIT_TIMEOUT).await;
        // A worker may be draining a stopped search (STOP_TIMEOUT) before it
        // quits its children (QUIT_TIMEOUT each, twice for a launcher ended
        // by SIGTERM).
        let deadline = super::client::STOP_TIMEOUT + 4 * QUIT_TIMEOUT + Duration::from_millis(500);
        for mut worker in std::mem::take(&mut self.workers) {
            if tokio::time::timeout(deadline, &mut worker).await.is_err() {
                tracing::warn!("a pool worker did not finish within {deadline:?}; aborting it");
                worker.abort();
                // Dropping its clients ends their processes (kill_on_drop,
                // or their group's signal).
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
    type Error = SearchError;

    async fn search(&self, query: Query, cancel: CancellationToken) -> Result<Report, SearchError> {
        let (reply, answer) = oneshot::channel();
        let key = self.queue.push(query.clone(), cancel.clone(), reply)?;
        tokio::pin!(answer);
        // Cancelled while still queued (every worker busy, or starting its
        // children), the search is taken back; once a worker has it, the
        // worker stops it and answers with what it found.
        let result = tokio::select! {
            result = &mut answer => result,
            () = cancel.cancelled() => {
                if self.queue.withdraw(key) {
                    return Err(SearchError::Cancelled);
                }
                answer.await
            }
        }
        .unwrap_or(Err(SearchError::PoolClosed));
        if let Ok(report) = &result {
            self.measure(&query, report);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_stall_does_not_move_the_call_cost() {
        let ms = Duration::from_millis;
        let mut cost: Recent<Duration> = Recent::new();
        assert_eq!(cost.median(), None);
        for _ in 0..20 {
            cost.add(ms(2));
        }
        // A 2 s stop of the machine hits the calls in flight.
        cost.add(ms(2000));
        cost.add(ms(1900));
        assert_eq!(cost.median(), Some(ms(2)));
        // A lasting change is followed within SAMPLES calls.
        for _ in 0..Recent::<Duration>::SAMPLES / 2 + 1 {
            cost.add(ms(9));
        }
        assert_eq!(cost.median(), Some(ms(9)));
    }
}
