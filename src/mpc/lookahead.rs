//! Half-step and one-step lookahead over every root move, with fortification.
//!
//! One pass: for every candidate `u` at the root `x`, one-step asks the nominal
//! opponent for `w = ν(x,u)` and the evaluator for `V(u) = E(x·u·w)` (we are to
//! move there); half-step scores `x·u` with the evaluator from the opponent's
//! side. Finished games are scored here, exactly, and never sent to a child. In
//! parallel, the evaluator searches the root itself: its move and value are the
//! fortification reference and the fallback when the lookahead cannot finish.
//! No candidate is pruned; the calls all go out at once and the [`Children`]
//! implementation bounds how many run together.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use shakmaty::{Move, uci::UciMove};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildFault, ChildLimit, Children, Game, Query, Report, Role, Terminal, Value,
    fortify::{Verdict, fortify},
};

/// How long a pass cut short with nothing finished waits for the root's
/// stopped search (children answer `stop` within a millisecond or two, more
/// on a loaded machine).
pub const CANCEL_GRACE: Duration = Duration::from_millis(50);

/// How deep the lookahead goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookahead {
    /// Evaluate `x·u` (no opponent).
    Half,
    /// Predict the reply, evaluate `x·u·w`.
    One,
}

impl Lookahead {
    /// Plies from the root to the evaluated position.
    pub fn plies(self) -> u32 {
        match self {
            Lookahead::Half => 1,
            Lookahead::One => 2,
        }
    }

    /// Its name: the `Lookahead` option's value, and the trace's.
    pub fn name(self) -> &'static str {
        match self {
            Lookahead::Half => "half",
            Lookahead::One => "one",
        }
    }
}

/// The decision rule's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub lookahead: Lookahead,
    pub fortify: bool,
    /// Centipawns the lookahead must gain over the evaluator's root value.
    pub fortify_margin: i32,
}

/// One root move and what the lookahead learned about it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub mv: Move,
    /// The nominal opponent's predicted reply (one-step).
    pub reply: Option<Move>,
    /// `V(u)`: the value for us at the root; `None` when unfinished.
    pub value: Option<Value>,
    /// The game ended on the line (decided here, no child asked).
    pub terminal: Option<Terminal>,
    /// The evaluator's report at the evaluated position.
    pub leaf: Option<Report>,
    /// Reports of every call made for this candidate.
    pub calls: Vec<Report>,
    /// Why the candidate has no value.
    pub failure: Option<Failure>,
}

/// Why a candidate has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The pass ended (stop, a deadline, a stalled child) before the
    /// candidate's calls did.
    Unfinished,
    /// A child's search was stopped before it finished.
    Stopped(Role),
    /// The evaluator finished without a score.
    NoScore,
    /// A child call failed; `stalled` when the child missed its deadline.
    Child {
        role: Role,
        stalled: bool,
        message: String,
    },
}

impl Failure {
    /// A fault of a child (worth telling the user), not the pass being cut.
    pub fn is_fault(&self) -> bool {
        matches!(self, Failure::NoScore | Failure::Child { .. })
    }

    pub(crate) fn of<E: ChildFault>(role: Role, e: &E) -> Failure {
        if e.is_cancelled() {
            Failure::Unfinished
        } else {
            Failure::Child {
                role,
                stalled: e.is_stall(),
                message: e.to_string(),
            }
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Unfinished => f.write_str("cancelled before it finished"),
            Failure::Stopped(role) => write!(f, "{role} stopped before it finished"),
            Failure::NoScore => f.write_str("evaluator gave no score"),
            Failure::Child { role, message, .. } => write!(f, "{role} failed: {message}"),
        }
    }
}

/// Which rule chose the move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The lookahead's argmax (fortification off, or passed).
    Lookahead,
    /// Fortification kept the evaluator's move.
    Fortified,
    /// The lookahead's best beat the evaluator's move by the margin, but
    /// the evaluator's deep check of it did not confirm it: the
    /// evaluator's move.
    Refuted,
    /// The lookahead's best beat the evaluator's move by the margin, but
    /// could not be checked (stopped, out of time): the evaluator's move.
    Unchecked,
    /// No candidate finished: the evaluator's own move.
    EvaluatorFallback,
    /// Too little time for a lookahead: the evaluator's own move, by plan.
    EvaluatorOnly,
    /// No child answered at all: the first candidate, so a legal move is played.
    /// The GUI side never plays it: it asks the built-in engine instead.
    NoAnswer,
    /// The children could not answer in time: the built-in engine searched
    /// the root in process (decided by the GUI side, not by this module).
    BuiltinFallback,
}

/// The outcome of one pass.
#[derive(Debug, Clone)]
pub struct Decision {
    pub best: Move,
    /// The expected reply to `best`.
    pub ponder: Option<Move>,
    /// Value for us at the root of the chosen move.
    pub value: Option<Value>,
    /// Our move, the predicted reply, then the evaluator's line.
    pub pv: Vec<Move>,
    pub rule: Rule,
    /// The lookahead's own choice and value, and the evaluator's, for the trace.
    pub lookahead_choice: Option<(Move, Value)>,
    pub evaluator_choice: Option<(Move, Value)>,
    /// In candidate order.
    pub candidates: Vec<Candidate>,
    pub root: Option<Report>,
    /// Why the evaluator's root search gave nothing, if it did not.
    pub root_failure: Option<Failure>,
    pub stats: Stats,
    /// The pass was cut short: by cancellation, or because a child stalled.
    pub cancelled: bool,
    /// How a decision in rounds spread its budget.
    pub spread: Option<crate::mpc::rounds::Spread>,
}

/// Sums over every child report of a pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub calls: u64,
    pub nodes: u64,
    pub busy_time: Duration,
    pub search_time: Duration,
    /// Deepest evaluator search at a chosen leaf, plus the lookahead plies.
    pub depth: u32,
}

impl Stats {
    /// Adds the calls of another pass (its `depth` is not summed).
    pub fn merge(&mut self, other: &Stats) {
        self.calls += other.calls;
        self.nodes += other.nodes;
        self.busy_time += other.busy_time;
        self.search_time += other.search_time;
    }

    pub(crate) fn add(&mut self, r: &Report) {
        self.calls += 1;
        self.nodes += r.nodes;
        self.busy_time += r.busy_time;
        self.search_time += r.search_time;
    }
}

enum Finished<E> {
    Root(Result<Report, E>),
    Candidate(usize, Candidate),
}

/// Orders candidates deterministically (by UCI text) so ties break the same way
/// on every run.
pub fn sort_candidates(candidates: &mut [Move]) {
    candidates.sort_by_cached_key(|m| UciMove::from_standard(*m).to_string());
}

/// Runs one pass over `candidates` (legal at the game's position, non-empty).
/// Returns when every call finished, or at once when `cancel` fires or a child
/// stalls (past a deadline proportional to what it was asked: asking on would
/// wait as long again), with what finished by then. `on_candidate` sees each
/// candidate as it finishes, with its rank of completion (1-based). Returns
/// `None` only for an empty candidate list.
pub async fn decide<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    candidates: &[Move],
    limit: ChildLimit,
    settings: Settings,
    cancel: &CancellationToken,
    on_candidate: &mut (dyn FnMut(&Candidate, usize) + Send),
) -> Option<Decision> {
    pass(
        children,
        game,
        candidates,
        limit,
        Some(limit),
        settings,
        cancel,
        on_candidate,
    )
    .await
}

/// [`decide`], with the evaluator's root search under `root`, or none
/// (the rounds run the root search apart).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn pass<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    candidates: &[Move],
    limit: ChildLimit,
    root_limit: Option<ChildLimit>,
    settings: Settings,
    cancel: &CancellationToken,
    on_candidate: &mut (dyn FnMut(&Candidate, usize) + Send),
) -> Option<Decision> {
    let mut order = candidates.to_vec();
    sort_candidates(&mut order);
    let first = *order.first()?;
    // Cancelled by the caller, or by this pass when a child stalls.
    let cancel = &cancel.child_token();

    let mut tasks = JoinSet::new();
    // The root call is the fallback when time runs out; `Query::urgency` has
    // the children serve it first. A root that is already a finished game (a
    // draw by rule with moves left) is not sent to a child.
    if let Some(limit) = root_limit
        && game.terminal_now().is_none()
    {
        let query = Query::root(game.clone(), limit);
        let (children, cancel) = (children.clone(), cancel.clone());
        let (queued, is_queued) = tokio::sync::oneshot::channel();
        tasks.spawn(async move {
            let search = children.search(query, cancel);
            tokio::pin!(search);
            // One poll queues the call; only then may the candidates queue
            // theirs, so the root is never behind a whole candidate search.
            let first = tokio::select! {
                biased;
                done = &mut search => Some(done),
                _ = std::future::ready(()) => None,
            };
            let _ = queued.send(());
            let done = match first {
                Some(done) => done,
                None => search.await,
            };
            Finished::Root(done)
        });
        let _ = is_queued.await;
    }
    for (index, &mv) in order.iter().enumerate() {
        let (children, game, cancel) = (children.clone(), game.clone(), cancel.clone());
        let lookahead = settings.lookahead;
        tasks.spawn(async move {
            let candidate = evaluate(&*children, game, mv, lookahead, limit, cancel).await;
            Finished::Candidate(index, candidate)
        });
    }

    let mut finished: Vec<Option<Candidate>> = vec![None; order.len()];
    let mut root = None;
    let mut root_failure = None;
    let mut stats = Stats::default();
    let mut done = 0;
    let mut cancelled = false;
    // Cut short with nothing finished, the root's stopped search still names
    // a move worth more than the first candidate: wait a moment for it.
    let mut grace: Option<Instant> = None;
    loop {
        let next = tokio::select! {
            biased;
            _ = cancel.cancelled(), if !cancelled => {
                cancelled = true;
                let any = finished.iter().flatten().any(|c| c.value.is_some());
                if root.is_some() || any {
                    break;
                }
                grace = Some(Instant::now() + CANCEL_GRACE);
                continue;
            }
            _ = tokio::time::sleep_until(grace.unwrap_or_else(Instant::now).into()), if grace.is_some() => break,
            next = tasks.join_next() => next,
        };
        let Some(joined) = next else { break };
        match joined {
            Ok(Finished::Root(result)) => {
                match result {
                    Ok(report) => {
                        stats.add(&report);
                        root = Some(report);
                    }
                    Err(e) => {
                        tracing::warn!("evaluator at the root failed: {e}");
                        if e.is_stall() {
                            cancel.cancel();
                        }
                        root_failure = Some(Failure::of(Role::Evaluator, &e));
                    }
                }
                if grace.is_some() {
                    break;
                }
            }
            Ok(Finished::Candidate(index, candidate)) => {
                if let Some(Failure::Child { stalled: true, .. }) = candidate.failure {
                    cancel.cancel();
                }
                candidate.calls.iter().for_each(|r| stats.add(r));
                done += 1;
                on_candidate(&candidate, done);
                finished[index] = Some(candidate);
            }
            Err(e) => tracing::error!("candidate task failed: {e}"),
        }
    }
    // Waiters still pending are dropped here; the children are stopped through
    // `cancel` by whoever runs them.
    tasks.abort_all();

    let candidates: Vec<Candidate> = order
        .iter()
        .zip(finished)
        .map(|(&mv, c)| {
            c.unwrap_or_else(|| Candidate {
                failure: Some(Failure::Unfinished),
                ..Candidate::new(mv)
            })
        })
        .collect();
    let mut decision = choose(candidates, root, settings, stats, first, cancelled);
    decision.root_failure = root_failure;
    Some(decision)
}

impl Candidate {
    /// The evaluated line from the root: the move, the predicted reply,
    /// then the evaluator's line.
    pub fn line(&self) -> Vec<Move> {
        let mut line = vec![self.mv];
        line.extend(self.reply);
        line.extend(self.leaf.iter().flat_map(|l| l.pv.iter().copied()));
        line
    }

    /// The depth its value stands for: the evaluator's at the leaf plus
    /// the lookahead's `plies`.
    pub fn depth(&self, plies: u32) -> Option<u32> {
        self.leaf.as_ref().map(|leaf| leaf.depth + plies)
    }

    fn new(mv: Move) -> Candidate {
        Candidate {
            mv,
            reply: None,
            value: None,
            terminal: None,
            leaf: None,
            calls: Vec::new(),
            failure: None,
        }
    }
}

/// The lookahead for one root move.
async fn evaluate<C: Children>(
    children: &C,
    game: Arc<Game>,
    mv: Move,
    lookahead: Lookahead,
    limit: ChildLimit,
    cancel: CancellationToken,
) -> Candidate {
    let mut candidate = Candidate::new(mv);
    // After our move the opponent is to move: a finished game there is scored
    // from its side, one ply down.
    if let Some(t) = game.terminal_after(&[mv]) {
        candidate.terminal = Some(t);
        candidate.value = Some((-Value::of(t)).from_child(1));
        return candidate;
    }
    let mut line = vec![mv];
    if lookahead == Lookahead::One {
        let query = Query {
            role: Role::Opponent,
            game: game.clone(),
            line: line.clone(),
            limit,
        };
        match children.search(query, cancel.clone()).await {
            Ok(report) if report.stopped => {
                candidate.failure = Some(Failure::Stopped(Role::Opponent));
                candidate.calls.push(report);
                return candidate;
            }
            Ok(report) => {
                candidate.reply = Some(report.best);
                line.push(report.best);
                candidate.calls.push(report);
            }
            Err(e) => {
                candidate.failure = Some(Failure::of(Role::Opponent, &e));
                return candidate;
            }
        }
        if let Some(t) = game.terminal_after(&line) {
            candidate.terminal = Some(t);
            candidate.value = Some(Value::of(t).from_child(2));
            return candidate;
        }
    }
    let plies = line.len() as u32;
    let query = Query {
        role: Role::Evaluator,
        game,
        line,
        limit,
    };
    match children.search(query, cancel).await {
        Ok(report) if report.stopped || report.score.is_none() => {
            candidate.failure = Some(if report.stopped {
                Failure::Stopped(Role::Evaluator)
            } else {
                Failure::NoScore
            });
            candidate.calls.push(report);
        }
        Ok(report) => {
            let score = report.score.unwrap_or(Value::DRAW);
            // The evaluator scores from the side to move: us after one step,
            // the opponent after a half step.
            let ours = if plies.is_multiple_of(2) {
                score
            } else {
                -score
            };
            candidate.value = Some(ours.from_child(plies));
            candidate.leaf = Some(report.clone());
            candidate.calls.push(report);
        }
        Err(e) => candidate.failure = Some(Failure::of(Role::Evaluator, &e)),
    }
    candidate
}

/// Picks the move from the finished candidates and the root report.
fn choose(
    candidates: Vec<Candidate>,
    root: Option<Report>,
    settings: Settings,
    stats: Stats,
    first: Move,
    cancelled: bool,
) -> Decision {
    // Argmax; on equal values the first in candidate order wins.
    let mut best: Option<(usize, Value)> = None;
    for (i, c) in candidates.iter().enumerate() {
        if let Some(v) = c.value
            && best.is_none_or(|(_, b)| v > b)
        {
            best = Some((i, v));
        }
    }
    let lookahead_choice = best.map(|(i, v)| (candidates[i].mv, v));
    // The evaluator's root search is a reference only when it finished and
    // names one of the candidates (it may not, under `go searchmoves`).
    let evaluator_choice = root
        .as_ref()
        .filter(|r| !r.stopped)
        .and_then(|r| Some((r.best, r.score?)))
        .filter(|(m, _)| candidates.iter().any(|c| c.mv == *m));

    let (chosen, rule) = match (best, evaluator_choice) {
        (Some((i, v)), Some((m, s))) if settings.fortify => {
            match fortify(v, s, settings.fortify_margin) {
                Verdict::Lookahead => (Some(i), Rule::Lookahead),
                Verdict::Evaluator => (candidates.iter().position(|c| c.mv == m), Rule::Fortified),
            }
        }
        (Some((i, _)), _) => (Some(i), Rule::Lookahead),
        (None, _) => (None, Rule::EvaluatorFallback),
    };

    let mut decision = Decision {
        best: first,
        ponder: None,
        value: None,
        pv: vec![first],
        rule: Rule::NoAnswer,
        lookahead_choice,
        evaluator_choice,
        candidates,
        root,
        root_failure: None,
        stats,
        cancelled,
        spread: None,
    };
    let plies = settings.lookahead.plies();
    match chosen {
        Some(i) => {
            let mv = decision.candidates[i].mv;
            decision.play(mv, rule, plies);
        }
        // The root's move stands in only if its search completed an
        // iteration (it has a score): a search stopped before that names a
        // move it never looked at.
        None => {
            if let Some(mv) = decision.root_move() {
                decision.play(mv, Rule::EvaluatorFallback, plies);
            }
        }
    }
    decision
}

impl Decision {
    /// The root search's move, when it completed an iteration (it has a
    /// score) and names a candidate.
    pub fn root_move(&self) -> Option<Move> {
        self.root
            .as_ref()
            .filter(|r| r.score.is_some() && self.candidates.iter().any(|c| c.mv == r.best))
            .map(|r| r.best)
    }

    /// Plays `mv` by `rule`: its line and value from its candidate when the
    /// lookahead valued it (`plies` deep), else from the root search.
    pub fn play(&mut self, mv: Move, rule: Rule, plies: u32) {
        let root_score = self.evaluator_choice.map(|(_, s)| s);
        if let Some(c) = self
            .candidates
            .iter()
            .find(|c| c.mv == mv && c.value.is_some())
        {
            let pv = c.line();
            if let Some(depth) = c.depth(plies) {
                self.stats.depth = depth;
            }
            self.ponder = c
                .reply
                .or_else(|| c.leaf.as_ref().and_then(|l| l.pv.first().copied()));
            self.value = c.value.or(root_score);
            self.pv = pv;
        } else if let Some(r) = self.root.as_ref().filter(|r| r.best == mv) {
            self.stats.depth = r.depth;
            self.pv = if r.pv.first() == Some(&r.best) {
                r.pv.clone()
            } else {
                vec![r.best]
            };
            self.ponder = self.pv.get(1).copied();
            self.value = r.score;
        } else {
            self.pv = vec![mv];
            self.ponder = None;
            self.value = None;
        }
        self.best = mv;
        self.rule = rule;
    }
}

#[cfg(test)]
mod tests {
    //! The core against a scripted in-process child: exact values, sides and
    //! rules, no processes.
    use std::collections::HashMap;

    use shakmaty::{CastlingMode, Chess, Position};

    use super::*;

    /// Replies and scores keyed by the UCI line from the game's position.
    #[derive(Default)]
    struct Scripted {
        replies: HashMap<String, &'static str>,
        scores: HashMap<String, i32>,
        root: Option<(&'static str, i32)>,
        /// The root search is stopped before its first iteration: a move, no
        /// score.
        root_unsearched: bool,
        fail: Vec<String>,
        stall: Vec<String>,
        /// Every query, in the order the children got them.
        asked: std::sync::Mutex<Vec<String>>,
    }

    fn key(line: &[Move]) -> String {
        line.iter()
            .map(|m| UciMove::from_standard(*m).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn report(pos: &Chess, best: &str, score: i32) -> Report {
        let best = best
            .parse::<UciMove>()
            .expect("uci")
            .to_move(pos)
            .expect("scripted move is legal");
        Report {
            best,
            score: Some(Value::cp(score)),
            pv: vec![best],
            depth: 5,
            nodes: 100,
            search_time: Duration::from_millis(1),
            busy_time: Duration::from_millis(2),
            stopped: false,
            slot: None,
        }
    }

    /// A scripted failure, a stall or not, and what it says.
    #[derive(Debug)]
    struct ScriptedFailure {
        stall: bool,
        message: String,
    }

    impl ScriptedFailure {
        fn fault(message: String) -> ScriptedFailure {
            ScriptedFailure {
                stall: false,
                message,
            }
        }
    }

    impl std::fmt::Display for ScriptedFailure {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.message)
        }
    }

    impl ChildFault for ScriptedFailure {
        fn is_stall(&self) -> bool {
            self.stall
        }
        fn is_cancelled(&self) -> bool {
            false
        }
    }

    impl Children for Scripted {
        type Error = ScriptedFailure;
        async fn search(
            &self,
            q: Query,
            _cancel: CancellationToken,
        ) -> Result<Report, ScriptedFailure> {
            let k = key(&q.line);
            if let Ok(mut asked) = self.asked.lock() {
                asked.push(k.clone());
            }
            let pos = q.position();
            if self.fail.contains(&k) {
                return Err(ScriptedFailure::fault(format!("scripted failure at '{k}'")));
            }
            if self.stall.contains(&k) {
                // The first call to stall ends the pass; no other call must
                // be waited for.
                return Err(ScriptedFailure {
                    stall: true,
                    message: format!("scripted stall at '{k}'"),
                });
            }
            match q.role {
                Role::Opponent => {
                    let reply = self.replies.get(&k).copied().unwrap_or_else(|| {
                        // Any legal move, deterministically.
                        let mut moves: Vec<Move> = pos.legal_moves().into_iter().collect();
                        sort_candidates(&mut moves);
                        Box::leak(
                            UciMove::from_standard(moves[0])
                                .to_string()
                                .into_boxed_str(),
                        )
                    });
                    Ok(report(&pos, reply, 0))
                }
                Role::Evaluator if q.is_root() => {
                    if self.root_unsearched {
                        let first = pos.legal_moves()[0];
                        return Ok(Report {
                            score: None,
                            stopped: true,
                            depth: 0,
                            ..report(&pos, &UciMove::from_standard(first).to_string(), 0)
                        });
                    }
                    let (m, s) = self
                        .root
                        .ok_or_else(|| ScriptedFailure::fault("no root script".into()))?;
                    Ok(report(&pos, m, s))
                }
                Role::Evaluator => {
                    let s = self.scores.get(&k).copied().unwrap_or(-500);
                    let mut moves: Vec<Move> = pos.legal_moves().into_iter().collect();
                    sort_candidates(&mut moves);
                    let m = UciMove::from_standard(moves[0]).to_string();
                    Ok(report(&pos, &m, s))
                }
            }
        }
    }

    fn game(fen: &str) -> Arc<Game> {
        Arc::new(Game::from_fen(fen, CastlingMode::Standard).expect("test fen"))
    }

    fn moves(g: &Game, names: &[&str]) -> Vec<Move> {
        names
            .iter()
            .map(|n| {
                n.parse::<UciMove>()
                    .expect("uci")
                    .to_move(g.position())
                    .expect("legal")
            })
            .collect()
    }

    async fn run(
        children: Scripted,
        g: &Arc<Game>,
        cands: &[Move],
        settings: Settings,
    ) -> Decision {
        let mut seen = Vec::new();
        let children = Arc::new(children);
        let d = decide(
            &children,
            g,
            cands,
            ChildLimit::Nodes(100),
            settings,
            &CancellationToken::new(),
            &mut |c, rank| seen.push((c.mv, rank)),
        )
        .await
        .expect("candidates");
        if !d.cancelled {
            assert_eq!(seen.len(), cands.len(), "every candidate reported once");
        }
        let asked = children.asked.lock().map(|a| a.clone()).unwrap_or_default();
        if g.terminal_now().is_none() {
            assert_eq!(
                asked.first().map(String::as_str),
                Some(""),
                "the root is asked first: {asked:?}"
            );
        }
        d
    }

    const ONE: Settings = Settings {
        lookahead: Lookahead::One,
        fortify: false,
        fortify_margin: 0,
    };
    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[tokio::test]
    async fn one_step_plays_the_argmax_of_the_values_after_the_reply() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4", "g1f3"]);
        let mut c = Scripted::default();
        c.replies.insert("e2e4".into(), "e7e5");
        c.replies.insert("d2d4".into(), "d7d5");
        c.replies.insert("g1f3".into(), "g8f6");
        c.scores.insert("e2e4 e7e5".into(), 30);
        c.scores.insert("d2d4 d7d5".into(), 45);
        c.scores.insert("g1f3 g8f6".into(), 10);
        c.root = Some(("e2e4", 20));
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(key(&[d.best]), "d2d4");
        assert_eq!(key(&d.ponder.into_iter().collect::<Vec<_>>()), "d7d5");
        assert_eq!(d.value, Some(Value::cp(45)));
        assert_eq!(d.rule, Rule::Lookahead);
        assert_eq!(key(&d.pv[..2]), "d2d4 d7d5");
        // 3 candidates x 2 calls + the root call.
        assert_eq!(d.stats.calls, 7);
        assert_eq!(d.stats.nodes, 700);
    }

    #[tokio::test]
    async fn half_step_scores_from_the_opponents_side() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let mut c = Scripted::default();
        // The evaluator speaks for Black after our move: lower is better for us.
        c.scores.insert("e2e4".into(), -40);
        c.scores.insert("d2d4".into(), 15);
        c.root = Some(("d2d4", 0));
        let settings = Settings {
            lookahead: Lookahead::Half,
            ..ONE
        };
        let d = run(c, &g, &cands, settings).await;
        assert_eq!(key(&[d.best]), "e2e4");
        assert_eq!(d.value, Some(Value::cp(40)));
        assert_eq!(d.stats.calls, 3);
    }

    #[tokio::test]
    async fn fortification_keeps_the_evaluator_move_unless_beaten_by_the_margin() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let script = || {
            let mut c = Scripted::default();
            c.replies.insert("e2e4".into(), "e7e5");
            c.replies.insert("d2d4".into(), "d7d5");
            c.scores.insert("e2e4 e7e5".into(), 20);
            c.scores.insert("d2d4 d7d5".into(), 50);
            c.root = Some(("e2e4", 40));
            c
        };
        let fortified = |margin| Settings {
            fortify: true,
            fortify_margin: margin,
            ..ONE
        };
        let d = run(script(), &g, &cands, fortified(0)).await;
        assert_eq!((key(&[d.best]), d.rule), ("d2d4".into(), Rule::Lookahead));
        let d = run(script(), &g, &cands, fortified(11)).await;
        assert_eq!((key(&[d.best]), d.rule), ("e2e4".into(), Rule::Fortified));
        assert_eq!(d.value, Some(Value::cp(20)), "the value of the move played");
        assert_eq!(d.lookahead_choice.map(|(_, v)| v), Some(Value::cp(50)));
        assert_eq!(d.evaluator_choice.map(|(_, v)| v), Some(Value::cp(40)));
    }

    #[tokio::test]
    async fn finished_games_are_decided_without_children() {
        // White mates with Ra8#; Rb1 would stalemate nothing, just a move.
        let g = game("7k/8/6K1/8/8/8/8/R7 w - - 0 1");
        let cands = moves(&g, &["a1a8", "a1b1"]);
        let mut c = Scripted::default();
        c.fail.push("a1a8".into()); // a child asked about the mate would fail the test
        c.replies.insert("a1b1".into(), "h8g8");
        c.scores.insert("a1b1 h8g8".into(), 900);
        c.root = Some(("a1b1", 900));
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(key(&[d.best]), "a1a8");
        assert_eq!(
            d.value.map(|v| v.to_uci().kind),
            Some(mpcmc_protocol::ScoreKind::Mate(1))
        );
        assert_eq!(d.candidates[0].terminal, Some(Terminal::Checkmate));

        // Stalemating the opponent is a draw, worse than a won position.
        let g = game("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1");
        let cands = moves(&g, &["g1g6", "g1g2"]);
        let mut c = Scripted::default();
        c.fail.push("g1g6".into());
        c.replies.insert("g1g2".into(), "h8h7");
        c.scores.insert("g1g2 h8h7".into(), 1500);
        c.root = Some(("g1g2", 1500));
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(key(&[d.best]), "g1g2");
        assert_eq!(
            d.candidates
                .iter()
                .find(|c| key(&[c.mv]) == "g1g6")
                .and_then(|c| c.terminal),
            Some(Terminal::Stalemate)
        );
    }

    #[tokio::test]
    async fn failures_fall_back_to_a_legal_move() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let c = Scripted {
            fail: vec!["e2e4".into(), "d2d4".into()],
            root: Some(("d2d4", 10)),
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(
            (key(&[d.best]), d.rule),
            ("d2d4".into(), Rule::EvaluatorFallback)
        );
        assert!(d.candidates.iter().all(|c| c.failure.is_some()));

        let c = Scripted {
            fail: vec!["e2e4".into(), "d2d4".into()],
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!((key(&[d.best]), d.rule), ("d2d4".into(), Rule::NoAnswer));

        // A root search stopped before its first iteration is no answer.
        let c = Scripted {
            fail: vec!["e2e4".into(), "d2d4".into()],
            root_unsearched: true,
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(d.rule, Rule::NoAnswer);
    }

    #[tokio::test]
    async fn a_stalled_child_ends_the_pass_with_what_finished() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let c = Scripted {
            stall: vec!["d2d4".into()],
            root: Some(("e2e4", 10)),
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert!(d.cancelled, "a stall cuts the pass");
        let stalled = d.candidates.iter().find(|c| key(&[c.mv]) == "d2d4");
        assert!(
            matches!(
                stalled.and_then(|c| c.failure.clone()),
                Some(Failure::Child {
                    role: Role::Opponent,
                    stalled: true,
                    ..
                })
            ),
            "{stalled:?}"
        );
        assert!(
            stalled
                .and_then(|c| c.failure.as_ref())
                .is_some_and(Failure::is_fault)
        );
        // The root stalling leaves nothing to wait for either.
        let c = Scripted {
            stall: vec!["".into()],
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert!(d.cancelled);
        assert!(matches!(
            d.root_failure,
            Some(Failure::Child { stalled: true, .. })
        ));
    }

    #[tokio::test]
    async fn ties_break_by_candidate_order() {
        let g = game(START);
        let cands = moves(&g, &["g1f3", "e2e4", "b1c3"]);
        let mut c = Scripted::default();
        for (m, r) in [("g1f3", "g8f6"), ("e2e4", "e7e5"), ("b1c3", "b8c6")] {
            c.replies.insert(m.into(), r);
            c.scores.insert(format!("{m} {r}"), 25);
        }
        c.root = Some(("e2e4", 0));
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(key(&[d.best]), "b1c3");
    }
}
