//! The meta-engine's time, in one place: how long a move may take, from
//! the `go` line ([`MoveClock`]: its target, hard limit and cap, the game's
//! clock as a child's limit, the guard that keeps a fixed budget off the
//! flag), how a decision spends that time ([`plan`]: rounds, one even pass
//! or the evaluator alone, sized from the children's speed), the clock its
//! rounds keep ([`rounds`]), and the short waits after a search is cut
//! ([`CANCEL_GRACE`], [`FALLBACK_AFTER_STOP`]).
//!
//! The GUI measures our time including pipe latency, so `MoveOverhead` (and
//! the session's measured lateness, `uci::lateness`) is kept back from
//! every budget. With a clock, a move gets its share of what is left
//! (`movestogo`, or about 25 moves in sudden death) plus most of the
//! increment ([`Go::move_share`], the built-in engine's formula too), and
//! never more than a safe fraction of the clock.

pub mod plan;
pub mod rounds;

use std::time::{Duration, Instant};

use shakmaty::Color;

use mpcmc_protocol::Go;

use crate::mpc::ChildLimit;

/// How long a pass cut short with nothing finished waits for the root's
/// stopped search (children answer `stop` within a millisecond or two, more
/// on a loaded machine).
pub const CANCEL_GRACE: Duration = Duration::from_millis(50);

/// How long the built-in fallback searches when the GUI wants the move now
/// (`stop`, or a new `go`) and no child had answered.
pub const FALLBACK_AFTER_STOP: Duration = Duration::from_millis(10);

/// Moves assumed left when the GUI does not say (sudden death). The
/// built-in engine assumes 30 (`mpcmc_builtin::time::CLOCK_MOVES`): the
/// two were set apart and never measured against each other; they are
/// kept as they are so that neither engine's play changes.
const DEFAULT_MOVES_TO_GO: u32 = 25;

/// What the `go` line gives us, overhead already kept back.
enum Allowance {
    /// `movetime`: this much, exactly.
    MoveTime(u64),
    /// Our clock: milliseconds usable, the increment, and the moves it is
    /// for (`movestogo`, or [`DEFAULT_MOVES_TO_GO`]).
    Clock {
        usable: u64,
        inc: u64,
        moves_to_go: u32,
    },
}

fn allowance(go: &Go, us: Color, overhead: Duration) -> Option<Allowance> {
    let overhead_ms = overhead.as_millis() as u64;
    if let Some(movetime) = go.movetime {
        return Some(Allowance::MoveTime(movetime.saturating_sub(overhead_ms)));
    }
    let usable = go.usable_clock(us, overhead, DEFAULT_MOVES_TO_GO)?;
    let inc = go.clock_of(us).1.unwrap_or(0).max(0) as u64;
    let moves_to_go = go.moves_to_go().unwrap_or(DEFAULT_MOVES_TO_GO);
    Some(Allowance::Clock {
        usable: usable.as_millis() as u64,
        inc,
        moves_to_go,
    })
}

/// The time of one move: aim at `soft`, never pass `hard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveTime {
    pub soft: Duration,
    pub hard: Duration,
    /// The most the move may take at all (`hard` is below it): the limit of
    /// a search that decides its own time on the game's clock, as a child
    /// sent the clock does, which the children's own time rules stay under.
    pub cap: Duration,
}

/// How much longer than its target a move may run when its choice is
/// still open (the hard limit, below a share of the clock).
const HARD_FACTOR: u64 = 3;

/// The wall time this move may use, or `None` when the `go` line sets no clock
/// or move time (depth, nodes, mate, infinite). With a clock the target is
/// the move's share of what is left (`movestogo`, or about
/// [`DEFAULT_MOVES_TO_GO`] moves in sudden death) plus most of the
/// increment; the hard limit is [`HARD_FACTOR`] times that, but never more
/// than a third of the clock (nine tenths on the last move before a time
/// control). The cap, for a search that decides its own time, is three
/// times the move's share of the clock without the increment, at least a
/// third of it and at most nine tenths (a third in sudden death; up to nine
/// tenths near a time control). `movetime` is all three. `movestogo 0`
/// (sent by some GUIs) is sudden death.
fn move_time(go: &Go, us: Color, overhead: Duration) -> Option<MoveTime> {
    let (soft, hard, cap) = match allowance(go, us, overhead)? {
        Allowance::MoveTime(ms) => (ms, ms, ms),
        Allowance::Clock {
            usable,
            inc,
            moves_to_go,
        } => {
            let ms = Duration::from_millis;
            let share = Go::move_share(ms(usable), ms(inc), moves_to_go).as_millis() as u64;
            // The last move before a control may take most of what is left.
            let most = if moves_to_go == 1 {
                usable * 9 / 10
            } else {
                usable / 3
            };
            let hard = (share * HARD_FACTOR).min(most);
            // What a child sent this clock may take itself: a third of it
            // in sudden death, more as a time control nears.
            let cap = (usable * 3 / u64::from(moves_to_go)).clamp(usable / 3, usable * 9 / 10);
            (share.min(hard), hard, cap)
        }
    };
    let ms = Duration::from_millis;
    Some(MoveTime {
        soft: ms(soft),
        hard: ms(hard),
        cap: ms(cap),
    })
}

/// The game's clock as a child's limit, for a root search that manages its
/// own time like the child playing alone: our time less what is kept back
/// for `overhead` ([`Go::usable_clock`]), the opponent's as it is, and
/// `movestogo`.
/// `None` without a clock (no time of ours, or `movetime`).
fn child_clock(go: &Go, us: Color, overhead: Duration) -> Option<ChildLimit> {
    let Allowance::Clock { usable, .. } = allowance(go, us, overhead)? else {
        return None;
    };
    let ms = |t: Option<i64>| Duration::from_millis(t.unwrap_or(0).max(0) as u64);
    let ours = Duration::from_millis(usable);
    let (wtime, btime) = match us {
        Color::White => (ours, ms(go.btime)),
        Color::Black => (ms(go.wtime), ours),
    };
    Some(ChildLimit::Clock {
        wtime,
        btime,
        winc: ms(go.winc),
        binc: ms(go.binc),
        // `movestogo 0` (sent by some GUIs) says nothing.
        movestogo: go.moves_to_go(),
    })
}

/// The latest a fixed-budget search (`ChildNodes`, `go depth`, …) may answer
/// without risking the clock: the move time when one is given, else half of
/// what is left. `None` without a clock.
fn flag_guard(go: &Go, us: Color, overhead: Duration) -> Option<Duration> {
    let ms = match allowance(go, us, overhead)? {
        Allowance::MoveTime(ms) => ms,
        Allowance::Clock { usable, .. } => usable / 2,
    };
    Some(Duration::from_millis(ms))
}

/// One move's clock: the GUI's limits resolved once when its `go` arrives
/// (every strategy asks this, never the `go` line's times again), and the
/// instants the search is held to once the move's time runs (from the
/// `go`, or from `ponderhit`).
#[derive(Debug, Clone)]
pub struct MoveClock {
    /// The move's time on a game clock or a move time (`move_time`);
    /// `None` when the `go` sets neither.
    pub time: Option<MoveTime>,
    /// How long a fixed-budget search may run without risking the clock
    /// (`flag_guard`).
    pub guard: Option<Duration>,
    /// The game's clock as a child's limit (`child_clock`).
    pub child: Option<ChildLimit>,
    /// When the move must be made, once known.
    pub deadline: Option<Instant>,
    /// The move's hard limit, once known: the built-in engine answering
    /// for a failed child keeps to it (the deadline may be the later cap).
    pub hard: Option<Instant>,
    /// The latest the move may be made, once known (the move's cap, or
    /// the guard before the flag): a search cut short gets no grace past
    /// it.
    pub latest: Option<Instant>,
}

impl MoveClock {
    /// The clock of the move `go` asks of `us`, with `overhead` kept in
    /// reserve beyond the children's searches.
    pub fn new(go: &Go, us: Color, overhead: Duration) -> MoveClock {
        MoveClock {
            time: move_time(go, us, overhead),
            guard: flag_guard(go, us, overhead),
            child: child_clock(go, us, overhead),
            deadline: None,
            hard: None,
            latest: None,
        }
    }

    /// The move's `time` runs from `start` (the `go`, or `ponderhit`): due
    /// at its cap when the search keeps the game's clock itself
    /// (`keeps_clock`: the children's own time rules stay under the cap),
    /// else at its hard limit. Sets the deadline, the hard limit and the
    /// latest; the deadline.
    pub fn runs_from(&mut self, start: Instant, time: MoveTime, keeps_clock: bool) -> Instant {
        let deadline = start + if keeps_clock { time.cap } else { time.hard };
        self.deadline = Some(deadline);
        self.hard = Some(start + time.hard);
        self.latest = Some(start + time.cap);
        deadline
    }

    /// A fixed budget runs from `start` (the `go`, or `ponderhit`) and
    /// answers `guard` later at the latest, off the flag. Sets the
    /// deadline and the latest; the deadline.
    pub fn guarded_from(&mut self, start: Instant, guard: Duration) -> Instant {
        let due = start + guard;
        self.deadline = Some(due);
        self.latest = Some(due);
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(go: Go, us: Color) -> Option<(u64, u64)> {
        move_time(&go, us, Duration::from_millis(50))
            .map(|t| (t.soft.as_millis() as u64, t.hard.as_millis() as u64))
    }

    /// One clock a move: its times read once from the `go`, and its
    /// instants set as the move's time starts.
    #[test]
    fn a_move_clock_holds_the_move_to_its_limits() {
        let ms = Duration::from_millis;
        let go = Go {
            wtime: Some(60_000),
            btime: Some(60_000),
            ..Go::default()
        };
        let received = Instant::now();
        let mut clock = MoveClock::new(&go, Color::White, ms(10));
        let time = clock.time.expect("a clock");
        assert_eq!(Some(time), move_time(&go, Color::White, ms(10)));
        assert_eq!(clock.guard, Some(ms(59_750 / 2)));
        assert!(matches!(clock.child, Some(ChildLimit::Clock { .. })));
        assert_eq!(
            (clock.deadline, clock.hard, clock.latest),
            (None, None, None)
        );
        // Rounds: due at the hard limit; a search keeping the clock: at the cap.
        assert_eq!(clock.runs_from(received, time, false), received + time.hard);
        assert_eq!(clock.runs_from(received, time, true), received + time.cap);
        assert_eq!(clock.deadline, Some(received + time.cap));
        assert_eq!(clock.hard, Some(received + time.hard));
        assert_eq!(clock.latest, Some(received + time.cap));
        // A fixed budget after `ponderhit`: due at the guard, no later.
        let hit = received + ms(700);
        assert_eq!(clock.guarded_from(hit, ms(300)), hit + ms(300));
        assert_eq!(
            (clock.deadline, clock.latest),
            (Some(hit + ms(300)), Some(hit + ms(300)))
        );
        // `go infinite`: nothing to keep to.
        let infinite = MoveClock::new(
            &Go {
                infinite: true,
                ..Go::default()
            },
            Color::White,
            ms(10),
        );
        assert_eq!(
            (infinite.time, infinite.guard, infinite.child),
            (None, None, None)
        );
    }

    #[test]
    fn budgets() {
        let cases = [
            (
                Go {
                    movetime: Some(1000),
                    ..Go::default()
                },
                Color::White,
                Some((950, 950)),
            ),
            (
                Go {
                    movetime: Some(10),
                    ..Go::default()
                },
                Color::White,
                Some((0, 0)),
            ),
            // 10+0.1: 9950/25 + 75, three times that at most.
            (
                Go {
                    wtime: Some(10_000),
                    btime: Some(1),
                    winc: Some(100),
                    ..Go::default()
                },
                Color::White,
                Some((473, 1419)),
            ),
            // Black's clock, 1+0.01: 50 ms of overhead less the 10 of
            // increment kept back for 24 more moves, at most half the clock:
            // 500/25 + 7.
            (
                Go {
                    wtime: Some(60_000),
                    btime: Some(1_000),
                    binc: Some(10),
                    ..Go::default()
                },
                Color::Black,
                Some((27, 81)),
            ),
            // 10 moves in 1 s: 50 ms kept back for each move to the
            // control, at most half the clock: 500/10.
            (
                Go {
                    wtime: Some(1_000),
                    movestogo: Some(10),
                    ..Go::default()
                },
                Color::White,
                Some((50, 150)),
            ),
            // Negative clock: nothing but the increment, capped by an empty clock.
            (
                Go {
                    wtime: Some(-150),
                    winc: Some(100),
                    ..Go::default()
                },
                Color::White,
                Some((0, 0)),
            ),
            (
                Go {
                    wtime: Some(2_050),
                    movestogo: Some(1),
                    ..Go::default()
                },
                Color::White,
                Some((1800, 1800)),
            ),
            (
                Go {
                    depth: Some(5),
                    ..Go::default()
                },
                Color::White,
                None,
            ),
            (
                Go {
                    infinite: true,
                    ..Go::default()
                },
                Color::White,
                None,
            ),
        ];
        for (go, us, want) in cases {
            assert_eq!(budget(go.clone(), us), want, "{go}");
        }
        // The cap, which only a search deciding its own time may reach: a
        // third of the clock; nine tenths before a time control; the move
        // time itself.
        let cap = |go: Go| move_time(&go, Color::White, Duration::from_millis(50)).map(|t| t.cap);
        let ms = Duration::from_millis;
        let clock = Go {
            wtime: Some(10_000),
            winc: Some(100),
            ..Go::default()
        };
        assert_eq!(cap(clock.clone()), Some(ms(3316)));
        let last = Go {
            movestogo: Some(1),
            ..clock.clone()
        };
        assert_eq!(cap(last), Some(ms(8955)));
        // Three times the share of a move when more than a third: a child
        // may take half of its clock at `movestogo 2` (the built-in engine
        // does; the cap is nine tenths there), and Stockfish's own maximum
        // grows too as a control nears. The hard limit stays at a third.
        let four = Go {
            movestogo: Some(4),
            ..clock.clone()
        };
        assert_eq!(cap(four.clone()), Some(ms(7462)));
        let hard = move_time(&four, Color::White, ms(50)).map(|t| t.hard);
        assert_eq!(hard, Some(ms(3316)));
        // `movestogo 0` is sudden death.
        let zero = Go {
            movestogo: Some(0),
            ..clock.clone()
        };
        assert_eq!(
            move_time(&zero, Color::White, ms(50)),
            move_time(&clock, Color::White, ms(50))
        );
        let nine = Go {
            movestogo: Some(9),
            ..clock.clone()
        };
        assert_eq!(cap(nine), Some(ms(3316)));
        let movetime = Go {
            movetime: Some(1000),
            ..Go::default()
        };
        assert_eq!(cap(movetime), Some(ms(950)));
    }

    #[test]
    fn the_clock_goes_to_the_root_search_less_the_overhead() {
        let ms = Duration::from_millis;
        let go = Go {
            wtime: Some(10_000),
            btime: Some(9_000),
            winc: Some(100),
            binc: Some(100),
            ..Go::default()
        };
        assert_eq!(
            child_clock(&go, Color::Black, ms(50)),
            Some(ChildLimit::Clock {
                wtime: ms(10_000),
                btime: ms(8_950),
                winc: ms(100),
                binc: ms(100),
                movestogo: None,
            })
        );
        let moves_to_go = Go {
            movestogo: Some(20),
            ..go.clone()
        };
        assert_eq!(
            child_clock(&moves_to_go, Color::White, ms(50)),
            Some(ChildLimit::Clock {
                wtime: ms(9_950),
                btime: ms(9_000),
                winc: ms(100),
                binc: ms(100),
                movestogo: Some(20),
            })
        );
        // As the child is sent it (after `go`).
        let sent = child_clock(&moves_to_go, Color::White, ms(50)).map(|c| c.to_string());
        assert_eq!(
            sent.as_deref(),
            Some("wtime 9950 btime 9000 winc 100 binc 100 movestogo 20")
        );
        // `movestogo 0` is not passed on.
        let zero = Go {
            movestogo: Some(0),
            ..go.clone()
        };
        let sent = child_clock(&zero, Color::White, ms(50)).map(|c| c.to_string());
        assert_eq!(
            sent.as_deref(),
            Some("wtime 9950 btime 9000 winc 100 binc 100")
        );
        let movetime = Go {
            movetime: Some(500),
            ..Go::default()
        };
        assert_eq!(child_clock(&movetime, Color::White, ms(50)), None);
    }

    #[test]
    fn flag_guard_keeps_fixed_budgets_off_the_flag() {
        let overhead = Duration::from_millis(50);
        let guard = |go: Go| flag_guard(&go, Color::Black, overhead).map(|d| d.as_millis());
        let clock = Go {
            btime: Some(1050),
            ..Go::default()
        };
        let movetime = Go {
            movetime: Some(300),
            ..Go::default()
        };
        let depth = Go {
            depth: Some(9),
            ..Go::default()
        };
        // Half of what is usable: 1050 less the overhead kept back for 25
        // moves without an increment, at most half the clock.
        assert_eq!(guard(clock), Some(262));
        assert_eq!(guard(movetime), Some(250));
        assert_eq!(guard(depth), None);
    }
}
