//! The UCI options: one table, read by the `uci` answer, by `setoption`, by the
//! command-line flags and (through a test) by `uci-options.md`.
//!
//! Names compare case-insensitively, as GUIs differ in how they write them.
//! Each option is also a command-line flag, lc0 style: `ChildNodes` is
//! `--child-nodes=2000`; flags are applied before any `setoption`.

use mpcmc_protocol::{EMPTY, OptionSpec, OptionType, UciOpponent, game::Rules};
use shakmaty::{CastlingMode, variant::Variant};

mod flags;
mod table;
#[cfg(test)]
mod tests;

pub use flags::{flag_help, flag_name, flag_names};
pub use table::names;
use table::{Given, TABLE, def};

use crate::{
    children::{
        PoolConfig,
        assembly::PoolRequest,
        command::{EngineCommand, file_name},
        inprocess::{BUILTIN, is_builtin},
    },
    mpc::{
        Lookahead, Role, Settings,
        calibration::Calibration,
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
