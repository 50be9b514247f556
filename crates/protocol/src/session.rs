//! The engine side of a UCI session, for any searcher: a stdin reader
//! thread and one coordinator task.
//!
//! The `stdin-reader` thread reads lines, parses them and hands them over;
//! end of input becomes [`Input::Eof`]. The coordinator ([`Session`]) owns
//! the position and the running search and is the only place that handles
//! `stop`, `ponderhit` and `quit`; what answers `go`, `setoption`,
//! `ucinewgame` and `isready` with no search running is a [`Searcher`]: the
//! built-in engine alone (`mpcmc engine`) or the meta-engine (`mpcmc`). A
//! search runs as its own task, so `isready` is answered at once even mid-search, and every
//! `go` gets exactly one `bestmove`, even when its task dies (but for a `go
//! ponder` or `go infinite` that a new `go` replaced before `stop` or
//! `ponderhit`: see [`Running::replaced`]). A bad command
//! is answered with `info string` and the session carries on.

use std::{
    collections::VecDeque,
    fmt,
    future::Future,
    io::BufRead,
    sync::Arc,
    time::{Duration, Instant},
};

use shakmaty::CastlingMode;
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use crate::{
    EngineLine, Go, GuiCommand, MoveText, OptionSpec, ParseError, Parsed, StartPosition,
    game::{Game, Rules},
    lines::{Split, Splitter, next_line},
    output::{Gate, Output},
    parse_gui_line,
};

/// A file a user names in the options (a book, tablebases), opened once
/// for the options that name it (`K`) and again when they change; `None`
/// when it could not be opened (said once, when first tried).
pub struct Opened<K, T>(Option<(K, Option<Arc<T>>)>);

impl<K, T> Default for Opened<K, T> {
    fn default() -> Opened<K, T> {
        Opened(None)
    }
}

impl<K: PartialEq, T> Opened<K, T> {
    /// What `key` opens: the kept one, or `open`'s when the key changed.
    pub fn get(&mut self, key: K, open: impl FnOnce() -> Option<Arc<T>>) -> Option<Arc<T>> {
        if let Some((opened, value)) = &self.0
            && *opened == key
        {
            return value.clone();
        }
        let value = open();
        self.0 = Some((key, value.clone()));
        value
    }
}

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
/// not fatal, and a line over [`MAX_LINE`](crate::lines::MAX_LINE) bytes is
/// skipped with [`ParseError::Overlong`]; end of input (or a read error)
/// sends [`Input::Eof`].
pub fn spawn_reader<R: BufRead + Send + 'static>(
    mut input: R,
    tx: mpsc::UnboundedSender<Input>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("stdin-reader".into())
        .spawn(move || {
            let mut splitter = Splitter::new();
            loop {
                let next = next_line(&mut input, &mut splitter);
                // The clock of a `go` starts when it was read.
                let read = Instant::now();
                let parsed = match next {
                    Ok(None) | Err(_) => {
                        let _ = tx.send(Input::Eof);
                        return;
                    }
                    Ok(Some(Split::Overlong)) => Err(ParseError::Overlong),
                    Ok(Some(Split::Line(line))) => {
                        if line.trim().is_empty() {
                            continue;
                        }
                        tracing::debug!("gui > {}", line.trim_end());
                        parse_gui_line(&line)
                    }
                };
                if tx.send(Input::Line(read, parsed)).is_err() {
                    return;
                }
            }
        })
}

/// One `go`, as a [`Searcher`] gets it.
pub struct GoRequest {
    pub go: Go,
    pub game: Arc<Game>,
    pub out: Output,
    /// When the `go` was read: its clock starts then.
    pub received: Instant,
    /// Cancelled on `stop` (and when the session ends).
    pub stop: CancellationToken,
    /// Cancelled on `ponderhit`.
    pub ponderhit: CancellationToken,
    /// `debug on` was sent.
    pub debug: bool,
}

/// What answers a session's commands beyond the protocol's own.
pub trait Searcher {
    /// Why a `setoption` was refused, said in an `info string`.
    type OptionError: fmt::Display;

    /// `id name`.
    fn name(&self) -> String;
    /// The `option` lines of `uci`, in order.
    fn options(&self) -> Vec<OptionSpec>;
    /// `setoption name <name> [value <value>]`; what the new value means
    /// here (tablebases found or not) may be said on `out` at once, as
    /// Stockfish says it, rather than in the middle of a search.
    fn set_option(
        &mut self,
        name: &str,
        value: Option<&str>,
        out: &Output,
    ) -> Result<(), Self::OptionError>;
    /// How castling moves are read and written (`UCI_Chess960`).
    fn castling_mode(&self) -> CastlingMode;
    /// The game the `position` commands are read in (`UCI_Variant`).
    fn rules(&self) -> Rules {
        Rules::default()
    }
    /// `isready` while no search runs: what must be up before `readyok`
    /// (child engines starting). Mid-search `readyok` comes at once.
    fn ready(&mut self, out: &Output) -> impl Future<Output = ()>;
    /// `ucinewgame`: forget what was learned in the last game.
    fn new_game(&mut self);
    /// Starts the search of a `go` as a task that writes exactly one
    /// `bestmove` (under `go infinite` and `go ponder` only after `stop` or
    /// `ponderhit`).
    fn go(&mut self, request: GoRequest) -> JoinHandle<()>;
    /// The session is over and its search finished: let everything go.
    fn shutdown(self) -> impl Future<Output = ()>;
}

struct Running {
    /// `go infinite` or `go ponder`: ends only when told.
    until_told: bool,
    /// `go ponder`: `ponderhit` tells it too.
    ponder: bool,
    stop: CancellationToken,
    ponderhit: CancellationToken,
    task: JoinHandle<()>,
    /// The game searched, for the one `bestmove` should the task die;
    /// `None`: the `go` had no position (see [`Session::refused`]).
    game: Option<Arc<Game>>,
    /// Shuts the search's lines (see [`Running::replaced`]).
    gate: Gate,
}

impl Running {
    /// Whether a `go` that comes now replaces this search: it waits to be
    /// told to end (`go infinite`, or `go ponder` before `ponderhit`) and
    /// was not. UCI lets it write `bestmove` only after `stop` or
    /// `ponderhit`, and the GUI waits for the new `go`'s, so its gate is
    /// shut: it ends with no line more. python-chess
    /// does this: a `play(…, ponder=True)` whose board was then played on
    /// counts the next command as a ponder hit, and sends no `stop`.
    fn replaced(&self) -> bool {
        let told = self.stop.is_cancelled() || (self.ponder && self.ponderhit.is_cancelled());
        self.until_told && !told
    }
}

/// A queued `quit`.
fn is_quit(msg: &Input) -> bool {
    matches!(msg, Input::Line(_, Ok(p)) if p.command == GuiCommand::Quit)
}

/// What a queued command says of a `go` before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// `stop`: the move now (its first iteration).
    Stop,
    /// Another `go`, `position`, `ucinewgame`, `quit`: the GUI has moved
    /// on, and the `go`'s answer is stale.
    Elsewhere,
}

fn moves_on(msg: &Input) -> Option<Next> {
    match msg {
        Input::Line(_, Ok(p)) => match p.command {
            GuiCommand::Stop => Some(Next::Stop),
            GuiCommand::Go(_)
            | GuiCommand::Position { .. }
            | GuiCommand::UciNewGame
            | GuiCommand::Quit => Some(Next::Elsewhere),
            _ => None,
        },
        _ => None,
    }
}

/// `bestmove` with the first legal move of `game`'s position (`(none)`
/// when it has none, or when there is no position: `None`): the answer of
/// last resort, and of a stale `go`.
fn first_legal_bestmove(out: &Output, game: Option<&Game>) {
    match game {
        Some(game) => {
            out.bestmove(game, game.legal_moves().first().copied(), None);
        }
        None => out.send(&EngineLine::BestMove {
            best: None,
            ponder: None,
        }),
    }
}

/// The answer to a `go` with no position to search (the last `position`
/// was refused): an `info string` and `bestmove (none)`, after `stop` or
/// `ponderhit` when the `go` waits to be told.
async fn no_position(
    ponder: bool,
    until_told: bool,
    reason: String,
    out: Output,
    stop: CancellationToken,
    ponderhit: CancellationToken,
) {
    if until_told {
        tokio::select! {
            () = stop.cancelled() => {}
            () = ponderhit.cancelled(), if ponder => {}
        }
    }
    out.info_string(format!("no position to search ({reason}): no move"));
    first_legal_bestmove(&out, None);
}

/// How long `quit` (or a new `go`) waits for a search to write its
/// `bestmove`.
const QUIT_GRACE: Duration = Duration::from_secs(3);

/// The coordinator: see the module docs.
pub struct Session<S> {
    searcher: S,
    out: Output,
    game: Arc<Game>,
    /// Whether the GUI has set a position since start.
    positioned: bool,
    /// Why the last `position` was refused (a FEN beyond repair): the GUI
    /// meant a position the session does not have, so a `go` answers that
    /// there is none (`bestmove (none)` and an `info string`), never a
    /// move of the position before.
    refused: Option<String>,
    search: Option<Running>,
    debug: bool,
}

impl<S: Searcher> Session<S> {
    pub fn new(searcher: S, out: Output) -> Session<S> {
        Session {
            game: Arc::new(Game::start_of(searcher.rules(), searcher.castling_mode())),
            searcher,
            out,
            positioned: false,
            refused: None,
            search: None,
            debug: false,
        }
    }

    /// Runs until `quit` (or end of input); then stops the search and lets
    /// the searcher go.
    ///
    /// What the reader has queued is looked at before each command (the
    /// GUI's lines arrive far faster than searches end): a `go` with a
    /// `stop` queued behind it starts already stopped (the move of its
    /// first iteration); one with another `go`, a `position`, a
    /// `ucinewgame` or a `quit` queued first is answered unsearched (its
    /// first legal move: stale before it could be read), so a `quit` is
    /// reached at once, every command before it answered in order (an
    /// `isready` then without waiting for children to start). A storm
    /// of 20 000 unpaced lines took 32-50 s, and `quit` waited behind it.
    pub async fn run(mut self, mut input: mpsc::UnboundedReceiver<Input>) {
        let mut pending: VecDeque<Input> = VecDeque::new();
        // `quit`s in `pending`, counted as they come and go (a storm queues
        // thousands of lines: no scan of them all per command).
        let mut quits = 0;
        loop {
            while let Ok(msg) = input.try_recv() {
                quits += usize::from(is_quit(&msg));
                pending.push_back(msg);
            }
            let quitting = quits > 0;
            let msg = match pending.pop_front() {
                Some(msg) => {
                    quits -= usize::from(is_quit(&msg));
                    Some(msg)
                }
                None => {
                    let finished = async {
                        match self.search.as_mut() {
                            Some(s) => (&mut s.task).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        msg = input.recv() => msg,
                        joined = finished => {
                            self.search_ended(joined);
                            continue;
                        }
                    }
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
                    if e.is_position() {
                        self.refuse_position(e.to_string());
                    } else {
                        self.out.info_string(e);
                    }
                    continue;
                }
            };
            for problem in &parsed.problems {
                self.out.info_string(problem);
            }
            let next = match &parsed.command {
                // `go infinite` and `go ponder` answer only when told: a
                // newer command replaces or stops them as it comes.
                GuiCommand::Go(go) if go.ends_when_told() => None,
                GuiCommand::Go(_) if quitting => Some(Next::Elsewhere),
                GuiCommand::Go(_) => pending.iter().find_map(moves_on),
                _ => None,
            };
            if next == Some(Next::Elsewhere) {
                // Its answer is stale before it could be read. A search it
                // replaces ends without a line, as under `handle`: else
                // whether it answers would hang on what the reader had
                // queued by now.
                self.shut_replaced();
                self.finish_search().await;
                tracing::debug!("a go with a newer go or position queued: answered unsearched");
                first_legal_bestmove(&self.out, self.searchable().map(|g| &**g));
                continue;
            }
            if quitting && parsed.command == GuiCommand::IsReady {
                // In order, and without waiting for children to start:
                // they are about to be stopped.
                self.out.send(&EngineLine::ReadyOk);
                continue;
            }
            if !self.handle(parsed.command, read).await {
                break;
            }
            if next == Some(Next::Stop)
                && let Some(s) = &self.search
            {
                s.stop.cancel();
            }
        }
        self.finish_search().await;
        self.searcher.shutdown().await;
    }

    /// Handles one command read at `read`; `false` on `quit`.
    async fn handle(&mut self, command: GuiCommand, read: Instant) -> bool {
        match command {
            GuiCommand::Uci => {
                self.out.send(&EngineLine::IdName(self.searcher.name()));
                self.out
                    .send(&EngineLine::IdAuthor("the mpcmc developers".to_owned()));
                for spec in self.searcher.options() {
                    self.out.send(&EngineLine::Option(spec));
                }
                self.out.send(&EngineLine::UciOk);
            }
            GuiCommand::Debug(on) => self.debug = on,
            GuiCommand::IsReady => {
                // Answered in order, always; with no search running, once
                // the searcher is ready (it bounds its own wait).
                if self.search.is_none() {
                    self.searcher.ready(&self.out).await;
                }
                self.out.send(&EngineLine::ReadyOk);
            }
            GuiCommand::SetOption { name, value } => {
                if let Err(e) = self.searcher.set_option(&name, value.as_deref(), &self.out) {
                    self.out.info_string(e);
                }
            }
            GuiCommand::Register => {}
            GuiCommand::UciNewGame => {
                self.searcher.new_game();
                self.refused = None;
                self.game = Arc::new(Game::start_of(
                    self.searcher.rules(),
                    self.searcher.castling_mode(),
                ));
            }
            GuiCommand::Position { start, moves } => self.set_position(start, &moves),
            GuiCommand::Go(go) => {
                self.shut_replaced();
                self.finish_search().await;
                if !self.positioned {
                    self.out
                        .info_string("go before any position: searching the start position");
                }
                let (stop, ponderhit) = (CancellationToken::new(), CancellationToken::new());
                let (until_told, ponder) = (go.ends_when_told(), go.ponder);
                let (out, gate) = self.out.gated();
                let task = match &self.refused {
                    Some(reason) => tokio::spawn(no_position(
                        go.ponder,
                        until_told,
                        reason.clone(),
                        out,
                        stop.clone(),
                        ponderhit.clone(),
                    )),
                    None => self.searcher.go(GoRequest {
                        go,
                        game: self.game.clone(),
                        out,
                        received: read,
                        stop: stop.clone(),
                        ponderhit: ponderhit.clone(),
                        debug: self.debug,
                    }),
                };
                self.search = Some(Running {
                    until_told,
                    ponder,
                    stop,
                    ponderhit,
                    task,
                    game: self.searchable().cloned(),
                    gate,
                });
            }
            GuiCommand::Stop => {
                if let Some(s) = &self.search {
                    s.stop.cancel();
                }
            }
            GuiCommand::PonderHit => match &self.search {
                Some(s) if s.ponder => s.ponderhit.cancel(),
                // python-chess, after counting a ponder as hit that a later
                // `go` replaced, sends it and waits for a `bestmove`.
                _ => self
                    .out
                    .info_string("ponderhit with no go ponder running: ignored"),
            },
            GuiCommand::Quit => return false,
            GuiCommand::Unknown(line) => tracing::debug!("ignored unknown command '{line}'"),
        }
        true
    }

    /// `position …`, read by [`Game::from_position_command`] before any
    /// search sees it: a FEN beyond repair keeps the previous position.
    fn set_position(&mut self, start: StartPosition, moves: &[MoveText]) {
        match Game::from_position_command(
            start,
            moves,
            self.searcher.castling_mode(),
            self.searcher.rules(),
        ) {
            Ok((game, notes)) => {
                for note in notes {
                    self.out.info_string(note);
                }
                self.game = Arc::new(game);
                self.positioned = true;
                self.refused = None;
            }
            Err(e) => self.refuse_position(e),
        }
    }

    /// The game a `go` searches: `None` after a refused `position`.
    fn searchable(&self) -> Option<&Arc<Game>> {
        self.refused.is_none().then_some(&self.game)
    }

    /// A `position` that names no position the session can search: said
    /// now, and every `go` until the next good one answers that there is
    /// none.
    fn refuse_position(&mut self, reason: String) {
        self.out.info_string(format!(
            "{reason}; no position to search until the next position command"
        ));
        self.refused = Some(reason);
        self.positioned = true;
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

    /// A `go` came (searched or not) while a search waits to be told to
    /// end and was not ([`Running::replaced`]): its gate is shut, so that
    /// stopping it now writes no `bestmove`.
    fn shut_replaced(&self) {
        if let Some(s) = &self.search
            && s.replaced()
        {
            s.gate.shut();
            self.out.info_string(
                "go with a search running that was not told to end (stop or ponderhit): \
                 it ends without a bestmove",
            );
        }
    }

    /// Stops a running search and waits for its `bestmove` (at most
    /// [`QUIT_GRACE`]; then the task is aborted and answered for).
    async fn finish_search(&mut self) {
        if let Some(mut s) = self.search.take() {
            s.stop.cancel();
            let joined = match tokio::time::timeout(QUIT_GRACE, &mut s.task).await {
                Ok(joined) => joined,
                Err(_) => {
                    s.task.abort();
                    (&mut s.task).await
                }
            };
            self.search = Some(s);
            self.search_ended(joined);
        }
    }

    /// Bookkeeping when the search task ends; if it died without answering,
    /// the GUI still gets its one `bestmove`: the first legal move, the last
    /// resort.
    fn search_ended(&mut self, joined: Result<(), tokio::task::JoinError>) {
        let Some(s) = self.search.take() else { return };
        if let Err(e) = joined
            && !s.gate.is_shut()
        {
            tracing::error!("search task failed: {e}");
            self.out.info_string(format!("search failed: {e}"));
            first_legal_bestmove(&self.out, s.game.as_deref());
        }
    }
}
