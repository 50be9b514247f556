//! A decision in rounds: the evaluator's own root search as the anchor,
//! sequential halving over the root moves as the challenge.
//!
//! The evaluator's warm search of the root is the strongest single thing a
//! decision has, so it runs apart, with its own share of the budget (on its
//! own worker when there are two or more), and its move `a` is what mpcmc
//! plays unless the lookahead proves a better one. Round 1 gives every
//! candidate its exact one-step lookahead (ν, then E) at a small budget —
//! nothing at the first step is pruned. Each later round re-runs ν and E for
//! the better half of the previous round's candidates at twice the budget
//! (the predicted reply may change), with `a` among them as soon as the root
//! search names it. Every round costs about as much as the first, and most of
//! the compute goes to the contenders (Karnin, Koren and Somekh 2013; the root
//! allocation of Gumbel MuZero). Warm children make a re-search a deepening,
//! not a restart: the pool sends a position back to the child that searched
//! it.
//!
//! The move: the last complete round's best `b` is played instead of `a` only
//! when, in that round — the same budget, the same kind of search — `V(b)`
//! beats `V(a)` by a margin that reflects how noisy searches of that size are
//! ([`Noise`], measured as the decision goes, from how a pair's difference
//! moves from one round to the next); otherwise `a`. Under a clock the rounds
//! go on while time is left: less of it when the choice is settled, more when
//! the lookahead's best and the anchor are close.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Instant,
};

use mpcmc_protocol::GameMove;
use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildFault, ChildLimit, Children, Game, Query, Report, Role, Value,
    candidate::{Candidate, Failure, best_of},
    decision::{CheckVerdict, Decision, DeepCheck, Rule, Settings, Spread, Stats},
    fortify::{Verdict, fortify},
    lookahead::{pass, sort_candidates},
    noise::{Noise, margin},
    time::rounds::{ROOT_TO_TARGET, RootState, RootTime, RoundClock, Standing},
};

/// How wide the positions a deeper step expands are, estimated: the legal
/// moves at the root (more than the `candidates` under `go searchmoves`).
pub fn branching(game: &Game, candidates: usize) -> usize {
    game.legal_moves().len().max(candidates)
}

/// The rounds a decision over `moves` candidates takes to halve down to
/// two: 1 for a single move, 6 for 35.
pub fn rounds_for(moves: usize) -> u32 {
    round_sizes(moves, u32::MAX).len() as u32
}

/// How many candidates each round searches, halving down to two (a single
/// move gets one round).
fn round_sizes(moves: usize, max_rounds: u32) -> Vec<usize> {
    let mut sizes = vec![moves.max(1)];
    while sizes.len() < max_rounds as usize {
        let last = sizes[sizes.len() - 1];
        if last <= 2 {
            break;
        }
        sizes.push(next_size(last));
    }
    sizes
}

/// The survivors of a round of `n` candidates: the better half, at least two.
fn next_size(n: usize) -> usize {
    n.div_ceil(2).max(2).min(n)
}

/// Round 1's per-call nodes when `total` lookahead nodes are spent in
/// `rounds` rounds of sequential halving over `moves` root moves: round `r`
/// re-searches its candidates, and from round 2 the anchor with them (it
/// usually is one of them when it is not), at `2^(r-1)` times round 1's
/// budget. A multistep lookahead's deeper steps count too, with
/// `branching` legal moves at every position they expand. On `lanes`
/// virtual workers ([`RoundPlan::lanes`]) `total` is each lane's, and a
/// round costs its waves: the candidates a lane searches one after the
/// other (all of a candidate's calls on one lane, as the pool places
/// them).
pub fn first_round_nodes(
    total: u64,
    settings: Settings,
    moves: usize,
    branching: usize,
    rounds: u32,
    lanes: Option<usize>,
) -> u64 {
    let units: u64 = round_sizes(moves, rounds)
        .iter()
        .enumerate()
        .map(|(r, &alive)| {
            let searched = if r == 0 { alive } else { alive + 1 };
            let calls = settings
                .lookahead
                .calls(searched, branching, settings.prune_width);
            let calls = match lanes {
                Some(lanes) => {
                    let waves = searched.div_ceil(lanes.max(1)) as u64;
                    waves * calls.div_ceil(searched as u64)
                }
                None => calls,
            };
            calls * (1u64 << r.min(40))
        })
        .sum();
    (total / units.max(1)).max(1)
}

/// The nodes the busiest of `lanes` virtual workers searched in a round
/// whose candidates each cost `costs` (all of a candidate's calls on one
/// lane): dealt longest first, each to the least loaded lane. A real pool
/// deals them as workers come free, in arrival order; a round's calls
/// share one budget, so the two come out alike.
pub fn busiest_lane(costs: impl IntoIterator<Item = u64>, lanes: usize) -> u64 {
    let mut costs: Vec<u64> = costs.into_iter().collect();
    costs.sort_unstable_by(|a, b| b.cmp(a));
    let mut load = vec![0u64; lanes.max(1)];
    for cost in costs {
        if let Some(least) = load.iter_mut().min() {
            *least += cost;
        }
    }
    load.into_iter().max().unwrap_or(0)
}

/// How a decision in rounds spends its budget.
#[derive(Debug, Clone)]
pub struct RoundPlan {
    /// The evaluator's root search (the anchor).
    pub root: ChildLimit,
    /// A second root search after the first (warm: a deepening): it keeps a
    /// worker on the root for the whole decision while the first names the
    /// anchor early.
    pub root_then: Option<ChildLimit>,
    /// The last root search is stopped when the rounds end (it is meant to
    /// run as long as they do); otherwise it runs to its limit.
    pub root_open: bool,
    /// Round 1's per-call limit, doubled each round.
    pub first: ChildLimit,
    /// With a node total: the lookahead's share of it. Each later round's
    /// per-call budget is then what is left spread over the rounds left, so
    /// that small searches that overshoot their limit (a child always ends
    /// its first iteration) do not overspend the total.
    pub lookahead_nodes: Option<u64>,
    /// Virtual workers the lookahead runs on (`VirtualWorkers` less the
    /// root search's): `lookahead_nodes` is then each one's budget, and a
    /// round costs what its busiest one searched ([`busiest_lane`]), as if
    /// every lane were a machine of its own whose time is counted in
    /// nodes. `None`: the budget is the sum of every call's nodes.
    pub lanes: Option<usize>,
    pub max_rounds: u32,
    /// The evaluator's move here as an earlier decision found it (its leaf
    /// search of this very position, when the game went as predicted): the
    /// anchor until the root search names one.
    pub anchor_hint: Option<GameMove>,
    /// Under a clock, when to stop starting rounds; read after every round,
    /// so a clock that starts later (`ponderhit`) counts from then.
    pub clock: ClockCell,
    /// Where the root search leaves each report with a score as it comes.
    pub root_seen: RootCell,
}

/// A value that one side sets while the rounds run and another reads.
#[derive(Debug)]
pub struct Shared<T>(Arc<Mutex<Option<T>>>);

// Derived, these would ask `T: Clone`/`T: Default` of the cell itself.
impl<T> Clone for Shared<T> {
    fn clone(&self) -> Shared<T> {
        Shared(self.0.clone())
    }
}

impl<T> Default for Shared<T> {
    fn default() -> Shared<T> {
        Shared(Arc::default())
    }
}

impl<T: Clone> Shared<T> {
    pub fn new(value: Option<T>) -> Shared<T> {
        Shared(Arc::new(Mutex::new(value)))
    }

    pub fn set(&self, value: T) {
        if let Ok(mut c) = self.0.lock() {
            *c = Some(value);
        }
    }

    pub fn get(&self) -> Option<T> {
        self.0.lock().ok().and_then(|c| c.clone())
    }
}

/// A [`RoundClock`] that may be set while the rounds run (`ponderhit`).
pub type ClockCell = Shared<RoundClock>;

/// The root search's latest report with a score, as soon as it has one:
/// the caller's move when it gives up on rounds that do not end (a child
/// that answers no `stop`) before any of them completed.
pub type RootCell = Shared<Report>;

/// The value of `m` among `candidates`, when it has one.
fn value_of(candidates: &[Candidate], m: GameMove) -> Option<Value> {
    candidates.iter().find(|c| c.mv == m).and_then(|c| c.value)
}

/// A round's outcome, as [`decide_in_rounds`] reports it.
pub struct Round<'a> {
    /// 1-based.
    pub number: u32,
    pub limit: ChildLimit,
    /// The round's decision (over the round's candidates only).
    pub decision: &'a Decision,
    /// All its calls finished; a round cut short (by the clock, `stop`, the
    /// root search's answer) is the last, and only its finished candidates
    /// have values.
    pub complete: bool,
}

fn judge(
    candidates: &[Candidate],
    anchor: Option<GameMove>,
    margin: i32,
    changed: bool,
) -> Standing {
    let (Some(a), Some((b, vb))) = (anchor, best_of(candidates)) else {
        return Standing::Open;
    };
    let runner_up = candidates
        .iter()
        .filter(|c| c.mv != b)
        .filter_map(|c| c.value)
        .max();
    let lead = if a == b {
        runner_up
    } else {
        value_of(candidates, a)
    };
    match lead {
        Some(other) if fortify(vb, other, margin) == Verdict::Lookahead && !changed => {
            Standing::Settled
        }
        Some(_) if a != b => Standing::Close,
        _ => Standing::Open,
    }
}

/// Whether the best of `candidates` is not `anchor` and beats it by
/// `margin` (a deviation, which the deep check must confirm).
fn deviates(candidates: &[Candidate], anchor: Option<GameMove>, margin: i32) -> bool {
    match (anchor, best_of(candidates)) {
        (Some(a), Some((b, vb))) if a != b => {
            value_of(candidates, a).is_some_and(|va| fortify(vb, va, margin) == Verdict::Lookahead)
        }
        _ => false,
    }
}

/// Runs the root search and rounds until `max_rounds` are done, two
/// candidates are left, the clock says so, or `cancel` fires; round 1's
/// per-call limit is `plan.first`, doubled each round. The decision is made
/// on the last complete round (a round cut short stands in only when none
/// completed) against the root search's move, as the module says; its
/// `candidates` hold every root move with its latest estimate, its `stats`
/// every call. `on_candidate` sees every candidate as it finishes, in
/// every round; `on_round` every round, the one cut short too. `None` only for an empty candidate list.
#[allow(clippy::too_many_arguments)]
pub async fn decide_in_rounds<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    candidates: &[GameMove],
    plan: RoundPlan,
    settings: Settings,
    noise: &Mutex<Noise>,
    cancel: &CancellationToken,
    on_candidate: &mut (dyn FnMut(&Candidate, usize) + Send),
    on_round: &mut (dyn FnMut(&Round<'_>) + Send),
) -> Option<Decision> {
    let mut alive = candidates.to_vec();
    sort_candidates(&mut alive);
    let branching = branching(game, candidates.len());
    let root_seen = plan.root_seen.clone();
    let root_cancel = cancel.child_token();
    // Cancelled when the root searches are over.
    let root_done = CancellationToken::new();
    let root_task = (game.terminal_now().is_none() && settings.fortify).then(|| {
        let searches = root_searches(
            children.clone(),
            game.clone(),
            [Some(plan.root), plan.root_then],
            root_cancel.clone(),
            root_seen.clone(),
        );
        // Cancels `root_done` however the searches end (a panic included).
        let end = root_done.clone().drop_guard();
        tokio::spawn(async move {
            let result = searches.await;
            drop(end);
            result
        })
    });
    let root_state = || match (&root_task, root_done.is_cancelled()) {
        (None, _) => RootState::Absent,
        (Some(_), false) => RootState::Running,
        (Some(_), true) => RootState::Ended,
    };
    let until_root =
        root_task.is_some() && plan.clock.get().is_some_and(|c| c.root == RootTime::Until);
    let mut standing = Standing::Open;
    let anchor_now = || {
        root_seen
            .get()
            .and_then(|r| r.best)
            .or(plan.anchor_hint)
            .filter(|m| candidates.contains(m))
    };

    // The latest estimate of every root move, and the nodes spent on it.
    let mut latest: HashMap<GameMove, Candidate> = HashMap::new();
    let mut spent: HashMap<GameMove, u64> = HashMap::new();
    // What the lookahead used of its node total: every call's nodes, or
    // on virtual lanes the busiest lane's of each round.
    let mut used = 0u64;
    let mut kept: Option<Decision> = None;
    let mut kept_limit = plan.first;
    let mut stats = Stats::default();
    let mut factor = 1u32;
    let mut rounds = 0;
    let mut last_best: Option<GameMove> = None;
    for number in 1..=plan.max_rounds.max(1) {
        if number > 1
            && let Some(a) = anchor_now()
            && !alive.contains(&a)
        {
            alive.push(a);
            sort_candidates(&mut alive);
        }
        let limit = match plan.lookahead_nodes {
            Some(total) if number > 1 => {
                let left = total.saturating_sub(used);
                if left == 0 {
                    break;
                }
                let rounds_left = plan.max_rounds - number + 1;
                let (moves, lanes) = (alive.len(), plan.lanes);
                let nodes = first_round_nodes(left, settings, moves, branching, rounds_left, lanes);
                ChildLimit::Nodes(nodes)
            }
            _ => plan.first.scaled(factor),
        };
        let started = Instant::now();
        // Ended by the root search's answer (see `RootTime::Until`).
        let round_cancel = cancel.child_token();
        let with_root = until_root && standing != Standing::Close;
        let decision = {
            let round = pass(
                children,
                game,
                &alive,
                limit,
                None,
                settings,
                &round_cancel,
                on_candidate,
            );
            tokio::pin!(round);
            tokio::select! {
                d = &mut round => d,
                _ = root_done.cancelled(), if with_root => {
                    round_cancel.cancel();
                    round.await
                }
            }
        }?;
        stats.merge(&decision.stats);
        let cost = |c: &Candidate| c.calls.iter().map(|r| r.nodes).sum::<u64>();
        used += match plan.lanes {
            Some(lanes) => busiest_lane(decision.candidates.iter().map(cost), lanes),
            None => decision.stats.nodes,
        };
        for c in &decision.candidates {
            *spent.entry(c.mv).or_default() += cost(c);
            // A cut round's unfinished candidates keep their earlier value.
            if c.value.is_some() || !latest.contains_key(&c.mv) {
                latest.insert(c.mv, c.clone());
            }
        }
        let complete = !decision.cancelled;
        on_round(&Round {
            number,
            limit,
            decision: &decision,
            complete,
        });
        if !complete {
            if kept.is_none() {
                kept = Some(decision);
                kept_limit = limit;
            }
            break;
        }
        rounds = number;
        if let (Some(earlier), Ok(mut noise)) = (&kept, noise.lock()) {
            noise.learn(&earlier.candidates, &decision.candidates, limit);
        }
        let best = best_of(&decision.candidates).map(|(m, _)| m);
        let changed = best != last_best;
        last_best = best;
        let next = survivors(&decision.candidates);
        standing = judge(
            &decision.candidates,
            anchor_now(),
            margin(noise, limit, settings),
            changed,
        );
        let exact = decision.exact();
        kept = Some(decision);
        kept_limit = limit;
        if alive.len() <= 1 || number == plan.max_rounds || exact {
            break;
        }
        if let Some(clock) = plan.clock.get() {
            let root = root_state();
            let target = clock.target(standing, root);
            // The next round costs as much again, twice as much once it
            // no longer halves (a multistep lookahead's deeper steps do
            // not halve).
            let calls = |n: usize| {
                let l = settings.lookahead;
                l.calls(n, branching, settings.prune_width) as f64
            };
            let growth = 2.0 * calls(next.len()) / calls(alive.len());
            let cost = started.elapsed().mul_f64(growth);
            let elapsed = clock.start.elapsed();
            if elapsed >= target || elapsed + cost > clock.hard {
                break;
            }
        }
        alive = next;
        factor = factor.saturating_mul(2);
    }

    // Under a move time the open root search deepens the anchor until the
    // target, unless a deviation needs the time for its deep check.
    if plan.root_open
        && root_state() == RootState::Running
        && let Some(clock) = plan.clock.get()
        && clock.root == RootTime::ToTarget
        && !kept.as_ref().is_some_and(|d| {
            deviates(
                &d.candidates,
                anchor_now(),
                margin(noise, kept_limit, settings),
            )
        })
    {
        let until = clock.start + clock.soft.mul_f64(ROOT_TO_TARGET);
        tokio::select! {
            _ = tokio::time::sleep_until(until.into()) => {}
            _ = root_done.cancelled() => {}
            _ = cancel.cancelled() => {}
        }
    }
    // The root search: an open one is stopped now; else it runs to its
    // limit (or to `cancel`).
    if plan.root_open {
        root_cancel.cancel();
    }
    let (reports, root_failure) = match root_task {
        Some(task) => task.await.unwrap_or_default(),
        None => (Vec::new(), None),
    };
    reports.iter().for_each(|r| stats.add(r));
    let root = reports.into_iter().rev().find(|r| r.score.is_some());

    let mut decision = kept?;
    decision.root = root;
    decision.root_failure = root_failure;
    decision.evaluator_choice = decision
        .root
        .as_ref()
        .and_then(|r| Some((r.best?, r.score?)))
        .filter(|(m, _)| candidates.contains(m));
    let margin = margin(noise, kept_limit, settings);
    let plies = settings.lookahead.plies();
    // Chosen on the last round's values (one budget), before the latest
    // estimates of every move replace its candidates.
    let anchor = decision
        .evaluator_choice
        .map(|(m, _)| m)
        .filter(|_| settings.fortify);
    let mut check = None;
    let choice = match (anchor, decision.lookahead_choice) {
        (Some(a), Some((b, _))) if a == b => Some((a, Rule::Lookahead)),
        (Some(a), Some((b, vb))) => match (value_of(&decision.candidates, a), &decision.root) {
            (Some(va), Some(root)) if fortify(vb, va, margin) == Verdict::Lookahead => {
                // Under a node total the check spends what the rounds left
                // (on virtual lanes, what the busiest left: the check is
                // one search, on one lane).
                let left = plan.lookahead_nodes.map(|total| total.saturating_sub(used));
                let c = check_deviation(children.as_ref(), game, (b, vb), root, left, cancel).await;
                if let Some(r) = &c.report {
                    stats.add(r);
                }
                let verdict = c.verdict;
                check = Some(c.summary());
                Some(match verdict {
                    CheckVerdict::Passed => (b, Rule::Lookahead),
                    CheckVerdict::Refuted => (a, Rule::Refuted),
                    CheckVerdict::Unchecked => (a, Rule::Unchecked),
                })
            }
            _ => Some((a, Rule::Fortified)),
        },
        (Some(a), None) => Some((a, Rule::EvaluatorFallback)),
        (None, _) => None,
    };
    let top3: u64 = {
        let mut per_move: Vec<u64> = spent.values().copied().collect();
        per_move.sort_unstable_by(|a, b| b.cmp(a));
        per_move.iter().take(3).sum()
    };
    let mut all: Vec<Candidate> = latest.into_values().collect();
    all.sort_by_cached_key(|c| c.mv.to_string());
    decision.candidates = all;
    if let Some((mv, rule)) = choice {
        decision.play(mv, rule, plies);
    }
    let depth = decision.stats.depth;
    decision.stats = Stats { depth, ..stats };
    decision.spread = Some(Spread {
        rounds,
        margin,
        top3_nodes: top3,
        lookahead_nodes: spent.values().sum(),
        check,
    });
    Some(decision)
}

/// How far below the root search's value of its own move the deep check
/// may find a deviation and still let it be played, in centipawns: the
/// most a deviation may cost by the evaluator's own deeper judgement.
pub const CHECK_TOLERANCE: i32 = 20;

/// The outcome of [`check_deviation`].
struct Check {
    /// The evaluator's search of the position after the deviation; `None`
    /// when that position is finished (scored exactly) or no search ran.
    report: Option<Report>,
    /// The deviation's value for us by that search (or exactly).
    value: Option<Value>,
    verdict: CheckVerdict,
}

impl Check {
    fn unchecked(report: Option<Report>) -> Check {
        Check {
            report,
            value: None,
            verdict: CheckVerdict::Unchecked,
        }
    }

    fn judged(report: Option<Report>, value: Value, root: Value) -> Check {
        let verdict = if value >= root.plus_cp(-CHECK_TOLERANCE) {
            CheckVerdict::Passed
        } else {
            CheckVerdict::Refuted
        };
        Check {
            report,
            value: Some(value),
            verdict,
        }
    }

    fn summary(&self) -> DeepCheck {
        DeepCheck {
            value: self.value,
            depth: self.report.as_ref().map_or(0, |r| r.depth),
            nodes: self.report.as_ref().map_or(0, |r| r.nodes),
            verdict: self.verdict,
        }
    }
}

/// The deep check of a deviation `b` from the root search's move: the
/// lookahead's calls are far smaller than the root search under a real
/// clock or a node total (thousands of nodes against hundreds of
/// thousands), and a small opponent search that misses the refutation makes
/// a move look better than it is. So before `b` is played, the evaluator
/// searches the position after `b` with half the nodes its root search
/// used — on `b` alone, more than the root search gave it — and `b` stands
/// only if that value is within [`CHECK_TOLERANCE`] of the root search's
/// value of its own move. Under a node total it gets no more than the
/// `left` of it. A check that cannot finish (`cancel`: `stop` or the
/// move's hard limit), that `left` cannot pay for ([`MIN_CHECK_NODES`]),
/// or whose child fails leaves the root search's move. `vb` is the lookahead's value of `b`: exact when `b` ends the game,
/// and then the check's.
async fn check_deviation<C: Children>(
    children: &C,
    game: &Arc<Game>,
    (b, vb): (GameMove, Value),
    root: &Report,
    left: Option<u64>,
    cancel: &CancellationToken,
) -> Check {
    let Some(root_value) = root.score else {
        return Check::unchecked(None);
    };
    if game.terminal_after(&[b]).is_some() {
        return Check::judged(None, vb, root_value);
    }
    let nodes = (root.nodes / 2)
        .max(MIN_CHECK_NODES)
        .min(left.unwrap_or(u64::MAX));
    if cancel.is_cancelled() || nodes < MIN_CHECK_NODES {
        return Check::unchecked(None);
    }
    let query = Query {
        role: Role::Evaluator,
        game: game.clone(),
        line: vec![b],
        limit: ChildLimit::Nodes(nodes),
        progress: None,
        ponderhit: None,
    };
    match children.search(query, cancel.child_token()).await {
        Ok(report) if report.stopped => Check::unchecked(Some(report)),
        Ok(report) => match report.score {
            Some(score) => Check::judged(Some(report), (-score).from_child(1), root_value),
            None => Check::unchecked(Some(report)),
        },
        Err(e) => {
            if !e.is_cancelled() {
                tracing::warn!("deep check of a deviation failed: {e}");
            }
            Check::unchecked(None)
        }
    }
}

/// The smallest deep check, in nodes.
const MIN_CHECK_NODES: u64 = 256;

/// The evaluator's searches of the root, one after the other: each report
/// with a score names the anchor at once (`seen`).
async fn root_searches<C: Children>(
    children: Arc<C>,
    game: Arc<Game>,
    limits: [Option<ChildLimit>; 2],
    cancel: CancellationToken,
    seen: RootCell,
) -> (Vec<Report>, Option<Failure>) {
    let mut reports = Vec::new();
    for limit in limits.into_iter().flatten() {
        if cancel.is_cancelled() {
            break;
        }
        let query = Query::root(game.clone(), limit);
        match children.search(query, cancel.clone()).await {
            Ok(report) => {
                let stopped = report.stopped;
                if report.score.is_some() {
                    seen.set(report.clone());
                }
                reports.push(report);
                if stopped {
                    break;
                }
            }
            Err(e) => {
                tracing::warn!("evaluator at the root failed: {e}");
                return (reports, Some(Failure::of(Role::Evaluator, &e)));
            }
        }
    }
    (reports, None)
}

/// The better half (rounded up, at least two) of a round's candidates by
/// value, in candidate order; candidates without a value go last.
fn survivors(candidates: &[Candidate]) -> Vec<GameMove> {
    let keep = next_size(candidates.len());
    let mut ranked: Vec<&Candidate> = candidates.iter().collect();
    // Stable: equal values keep root order.
    ranked.sort_by_key(|c| std::cmp::Reverse(c.value));
    let chosen: Vec<GameMove> = ranked.iter().take(keep).map(|c| c.mv).collect();
    candidates
        .iter()
        .map(|c| c.mv)
        .filter(|m| chosen.contains(m))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::{sync::Mutex, time::Duration};

    use crate::mpc::Lookahead;

    use shakmaty::{CastlingMode, Position};

    use super::*;
    use crate::mpc::{ChildFault, Query, Report, Role, Value};

    /// Scores each root move by a table (from the side to move after the
    /// reply: us), replies with the first legal move, and logs every call.
    #[derive(Default)]
    struct Valued {
        scores: HashMap<String, i32>,
        /// The deep check's values for us (the evaluator after one root
        /// move); 0, the root search's value, unless given.
        deep: HashMap<String, i32>,
        /// Role, line length, the line's first move, limit.
        asked: Mutex<Vec<Asked>>,
    }

    #[derive(Debug)]
    struct Never;
    impl std::fmt::Display for Never {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("never")
        }
    }
    impl ChildFault for Never {
        fn is_stall(&self) -> bool {
            false
        }
        fn is_cancelled(&self) -> bool {
            false
        }
    }

    impl Children for Valued {
        type Error = Never;
        async fn search(&self, q: Query, _: CancellationToken) -> Result<Report, Never> {
            if let Ok(mut asked) = self.asked.lock() {
                let first = q.line.first().map(|m| m.to_string());
                asked.push((q.role, q.line.len(), first, q.limit));
            }
            let pos = q.position().expect("a board game");
            let mut moves: Vec<GameMove> =
                pos.legal_moves().into_iter().map(GameMove::Board).collect();
            sort_candidates(&mut moves);
            let key = q.line.first().map(|m| m.to_string());
            let score = match (q.role, q.line.len(), key) {
                // From the opponent's side: the deep check.
                (Role::Evaluator, 1, Some(k)) => -self.deep.get(&k).copied().unwrap_or(0),
                (Role::Evaluator, _, Some(k)) => self.scores.get(&k).copied().unwrap_or(0),
                _ => 0,
            };
            Ok(Report {
                best: Some(moves[0]),
                extra: Default::default(),
                score: Some(Value::cp(score)),
                pv: vec![moves[0]],
                depth: 3,
                // As asked.
                nodes: match q.limit {
                    ChildLimit::Nodes(n) => n,
                    _ => 10,
                },
                search_time: Duration::from_millis(1),
                busy_time: Duration::from_millis(1),
                stopped: false,
                slot: None,
                exact: false,
            })
        }
    }

    fn moves(game: &Game, names: &[&str]) -> Vec<GameMove> {
        names
            .iter()
            .map(|n| {
                game.read_after(&[], &n.parse().expect("uci"))
                    .expect("legal")
            })
            .collect()
    }

    /// Runs a decision in rounds over eight opening moves valued by
    /// `scores`; the root search (anchor) names a2a3, the first legal move.
    type Asked = (Role, usize, Option<String>, ChildLimit);

    type Run = (Decision, Vec<(u32, ChildLimit, usize)>, Vec<Asked>);

    async fn rounds_over(scores: [i32; 8]) -> Run {
        rounds_with(scores, true, None, &[]).await
    }

    async fn rounds_with(
        scores: [i32; 8],
        fortify: bool,
        hint: Option<&str>,
        deep: &[(&str, i32)],
    ) -> Run {
        let game = Arc::new(Game::default());
        let names = [
            "a2a3", "b2b3", "c2c3", "d2d4", "e2e4", "f2f3", "g1f3", "h2h3",
        ];
        let candidates = moves(&game, &names);
        let mut children = Valued::default();
        for (name, score) in names.iter().zip(scores) {
            children.scores.insert((*name).to_owned(), score);
        }
        for (name, value) in deep {
            children.deep.insert((*name).to_owned(), *value);
        }
        let children = Arc::new(children);
        let settings = Settings {
            lookahead: Lookahead::One,
            fortify,
            fortify_margin: 0,
            ..Settings::new(Lookahead::One)
        };
        let anchor_hint = hint.map(|h| moves(&game, &[h])[0]);
        let plan = RoundPlan {
            root: ChildLimit::Nodes(1000),
            root_then: None,
            root_open: false,
            first: ChildLimit::Nodes(100),
            lookahead_nodes: None,
            lanes: None,
            max_rounds: rounds_for(candidates.len()),
            anchor_hint,
            clock: ClockCell::default(),
            root_seen: RootCell::default(),
        };
        let mut seen = Vec::new();
        let d = decide_in_rounds(
            &children,
            &game,
            &candidates,
            plan,
            settings,
            &Mutex::new(Noise::default()),
            &CancellationToken::new(),
            &mut |_, _| {},
            &mut |r| seen.push((r.number, r.limit, r.decision.candidates.len())),
        )
        .await
        .expect("a decision");
        let asked = children.asked.lock().map(|a| a.clone()).unwrap_or_default();
        (d, seen, asked)
    }

    #[tokio::test]
    async fn every_move_in_round_one_then_the_better_half_at_twice_the_budget() {
        let (d, seen, asked) = rounds_over([5, 10, 15, 40, 50, 1, 30, 2]).await;
        // The better half goes on, and the anchor (a2a3, the worst but one
        // by lookahead) with it.
        assert_eq!(
            seen,
            vec![
                (1, ChildLimit::Nodes(100), 8),
                (2, ChildLimit::Nodes(200), 4 + 1),
                (3, ChildLimit::Nodes(400), 3 + 1),
            ]
        );
        assert_eq!(d.candidates.len(), 8, "every root move keeps its estimate");
        assert!(d.candidates.iter().all(|c| c.value.is_some()));
        let opponent_calls = asked.iter().filter(|(r, ..)| *r == Role::Opponent).count();
        assert_eq!(opponent_calls, 8 + 5 + 4);
        let roots: Vec<ChildLimit> = asked
            .iter()
            .filter(|(r, len, ..)| *r == Role::Evaluator && *len == 0)
            .map(|(.., l)| *l)
            .collect();
        assert_eq!(
            roots,
            vec![ChildLimit::Nodes(1000)],
            "one root search, apart"
        );
        assert_eq!(d.stats.calls, asked.len() as u64);
        assert_eq!(d.spread.map(|s| s.rounds), Some(3));
        // e2e4 leads the anchor by 45 cp in the last round: less than the
        // margin (about twice the prior 30 cp spread), so the anchor stays.
        assert_eq!(d.best.to_string(), "a2a3");
        assert_eq!(d.rule, Rule::Fortified);
        // Shown with the root search's line and value: what kept it.
        assert_eq!((d.value, d.stats.depth), (Some(Value::cp(0)), 3));
        assert_eq!(d.pv, [d.best]);
        assert!(d.ponder.is_some(), "the nominal opponent's reply");
        assert_eq!(
            d.lookahead_choice.map(|(m, v)| (m.to_string(), v)),
            Some(("e2e4".to_owned(), Value::cp(50)))
        );
    }

    #[tokio::test]
    async fn the_lookahead_deviates_from_the_anchor_by_more_than_the_margin() {
        let (d, _, asked) = rounds_over([5, 10, 15, 40, 100, 1, 30, 2]).await;
        assert_eq!(d.best.to_string(), "e2e4");
        assert_eq!(d.rule, Rule::Lookahead);
        assert_eq!(d.value, Some(Value::cp(100)));
        let margin = d.spread.map(|s| s.margin).unwrap_or_default();
        assert!((40..95).contains(&margin), "margin {margin}");
        // Checked first: the evaluator after e2e4, with half the root
        // search's 1000 nodes, found it as good as the anchor.
        let checks: Vec<&Asked> = asked
            .iter()
            .filter(|(r, len, ..)| *r == Role::Evaluator && *len == 1)
            .collect();
        assert_eq!(
            checks,
            vec![&(
                Role::Evaluator,
                1,
                Some("e2e4".to_owned()),
                ChildLimit::Nodes(500)
            )]
        );
        let check = d.spread.and_then(|s| s.check);
        assert_eq!(
            check.map(|c| (c.value, c.nodes, c.verdict)),
            Some((Some(Value::cp(0)), 500, CheckVerdict::Passed))
        );
        assert_eq!(d.stats.calls, asked.len() as u64, "the check is counted");
    }

    #[tokio::test]
    async fn a_deviation_the_deep_check_refutes_is_not_played() {
        // The lookahead's e2e4 beats the anchor by 95 cp, but the deep check
        // finds it 21 cp below the root search's value of its own move.
        let refuted = [("e2e4", -CHECK_TOLERANCE - 1)];
        let (d, _, _) = rounds_with([5, 10, 15, 40, 100, 1, 30, 2], true, None, &refuted).await;
        assert_eq!(d.best.to_string(), "a2a3");
        assert_eq!(d.rule, Rule::Refuted);
        assert_eq!(d.value, Some(Value::cp(0)), "the root search's value");
        let check = d.spread.and_then(|s| s.check);
        assert_eq!(
            check.map(|c| (c.value, c.depth, c.verdict)),
            Some((
                Some(Value::cp(-CHECK_TOLERANCE - 1)),
                3,
                CheckVerdict::Refuted
            ))
        );
        // Within the tolerance it passes.
        let close = [("e2e4", -CHECK_TOLERANCE)];
        let (d, _, _) = rounds_with([5, 10, 15, 40, 100, 1, 30, 2], true, None, &close).await;
        assert_eq!(d.rule, Rule::Lookahead);
    }

    #[tokio::test]
    async fn a_deviation_that_cannot_be_checked_is_not_played() {
        // Cancelled (`stop`, the hard limit) before the check: no search,
        // the anchor.
        let game = Arc::new(Game::default());
        let children = Valued::default();
        let root = Report {
            best: Some(moves(&game, &["a2a3"])[0]),
            extra: Default::default(),
            score: Some(Value::cp(0)),
            pv: Vec::new(),
            depth: 10,
            nodes: 100_000,
            search_time: Duration::from_millis(1),
            busy_time: Duration::from_millis(1),
            stopped: false,
            slot: None,
            exact: false,
        };
        let e4 = moves(&game, &["e2e4"])[0];
        let cancel = CancellationToken::new();
        cancel.cancel();
        let e4 = (e4, Value::cp(100));
        let c = check_deviation(&children, &game, e4, &root, None, &cancel).await;
        assert_eq!(c.verdict, CheckVerdict::Unchecked);
        assert!(c.report.is_none());
        assert!(children.asked.lock().is_ok_and(|a| a.is_empty()));
        // A node total with too little left for a check.
        let running = CancellationToken::new();
        let c = check_deviation(&children, &game, e4, &root, Some(255), &running).await;
        assert_eq!(c.verdict, CheckVerdict::Unchecked);
        assert!(children.asked.lock().is_ok_and(|a| a.is_empty()));
        // Not cancelled: half the root's nodes, no more than a total's left.
        let c = check_deviation(&children, &game, e4, &root, None, &running).await;
        assert_eq!(c.verdict, CheckVerdict::Passed);
        assert_eq!(c.report.map(|r| r.nodes), Some(50_000));
        let c = check_deviation(&children, &game, e4, &root, Some(20_000), &running).await;
        assert_eq!(c.report.map(|r| r.nodes), Some(20_000));

        // A move that ends the game is judged on the lookahead's exact
        // value, without a search, even once cancelled.
        let mate = Arc::new(
            Game::from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", CastlingMode::Standard)
                .expect("test fen"),
        );
        let ra8 = moves(&mate, &["a1a8"])[0];
        let asked = children.asked.lock().map(|a| a.len()).unwrap_or_default();
        let exact = (-Value::MATED).from_child(1);
        let c = check_deviation(&children, &mate, (ra8, exact), &root, None, &cancel).await;
        assert_eq!((c.verdict, c.value), (CheckVerdict::Passed, Some(exact)));
        assert!(c.report.is_none());
        assert!(children.asked.lock().is_ok_and(|a| a.len() == asked));
    }

    #[tokio::test]
    async fn an_earlier_decisions_anchor_joins_the_rounds_at_once() {
        // No root search (fortification off): the hint is the anchor, and
        // h2h3, the worst move but one by lookahead, is searched in every
        // round.
        let (d, seen, asked) =
            rounds_with([5, 10, 15, 40, 50, 1, 30, 2], false, Some("h2h3"), &[]).await;
        assert_eq!(seen.iter().map(|r| r.2).collect::<Vec<_>>(), vec![8, 5, 4]);
        let searched = asked.iter().filter(|(r, ..)| *r == Role::Opponent).count();
        assert_eq!(searched, 8 + 5 + 4);
        let h2h3 = asked
            .iter()
            .filter(|(r, _, first, _)| *r == Role::Opponent && first.as_deref() == Some("h2h3"))
            .count();
        assert_eq!(h2h3, 3, "the hinted anchor in every round");
        assert!(
            asked
                .iter()
                .all(|(r, len, ..)| *r == Role::Opponent || *len > 0),
            "no root search"
        );
        // Without fortification the lookahead's choice is played.
        assert_eq!(d.best.to_string(), "e2e4");
    }

    #[test]
    fn rounds_halve_to_two() {
        assert_eq!(rounds_for(1), 1);
        assert_eq!(rounds_for(2), 1);
        assert_eq!(rounds_for(3), 2);
        assert_eq!(rounds_for(35), 6);
        assert_eq!(round_sizes(35, 10), vec![35, 18, 9, 5, 3, 2]);
        assert_eq!(ChildLimit::Nodes(300).scaled(4), ChildLimit::Nodes(1200));
        assert_eq!(ChildLimit::Depth(3).scaled(4), ChildLimit::Depth(5));
    }

    #[test]
    fn a_node_total_is_spread_over_the_rounds() {
        // One round: every move once, one-step: 40 calls for 20 moves.
        assert_eq!(
            first_round_nodes(40_000, Settings::new(Lookahead::One), 20, 20, 1, None),
            1000
        );
        assert_eq!(
            first_round_nodes(5, Settings::new(Lookahead::One), 20, 20, 1, None),
            1
        );
        // 4 moves in 2 rounds: 8 calls, then (2 + the anchor) × 2 calls at
        // twice the first budget: 20 units.
        assert_eq!(
            first_round_nodes(20_000, Settings::new(Lookahead::One), 4, 4, 2, None),
            1000
        );
        // On lanes, each lane's budget: 20 moves on 5 lanes are 4 waves of
        // 2 calls (8 units); on 20 lanes or more, one wave.
        let one = Settings::new(Lookahead::One);
        assert_eq!(first_round_nodes(8_000, one, 20, 20, 1, Some(5)), 1000);
        assert_eq!(first_round_nodes(2_000, one, 20, 20, 1, Some(20)), 1000);
        assert_eq!(first_round_nodes(2_000, one, 20, 20, 1, Some(64)), 1000);
        // 4 moves in 2 rounds on 2 lanes: 2 waves × 2 calls, then 3
        // searched (2 waves) × 2 calls × 2: 12 units.
        assert_eq!(first_round_nodes(12_000, one, 4, 4, 2, Some(2)), 1000);
    }

    #[test]
    fn the_busiest_lane_is_the_rounds_clock() {
        assert_eq!(busiest_lane([5, 5, 5, 5], 2), 10);
        assert_eq!(busiest_lane([5, 5, 5, 5], 8), 5);
        // Longest first: 7 | 5+2 | 4+3 on three lanes.
        assert_eq!(busiest_lane([3, 7, 2, 5, 4], 3), 7);
        // Greedy, not the best packing (6+6 | 4+4+4 would be 12).
        assert_eq!(busiest_lane([6, 6, 4, 4, 4], 2), 14);
        assert_eq!(busiest_lane([], 3), 0);
        assert_eq!(busiest_lane([9, 1], 1), 10);
    }
}
