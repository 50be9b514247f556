//! The UCI wire format, both directions, over shakmaty types.
//!
//! One codec serves both sides of mpcmc: it parses what a GUI sends us
//! ([`GuiCommand`]) and what a child engine sends us ([`EngineLine`]), and it
//! writes both kinds of line back (`Display`). Parsing is lenient where the
//! protocol is loose (unknown tokens in `info`, unknown commands) and strict
//! where a mistake would cost a game (`bestmove`, numbers, FENs). A problem that
//! leaves the rest of a line usable is reported next to the parsed command as a
//! [`ParseError`] in [`Parsed::problems`], so the session can answer
//! `info string` and carry on with what was understood.
//!
//! ```
//! use mpcmc_protocol::{EngineLine, ScoreKind, parse_engine_line};
//!
//! let line = "info depth 20 score mate -3 wdl 0 0 1000 nodes 5 pv h7h8 g8h8";
//! let Ok(EngineLine::Info(info)) = parse_engine_line(line) else { panic!("{line}") };
//! assert_eq!(info.score.map(|s| s.kind), Some(ScoreKind::Mate(-3)));
//! assert_eq!(info.pv.len(), 2);
//! assert_eq!(info.to_string(), "info depth 20 score mate -3 wdl 0 0 1000 nodes 5 pv h7h8 g8h8");
//! ```

use std::{fmt, time::Duration};

use shakmaty::Color;

use crate::moves::MoveText;

/// How an empty string is written in an `option … type string default` line
/// (Stockfish's convention); GUIs send it back in `setoption` for "empty".
pub const EMPTY: &str = "<empty>";

/// A failure to understand (part of) a UCI line; keeps the failed input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("empty line")]
    Empty,
    #[error("invalid move '{token}' in '{line}'")]
    Move { token: String, line: String },
    #[error("invalid number '{token}' after '{field}'")]
    Number { field: String, token: String },
    #[error("missing value after '{field}'")]
    MissingValue { field: String },
    #[error("'{line}': {reason}")]
    Syntax { line: String, reason: String },
    /// A `position` line that names no position (`position foo`).
    #[error("'{line}': {reason}")]
    Position { line: String, reason: String },
    #[error("a line of more than {} bytes, skipped", crate::lines::MAX_LINE)]
    Overlong,
}

impl ParseError {
    /// The line was a `position` command that names no position (its FEN
    /// cannot be read, or no start is given): the GUI meant a position
    /// other than the last one.
    pub fn is_position(&self) -> bool {
        matches!(self, ParseError::Position { .. })
    }
}

/// A parsed line with the recoverable problems found in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<T> {
    pub command: T,
    pub problems: Vec<ParseError>,
}

impl<T> Parsed<T> {
    fn clean(command: T) -> Self {
        Parsed {
            command,
            problems: Vec::new(),
        }
    }
}

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

/// Whether a reported score is exact or a search-window bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bound {
    #[default]
    Exact,
    Lower,
    Upper,
}

/// `score cp N` or `score mate N` (moves; negative: the side to move is mated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreKind {
    Cp(i32),
    Mate(i32),
}

/// A score as it stands on an `info` line, from the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UciScore {
    pub kind: ScoreKind,
    pub bound: Bound,
}

/// An `info` line. Every field is optional; unknown tokens are skipped when
/// parsing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    pub depth: Option<u32>,
    pub seldepth: Option<u32>,
    pub multipv: Option<u32>,
    pub score: Option<UciScore>,
    /// Win/draw/loss in permille, from the side to move.
    pub wdl: Option<[u32; 3]>,
    pub nodes: Option<u64>,
    pub nps: Option<u64>,
    pub time: Option<u64>,
    pub hashfull: Option<u32>,
    pub tbhits: Option<u64>,
    pub currmove: Option<MoveText>,
    pub currmovenumber: Option<u32>,
    pub pv: Vec<MoveText>,
    /// `string …`: the rest of the line.
    pub string: Option<String>,
}

impl Info {
    /// An `info` line's counts: `nodes` searched in `elapsed`, with the
    /// nodes a second and the time in milliseconds they make.
    pub fn counts(nodes: u64, elapsed: std::time::Duration) -> Info {
        Info {
            nodes: Some(nodes),
            nps: Some((nodes as f64 / elapsed.as_secs_f64().max(1e-3)) as u64),
            time: Some(elapsed.as_millis() as u64),
            ..Info::default()
        }
    }
}

/// What the engine line `option name …` declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionType {
    Check { default: bool },
    Spin { default: i64, min: i64, max: i64 },
    Combo { default: String, vars: Vec<String> },
    Button,
    String { default: String },
}

/// One `option` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSpec {
    pub name: String,
    pub kind: OptionType,
}

/// A line an engine sends.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineLine {
    IdName(String),
    IdAuthor(String),
    UciOk,
    ReadyOk,
    Option(OptionSpec),
    Info(Info),
    /// `bestmove (none)` and `bestmove 0000` both mean: no move (a finished game).
    BestMove {
        best: Option<MoveText>,
        ponder: Option<MoveText>,
    },
    /// Anything else an engine may print (copyprotection, banners, noise).
    Other(String),
}

/// Parses one line an engine sent. Only `bestmove` is strict; everything else
/// degrades to [`EngineLine::Other`] or to an `Info` with fewer fields.
pub fn parse_engine_line(line: &str) -> Result<EngineLine, ParseError> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let Some((verb, rest)) = tokens.split_first() else {
        return Ok(EngineLine::Other(String::new()));
    };
    Ok(match *verb {
        "uciok" => EngineLine::UciOk,
        "readyok" => EngineLine::ReadyOk,
        "id" => match rest.split_first() {
            Some((&"name", name)) => EngineLine::IdName(name.join(" ")),
            Some((&"author", author)) => EngineLine::IdAuthor(author.join(" ")),
            _ => EngineLine::Other(line.to_owned()),
        },
        "info" => EngineLine::Info(parse_info(rest)),
        "option" => match parse_option(rest) {
            Some(spec) => EngineLine::Option(spec),
            None => EngineLine::Other(line.to_owned()),
        },
        "bestmove" => {
            let bad = |token: &str| ParseError::Move {
                token: token.to_owned(),
                line: line.trim().to_owned(),
            };
            let parse_move = |token: &str| -> Result<Option<MoveText>, ParseError> {
                match token {
                    "(none)" | "0000" => Ok(None),
                    t => t.parse::<MoveText>().map(Some).map_err(|_| bad(t)),
                }
            };
            let Some(first) = rest.first() else {
                return Err(ParseError::Syntax {
                    line: line.trim().to_owned(),
                    reason: "bestmove without a move".to_owned(),
                });
            };
            let best = parse_move(first)?;
            // A malformed ponder move is not worth losing the best move over.
            let ponder = match rest {
                [_, "ponder", p, ..] => parse_move(p).ok().flatten(),
                _ => None,
            };
            EngineLine::BestMove { best, ponder }
        }
        _ => EngineLine::Other(line.to_owned()),
    })
}

fn parse_info(tokens: &[&str]) -> Info {
    let mut info = Info::default();
    let mut i = 0;
    let number = |i: usize| tokens.get(i).and_then(|t| t.parse::<u64>().ok());
    while i < tokens.len() {
        let field = tokens[i];
        i += 1;
        match field {
            "depth" => info.depth = number(i).map(|n| n as u32),
            "seldepth" => info.seldepth = number(i).map(|n| n as u32),
            "multipv" => info.multipv = number(i).map(|n| n as u32),
            "nodes" => info.nodes = number(i),
            "nps" => info.nps = number(i),
            "time" => info.time = number(i),
            "hashfull" => info.hashfull = number(i).map(|n| n as u32),
            "tbhits" => info.tbhits = number(i),
            "currmovenumber" => info.currmovenumber = number(i).map(|n| n as u32),
            "currmove" => info.currmove = tokens.get(i).and_then(|t| t.parse().ok()),
            "score" => {
                let value = tokens.get(i + 1).and_then(|t| t.parse::<i32>().ok());
                let kind = match (tokens.get(i), value) {
                    (Some(&"cp"), Some(v)) => Some(ScoreKind::Cp(v)),
                    (Some(&"mate"), Some(v)) => Some(ScoreKind::Mate(v)),
                    _ => None,
                };
                i += 2;
                let bound = match tokens.get(i) {
                    Some(&"lowerbound") => Bound::Lower,
                    Some(&"upperbound") => Bound::Upper,
                    _ => Bound::Exact,
                };
                if bound != Bound::Exact {
                    i += 1;
                }
                info.score = kind.map(|kind| UciScore { kind, bound });
                continue;
            }
            "wdl" => {
                let w = number(i).zip(number(i + 1)).zip(number(i + 2));
                info.wdl = w.map(|((w, d), l)| [w as u32, d as u32, l as u32]);
                i += 3;
                continue;
            }
            "pv" => {
                while let Some(m) = tokens.get(i).and_then(|t| t.parse::<MoveText>().ok()) {
                    info.pv.push(m);
                    i += 1;
                }
                continue;
            }
            "string" => {
                info.string = Some(tokens[i..].join(" "));
                break;
            }
            // Unknown field: skip just its name and let the loop resynchronise on
            // the next known keyword.
            _ => continue,
        }
        i += 1;
    }
    info
}

fn parse_option(tokens: &[&str]) -> Option<OptionSpec> {
    // option name <name…> type <t> [default <d…>] [min <n>] [max <n>] [var <v…>]*
    const KEYS: [&str; 5] = ["type", "default", "min", "max", "var"];
    if tokens.first() != Some(&"name") {
        return None;
    }
    let mut name = Vec::new();
    let mut kind = None;
    let mut default: Option<Vec<&str>> = None;
    let (mut min, mut max) = (None, None);
    let mut vars = Vec::new();
    let mut i = 1;
    while i < tokens.len() && tokens[i] != "type" {
        name.push(tokens[i]);
        i += 1;
    }
    while i < tokens.len() {
        let key = tokens[i];
        i += 1;
        let start = i;
        // `default` of a string option may be empty or contain key words only
        // when they are followed by nothing we know; keep it simple: values run
        // to the next key.
        while i < tokens.len() && !KEYS.contains(&tokens[i]) {
            i += 1;
        }
        let value = &tokens[start..i];
        match key {
            "type" => kind = value.first().copied(),
            "default" => default = Some(value.to_vec()),
            "min" => min = value.first().and_then(|v| v.parse::<i64>().ok()),
            "max" => max = value.first().and_then(|v| v.parse::<i64>().ok()),
            "var" => vars.push(value.join(" ")),
            _ => {}
        }
    }
    let default_text = default.as_ref().map(|d| d.join(" ")).unwrap_or_default();
    let default_text = if default_text == EMPTY {
        String::new()
    } else {
        default_text
    };
    let kind = match kind? {
        "check" => OptionType::Check {
            default: default_text == "true",
        },
        "spin" => OptionType::Spin {
            default: default_text.parse().unwrap_or(0),
            min: min.unwrap_or(i64::MIN),
            max: max.unwrap_or(i64::MAX),
        },
        "combo" => OptionType::Combo {
            default: default_text,
            vars,
        },
        "button" => OptionType::Button,
        "string" => OptionType::String {
            default: default_text,
        },
        _ => return None,
    };
    Some(OptionSpec {
        name: name.join(" "),
        kind,
    })
}

impl fmt::Display for UciScore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ScoreKind::Cp(v) => write!(f, "score cp {v}")?,
            ScoreKind::Mate(v) => write!(f, "score mate {v}")?,
        }
        match self.bound {
            Bound::Exact => Ok(()),
            Bound::Lower => f.write_str(" lowerbound"),
            Bound::Upper => f.write_str(" upperbound"),
        }
    }
}

impl fmt::Display for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("info")?;
        let fields: [(&str, Option<u64>); 3] = [
            ("depth", self.depth.map(u64::from)),
            ("seldepth", self.seldepth.map(u64::from)),
            ("multipv", self.multipv.map(u64::from)),
        ];
        for (name, value) in fields {
            if let Some(v) = value {
                write!(f, " {name} {v}")?;
            }
        }
        if let Some(score) = self.score {
            write!(f, " {score}")?;
        }
        if let Some([w, d, l]) = self.wdl {
            write!(f, " wdl {w} {d} {l}")?;
        }
        let fields: [(&str, Option<u64>); 5] = [
            ("nodes", self.nodes),
            ("nps", self.nps),
            ("hashfull", self.hashfull.map(u64::from)),
            ("tbhits", self.tbhits),
            ("time", self.time),
        ];
        for (name, value) in fields {
            if let Some(v) = value {
                write!(f, " {name} {v}")?;
            }
        }
        if let Some(m) = self.currmove {
            write!(f, " currmove {m}")?;
        }
        if let Some(n) = self.currmovenumber {
            write!(f, " currmovenumber {n}")?;
        }
        if !self.pv.is_empty() {
            f.write_str(" pv")?;
            for m in &self.pv {
                write!(f, " {m}")?;
            }
        }
        // `string` swallows the rest of the line, so it goes last.
        if let Some(s) = &self.string {
            write!(f, " string {s}")?;
        }
        Ok(())
    }
}

impl fmt::Display for OptionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "option name {} type ", self.name)?;
        match &self.kind {
            OptionType::Check { default } => write!(f, "check default {default}"),
            OptionType::Spin { default, min, max } => {
                write!(f, "spin default {default} min {min} max {max}")
            }
            OptionType::Combo { default, vars } => {
                write!(f, "combo default {default}")?;
                for v in vars {
                    write!(f, " var {v}")?;
                }
                Ok(())
            }
            OptionType::Button => f.write_str("button"),
            OptionType::String { default } => {
                let shown = if default.is_empty() { EMPTY } else { default };
                write!(f, "string default {shown}")
            }
        }
    }
}

impl fmt::Display for EngineLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineLine::IdName(name) => write!(f, "id name {name}"),
            EngineLine::IdAuthor(author) => write!(f, "id author {author}"),
            EngineLine::UciOk => f.write_str("uciok"),
            EngineLine::ReadyOk => f.write_str("readyok"),
            EngineLine::Option(spec) => spec.fmt(f),
            EngineLine::Info(info) => info.fmt(f),
            EngineLine::BestMove { best, ponder } => {
                match best {
                    Some(m) => write!(f, "bestmove {m}")?,
                    None => f.write_str("bestmove (none)")?,
                }
                if let (Some(_), Some(p)) = (best, ponder) {
                    write!(f, " ponder {p}")?;
                }
                Ok(())
            }
            EngineLine::Other(line) => f.write_str(line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(s: &str) -> MoveText {
        s.parse().expect("test move")
    }

    fn info(line: &str) -> Info {
        match parse_engine_line(line) {
            Ok(EngineLine::Info(info)) => info,
            other => panic!("not an info line: {line}: {other:?}"),
        }
    }

    #[test]
    fn stockfish_info_lines() {
        // Real Stockfish 15.1 output, with `wdl` (UCI_ShowWDL), hashfull, bounds.
        let i = info(
            "info depth 20 seldepth 27 multipv 1 score cp 31 wdl 55 920 25 nodes 1234567 \
             nps 987654 hashfull 412 tbhits 0 time 1250 pv e2e4 e7e5 g1f3",
        );
        assert_eq!(i.depth, Some(20));
        assert_eq!(i.seldepth, Some(27));
        assert_eq!(i.multipv, Some(1));
        assert_eq!(
            i.score,
            Some(UciScore {
                kind: ScoreKind::Cp(31),
                bound: Bound::Exact
            })
        );
        assert_eq!(i.wdl, Some([55, 920, 25]));
        assert_eq!(i.nodes, Some(1234567));
        assert_eq!(i.nps, Some(987654));
        assert_eq!(i.hashfull, Some(412));
        assert_eq!(i.time, Some(1250));
        assert_eq!(i.pv, vec![mv("e2e4"), mv("e7e5"), mv("g1f3")]);

        let i = info("info depth 12 currmove g1f3 currmovenumber 3");
        assert_eq!(i.currmove, Some(mv("g1f3")));
        assert_eq!(i.currmovenumber, Some(3));

        let i = info(
            "info depth 18 seldepth 22 multipv 1 score cp 45 lowerbound nodes 90 nps 9 time 10 pv d2d4",
        );
        assert_eq!(i.score.map(|s| s.bound), Some(Bound::Lower));
        assert_eq!(i.nodes, Some(90));
        assert_eq!(i.pv, vec![mv("d2d4")]);
        let i = info("info depth 18 score cp -12 upperbound nodes 90");
        assert_eq!(
            i.score,
            Some(UciScore {
                kind: ScoreKind::Cp(-12),
                bound: Bound::Upper
            })
        );

        let i = info("info depth 5 seldepth 4 multipv 1 score mate -3 nodes 500 pv h7h8 g8h8");
        assert_eq!(i.score.map(|s| s.kind), Some(ScoreKind::Mate(-3)));
        assert_eq!(i.pv.len(), 2);

        let i = info("info string NNUE evaluation using nn-ad9b42354671.nnue enabled");
        assert_eq!(
            i.string.as_deref(),
            Some("NNUE evaluation using nn-ad9b42354671.nnue enabled")
        );

        // Unknown tokens are skipped without losing what follows them.
        let i = info("info depth 3 sbhits 7 refutation e2e4 nodes 77 score cp 5 pv a2a3");
        assert_eq!(i.depth, Some(3));
        assert_eq!(i.nodes, Some(77));
        assert_eq!(i.pv, vec![mv("a2a3")]);
    }

    #[test]
    fn bestmove_lines() {
        let cases: [(&str, Option<&str>, Option<&str>); 5] = [
            ("bestmove e2e4 ponder e7e5", Some("e2e4"), Some("e7e5")),
            ("bestmove e7e8q", Some("e7e8q"), None),
            ("bestmove (none)", None, None),
            ("bestmove 0000", None, None),
            ("bestmove e1h1 ponder ???", Some("e1h1"), None),
        ];
        for (line, best, ponder) in cases {
            assert_eq!(
                parse_engine_line(line),
                Ok(EngineLine::BestMove {
                    best: best.map(mv),
                    ponder: ponder.map(mv)
                }),
                "{line}"
            );
        }
        assert!(parse_engine_line("bestmove").is_err());
        assert!(parse_engine_line("bestmove e2-e4;").is_err());
        // A token of a larger board is kept whole: the game judges it.
        assert_eq!(
            parse_engine_line("bestmove h3h10 ponder h10h9"),
            Ok(EngineLine::BestMove {
                best: Some(mv("h3h10")),
                ponder: Some(mv("h10h9"))
            })
        );
    }

    #[test]
    fn engine_handshake_lines() {
        assert_eq!(
            parse_engine_line("id name Stockfish 15.1"),
            Ok(EngineLine::IdName("Stockfish 15.1".into()))
        );
        assert_eq!(parse_engine_line("uciok"), Ok(EngineLine::UciOk));
        assert_eq!(parse_engine_line("readyok"), Ok(EngineLine::ReadyOk));
        let cases = [
            (
                "option name Hash type spin default 16 min 1 max 33554432",
                OptionSpec {
                    name: "Hash".into(),
                    kind: OptionType::Spin {
                        default: 16,
                        min: 1,
                        max: 33554432,
                    },
                },
            ),
            (
                "option name Clear Hash type button",
                OptionSpec {
                    name: "Clear Hash".into(),
                    kind: OptionType::Button,
                },
            ),
            (
                "option name EvalFile type string default nn-ad9b42354671.nnue",
                OptionSpec {
                    name: "EvalFile".into(),
                    kind: OptionType::String {
                        default: "nn-ad9b42354671.nnue".into(),
                    },
                },
            ),
            (
                "option name SyzygyPath type string default <empty>",
                OptionSpec {
                    name: "SyzygyPath".into(),
                    kind: OptionType::String {
                        default: String::new(),
                    },
                },
            ),
            (
                "option name Ponder type check default false",
                OptionSpec {
                    name: "Ponder".into(),
                    kind: OptionType::Check { default: false },
                },
            ),
            (
                "option name Lookahead type combo default one var half var one",
                OptionSpec {
                    name: "Lookahead".into(),
                    kind: OptionType::Combo {
                        default: "one".into(),
                        vars: vec!["half".into(), "one".into()],
                    },
                },
            ),
        ];
        for (line, spec) in cases {
            assert_eq!(
                parse_engine_line(line),
                Ok(EngineLine::Option(spec.clone())),
                "{line}"
            );
            // Round trip through our writer.
            assert_eq!(
                parse_engine_line(&spec.to_string()),
                Ok(EngineLine::Option(spec))
            );
        }
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

    #[test]
    fn info_is_written_back() {
        let i = Info {
            depth: Some(2),
            score: Some(UciScore {
                kind: ScoreKind::Mate(-3),
                bound: Bound::Exact,
            }),
            nodes: Some(10),
            pv: vec![mv("e2e4"), mv("e7e5")],
            string: Some("hello world".into()),
            ..Info::default()
        };
        let text = i.to_string();
        assert_eq!(
            text,
            "info depth 2 score mate -3 nodes 10 pv e2e4 e7e5 string hello world"
        );
        assert_eq!(parse_engine_line(&text), Ok(EngineLine::Info(i)));
        assert_eq!(
            EngineLine::BestMove {
                best: None,
                ponder: None
            }
            .to_string(),
            "bestmove (none)"
        );
    }
}
