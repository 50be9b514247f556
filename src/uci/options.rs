//! The UCI options: one table, read by the `uci` answer, by `setoption`, by the
//! command-line flags and (through a test) by `uci-options.md`.
//!
//! Names compare case-insensitively, as GUIs differ in how they write them.
//! Each option is also a command-line flag, lc0 style: `ChildNodes` is
//! `--child-nodes=2000`; flags are applied before any `setoption`.

use shakmaty::CastlingMode;

use crate::{
    engine::{ChildConfig, PoolConfig, inprocess::BUILTIN},
    mpc::{Lookahead, Settings},
    uci::codec::{EMPTY, OptionSpec, OptionType},
};

/// A failed `setoption`, naming the option and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("unknown option '{0}'")]
    Unknown(String),
    #[error("option '{name}' needs a value")]
    MissingValue { name: String },
    #[error("option '{name}': '{value}' is not {expected}")]
    BadValue {
        name: String,
        value: String,
        expected: String,
    },
}

/// Every option mpcmc declares, in the order `uci` lists them.
pub const NAMES: [&str; 17] = [
    "Evaluator",
    "EvaluatorOptions",
    "Opponent",
    "OpponentOptions",
    "Threads",
    "ChildThreads",
    "Hash",
    "Lookahead",
    "Fortify",
    "FortifyMargin",
    "ChildNodes",
    "ChildMoveTime",
    "ClearHash",
    "MoveOverhead",
    "Ponder",
    "UCI_Chess960",
    "LogFile",
];

/// Option values, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub evaluator: String,
    pub evaluator_options: String,
    pub opponent: String,
    pub opponent_options: String,
    pub threads: u32,
    pub child_threads: u32,
    pub hash: u32,
    pub lookahead: Lookahead,
    pub fortify: bool,
    pub fortify_margin: i32,
    pub child_nodes: u64,
    pub child_movetime: u64,
    pub clear_hash: bool,
    pub move_overhead: u64,
    pub ponder: bool,
    pub chess960: bool,
    pub log_file: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            evaluator: BUILTIN.to_owned(),
            evaluator_options: String::new(),
            opponent: String::new(),
            opponent_options: String::new(),
            threads: 1,
            child_threads: 1,
            hash: 16,
            lookahead: Lookahead::One,
            fortify: true,
            fortify_margin: 0,
            child_nodes: 0,
            child_movetime: 0,
            clear_hash: false,
            move_overhead: 50,
            ponder: false,
            chess960: false,
            log_file: String::new(),
        }
    }
}

impl Options {
    /// The declaration of option `name` (exact table name), with its default.
    pub fn spec(name: &str) -> Option<OptionSpec> {
        let string = |default: &str| OptionType::String {
            default: default.to_owned(),
        };
        let spin = |default: i64, min: i64, max: i64| OptionType::Spin { default, min, max };
        let kind = match name {
            "Evaluator" => string(BUILTIN),
            "EvaluatorOptions" | "Opponent" | "OpponentOptions" | "LogFile" => string(""),
            "Threads" | "ChildThreads" => spin(1, 1, 256),
            "Hash" => spin(16, 1, 65_536),
            "Lookahead" => OptionType::Combo {
                default: "one".to_owned(),
                vars: vec!["half".to_owned(), "one".to_owned()],
            },
            "Fortify" => OptionType::Check { default: true },
            "FortifyMargin" => spin(0, -10_000, 10_000),
            "ChildNodes" => spin(0, 0, 1_000_000_000),
            "ChildMoveTime" => spin(0, 0, 3_600_000),
            "ClearHash" => OptionType::Check { default: false },
            "MoveOverhead" => spin(50, 0, 10_000),
            "Ponder" | "UCI_Chess960" => OptionType::Check { default: false },
            _ => return None,
        };
        Some(OptionSpec {
            name: name.to_owned(),
            kind,
        })
    }

    /// Every declaration, as `uci` lists them.
    pub fn specs() -> Vec<OptionSpec> {
        NAMES.iter().filter_map(|n| Options::spec(n)).collect()
    }

    /// Applies `setoption name <name> value <value>`.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), OptionError> {
        let canonical = NAMES
            .iter()
            .find(|n| n.eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| OptionError::Unknown(name.to_owned()))?;
        let spec = Options::spec(canonical).ok_or_else(|| OptionError::Unknown(name.to_owned()))?;
        // GUIs echo back the `default <empty>` that `uci` prints for an empty
        // string; like Stockfish, read it as the empty string.
        let value = value
            .map(str::trim)
            .map(|v| if v == EMPTY { "" } else { v });
        let bad = |value: &str, expected: String| OptionError::BadValue {
            name: spec.name.clone(),
            value: value.to_owned(),
            expected,
        };
        let text = match (&spec.kind, value) {
            (OptionType::String { .. }, v) => v.unwrap_or("").to_owned(),
            (_, None) => {
                return Err(OptionError::MissingValue {
                    name: spec.name.clone(),
                });
            }
            (_, Some(v)) => v.to_owned(),
        };
        let number = match &spec.kind {
            OptionType::Spin { min, max, .. } => {
                let n: i64 = text
                    .parse()
                    .map_err(|_| bad(&text, format!("a whole number from {min} to {max}")))?;
                if n < *min || n > *max {
                    return Err(bad(&text, format!("a whole number from {min} to {max}")));
                }
                n
            }
            _ => 0,
        };
        let check = || match text.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(bad(&text, "true or false".to_owned())),
        };
        match *canonical {
            "Evaluator" => self.evaluator = text,
            "EvaluatorOptions" | "OpponentOptions" => {
                parse_child_options(&text).map_err(|expected| bad(&text, expected))?;
                if *canonical == "EvaluatorOptions" {
                    self.evaluator_options = text;
                } else {
                    self.opponent_options = text;
                }
            }
            "Opponent" => self.opponent = text,
            "Threads" => self.threads = number as u32,
            "ChildThreads" => self.child_threads = number as u32,
            "Hash" => self.hash = number as u32,
            "Lookahead" => {
                self.lookahead = match text.to_ascii_lowercase().as_str() {
                    "half" => Lookahead::Half,
                    "one" => Lookahead::One,
                    _ => return Err(bad(&text, "half or one".to_owned())),
                }
            }
            "Fortify" => self.fortify = check()?,
            "FortifyMargin" => self.fortify_margin = number as i32,
            "ChildNodes" => self.child_nodes = number as u64,
            "ChildMoveTime" => self.child_movetime = number as u64,
            "ClearHash" => self.clear_hash = check()?,
            "MoveOverhead" => self.move_overhead = number as u64,
            "Ponder" => self.ponder = check()?,
            "UCI_Chess960" => self.chess960 = check()?,
            "LogFile" => self.log_file = text,
            _ => return Err(OptionError::Unknown(name.to_owned())),
        }
        Ok(())
    }

    pub fn castling_mode(&self) -> CastlingMode {
        if self.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        }
    }

    pub fn settings(&self) -> Settings {
        Settings {
            lookahead: self.lookahead,
            fortify: self.fortify,
            fortify_margin: self.fortify_margin,
        }
    }

    /// The child processes these options ask for. An empty `Opponent` means
    /// the evaluator's command; an empty `OpponentOptions` then means the
    /// evaluator's options too, so one set of processes serves both roles.
    ///
    /// `Hash` is the whole hash memory, as GUIs and tournament rules mean it:
    /// it is split evenly over the child processes (`Threads` of them when
    /// the roles share processes, twice that when they do not), at least
    /// 1 MB each.
    pub fn pool_config(&self) -> Result<PoolConfig, OptionError> {
        let config = |hash| -> Result<PoolConfig, OptionError> {
            let evaluator = self.child_config(
                &self.evaluator,
                &self.evaluator_options,
                "EvaluatorOptions",
                hash,
            )?;
            let opponent =
                if self.opponent.trim().is_empty() && self.opponent_options.trim().is_empty() {
                    evaluator.clone()
                } else {
                    let command = if self.opponent.trim().is_empty() {
                        &self.evaluator
                    } else {
                        &self.opponent
                    };
                    self.child_config(command, &self.opponent_options, "OpponentOptions", hash)?
                };
            Ok(PoolConfig {
                evaluator,
                opponent,
                threads: self.search_slots(),
            })
        };
        let whole = config(self.hash)?;
        let processes = whole.processes().max(1) as u32;
        config((self.hash / processes).max(1))
    }

    /// How many child searches run at once: `Threads` cores, `ChildThreads`
    /// of them to each search (at least one search).
    pub fn search_slots(&self) -> usize {
        (self.threads / self.child_threads.max(1)).max(1) as usize
    }

    /// One child's options: `hash_mb` is its share of `Hash`.
    fn child_config(
        &self,
        command: &str,
        extra: &str,
        option: &str,
        hash_mb: u32,
    ) -> Result<ChildConfig, OptionError> {
        // `ChildThreads` search threads per child (one by default):
        // `Threads` counts cores. The user's own options come last and win.
        let mut options = vec![
            ("Threads".to_owned(), self.child_threads.to_string()),
            ("Hash".to_owned(), hash_mb.to_string()),
        ];
        if self.chess960 {
            options.push(("UCI_Chess960".to_owned(), "true".to_owned()));
        }
        options.extend(
            parse_child_options(extra).map_err(|reason| OptionError::BadValue {
                name: option.to_owned(),
                value: extra.to_owned(),
                expected: reason,
            })?,
        );
        Ok(ChildConfig {
            command: command.trim().to_owned(),
            options,
            castling: self.castling_mode(),
            clear_hash: self.clear_hash,
        })
    }
}

/// Parses `Name=Value;Name=Value` (spaces around names and values ignored).
pub fn parse_child_options(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(';')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| match part.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => {
                Ok((name.trim().to_owned(), value.trim().to_owned()))
            }
            _ => Err(format!(
                "a list of Name=Value separated by ';' (at '{part}')"
            )),
        })
        .collect()
}

/// The command-line flag of an option: `ChildNodes` → `child-nodes`,
/// `UCI_Chess960` → `uci-chess960`.
pub fn flag_name(option: &str) -> String {
    let mut flag = String::new();
    let mut prev_lower = false;
    for c in option.chars() {
        if c == '_' {
            flag.push('-');
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            flag.push('-');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        flag.push(c.to_ascii_lowercase());
    }
    flag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_is_case_insensitive_and_validates() {
        let mut o = Options::default();
        o.set("childnodes", Some("2000")).expect("spin");
        o.set("FORTIFY", Some("false")).expect("check");
        o.set("lookahead", Some("Half")).expect("combo");
        o.set("Evaluator", Some("/usr/games/stockfish --x"))
            .expect("string");
        o.set("LogFile", None).expect("empty string");
        assert_eq!(o.child_nodes, 2000);
        assert!(!o.fortify);
        assert_eq!(o.lookahead, Lookahead::Half);
        assert_eq!(o.evaluator, "/usr/games/stockfish --x");
        let errors = [
            ("Threads", Some("0"), "from 1 to 256"),
            ("Threads", Some("two"), "'two'"),
            ("Fortify", Some("yes"), "true or false"),
            ("Hash", None, "needs a value"),
            (
                "No Such Option",
                Some("1"),
                "unknown option 'No Such Option'",
            ),
        ];
        for (name, value, want) in errors {
            let e = o.set(name, value).expect_err(name).to_string();
            assert!(e.contains(want), "{e}");
        }
        assert_eq!(o.threads, 1, "a rejected value leaves the option alone");
    }

    #[test]
    fn every_option_is_declared_flagged_and_documented() {
        let doc = include_str!("../../uci-options.md");
        for name in NAMES {
            let spec = Options::spec(name).expect(name);
            assert_eq!(spec.name, name);
            assert!(
                doc.contains(&format!("`{name}`")),
                "uci-options.md lacks `{name}`"
            );
        }
        assert_eq!(flag_name("ChildNodes"), "child-nodes");
        assert_eq!(flag_name("UCI_Chess960"), "uci-chess960");
        assert_eq!(flag_name("MoveOverhead"), "move-overhead");
    }

    #[test]
    fn roles_share_children_unless_configured_apart() {
        let mut o = Options {
            evaluator: "/usr/games/stockfish".into(),
            ..Options::default()
        };
        assert!(o.pool_config().expect("config").shared_roles());
        o.set("OpponentOptions", Some("Skill Level=3"))
            .expect("set");
        let c = o.pool_config().expect("config");
        assert!(!c.shared_roles());
        assert_eq!(c.opponent.command, "/usr/games/stockfish");
        assert_eq!(
            c.opponent.options.last(),
            Some(&("Skill Level".into(), "3".into()))
        );
        let e = o.set("EvaluatorOptions", Some("Hash")).expect_err("no '='");
        assert!(e.to_string().contains("Name=Value"), "{e}");
    }

    #[test]
    fn empty_as_uci_shows_it_is_the_empty_string() {
        let mut o = Options {
            opponent: "/usr/games/stockfish".into(),
            log_file: "mpcmc.log".into(),
            ..Options::default()
        };
        for name in ["Opponent", "LogFile", "EvaluatorOptions", "OpponentOptions"] {
            o.set(name, Some(EMPTY)).expect(name);
            o.set(name, Some(" <empty> ")).expect(name);
        }
        assert_eq!(o.opponent, "");
        assert_eq!(o.log_file, "");
        assert_eq!(o.evaluator_options, "");
        assert!(o.pool_config().expect("config").shared_roles());
        // `uci` prints exactly what is read back.
        let spec = Options::spec("LogFile").expect("LogFile").to_string();
        assert!(spec.ends_with(&format!("default {EMPTY}")), "{spec}");
    }

    #[test]
    fn hash_is_the_whole_memory_split_over_the_processes() {
        let hash_of = |c: &ChildConfig| {
            c.options
                .iter()
                .rev()
                .find(|(n, _)| n == "Hash")
                .map(|(_, v)| v.clone())
        };
        let mut o = Options::default();
        o.set("Threads", Some("4")).expect("threads");
        o.set("Hash", Some("256")).expect("hash");
        let c = o.pool_config().expect("config");
        assert_eq!(c.processes(), 4);
        assert_eq!(hash_of(&c.evaluator).as_deref(), Some("64"));
        // Roles apart: eight processes.
        o.set("OpponentOptions", Some("Skill Level=3"))
            .expect("set");
        let c = o.pool_config().expect("config");
        assert_eq!(c.processes(), 8);
        assert_eq!(hash_of(&c.evaluator).as_deref(), Some("32"));
        assert_eq!(hash_of(&c.opponent).as_deref(), Some("32"));
        // Two threads a child: half the searches, twice the hash each.
        o.set("OpponentOptions", Some("")).expect("set");
        o.set("ChildThreads", Some("2")).expect("child threads");
        let c = o.pool_config().expect("config");
        assert_eq!(c.threads, 2);
        assert_eq!(hash_of(&c.evaluator).as_deref(), Some("128"));
        assert!(
            c.evaluator
                .options
                .contains(&("Threads".into(), "2".into()))
        );
        o.set("ChildThreads", Some("8")).expect("child threads");
        assert_eq!(o.pool_config().expect("config").threads, 1);
        // Never below 1 MB; the user's own child Hash still wins.
        o.set("Hash", Some("1")).expect("hash");
        assert_eq!(
            hash_of(&o.pool_config().expect("c").evaluator).as_deref(),
            Some("1")
        );
        o.set("EvaluatorOptions", Some("Hash=128")).expect("set");
        assert_eq!(
            hash_of(&o.pool_config().expect("c").evaluator).as_deref(),
            Some("128")
        );
    }
}
