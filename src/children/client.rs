//! A UCI client for one child engine.
//!
//! One command in flight at a time, methods named after the UCI verbs. Every
//! read has a deadline. End of file means the child died (its exit status is
//! reported when it is a process); a deadline means it stalled: the two are
//! different errors, and the pool restarts the child either way. A cancelled
//! search is stopped with `stop` and drained to its `bestmove`, so the next
//! command starts clean.
//!
//! The client talks over any reader and writer ([`Client::over`]): a child
//! process's pipes in play ([`Client::spawn`]), an in-memory pipe in the
//! protocol and fault tests, where time is paused and a stall costs no wait.

use std::{future::Future, pin::Pin, sync::Arc, time::Duration};

use shakmaty::{
    CastlingMode, Move, Position,
    uci::UciMove,
    variant::{Variant, VariantPosition},
};
use tokio::{
    io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader},
    process::Child,
    time::Instant,
};
use tokio_util::sync::CancellationToken;

use mpcmc_protocol::{
    Bound, EngineLine, GameMove, GuiCommand, MoveText, OptionSpec, OptionType, StartPosition,
    game::Rules,
    lines::{Split, Splitter, next_line_async},
    parse_engine_line,
};

use crate::{
    children::error::{ChildError, SearchError},
    children::group::{End, Group},
    children::process,
    mpc::{ChildLimit, Extra, Game, Progress, PvOf, Query, Report, Value},
};

/// How long a child may take to answer `uci`.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `isready` may take (loading a network file happens here).
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stopped search may take to produce its `bestmove`.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a child may take to accept a command on its stdin.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `quit` may take before the process is killed.
pub const QUIT_TIMEOUT: Duration = Duration::from_millis(1000);

/// The stall deadline of a pondering search before `ponderhit`: none in
/// effect.
const PONDER_UNBOUNDED: Duration = mpcmc_protocol::NO_DEADLINE;

/// How long a child may search under `limit` before it counts as stalled:
/// far more than any healthy engine takes, yet proportional to what it was
/// asked, so that a search without a clock (`go nodes`, `go depth`) still
/// ends when a child hangs.
pub fn stall_deadline(limit: ChildLimit) -> Duration {
    const FLOOR: Duration = Duration::from_secs(1);
    match limit {
        // 50,000 nodes a second: twenty times slower than Stockfish or the
        // built-in engine on one core.
        ChildLimit::Nodes(n) => FLOOR + Duration::from_micros(n.saturating_mul(20)),
        ChildLimit::MoveTime(t) => t + FLOOR + t / 2,
        // Search time grows by about 1.4 a ply: 2 s at depth 2, 32 s at 10.
        ChildLimit::Depth(d) => FLOOR.saturating_mul(1 << (d / 2).min(12)),
        // A child never needs more than its own clock.
        ChildLimit::Clock { wtime, btime, .. } => wtime.max(btime) + FLOOR,
    }
}

/// What an `info` line says besides depth, score and nodes.
fn extra_of(info: &mpcmc_protocol::Info) -> Extra {
    Extra {
        seldepth: info.seldepth,
        hashfull: info.hashfull,
        tbhits: info.tbhits,
        wdl: info.wdl,
    }
}

/// How to start and set up a child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildConfig {
    /// The command line, as the user wrote it.
    pub command: String,
    /// `setoption`s sent after the handshake, in order (later ones win).
    pub options: Vec<(String, String)>,
    pub castling: CastlingMode,
    /// `UCI_Variant`: the game it must play (chess needs no option; any
    /// other must be in the child's own `UCI_Variant` combo).
    pub variant: Rules,
    /// Send `ucinewgame` + `isready` before every search (memoryless children).
    pub clear_hash: bool,
}

impl ChildConfig {
    /// A child started by `command` with the defaults: no options of its
    /// own, standard castling, warm (keeps its hash).
    pub fn new(command: impl Into<String>) -> ChildConfig {
        ChildConfig {
            command: command.into(),
            options: Vec::new(),
            castling: CastlingMode::Standard,
            variant: Rules::default(),
            clear_hash: false,
        }
    }
}

/// What a client reads the child's lines from.
pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// What a client writes the child's commands to.
pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// A client being started.
pub type Connecting = Pin<Box<dyn Future<Output = Result<Client, ChildError>> + Send>>;

/// How a pool starts the client of a child that is not built in, from its
/// configuration and label: [`spawn_processes`] in play; tests connect
/// in-process fakes.
pub type Connect = Arc<dyn Fn(ChildConfig, String) -> Connecting + Send + Sync>;

/// Starts every child as the process its command line names.
pub fn spawn_processes() -> Connect {
    Arc::new(|config: ChildConfig, label: String| -> Connecting {
        Box::pin(async move { Client::spawn(&config, label).await })
    })
}

/// A running child engine.
pub struct Client {
    /// Who this is, for messages: `evaluator 1 (/usr/games/stockfish)`.
    label: String,
    /// The child process, when there is one (not over an in-memory pipe).
    process: Option<Child>,
    /// The process group it leads, with whatever it started; ended when
    /// the client goes (after `quit`, or killed with it): held for its drop.
    group: Option<Group>,
    stdin: Writer,
    /// Commands queued to go with the next one sent (see [`Client::queue`]).
    queued: Vec<u8>,
    stdout: BufReader<Reader>,
    /// The line being read from `stdout` (kept when a deadline cuts a read).
    splitter: Splitter,
    /// The latest `bestmove` line as the child wrote it, quoted when the
    /// answer is refused (`0000` and `(none)` parse alike).
    answer: String,
    /// `id name`, when the child gave one.
    pub name: Option<String>,
    /// The options the child declared.
    pub options: Vec<OptionSpec>,
    castling: CastlingMode,
    clear_hash: bool,
    /// A `go` was sent and its `bestmove` not read yet (a search future was
    /// dropped mid-way): the next command first stops and drains it.
    searching: bool,
    /// The latest `isready` … `readyok`: what any answer costs beyond the
    /// child's work (pipes; for a child on another machine, the network).
    pub round_trip: Duration,
    /// The child's `MultiPV` option as it declared it, and the value it
    /// was last set to (1 as it starts): more only for a search whose
    /// lines are shown ([`Query::lines`]); `None`: it declares none.
    multipv: Option<(String, u32)>,
}

impl Client {
    /// Starts the child, runs the `uci` handshake, sends the configured options
    /// (only those it declares, case-insensitively; others are reported) and
    /// waits for `readyok`.
    pub async fn spawn(config: &ChildConfig, label: String) -> Result<Client, ChildError> {
        let started = process::start(&config.command, &label)?;
        Client::start(
            config,
            label,
            Box::new(started.stdout),
            Box::new(started.stdin),
            Some(started.child),
            started.group,
        )
        .await
    }

    /// Like [`Client::spawn`], over a child that is already running and
    /// reached through `reader` and `writer`; `config.command` only names it.
    pub async fn over(
        config: &ChildConfig,
        label: String,
        reader: Reader,
        writer: Writer,
    ) -> Result<Client, ChildError> {
        Client::start(config, label, reader, writer, None, None).await
    }

    /// The handshake, the options and `isready` of [`Client::spawn`].
    async fn start(
        config: &ChildConfig,
        label: String,
        reader: Reader,
        writer: Writer,
        process: Option<Child>,
        group: Option<Group>,
    ) -> Result<Client, ChildError> {
        let mut client = Client {
            label: format!("{label} ({})", config.command),
            process,
            group,
            stdin: writer,
            queued: Vec::new(),
            stdout: BufReader::new(reader),
            splitter: Splitter::new(),
            answer: String::new(),
            name: None,
            options: Vec::new(),
            castling: config.castling,
            clear_hash: config.clear_hash,
            searching: false,
            round_trip: Duration::ZERO,
            multipv: None,
        };
        client.uci().await?;
        client.set_variant(config.variant).await?;
        client.multipv = client
            .options
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case("MultiPV"))
            .map(|o| (o.name.clone(), 1));
        for (name, value) in &config.options {
            let declared = client
                .options
                .iter()
                .find(|o| o.name.eq_ignore_ascii_case(name));
            match declared {
                Some(spec) => {
                    let command = GuiCommand::SetOption {
                        name: spec.name.clone(),
                        value: (spec.kind != OptionType::Button).then(|| value.clone()),
                    };
                    client.send(&command, "setting options").await?;
                }
                None => tracing::warn!(
                    "{}: has no option '{name}'; not sent (it declares: {})",
                    client.label,
                    client
                        .options
                        .iter()
                        .map(|o| o.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
        // The first `isready` may wait for a network file to load; the
        // second is the round trip alone.
        client.isready(READY_TIMEOUT).await?;
        client.measure_round_trip().await?;
        tracing::debug!("{} is ready: {:?}", client.label, client.name);
        Ok(client)
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// `setoption name UCI_Variant value …` for a game other than chess,
    /// with the name as the child's combo writes it; [`ChildError::NoVariant`]
    /// when its combo lacks the game (or it has none).
    async fn set_variant(&mut self, variant: Rules) -> Result<(), ChildError> {
        if variant == Rules::default() {
            return Ok(());
        }
        let (name, vars) = self
            .options
            .iter()
            .find_map(|o| match &o.kind {
                OptionType::Combo { vars, .. } if o.name.eq_ignore_ascii_case("UCI_Variant") => {
                    Some((o.name.clone(), vars.as_slice()))
                }
                _ => None,
            })
            .unwrap_or_default();
        let Some(value) = vars.iter().find(|v| v.eq_ignore_ascii_case(variant.uci())) else {
            return Err(ChildError::NoVariant {
                engine: self.label.clone(),
                variant,
                offered: match vars {
                    [] => "chess only".to_owned(),
                    vars => vars.join(" "),
                },
            });
        };
        let command = GuiCommand::SetOption {
            name,
            value: Some(value.clone()),
        };
        self.send(&command, "setting UCI_Variant").await
    }

    /// `uci` … `uciok`, collecting `id name` and the `option` lines.
    pub async fn uci(&mut self) -> Result<(), ChildError> {
        self.send(&GuiCommand::Uci, "starting (uci)").await?;
        let sent = Instant::now();
        loop {
            match self
                .read_line(sent, HANDSHAKE_TIMEOUT, "uciok", "starting (uci)")
                .await?
            {
                EngineLine::UciOk => return Ok(()),
                EngineLine::IdName(name) => self.name = Some(name),
                EngineLine::Option(spec) => self.options.push(spec),
                _ => {}
            }
        }
    }

    /// `isready` … `readyok`; how long it took.
    pub async fn isready(&mut self, timeout: Duration) -> Result<Duration, ChildError> {
        self.send(&GuiCommand::IsReady, "waiting for readyok")
            .await?;
        let sent = Instant::now();
        loop {
            if let EngineLine::ReadyOk = self.read_line(sent, timeout, "readyok", "isready").await?
            {
                return Ok(sent.elapsed());
            }
        }
    }

    /// A bare `isready` (nothing to load or clear before it): its time is
    /// the round trip to the child, kept in [`Client::round_trip`].
    pub async fn measure_round_trip(&mut self) -> Result<(), ChildError> {
        self.round_trip = self.isready(READY_TIMEOUT).await?;
        Ok(())
    }

    /// `ucinewgame`, then `isready`: the child forgets what it learned.
    /// It happens on the way to a search under `limit`, so the `readyok`
    /// waits no longer than that search could ever take
    /// ([`stall_deadline`]): a child that goes deaf after `ucinewgame`
    /// costs the search that, not READY_TIMEOUT.
    pub async fn ucinewgame(&mut self, limit: ChildLimit) -> Result<(), ChildError> {
        self.settle().await?;
        self.queue(&GuiCommand::UciNewGame);
        self.isready(stall_deadline(limit).min(READY_TIMEOUT))
            .await
            .map(|_| ())
    }

    /// Sets the child's `MultiPV` to `lines` when it differs and the child
    /// declares it; the lines its searches now give (1 where it cannot).
    fn set_multipv(&mut self, lines: u32) -> u32 {
        let Some((name, set)) = &self.multipv else {
            return 1;
        };
        if lines != *set {
            let command = GuiCommand::SetOption {
                name: name.clone(),
                value: Some(lines.to_string()),
            };
            self.queue(&command);
            if let Some((_, set)) = &mut self.multipv {
                *set = lines;
            }
        }
        lines
    }

    /// `position` … for the query: the game's start and every move since, so
    /// the child sees repetitions. Queued: it goes with the `go` after it.
    fn position(&mut self, query: &Query) {
        let game = &query.game;
        let command = GuiCommand::Position {
            start: game.start_fen().map_or(StartPosition::Startpos, |fen| {
                StartPosition::Fen(fen.to_string())
            }),
            moves: game
                .moves()
                .iter()
                .chain(&query.line)
                .map(|m| m.text(self.castling))
                .collect(),
        };
        self.queue(&command);
    }

    /// The legal moves of the position after the game, as the child lists
    /// them (`go perft 1`: a line `move: 1` each, then `Nodes searched:
    /// N`): how a game by a child's rules learns its moves. A list whose
    /// count disagrees with its lines is a bad answer.
    pub async fn perft(&mut self, game: &Arc<Game>) -> Result<Vec<MoveText>, ChildError> {
        self.settle().await?;
        self.position(&Query::root(game.clone(), ChildLimit::Nodes(1)));
        let command = GuiCommand::Unknown("go perft 1".to_owned());
        self.send(&command, "listing the legal moves").await?;
        let sent = Instant::now();
        let mut moves = Vec::new();
        loop {
            let line = self
                .read_line(
                    sent,
                    PERFT_TIMEOUT,
                    "Nodes searched",
                    "listing the legal moves",
                )
                .await?;
            let EngineLine::Other(text) = line else {
                continue;
            };
            let text = text.trim();
            if let Some(count) = text.strip_prefix("Nodes searched:") {
                return match count.trim().parse::<usize>() {
                    Ok(n) if n == moves.len() => Ok(moves),
                    _ => Err(ChildError::BadAnswer {
                        engine: self.label.clone(),
                        line: text.to_owned(),
                        fen: game.describe_after(&[]),
                        reason: format!("{} moves listed (after 'go perft 1')", moves.len()),
                    }),
                };
            }
            if let Some((mv, "1")) = text.split_once(':').map(|(m, n)| (m, n.trim()))
                && let Ok(mv) = mv.trim().parse::<MoveText>()
            {
                moves.push(mv);
            }
        }
    }

    /// One search for `query`: clears the hash when configured, sets the
    /// position, `go`, and reads to `bestmove`. On `cancel` the child is sent
    /// `stop` and drained; the report is then marked `stopped`.
    pub async fn search(
        &mut self,
        query: &Query,
        cancel: &CancellationToken,
    ) -> Result<Report, SearchError> {
        self.settle().await?;
        let started = Instant::now();
        if self.clear_hash {
            self.ucinewgame(query.limit).await?;
        }
        self.position(query);
        let lines = self.set_multipv(query.lines());
        let go = GuiCommand::Go(query.go());
        let stall_after = stall_deadline(query.limit);
        let go_sent = Instant::now();
        self.send(&go, "starting a search").await?;
        self.searching = true;
        // Until `stop`: the stall deadline from `go` (pondering, none until
        // `ponderhit`, from which it counts: the opponent's think has no
        // bound of ours); after it, STOP_TIMEOUT from `stop`.
        let mut pondering = query.ponderhit.is_some();
        let hit = query.ponderhit.clone().unwrap_or_default();
        let (mut since, mut limit) = (go_sent, stall_after);
        if pondering {
            limit = PONDER_UNBOUNDED;
        }
        let mut stopped = false;
        let (mut depth, mut nodes) = (0, 0);
        let (mut exact, mut bounded) = (None, None);
        let mut extra = Extra::default();
        let mut pv = Vec::new();
        // The searched position, where mpcmc knows the rules: a shown
        // progress line's mate claim is checked on it.
        let board = query.position();
        let shown = query.progress.as_ref();
        // With `MultiPV`, an iteration's first line waits for its others.
        let mut set: Option<Progress> = None;
        let flush = |set: &mut Option<Progress>| {
            if let (Some(p), Some(sink)) = (set.take(), shown) {
                sink.send(p);
            }
        };
        loop {
            let line = tokio::select! {
                biased;
                _ = cancel.cancelled(), if !stopped => {
                    stopped = true;
                    self.send(&GuiCommand::Stop, "stopping a search").await?;
                    let now = Instant::now();
                    if now + STOP_TIMEOUT < since + limit {
                        (since, limit) = (now, STOP_TIMEOUT);
                    }
                    continue;
                }
                _ = hit.cancelled(), if pondering && !stopped => {
                    pondering = false;
                    self.send(&GuiCommand::PonderHit, "relaying ponderhit").await?;
                    (since, limit) = (Instant::now(), stall_after);
                    continue;
                }
                line = self.read_line(since, limit, "bestmove", "searching") => line.map_err(|e| e.at(|| query.game.describe_after(&query.line)))?,
            };
            if matches!(line, EngineLine::BestMove { .. }) {
                flush(&mut set);
            }
            match line {
                EngineLine::Info(info) if info.multipv.is_none_or(|k| k == 1) => {
                    let now = extra_of(&info);
                    if let Some(sink) = shown
                        && let Some(d) = info.depth
                    {
                        let line = query.game.read_line(&query.line, &info.pv);
                        let score = info.score.map(Value::from_uci);
                        // A mate the board refutes is not shown: GUIs resign
                        // or adjudicate on it.
                        let refuted = (board.as_ref().zip(score))
                            .and_then(|(pos, v)| false_mate_claim(pos, line.first(), v));
                        if !line.is_empty() && refuted.is_none() {
                            flush(&mut set);
                            let progress = Progress {
                                depth: d,
                                extra: now,
                                score,
                                nodes: info.nodes.unwrap_or(nodes),
                                pv: line,
                                others: Vec::new(),
                            };
                            match lines {
                                1 => sink.send(progress),
                                _ => set = Some(progress),
                            }
                        }
                    }
                    depth = info.depth.unwrap_or(depth);
                    nodes = info.nodes.unwrap_or(nodes);
                    extra = Extra {
                        seldepth: now.seldepth.or(extra.seldepth),
                        hashfull: now.hashfull.or(extra.hashfull),
                        tbhits: now.tbhits.or(extra.tbhits),
                        wdl: now.wdl.or(extra.wdl),
                    };
                    if let Some(score) = info.score {
                        let value = Value::from_uci(score);
                        if score.bound == Bound::Exact {
                            exact = Some(value);
                        } else {
                            bounded = Some(value);
                        }
                    }
                    if !info.pv.is_empty() {
                        pv = info.pv;
                    }
                }
                // The iteration's other lines (`MultiPV`), when shown.
                EngineLine::Info(info) if info.multipv.is_some() => {
                    if let (Some(p), Some(_)) = (&mut set, shown)
                        && info.depth == Some(p.depth)
                    {
                        let line = query.game.read_line(&query.line, &info.pv);
                        if line.first().is_some_and(|m| !p.pv.starts_with(&[*m])) {
                            p.others.push(PvOf {
                                score: info.score.map(Value::from_uci),
                                pv: line,
                            });
                        }
                        if p.others.len() + 1 >= lines as usize {
                            flush(&mut set);
                        }
                    }
                }
                // Some engines answer an early `stop` with no move: the search
                // was cut before it had one; the child is fine.
                EngineLine::BestMove { best: None, .. } if stopped => {
                    self.searching = false;
                    return Err(SearchError::Cancelled);
                }
                EngineLine::BestMove { best, ponder } => {
                    self.searching = false;
                    let search_time = go_sent.elapsed();
                    let best = self.checked(query, board.as_ref(), best, exact, &go)?;
                    return Ok(Report {
                        best,
                        extra,
                        score: exact.or(bounded),
                        pv: best
                            .map_or_else(Vec::new, |best| bestmove_line(query, best, &pv, ponder)),
                        depth,
                        nodes,
                        search_time,
                        busy_time: started.elapsed(),
                        stopped,
                        slot: None,
                        exact: false,
                    });
                }
                _ => {}
            }
        }
    }

    /// Checks a `bestmove` against the searched position, and a mate in
    /// one that the search's exact score claims ([`false_mate_claim`]).
    /// `None`: no move, where the game has ended by a child's rules (the
    /// score says how); where mpcmc knows the rules, no child is asked
    /// about a finished game.
    fn checked(
        &self,
        query: &Query,
        board: Option<&VariantPosition>,
        best: Option<MoveText>,
        score: Option<Value>,
        go: &GuiCommand,
    ) -> Result<Option<GameMove>, ChildError> {
        let bad = |reason: &str| ChildError::BadAnswer {
            engine: self.label.clone(),
            line: self.answer.clone(),
            fen: query.game.describe_after(&query.line),
            reason: format!("{reason} (after '{go}')"),
        };
        let Some(text) = best else {
            return match board {
                Some(_) => Err(bad("no move in a position with legal moves")),
                None if score.is_some() => Ok(None),
                None => Err(bad("no move and no score")),
            };
        };
        let mv = (query.game.read_after(&query.line, &text)).ok_or_else(|| bad("illegal move"))?;
        match (board.zip(score)).and_then(|(pos, v)| false_mate_claim(pos, Some(&mv), v)) {
            Some(reason) => Err(bad(&reason)),
            None => Ok(Some(mv)),
        }
    }

    /// Finishes a search whose future was dropped before its `bestmove`:
    /// `stop`, then read to `bestmove`.
    async fn settle(&mut self) -> Result<(), ChildError> {
        if !self.searching {
            return Ok(());
        }
        self.send(&GuiCommand::Stop, "stopping an abandoned search")
            .await?;
        let sent = Instant::now();
        loop {
            let line = self
                .read_line(
                    sent,
                    STOP_TIMEOUT,
                    "bestmove",
                    "stopping an abandoned search",
                )
                .await?;
            if let EngineLine::BestMove { .. } = line {
                self.searching = false;
                return Ok(());
            }
        }
    }

    /// `quit`, then kill if the child process does not exit within
    /// `timeout`.
    pub async fn quit(mut self, timeout: Duration) {
        let _ = tokio::time::timeout(timeout, self.send(&GuiCommand::Quit, "quitting")).await;
        let Some(mut child) = self.process.take() else {
            return;
        };
        if tokio::time::timeout(timeout, child.wait()).await.is_err() {
            tracing::warn!("{} did not quit within {timeout:?}; ending it", self.label);
            match &self.group {
                // A launcher ended by SIGTERM cleans up before it goes
                // (killed, `srun` would leave its job step running).
                Some(group) if group.ends_by() == End::Term => {
                    group.end();
                    let _ = tokio::time::timeout(timeout, child.wait()).await;
                }
                _ => {
                    let _ = child.kill().await;
                }
            }
        }
    }

    /// `command`, to be written with the next one [`Client::send`] writes:
    /// the commands that lead to an answer (`position` … `go`, `ucinewgame`
    /// `isready`) go in one write. Through a pipe that changes nothing;
    /// through a socket (`srun`, `ssh`) a second small write sent before
    /// the first is acknowledged waits for the acknowledgement (Nagle's
    /// algorithm), which the far end may hold back up to 40 ms: measured
    /// through `srun`, the `go` after `position` reached the child a mean
    /// 14–17 ms late, and 0.4 ms in one write (README, *On a cluster*).
    fn queue(&mut self, command: &GuiCommand) {
        let line = command.to_string();
        tracing::trace!("{} < {line}", self.label);
        self.queued.extend_from_slice(line.as_bytes());
        self.queued.push(b'\n');
    }

    /// Writes what is queued and `command` at once.
    async fn send(&mut self, command: &GuiCommand, doing: &str) -> Result<(), ChildError> {
        self.queue(command);
        let bytes = std::mem::take(&mut self.queued);
        let written = async {
            self.stdin.write_all(&bytes).await?;
            self.stdin.flush().await
        };
        match tokio::time::timeout(WRITE_TIMEOUT, written).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.died(doing, Some(e)).await),
            Err(_) => Err(ChildError::Stalled {
                engine: self.label.clone(),
                waiting_for: "room on its stdin",
                after: WRITE_TIMEOUT,
            }),
        }
    }

    /// Reads the next line, at most `limit` after `since` (when the command
    /// awaited was sent). Lines that do not parse are logged and skipped,
    /// except a malformed `bestmove`, which is an error.
    async fn read_line(
        &mut self,
        since: Instant,
        limit: Duration,
        waiting_for: &'static str,
        doing: &str,
    ) -> Result<EngineLine, ChildError> {
        let deadline = since + limit;
        loop {
            let read = tokio::time::timeout_at(
                deadline,
                next_line_async(&mut self.stdout, &mut self.splitter),
            )
            .await;
            let line = match read {
                Err(_) => {
                    return Err(ChildError::Stalled {
                        engine: self.label.clone(),
                        waiting_for,
                        after: since.elapsed(),
                    });
                }
                Ok(Ok(Some(Split::Line(line)))) => line,
                Ok(Ok(Some(Split::Overlong))) => {
                    return Err(ChildError::Overlong {
                        engine: self.label.clone(),
                        doing: doing.to_owned(),
                    });
                }
                Ok(Ok(None)) => return Err(self.died(doing, None).await),
                Ok(Err(e)) => return Err(self.died(doing, Some(e)).await),
            };
            tracing::trace!("{} > {line}", self.label);
            match parse_engine_line(&line) {
                Ok(parsed) => {
                    if let EngineLine::BestMove { .. } = parsed {
                        self.answer = line.trim().to_owned();
                    }
                    return Ok(parsed);
                }
                Err(e) if line.trim_start().starts_with("bestmove") => {
                    return Err(ChildError::BadAnswer {
                        engine: self.label.clone(),
                        line,
                        fen: String::new(),
                        reason: e.to_string(),
                    });
                }
                Err(e) => tracing::debug!("{}: skipped unparsable line: {e}", self.label),
            }
        }
    }

    /// The error for a child whose pipe closed, with its exit status if it is
    /// a process and has one by now.
    async fn died(&mut self, doing: &str, io: Option<std::io::Error>) -> ChildError {
        let exited = match self.process.as_mut() {
            Some(child) => tokio::time::timeout(Duration::from_millis(200), child.wait())
                .await
                .ok()
                .and_then(Result::ok),
            None => None,
        };
        let status = match (exited, io) {
            (Some(s), _) => s.to_string(),
            (None, Some(e)) => format!("pipe error: {e}"),
            (None, None) if self.process.is_some() => "end of output, still running".to_owned(),
            (None, None) => "end of output".to_owned(),
        };
        ChildError::Died {
            engine: self.label.clone(),
            doing: doing.to_owned(),
            status,
        }
    }
}

/// How long a child may take to list a position's legal moves.
const PERFT_TIMEOUT: Duration = Duration::from_secs(5);

/// The line of a `bestmove`: the child's last `pv` when it starts with
/// `best` (its legal prefix), else `best` alone; when that is one move, the
/// `bestmove`'s legal `ponder` move follows it. Stockfish's last `pv`
/// after a `stop` or a `ponderhit` is often its move alone, with the
/// reply it expects only in `bestmove … ponder` (from its hash).
fn bestmove_line(
    query: &Query,
    best: GameMove,
    pv: &[MoveText],
    ponder: Option<MoveText>,
) -> Vec<GameMove> {
    let mut line = query.game.read_line(&query.line, pv);
    if line.first() != Some(&best) {
        line = vec![best];
    }
    if line.len() == 1
        && let Some(ponder) = ponder
    {
        let after = [query.line.as_slice(), &[best]].concat();
        if let Some(reply) = query.game.read_after(&after, &ponder) {
            line.push(reply);
        }
    }
    line
}

/// Why a child's claim of a mate now or in one, in `pos` with `best` its
/// move and `score` its score, is false on the board; `None` when it holds
/// or is no such claim. A warm Stockfish 15.1 has been seen to answer
/// `score mate -1` (`bestmove` into a mate) where the side to move mates in
/// three, after searches of other positions filled its hash: its move, the
/// reply the lookahead then predicted, lost a game. A false claim in a
/// `bestmove`'s score is a bad answer: the child is restarted (its hash
/// gone) and the search asked once more, of another worker when one is up;
/// in an iteration shown to the GUI, the line is not shown.
fn false_mate_claim(
    pos: &VariantPosition,
    best: Option<&GameMove>,
    score: Value,
) -> Option<String> {
    // Mates are chess's: a variant's wins come on either side's turn
    // (antichess: after the other side takes one's last piece), and its
    // engines count them their own way.
    if pos.variant() != Variant::Chess {
        return None;
    }
    let mates = |p: &VariantPosition, m: &Move| {
        let mut after = p.clone();
        after.play_unchecked(*m);
        after.is_checkmate()
    };
    match score.mate_plies()? {
        0 if !pos.legal_moves().is_empty() => {
            Some("claims to be mated, but has legal moves".to_owned())
        }
        1 if !best.and_then(|b| b.board()).is_some_and(|b| mates(pos, &b)) => {
            Some("claims mate in one, but its move does not mate".to_owned())
        }
        -2 => pos
            .legal_moves()
            .iter()
            .find(|m| {
                let mut after = pos.clone();
                after.play_unchecked(**m);
                !after.legal_moves().iter().any(|r| mates(&after, r))
            })
            .map(|m| {
                format!(
                    "claims to be mated in one, but {} escapes",
                    UciMove::from_standard(*m)
                )
            }),
        _ => None,
    }
}
