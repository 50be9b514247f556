//! The meta-engine answering a GUI's session (`mpcmc`): the protocol's
//! session ([`mpcmc_protocol::session`]) with MPC-MC over child engines
//! answering `go`.
//!
//! It owns the options, the child pool (started, or restarted after an
//! option change, when a search or `isready` needs it) and what the
//! session's decisions learn for the next ones.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use mpcmc_builtin::go as builtin_go;
use mpcmc_builtin::syzygy::Syzygy;
use mpcmc_protocol::{
    OptionSpec, OptionType,
    game::Rules,
    output::Output,
    session::{self, Opened, Searcher},
};
use shakmaty::CastlingMode;
use tokio::task::JoinHandle;

use crate::{
    book::Book,
    children::{Pool, PoolConfig},
    mpc::{level::Level, noise::Noise, tablebase::Tables},
    uci::{
        carry,
        lateness::Lateness,
        options::{OptionError, Options, calibration_of},
        search::{self, GoRequest},
    },
};

/// The meta-engine's side of a session.
pub struct Meta {
    options: Options,
    pool: Option<Arc<Pool>>,
    /// Pools being shut down after an option change.
    retiring: Vec<JoinHandle<()>>,
    /// The built-in engine that makes the move when the children cannot.
    fallback: search::Fallback,
    /// How noisy the children's values are, learned over the session.
    noise: Arc<std::sync::Mutex<Noise>>,
    /// How late the session's answers came: part of every move's overhead.
    lateness: Arc<std::sync::Mutex<Lateness>>,
    /// What the game's decisions carry to the next ones.
    carry: carry::CarryCell,
    /// The opening book last opened (`BookFile`).
    book: Opened<String, Book>,
    /// The tablebases last opened (`SyzygyPath`).
    tables: Opened<String, Syzygy>,
    /// The children the levels were last said to be uncalibrated over.
    said_uncalibrated: Option<String>,
    /// The level last said to be played at full strength.
    said_full_strength: Option<Level>,
    /// The variant the levels were last said to be uncalibrated in.
    said_uncalibrated_in: Option<Rules>,
    /// The pool whose children refused its `UCI_Variant` was said to
    /// (by its configuration): said once.
    said_refused: Option<PoolConfig>,
}

/// How long `isready` waits for the children to start.
const READY_WAIT: Duration = Duration::from_secs(5);

impl Meta {
    pub fn new(options: Options) -> Meta {
        Meta {
            options,
            pool: None,
            retiring: Vec::new(),
            fallback: search::Fallback::default(),
            noise: Arc::default(),
            lateness: Arc::default(),
            carry: carry::CarryCell::default(),
            book: Opened::default(),
            tables: Opened::default(),
            said_uncalibrated: None,
            said_full_strength: None,
            said_uncalibrated_in: None,
            said_refused: None,
        }
    }

    /// Whether a child of `pool` refused its `UCI_Variant` (once its
    /// workers tried to start them): said once, in an `info string`
    /// naming the child and what it offers. The variant is kept — the
    /// GUI plays it, and python-chess and cutechess send it once, with no
    /// `isready` after — and the built-in engine, which plays every
    /// variant offered, answers alone until the options change.
    fn refused(&mut self, pool: &Pool, out: &Output) -> bool {
        let Some(why) = pool.refused_variant() else {
            return false;
        };
        if self.said_refused.as_ref() != Some(pool.config()) {
            let who = match self.options.variant.board() {
                Some(_) => "the built-in engine plays it alone",
                None => "no engine here plays it: every go is answered bestmove (none)",
            };
            out.info_string(format!(
                "UCI_Variant {} refused by the children: {why}; {who}",
                self.options.variant
            ));
            self.said_refused = Some(pool.config().clone());
        }
        true
    }

    /// The opening book when `OwnBook` is on: `BookFile`, opened once (and
    /// again when it changes); a file that cannot be used is said in an
    /// `info string` when first tried, and the engine plays without it.
    /// With `OwnBook` off, at a level (`UCI_LimitStrength`) the built-in
    /// human openings unless `LevelBook` is off: a person plays the
    /// openings people play.
    fn book(&mut self, out: &Output) -> Option<Arc<Book>> {
        if !self.options.own_book {
            return (self.options.limit_strength && self.options.level_book)
                .then(Book::openings)
                .flatten();
        }
        let path = self.options.book_file.trim().to_owned();
        self.book.get(path.clone(), || {
            if path.is_empty() {
                out.info_string("OwnBook is on but BookFile is empty: playing without a book");
                return None;
            }
            Book::open(std::path::Path::new(&path))
                .map_err(|e| out.info_string(format!("OwnBook: {e}; playing without a book")))
                .ok()
                .map(Arc::new)
        })
    }

    /// The tablebases of `SyzygyPath`, opened once (when it is set, and
    /// again when it changes); what a path holds is said in an `info
    /// string` when first opened, and the engine plays without tables
    /// where it holds none.
    fn tables(&mut self, out: &Output) -> Option<Arc<Tables>> {
        let tables = Syzygy::opened(&mut self.tables, self.options.syzygy_path.trim(), out)?;
        Some(Arc::new(Tables::new(
            tables,
            self.options.syzygy_50_move_rule,
        )))
    }

    /// What a level cannot do here, said once: the levels are not
    /// calibrated over these children ([`calibration_of`]), or the level
    /// asked for is at or above the evaluator's engine's full strength
    /// ([`Level::at_full_strength`]), which then plays unlimited.
    fn say_about_the_level(&mut self, pool: &Pool, out: &Output) {
        let Some(asked) = self.options.asked_level_in(Some(pool.config())) else {
            return;
        };
        let full = asked.at_full_strength().then_some(asked);
        if let Some(level) = full.filter(|_| self.said_full_strength != full) {
            let calibration = level.calibration();
            out.info_string(format!(
                "UCI_Elo {} is at or above the full strength of {} (about {} on this scale): \
                 it plays at full strength",
                level.elo(),
                calibration.engine(),
                calibration.full_strength().unwrap_or_default()
            ));
        }
        self.said_full_strength = full;
        let variant = self.options.variant;
        if variant != Rules::default() && self.said_uncalibrated_in != Some(variant) {
            out.info_string(format!(
                "UCI_Elo is calibrated in chess only: in {variant} the levels play with \
                 chess's budgets and draws, uncalibrated"
            ));
            self.said_uncalibrated_in = Some(variant);
        }
        let others: Vec<&str> = pool
            .config()
            .groups
            .iter()
            .filter_map(|g| g.evaluator.as_ref())
            .map(|c| c.command.as_str())
            .filter(|command| calibration_of(command).is_none())
            .collect();
        let Some(first) = others.first() else {
            return;
        };
        let key = others.join("; ");
        if self.said_uncalibrated.as_deref() != Some(key.as_str()) {
            out.info_string(format!(
                "UCI_Elo is calibrated over the built-in engine and Stockfish; over {first} \
                 the levels count the built-in engine's nodes and may play stronger than \
                 their number (level 1800 with those budgets over Stockfish 15.1 won 60 of \
                 60 games against Stockfish's UCI_Elo 1800)"
            ));
            self.said_uncalibrated = Some(key);
        }
    }

    /// The pool for the current options, started or restarted as needed.
    /// `None` (with an `info string`) when the options cannot make one.
    fn pool(&mut self, out: &Output) -> Option<Arc<Pool>> {
        let config: PoolConfig = match self.options.pool_config() {
            Ok(c) => c,
            Err(e) => {
                out.info_string(e);
                return None;
            }
        };
        if let Some(pool) = &self.pool
            && *pool.config() == config
        {
            return Some(pool.clone());
        }
        if let Some(old) = self.pool.take() {
            self.retire(old);
        }
        // `Threads` counts only without `Workers`.
        let threads = mpcmc_builtin::usable_threads(self.options.threads as usize)
            .note
            .filter(|_| self.options.workers.trim().is_empty());
        let hash = mpcmc_builtin::usable_hash_mb(self.options.hash as usize).note;
        for note in [threads, hash].into_iter().flatten() {
            out.info_string(note);
        }
        let pool = Arc::new(Pool::start(config));
        self.pool = Some(pool.clone());
        Some(pool)
    }

    /// Shuts a pool down in the background once the last search task that
    /// used it has let go of it.
    fn retire(&mut self, pool: Arc<Pool>) {
        self.retiring.push(tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_secs(1);
            let mut pool = pool;
            loop {
                match Arc::try_unwrap(pool) {
                    Ok(pool) => return pool.shutdown().await,
                    Err(shared) if Instant::now() < deadline => {
                        pool = shared;
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    // Still shared: dropping the last handle closes it anyway.
                    Err(_) => return,
                }
            }
        }));
    }
}

impl Searcher for Meta {
    type OptionError = OptionError;

    fn name(&self) -> String {
        format!("mpcmc {}", env!("CARGO_PKG_VERSION"))
    }

    fn options(&self) -> Vec<OptionSpec> {
        Options::specs(false)
            .into_iter()
            .map(|spec| match spec.name.as_str() {
                // Show the evaluator actually configured as its default.
                "Evaluator" => OptionSpec {
                    kind: OptionType::String {
                        default: self.options.evaluator.clone(),
                    },
                    ..spec
                },
                _ => spec,
            })
            .collect()
    }

    /// A `SyzygyPath` is opened when set: what it holds is said then.
    fn set_option(
        &mut self,
        name: &str,
        value: Option<&str>,
        out: &Output,
    ) -> Result<(), OptionError> {
        self.options.set(name, value)?;
        if name.trim().eq_ignore_ascii_case("SyzygyPath") {
            self.tables(out);
        }
        // `Clear Hash`: every child forgets before its next search, as
        // at a new game (the game itself goes on).
        if std::mem::take(&mut self.options.clear_now)
            && let Some(pool) = &self.pool
        {
            pool.new_game();
        }
        Ok(())
    }

    fn castling_mode(&self) -> CastlingMode {
        self.options.castling_mode()
    }

    fn rules(&self) -> Rules {
        self.options.variant
    }

    /// The tablebases are opened (said once a path, as when it is set). The
    /// children are (re)started first and `readyok` waits for them, as
    /// GUIs expect of an engine initialising, but never longer than
    /// [`READY_WAIT`]: a slow child then finishes starting on its own and
    /// is used when it is up.
    async fn ready(&mut self, out: &Output) {
        self.tables(out);
        let Some(pool) = self.pool(out) else {
            return;
        };
        if tokio::time::timeout(READY_WAIT, pool.ready())
            .await
            .is_err()
        {
            out.info_string(format!(
                "child engines still starting after {READY_WAIT:?}; they are used once up"
            ));
            return;
        }
        self.refused(&pool, out);
    }

    /// Warm children keep their hash within a game, never across; nor does
    /// a decision seed one in another game, nor count its opponent's replies.
    fn new_game(&mut self) {
        if let Some(pool) = &self.pool {
            pool.new_game();
        }
        // A fresh cell: a search still running writes its seed into the
        // old game's, which no later `go` reads.
        self.carry = carry::CarryCell::default();
    }

    fn go(&mut self, request: session::GoRequest) -> JoinHandle<()> {
        // A position read before `UCI_Variant` changed, or children that
        // refused the variant: the built-in engine, which plays every
        // variant offered, answers.
        let game_variant = request.game.rules();
        let children = if game_variant == self.options.variant {
            self.pool(&request.out)
                .filter(|pool| !self.refused(pool, &request.out))
        } else {
            request.out.info_string(format!(
                "the position is a {game_variant} game but UCI_Variant is {}: \
                 the built-in engine answers",
                self.options.variant
            ));
            None
        };
        let Some(pool) = children else {
            // No children can be configured (or they play another game):
            // the built-in engine still searches the move.
            return tokio::spawn(builtin_go::run(self.fallback.go(
                request.go,
                request.game,
                request.out,
                Duration::from_millis(self.options.move_overhead),
                request.stop,
                request.ponderhit,
            )));
        };
        let book = self.book(&request.out);
        let tables = self.tables(&request.out);
        self.say_about_the_level(&pool, &request.out);
        tokio::spawn(search::run(GoRequest {
            book,
            tables,
            go: request.go,
            game: request.game,
            options: self.options.clone(),
            pool,
            out: request.out,
            received: request.received,
            stop: request.stop,
            ponderhit: request.ponderhit,
            debug: request.debug,
            fallback: self.fallback.clone(),
            noise: self.noise.clone(),
            lateness: self.lateness.clone(),
            carry: self.carry.clone(),
        }))
    }

    async fn shutdown(mut self) {
        if let Some(pool) = self.pool.take() {
            self.retire(pool);
        }
        for handle in self.retiring.drain(..) {
            let _ = handle.await;
        }
    }
}
