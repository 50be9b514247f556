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
    collections::{BTreeMap, HashMap},
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use mpcmc_builtin::TranspositionTable;
use shakmaty::Position;
use tokio::{
    sync::{Notify, oneshot, watch},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

use crate::{
    children::{
        client::{
            ChildConfig, ChildError, Client, Connect, QUIT_TIMEOUT, SearchError, spawn_processes,
        },
        inprocess::{InProcess, is_builtin, shared_table},
    },
    mpc::{ChildLimit, Children, Query, Report, Role, game},
};

/// What the pool runs: groups of alike workers (`Workers`; by default one
/// group serving both roles).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    pub groups: Vec<WorkerGroup>,
}

/// `slots` workers, each with one child for every role the group serves
/// (a single child for both when their configurations are the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerGroup {
    /// The child of each role (`None`: the group does not serve it).
    pub evaluator: Option<ChildConfig>,
    pub opponent: Option<ChildConfig>,
    /// Workers, each searching one call at a time.
    pub slots: usize,
}

impl WorkerGroup {
    /// A group serving both roles.
    pub fn both(evaluator: ChildConfig, opponent: ChildConfig, slots: usize) -> WorkerGroup {
        WorkerGroup {
            evaluator: Some(evaluator),
            opponent: Some(opponent),
            slots,
        }
    }

    /// The child configuration of `role`, if the group serves it.
    pub fn config(&self, role: Role) -> Option<&ChildConfig> {
        match role {
            Role::Evaluator => self.evaluator.as_ref(),
            Role::Opponent => self.opponent.as_ref(),
        }
    }

    pub fn serves(&self, role: Role) -> bool {
        self.config(role).is_some()
    }

    /// One child serves both roles when they are configured alike.
    pub fn shared_roles(&self) -> bool {
        self.evaluator.is_some() && self.evaluator == self.opponent
    }

    /// Children (processes or in-process engines) of one worker.
    fn children(&self) -> usize {
        if self.shared_roles() {
            1
        } else {
            usize::from(self.evaluator.is_some()) + usize::from(self.opponent.is_some())
        }
    }
}

impl PoolConfig {
    /// `threads` workers serving both roles.
    pub fn new(evaluator: ChildConfig, opponent: ChildConfig, threads: usize) -> PoolConfig {
        PoolConfig {
            groups: vec![WorkerGroup::both(evaluator, opponent, threads.max(1))],
        }
    }

    /// Every worker's children serve both roles with one child.
    pub fn shared_roles(&self) -> bool {
        self.groups.iter().all(WorkerGroup::shared_roles)
    }

    /// Concurrent child searches (workers), at least one.
    pub fn threads(&self) -> usize {
        self.groups.iter().map(|g| g.slots).sum::<usize>().max(1)
    }

    /// How many child processes (or in-process engines) the pool runs.
    pub fn processes(&self) -> usize {
        self.groups.iter().map(|g| g.slots * g.children()).sum()
    }

    /// The group of each worker, in worker order.
    fn worker_groups(&self) -> Vec<usize> {
        self.groups
            .iter()
            .enumerate()
            .flat_map(|(i, g)| std::iter::repeat_n(i, g.slots))
            .collect()
    }

    /// The configuration of the first group serving `role`.
    pub fn first(&self, role: Role) -> Option<&ChildConfig> {
        self.groups.iter().find_map(|g| g.config(role))
    }
}

struct Job {
    query: Query,
    cancel: CancellationToken,
    reply: oneshot::Sender<Result<Report, SearchError>>,
    /// The worker (0-based) whose children should search it.
    prefer: usize,
    /// The position it searches ([`game::hash`]).
    position: u64,
    /// It was tried once after a child crashed on it (here or on another
    /// worker): a second crash is its answer.
    retried: bool,
    /// Its place in the queue, kept when it is handed over (the asker may
    /// still take it back by it).
    key: JobKey,
}

/// A job's place in the queue: its urgency, then its arrival.
type JobKey = (u8, u64);

/// Jobs waiting for a worker: most urgent first, then first come, each
/// worker taking the ones placed on it before any other.
#[derive(Default)]
struct Queue {
    waiting: std::sync::Mutex<Waiting>,
    wakeup: Notify,
}

#[derive(Default)]
struct Waiting {
    /// By `(urgency, arrival)`: iteration order is service order.
    jobs: BTreeMap<JobKey, Job>,
    arrivals: u64,
    closed: bool,
    placement: Placement,
    /// Workers searching now (by 0-based index): their jobs may be taken
    /// by an idle worker rather than wait.
    busy: Vec<bool>,
}

/// Where a call goes, so that a child's hash keeps what it learned. Every
/// search of a decision's root goes to one worker: the deep search of the
/// last root holds the subtree of the next (the engine playing alone keeps
/// its hash from move to move the same way). A position searched before
/// goes back to the worker that searched it (a later round re-searches the
/// same positions), and both calls of a root move (the opponent's, then the
/// evaluator's after the reply) go to one worker. New root moves are dealt
/// round the workers.
#[derive(Default)]
struct Placement {
    /// The roles each worker serves ([`role_index`]).
    serves: Vec<[bool; 2]>,
    /// Workers whose children cannot be started now, or that are out of
    /// rotation: no call is placed on them, and the calls placed before go
    /// to others.
    down: Vec<bool>,
    /// The worker of the root searches, once there was one.
    root: Option<usize>,
    /// Positions searched lately, by the worker that searched them.
    searched: HashMap<u64, usize>,
    /// Root moves (the position after them), by the worker of their calls.
    subtrees: HashMap<u64, usize>,
    next: usize,
}

impl Placement {
    /// Entries kept before the maps start afresh (a game's worth or more).
    const MAX_ENTRIES: usize = 1 << 16;

    /// The worker for `query`, and the position it searches: always one
    /// that serves the query's role (when any does).
    fn place(&mut self, query: &Query) -> (usize, u64) {
        let role = role_index(query.role);
        let can = |w: &usize| self.up(*w, role);
        let position = game::hash(&query.position());
        if query.is_root() {
            if let Some(w) = self.root.filter(can) {
                return (w, position);
            }
            let w = self
                .searched
                .get(&position)
                .copied()
                .filter(can)
                .unwrap_or_else(|| self.next_serving(role));
            self.root = Some(w);
            return (w, position);
        }
        if let Some(w) = self.searched.get(&position).copied().filter(can) {
            return (w, position);
        }
        let subtree = query.line.first().map(|&m| {
            let mut after = query.game.position().clone();
            after.play_unchecked(m);
            game::hash(&after)
        });
        if let Some(w) = subtree
            .and_then(|s| self.subtrees.get(&s).copied())
            .filter(can)
        {
            return (w, position);
        }
        let w = self.next_serving(role);
        if let Some(s) = subtree {
            if self.subtrees.len() >= Self::MAX_ENTRIES {
                self.subtrees.clear();
            }
            self.subtrees.entry(s).or_insert(w);
        }
        (w, position)
    }

    /// The next worker in turn that serves `role` and is up (else one
    /// that serves it, else 0).
    fn next_serving(&mut self, role: usize) -> usize {
        let workers = self.serves.len().max(1);
        let mut fallback = None;
        for _ in 0..workers {
            let w = self.next % workers;
            self.next = self.next.wrapping_add(1);
            if self.up(w, role) {
                return w;
            }
            if self.serves.get(w).is_some_and(|s| s[role]) {
                fallback.get_or_insert(w);
            }
        }
        fallback.unwrap_or(0)
    }

    /// Some worker serving `role` is not down.
    fn any_up(&self, role: Role) -> bool {
        (0..self.serves.len()).any(|w| self.up(w, role_index(role)))
    }

    /// Worker `w` serves role `role` ([`role_index`]) and is not down.
    fn up(&self, w: usize, role: usize) -> bool {
        self.serves.get(w).is_some_and(|s| s[role]) && !self.down.get(w).is_some_and(|d| *d)
    }

    fn searched_by(&mut self, position: u64, worker: usize) {
        if self.searched.len() >= Self::MAX_ENTRIES {
            self.searched.clear();
        }
        self.searched.insert(position, worker);
    }

    fn forget(&mut self) {
        self.searched.clear();
        self.subtrees.clear();
        self.root = None;
    }
}

/// A role's index in [`Placement::serves`].
fn role_index(role: Role) -> usize {
    match role {
        Role::Evaluator => 0,
        Role::Opponent => 1,
    }
}

impl Queue {
    /// A queue for workers serving the roles in `serves`, one entry each.
    fn new(serves: Vec<[bool; 2]>) -> Queue {
        let queue = Queue::default();
        if let Ok(mut w) = queue.waiting.lock() {
            // Busy until it first asks for work (its children start first):
            // calls placed on it meanwhile go to an idle worker.
            w.busy = vec![true; serves.len()];
            w.placement.down = vec![false; serves.len()];
            w.placement.serves = serves;
        }
        queue
    }

    /// Queues a search, placed on a worker; its place in the queue.
    fn push(
        &self,
        query: Query,
        cancel: CancellationToken,
        reply: oneshot::Sender<Result<Report, SearchError>>,
    ) -> Result<JobKey, SearchError> {
        let key = {
            let Ok(mut w) = self.waiting.lock() else {
                return Err(SearchError::PoolClosed);
            };
            if w.closed {
                return Err(SearchError::PoolClosed);
            }
            if !w.placement.any_up(query.role) {
                return Err(SearchError::NoWorker(query.role));
            }
            let (prefer, position) = w.placement.place(&query);
            let arrival = w.arrivals;
            w.arrivals += 1;
            let key = (query.urgency(), arrival);
            let job = Job {
                query,
                cancel,
                reply,
                prefer,
                position,
                retried: false,
                key,
            };
            w.jobs.insert(key, job);
            key
        };
        // Every idle worker looks: the job may be placed on any of them.
        self.wakeup.notify_waiters();
        Ok(key)
    }

    /// Marks `worker` down (its children cannot be started, or it is out of
    /// rotation) or up again.
    /// Calls of a role no worker is up for any more fail at once.
    fn set_down(&self, worker: usize, down: bool) {
        let mut stranded = Vec::new();
        if let Ok(mut w) = self.waiting.lock() {
            if let Some(d) = w.placement.down.get_mut(worker) {
                *d = down;
            }
            for role in [Role::Evaluator, Role::Opponent] {
                if down && !w.placement.any_up(role) {
                    let keys: Vec<JobKey> = w
                        .jobs
                        .iter()
                        .filter(|(_, j)| j.query.role == role)
                        .map(|(k, _)| *k)
                        .collect();
                    stranded.extend(keys.iter().filter_map(|k| w.jobs.remove(k)));
                }
            }
        }
        for job in stranded {
            let _ = job.reply.send(Err(SearchError::NoWorker(job.query.role)));
        }
        // Its calls may now go to an idle worker.
        self.wakeup.notify_waiters();
    }

    /// Marks `worker` down, out of rotation, if every role it serves has
    /// another worker up (checked and marked at once, so two workers
    /// cannot take each other's place); whether it did.
    fn take_out(&self, worker: usize) -> bool {
        let Ok(mut w) = self.waiting.lock() else {
            return false;
        };
        let p = &mut w.placement;
        let serves = p.serves.get(worker).copied().unwrap_or_default();
        let spare = (0..2)
            .all(|role| !serves[role] || (0..p.serves.len()).any(|o| o != worker && p.up(o, role)));
        if spare && let Some(d) = p.down.get_mut(worker) {
            *d = true;
        }
        spare
    }

    /// Gives `job`, which worker `from` could not search, to another worker
    /// of its role that is up; the job back when there is none.
    fn hand_over(&self, mut job: Job, from: usize) -> Option<Job> {
        let Ok(mut w) = self.waiting.lock() else {
            return Some(job);
        };
        let role = role_index(job.query.role);
        let others = (0..w.placement.serves.len()).any(|o| o != from && w.placement.up(o, role));
        if w.closed || !others {
            return Some(job);
        }
        // Anywhere but where it failed.
        let (mut prefer, _) = w.placement.place(&job.query);
        if prefer == from {
            prefer = (0..w.placement.serves.len())
                .find(|&o| o != from && w.placement.up(o, role))
                .unwrap_or(prefer);
        }
        job.prefer = prefer;
        // Its own place in line: the asker may still take it back by it.
        w.jobs.insert(job.key, job);
        drop(w);
        self.wakeup.notify_waiters();
        None
    }

    /// Takes back the job at `key` if no worker has taken it yet.
    fn withdraw(&self, key: JobKey) -> bool {
        self.waiting
            .lock()
            .is_ok_and(|mut w| w.jobs.remove(&key).is_some())
    }

    /// The next job for `worker` (which is idle until it gets one): the
    /// most urgent placed on it, else the most urgent whose own worker is
    /// busy (an idle worker takes work rather than let it wait); `None` once
    /// the queue is closed and empty.
    async fn pop(&self, worker: usize) -> Option<Job> {
        loop {
            let wakeup = self.wakeup.notified();
            tokio::pin!(wakeup);
            wakeup.as_mut().enable();
            {
                let mut w = self.waiting.lock().ok()?;
                if let Some(idle) = w.busy.get_mut(worker) {
                    *idle = false;
                }
                let key = {
                    // Closed, any job goes: it is only answered `Cancelled`.
                    let busy = |j: &Job| {
                        w.closed
                            || w.busy.get(j.prefer).is_none_or(|b| *b)
                            || w.placement.down.get(j.prefer).is_some_and(|d| *d)
                    };
                    let serves = |j: &Job| {
                        w.closed
                            || w.placement
                                .serves
                                .get(worker)
                                .is_some_and(|s| s[role_index(j.query.role)])
                    };
                    w.jobs
                        .iter()
                        .find(|(_, j)| j.prefer == worker)
                        .or_else(|| w.jobs.iter().find(|(_, j)| busy(j) && serves(j)))
                        .map(|(k, _)| *k)
                };
                if let Some(job) = key.and_then(|key| w.jobs.remove(&key)) {
                    if let Some(busy) = w.busy.get_mut(worker) {
                        *busy = true;
                    }
                    drop(w);
                    // Jobs placed on this worker may now go to an idle one.
                    self.wakeup.notify_waiters();
                    return Some(job);
                }
                if w.closed && w.jobs.is_empty() {
                    return None;
                }
            }
            wakeup.await;
        }
    }

    /// `worker` searched `position`: it goes back there next time.
    fn searched_by(&self, position: u64, worker: usize) {
        if let Ok(mut w) = self.waiting.lock() {
            w.placement.searched_by(position, worker);
        }
    }

    fn new_game(&self) {
        if let Ok(mut w) = self.waiting.lock() {
            w.placement.forget();
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
    /// Counts `ucinewgame`s: a worker whose children have not seen the
    /// latest clears them before its next search.
    games: Arc<AtomicU64>,
}

/// A down worker's first wait before it tries its children again.
const DOWN_WAIT_FIRST: Duration = Duration::from_secs(1);
/// Its longest wait: the wait doubles with every failed try, up to this.
const DOWN_WAIT_MAX: Duration = Duration::from_secs(60);
/// Searches dropped by a worker's dying child, each within
/// [`DROP_MEMORY`] of the last and fewer than [`SOUND_SEARCHES`] answered
/// between, that take it out of rotation: a host that accepts connections
/// and then drops them is not retried at once.
const FLAPPING: u32 = 3;
/// How long a dropped search counts against its worker.
const DROP_MEMORY: Duration = Duration::from_secs(300);

/// Searches answered since a worker's last drop that clear its record.
const SOUND_SEARCHES: u32 = 32;

/// A worker's recent dropped searches (its child died mid-search).
#[derive(Debug, Default)]
struct Drops {
    recent: u32,
    last: Option<tokio::time::Instant>,
    answered: u32,
}

impl Drops {
    /// Counts an answered search: [`SOUND_SEARCHES`] in a row clear the
    /// record (a host that drops one search in thousands never goes out).
    fn answered(&mut self) {
        self.answered += 1;
        if self.answered >= SOUND_SEARCHES {
            self.recent = 0;
        }
    }

    /// Counts a dropped search at `now`; once [`FLAPPING`] came close
    /// together, how long the worker stays out of rotation: 8 s at the
    /// third, doubling with each one more, up to [`DOWN_WAIT_MAX`].
    fn dropped(&mut self, now: tokio::time::Instant) -> Option<Duration> {
        if self.last.is_some_and(|t| now - t > DROP_MEMORY) {
            self.recent = 0;
        }
        self.recent += 1;
        self.last = Some(now);
        self.answered = 0;
        (self.recent >= FLAPPING)
            .then(|| DOWN_WAIT_FIRST.saturating_mul(1 << self.recent.min(16)))
            .map(|wait| wait.min(DOWN_WAIT_MAX))
    }
}

/// Lines for the user from the workers (a worker down, up again).
type News = Arc<std::sync::Mutex<Vec<String>>>;

/// Each worker's latest round trip to its children, by worker (0-based).
type RoundTrips = Arc<std::sync::Mutex<Vec<Duration>>>;

/// The call cost assumed before any call was measured.
const INITIAL_CALL_COST: Duration = Duration::from_millis(1);

/// The median of the last [`Recent::SAMPLES`] samples of a measure: what a
/// child call costs beyond the search it asked for (hash clearing, pipes, a
/// child overshooting its movetime), how fast the children search. A stall
/// of the machine inflates the few calls in flight; the median does not move
/// for them, so one stall never turns the lookahead off for the moves after
/// it, and a lasting change is followed within half the window.
#[derive(Debug, Clone)]
pub struct Recent<T> {
    /// The latest samples, oldest first.
    samples: std::collections::VecDeque<T>,
}

impl<T: Copy + Ord> Recent<T> {
    pub const SAMPLES: usize = 31;

    pub fn new() -> Recent<T> {
        Recent {
            samples: std::collections::VecDeque::with_capacity(Self::SAMPLES),
        }
    }

    pub fn add(&mut self, sample: T) {
        if self.samples.len() == Self::SAMPLES {
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
}

impl<T: Copy + Ord> Default for Recent<T> {
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
        let queue = Arc::new(Queue::new(serves));
        let games = Arc::new(AtomicU64::new(0));
        let (started_tx, started) = watch::channel(0);
        let started_tx = Arc::new(started_tx);
        let closing = CancellationToken::new();
        let tables = Tables::new(&config);
        let news = News::default();
        let round_trips: RoundTrips =
            Arc::new(std::sync::Mutex::new(vec![Duration::ZERO; groups.len()]));
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
            games,
        }
    }

    /// A new game (`ucinewgame`): every child forgets what it learned,
    /// before its next search; between calls of a game children stay warm.
    pub fn new_game(&self) {
        self.tables.clear();
        self.queue.new_game();
        self.games.fetch_add(1, Ordering::Relaxed);
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

/// The hash tables the built-in children of each role share (see
/// [`shared_table`]), a group's workers together; one for both roles when
/// the group's children serve both. Each is allocated by the first worker
/// that starts such a child (a large `Hash` takes a while; not on the
/// session's path).
#[derive(Clone)]
struct Tables {
    groups: Arc<Vec<GroupTables>>,
}

struct GroupTables {
    config: WorkerGroup,
    evaluator: Arc<OnceLock<Option<Arc<TranspositionTable>>>>,
    opponent: Arc<OnceLock<Option<Arc<TranspositionTable>>>>,
}

impl Tables {
    fn new(config: &PoolConfig) -> Tables {
        let groups = config
            .groups
            .iter()
            .map(|group| {
                let evaluator = Arc::new(OnceLock::new());
                let opponent = if group.shared_roles() {
                    evaluator.clone()
                } else {
                    Arc::new(OnceLock::new())
                };
                GroupTables {
                    config: group.clone(),
                    evaluator,
                    opponent,
                }
            })
            .collect();
        Tables {
            groups: Arc::new(groups),
        }
    }

    /// The table `role`'s children of group `group` share, if they share one.
    fn of(&self, group: usize, role: Role) -> Option<Arc<TranspositionTable>> {
        let g = self.groups.get(group)?;
        let cell = match role {
            Role::Evaluator => &g.evaluator,
            Role::Opponent => &g.opponent,
        };
        let config = g.config.config(role)?;
        cell.get_or_init(|| shared_table(config, g.config.slots))
            .clone()
    }

    /// A new game: forget what was learned. The children clear the rest of
    /// what they keep before their next search.
    fn clear(&self) {
        for g in self.groups.iter() {
            for cell in [&g.evaluator, &g.opponent] {
                if let Some(Some(table)) = cell.get() {
                    table.clear();
                }
            }
        }
    }
}

/// A child engine: one spoken to over UCI (a process; a test's fake), or
/// the built-in engine in this process.
enum Child {
    Uci(Box<Client>),
    Builtin(InProcess),
}

impl Child {
    /// Starts the child `config` names; a built-in one searches with
    /// `table` when the pool shares one.
    async fn start(
        config: &ChildConfig,
        label: String,
        table: Option<Arc<TranspositionTable>>,
        connect: &Connect,
    ) -> Result<Child, ChildError> {
        if is_builtin(&config.command) {
            Ok(Child::Builtin(InProcess::new(config, label, table)))
        } else {
            connect(config.clone(), label)
                .await
                .map(|c| Child::Uci(Box::new(c)))
        }
    }

    async fn search(
        &mut self,
        query: &Query,
        cancel: &CancellationToken,
    ) -> Result<Report, SearchError> {
        match self {
            Child::Uci(client) => client.search(query, cancel).await,
            Child::Builtin(engine) => engine.search(query, cancel).await,
        }
    }

    async fn quit(self, timeout: Duration) {
        if let Child::Uci(client) = self {
            client.quit(timeout).await;
        }
    }

    /// What an answer costs beyond the child's work: nothing in process.
    fn round_trip(&self) -> Duration {
        match self {
            Child::Uci(client) => client.round_trip,
            Child::Builtin(_) => Duration::ZERO,
        }
    }

    /// `ucinewgame`: forget what was learned, before a search under `limit`.
    async fn new_game(&mut self, limit: ChildLimit) -> Result<(), ChildError> {
        match self {
            // A new game is also when the round trip is measured again.
            Child::Uci(client) => {
                client.ucinewgame(limit).await?;
                client.measure_round_trip().await
            }
            Child::Builtin(engine) => {
                engine.new_game();
                Ok(())
            }
        }
    }
}

struct Worker {
    /// 1-based, over the whole pool.
    n: usize,
    closing: CancellationToken,
    /// Its group (an index into the pool's) and the group's configuration.
    group: usize,
    config: Arc<WorkerGroup>,
    evaluator: Option<Child>,
    opponent: Option<Child>,
    tables: Tables,
    connect: Connect,
    /// The pool's `ucinewgame` count, and the one this worker's children saw.
    games: Arc<AtomicU64>,
    game: u64,
    round_trips: RoundTrips,
    news: News,
    drops: Drops,
}

/// How starting the child a job needs ended ([`Worker::start_for`]).
enum Start {
    /// The child is up; the job goes on.
    Ready(Job),
    /// The asker stopped waiting, or the pool closed: the job is answered.
    Answered,
    /// The child cannot be started; the job, unless it was answered.
    Failed(Option<Job>, ChildError),
}

impl Worker {
    async fn run(mut self, queue: Arc<Queue>, started: Arc<watch::Sender<usize>>) {
        // Start the children now; a worker that cannot is down from the
        // start, and the others play without it.
        let first = self.start_children().await;
        if first.is_err() {
            queue.set_down(self.n - 1, true);
        }
        started.send_modify(|n| *n += 1);
        drop(started);
        if let Err(e) = first {
            self.down(&queue, &e.to_string(), DOWN_WAIT_FIRST).await;
        }
        'jobs: loop {
            let Some(mut job) = queue.pop(self.n - 1).await else {
                break;
            };
            if job.cancel.is_cancelled() || job.reply.is_closed() || self.closing.is_cancelled() {
                let _ = job.reply.send(Err(SearchError::Cancelled));
                continue;
            }
            // The search stops when the asker cancels, stops waiting (its
            // future was dropped), or the pool closes.
            let cancel = CancellationToken::new();
            let (closing, n) = (self.closing.clone(), self.n);
            let result = loop {
                // A child that cannot be started: the call goes to another
                // worker of its role (or fails, when none is up), and this
                // one is down until its children start again.
                self.catch_up_with_new_games(job.query.limit).await;
                job = match self.start_for(job).await {
                    Start::Ready(job) => job,
                    Start::Answered => continue 'jobs,
                    Start::Failed(job, fault) => {
                        let why = fault.to_string();
                        queue.set_down(n - 1, true);
                        if let Some(job) = job.and_then(|job| queue.hand_over(job, n - 1)) {
                            let _ = job.reply.send(Err(SearchError::Child(fault)));
                        }
                        self.down(&queue, &why, DOWN_WAIT_FIRST).await;
                        continue 'jobs;
                    }
                };
                let result = {
                    let search = self.search(&job.query, &cancel);
                    tokio::pin!(search);
                    loop {
                        tokio::select! {
                            r = &mut search => break r,
                            _ = job.cancel.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
                            _ = job.reply.closed(), if !cancel.is_cancelled() => cancel.cancel(),
                            _ = closing.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
                        }
                    }
                };
                // A crash or a bad answer (a dropped connection) is tried
                // once more: by another worker of its role when one is up,
                // while this one starts a fresh child (down if it cannot, out
                // of rotation if it keeps dropping searches); else here, on a
                // fresh child. A stall is not: it already cost a whole
                // deadline, and the decision goes on without it.
                let Err(e) = &result else { break result };
                let retry = matches!(e, SearchError::Child(c) if c.worth_retrying())
                    && !job.retried
                    && !cancel.is_cancelled()
                    && !job.cancel.is_cancelled()
                    && !job.reply.is_closed();
                if !retry {
                    break result;
                }
                let why = e.to_string();
                // A child that died (a dropped connection) counts against its
                // worker; a bad answer, or a second death of the same search,
                // says more about the position than about the host.
                let out = matches!(e, SearchError::Child(ChildError::Died { .. }))
                    .then(|| self.drops.dropped(tokio::time::Instant::now()))
                    .flatten();
                tracing::warn!("worker {n}: {why}; the search is tried again");
                job.retried = true;
                match queue.hand_over(job, n - 1) {
                    None => {
                        self.after_drop(&queue, out, &why).await;
                        continue 'jobs;
                    }
                    Some(back) => job = back,
                }
            };
            let mut result = result;
            if let Ok(report) = &mut result {
                report.slot = Some(self.n);
                queue.searched_by(job.position, self.n - 1);
                self.drops.answered();
            }
            let _ = job.reply.send(result);
        }
        for client in [self.evaluator.take(), self.opponent.take()]
            .into_iter()
            .flatten()
        {
            client.quit(QUIT_TIMEOUT).await;
        }
    }

    /// Starts a child for every role the worker serves that has none.
    async fn start_children(&mut self) -> Result<(), ChildError> {
        for role in [Role::Evaluator, Role::Opponent] {
            if self.config.serves(role) {
                self.client(role).await?;
            }
        }
        Ok(())
    }

    /// Starts the child `job` needs, if it has none. A start is no search
    /// yet: when the asker stops waiting, it is answered at once and the
    /// start goes on to its own deadline, so a host slower to connect than
    /// a decision lasts still joins for the next; when the pool closes, the
    /// start is dropped.
    async fn start_for(&mut self, mut job: Job) -> Start {
        let closing = self.closing.clone();
        let start = self.client(job.query.role);
        tokio::pin!(start);
        let first = tokio::select! {
            started = &mut start => Some(started.map(|_| ())),
            () = job.cancel.cancelled() => None,
            () = job.reply.closed() => None,
            () = closing.cancelled() => None,
        };
        match first {
            Some(Ok(())) => Start::Ready(job),
            Some(Err(fault)) => Start::Failed(Some(job), fault),
            None => {
                let _ = job.reply.send(Err(SearchError::Cancelled));
                tokio::select! {
                    started = start => match started {
                        Ok(_) => Start::Answered,
                        Err(fault) => Start::Failed(None, fault),
                    },
                    () = closing.cancelled() => Start::Answered,
                }
            }
        }
    }

    /// After a dropped search was handed to another worker: out of rotation
    /// for `out` when the worker keeps dropping searches and the others can
    /// do its work, else a fresh child at once (down if it cannot start).
    async fn after_drop(&mut self, queue: &Queue, out: Option<Duration>, why: &str) {
        match out {
            Some(wait) if queue.take_out(self.n - 1) => {
                self.out_of_rotation(queue, why, wait).await;
            }
            _ => {
                if let Err(e) = self.start_children().await {
                    self.down(queue, &e.to_string(), DOWN_WAIT_FIRST).await;
                }
            }
        }
    }

    /// Out of rotation (already marked down by [`Queue::take_out`]): its
    /// child keeps dying mid-search (a host that accepts connections, then
    /// drops them). Its children are stopped, and it is down for `wait`
    /// before it starts them again.
    async fn out_of_rotation(&mut self, queue: &Queue, why: &str, wait: Duration) {
        for client in [self.evaluator.take(), self.opponent.take()]
            .into_iter()
            .flatten()
        {
            client.quit(Duration::from_millis(100)).await;
        }
        let why = format!(
            "out of rotation: {} searches dropped, the last: {why}",
            self.drops.recent
        );
        self.down(queue, &why, wait).await;
    }

    /// Down: its children cannot be started (a host that refuses or drops
    /// connections, a command that fails). Says so, then tries again after
    /// `wait`, doubling each time, up to [`DOWN_WAIT_MAX`], until its
    /// children start (it is up again) or the pool closes.
    async fn down(&mut self, queue: &Queue, why: &str, wait: Duration) {
        queue.set_down(self.n - 1, true);
        let mut wait = wait;
        self.say(format!(
            "worker {} is down ({why}); its calls go to the others, trying again in {wait:?}",
            self.n
        ));
        loop {
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = self.closing.cancelled() => return,
            }
            match self.start_children().await {
                Ok(()) => {
                    queue.set_down(self.n - 1, false);
                    self.say(format!("worker {} is up again", self.n));
                    return;
                }
                Err(e) => {
                    wait = (wait * 2).min(DOWN_WAIT_MAX);
                    tracing::warn!("worker {} still down ({e}); next try in {wait:?}", self.n);
                }
            }
        }
    }

    /// A line for the user (`info string`, through [`Pool::news`]).
    fn say(&self, line: String) {
        tracing::warn!("{line}");
        if let Ok(mut news) = self.news.lock() {
            news.push(line);
        }
    }

    async fn search(
        &mut self,
        query: &Query,
        cancel: &CancellationToken,
    ) -> Result<Report, SearchError> {
        // Started by `start_for` just before.
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

    /// Sends the children a `ucinewgame` if one came since they last saw
    /// one; a child that fails it is dropped (started afresh on next use).
    /// On the way to a search under `limit`: bounded by it.
    async fn catch_up_with_new_games(&mut self, limit: ChildLimit) {
        let games = self.games.load(Ordering::Relaxed);
        if games == self.game {
            return;
        }
        self.game = games;
        for slot in [&mut self.evaluator, &mut self.opponent] {
            if let Some(child) = slot.as_mut()
                && let Err(e) = child.new_game(limit).await
            {
                tracing::warn!("worker {}: {e}; restarting the child", self.n);
                if let Some(child) = slot.take() {
                    child.quit(Duration::from_millis(100)).await;
                }
            }
        }
        self.publish_round_trip();
    }

    fn slot(&mut self, role: Role) -> &mut Option<Child> {
        match role {
            Role::Opponent if !self.config.shared_roles() => &mut self.opponent,
            _ => &mut self.evaluator,
        }
    }

    /// The child for `role`, started if there is none.
    async fn client(&mut self, role: Role) -> Result<&mut Child, ChildError> {
        let worker = self.n;
        let no_child = move || ChildError::NoChild { worker, role };
        // Started once; every later search finds it here.
        if self.slot(role).is_none() {
            let config = self.config.config(role).cloned().ok_or_else(no_child)?;
            let label = match role {
                _ if self.config.shared_roles() => "child",
                Role::Evaluator => "evaluator",
                Role::Opponent => "opponent",
            };
            let label = format!("{label} {worker}");
            let table = self.tables.of(self.group, role);
            let child = Child::start(&config, label, table, &self.connect).await?;
            *self.slot(role) = Some(child);
            self.publish_round_trip();
        }
        self.slot(role).as_mut().ok_or_else(no_child)
    }

    /// Keeps the pool's view of this worker's round trip current: the
    /// slower of its children's, the latest of each.
    fn publish_round_trip(&self) {
        let slowest = [&self.evaluator, &self.opponent]
            .into_iter()
            .flatten()
            .map(Child::round_trip)
            .max()
            .unwrap_or_default();
        if let Ok(mut r) = self.round_trips.lock()
            && let Some(mine) = r.get_mut(self.n - 1)
        {
            *mine = slowest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpc::{ChildLimit, Game};
    use shakmaty::{Move, Position};

    fn query(role: Role, line: Vec<Move>, game: &Arc<Game>) -> Query {
        Query {
            role,
            game: game.clone(),
            line,
            limit: ChildLimit::Nodes(1),
            progress: None,
            ponderhit: None,
        }
    }

    /// Queues a search; the receiver must live for the test.
    fn push(
        queue: &Queue,
        query: Query,
    ) -> (
        Result<JobKey, SearchError>,
        oneshot::Receiver<Result<Report, SearchError>>,
    ) {
        let (reply, rx) = oneshot::channel();
        (queue.push(query, CancellationToken::new(), reply), rx)
    }

    /// Built-in children that keep their hash share one table a role (one
    /// for both when the roles share children) of the children's `Hash`
    /// shares together; children that clear it, or are processes, none.
    #[test]
    fn built_in_children_share_a_table_of_their_hash_shares() {
        let builtin = |hash: &str, clear_hash| ChildConfig {
            options: vec![("Hash".to_owned(), hash.to_owned())],
            clear_hash,
            ..ChildConfig::new("builtin")
        };
        let config =
            |evaluator: ChildConfig, opponent: ChildConfig| PoolConfig::new(evaluator, opponent, 2);
        let tables = Tables::new(&config(builtin("8", false), builtin("8", false)));
        let (e, o) = (
            tables.of(0, Role::Evaluator).expect("shared"),
            tables.of(0, Role::Opponent).expect("shared"),
        );
        assert!(Arc::ptr_eq(&e, &o));
        assert_eq!(e.mb(), 16);

        let tables = Tables::new(&config(builtin("4", false), builtin("2", false)));
        let (e, o) = (
            tables.of(0, Role::Evaluator).expect("shared"),
            tables.of(0, Role::Opponent).expect("shared"),
        );
        assert!(!Arc::ptr_eq(&e, &o));
        assert_eq!((e.mb(), o.mb()), (8, 4));

        let stockfish = ChildConfig::new("/usr/games/stockfish");
        let tables = Tables::new(&config(builtin("8", true), stockfish));
        assert!(tables.of(0, Role::Evaluator).is_none());
        assert!(tables.of(0, Role::Opponent).is_none());

        // Groups share within, never across; a role a group does not serve
        // has no table there.
        let config = PoolConfig {
            groups: vec![
                WorkerGroup::both(builtin("4", false), builtin("4", false), 2),
                WorkerGroup {
                    evaluator: None,
                    opponent: Some(builtin("2", false)),
                    slots: 3,
                },
            ],
        };
        let tables = Tables::new(&config);
        let (first, second) = (
            tables.of(0, Role::Opponent).expect("shared"),
            tables.of(1, Role::Opponent).expect("shared"),
        );
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!((first.mb(), second.mb()), (8, 6));
        assert!(tables.of(1, Role::Evaluator).is_none());
    }

    #[test]
    fn one_stall_does_not_move_the_call_cost() {
        let ms = Duration::from_millis;
        let mut cost = Recent::new();
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

    #[tokio::test]
    async fn the_queue_serves_the_root_then_completions_then_starts() {
        let game = Arc::new(Game::default());
        let m = game.position().legal_moves()[0];
        let mut after = game.position().clone();
        after.play_unchecked(m);
        let w = after.legal_moves()[0];
        let queue = Queue::new(vec![[true, true]]);
        let mut receivers = Vec::new();
        // Arrival order: two starts, a completion, the root, a completion.
        for (role, line) in [
            (Role::Opponent, vec![m]),
            (Role::Opponent, vec![m]),
            (Role::Evaluator, vec![m, w]),
            (Role::Evaluator, vec![]),
            (Role::Evaluator, vec![m, w]),
        ] {
            let (pushed, rx) = push(&queue, query(role, line, &game));
            receivers.push(rx);
            assert!(pushed.is_ok());
        }
        queue.close();
        let mut served = Vec::new();
        while let Some(j) = queue.pop(0).await {
            served.push((j.query.urgency(), j.query.line.len()));
        }
        assert_eq!(served, vec![(0, 0), (1, 2), (1, 2), (2, 1), (2, 1)]);
        let (pushed, _rx) = push(&queue, query(Role::Evaluator, vec![], &game));
        assert!(pushed.is_err(), "a closed queue takes no job");
    }

    #[tokio::test]
    async fn calls_go_where_their_subtree_was_searched() {
        let game = Arc::new(Game::default());
        let moves = game.position().legal_moves();
        let (m0, m1, m2) = (moves[0], moves[1], moves[2]);
        let reply = |m: Move| {
            let mut after = game.position().clone();
            after.play_unchecked(m);
            after.legal_moves()[0]
        };
        let queue = Queue::new(vec![[true, true]; 2]);
        let mut receivers = Vec::new();
        let mut place = |q: Query| {
            let (pushed, rx) = push(&queue, q);
            assert!(pushed.is_ok());
            receivers.push(rx);
        };
        // Root moves are dealt round the workers; a root move's second call
        // follows its first.
        place(query(Role::Opponent, vec![m0], &game));
        place(query(Role::Opponent, vec![m1], &game));
        place(query(Role::Opponent, vec![m2], &game));
        place(query(Role::Evaluator, vec![m1, reply(m1)], &game));
        let by_worker = |w: usize| {
            let Ok(waiting) = queue.waiting.lock() else {
                panic!("queue lock")
            };
            waiting
                .jobs
                .values()
                .filter(|j| j.prefer == w)
                .map(|j| j.query.line.first().copied())
                .collect::<Vec<_>>()
        };
        assert_eq!(by_worker(0), vec![Some(m0), Some(m2)]);
        assert_eq!(by_worker(1), vec![Some(m1), Some(m1)]);
        // Worker 0 takes its first; worker 1 takes its own (the evaluator
        // call first: more urgent), then, idle, one of busy worker 0's.
        let first = queue.pop(0).await;
        assert_eq!(first.and_then(|j| j.query.line.first().copied()), Some(m0));
        let mut served = Vec::new();
        for _ in 0..3 {
            let job = queue.pop(1).await;
            served.push(job.and_then(|j| j.query.line.first().copied()));
        }
        assert_eq!(served, vec![Some(m1), Some(m1), Some(m2)]);

        // The first root search goes where its position was searched; every
        // later one follows it there, wherever its own position was.
        let after = |g: &Game, m: Move| {
            let mut g = g.clone();
            let r = {
                let mut p = g.position().clone();
                p.play_unchecked(m);
                p.legal_moves()[0]
            };
            g.push(m);
            g.push(r);
            Arc::new(g)
        };
        let next = after(&game, m1);
        queue.searched_by(game::hash(next.position()), 1);
        place(query(Role::Evaluator, vec![], &next));
        let later = after(&next, next.position().legal_moves()[0]);
        queue.searched_by(game::hash(later.position()), 0);
        place(query(Role::Evaluator, vec![], &later));
        let Ok(waiting) = queue.waiting.lock() else {
            panic!("queue lock")
        };
        let roots: Vec<usize> = waiting
            .jobs
            .values()
            .filter(|j| j.query.is_root())
            .map(|j| j.prefer)
            .collect();
        assert_eq!(roots, vec![1, 1]);
    }

    /// Workers that serve one role never take the other's calls, however
    /// idle they are; a call is placed only on a worker serving its role.
    #[tokio::test]
    async fn a_worker_takes_only_calls_of_the_roles_it_serves() {
        let game = Arc::new(Game::default());
        let moves = game.position().legal_moves();
        // Worker 0: the evaluator only; worker 1: the opponent only;
        // worker 2: both.
        let queue = Queue::new(vec![[true, false], [false, true], [true, true]]);
        let mut receivers = Vec::new();
        for (i, &m) in moves.iter().take(6).enumerate() {
            let role = if i % 2 == 0 {
                Role::Opponent
            } else {
                Role::Evaluator
            };
            let (pushed, rx) = push(&queue, query(role, vec![m], &game));
            assert!(pushed.is_ok());
            receivers.push(rx);
        }
        let (_, rx) = push(&queue, query(Role::Evaluator, vec![], &game));
        receivers.push(rx);
        if let Ok(waiting) = queue.waiting.lock() {
            for j in waiting.jobs.values() {
                let serves = waiting.placement.serves[j.prefer];
                assert!(serves[role_index(j.query.role)], "placed on {}", j.prefer);
            }
        }
        // Worker 2 takes a call and stays busy: its other calls may go to
        // an idle worker, but only to one serving their role.
        let first = queue.pop(2).await.expect("a call");
        let mut left = [4, 3];
        left[role_index(first.query.role)] -= 1;
        for (worker, role) in [(0, Role::Evaluator), (1, Role::Opponent)] {
            let mut taken = 0;
            while let Ok(job) =
                tokio::time::timeout(Duration::from_millis(50), queue.pop(worker)).await
            {
                let job = job.expect("a job");
                assert_eq!(job.query.role, role, "worker {worker}");
                taken += 1;
            }
            assert_eq!(
                taken,
                left[role_index(role)],
                "worker {worker}: every call of its role"
            );
        }
    }
}
