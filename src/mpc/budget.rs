//! How much search each child call gets.
//!
//! A decision makes a fixed number of child calls (every root move is
//! evaluated); the budget decides how long each may search. With a fixed
//! per-call limit (`ChildNodes`, `ChildMoveTime`, `go depth`) there is nothing
//! to split. With a clock, the move's time is divided over the calls given how
//! many run at once, and when that share gets too small to be worth a child
//! round trip the lookahead is made shallower, down to asking the evaluator
//! alone. A node total (`go nodes`) is spent in rounds: see
//! [`crate::mpc::rounds`].

use std::time::Duration;

use crate::mpc::lookahead::Lookahead;

/// The limit of one child search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildLimit {
    Nodes(u64),
    MoveTime(Duration),
    Depth(u32),
    /// A game clock (`go wtime … btime … winc … binc …`): the child manages
    /// its own time. The decision core never uses it; match play does.
    Clock {
        wtime: Duration,
        btime: Duration,
        winc: Duration,
        binc: Duration,
    },
}

/// Below this a child call costs more in round trip and hash clearing than it
/// searches.
pub const MIN_CALL: Duration = Duration::from_millis(4);

/// Share of the move time handed to children; the rest absorbs scheduling and
/// the tail of the last calls.
const SAFETY: f64 = 0.8;

/// How many child calls one pass over `moves` root moves makes: the lookahead
/// calls plus one evaluator call at the root (fortification and fallback).
pub fn calls_per_pass(lookahead: Lookahead, moves: usize) -> usize {
    match lookahead {
        Lookahead::Half => moves + 1,
        Lookahead::One => 2 * moves + 1,
    }
}

/// The way a timed decision will be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimedPlan {
    /// Lookahead of this depth, each call searching this long.
    Lookahead(Lookahead, Duration),
    /// Too little time for a lookahead: the evaluator's own move.
    EvaluatorOnly(Duration),
}

/// Splits `budget` over one pass, given `threads` concurrent searches, each
/// call costing `call_cost` beyond the search it asks for. Prefers
/// `preferred`; falls back to half-step and then to the evaluator alone when the
/// search time per call drops below [`MIN_CALL`].
pub fn plan_timed(
    budget: Duration,
    moves: usize,
    threads: usize,
    preferred: Lookahead,
    call_cost: Duration,
) -> TimedPlan {
    let usable = budget.mul_f64(SAFETY);
    let threads = threads.max(1);
    let share = |lookahead: Lookahead| {
        let calls = calls_per_pass(lookahead, moves);
        // Calls queue in waves of `threads`; round the waves up.
        let waves = calls.div_ceil(threads).max(1);
        (usable / waves as u32).saturating_sub(call_cost)
    };
    let order: &[Lookahead] = match preferred {
        Lookahead::One => &[Lookahead::One, Lookahead::Half],
        Lookahead::Half => &[Lookahead::Half],
    };
    for lookahead in order {
        let per_call = share(*lookahead);
        if per_call >= MIN_CALL {
            return TimedPlan::Lookahead(*lookahead, per_call);
        }
    }
    TimedPlan::EvaluatorOnly(usable.saturating_sub(call_cost))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_is_split_over_waves_of_calls() {
        // 20 moves, one-step: 41 calls; 2 threads: 21 waves.
        let ms = Duration::from_millis;
        let plan = plan_timed(ms(2100), 20, 2, Lookahead::One, ms(2));
        assert_eq!(plan, TimedPlan::Lookahead(Lookahead::One, ms(78)));
        // Too little for one-step, enough for half-step (21 calls, 11 waves).
        let plan = plan_timed(ms(100), 20, 2, Lookahead::One, Duration::ZERO);
        assert!(matches!(plan, TimedPlan::Lookahead(Lookahead::Half, d) if d >= MIN_CALL));
        // The same when every call costs 4 ms more: no lookahead fits.
        let plan = plan_timed(ms(100), 20, 2, Lookahead::One, ms(4));
        assert_eq!(plan, TimedPlan::EvaluatorOnly(ms(76)));
        // Bullet with a nearly empty clock: the evaluator alone.
        let plan = plan_timed(ms(20), 20, 2, Lookahead::One, Duration::ZERO);
        assert_eq!(plan, TimedPlan::EvaluatorOnly(ms(16)));
        assert_eq!(
            plan_timed(Duration::ZERO, 1, 1, Lookahead::Half, ms(1)),
            TimedPlan::EvaluatorOnly(Duration::ZERO)
        );
    }
}
