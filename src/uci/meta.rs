//! The GUI session: a stdin reader thread and one coordinator task.
//!
//! The `stdin-reader` thread reads lines, parses them and hands them over; end
//! of input becomes `quit`. The coordinator owns the options, the position,
//! the child pool and the running search, and is the only place that handles
//! `stop`, `ponderhit` and `quit`. A search runs as its own task, so `isready`
//! is answered at once even mid-search. A bad command is answered with
//! `info string` and the session carries on.

use std::{
    io::BufRead,
    sync::Arc,
    time::{Duration, Instant},
};

use mpcmc_builtin as builtin;
use mpcmc_protocol::{
    EngineLine, GuiCommand, ParseError, Parsed, StartPosition, output::Output, parse_gui_line,
};
use shakmaty::{
    CastlingMode, Chess, EnPassantMode, Position, PositionError, PositionErrorKinds, fen::Fen,
    uci::UciMove,
};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use crate::{
    children::{Pool, PoolConfig},
    mpc::{Game, rounds::Noise},
    uci::{
        builtin_go::{self, BuiltinGo},
        options::{OptionError, Options},
        search::{self, GoRequest},
    },
};

/// What the reader thread hands the coordinator.
#[derive(Debug)]
pub enum Input {
    /// A line, parsed, and when it was read (the clock of a `go` starts then).
    Line(Instant, Result<Parsed<GuiCommand>, ParseError>),
    /// End of input: like `quit`, except that a search with a limit is let
    /// finish first (`printf 'go movetime 1000' | mpcmc` plays its move).
    Eof,
}

/// Starts the `stdin-reader` thread over `input`. Invalid UTF-8 is replaced,
/// not fatal; end of input (or a read error) sends [`Input::Eof`].
pub fn spawn_reader<R: BufRead + Send + 'static>(
    mut input: R,
    tx: mpsc::UnboundedSender<Input>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("stdin-reader".into())
        .spawn(move || {
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match input.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Input::Eof);
                        return;
                    }
                    Ok(_) => {}
                }
                let line = String::from_utf8_lossy(&buf);
                if line.trim().is_empty() {
                    continue;
                }
                tracing::debug!("gui > {}", line.trim_end());
                let read = Instant::now();
                if tx.send(Input::Line(read, parse_gui_line(&line))).is_err() {
                    return;
                }
            }
        })
}

struct Running {
    /// `go infinite` or `go ponder`: ends only when told.
    until_told: bool,
    stop: CancellationToken,
    ponderhit: CancellationToken,
    task: JoinHandle<()>,
    /// The game searched, for the one `bestmove` should the task die.
    game: Arc<Game>,
}

/// What answers `go`.
pub enum Mode {
    /// MPC-MC over child engines: `mpcmc`.
    Meta,
    /// The built-in engine alone: `mpcmc engine`.
    Builtin,
}

/// The built-in engine of `mpcmc engine`.
struct Standalone {
    engine: Arc<std::sync::Mutex<builtin::Engine>>,
    /// `ucinewgame` came: the next search clears first (the engine may still
    /// be busy with a stopped search now).
    clear: Arc<std::sync::atomic::AtomicBool>,
}

/// The coordinator's state.
pub struct Session {
    /// `Some` in [`Mode::Builtin`].
    standalone: Option<Standalone>,
    options: Options,
    out: Output,
    game: Arc<Game>,
    /// Whether the GUI has set a position since start.
    positioned: bool,
    pool: Option<Arc<Pool>>,
    /// Pools being shut down after an option change.
    retiring: Vec<JoinHandle<()>>,
    search: Option<Running>,
    debug: bool,
    /// The built-in engine that makes the move when the children cannot.
    fallback: Arc<std::sync::Mutex<builtin::Engine>>,
    /// How noisy the children's values are, learned over the session.
    noise: Arc<std::sync::Mutex<Noise>>,
    /// What the last decision learned for the next one.
    seed: search::SeedCell,
}

/// How long `isready` waits for the children to start.
const READY_WAIT: Duration = Duration::from_secs(5);

/// How long `quit` waits for a search to write its `bestmove`.
const QUIT_GRACE: Duration = Duration::from_secs(3);

impl Session {
    pub fn new(mode: Mode, options: Options, out: Output) -> Session {
        let standalone = match mode {
            Mode::Meta => None,
            Mode::Builtin => Some(Standalone {
                engine: Arc::new(std::sync::Mutex::new(builtin::Engine::new(
                    options.hash as usize,
                ))),
                clear: Arc::default(),
            }),
        };
        Session {
            standalone,
            game: Arc::new(Game::new(None, Chess::default(), options.castling_mode())),
            options,
            out,
            positioned: false,
            pool: None,
            retiring: Vec::new(),
            search: None,
            debug: false,
            fallback: search::fallback_engine(),
            noise: Arc::default(),
            seed: search::SeedCell::default(),
        }
    }

    /// Runs until `quit` (or end of input); then stops the search and every
    /// child.
    pub async fn run(mut self, mut input: mpsc::UnboundedReceiver<Input>) {
        loop {
            let finished = async {
                match self.search.as_mut() {
                    Some(s) => (&mut s.task).await,
                    None => std::future::pending().await,
                }
            };
            let msg = tokio::select! {
                msg = input.recv() => msg,
                joined = finished => {
                    self.search_ended(joined);
                    continue;
                }
            };
            let (read, parsed) = match msg {
                None => break,
                Some(Input::Eof) => {
                    self.let_search_finish().await;
                    break;
                }
                Some(Input::Line(read, Ok(parsed))) => (read, parsed),
                Some(Input::Line(_, Err(ParseError::Empty))) => continue,
                Some(Input::Line(_, Err(e))) => {
                    self.out.info_string(e);
                    continue;
                }
            };
            for problem in &parsed.problems {
                self.out.info_string(problem);
            }
            if !self.handle(parsed.command, read).await {
                break;
            }
        }
        self.shutdown().await;
    }

    /// Handles one command read at `read`; `false` on `quit`.
    async fn handle(&mut self, command: GuiCommand, read: Instant) -> bool {
        match command {
            GuiCommand::Uci => {
                let name = match self.standalone {
                    None => "mpcmc",
                    Some(_) => "mpcmc-builtin",
                };
                self.out.send(&EngineLine::IdName(format!(
                    "{name} {}",
                    env!("CARGO_PKG_VERSION")
                )));
                self.out
                    .send(&EngineLine::IdAuthor("the mpcmc developers".to_owned()));
                for spec in Options::specs(self.standalone.is_some()) {
                    let spec = match spec.name.as_str() {
                        // Show the evaluator actually configured as its default.
                        "Evaluator" => mpcmc_protocol::OptionSpec {
                            kind: mpcmc_protocol::OptionType::String {
                                default: self.options.evaluator.clone(),
                            },
                            ..spec
                        },
                        _ => spec,
                    };
                    self.out.send(&EngineLine::Option(spec));
                }
                self.out.send(&EngineLine::UciOk);
            }
            GuiCommand::Debug(on) => self.debug = on,
            GuiCommand::IsReady => {
                // Answered in order, always. With no search running the
                // children are (re)started first and `readyok` waits for them,
                // as GUIs expect of an engine initialising, but never longer
                // than READY_WAIT: a slow child then finishes starting on its
                // own and is used when it is up. Mid-search: at once.
                if self.search.is_none()
                    && self.standalone.is_none()
                    && let Some(pool) = self.pool()
                    && tokio::time::timeout(READY_WAIT, pool.ready())
                        .await
                        .is_err()
                {
                    self.out.info_string(format!(
                        "child engines still starting after {READY_WAIT:?}; they are used once up"
                    ));
                }
                self.out.send(&EngineLine::ReadyOk);
            }
            GuiCommand::SetOption { name, value } => {
                let declared = self.standalone.is_none() || Options::standalone_declares(&name);
                let set = if declared {
                    self.options.set(&name, value.as_deref())
                } else {
                    Err(OptionError::Unknown(name.clone()))
                };
                match set {
                    Ok(()) if name.trim().eq_ignore_ascii_case("LogFile") => {
                        if let Err(e) = crate::log::set_file(&self.options.log_file) {
                            self.out.info_string(format!(
                                "cannot open log file '{}': {e}",
                                self.options.log_file
                            ));
                        }
                    }
                    Ok(()) => {}
                    Err(e) => self.out.info_string(e),
                }
            }
            GuiCommand::Register => {}
            GuiCommand::UciNewGame => {
                // Warm children keep their hash within a game, never across;
                // nor does a decision seed one in another game.
                if let Some(pool) = &self.pool {
                    pool.new_game();
                }
                if let Ok(mut seed) = self.seed.lock() {
                    *seed = None;
                }
                if let Some(standalone) = &self.standalone {
                    standalone
                        .clear
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                }
                self.game = Arc::new(Game::new(
                    None,
                    Chess::default(),
                    self.options.castling_mode(),
                ));
            }
            GuiCommand::Position { start, moves } => self.set_position(start, &moves),
            GuiCommand::Go(go) => {
                self.finish_search().await;
                if !self.positioned {
                    self.out
                        .info_string("go before any position: searching the start position");
                }
                if let Some(standalone) = &self.standalone {
                    let (engine, clear) = (standalone.engine.clone(), standalone.clear.clone());
                    self.go_builtin(go, engine, self.options.hash as usize, clear);
                    return true;
                }
                let Some(pool) = self.pool() else {
                    // No children can be configured: the built-in engine
                    // still searches the move.
                    let engine = self.fallback.clone();
                    self.go_builtin(go, engine, search::FALLBACK_HASH_MB, Arc::default());
                    return true;
                };
                let (stop, ponderhit) = (CancellationToken::new(), CancellationToken::new());
                let until_told = go.ends_when_told();
                let request = GoRequest {
                    go,
                    game: self.game.clone(),
                    options: self.options.clone(),
                    pool,
                    out: self.out.clone(),
                    received: read,
                    stop: stop.clone(),
                    ponderhit: ponderhit.clone(),
                    debug: self.debug,
                    fallback: self.fallback.clone(),
                    noise: self.noise.clone(),
                    seed: self.seed.clone(),
                };
                let task = tokio::spawn(search::run(request));
                self.running(until_told, stop, ponderhit, task);
            }
            GuiCommand::Stop => {
                if let Some(s) = &self.search {
                    s.stop.cancel();
                }
            }
            GuiCommand::PonderHit => {
                if let Some(s) = &self.search {
                    s.ponderhit.cancel();
                }
            }
            GuiCommand::Quit => return false,
            GuiCommand::Unknown(line) => tracing::debug!("ignored unknown command '{line}'"),
        }
        true
    }

    /// Starts a `go` of a built-in engine alone: `mpcmc engine`'s, or the
    /// fallback when no child can be configured.
    fn go_builtin(
        &mut self,
        go: mpcmc_protocol::Go,
        engine: Arc<std::sync::Mutex<builtin::Engine>>,
        hash_mb: usize,
        clear: Arc<std::sync::atomic::AtomicBool>,
    ) {
        let (stop, ponderhit) = (CancellationToken::new(), CancellationToken::new());
        let until_told = go.ends_when_told();
        let request = BuiltinGo {
            go,
            game: self.game.clone(),
            engine,
            hash_mb,
            clear,
            out: self.out.clone(),
            overhead: Duration::from_millis(self.options.move_overhead),
            stop: stop.clone(),
            ponderhit: ponderhit.clone(),
        };
        let task = tokio::spawn(builtin_go::run(request));
        self.running(until_told, stop, ponderhit, task);
    }

    /// Records the search task just started.
    fn running(
        &mut self,
        until_told: bool,
        stop: CancellationToken,
        ponderhit: CancellationToken,
        task: JoinHandle<()>,
    ) {
        self.search = Some(Running {
            until_told,
            stop,
            ponderhit,
            task,
            game: self.game.clone(),
        });
    }

    /// `position …`: validated with shakmaty before any child sees it. A bad
    /// FEN keeps the previous position; an illegal move keeps the moves before it.
    fn set_position(&mut self, start: StartPosition, moves: &[UciMove]) {
        let mode = self.options.castling_mode();
        let (fen, pos) = match start {
            StartPosition::Startpos => (None, Chess::default()),
            StartPosition::Fen(fen) => {
                // Like python-chess: drop castling rights and en-passant squares
                // that cannot be, keep the rest.
                let parsed = fen
                    .clone()
                    .into_position::<Chess>(mode)
                    .or_else(PositionError::ignore_invalid_ep_square);
                let pos = match parsed {
                    Ok(pos) => Ok(pos),
                    Err(e) => {
                        let castling = e
                            .kinds()
                            .contains(PositionErrorKinds::INVALID_CASTLING_RIGHTS);
                        let pos = e.ignore_invalid_castling_rights();
                        if castling && let Ok(pos) = &pos {
                            let hint = match mode {
                                CastlingMode::Standard => {
                                    " (Shredder-FEN castling files need UCI_Chess960 true)"
                                }
                                CastlingMode::Chess960 => "",
                            };
                            self.out.info_string(format!(
                                "castling rights that cannot be are dropped{hint}: position set to {}",
                                Fen::from_position(pos, EnPassantMode::Legal)
                            ));
                        }
                        pos
                    }
                };
                match pos {
                    Ok(pos) => (Some(Fen::from_position(&pos, EnPassantMode::Legal)), pos),
                    Err(e) => {
                        self.out.info_string(format!(
                            "impossible position '{fen}': {e}; keeping the previous position"
                        ));
                        return;
                    }
                }
            }
        };
        let mut game = Game::new(fen, pos, mode);
        for (i, uci) in moves.iter().enumerate() {
            match game.push_uci(uci) {
                Ok(_) => {}
                Err(_) => {
                    let fen = Fen::from_position(game.position(), EnPassantMode::Legal);
                    self.out.info_string(format!(
                        "illegal move '{uci}' (move {}) in position {fen}; position set to the moves before it",
                        i + 1
                    ));
                    break;
                }
            }
        }
        self.game = Arc::new(game);
        self.positioned = true;
    }

    /// The pool for the current options, started or restarted as needed.
    /// `None` (with an `info string`) when the options cannot make one.
    fn pool(&mut self) -> Option<Arc<Pool>> {
        let config: PoolConfig = match self.options.pool_config() {
            Ok(c) => c,
            Err(e) => {
                self.out.info_string(e);
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

    /// Waits for a search with a limit to end by itself; one that waits for
    /// `stop` is stopped.
    async fn let_search_finish(&mut self) {
        if let Some(s) = self.search.as_mut()
            && !s.until_told
        {
            let joined = (&mut s.task).await;
            self.search_ended(joined);
        }
    }

    /// Stops a running search and waits for its `bestmove`.
    async fn finish_search(&mut self) {
        if let Some(mut s) = self.search.take() {
            s.stop.cancel();
            match tokio::time::timeout(QUIT_GRACE, &mut s.task).await {
                Ok(joined) => {
                    self.search = Some(s);
                    self.search_ended(joined);
                }
                Err(_) => {
                    s.task.abort();
                    let joined = (&mut s.task).await;
                    self.search = Some(s);
                    self.search_ended(joined);
                }
            }
        }
    }

    /// Bookkeeping when the search task ends; if it died without answering,
    /// the GUI still gets its one `bestmove`.
    fn search_ended(&mut self, joined: Result<(), tokio::task::JoinError>) {
        let Some(s) = self.search.take() else { return };
        if let Err(e) = joined {
            tracing::error!("search task failed: {e}");
            self.out.info_string(format!("search failed: {e}"));
            self.answer_first_legal_in(&s.game);
        }
    }

    /// The one `bestmove` of a search task that died: the first legal move,
    /// the last resort.
    fn answer_first_legal_in(&self, game: &Game) {
        let pos = game.position();
        let first = pos.legal_moves().first().copied();
        self.out.bestmove(pos, first, None, game.castling_mode());
    }

    async fn shutdown(mut self) {
        self.finish_search().await;
        if let Some(pool) = self.pool.take() {
            self.retire(pool);
        }
        for handle in self.retiring.drain(..) {
            let _ = handle.await;
        }
    }
}
