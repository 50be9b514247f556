//! The UCI options: one table, read by the `uci` answer, by `setoption`, by the
//! command-line flags and (through a test) by `uci-options.md`.
//!
//! Names compare case-insensitively, as GUIs differ in how they write them.
//! Each option is also a command-line flag, lc0 style: `ChildNodes` is
//! `--child-nodes=2000`; flags are applied before any `setoption`.

use mpcmc_protocol::{EMPTY, OptionSpec, OptionType, UciOpponent, game::Rules};
use shakmaty::{CastlingMode, variant::Variant};

use crate::{
    children::{
        PoolConfig,
        assembly::{PoolRequest, parse_child_options},
        command::{EngineCommand, file_name, parse_workers},
        inprocess::{BUILTIN, is_builtin},
    },
    mpc::{
        Lookahead, Role, Settings,
        calibration::{Calibration, MAX_ELO, MIN_ELO},
        decision::{PRUNE_WIDTH, REPLY_WEIGHT},
        level::Level,
    },
};

/// The levels' calibration for a child started by `command`: the
/// built-in engine's for `builtin` (or `mpcmc engine` through a launcher),
/// Stockfish's when a word of it names a program called `stockfish…`
/// (`/usr/games/stockfish`, `ssh host stockfish`); `None` for any other
/// engine, whose levels count the built-in engine's nodes, uncalibrated.
pub fn calibration_of(command: &str) -> Option<Calibration> {
    if is_builtin(command) {
        return Some(Calibration::Builtin);
    }
    let command = EngineCommand::parse(command).ok()?;
    let words: Vec<&str> = command.words().collect();
    let named = |word: &str, prefix: &str| {
        file_name(word).is_some_and(|n| n.to_ascii_lowercase().starts_with(prefix))
    };
    if words.iter().any(|w| named(w, "stockfish")) {
        return Some(Calibration::Stockfish);
    }
    words
        .windows(2)
        .any(|w| named(w[0], "mpcmc") && w[1] == "engine")
        .then_some(Calibration::Builtin)
}

/// The levels' calibration for the children that serve `role` in
/// `config` (the first of them): the built-in engine's for an engine
/// uncalibrated ([`calibration_of`]) or no configuration.
fn calibration_in(config: Option<&PoolConfig>, role: Role) -> Calibration {
    config
        .and_then(|c| c.first(role))
        .and_then(|c| calibration_of(&c.command))
        .unwrap_or_default()
}

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

/// The options of `mpcmc engine`, the built-in engine alone: the rows of
/// the one table it declares, set the same way.
pub struct EngineAlone(pub Options);

impl mpcmc_builtin::uci::Settings for EngineAlone {
    type Error = OptionError;

    /// The meta-engine's table, but `UCI_Variant` offers only the games
    /// the built-in engine knows the rules of.
    fn declared(&self) -> Vec<OptionSpec> {
        let mut specs = Options::specs(true);
        for spec in &mut specs {
            if let OptionType::Combo { vars, .. } = &mut spec.kind
                && spec.name == "UCI_Variant"
            {
                vars.retain(|v| Rules::from_uci(v).is_some_and(|r| r.board().is_some()));
            }
        }
        specs
    }

    fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), OptionError> {
        if !Options::standalone_declares(name) {
            return Err(OptionError::Unknown(name.to_owned()));
        }
        let before = self.0.variant;
        self.0.set(name, value)?;
        if self.0.variant.board().is_none() {
            self.0.variant = before;
            return Err(OptionError::BadValue {
                name: "UCI_Variant".to_owned(),
                value: value.unwrap_or_default().to_owned(),
                expected: "a game the built-in engine plays (chess or a lichess variant)"
                    .to_owned(),
            });
        }
        Ok(())
    }

    fn hash_mb(&self) -> usize {
        self.0.hash as usize
    }

    fn threads(&self) -> usize {
        self.0.threads as usize
    }

    fn move_overhead(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.0.move_overhead)
    }

    fn castling_mode(&self) -> CastlingMode {
        self.0.castling_mode()
    }

    fn variant(&self) -> Variant {
        self.0.variant.board().unwrap_or_default()
    }

    fn syzygy(&self) -> (String, bool) {
        (
            self.0.syzygy_path.trim().to_owned(),
            self.0.syzygy_50_move_rule,
        )
    }
}

/// Option values, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub evaluator: String,
    pub evaluator_options: String,
    pub opponent: String,
    pub opponent_options: String,
    /// `Workers`: the pool as entries of command lines and slots (empty:
    /// `Threads` over `Evaluator` and `Opponent`).
    pub workers: String,
    pub threads: u32,
    /// `VirtualWorkers`: `go nodes B` as `B` nodes for each of this many
    /// workers, time counted in nodes (one even pass with a worker for every
    /// root move, [`crate::mpc::budget::virtual_pass`], else
    /// [`crate::mpc::budget::virtual_rounds`]);
    /// 0 or 1: off.
    pub virtual_workers: usize,
    pub child_threads: u32,
    pub hash: u32,
    pub lookahead: Lookahead,
    pub fortify: bool,
    pub fortify_margin: i32,
    /// Percent of a move's value from the nominal opponent's own score;
    /// `None` until set: [`REPLY_WEIGHT`] with warm children, 0 with
    /// `Memoryless` (the paper's exact rule).
    pub reply_weight: Option<u32>,
    /// Positions each deeper step of a multistep lookahead expands.
    pub prune_width: usize,
    pub child_nodes: u64,
    pub child_movetime: u64,
    pub memoryless: bool,
    /// `Clear Hash` was pressed: the session clears the children's hash.
    pub clear_now: bool,
    pub move_overhead: u64,
    pub ponder: bool,
    pub multi_pv: u32,
    /// Each decision's rule and rounds as an `info string`.
    pub show_decisions: bool,
    /// `UCI_ShowWDL`: the children's win/draw/loss shown with the lines.
    pub show_wdl: bool,
    pub chess960: bool,
    /// `UCI_Variant`: the game played; every child must offer it (else
    /// the built-in engine plays it alone).
    pub variant: Rules,
    pub log_file: String,
    pub trace_file: String,
    /// `UCI_LimitStrength`: play at `UCI_Elo` ([`Options::level`]).
    pub limit_strength: bool,
    pub elo: u32,
    /// `UCI_Opponent`, when a GUI sent one that parses (`None` for the
    /// empty string).
    pub uci_opponent: Option<UciOpponent>,
    /// `UCI_RatingAdv`, when a GUI sent it: our rating less the opponent's.
    pub rating_adv: Option<i32>,
    /// `Seed`: the level's and the book's draws start from it at each new
    /// game; 0 draws a fresh seed.
    pub seed: u64,
    pub own_book: bool,
    pub book_file: String,
    /// `LevelBook`: at a level, the built-in human openings
    /// ([`crate::book::Book::openings`]) where `OwnBook` names none.
    pub level_book: bool,
    /// `PersonModel`: a rated human `UCI_Opponent` is modelled by the
    /// nominal opponent ([`Options::person_in`]); off by default, as it
    /// measured negative.
    pub person_model: bool,
    /// `HumanTime`: at a level on a game clock, the move is held as long
    /// as a person would think over it.
    pub human_time: bool,
    /// `SyzygyPath`: tablebase directories, separated as Stockfish does.
    pub syzygy_path: String,
    /// `Syzygy50MoveRule`: tablebase values under the fifty-move rule.
    pub syzygy_50_move_rule: bool,
}

/// `UCI_Elo`'s default.
pub const DEFAULT_ELO: u32 = 1500;
/// `Hash`'s default and most, in MB: what the children share.
pub const DEFAULT_HASH_MB: u32 = 16;
pub const MAX_HASH_MB: u32 = 65_536;
/// `VirtualWorkers`' most.
pub const MAX_VIRTUAL_WORKERS: usize = 1024;
/// `MoveOverhead`'s default, in milliseconds (Stockfish's).
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 10;

impl Default for Options {
    fn default() -> Self {
        Options {
            evaluator: BUILTIN.to_owned(),
            evaluator_options: String::new(),
            opponent: String::new(),
            opponent_options: String::new(),
            workers: String::new(),
            threads: 1,
            virtual_workers: 0,
            child_threads: 0,
            hash: DEFAULT_HASH_MB,
            lookahead: Lookahead::One,
            fortify: true,
            fortify_margin: 0,
            reply_weight: None,
            prune_width: PRUNE_WIDTH,
            child_nodes: 0,
            child_movetime: 0,
            memoryless: false,
            clear_now: false,
            move_overhead: DEFAULT_MOVE_OVERHEAD_MS,
            ponder: false,
            multi_pv: 1,
            show_decisions: false,
            show_wdl: false,
            chess960: false,
            variant: Rules::default(),
            log_file: String::new(),
            trace_file: String::new(),
            limit_strength: false,
            elo: DEFAULT_ELO,
            uci_opponent: None,
            rating_adv: None,
            seed: 0,
            own_book: false,
            book_file: String::new(),
            level_book: true,
            person_model: false,
            human_time: false,
            syzygy_path: String::new(),
            syzygy_50_move_rule: true,
        }
    }
}

/// A `setoption` value, read by the option's type.
enum Given {
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
struct Def {
    name: &'static str,
    kind: fn() -> OptionType,
    standalone: bool,
    apply: fn(&mut Options, Given) -> Result<(), String>,
}

fn string(default: &str) -> OptionType {
    OptionType::String {
        default: default.to_owned(),
    }
}

fn spin(default: i64, min: i64, max: i64) -> OptionType {
    OptionType::Spin { default, min, max }
}

fn check(default: bool) -> OptionType {
    OptionType::Check { default }
}

/// Every option, in the order `uci` lists them: the one table `uci`,
/// `setoption` and the command-line flags read.
const TABLE: [Def; 39] = [
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
fn def(name: &str) -> Option<&'static Def> {
    TABLE
        .iter()
        .find(|d| d.name.eq_ignore_ascii_case(name.trim()))
}

/// Every option's name, in the order `uci` lists them.
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|d| d.name)
}

/// Each option's row of `uci-options.md`'s first table: the cells
/// (`""`, name, type, default, range, meaning, …), backticks removed;
/// read once. The document is the one place the options are described.
fn documented_rows() -> &'static [Vec<String>] {
    static ROWS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    ROWS.get_or_init(|| {
        include_str!("../../uci-options.md")
            .lines()
            .skip_while(|l| !l.starts_with("| `"))
            .take_while(|l| l.starts_with("| `"))
            .map(|l| {
                l.replace("\\|", "/")
                    .split('|')
                    .map(|c| c.trim().replace('`', ""))
                    .collect()
            })
            .collect()
    })
}

/// One line of help for option `name`: the first sentence of its meaning,
/// its default and range.
pub fn flag_help(name: &str) -> String {
    let Some(row) = documented_rows()
        .iter()
        .find(|r| r.get(1).is_some_and(|n| n == name))
    else {
        return format!("Sets the UCI option {name}");
    };
    const MOST: usize = 160;
    let meaning = row.get(5).map_or("", String::as_str);
    // The first sentence ("e.g. " ends none), at most MOST characters.
    let end = meaning
        .match_indices(". ")
        .map(|(i, _)| i)
        .find(|&i| !meaning[..i].ends_with("e.g") && !meaning[..i].ends_with("i.e"))
        .unwrap_or(meaning.len());
    let mut first = meaning[..end].trim_end_matches('.').to_owned();
    if first.chars().count() > MOST {
        let cut: String = first.chars().take(MOST).collect();
        let words = cut[..cut.rfind(' ').unwrap_or(cut.len())].trim_end_matches([',', ';', ':']);
        first = format!("{words}…");
    } else {
        first.push('.');
    }
    let mut help = format!("{name}: {first}");
    match (row[3].as_str(), row[4].as_str()) {
        ("", "") => {}
        (default, "") => help.push_str(&format!(" Default {default}.")),
        (default, range) => help.push_str(&format!(" Default {default}; {range}.")),
    }
    help
}

/// The options that are also command-line flags: all but the buttons (an
/// action, not a setting).
pub fn flag_names() -> impl Iterator<Item = &'static str> {
    TABLE
        .iter()
        .filter(|d| !matches!((d.kind)(), OptionType::Button))
        .map(|d| d.name)
}

impl Options {
    /// The declaration of option `name` (any case), with its default.
    pub fn spec(name: &str) -> Option<OptionSpec> {
        def(name).map(|d| OptionSpec {
            name: d.name.to_owned(),
            kind: (d.kind)(),
        })
    }

    /// Every declaration, as `uci` lists them; `standalone`: only those of
    /// `mpcmc engine`.
    pub fn specs(standalone: bool) -> Vec<OptionSpec> {
        TABLE
            .iter()
            .filter(|d| d.standalone || !standalone)
            .filter_map(|d| Options::spec(d.name))
            .collect()
    }

    /// Whether `mpcmc engine` declares option `name` (any case).
    pub fn standalone_declares(name: &str) -> bool {
        def(name).is_some_and(|d| d.standalone)
    }

    /// Applies `setoption name <name> value <value>`.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), OptionError> {
        let def = def(name).ok_or_else(|| OptionError::Unknown(name.to_owned()))?;
        // GUIs echo back the `default <empty>` that `uci` prints for an empty
        // string; like Stockfish, read it as the empty string.
        let value = value
            .map(str::trim)
            .map(|v| if v == EMPTY { "" } else { v });
        let bad = |value: &str, expected: String| OptionError::BadValue {
            name: def.name.to_owned(),
            value: value.to_owned(),
            expected,
        };
        let given = match ((def.kind)(), value) {
            (OptionType::String { .. }, v) => Given::Text(v.unwrap_or("").to_owned()),
            // A button is pressed, with no value (one sent is ignored).
            (OptionType::Button, _) => Given::Text(String::new()),
            (_, None) => {
                return Err(OptionError::MissingValue {
                    name: def.name.to_owned(),
                });
            }
            (OptionType::Spin { min, max, .. }, Some(v)) => {
                let expected = || format!("a whole number from {min} to {max}");
                let n: i64 = v.parse().map_err(|_| bad(v, expected()))?;
                if n < min || n > max {
                    return Err(bad(v, expected()));
                }
                Given::Number(n)
            }
            (OptionType::Check { .. }, Some(v)) => match v.to_ascii_lowercase().as_str() {
                "true" => Given::On(true),
                "false" => Given::On(false),
                _ => return Err(bad(v, "true or false".to_owned())),
            },
            (OptionType::Combo { .. }, Some(v)) => Given::Text(v.to_owned()),
        };
        let text = value.unwrap_or("").to_owned();
        (def.apply)(self, given).map_err(|expected| bad(&text, expected))
    }

    pub fn castling_mode(&self) -> CastlingMode {
        if self.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        }
    }

    pub fn settings(&self) -> Settings {
        self.settings_in(self.pool_config().ok().as_ref())
    }

    /// [`Options::settings`] over the children of `config` (a running
    /// pool's, so that a search does not build the configuration again).
    pub fn settings_in(&self, config: Option<&PoolConfig>) -> Settings {
        Settings {
            lookahead: self.lookahead,
            fortify: self.fortify,
            fortify_margin: self.fortify_margin,
            prune_width: self.prune_width,
            // Memoryless children are the paper's exact setting: its even
            // pass and the evaluator's values alone, unless asked otherwise.
            even_root: self.memoryless,
            reply_weight: self.reply_weight.unwrap_or(if self.memoryless {
                0
            } else {
                REPLY_WEIGHT
            }),
            level: None,
            person: self.person_in(config),
        }
    }

    /// [`Options::level_in`] over the children these options ask for (a
    /// search asks over its running pool's).
    #[cfg(test)]
    pub fn level(&self) -> Option<Level> {
        self.level_in(self.pool_config().ok().as_ref())
    }

    /// The level to play at (`UCI_LimitStrength`), if any, over the
    /// evaluator's engine in `config`. `None` also from that engine's full
    /// strength up ([`Level::at_full_strength`]): the engine then plays
    /// unlimited.
    pub fn level_in(&self, config: Option<&PoolConfig>) -> Option<Level> {
        self.asked_level_in(config)
            .filter(|l| !l.at_full_strength())
    }

    /// The level `UCI_LimitStrength` and `UCI_Elo` ask for, over the
    /// evaluator's engine in `config`, even one it cannot play below its
    /// full strength.
    pub fn asked_level_in(&self, config: Option<&PoolConfig>) -> Option<Level> {
        self.limit_strength
            .then(|| Level::new(self.elo).over(calibration_in(config, Role::Evaluator)))
    }

    /// [`Options::person_in`] over the children these options ask for.
    #[cfg(test)]
    pub fn person(&self) -> Option<Level> {
        self.person_in(self.pool_config().ok().as_ref())
    }

    /// The person the nominal opponent models, at their rating: a human
    /// `UCI_Opponent` with a rating, or without one the level asked of us
    /// less `UCI_RatingAdv` when both are known, over the engines in
    /// `config`, when `PersonModel` is on. `None`: off, a computer, no
    /// rating, or a rating at or above the opponent engine's full strength
    /// (the nominal opponent is then the child at full strength).
    pub fn person_in(&self, config: Option<&PoolConfig>) -> Option<Level> {
        let opponent = self
            .uci_opponent
            .as_ref()
            .filter(|o| o.human && self.person_model)?;
        let elo = match (opponent.elo, self.asked_level_in(config), self.rating_adv) {
            (Some(elo), _, _) => elo,
            (None, Some(level), Some(adv)) => {
                u32::try_from(i64::from(level.elo()) - i64::from(adv)).unwrap_or(0)
            }
            _ => return None,
        };
        Some(Level::new(elo).over(calibration_in(config, Role::Opponent)))
            .filter(|l| !l.at_full_strength())
    }

    /// Children clear their hash before every call: `Memoryless`, or at a
    /// level (below the engine's full strength) with a fixed `Seed`, where
    /// each call is then a function of its position and budget alone and a
    /// game repeats from its seed.
    fn clears_hash_in(&self, config: &PoolConfig) -> bool {
        self.memoryless || (self.seed != 0 && self.level_in(Some(config)).is_some())
    }

    /// The child processes these options ask for
    /// ([`PoolRequest::config`]), each child's hash cleared before every
    /// call when [`Options::clears_hash_in`] says so.
    pub fn pool_config(&self) -> Result<PoolConfig, OptionError> {
        let request = PoolRequest {
            evaluator: &self.evaluator,
            evaluator_options: &self.evaluator_options,
            opponent: &self.opponent,
            opponent_options: &self.opponent_options,
            workers: &self.workers,
            hash_mb: self.usable_hash(),
            cores: self.cores(),
            threads_per_child: self.threads_per_child(),
            search_slots: self.search_slots(),
            castling: self.castling_mode(),
            variant: self.variant,
            chess960: self.chess960,
            show_wdl: self.show_wdl,
            syzygy_path: &self.syzygy_path,
            syzygy_50_move_rule: self.syzygy_50_move_rule,
        };
        let mut config = request.config().map_err(|bad| OptionError::BadValue {
            name: bad.option.to_owned(),
            value: bad.value,
            expected: bad.expected,
        })?;
        config.set_clear_hash(self.clears_hash_in(&config));
        Ok(config)
    }

    /// How many child searches run at once: `Threads` cores, `ChildThreads`
    /// of them to each search (at least one search).
    pub fn search_slots(&self) -> usize {
        (self.cores() / self.threads_per_child()).max(1) as usize
    }

    /// `Hash`, held to what this machine can hold
    /// ([`mpcmc_builtin::usable_hash_mb`]).
    pub fn usable_hash(&self) -> u32 {
        mpcmc_builtin::usable_hash_mb(self.hash as usize).value as u32
    }

    /// `Threads`, held to the cores of this machine
    /// ([`mpcmc_builtin::usable_threads`]): more children searching at once
    /// than cores only lose time to the scheduler.
    pub fn cores(&self) -> u32 {
        mpcmc_builtin::usable_threads(self.threads as usize).value as u32
    }

    /// `ChildThreads`, or for 0 (auto): one when every call has a budget of
    /// its own (`ChildNodes`, `ChildMoveTime`: the paper's setting, where
    /// many calls at once are the point; a level's), else every core (`Threads`) in
    /// one child: at a real clock on 2 cores one search with both threads
    /// played better than one thread in each of two searches, over
    /// Stockfish and over the built-in engine.
    pub fn threads_per_child(&self) -> u32 {
        match self.child_threads {
            0 if self.child_nodes > 0
                || self.child_movetime > 0
                || self.limit_strength
                || !self.workers.trim().is_empty() =>
            {
                1
            }
            0 => self.cores(),
            n => n,
        }
    }
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
    use crate::children::ChildConfig;

    /// The last value `c` sets for option `name`.
    fn option(c: &ChildConfig, name: &str) -> Option<String> {
        c.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

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
        o.set("Lookahead", Some("three")).expect("combo");
        o.set("prunewidth", Some("5")).expect("spin");
        assert_eq!(
            (o.settings().lookahead, o.settings().prune_width),
            (Lookahead::Three, 5)
        );
        assert_eq!(o.evaluator, "/usr/games/stockfish --x");
        let errors = [
            ("Threads", Some("0"), "from 1 to 256"),
            ("Threads", Some("two"), "'two'"),
            ("Fortify", Some("yes"), "true or false"),
            ("Lookahead", Some("four"), "half, one, two or three"),
            ("PruneWidth", Some("0"), "from 1 to 256"),
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

    /// uci-options.md, written by hand, is the independent record: its
    /// table has a row for every option with the declared type, default
    /// and range, and nothing else; its `mpcmc engine` section names the
    /// options the built-in engine alone declares.
    #[test]
    fn the_table_matches_uci_options_md() {
        // The first table: the options (later tables compare others).
        let rows = documented_rows();
        let documented: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(documented, names().collect::<Vec<_>>());
        for row in rows {
            let spec = Options::spec(&row[1]).expect("declared");
            let (kind, default, range) = match spec.kind {
                OptionType::Check { default } => ("check", default.to_string(), String::new()),
                OptionType::Spin { default, min, max } => (
                    "spin",
                    default.to_string(),
                    format!("{min}–{max}").replace('-', "−"),
                ),
                OptionType::Combo { default, vars } => ("combo", default, vars.join(", ")),
                OptionType::String { default } if default.is_empty() => {
                    ("string", "empty".to_owned(), row[4].clone())
                }
                OptionType::String { default } => ("string", default, row[4].clone()),
                OptionType::Button => ("button", String::new(), String::new()),
            };
            assert_eq!(
                [row[2].as_str(), row[3].as_str(), row[4].as_str()],
                [kind, default.as_str(), range.as_str()],
                "{}",
                row[1]
            );
        }
        let standalone = include_str!("../../uci-options.md")
            .split("## `mpcmc engine`")
            .nth(1)
            .and_then(|s| s.split("declares").nth(1))
            .and_then(|s| s.split("(as above)").next())
            .expect("the mpcmc engine section");
        let named: Vec<String> = standalone
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect();
        let declared: Vec<String> = Options::specs(true).into_iter().map(|s| s.name).collect();
        assert_eq!(named, declared);
        assert_eq!(flag_name("ChildNodes"), "child-nodes");
        assert_eq!(flag_name("UCI_Chess960"), "uci-chess960");
        assert_eq!(flag_name("MoveOverhead"), "move-overhead");
    }

    /// Each option's declared default is the value `Options::default`
    /// holds (the two are written apart): setting every option to the
    /// default it declares changes nothing. Two are unset until sent:
    /// `ReplyWeight` (its default follows `Memoryless`) and
    /// `UCI_RatingAdv` (only a GUI that knows the ratings sends it).
    #[test]
    fn the_declared_defaults_are_the_defaults() {
        let unset = ["ReplyWeight", "UCI_RatingAdv"];
        for def in TABLE.iter().filter(|d| !unset.contains(&d.name)) {
            let value = match (def.kind)() {
                OptionType::Check { default } => default.to_string(),
                OptionType::Spin { default, .. } => default.to_string(),
                OptionType::Combo { default, .. } | OptionType::String { default } => default,
                OptionType::Button => continue,
            };
            let mut o = Options::default();
            o.set(def.name, Some(&value)).expect(def.name);
            assert_eq!(o, Options::default(), "{} {value}", def.name);
        }
    }

    /// `ReplyWeight` mixes by default with warm children; `Memoryless` alone
    /// is the paper's rule (no mix), and a value set wins either way.
    #[test]
    fn reply_weight_defaults_by_memoryless_unless_set() {
        let weight = |sets: &[(&str, &str)]| {
            let mut o = Options::default();
            for (name, value) in sets {
                o.set(name, Some(value)).expect("valid");
            }
            o.settings().reply_weight
        };
        assert_eq!(weight(&[]), 50);
        assert_eq!(weight(&[("Memoryless", "true")]), 0);
        assert_eq!(weight(&[("ReplyWeight", "0")]), 0);
        assert_eq!(weight(&[("Memoryless", "true"), ("ReplyWeight", "30")]), 30);
        assert_eq!(weight(&[("ReplyWeight", "30"), ("Memoryless", "true")]), 30);
        assert_eq!(
            weight(&[("Memoryless", "true"), ("Memoryless", "false")]),
            50
        );
    }

    /// The person the nominal opponent models: a rated human; an unrated
    /// one at our level less `UCI_RatingAdv` when both are known; never a
    /// computer. A value that does not parse leaves the model alone.
    #[test]
    fn the_person_is_a_rated_human() {
        let elo = |sets: &[(&str, &str)]| {
            let mut o = Options::default();
            o.set("PersonModel", Some("true")).expect("valid");
            for (name, value) in sets {
                o.set(name, Some(value)).expect("valid");
            }
            o.person().map(Level::elo)
        };
        assert_eq!(elo(&[]), None);
        assert_eq!(
            elo(&[("UCI_Opponent", "IM 2000 human Some Player")]),
            Some(2000)
        );
        // Off by default: the child itself.
        let mut off = Options::default();
        off.set("UCI_Opponent", Some("IM 2000 human Some Player"))
            .expect("valid");
        assert_eq!(off.person(), None);
        // Above the built-in engine's full strength it plays unlimited;
        // Stockfish models such a person at their rating.
        let gm = ("UCI_Opponent", "GM 2500 human Garry Kasparov");
        assert_eq!(elo(&[gm]), None);
        assert_eq!(elo(&[("Opponent", "/usr/games/stockfish"), gm]), Some(2500));
        assert_eq!(elo(&[("UCI_Opponent", "BOT 2650 computer some-bot")]), None);
        assert_eq!(elo(&[("UCI_Opponent", "none none human Name")]), None);
        let unrated = ("UCI_Opponent", "none none human Name");
        let at_level = [("UCI_LimitStrength", "true"), ("UCI_Elo", "1500")];
        assert_eq!(elo(&[unrated, ("UCI_RatingAdv", "300")]), None);
        assert_eq!(
            elo(&[unrated, at_level[0], at_level[1], ("UCI_RatingAdv", "300")]),
            Some(1200)
        );
        // Our level as asked, though we play it at full strength.
        let capped = [("UCI_LimitStrength", "true"), ("UCI_Elo", "2400")];
        assert_eq!(
            elo(&[unrated, capped[0], capped[1], ("UCI_RatingAdv", "500")]),
            Some(1900)
        );
        // A person below the lowest level is modelled at the lowest.
        assert_eq!(elo(&[("UCI_Opponent", "none 200 human Kid")]), Some(600));
        let mut o = Options::default();
        o.set("PersonModel", Some("true")).expect("valid");
        o.set("UCI_Opponent", Some("none 1300 human test"))
            .expect("valid");
        let e = o
            .set("UCI_Opponent", Some("GM strong human X"))
            .expect_err("no rating");
        assert!(e.to_string().contains("'GM strong human X'"), "{e}");
        assert_eq!(o.person().map(Level::elo), Some(1300));
        assert_eq!(o.settings().person, o.person());
        o.set("UCI_Opponent", Some("")).expect("empty");
        assert_eq!(o.person(), None);
    }

    /// A level counts the nodes of the engine it runs over: the
    /// evaluator's for our own moves, the opponent role's for the person.
    #[test]
    fn the_levels_calibration_follows_the_engine() {
        use Calibration::{Builtin, Stockfish};
        for (command, want) in [
            ("builtin", Some(Builtin)),
            (" BuiltIn ", Some(Builtin)),
            ("/usr/games/stockfish", Some(Stockfish)),
            ("stockfish_16_x86-64-avx2", Some(Stockfish)),
            ("ssh -p 2222 host /opt/Stockfish/stockfish", Some(Stockfish)),
            ("slurm /usr/games/stockfish", Some(Stockfish)),
            ("ssh host /opt/bin/mpcmc engine", Some(Builtin)),
            ("'/tmp/a b/mpcmc' engine", Some(Builtin)),
            ("/opt/mpcmc", None),
            ("/usr/games/lc0", None),
            ("/tmp/stockfish-dir/other-engine", None),
            ("'unclosed", None),
        ] {
            assert_eq!(calibration_of(command), want, "{command}");
        }
        let mut o = Options::default();
        for (name, value) in [
            ("UCI_LimitStrength", "true"),
            ("UCI_Elo", "1500"),
            ("UCI_Opponent", "none 1300 human test"),
            ("PersonModel", "true"),
        ] {
            o.set(name, Some(value)).expect("valid");
        }
        let over = |o: &Options| {
            (
                o.level().map(Level::calibration),
                o.person().map(Level::calibration),
            )
        };
        assert_eq!(over(&o), (Some(Builtin), Some(Builtin)));
        o.set("Evaluator", Some("/usr/games/stockfish"))
            .expect("set");
        assert_eq!(over(&o), (Some(Stockfish), Some(Stockfish)));
        o.set("Opponent", Some("builtin")).expect("set");
        assert_eq!(over(&o), (Some(Stockfish), Some(Builtin)));
        o.set("Evaluator", Some("/usr/games/lc0")).expect("set");
        assert_eq!(over(&o), (Some(Builtin), Some(Builtin)));
        assert_eq!(o.level().map(Level::elo), Some(1500));
        // From the evaluator's engine's full strength up, no level: the
        // engine unlimited (the built-in engine's budgets here).
        o.set("UCI_Elo", Some("2600")).expect("set");
        assert_eq!(o.level(), None);
        assert_eq!(
            o.asked_level_in(o.pool_config().ok().as_ref())
                .map(Level::elo),
            Some(2600)
        );
        o.set("Evaluator", Some("/usr/games/stockfish"))
            .expect("set");
        assert_eq!(o.level().map(Level::elo), Some(2600));
    }

    /// With a fixed `Seed`, children clear their hash at a level (each call
    /// a function of its position and budget) but not at a level the engine
    /// plays at full strength, nor without a level; `Memoryless` always.
    #[test]
    fn children_clear_their_hash_at_a_seeded_level_below_full_strength() {
        let clears = |o: &Options| {
            let c = o.pool_config().expect("config");
            let all: Vec<bool> = c
                .groups
                .iter()
                .flat_map(|g| [&g.evaluator, &g.opponent])
                .flatten()
                .map(|c| c.clear_hash)
                .collect();
            assert!(all.iter().all(|&x| x == all[0]), "{all:?}");
            all[0]
        };
        let mut o = Options::default();
        o.set("Seed", Some("7")).expect("set");
        assert!(!clears(&o));
        o.set("UCI_LimitStrength", Some("true")).expect("set");
        o.set("UCI_Elo", Some("1800")).expect("set");
        assert!(clears(&o));
        o.set("UCI_Elo", Some("2600")).expect("set");
        assert_eq!(o.level(), None);
        assert!(!clears(&o));
        o.set("Evaluator", Some("/usr/games/stockfish"))
            .expect("set");
        assert!(clears(&o));
        o.set("Seed", Some("0")).expect("set");
        assert!(!clears(&o));
        o.set("Memoryless", Some("true")).expect("set");
        assert!(clears(&o));
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
        assert_eq!(
            c.first(Role::Opponent).expect("opponent").command,
            "/usr/games/stockfish"
        );
        assert_eq!(
            c.first(Role::Opponent).expect("opponent").options.last(),
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
    fn syzygy_path_goes_to_every_child() {
        let mut o = Options::default();
        o.set("SyzygyPath", Some("/tb/345:/tb/6")).expect("path");
        o.set("Workers", Some("builtin; /usr/games/stockfish"))
            .expect("workers");
        let c = o.pool_config().expect("config");
        let path = |g: usize| {
            let child = c.groups[g].evaluator.as_ref().expect("evaluator");
            option(child, "SyzygyPath")
        };
        assert_eq!(path(0).as_deref(), Some("/tb/345:/tb/6"), "built-in");
        assert_eq!(path(1).as_deref(), Some("/tb/345:/tb/6"));
        o.set("Syzygy50MoveRule", Some("false")).expect("rule");
        let c = o.pool_config().expect("config");
        let stockfish = c.groups[1].evaluator.as_ref().expect("evaluator");
        assert_eq!(
            option(stockfish, "Syzygy50MoveRule").as_deref(),
            Some("false")
        );
    }

    #[test]
    fn the_root_search_keeps_a_worker_from_the_lookahead_lanes() {
        let lanes = |workers: &str| {
            let mut o = Options::default();
            o.set("Workers", Some(workers)).expect("workers");
            o.pool_config().expect("config").lookahead_lanes()
        };
        assert_eq!(lanes("builtin *4"), 3);
        assert_eq!(lanes("root: builtin; builtin *4"), 4);
        assert_eq!(lanes("opponent: builtin *6; evaluator: builtin *3"), 2);
        assert_eq!(
            lanes("root: builtin; opponent: builtin *6; evaluator: builtin *3"),
            3
        );
    }

    #[test]
    fn workers_make_a_group_an_entry() {
        let mut o = Options::default();
        o.set("Hash", Some("64")).expect("hash");
        o.set("Threads", Some("8")).expect("ignored with Workers");
        o.set(
            "Workers",
            Some("builtin *2; opponent: /usr/games/stockfish *3; evaluator: /usr/games/stockfish"),
        )
        .expect("workers");
        let c = o.pool_config().expect("config");
        let shape: Vec<_> = c
            .groups
            .iter()
            .map(|g| {
                let command = |c: &Option<ChildConfig>| c.as_ref().map(|c| c.command.clone());
                (command(&g.evaluator), command(&g.opponent), g.slots)
            })
            .collect();
        let (b, sf) = (
            Some("builtin".to_owned()),
            Some("/usr/games/stockfish".to_owned()),
        );
        assert_eq!(
            shape,
            [(b.clone(), b, 2), (None, sf.clone(), 3), (sf, None, 1)]
        );
        // Both roles share one child; every slot one search of one thread;
        // Hash split over the six children.
        assert!(c.groups[0].shared_roles());
        assert_eq!((c.threads(), c.processes()), (6, 6));
        for g in &c.groups {
            for child in [&g.evaluator, &g.opponent].into_iter().flatten() {
                assert_eq!(option(child, "Threads").as_deref(), Some("1"));
                assert_eq!(option(child, "Hash").as_deref(), Some("10"));
            }
        }
        // OpponentOptions give a both-roles entry a child a role.
        o.set("OpponentOptions", Some("Skill Level=3"))
            .expect("set");
        let c = o.pool_config().expect("config");
        assert!(!c.groups[0].shared_roles());
        assert_eq!(c.processes(), 8);
        let bad = o
            .set("Workers", Some("opponent: builtin"))
            .expect_err("unserved");
        assert!(
            bad.to_string()
                .contains("is not usable: no entry serves the evaluator role"),
            "{bad}"
        );
        assert!(
            o.workers.contains("evaluator: /usr/games/stockfish"),
            "left alone"
        );
        // The reason first, the entry once.
        let e = o
            .set("Workers", Some("builtin *0"))
            .expect_err("*0")
            .to_string();
        assert_eq!(
            e,
            "option 'Workers': 'builtin *0' is not usable: '*0' is not *1 to *1024 (in 'builtin *0')"
        );
        // The default sent back, as GUIs send every stored value: the
        // pool is Evaluator, Opponent and Threads again.
        for empty in ["", "  ", "<empty>"] {
            o.set("Workers", Some(empty))
                .expect("the default is a value");
            assert!(o.workers.trim().is_empty(), "{:?}", o.workers);
            assert_eq!(o.pool_config().expect("config").groups.len(), 1);
        }
    }

    #[test]
    fn hash_is_the_whole_memory_split_over_the_processes() {
        let hash_of = |c: &ChildConfig| option(c, "Hash");
        let evaluator_hash = |o: &Options| {
            let c = o.pool_config().expect("config");
            hash_of(c.first(Role::Evaluator).expect("evaluator"))
        };
        // `Threads` is held to the machine's cores: four where there are
        // four, else as many as there are.
        let n = mpcmc_builtin::machine_cores().min(4) as u32;
        let mut o = Options::default();
        o.set("Threads", Some("4")).expect("threads");
        o.set("ChildThreads", Some("1")).expect("child threads");
        o.set("Hash", Some("256")).expect("hash");
        let c = o.pool_config().expect("config");
        assert_eq!(c.processes(), n as usize);
        let share = |processes: u32| Some((256 / processes).to_string());
        assert_eq!(
            hash_of(c.first(Role::Evaluator).expect("evaluator")),
            share(n)
        );
        // Roles apart: twice the processes.
        o.set("OpponentOptions", Some("Skill Level=3"))
            .expect("set");
        let c = o.pool_config().expect("config");
        assert_eq!(c.processes(), 2 * n as usize);
        assert_eq!(
            hash_of(c.first(Role::Evaluator).expect("evaluator")),
            share(2 * n)
        );
        assert_eq!(
            hash_of(c.first(Role::Opponent).expect("opponent")),
            share(2 * n)
        );
        // Two threads a child: half the searches, twice the hash each.
        o.set("OpponentOptions", Some("")).expect("set");
        o.set("ChildThreads", Some("2")).expect("child threads");
        let c = o.pool_config().expect("config");
        let searches = (n / 2).max(1);
        assert_eq!(c.threads(), searches as usize);
        assert_eq!(
            hash_of(c.first(Role::Evaluator).expect("evaluator")),
            share(searches)
        );
        assert!(
            c.first(Role::Evaluator)
                .expect("evaluator")
                .options
                .contains(&("Threads".into(), "2".into()))
        );
        o.set("ChildThreads", Some("8")).expect("child threads");
        assert_eq!(o.pool_config().expect("config").threads(), 1);
        // Auto (0, the default): every core to one child, built-in or
        // external; one thread a child when every call has its own budget.
        o.set("ChildThreads", Some("0")).expect("child threads");
        for evaluator in ["builtin", "/usr/games/stockfish"] {
            o.set("Evaluator", Some(evaluator)).expect("evaluator");
            let c = o.pool_config().expect("config");
            assert_eq!(c.threads(), 1, "{evaluator}");
            assert!(
                c.first(Role::Evaluator)
                    .expect("evaluator")
                    .options
                    .contains(&("Threads".into(), n.to_string()))
            );
            o.set("ChildNodes", Some("2000")).expect("child nodes");
            assert_eq!(o.pool_config().expect("config").threads(), n as usize);
            o.set("ChildNodes", Some("0")).expect("child nodes");
            o.set("ChildMoveTime", Some("20")).expect("child movetime");
            assert_eq!(o.pool_config().expect("config").threads(), n as usize);
            o.set("ChildMoveTime", Some("0")).expect("child movetime");
        }
        o.set("Evaluator", Some("builtin")).expect("evaluator");
        // Never below 1 MB; the user's own child Hash still wins.
        o.set("Hash", Some("1")).expect("hash");
        assert_eq!(evaluator_hash(&o).as_deref(), Some("1"));
        o.set("EvaluatorOptions", Some("Hash=128")).expect("set");
        assert_eq!(evaluator_hash(&o).as_deref(), Some("128"));
    }
}
