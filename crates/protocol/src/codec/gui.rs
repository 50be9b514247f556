//! What a GUI sends an engine: [`GuiCommand`] (`position`, `go` with its
//! limits in [`Go`], `setoption`, …), parsed by [`parse_gui_line`] and
//! written back (`Display`), and how a `go`'s clock reads for the side to
//! move ([`Go::clock_of`], [`Go::usable_clock`], [`Go::move_share`]).

use std::{fmt, time::Duration};

use shakmaty::Color;

use super::{ParseError, Parsed};
use crate::moves::MoveText;

/// Where a `position` command starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartPosition {
    Startpos,
    /// The FEN's text as sent: the game reads it by its variant's rules
    /// (a xiangqi FEN has ten ranks).
    Fen(String),
}

/// The limits and flags of a `go` command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Go {
    pub searchmoves: Vec<MoveText>,
    pub ponder: bool,
    /// Milliseconds; negative values happen (cutechess with an overstepped clock).
    pub wtime: Option<i64>,
    pub btime: Option<i64>,
    pub winc: Option<i64>,
    pub binc: Option<i64>,
    pub movestogo: Option<u32>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub mate: Option<u32>,
    pub movetime: Option<u64>,
    pub infinite: bool,
}

/// A command from the GUI to an engine.
#[derive(Debug, Clone, PartialEq)]
pub enum GuiCommand {
    Uci,
    Debug(bool),
    IsReady,
    SetOption {
        name: String,
        value: Option<String>,
    },
    Register,
    UciNewGame,
    Position {
        start: StartPosition,
        moves: Vec<MoveText>,
    },
    Go(Go),
    Stop,
    PonderHit,
    Quit,
    /// Anything else (Arena's `xboard`, typos): ignored by the session.
    Unknown(String),
}

/// Parses one line a GUI sent. Fatal problems (`position fen` with a bad FEN) are
/// errors; a malformed move stops the `moves` list there, a malformed number drops
/// that field of `go`, and both are reported in `problems`.
pub fn parse_gui_line(line: &str) -> Result<Parsed<GuiCommand>, ParseError> {
    let mut tokens = line.split_whitespace();
    let Some(verb) = tokens.next() else {
        return Err(ParseError::Empty);
    };
    let rest: Vec<&str> = tokens.collect();
    let command = match verb {
        "uci" => GuiCommand::Uci,
        "isready" => GuiCommand::IsReady,
        "ucinewgame" => GuiCommand::UciNewGame,
        "stop" => GuiCommand::Stop,
        "ponderhit" => GuiCommand::PonderHit,
        "quit" => GuiCommand::Quit,
        "register" => GuiCommand::Register,
        "debug" => match rest.first() {
            Some(&"on") | None => GuiCommand::Debug(true),
            Some(&"off") => GuiCommand::Debug(false),
            Some(other) => {
                return Err(ParseError::Syntax {
                    line: line.trim().to_owned(),
                    reason: format!("expected 'on' or 'off', got '{other}'"),
                });
            }
        },
        "setoption" => return parse_setoption(line, &rest).map(Parsed::clean),
        "position" => return parse_position(line, &rest),
        "go" => return Ok(parse_go(&rest)),
        _ => GuiCommand::Unknown(line.trim().to_owned()),
    };
    Ok(Parsed::clean(command))
}

fn parse_setoption(line: &str, rest: &[&str]) -> Result<GuiCommand, ParseError> {
    if rest.first() != Some(&"name") {
        return Err(ParseError::Syntax {
            line: line.trim().to_owned(),
            reason: "expected 'setoption name <name> [value <value>]'".to_owned(),
        });
    }
    // Names and values may contain spaces: everything between `name` and the
    // first `value` token is the name; everything after it is the value.
    let value_at = rest.iter().position(|t| *t == "value");
    let name_tokens = &rest[1..value_at.unwrap_or(rest.len())];
    if name_tokens.is_empty() {
        return Err(ParseError::Syntax {
            line: line.trim().to_owned(),
            reason: "option name is empty".to_owned(),
        });
    }
    let value = value_at.map(|i| rest[i + 1..].join(" "));
    Ok(GuiCommand::SetOption {
        name: name_tokens.join(" "),
        value,
    })
}

fn parse_position(line: &str, rest: &[&str]) -> Result<Parsed<GuiCommand>, ParseError> {
    let moves_at = rest.iter().position(|t| *t == "moves");
    let head = &rest[..moves_at.unwrap_or(rest.len())];
    let start = match head.first() {
        Some(&"startpos") => StartPosition::Startpos,
        Some(&"fen") => {
            let text = head[1..].join(" ");
            if text.is_empty() {
                return Err(ParseError::Position {
                    line: line.trim().to_owned(),
                    reason: "'fen' without a FEN".to_owned(),
                });
            }
            StartPosition::Fen(text)
        }
        _ => {
            return Err(ParseError::Position {
                line: line.trim().to_owned(),
                reason: "expected 'position startpos|fen <fen> [moves ...]'".to_owned(),
            });
        }
    };
    let mut moves = Vec::new();
    let mut problems = Vec::new();
    for token in moves_at.map_or(&[][..], |i| &rest[i + 1..]) {
        match token.parse::<MoveText>() {
            Ok(m) => moves.push(m),
            Err(_) => {
                problems.push(ParseError::Move {
                    token: (*token).to_owned(),
                    line: line.trim().to_owned(),
                });
                break;
            }
        }
    }
    Ok(Parsed {
        command: GuiCommand::Position { start, moves },
        problems,
    })
}

fn parse_go(rest: &[&str]) -> Parsed<GuiCommand> {
    let mut go = Go::default();
    let mut problems = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let field = rest[i];
        i += 1;
        match field {
            "ponder" => go.ponder = true,
            "infinite" => go.infinite = true,
            "searchmoves" => {
                while let Some(m) = rest.get(i).and_then(|t| t.parse::<MoveText>().ok()) {
                    go.searchmoves.push(m);
                    i += 1;
                }
            }
            "wtime" | "btime" | "winc" | "binc" | "movestogo" | "depth" | "nodes" | "mate"
            | "movetime" => {
                let Some(token) = rest.get(i) else {
                    problems.push(ParseError::MissingValue {
                        field: field.to_owned(),
                    });
                    continue;
                };
                i += 1;
                let bad = || ParseError::Number {
                    field: field.to_owned(),
                    token: (*token).to_owned(),
                };
                let ok = match field {
                    "wtime" => token.parse().map(|v| go.wtime = Some(v)).is_ok(),
                    "btime" => token.parse().map(|v| go.btime = Some(v)).is_ok(),
                    "winc" => token.parse().map(|v| go.winc = Some(v)).is_ok(),
                    "binc" => token.parse().map(|v| go.binc = Some(v)).is_ok(),
                    "movestogo" => token.parse().map(|v| go.movestogo = Some(v)).is_ok(),
                    "depth" => token.parse().map(|v| go.depth = Some(v)).is_ok(),
                    "nodes" => token.parse().map(|v| go.nodes = Some(v)).is_ok(),
                    "mate" => token.parse().map(|v| go.mate = Some(v)).is_ok(),
                    _ => token.parse().map(|v| go.movetime = Some(v)).is_ok(),
                };
                if !ok {
                    problems.push(bad());
                }
            }
            other => problems.push(ParseError::Syntax {
                line: format!("go {}", rest.join(" ")),
                reason: format!("unknown go field '{other}' ignored"),
            }),
        }
    }
    Parsed {
        command: GuiCommand::Go(go),
        problems,
    }
}

/// The deepest search `go mate N` becomes (`depth 2N`, at most this).
const MAX_MATE_DEPTH: u32 = 64;

impl Go {
    /// `go infinite` and `go ponder` answer only after `stop`/`ponderhit`.
    pub fn ends_when_told(&self) -> bool {
        self.infinite || self.ponder
    }

    /// `go mate N` as a depth: a mate in N moves is found within 2N plies.
    pub fn mate_depth(&self) -> Option<u32> {
        self.mate
            .map(|m| m.saturating_mul(2).clamp(1, MAX_MATE_DEPTH))
    }

    /// The moves to the next time control: `movestogo`, but for `0` (sent
    /// by some GUIs), which is sudden death, as no `movestogo` is.
    pub fn moves_to_go(&self) -> Option<u32> {
        self.movestogo.filter(|&n| n > 0)
    }

    /// The clock and increment of `us`, as sent (a clock may be negative:
    /// cutechess sends one after an overstep).
    pub fn clock_of(&self, us: Color) -> (Option<i64>, Option<i64>) {
        match us {
            Color::White => (self.wtime, self.winc),
            Color::Black => (self.btime, self.binc),
        }
    }

    /// The clock of `us` less what is kept back for `overhead`, the delay
    /// of one move beyond its search: once for this move, and once for
    /// every other move to the control (`movestogo`, else `sudden_death`
    /// moves) whose overhead the increment does not pay, as Stockfish's
    /// `timeman.cpp` keeps `moveOverhead · (2 + mtg)` (ten moves in one
    /// second lose their overhead ten times over before the clock is
    /// refilled). At most half the clock is kept back beyond this move's
    /// overhead. A negative clock is empty. `None` without a clock of ours.
    pub fn usable_clock(
        &self,
        us: Color,
        overhead: Duration,
        sudden_death: u32,
    ) -> Option<Duration> {
        let ms = |v: i64| Duration::from_millis(v.max(0) as u64);
        let (time, inc) = self.clock_of(us);
        let (left, inc) = (ms(time?), inc.map_or(Duration::ZERO, ms));
        let moves = self.moves_to_go().unwrap_or(sudden_death.max(1));
        let others = overhead.saturating_sub(inc) * (moves - 1);
        let reserve = (overhead + others).min(left / 2).max(overhead);
        Some(left.saturating_sub(reserve))
    }

    /// A move's share of a clock: `usable` time over `moves` moves, plus
    /// three quarters of the increment — the one formula both engines'
    /// time rules start from (each then caps it its own way and assumes
    /// its own moves in sudden death). `moves` 0 reads as 1.
    pub fn move_share(usable: Duration, inc: Duration, moves: u32) -> Duration {
        usable / moves.max(1) + inc * 3 / 4
    }
}

impl fmt::Display for Go {
    /// Writes `go …` with `searchmoves` last: Stockfish reads every token after it
    /// as a move.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("go")?;
        if self.ponder {
            f.write_str(" ponder")?;
        }
        let numbers: [(&str, Option<i64>); 9] = [
            ("wtime", self.wtime),
            ("btime", self.btime),
            ("winc", self.winc),
            ("binc", self.binc),
            ("movestogo", self.movestogo.map(i64::from)),
            ("depth", self.depth.map(i64::from)),
            ("nodes", self.nodes.map(|n| n.min(i64::MAX as u64) as i64)),
            ("mate", self.mate.map(i64::from)),
            (
                "movetime",
                self.movetime.map(|n| n.min(i64::MAX as u64) as i64),
            ),
        ];
        for (name, value) in numbers {
            if let Some(v) = value {
                write!(f, " {name} {v}")?;
            }
        }
        if self.infinite {
            f.write_str(" infinite")?;
        }
        if !self.searchmoves.is_empty() {
            f.write_str(" searchmoves")?;
            for m in &self.searchmoves {
                write!(f, " {m}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for GuiCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuiCommand::Uci => f.write_str("uci"),
            GuiCommand::Debug(on) => write!(f, "debug {}", if *on { "on" } else { "off" }),
            GuiCommand::IsReady => f.write_str("isready"),
            GuiCommand::SetOption { name, value } => match value {
                Some(v) => write!(f, "setoption name {name} value {v}"),
                None => write!(f, "setoption name {name}"),
            },
            GuiCommand::Register => f.write_str("register later"),
            GuiCommand::UciNewGame => f.write_str("ucinewgame"),
            GuiCommand::Position { start, moves } => {
                match start {
                    StartPosition::Startpos => f.write_str("position startpos")?,
                    StartPosition::Fen(fen) => write!(f, "position fen {fen}")?,
                }
                if !moves.is_empty() {
                    f.write_str(" moves")?;
                    for m in moves {
                        write!(f, " {m}")?;
                    }
                }
                Ok(())
            }
            GuiCommand::Go(go) => go.fmt(f),
            GuiCommand::Stop => f.write_str("stop"),
            GuiCommand::PonderHit => f.write_str("ponderhit"),
            GuiCommand::Quit => f.write_str("quit"),
            GuiCommand::Unknown(line) => f.write_str(line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(s: &str) -> MoveText {
        s.parse().expect("test move")
    }

    #[test]
    fn gui_commands() {
        let parse = |line: &str| parse_gui_line(line).expect(line).command;
        assert_eq!(parse("uci"), GuiCommand::Uci);
        assert_eq!(parse("  isready  "), GuiCommand::IsReady);
        assert_eq!(parse("debug off"), GuiCommand::Debug(false));
        assert_eq!(parse("xboard"), GuiCommand::Unknown("xboard".into()));
        assert_eq!(
            parse("setoption name Clear Hash"),
            GuiCommand::SetOption {
                name: "Clear Hash".into(),
                value: None
            }
        );
        assert_eq!(
            parse("setoption name Evaluator Options value Threads=1; Hash=8"),
            GuiCommand::SetOption {
                name: "Evaluator Options".into(),
                value: Some("Threads=1; Hash=8".into())
            }
        );
        assert_eq!(
            parse("setoption name LogFile value"),
            GuiCommand::SetOption {
                name: "LogFile".into(),
                value: Some(String::new())
            }
        );
        assert!(parse_gui_line("setoption Hash 5").is_err());
        assert!(parse_gui_line("").is_err());
    }

    #[test]
    fn position_commands() {
        let p = parse_gui_line("position startpos moves e2e4 e7e5").expect("parses");
        assert_eq!(
            p.command,
            GuiCommand::Position {
                start: StartPosition::Startpos,
                moves: vec![mv("e2e4"), mv("e7e5")]
            }
        );
        // Shredder-FEN castling (`HAha`) is accepted.
        let p = parse_gui_line(
            "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1 moves e2e4",
        )
        .expect("parses");
        assert!(matches!(
            p.command,
            GuiCommand::Position { start: StartPosition::Fen(_), ref moves } if moves.len() == 1
        ));
        // A malformed move ends the list there and is reported.
        let p = parse_gui_line("position startpos moves e2e4 e7-e5; e7e5").expect("parses");
        assert_eq!(
            p.command,
            GuiCommand::Position {
                start: StartPosition::Startpos,
                moves: vec![mv("e2e4")]
            }
        );
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].to_string().contains("e7-e5;"));
        // A FEN is kept as sent (the game reads it by its variant's
        // rules): a xiangqi FEN's ten ranks, cutechess's empty pocket.
        for fen in [
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[-] w KQkq - 0 1",
        ] {
            let p = parse_gui_line(&format!("position fen {fen} moves h3h10")).expect("a fen");
            assert_eq!(
                p.command,
                GuiCommand::Position {
                    start: StartPosition::Fen(fen.to_owned()),
                    moves: vec![mv("h3h10")]
                }
            );
        }
        let e = parse_gui_line("position fen moves e2e4").expect_err("no fen");
        assert!(e.is_position(), "{e}");
    }

    #[test]
    fn go_commands() {
        let go = |line: &str| match parse_gui_line(line).expect(line) {
            Parsed {
                command: GuiCommand::Go(go),
                problems,
            } => (go, problems),
            other => panic!("{other:?}"),
        };
        let (g, problems) = go("go ponder wtime 30000 btime -150 winc 100 binc 100 movestogo 7");
        assert!(problems.is_empty());
        assert!(g.ponder);
        assert_eq!(g.wtime, Some(30000));
        assert_eq!(g.btime, Some(-150), "negative time is legal input");
        assert_eq!(g.movestogo, Some(7));
        let (g, _) = go("go searchmoves e2e4 d2d4 depth 5");
        assert_eq!(g.searchmoves, vec![mv("e2e4"), mv("d2d4")]);
        assert_eq!(g.depth, Some(5));
        let (g, _) = go("go infinite");
        assert!(g.infinite);
        let (g, problems) = go("go movetime 1x00 nodes 5000");
        assert_eq!(g.movetime, None);
        assert_eq!(g.nodes, Some(5000));
        assert_eq!(problems.len(), 1);
        assert!(problems[0].to_string().contains("1x00"));
        let (_, problems) = go("go wtime");
        assert_eq!(
            problems,
            vec![ParseError::MissingValue {
                field: "wtime".into()
            }]
        );
    }

    #[test]
    fn go_is_written_with_searchmoves_last() {
        let g = Go {
            searchmoves: vec![mv("e2e4"), mv("g1f3")],
            nodes: Some(2000),
            wtime: Some(-5),
            ponder: true,
            ..Go::default()
        };
        let text = g.to_string();
        assert_eq!(text, "go ponder wtime -5 nodes 2000 searchmoves e2e4 g1f3");
        match parse_gui_line(&text).map(|p| p.command) {
            Ok(GuiCommand::Go(back)) => assert_eq!(back, g),
            other => panic!("{other:?}"),
        }
    }
}
