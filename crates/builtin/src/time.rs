//! The built-in engine's time, in one place: a `go`'s clock as the
//! side to move's [`Clock`] and the most a move may take on it
//! ([`clock_budget`], from [`Go::move_share`], the meta-engine's formula
//! too), and a search's limits as instants ([`budget`], [`Budget`]).
//!
//! Where the two engines differ: this one assumes [`CLOCK_MOVES`] (30)
//! moves in sudden death and never plans over more, and its move ends at
//! that share (half the clock at most; no iteration starts past half of
//! it); the meta-engine assumes 25 and lets a decision run past its share
//! to a hard limit of three times it. The two numbers were set apart and
//! never measured against each other; they are kept so that neither
//! engine's play changes.

use std::time::{Duration, Instant};

use mpcmc_protocol::Go;

use crate::{Limits, score::MAX_DEPTH};

/// The side to move's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub time: Duration,
    pub inc: Duration,
    pub movestogo: Option<u32>,
}

impl Clock {
    /// The most a move may take on this clock: the engine's one time rule
    /// (a search starts no iteration past half of it).
    pub fn move_budget(&self) -> Duration {
        clock_budget(self.time, self.inc, self.movestogo)
    }

    /// How long a pondering search (`go ponder`, searching until told) goes
    /// on after `ponderhit`, `pondered` after its `go`. The time pondered
    /// counts as the move's, as Stockfish counts it: the search ends at the
    /// move's budget from `go` ([`Clock::move_budget`]), and at once when it
    /// pondered past half of that, where a search on the clock starts no
    /// new iteration.
    pub fn after_ponderhit(&self, pondered: Duration) -> Duration {
        let budget = self.move_budget();
        if pondered >= budget / 2 {
            Duration::ZERO
        } else {
            budget - pondered
        }
    }
}

/// Moves a clock is shared over in sudden death (and at most).
pub const CLOCK_MOVES: u32 = 30;

/// Total time to spend on a move with `clock`: a share of the remaining time
/// plus most of the increment, never more than half of what is left, minus
/// a safety margin.
pub fn clock_budget(time: Duration, inc: Duration, movestogo: Option<u32>) -> Duration {
    let moves = movestogo.map_or(CLOCK_MOVES, |m| m.clamp(1, CLOCK_MOVES));
    Go::move_share(time, inc, moves)
        .min(time / 2)
        .saturating_sub(Duration::from_millis(10))
        .max(Duration::from_millis(1))
}

/// When to stop.
pub struct Budget {
    /// Abort the iteration in flight at this instant.
    pub hard: Option<Instant>,
    /// Start no new iteration after this instant.
    pub soft: Option<Instant>,
    pub nodes: Option<u64>,
    pub depth: u32,
}

/// The limits as instants and counts.
pub(crate) fn budget(limits: &Limits, started: Instant, root_moves: usize) -> Budget {
    let mut hard = None;
    let mut soft = None;
    if !limits.infinite {
        if let Some(t) = limits.movetime {
            hard = Some(started + t);
        }
        if let Some(c) = limits.clock {
            let b = c.move_budget();
            let deadline = started + b;
            hard = Some(hard.map_or(deadline, |h: Instant| h.min(deadline)));
            // The next iteration takes longer than all before it: do not
            // start one past half the budget. A forced move needs no thought.
            soft = Some(if root_moves == 1 {
                started
            } else {
                started + b / 2
            });
        }
    }
    Budget {
        hard,
        soft,
        nodes: limits.nodes,
        depth: limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_budget_shares_and_caps() {
        let ms = Duration::from_millis;
        assert_eq!(clock_budget(ms(30_000), ms(0), None), ms(990));
        assert_eq!(clock_budget(ms(1000), ms(1000), None), ms(490));
        assert_eq!(clock_budget(ms(5), ms(0), None), ms(1));
        assert_eq!(clock_budget(ms(10_000), ms(0), Some(1)), ms(4990));
    }
}
