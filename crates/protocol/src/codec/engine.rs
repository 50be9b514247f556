//! What an engine sends back: [`EngineLine`] (`id`, `option`, `info`,
//! `bestmove`, …) with its scores ([`UciScore`]) and searches ([`Info`]),
//! parsed by [`parse_engine_line`] and written back (`Display`).

use std::fmt;

use super::{EMPTY, ParseError};
use crate::moves::MoveText;

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
