//! The queue of searches waiting for a worker, and where each is placed.

use std::collections::{BTreeMap, HashMap};

use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use crate::{
    children::error::SearchError,
    mpc::{Query, Report, Role},
};

pub(super) struct Job {
    pub(super) query: Query,
    pub(super) cancel: CancellationToken,
    pub(super) reply: oneshot::Sender<Result<Report, SearchError>>,
    /// The worker (0-based) whose children should search it.
    pub(super) prefer: usize,
    /// The position it searches ([`game::hash`]).
    pub(super) position: u64,
    /// It was tried once after a child crashed on it (here or on another
    /// worker): a second crash is its answer.
    pub(super) retried: bool,
    /// Its place in the queue, kept when it is handed over (the asker may
    /// still take it back by it).
    pub(super) key: JobKey,
}

/// A job's place in the queue: its urgency, then its arrival.
pub(super) type JobKey = (u8, u64);

/// Jobs waiting for a worker: most urgent first, then first come, each
/// worker taking the ones placed on it before any other.
#[derive(Default)]
pub(super) struct Queue {
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
///
/// A root worker (`root:`) takes the root searches and nothing else; the
/// others take every other call, and the root searches only while no root
/// worker is up.
#[derive(Default)]
struct Placement {
    /// The roles each worker serves ([`role_index`]).
    serves: Vec<[bool; 2]>,
    /// The root workers (0-based; none or one in practice, so asking
    /// costs nothing on a call's way).
    roots: Vec<usize>,
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
        let root = query.is_root();
        let can = |w: &usize| self.up(*w, role) && self.takes(*w, root);
        let position = query.game.hash_after(&query.line);
        if root {
            if let Some(w) = self.root.filter(can) {
                return (w, position);
            }
            let w = self
                .searched
                .get(&position)
                .copied()
                .filter(can)
                .unwrap_or_else(|| self.next_serving(role, root));
            self.root = Some(w);
            return (w, position);
        }
        if let Some(w) = self.searched.get(&position).copied().filter(can) {
            return (w, position);
        }
        let subtree = query.line.first().map(|&m| query.game.hash_after(&[m]));
        if let Some(w) = subtree
            .and_then(|s| self.subtrees.get(&s).copied())
            .filter(can)
        {
            return (w, position);
        }
        let w = self.next_serving(role, root);
        if let Some(s) = subtree {
            if self.subtrees.len() >= Self::MAX_ENTRIES {
                self.subtrees.clear();
            }
            self.subtrees.entry(s).or_insert(w);
        }
        (w, position)
    }

    /// The next worker in turn that serves `role`, takes a root search
    /// or not (`root`, see [`Placement::takes`]) and is up (else one that
    /// serves it and takes it, else 0).
    fn next_serving(&mut self, role: usize, root: bool) -> usize {
        let workers = self.serves.len().max(1);
        let mut fallback = None;
        for _ in 0..workers {
            let w = self.next % workers;
            self.next = self.next.wrapping_add(1);
            if !self.takes(w, root) {
                continue;
            }
            if self.up(w, role) {
                return w;
            }
            if self.serves.get(w).is_some_and(|s| s[role]) {
                fallback.get_or_insert(w);
            }
        }
        fallback.unwrap_or(0)
    }

    /// Some worker that is up would take `query`.
    fn any_up(&self, query: &Query) -> bool {
        let (role, root) = (role_index(query.role), query.is_root());
        (0..self.serves.len()).any(|w| self.up(w, role) && self.takes(w, root))
    }

    /// Worker `w` takes a root search (`root`) or another call: a root
    /// worker only the root searches, the others every other call, and
    /// the root searches while no root worker is up.
    fn takes(&self, w: usize, root: bool) -> bool {
        if self.roots.contains(&w) {
            root
        } else {
            !root || !self.roots.iter().any(|&r| self.up(r, 0))
        }
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
    /// A queue for workers serving the roles in `serves`, one entry each;
    /// the workers `roots` (0-based) take the root searches and nothing
    /// else.
    pub(super) fn new(serves: Vec<[bool; 2]>, roots: Vec<usize>) -> Queue {
        let queue = Queue::default();
        if let Ok(mut w) = queue.waiting.lock() {
            // Busy until it first asks for work (its children start first):
            // calls placed on it meanwhile go to an idle worker.
            w.busy = vec![true; serves.len()];
            w.placement.down = vec![false; serves.len()];
            w.placement.serves = serves;
            w.placement.roots = roots;
        }
        queue
    }

    /// Queues a search, placed on a worker; its place in the queue.
    pub(super) fn push(
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
            if !w.placement.any_up(&query) {
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
    pub(super) fn set_down(&self, worker: usize, down: bool) {
        let mut stranded = Vec::new();
        if let Ok(mut w) = self.waiting.lock() {
            if let Some(d) = w.placement.down.get_mut(worker) {
                *d = down;
            }
            if down {
                let keys: Vec<JobKey> = w
                    .jobs
                    .iter()
                    .filter(|(_, j)| !w.placement.any_up(&j.query))
                    .map(|(k, _)| *k)
                    .collect();
                stranded.extend(keys.iter().filter_map(|k| w.jobs.remove(k)));
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
    pub(super) fn take_out(&self, worker: usize) -> bool {
        let Ok(mut w) = self.waiting.lock() else {
            return false;
        };
        let p = &mut w.placement;
        let serves = p.serves.get(worker).copied().unwrap_or_default();
        // Another worker up for each role, not a root worker (which takes
        // no lookahead call; a root worker's searches go to the others).
        let spare = (0..2).all(|role| {
            !serves[role]
                || (0..p.serves.len()).any(|o| o != worker && p.up(o, role) && p.takes(o, false))
        });
        if spare && let Some(d) = p.down.get_mut(worker) {
            *d = true;
        }
        spare
    }

    /// Gives `job`, which worker `from` could not search, to another worker
    /// of its role that is up; the job back when there is none.
    pub(super) fn hand_over(&self, mut job: Job, from: usize) -> Option<Job> {
        let Ok(mut w) = self.waiting.lock() else {
            return Some(job);
        };
        let (role, root) = (role_index(job.query.role), job.query.is_root());
        let p = &w.placement;
        let other = |o: usize| o != from && p.up(o, role) && p.takes(o, root);
        if w.closed || !(0..p.serves.len()).any(other) {
            return Some(job);
        }
        // Anywhere but where it failed.
        let (mut prefer, _) = w.placement.place(&job.query);
        if prefer == from {
            let p = &w.placement;
            prefer = (0..p.serves.len())
                .find(|&o| o != from && p.up(o, role) && p.takes(o, root))
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
    pub(super) fn withdraw(&self, key: JobKey) -> bool {
        self.waiting
            .lock()
            .is_ok_and(|mut w| w.jobs.remove(&key).is_some())
    }

    /// The next job for `worker` (which is idle until it gets one): the
    /// most urgent placed on it, else the most urgent whose own worker is
    /// busy (an idle worker takes work rather than let it wait); `None` once
    /// the queue is closed and empty.
    pub(super) async fn pop(&self, worker: usize) -> Option<Job> {
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
                            || (w
                                .placement
                                .serves
                                .get(worker)
                                .is_some_and(|s| s[role_index(j.query.role)])
                                && w.placement.takes(worker, j.query.is_root()))
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
    pub(super) fn searched_by(&self, position: u64, worker: usize) {
        if let Ok(mut w) = self.waiting.lock() {
            w.placement.searched_by(position, worker);
        }
    }

    pub(super) fn new_game(&self) {
        if let Ok(mut w) = self.waiting.lock() {
            w.placement.forget();
        }
    }

    pub(super) fn close(&self) {
        if let Ok(mut w) = self.waiting.lock() {
            w.closed = true;
        }
        self.wakeup.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::{sync::Arc, time::Duration};

    use super::*;
    use crate::mpc::{ChildLimit, Game, game};
    use mpcmc_protocol::GameMove;
    use shakmaty::{Move, Position};

    fn query(role: Role, line: Vec<Move>, game: &Arc<Game>) -> Query {
        Query {
            role,
            game: game.clone(),
            line: line.into_iter().map(GameMove::Board).collect(),
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

    #[tokio::test]
    async fn the_queue_serves_the_root_then_completions_then_starts() {
        let game = Arc::new(Game::default());
        let m = game.position().expect("a board game").legal_moves()[0];
        let mut after = game.position().expect("a board game").clone();
        after.play_unchecked(m);
        let w = after.legal_moves()[0];
        let queue = Queue::new(vec![[true, true]], Vec::new());
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
        let moves = game.position().expect("a board game").legal_moves();
        let (m0, m1, m2) = (moves[0], moves[1], moves[2]);
        let reply = |m: Move| {
            let mut after = game.position().expect("a board game").clone();
            after.play_unchecked(m);
            after.legal_moves()[0]
        };
        let queue = Queue::new(vec![[true, true]; 2], Vec::new());
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
                .map(|j| j.query.line.first().and_then(|m| m.board()))
                .collect::<Vec<_>>()
        };
        assert_eq!(by_worker(0), vec![Some(m0), Some(m2)]);
        assert_eq!(by_worker(1), vec![Some(m1), Some(m1)]);
        // Worker 0 takes its first; worker 1 takes its own (the evaluator
        // call first: more urgent), then, idle, one of busy worker 0's.
        let first = queue.pop(0).await;
        assert_eq!(
            first.and_then(|j| j.query.line.first().and_then(|m| m.board())),
            Some(m0)
        );
        let mut served = Vec::new();
        for _ in 0..3 {
            let job = queue.pop(1).await;
            served.push(job.and_then(|j| j.query.line.first().and_then(|m| m.board())));
        }
        assert_eq!(served, vec![Some(m1), Some(m1), Some(m2)]);

        // The first root search goes where its position was searched; every
        // later one follows it there, wherever its own position was.
        let after = |g: &Game, m: Move| {
            let mut g = g.clone();
            let r = {
                let mut p = g.position().expect("a board game").clone();
                p.play_unchecked(m);
                p.legal_moves()[0]
            };
            g.push(m);
            g.push(r);
            Arc::new(g)
        };
        let next = after(&game, m1);
        queue.searched_by(game::hash(next.position().expect("a board game")), 1);
        place(query(Role::Evaluator, vec![], &next));
        let later = after(
            &next,
            next.position().expect("a board game").legal_moves()[0],
        );
        queue.searched_by(game::hash(later.position().expect("a board game")), 0);
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
        let moves = game.position().expect("a board game").legal_moves();
        // Worker 0: the evaluator only; worker 1: the opponent only;
        // worker 2: both.
        let queue = Queue::new(vec![[true, false], [false, true], [true, true]], Vec::new());
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

    /// A root worker takes the root searches and nothing else, even idle;
    /// the others take every other call, and the root searches only once
    /// the root worker is down. With no other worker up, a lookahead call
    /// fails at once and the root search still has its worker.
    #[tokio::test]
    async fn the_root_worker_takes_the_root_searches_only() {
        let game = Arc::new(Game::default());
        let moves = game.position().expect("a board game").legal_moves();
        // Worker 0: the root; workers 1 and 2: both roles.
        let queue = Queue::new(vec![[true, false], [true, true], [true, true]], vec![0]);
        let mut receivers = Vec::new();
        for &m in moves.iter().take(4) {
            for role in [Role::Opponent, Role::Evaluator] {
                let (pushed, rx) = push(&queue, query(role, vec![m], &game));
                assert!(pushed.is_ok());
                receivers.push(rx);
            }
        }
        let (pushed, rx) = push(&queue, query(Role::Evaluator, vec![], &game));
        assert!(pushed.is_ok());
        receivers.push(rx);
        // Workers 1 and 2 stay busy with one call each; the root worker,
        // idle, still takes only the root search.
        let one = queue.pop(1).await.expect("a call");
        let two = queue.pop(2).await.expect("a call");
        assert!(!one.query.is_root() && !two.query.is_root());
        let root = queue.pop(0).await.expect("the root search");
        assert!(root.query.is_root());
        let more = tokio::time::timeout(Duration::from_millis(50), queue.pop(0)).await;
        assert!(more.is_err(), "the root worker took a lookahead call");
        // The root worker down: the next root search goes to the others.
        queue.set_down(0, true);
        let (pushed, rx) = push(&queue, query(Role::Evaluator, vec![], &game));
        receivers.push(rx);
        let key = pushed.expect("placed");
        if let Ok(waiting) = queue.waiting.lock() {
            assert_ne!(waiting.jobs[&key].prefer, 0);
        }
        // Up again, and the others down: lookahead calls have no worker
        // (waiting ones are answered at once), the root search has one.
        queue.set_down(0, false);
        queue.set_down(1, true);
        queue.set_down(2, true);
        let (pushed, _rx) = push(&queue, query(Role::Opponent, vec![moves[0]], &game));
        assert!(matches!(pushed, Err(SearchError::NoWorker(Role::Opponent))));
        let (pushed, _rx) = push(&queue, query(Role::Evaluator, vec![], &game));
        assert!(pushed.is_ok());
        let stranded = receivers
            .iter_mut()
            .filter_map(|rx| rx.try_recv().ok())
            .count();
        assert_eq!(stranded, 6, "the lookahead calls left waiting");
    }
}
