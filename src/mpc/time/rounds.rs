//! A decision's clock while its rounds run ([`RoundClock`]): from when the
//! move's time started, how old the decision may be when the next round
//! would start, as the last round left the choice ([`Standing`]) and the
//! root search stands ([`RootState`], [`RootTime`]).

use std::time::{Duration, Instant};

/// The time of a decision under a clock: from `start`, aim at `soft` (or
/// at what the root search's time says, see [`RootTime`]), never pass
/// `hard` (the caller cancels there).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundClock {
    pub start: Instant,
    pub soft: Duration,
    pub hard: Duration,
    /// How the root search's time sets the rounds'.
    pub root: RootTime,
}

/// How a timed decision's rounds follow its root search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RootTime {
    /// The root search's time does not set the rounds' (a limit of its
    /// own, or none: `Fortify` off, an open search stopped with the
    /// rounds): they aim at `soft`.
    Apart,
    /// It runs alongside the rounds (a worker of its own) on the whole game
    /// clock and decides its own time, as the child would playing alone:
    /// the decision ends when it answers — the round in flight is cut —
    /// unless the lookahead's best is close to beating the anchor, which
    /// gets rounds until twice `soft`.
    Until,
    /// It runs alongside the rounds (a worker of its own) under a move
    /// time, which answering early saves nothing of: the rounds aim at
    /// `soft` as [`RootTime::Apart`], and once they end the root search goes
    /// on deepening the anchor until [`ROOT_TO_TARGET`] of `soft` — unless
    /// the lookahead's best beats the anchor by the margin, when the time
    /// left goes to the deep check of that deviation.
    ToTarget,
}

/// Share of a move time's target an open root search may deepen to once
/// the rounds are over ([`RootTime::ToTarget`]); the rest is the root
/// child's answer to `stop` and the `bestmove`.
pub const ROOT_TO_TARGET: f64 = 0.95;

/// Where a decision's root searches stand, for its clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RootState {
    /// No root search in this decision (`Fortify` off, a finished root).
    Absent,
    Running,
    Ended,
}

impl RoundClock {
    /// How old the decision may be when the next round would start, after
    /// a round that left `standing`, with the root searches at `root`.
    pub(crate) fn target(&self, standing: Standing, root: RootState) -> Duration {
        match (standing, self.root, root) {
            (Standing::Close, ..) => self.soft * 2,
            (_, RootTime::Until, RootState::Ended) => Duration::ZERO,
            // Waiting for the root search's answer.
            (_, RootTime::Until, RootState::Running) => self.hard,
            (Standing::Settled, ..) => self.soft / 2,
            (Standing::Open, ..) => self.soft,
        }
        .min(self.hard)
    }
}

/// How settled a round leaves the choice, for the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// The lookahead's best is the anchor and leads the rest by the
    /// margin, or beats the anchor by it; and it did not change this round.
    Settled,
    /// The lookahead's best is not the anchor, but not by the margin yet.
    Close,
    Open,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rounds_clock_follows_the_root_search() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let clock = |root| RoundClock {
            start,
            soft: ms(100),
            hard: ms(300),
            root,
        };
        // Apart: the target, half when settled, twice when close.
        let apart = clock(RootTime::Apart);
        for root in [RootState::Absent, RootState::Running, RootState::Ended] {
            assert_eq!(apart.target(Standing::Open, root), ms(100));
            assert_eq!(apart.target(Standing::Settled, root), ms(50));
            assert_eq!(apart.target(Standing::Close, root), ms(200));
        }
        // Until: the hard limit while the root search runs; once it has
        // answered, no more rounds unless the choice is close.
        let until = clock(RootTime::Until);
        assert_eq!(until.target(Standing::Open, RootState::Running), ms(300));
        assert_eq!(until.target(Standing::Settled, RootState::Ended), ms(0));
        assert_eq!(until.target(Standing::Open, RootState::Ended), ms(0));
        assert_eq!(until.target(Standing::Close, RootState::Ended), ms(200));
        // No root search (`Fortify` off): the target rules.
        assert_eq!(until.target(Standing::Open, RootState::Absent), ms(100));
        // ToTarget: the rounds as Apart (the root search waits for them).
        let to_target = clock(RootTime::ToTarget);
        for standing in [Standing::Open, Standing::Settled, Standing::Close] {
            for root in [RootState::Absent, RootState::Running, RootState::Ended] {
                assert_eq!(
                    to_target.target(standing, root),
                    apart.target(standing, root)
                );
            }
        }
    }
}
