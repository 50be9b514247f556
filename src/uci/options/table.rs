//! The one table of options: each option's declaration and what a value
//! does to [`Options`].

use mpcmc_protocol::{OptionType, game::Rules};

use crate::{
    children::{assembly::parse_child_options, command::parse_workers, inprocess::BUILTIN},
    mpc::{
        Lookahead,
        calibration::{MAX_ELO, MIN_ELO},
        decision::{PRUNE_WIDTH, REPLY_WEIGHT},
    },
    uci::options::{
        DEFAULT_ELO, DEFAULT_HASH_MB, DEFAULT_MOVE_OVERHEAD_MS, MAX_HASH_MB, MAX_VIRTUAL_WORKERS,
        Options,
    },
};

/// A `setoption` value, read by the option's type.
pub(super) enum Given {
    Text(String),
    Number(i64),
    On(bool),
}

impl Given {
    fn text(self) -> String {
        match self {
            Given::Text(t) => t,
            Given::Number(n) => n.to_string(),
            Given::On(b) => b.to_string(),
        }
    }

    fn number(&self) -> i64 {
        match self {
            Given::Number(n) => *n,
            _ => 0,
        }
    }

    fn on(&self) -> bool {
        matches!(self, Given::On(true))
    }
}

/// One option: its name, its declaration, whether `mpcmc engine` (the
/// built-in engine alone) declares it too, and what a value does. An
/// `Err` from `apply` says what was expected.
pub(super) struct Def {
    pub(super) name: &'static str,
    pub(super) kind: fn() -> OptionType,
    pub(super) standalone: bool,
    pub(super) apply: fn(&mut Options, Given) -> Result<(), String>,
}

pub(super) fn string(default: &str) -> OptionType {
    OptionType::String {
        default: default.to_owned(),
    }
}

pub(super) fn spin(default: i64, min: i64, max: i64) -> OptionType {
    OptionType::Spin { default, min, max }
}

pub(super) fn check(default: bool) -> OptionType {
    OptionType::Check { default }
}

/// Every option, in the order `uci` lists them: the one table `uci`,
/// `setoption` and the command-line flags read.
pub(super) const TABLE: [Def; 39] = [
    Def {
        name: "Evaluator",
        kind: || string(BUILTIN),
        standalone: false,
        apply: |o, v| {
            o.evaluator = v.text();
            Ok(())
        },
    },
    Def {
        name: "EvaluatorOptions",
        kind: || string(""),
        standalone: false,
        apply: |o, v| {
            let text = v.text();
            parse_child_options(&text)?;
            o.evaluator_options = text;
            Ok(())
        },
    },
    Def {
        name: "Opponent",
        kind: || string(""),
        standalone: false,
        apply: |o, v| {
            o.opponent = v.text();
            Ok(())
        },
    },
    Def {
        name: "OpponentOptions",
        kind: || string(""),
        standalone: false,
        apply: |o, v| {
            let text = v.text();
            parse_child_options(&text)?;
            o.opponent_options = text;
            Ok(())
        },
    },
    Def {
        name: "Workers",
        kind: || string(""),
        standalone: false,
        apply: |o, v| {
            let text = v.text();
            // Empty (the default, which GUIs send back): the pool comes
            // from `Evaluator`, `Opponent` and `Threads`.
            if !text.trim().is_empty() {
                parse_workers(&text).map_err(|e| format!("usable: {e}"))?;
            }
            o.workers = text;
            Ok(())
        },
    },
    Def {
        name: "Threads",
        kind: || spin(1, 1, mpcmc_builtin::MAX_THREADS as i64),
        standalone: true,
        apply: |o, v| {
            o.threads = v.number() as u32;
            Ok(())
        },
    },
    Def {
        name: "VirtualWorkers",
        kind: || spin(0, 0, MAX_VIRTUAL_WORKERS as i64),
        standalone: false,
        apply: |o, v| {
            o.virtual_workers = v.number() as usize;
            Ok(())
        },
    },
    Def {
        name: "ChildThreads",
        kind: || spin(0, 0, mpcmc_builtin::MAX_THREADS as i64),
        standalone: false,
        apply: |o, v| {
            o.child_threads = v.number() as u32;
            Ok(())
        },
    },
    Def {
        name: "Hash",
        kind: || spin(DEFAULT_HASH_MB.into(), 1, MAX_HASH_MB.into()),
        standalone: true,
        apply: |o, v| {
            o.hash = v.number() as u32;
            Ok(())
        },
    },
    Def {
        name: "Lookahead",
        kind: || OptionType::Combo {
            default: Lookahead::One.name().to_owned(),
            vars: Lookahead::ALL.map(|l| l.name().to_owned()).to_vec(),
        },
        standalone: false,
        apply: |o, v| {
            o.lookahead = v
                .text()
                .parse()
                .map_err(|_| "half, one, two or three".to_owned())?;
            Ok(())
        },
    },
    Def {
        name: "PruneWidth",
        kind: || spin(PRUNE_WIDTH as i64, 1, 256),
        standalone: false,
        apply: |o, v| {
            o.prune_width = v.number() as usize;
            Ok(())
        },
    },
    Def {
        name: "Fortify",
        kind: || check(true),
        standalone: false,
        apply: |o, v| {
            o.fortify = v.on();
            Ok(())
        },
    },
    Def {
        name: "FortifyMargin",
        kind: || spin(0, -10_000, 10_000),
        standalone: false,
        apply: |o, v| {
            o.fortify_margin = v.number() as i32;
            Ok(())
        },
    },
    Def {
        name: "ReplyWeight",
        kind: || spin(i64::from(REPLY_WEIGHT), 0, 100),
        standalone: false,
        apply: |o, v| {
            o.reply_weight = Some(v.number() as u32);
            Ok(())
        },
    },
    Def {
        name: "ChildNodes",
        kind: || spin(0, 0, 1_000_000_000),
        standalone: false,
        apply: |o, v| {
            o.child_nodes = v.number() as u64;
            Ok(())
        },
    },
    Def {
        name: "ChildMoveTime",
        kind: || spin(0, 0, 3_600_000),
        standalone: false,
        apply: |o, v| {
            o.child_movetime = v.number() as u64;
            Ok(())
        },
    },
    Def {
        name: "Memoryless",
        kind: || check(false),
        standalone: false,
        apply: |o, v| {
            o.memoryless = v.on();
            Ok(())
        },
    },
    Def {
        name: "Clear Hash",
        kind: || OptionType::Button,
        standalone: false,
        apply: |o, _| {
            o.clear_now = true;
            Ok(())
        },
    },
    Def {
        name: "MoveOverhead",
        kind: || spin(DEFAULT_MOVE_OVERHEAD_MS as i64, 0, 10_000),
        standalone: true,
        apply: |o, v| {
            o.move_overhead = v.number() as u64;
            Ok(())
        },
    },
    Def {
        name: "Ponder",
        kind: || check(false),
        standalone: true,
        apply: |o, v| {
            o.ponder = v.on();
            Ok(())
        },
    },
    Def {
        name: "MultiPV",
        kind: || spin(1, 1, 256),
        standalone: false,
        apply: |o, v| {
            o.multi_pv = v.number() as u32;
            Ok(())
        },
    },
    Def {
        name: "ShowDecisions",
        kind: || check(false),
        standalone: false,
        apply: |o, v| {
            o.show_decisions = v.on();
            Ok(())
        },
    },
    Def {
        name: "UCI_ShowWDL",
        kind: || check(false),
        standalone: false,
        apply: |o, v| {
            o.show_wdl = v.on();
            Ok(())
        },
    },
    Def {
        name: "UCI_Chess960",
        kind: || check(false),
        standalone: true,
        apply: |o, v| {
            o.chess960 = v.on();
            Ok(())
        },
    },
    Def {
        name: "UCI_Variant",
        kind: || OptionType::Combo {
            default: Rules::default().uci().to_owned(),
            vars: Rules::all().map(|r| r.uci().to_owned()).collect(),
        },
        standalone: true,
        apply: |o, v| {
            let name = v.text().trim().to_ascii_lowercase();
            o.variant = Rules::from_uci(&name).ok_or_else(|| {
                let names: Vec<&str> = Rules::all().map(Rules::uci).collect();
                format!("one of {}", names.join(", "))
            })?;
            Ok(())
        },
    },
    Def {
        name: "UCI_LimitStrength",
        kind: || check(false),
        standalone: false,
        apply: |o, v| {
            o.limit_strength = v.on();
            Ok(())
        },
    },
    Def {
        name: "UCI_Elo",
        kind: || {
            spin(
                i64::from(DEFAULT_ELO),
                i64::from(MIN_ELO),
                i64::from(MAX_ELO),
            )
        },
        standalone: false,
        apply: |o, v| {
            o.elo = v.number() as u32;
            Ok(())
        },
    },
    Def {
        name: "UCI_Opponent",
        kind: || string(""),
        standalone: false,
        // A value that does not parse leaves the model as it was.
        apply: |o, v| {
            let text = v.text();
            o.uci_opponent = if text.trim().is_empty() {
                None
            } else {
                Some(text.parse().map_err(|e: mpcmc_protocol::OpponentError| {
                    format!(
                        "'<title|none> <elo|none> <computer|human> <name>' ({})",
                        e.reason
                    )
                })?)
            };
            Ok(())
        },
    },
    Def {
        name: "PersonModel",
        kind: || check(false),
        standalone: false,
        apply: |o, v| {
            o.person_model = v.on();
            Ok(())
        },
    },
    Def {
        name: "UCI_RatingAdv",
        kind: || spin(0, -10_000, 10_000),
        standalone: false,
        apply: |o, v| {
            o.rating_adv = Some(v.number() as i32);
            Ok(())
        },
    },
    Def {
        name: "Seed",
        kind: || spin(0, 0, i64::from(i32::MAX)),
        standalone: false,
        apply: |o, v| {
            o.seed = v.number() as u64;
            Ok(())
        },
    },
    Def {
        name: "OwnBook",
        kind: || check(false),
        standalone: false,
        apply: |o, v| {
            o.own_book = v.on();
            Ok(())
        },
    },
    Def {
        name: "BookFile",
        kind: || string(""),
        standalone: false,
        // Opened at the next `go` that uses it; one that cannot be read
        // then is said in an `info string`.
        apply: |o, v| {
            o.book_file = v.text();
            Ok(())
        },
    },
    Def {
        name: "LevelBook",
        kind: || check(true),
        standalone: false,
        apply: |o, v| {
            o.level_book = v.on();
            Ok(())
        },
    },
    Def {
        name: "HumanTime",
        kind: || check(false),
        standalone: false,
        apply: |o, v| {
            o.human_time = v.on();
            Ok(())
        },
    },
    Def {
        name: "SyzygyPath",
        kind: || string(""),
        standalone: true,
        // Opened at the next `go`; a path that cannot be read then is said
        // in an `info string`. Children that declare it get it too.
        apply: |o, v| {
            o.syzygy_path = v.text();
            Ok(())
        },
    },
    Def {
        name: "Syzygy50MoveRule",
        kind: || check(true),
        standalone: true,
        apply: |o, v| {
            o.syzygy_50_move_rule = v.on();
            Ok(())
        },
    },
    Def {
        name: "LogFile",
        kind: || string(""),
        standalone: true,
        // Takes effect at once: diagnostics go there from now on.
        apply: |o, v| {
            let path = v.text();
            crate::log::set_file(&path)
                .map_err(|e| format!("a file that can be opened for writing ({e})"))?;
            o.log_file = path;
            Ok(())
        },
    },
    Def {
        name: "TraceFile",
        kind: || string(""),
        standalone: false,
        // Written at each decision; a file that cannot be written then is
        // said in an `info string`.
        apply: |o, v| {
            o.trace_file = v.text();
            Ok(())
        },
    },
];

/// The option named `name`, compared case-insensitively (GUIs differ).
pub(super) fn def(name: &str) -> Option<&'static Def> {
    TABLE
        .iter()
        .find(|d| d.name.eq_ignore_ascii_case(name.trim()))
}

/// Every option's name, in the order `uci` lists them.
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|d| d.name)
}
