//! A worker: the actor that owns one slot's children, takes searches from
//! the queue, and restarts, hands over or retires what fails.

use std::{
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use mpcmc_builtin::TranspositionTable;
use mpcmc_protocol::game::Rules;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{
    config::{PoolConfig, WorkerGroup},
    queue::{Job, Queue},
};
use crate::{
    children::{
        client::{ChildConfig, Client, Connect, QUIT_TIMEOUT},
        error::{ChildError, SearchError},
        inprocess::{InProcess, is_builtin, shared_table},
    },
    mpc::{ChildLimit, Query, Report, Role},
};

/// A down worker's first wait before it tries its children again.
const DOWN_WAIT_FIRST: Duration = Duration::from_secs(1);
/// Its longest wait: the wait doubles with every failed try, up to this.
const DOWN_WAIT_MAX: Duration = Duration::from_secs(60);
/// Searches dropped by a worker's child (it died, or stalled: no answer
/// to `stop` by its deadline), each within [`DROP_MEMORY`] of the last
/// and fewer than [`SOUND_SEARCHES`] answered between, that take it out
/// of rotation: a host that accepts connections and then drops them, or
/// a child that hangs, is not given the next searches at once.
const FLAPPING: u32 = 3;
/// How long a dropped search counts against its worker.
const DROP_MEMORY: Duration = Duration::from_secs(300);

/// How long a child dropped as broken (or out of rotation) gets to quit
/// before it is killed: it is not answering well, so not [`QUIT_TIMEOUT`].
const DROP_QUIT: Duration = Duration::from_millis(100);

/// Searches answered since a worker's last drop that clear its record.
const SOUND_SEARCHES: u32 = 32;

/// A worker's recent dropped searches (its child died or stalled
/// mid-search).
#[derive(Debug, Default)]
pub(super) struct Drops {
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

/// The hash tables the built-in children of each role share (see
/// [`shared_table`]), a group's workers together; one for both roles when
/// the group's children serve both. Each is allocated by the first worker
/// that starts such a child (a large `Hash` takes a while; not on the
/// session's path).
#[derive(Clone)]
pub(super) struct Tables {
    groups: Arc<Vec<GroupTables>>,
}

struct GroupTables {
    config: WorkerGroup,
    evaluator: Arc<OnceLock<Option<Arc<TranspositionTable>>>>,
    opponent: Arc<OnceLock<Option<Arc<TranspositionTable>>>>,
}

impl Tables {
    pub(super) fn new(config: &PoolConfig) -> Tables {
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
    pub(super) fn clear(&self) {
        for g in self.groups.iter() {
            for cell in [&g.evaluator, &g.opponent] {
                if let Some(Some(table)) = cell.get() {
                    table.clear();
                }
            }
        }
    }
}

/// Lines for the user from the workers (a worker down, up again).
pub(super) type News = Arc<std::sync::Mutex<Vec<String>>>;

/// Why a child refused the game (`UCI_Variant`), the first one that did:
/// the session refuses the variant and keeps the one before.
pub(super) type Refused = Arc<std::sync::Mutex<Option<String>>>;

/// Each worker's latest round trip to its children, by worker (0-based).
pub(super) type RoundTrips = Arc<std::sync::Mutex<Vec<Duration>>>;

/// A child engine: one spoken to over UCI (a process; a test's fake), or
/// the built-in engine in this process.
pub(super) enum Child {
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
            // It knows the rules of chess and shakmaty's variants only.
            if config.variant.board().is_none() {
                let offered: Vec<&str> = Rules::all()
                    .filter(|r| r.board().is_some())
                    .map(Rules::uci)
                    .collect();
                return Err(ChildError::NoVariant {
                    engine: label,
                    variant: config.variant,
                    offered: offered.join(" "),
                });
            }
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

pub(super) struct Worker {
    /// 1-based, over the whole pool.
    pub(super) n: usize,
    pub(super) closing: CancellationToken,
    /// Its group (an index into the pool's) and the group's configuration.
    pub(super) group: usize,
    pub(super) config: Arc<WorkerGroup>,
    pub(super) evaluator: Option<Child>,
    pub(super) opponent: Option<Child>,
    pub(super) tables: Tables,
    pub(super) connect: Connect,
    /// The pool's `ucinewgame` count, and the one this worker's children saw.
    pub(super) games: Arc<AtomicU64>,
    pub(super) game: u64,
    pub(super) round_trips: RoundTrips,
    pub(super) news: News,
    pub(super) refused: Refused,
    pub(super) drops: Drops,
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
    pub(super) async fn run(mut self, queue: Arc<Queue>, started: Arc<watch::Sender<usize>>) {
        // Start the children now; a worker that cannot is down from the
        // start, and the others play without it.
        let first = self.start_children().await;
        if let Err(e) = &first {
            queue.set_down(self.n - 1, true);
            // Before the start is counted: a session waiting for the pool
            // to be ready then sees the refusal.
            if let ChildError::NoVariant { .. } = e
                && let Ok(mut refused) = self.refused.lock()
            {
                refused.get_or_insert_with(|| e.to_string());
            }
        }
        started.send_modify(|n| *n += 1);
        drop(started);
        match first {
            // No restart makes a child play another game: down until the
            // pool closes, not started again every minute.
            Err(e @ ChildError::NoVariant { .. }) => {
                self.say(format!("worker {} is down ({e})", self.n));
                self.closing.cancelled().await;
                return;
            }
            Err(e) => self.down(&queue, &e.to_string(), DOWN_WAIT_FIRST).await,
            Ok(()) => {}
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
            let mut stalled = None;
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
                // A stall is answered at once (the decision goes on without
                // it); it counts against the worker after.
                if matches!(e, SearchError::Child(ChildError::Stalled { .. })) {
                    stalled = self.drops.dropped(tokio::time::Instant::now());
                    break result;
                }
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
            // Said only when the stall takes the worker out of rotation.
            let out = stalled.and_then(|wait| Some((wait, result.as_ref().err()?.to_string())));
            let _ = job.reply.send(result);
            if let Some((wait, why)) = out
                && queue.take_out(n - 1)
            {
                self.out_of_rotation(&queue, &why, wait).await;
            }
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
            client.quit(DROP_QUIT).await;
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

    /// A line for the user (`info string`, through [`Pool::news`](super::Pool::news)).
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
                client.quit(DROP_QUIT).await;
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
                    child.quit(DROP_QUIT).await;
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
                    root: false,
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
}
