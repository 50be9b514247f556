//! How long one move may take, from the `go` line.
//!
//! The GUI measures our time including pipe latency, so `MoveOverhead` is kept
//! back from every budget. With a clock, a move gets its share of what is left
//! (`movestogo`, or about 25 moves in sudden death) plus most of the increment,
//! and never more than a safe fraction of the clock.

use std::time::Duration;

use shakmaty::Color;

use mpcmc_protocol::Go;

use crate::mpc::ChildLimit;

/// Moves assumed left when the GUI does not say (sudden death).
const DEFAULT_MOVES_TO_GO: u64 = 25;

/// What the `go` line gives us, overhead already kept back.
enum Allowance {
    /// `movetime`: this much, exactly.
    MoveTime(u64),
    /// Our clock: milliseconds usable and the increment.
    Clock { usable: u64, inc: u64 },
}

fn allowance(go: &Go, us: Color, overhead: Duration) -> Option<Allowance> {
    let overhead_ms = overhead.as_millis() as u64;
    if let Some(movetime) = go.movetime {
        return Some(Allowance::MoveTime(movetime.saturating_sub(overhead_ms)));
    }
    let (time, inc) = match us {
        Color::White => (go.wtime, go.winc),
        Color::Black => (go.btime, go.binc),
    };
    // Negative clocks happen (cutechess after an overstep): treat as empty.
    let left = time?.max(0) as u64;
    Some(Allowance::Clock {
        usable: left.saturating_sub(overhead_ms),
        inc: inc.unwrap_or(0).max(0) as u64,
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
pub fn move_time(go: &Go, us: Color, overhead: Duration) -> Option<MoveTime> {
    let (soft, hard, cap) = match allowance(go, us, overhead)? {
        Allowance::MoveTime(ms) => (ms, ms, ms),
        Allowance::Clock { usable, inc } => {
            let moves_to_go = go
                .movestogo
                .filter(|&n| n > 0)
                .map_or(DEFAULT_MOVES_TO_GO, u64::from);
            let share = usable / moves_to_go + inc * 3 / 4;
            // The last move before a control may take most of what is left.
            let most = if moves_to_go == 1 {
                usable * 9 / 10
            } else {
                usable / 3
            };
            let hard = (share * HARD_FACTOR).min(most);
            // What a child sent this clock may take itself: a third of it
            // in sudden death, more as a time control nears.
            let cap = (usable * 3 / moves_to_go).clamp(usable / 3, usable * 9 / 10);
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
/// own time like the child playing alone: our time less `overhead`, the
/// opponent's as it is, and `movestogo`. `None` without a clock (no time
/// of ours, or `movetime`).
pub fn child_clock(go: &Go, us: Color, overhead: Duration) -> Option<ChildLimit> {
    if go.movetime.is_some() {
        return None;
    }
    let ours = match us {
        Color::White => go.wtime,
        Color::Black => go.btime,
    }?;
    let ms = |t: Option<i64>| Duration::from_millis(t.unwrap_or(0).max(0) as u64);
    let ours = ms(Some(ours)).saturating_sub(overhead);
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
        movestogo: go.movestogo.filter(|&n| n > 0),
    })
}

/// The latest a fixed-budget search (`ChildNodes`, `go depth`, …) may answer
/// without risking the clock: the move time when one is given, else half of
/// what is left. `None` without a clock.
pub fn flag_guard(go: &Go, us: Color, overhead: Duration) -> Option<Duration> {
    let ms = match allowance(go, us, overhead)? {
        Allowance::MoveTime(ms) => ms,
        Allowance::Clock { usable, .. } => usable / 2,
    };
    Some(Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(go: Go, us: Color) -> Option<(u64, u64)> {
        move_time(&go, us, Duration::from_millis(50))
            .map(|t| (t.soft.as_millis() as u64, t.hard.as_millis() as u64))
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
            // Black's clock, 1+0.01.
            (
                Go {
                    wtime: Some(60_000),
                    btime: Some(1_000),
                    binc: Some(10),
                    ..Go::default()
                },
                Color::Black,
                Some((45, 135)),
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
        assert_eq!(guard(clock), Some(500));
        assert_eq!(guard(movetime), Some(250));
        assert_eq!(guard(depth), None);
    }
}
