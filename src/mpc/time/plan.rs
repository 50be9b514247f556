//! A decision on a clock ([`plan_timed`]): how the move's target time is
//! spent — rounds of lookahead sized from the children's measured speed, one
//! even pass with a worker for every root move, or the evaluator alone —
//! and a level's per-call budget within it ([`level_call_nodes`]).

use std::time::{Duration, Instant};

use crate::mpc::{
    ChildLimit,
    budget::{ROOT_SHARE, calls_a_move},
    decision::{Lookahead, Settings},
    level::LOOK_NODES,
    limit::MIN_CALL_NODES,
    rounds::{ClockCell, RootCell, RoundPlan},
    time::rounds::{RootTime, RoundClock},
};

/// Below this a child call costs more in round trip and hash clearing than it
/// searches.
pub const MIN_CALL: Duration = Duration::from_millis(4);

/// Share of the move time handed to children; the rest absorbs scheduling and
/// the tail of the last calls.
const SAFETY: f64 = 0.8;

/// A timed decision's first round is sized so that about this many rounds
/// fit in the move's target time.
const ROUNDS_PER_MOVE: u32 = 4;

/// The most rounds of a timed decision (the clock ends them much sooner).
const MAX_TIMED_ROUNDS: u32 = 24;

/// The children's speed assumed before any search was measured.
pub const INITIAL_SPEED: u64 = 500_000;

/// The rounds' clock for a move whose time runs from `start`: aim at
/// `soft`; a round is not started unless it ends well before `hard`, the
/// caller's deadline.
pub fn round_clock(start: Instant, soft: Duration, hard: Duration) -> RoundClock {
    RoundClock {
        start,
        soft,
        hard: hard.mul_f64(SAFETY),
        root: RootTime::Apart,
    }
}

/// The way a timed decision will be made.
#[derive(Debug, Clone)]
pub enum TimedPlan {
    /// Rounds of lookahead of this depth.
    Rounds(Lookahead, Box<RoundPlan>),
    /// One even pass of one-step lookahead, a worker for every root move:
    /// each call under `calls`, half the root search's `root` (the paper's
    /// setting; see [`plan_timed`]).
    EvenPass { calls: ChildLimit, root: ChildLimit },
    /// The evaluator's own move, searching under this limit (the game's
    /// clock when it is a plain one).
    EvaluatorOnly(ChildLimit, EvaluatorOnly),
    /// Not even one child call fits in the move's time (under
    /// [`MIN_CALL`]): the built-in engine answers in this process.
    NoTime,
}

impl TimedPlan {
    /// The evaluator alone under `limit`, for `why`; [`TimedPlan::NoTime`]
    /// when that is a move time too short for one call.
    fn evaluator_only(limit: ChildLimit, why: EvaluatorOnly) -> TimedPlan {
        match limit {
            ChildLimit::MoveTime(t) if t < MIN_CALL => TimedPlan::NoTime,
            limit => TimedPlan::EvaluatorOnly(limit, why),
        }
    }

    /// A root search runs and is sent the game's clock: it decides its own
    /// time, as the child playing alone, so the move is due at the cap
    /// (which the children's own time rules stay under; the rounds keep
    /// to the hard limit). With `fortify` off no root search runs beside
    /// the rounds.
    pub fn root_keeps_clock(&self, fortify: bool) -> bool {
        match self {
            TimedPlan::Rounds(_, plan) => fortify && matches!(plan.root, ChildLimit::Clock { .. }),
            TimedPlan::EvaluatorOnly(limit, _) => matches!(limit, ChildLimit::Clock { .. }),
            TimedPlan::EvenPass { .. } | TimedPlan::NoTime => false,
        }
    }
}

/// Why a timed decision is the evaluator's own move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvaluatorOnly {
    /// Too little time for a lookahead.
    ShortOfTime,
    /// One worker on the game's clock or a move time: every round would
    /// take its time from the root search.
    OneWorker,
}

/// What a timed decision has to work with.
#[derive(Debug, Clone, Copy)]
pub struct TimedBudget {
    /// When the move's time started.
    pub start: Instant,
    /// Aim at this much, never pass `hard`.
    pub soft: Duration,
    pub hard: Duration,
    /// Concurrent child searches.
    pub threads: usize,
    /// Lookahead calls of each role that can run at once beside the root
    /// search ([`PoolConfig::lookahead_lanes`](crate::children::PoolConfig::lookahead_lanes)).
    pub lanes: usize,
    /// Nodes a second of one child search.
    pub speed: u64,
    /// What a call costs beyond its search.
    pub call_cost: Duration,
    /// The game's clock for a child (`ChildLimit::Clock`, our time less the
    /// move overhead), `None` under `movetime`: the root search then keeps
    /// it and decides its own time, as the child playing alone would.
    pub clock: Option<ChildLimit>,
    /// Root moves to show valued (`MultiPV`): more than one keeps the
    /// rounds with one worker, since the root search alone values one.
    pub lines: u32,
}

/// Plans a decision on a clock. With two or more workers the root search
/// has one to itself for the whole decision (on the game's clock it keeps
/// the clock, under `movetime` a first search of half the target names the
/// anchor early, a second deepens it until the rounds end). With one
/// worker the root search alone keeps the clock, or the move time, and no
/// rounds run ([`EvaluatorOnly::OneWorker`]): over the built-in engine at
/// 10+0.1 that scored +7.0 ± 34.5 Elo against the child at equal cores,
/// rounds after a root search on [`ROOT_SHARE`] of the clock −57.9 ± 33.7
/// (200 games each; `Fortify` off, `go searchmoves` and `MultiPV` keep the
/// rounds);
/// under `movetime` (about 45 ms a move) +90.6 ± 39.6 against the root
/// search on 72 % of the time with rounds after it (200 games).
/// With one worker under `go searchmoves` the root search runs first, on
/// [`ROOT_SHARE`] of the part of the target handed to children. The rounds' first per-call node
/// budget is sized from the children's measured speed so that about
/// [`ROUNDS_PER_MOVE`] rounds fit; the clock then decides how many run.
/// Prefers `preferred`; falls back to half-step and then to the evaluator
/// alone when round 1's calls would get under [`MIN_CALL_NODES`].
/// `branching` as in [`node_rounds`].
pub fn plan_timed(
    budget: TimedBudget,
    moves: usize,
    branching: usize,
    settings: Settings,
) -> TimedPlan {
    let usable = budget.soft.mul_f64(SAFETY);
    let threads = budget.threads.max(1);
    // Under `go searchmoves` (fewer moves than the legal ones) the rounds
    // keep to the moves allowed; the root search alone would not.
    let alone = threads < 2 && settings.fortify && moves >= branching && budget.lines <= 1;
    if alone {
        // The game's clock, or the move time less a call's cost.
        let limit = budget.clock.unwrap_or(ChildLimit::MoveTime(
            budget.soft.saturating_sub(budget.call_cost),
        ));
        return TimedPlan::evaluator_only(limit, EvaluatorOnly::OneWorker);
    }
    // A worker for every root move besides the root search's: one even
    // pass, the root searching the usable time and each move's two calls
    // (the reply, then the position after it) half of it each on a worker
    // of its own — every call done by the time the root search is. On the
    // virtual clock that setting scored +129.0 ± 47.9 Elo against the
    // child alone (33 workers, 200 games), where rounds on the same
    // workers never changed the root search's move (`VirtualWorkers`).
    let one_wave = budget.lanes >= moves && moves >= 2 && settings.lookahead == Lookahead::One;
    let share = calls_a_move(settings, moves, branching) as u32;
    let call = (usable / share).saturating_sub(budget.call_cost);
    if one_wave && call >= MIN_CALL {
        return TimedPlan::EvenPass {
            calls: ChildLimit::MoveTime(call),
            root: ChildLimit::MoveTime(usable.saturating_sub(budget.call_cost)),
        };
    }
    let (root, root_then, lookahead_time) = if threads >= 2 {
        (
            usable / 2,
            Some(ChildLimit::MoveTime(budget.hard)),
            usable * (threads as u32 - 1),
        )
    } else {
        (
            usable.mul_f64(ROOT_SHARE),
            None,
            usable.mul_f64(1.0 - ROOT_SHARE),
        )
    };
    // On the game's clock with a worker of its own the root search keeps the
    // clock and decides its time; under a move time it deepens until the
    // target.
    let (keeps_clock, root_time) = match budget.clock {
        Some(clock) if threads >= 2 => (Some(clock), RootTime::Until),
        None if threads >= 2 => (None, RootTime::ToTarget),
        _ => (None, RootTime::Apart),
    };
    for lookahead in settings.lookahead.and_cheaper() {
        let moves = moves.max(1);
        let calls = lookahead.calls(moves, branching.max(moves), settings.prune_width) as u32;
        let per_call = lookahead_time / ROUNDS_PER_MOVE / calls;
        let nodes =
            (budget.speed as f64 * per_call.saturating_sub(budget.call_cost).as_secs_f64()) as u64;
        if nodes >= MIN_CALL_NODES && (root >= MIN_CALL || keeps_clock.is_some()) {
            let mut clock = round_clock(budget.start, budget.soft, budget.hard);
            clock.root = root_time;
            return TimedPlan::Rounds(
                lookahead,
                Box::new(RoundPlan {
                    root: keeps_clock.unwrap_or(ChildLimit::MoveTime(root)),
                    root_then: root_then.filter(|_| keeps_clock.is_none()),
                    root_open: root_then.is_some() && keeps_clock.is_none(),
                    first: ChildLimit::Nodes(nodes),
                    lookahead_nodes: None,
                    lanes: None,
                    max_rounds: MAX_TIMED_ROUNDS,
                    anchor_hint: None,
                    clock: ClockCell::new(Some(clock)),
                    root_seen: RootCell::default(),
                }),
            );
        }
    }
    TimedPlan::evaluator_only(
        budget.clock.unwrap_or(ChildLimit::MoveTime(
            usable.saturating_sub(budget.call_cost),
        )),
        EvaluatorOnly::ShortOfTime,
    )
}

/// The per-call node budget of a one-pass decision at a level over
/// `moves` root moves (one-step: two calls a move, and the root search),
/// with a second look at `looked` one-step lines
/// ([`Level::look_lines`](crate::mpc::level::Level::look_lines): two
/// calls each of [`LOOK_NODES`] times the nodes, one after the other once
/// the pass is done; one look counted, the most likely: a refuted look's
/// next one is cut by the move's hard limit if it does not fit): the
/// level's `nodes`, less when the GUI's limits leave less: a node total
/// (`go nodes`) split over the calls, or what fits the move's target time
/// at the children's speed, the pass's calls over the workers, each call
/// paying its cost. Never under [`MIN_CALL_NODES`].
pub fn level_call_nodes(
    nodes: u64,
    moves: usize,
    looked: u64,
    total: Option<u64>,
    time: Option<&TimedBudget>,
) -> u64 {
    let calls = 2 * moves as u64 + 1;
    // The look's calls, and what they cost in calls of the level's nodes.
    let (look_calls, look_nodes) = (2 * looked, 2 * looked * LOOK_NODES);
    let mut nodes = nodes;
    if let Some(total) = total {
        nodes = nodes.min(total / (calls + look_nodes));
    }
    if let Some(b) = time {
        // The pass in wall time: its calls in turns over the workers.
        let turns = calls as f64 / b.threads.max(1) as f64;
        let searching =
            b.soft.as_secs_f64() * SAFETY - b.call_cost.as_secs_f64() * (turns + look_calls as f64);
        let fits = b.speed as f64 * searching.max(0.0) / (turns + look_nodes as f64);
        nodes = nodes.min(fits as u64);
    }
    nodes.max(MIN_CALL_NODES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(soft_ms: u64, threads: usize, speed: u64, cost_ms: u64) -> TimedBudget {
        TimedBudget {
            start: Instant::now(),
            soft: Duration::from_millis(soft_ms),
            hard: Duration::from_millis(3 * soft_ms),
            threads,
            lanes: threads.saturating_sub(1),
            speed,
            call_cost: Duration::from_millis(cost_ms),
            clock: None,
            lines: 1,
        }
    }

    #[test]
    fn a_level_keeps_its_budget_unless_the_limits_leave_less() {
        // 20 moves: 41 calls.
        assert_eq!(level_call_nodes(1000, 20, 0, None, None), 1000);
        assert_eq!(level_call_nodes(1000, 20, 0, Some(4100), None), 100);
        assert_eq!(
            level_call_nodes(1000, 20, 0, Some(41), None),
            MIN_CALL_NODES
        );
        // 1 s at 1 M nodes a second on one worker: 800 ms over 41 calls,
        // about 19 500 nodes each; at 50 ms, 975 nodes.
        let roomy = budget(1000, 1, 1_000_000, 0);
        assert_eq!(level_call_nodes(1000, 20, 0, None, Some(&roomy)), 1000);
        let short = budget(50, 1, 1_000_000, 0);
        let fits = level_call_nodes(100_000, 20, 0, None, Some(&short));
        assert!((970..=980).contains(&fits), "{fits}");
        // Two workers, twice as many; a call's cost comes off each.
        let two = budget(50, 2, 1_000_000, 0);
        let fits2 = level_call_nodes(100_000, 20, 0, None, Some(&two));
        assert!((1945..=1955).contains(&fits2), "{fits2}");
        let costly = budget(50, 1, 1_000_000, 1);
        assert!(level_call_nodes(100_000, 20, 0, None, Some(&costly)) < fits - 900);
        // A second look: two calls of 16 times the nodes after the pass,
        // on one worker. 41 + 32 calls' worth in a node total; at 50 ms
        // on one worker 40 ms over 41 + 32, on two 40 ms over 20.5 + 32.
        assert_eq!(level_call_nodes(1000, 20, 1, Some(7300), None), 100);
        let looked = level_call_nodes(100_000, 20, 1, None, Some(&short));
        assert!((540..=555).contains(&looked), "{looked}");
        let looked2 = level_call_nodes(100_000, 20, 1, None, Some(&two));
        assert!((755..=770).contains(&looked2), "{looked2}");
        assert_eq!(level_call_nodes(1000, 20, 1, None, Some(&roomy)), 1000);
        // A look that compares with the best searches two lines: 41 + 64.
        assert_eq!(level_call_nodes(1000, 20, 2, Some(10_500), None), 100);
        assert_eq!(level_call_nodes(1000, 20, 2, Some(10_499), None), 99);
    }

    #[test]
    fn a_clock_is_split_into_a_root_search_and_rounds() {
        // 20 moves, one-step, 1 M nodes a second: 40 calls in round 1.
        let TimedPlan::Rounds(Lookahead::One, plan) = plan_timed(
            budget(1000, 2, 1_000_000, 0),
            20,
            20,
            Settings::new(Lookahead::One),
        ) else {
            panic!("rounds expected");
        };
        // Two workers: the root has one to itself, half the target first.
        assert_eq!(plan.root, ChildLimit::MoveTime(Duration::from_millis(400)));
        assert_eq!(
            plan.root_then,
            Some(ChildLimit::MoveTime(Duration::from_millis(3000)))
        );
        // 800 ms of lookahead / 4 rounds / 40 calls: 5 ms, 5000 nodes.
        assert_eq!(plan.first, ChildLimit::Nodes(5000));
        // A move time is a target to reach: the root search deepens until
        // it once the rounds end.
        assert_eq!(plan.clock.get().map(|c| c.root), Some(RootTime::ToTarget));
        // One worker on a move time: the evaluator alone, for the move
        // time less a call's cost.
        assert!(matches!(
            plan_timed(budget(1000, 1, 1_000_000, 5), 20, 20, Settings::new(Lookahead::One)),
            TimedPlan::EvaluatorOnly(ChildLimit::MoveTime(t), EvaluatorOnly::OneWorker)
                if t == Duration::from_millis(995)
        ));
        // One worker under `go searchmoves` (5 of 20 moves): the root
        // first, for ROOT_SHARE of the usable target.
        let TimedPlan::Rounds(_, plan) = plan_timed(
            budget(1000, 1, 1_000_000, 0),
            5,
            20,
            Settings::new(Lookahead::One),
        ) else {
            panic!("rounds expected");
        };
        assert_eq!(plan.root, ChildLimit::MoveTime(Duration::from_millis(720)));
        assert_eq!(plan.root_then, None);
        // 80 ms of lookahead / 4 rounds / 10 calls: 2 ms, 2000 nodes.
        assert_eq!(plan.first, ChildLimit::Nodes(2000));
        assert_eq!(plan.clock.get().map(|c| c.root), Some(RootTime::Apart));
        // On the game's clock the root search keeps it: all of it
        // alongside the rounds with a worker of its own; alone, without
        // rounds, with one worker, unless `Fortify` is off.
        let clock = ChildLimit::Clock {
            wtime: Duration::from_millis(10_000),
            btime: Duration::from_millis(8_000),
            winc: Duration::from_millis(100),
            binc: Duration::from_millis(100),
            movestogo: None,
        };
        let on_clock = |threads, fortify| {
            let b = TimedBudget {
                clock: Some(clock),
                ..budget(1000, threads, 1_000_000, 0)
            };
            let settings = Settings {
                fortify,
                ..Settings::new(Lookahead::One)
            };
            plan_timed(b, 20, 20, settings)
        };
        let TimedPlan::Rounds(_, two) = on_clock(2, true) else {
            panic!("rounds expected");
        };
        assert_eq!((two.root, two.root_then), (clock, None));
        assert_eq!(two.clock.get().map(|c| c.root), Some(RootTime::Until));
        assert!(matches!(
            on_clock(1, true),
            TimedPlan::EvaluatorOnly(c, EvaluatorOnly::OneWorker) if c == clock
        ));
        let TimedPlan::Rounds(_, unfortified) = on_clock(1, false) else {
            panic!("rounds expected");
        };
        assert_eq!(
            unfortified.clock.get().map(|c| c.root),
            Some(RootTime::Apart)
        );
        // Under `go searchmoves` the rounds keep to the moves allowed.
        let searchmoves = TimedBudget {
            clock: Some(clock),
            ..budget(1000, 1, 1_000_000, 0)
        };
        assert!(matches!(
            plan_timed(searchmoves, 5, 20, Settings::new(Lookahead::One)),
            TimedPlan::Rounds(..)
        ));
        // With `MultiPV` the rounds value every move.
        let multi_pv = TimedBudget {
            clock: Some(clock),
            lines: 3,
            ..budget(1000, 1, 1_000_000, 0)
        };
        assert!(matches!(
            plan_timed(multi_pv, 20, 20, Settings::new(Lookahead::One)),
            TimedPlan::Rounds(..)
        ));
        // Short of time for one-step, half-step fits; then nothing does.
        assert!(matches!(
            plan_timed(
                budget(10, 2, 1_000_000, 0),
                20,
                20,
                Settings::new(Lookahead::One)
            ),
            TimedPlan::Rounds(Lookahead::Half, _)
        ));
        assert!(matches!(
            plan_timed(budget(10, 2, 1_000_000, 1), 20, 20, Settings::new(Lookahead::One)),
            TimedPlan::EvaluatorOnly(ChildLimit::MoveTime(t), EvaluatorOnly::ShortOfTime)
                if t == Duration::from_millis(7)
        ));
        // Not even one call: 5 ms less 2 ms of call cost is under MIN_CALL,
        // with one worker and with two.
        for threads in [1, 2] {
            let plan = plan_timed(
                budget(5, threads, 1_000_000, 2),
                20,
                20,
                Settings::new(Lookahead::One),
            );
            assert!(matches!(plan, TimedPlan::NoTime), "{threads}: {plan:?}");
            assert!(!plan.root_keeps_clock(true));
        }
    }

    #[test]
    fn a_worker_for_every_root_move_is_one_even_pass() {
        let one = Settings::new(Lookahead::One);
        // 20 moves, 21 workers (one for the root search): each call half
        // the usable target (800 ms) less its cost, the root all of it.
        let plan = plan_timed(budget(1000, 21, 1_000_000, 2), 20, 20, one);
        let TimedPlan::EvenPass { calls, root } = plan else {
            panic!("an even pass expected: {plan:?}");
        };
        assert_eq!(calls, ChildLimit::MoveTime(Duration::from_millis(398)));
        assert_eq!(root, ChildLimit::MoveTime(Duration::from_millis(798)));
        assert!(!plan.root_keeps_clock(true));
        // A worker short, or another lookahead: rounds.
        for (threads, settings) in [(20, one), (21, Settings::new(Lookahead::Two))] {
            let plan = plan_timed(budget(1000, threads, 1_000_000, 2), 20, 20, settings);
            assert!(matches!(plan, TimedPlan::Rounds(..)), "{threads}: {plan:?}");
        }
        // Calls too short to be worth a child's round trip: not one.
        let plan = plan_timed(budget(10, 21, 1_000_000, 2), 20, 20, one);
        assert!(!matches!(plan, TimedPlan::EvenPass { .. }), "{plan:?}");
    }

    #[test]
    fn a_multistep_lookahead_that_does_not_fit_falls_back_level_by_level() {
        let two = Settings::new(Lookahead::Two);
        let planned = |ms| match plan_timed(budget(ms, 2, 1_000_000, 0), 20, 20, two) {
            TimedPlan::Rounds(l, _) => Some(l),
            TimedPlan::EvenPass { .. } | TimedPlan::EvaluatorOnly(..) | TimedPlan::NoTime => None,
        };
        assert_eq!(planned(5_000), Some(Lookahead::Two));
        assert_eq!(planned(10), Some(Lookahead::Half));
        // In between, one-step fits where two-step does not.
        let between: Vec<_> = (10..5_000).step_by(10).filter_map(planned).collect();
        assert!(between.contains(&Lookahead::One), "{between:?}");
        assert!(between.is_sorted_by_key(|l| l.steps() * 2 + l.plies()));
    }
}
