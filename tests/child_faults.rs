//! The child side under fault injection: `engine::Client` and `engine::Pool`
//! driven against `mpcmc-fake-engine` (a fake with fault flags, see
//! `tests/fake-engine/fake_engine.rs`) and against real Stockfish.
//!
//! Every failure must come back as the right `ChildError`, naming the child and
//! what it was doing; the pool must retry once and leave no process behind.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use mpcmc::{
    children::{
        ChildConfig, ChildError, Client, Pool, PoolConfig, SearchError,
        client::{HANDSHAKE_TIMEOUT, STOP_TIMEOUT, stall_deadline},
    },
    mpc::{ChildLimit, Children, Game, Query, Report, Role, Value},
};
use shakmaty::{CastlingMode, Move, Position, uci::UciMove};
use tokio_util::sync::CancellationToken;

const FAKE: &str = env!("CARGO_BIN_EXE_mpcmc-fake-engine");
const STOCKFISH: &str = "/usr/games/stockfish";
const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

// ---------------------------------------------------------------------------
// Helpers

/// Quotes a word for the shell-words split of `ChildConfig::command`.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The fake's command line with `flags`.
fn fake(flags: &[&str]) -> String {
    let mut line = quote(FAKE);
    for f in flags {
        line.push(' ');
        line.push_str(&quote(f));
    }
    line
}

fn stockfish() -> &'static str {
    assert!(
        Path::new(STOCKFISH).is_file(),
        "this test needs Stockfish at {STOCKFISH} (apt-get install -y stockfish); it is missing"
    );
    STOCKFISH
}

fn config(command: String) -> ChildConfig {
    ChildConfig {
        command,
        options: Vec::new(),
        castling: CastlingMode::Standard,
        clear_hash: false,
    }
}

/// A file in the temp dir, unique to this test process and `name`, removed on
/// drop; the fake appends what it receives there (`--echo-to`).
struct Echo(PathBuf);

impl Echo {
    fn new(name: &str) -> Echo {
        let path = std::env::temp_dir().join(format!(
            "mpcmc-child-faults-{}-{name}.log",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        Echo(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("temp paths are UTF-8 here")
    }

    fn flag(&self) -> String {
        format!("--echo-to={}", self.path())
    }

    /// Every line the fake(s) received so far.
    fn lines(&self) -> Vec<String> {
        match std::fs::read_to_string(&self.0) {
            Ok(text) => text.lines().map(str::to_owned).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => panic!("reading {}: {e}", self.0.display()),
        }
    }

    fn count(&self, verb: &str) -> usize {
        self.lines()
            .iter()
            .filter(|l| l.split_whitespace().next() == Some(verb))
            .count()
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn game_from(fen: Option<&str>, moves: &str) -> Game {
    let mut game = match fen {
        None => Game::default(),
        Some(fen) => Game::from_fen(fen, CastlingMode::Standard).expect("test FEN"),
    };
    for uci in moves.split_whitespace() {
        game.push_uci(&uci.parse().expect("test move"))
            .expect("legal test move");
    }
    game
}

/// Moves in UCI notation, legal in turn from the game's current position.
fn line_from(game: &Game, moves: &str) -> Vec<Move> {
    let mut pos = game.position().clone();
    moves
        .split_whitespace()
        .map(|uci| {
            let m = uci
                .parse::<UciMove>()
                .expect("test move")
                .to_move(&pos)
                .expect("legal test move");
            pos.play_unchecked(m);
            m
        })
        .collect()
}

fn query(game: Game, line: Vec<Move>, limit: ChildLimit) -> Query {
    Query {
        role: Role::Evaluator,
        game: Arc::new(game),
        line,
        limit,
    }
}

fn startpos_query(limit: ChildLimit) -> Query {
    query(Game::default(), Vec::new(), limit)
}

fn uci(m: Move) -> String {
    UciMove::from_move(m, CastlingMode::Standard).to_string()
}

async fn spawn(command: String, label: &str) -> Client {
    match Client::spawn(&config(command.clone()), label.to_owned()).await {
        Ok(client) => client,
        Err(e) => panic!("could not start {command}: {e}"),
    }
}

fn report_of(result: Result<Report, SearchError>) -> Report {
    result.unwrap_or_else(|e| panic!("the search failed: {e}"))
}

/// A search's failure, which must be the child's fault (not a cancel).
fn child_fault(e: SearchError) -> ChildError {
    match e {
        SearchError::Child(e) => e,
        other => panic!("expected a child's fault, got {other:?}"),
    }
}

/// The state (`R`, `S`, `Z`, …) of process `pid` if it is a child of this test
/// process; zombies included: a child not yet waited for is left behind too.
fn child_state(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may contain spaces and parentheses.
    let (_, after) = stat.rsplit_once(')')?;
    let mut fields = after.split_whitespace();
    let (state, ppid) = (fields.next()?, fields.next()?);
    (ppid == std::process::id().to_string()).then(|| state.to_owned())
}

/// The running children of this test process whose command line contains
/// `marker` (tests run in parallel, so each marks its children with a unique
/// path).
fn children_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if child_state(pid).is_none() {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

/// Those of `pids` still children of this process (running or zombie), as
/// `pid state`.
fn left_behind(pids: &[u32]) -> Vec<String> {
    pids.iter()
        .filter_map(|&pid| child_state(pid).map(|state| format!("{pid} {state}")))
        .collect()
}

// ---------------------------------------------------------------------------
// Client against the fake

#[tokio::test]
async fn crash_on_go_is_died_with_the_exit_status() {
    let mut client = spawn(fake(&["--crash-on-go"]), "crasher").await;
    let err = client
        .search(
            &startpos_query(ChildLimit::Nodes(100)),
            &CancellationToken::new(),
        )
        .await
        .map_err(child_fault)
        .expect_err("a child that exits on go cannot answer");
    let message = err.to_string();
    match &err {
        ChildError::Died {
            engine,
            doing,
            status,
        } => {
            assert!(engine.contains("crasher"), "{message}");
            assert!(engine.contains("--crash-on-go"), "{message}");
            assert_eq!(doing, "searching", "{message}");
            assert!(status.contains("exit status: 3"), "{message}");
        }
        other => panic!("expected ChildError::Died, got {other:?}"),
    }
    assert!(err.needs_restart());
    assert!(message.contains("crasher") && message.contains("died while searching"));
    client.quit(Duration::from_millis(500)).await;
}

#[tokio::test]
async fn stall_after_go_is_stalled_by_the_deadline() {
    let mut client = spawn(fake(&["--stall-after-go"]), "staller").await;
    let limit = ChildLimit::MoveTime(Duration::from_millis(50));
    let deadline = stall_deadline(limit);
    assert!(deadline < Duration::from_secs(2), "{deadline:?}");
    let started = Instant::now();
    let err = client
        .search(&startpos_query(limit), &CancellationToken::new())
        .await
        .map_err(child_fault)
        .expect_err("a child that never answers go cannot answer");
    let took = started.elapsed();
    let message = err.to_string();
    match &err {
        ChildError::Stalled {
            engine,
            waiting_for,
            after,
        } => {
            assert!(engine.contains("staller"), "{message}");
            assert_eq!(*waiting_for, "bestmove", "{message}");
            // The stall deadline, counted from `go`; `after` from a little later.
            assert!(*after >= deadline - Duration::from_millis(100), "{message}");
        }
        other => panic!("expected ChildError::Stalled, got {other:?}"),
    }
    assert!(
        took >= deadline && took < deadline + Duration::from_secs(2),
        "stalled after {took:?}, deadline {deadline:?}"
    );
    assert!(message.contains("staller") && message.contains("no bestmove"));
    assert!(err.needs_restart());
    client.quit(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn cancel_stops_the_search_and_reports_stopped() {
    let echo = Echo::new("cancel");
    let mut client = spawn(
        fake(&["--stall-after-go", "--answer-stop", &echo.flag()]),
        "stoppable",
    )
    .await;
    // A long movetime: only `stop` can end this search early.
    let q = startpos_query(ChildLimit::MoveTime(Duration::from_secs(60)));
    for round in 0..2 {
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            trigger.cancel();
        });
        let started = Instant::now();
        let report = report_of(client.search(&q, &cancel).await);
        let took = started.elapsed();
        assert!(report.stopped, "round {round}: {report:?}");
        assert_eq!(uci(report.best), "e2e4");
        assert!(
            took < Duration::from_millis(1200),
            "round {round}: stop answered after {took:?}"
        );
    }
    // Drained after each stop: one go, one stop per search, nothing else.
    assert_eq!(echo.count("go"), 2, "{:?}", echo.lines());
    assert_eq!(echo.count("stop"), 2, "{:?}", echo.lines());
    client.quit(Duration::from_millis(500)).await;
}

#[tokio::test]
async fn cancel_of_a_child_ignoring_stop_is_stalled_after_stop_timeout() {
    let mut client = spawn(fake(&["--stall-after-go"]), "deaf").await;
    let q = startpos_query(ChildLimit::MoveTime(Duration::from_secs(60)));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let err = client
        .search(&q, &cancel)
        .await
        .map_err(child_fault)
        .expect_err("a child that ignores stop cannot answer");
    let took = started.elapsed();
    match &err {
        ChildError::Stalled {
            engine,
            waiting_for,
            ..
        } => {
            assert!(engine.contains("deaf"), "{err}");
            assert_eq!(*waiting_for, "bestmove", "{err}");
        }
        other => panic!("expected ChildError::Stalled, got {other:?}"),
    }
    assert!(
        took >= STOP_TIMEOUT && took < STOP_TIMEOUT + Duration::from_secs(2),
        "stalled after {took:?}, not STOP_TIMEOUT after the cancel"
    );
    client.quit(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn no_uciok_is_stalled_on_spawn() {
    let started = Instant::now();
    let result = Client::spawn(&config(fake(&["--stall-on-uci"])), "mute".to_owned()).await;
    let took = started.elapsed();
    let err = match result {
        Ok(_) => panic!("a child that never sends uciok cannot start"),
        Err(e) => e,
    };
    let message = err.to_string();
    match &err {
        ChildError::Stalled {
            engine,
            waiting_for,
            after,
        } => {
            assert!(engine.contains("mute"), "{message}");
            assert!(engine.contains("--stall-on-uci"), "{message}");
            assert_eq!(*waiting_for, "uciok", "{message}");
            // `after` counts from the last line read (here the last
            // `option`), not from `uci`: a little under the timeout.
            assert!(
                *after > HANDSHAKE_TIMEOUT - Duration::from_secs(2),
                "{message}"
            );
        }
        other => panic!("expected ChildError::Stalled, got {other:?}"),
    }
    assert!(
        took >= HANDSHAKE_TIMEOUT && took < HANDSHAKE_TIMEOUT + Duration::from_secs(3),
        "stalled after {took:?}"
    );
    assert!(message.contains("no uciok"), "{message}");
}

#[tokio::test]
async fn illegal_bestmove_is_a_bad_answer() {
    let mut client = spawn(fake(&["--illegal-bestmove"]), "liar").await;
    let err = client
        .search(
            &startpos_query(ChildLimit::Nodes(100)),
            &CancellationToken::new(),
        )
        .await
        .map_err(child_fault)
        .expect_err("a1a1 is no move");
    let message = err.to_string();
    match &err {
        ChildError::BadAnswer {
            engine,
            line,
            fen,
            reason,
        } => {
            assert!(engine.contains("liar"), "{message}");
            assert_eq!(line, "bestmove a1a1", "{message}");
            assert_eq!(fen, START_FEN, "{message}");
            assert!(reason.contains("illegal move"), "{message}");
            assert!(reason.contains("go nodes 100"), "{message}");
        }
        other => panic!("expected ChildError::BadAnswer, got {other:?}"),
    }
    assert!(err.needs_restart());
    client.quit(Duration::from_millis(500)).await;
}

#[tokio::test]
async fn none_bestmove_with_legal_moves_is_a_bad_answer() {
    let mut client = spawn(fake(&["--none-bestmove"]), "giver-up").await;
    let game = game_from(None, "e2e4 e7e5");
    let err = client
        .search(
            &query(game, Vec::new(), ChildLimit::Depth(3)),
            &CancellationToken::new(),
        )
        .await
        .map_err(child_fault)
        .expect_err("(none) with legal moves is no answer");
    let message = err.to_string();
    match &err {
        ChildError::BadAnswer {
            engine,
            line,
            fen,
            reason,
        } => {
            assert!(engine.contains("giver-up"), "{message}");
            assert_eq!(line, "bestmove (none)", "{message}");
            assert_eq!(
                fen, "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
                "{message}"
            );
            assert!(reason.contains("no move"), "{message}");
        }
        other => panic!("expected ChildError::BadAnswer, got {other:?}"),
    }
    client.quit(Duration::from_millis(500)).await;
}

#[tokio::test]
async fn garbage_lines_are_skipped() {
    let mut client = spawn(fake(&["--garbage", "--move=d2d4"]), "noisy").await;
    assert_eq!(client.name.as_deref(), Some("fake-engine"));
    let names: Vec<_> = client.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["Hash", "Threads"]);
    let report = report_of(
        client
            .search(
                &startpos_query(ChildLimit::Nodes(100)),
                &CancellationToken::new(),
            )
            .await,
    );
    assert_eq!(uci(report.best), "d2d4");
    assert_eq!(report.score, Some(Value::cp(10)));
    assert_eq!((report.depth, report.nodes), (1, 1));
    assert_eq!(report.pv, [report.best]);
    assert!(!report.stopped);
    client.quit(Duration::from_millis(500)).await;
}

#[tokio::test]
async fn spawn_of_a_missing_program_names_it() {
    let command = "/nonexistent/mpcmc-no-such-engine --uci".to_owned();
    let err = match Client::spawn(&config(command), "ghost".to_owned()).await {
        Ok(_) => panic!("a missing program cannot start"),
        Err(e) => e,
    };
    let message = err.to_string();
    match &err {
        ChildError::Spawn { command, source } => {
            assert!(command.contains("/nonexistent/mpcmc-no-such-engine"));
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{message}");
        }
        other => panic!("expected ChildError::Spawn, got {other:?}"),
    }
    assert!(
        message.contains("/nonexistent/mpcmc-no-such-engine"),
        "{message}"
    );
    assert!(!err.needs_restart());

    // A command line that does not split is refused before anything runs.
    let err = match Client::spawn(&config("'unclosed".to_owned()), "typo".to_owned()).await {
        Ok(_) => panic!("an unsplittable command line cannot start"),
        Err(e) => e,
    };
    assert!(matches!(err, ChildError::Command(_)), "{err:?}");
    assert!(err.to_string().contains("'unclosed"), "{err}");
}

#[tokio::test]
async fn position_sends_the_whole_history_and_clears_the_hash_when_asked() {
    // From the start position, with hash clearing and options.
    let echo = Echo::new("position-startpos");
    let mut child = config(fake(&["--move=d2d3", &echo.flag()]));
    child.clear_hash = true;
    child.options = vec![
        ("hash".to_owned(), "32".to_owned()),
        ("No Such Option".to_owned(), "1".to_owned()),
    ];
    let mut client = match Client::spawn(&child, "historian".to_owned()).await {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let game = game_from(None, "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5");
    let line = line_from(&game, "e1g1 g8f6");
    let q = query(game, line, ChildLimit::Nodes(1000));
    for _ in 0..2 {
        let report = report_of(client.search(&q, &CancellationToken::new()).await);
        assert_eq!(uci(report.best), "d2d3");
    }
    client.quit(Duration::from_millis(500)).await;
    let position = "position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 e1g1 g8f6";
    let search = ["ucinewgame", "isready", position, "go nodes 1000"];
    let mut want = vec!["uci", "setoption name Hash value 32", "isready"];
    want.extend(search);
    want.extend(search);
    want.push("quit");
    assert_eq!(echo.lines(), want);

    // From a FEN, without hash clearing, castling written the Chess960 way.
    let echo = Echo::new("position-fen");
    let fen = "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let mut child = config(fake(&["--move=e8h8", &echo.flag()]));
    child.castling = CastlingMode::Chess960;
    let mut client = match Client::spawn(&child, "historian960".to_owned()).await {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let game = game_from(Some(fen), "d2d3 g8f6");
    let line = line_from(&game, "e1g1");
    let q = query(game, line, ChildLimit::MoveTime(Duration::from_millis(20)));
    let report = report_of(client.search(&q, &CancellationToken::new()).await);
    assert!(
        matches!(report.best, Move::Castle { .. }),
        "king takes rook is castling: {:?}",
        report.best
    );
    client.quit(Duration::from_millis(500)).await;
    let position = format!("position fen {fen} moves d2d3 g8f6 e1h1");
    assert_eq!(
        echo.lines(),
        ["uci", "isready", &position, "go movetime 20", "quit"]
    );
}

// ---------------------------------------------------------------------------
// Pool

#[tokio::test]
async fn pool_retries_a_crashed_child_once_then_fails() {
    let echo = Echo::new("pool-crash");
    let child = config(fake(&["--crash-on-go", &echo.flag()]));
    let pool = Pool::start(PoolConfig {
        evaluator: child.clone(),
        opponent: child,
        threads: 1,
    });
    let err = pool
        .search(
            startpos_query(ChildLimit::Nodes(100)),
            CancellationToken::new(),
        )
        .await
        .map_err(child_fault)
        .expect_err("both children crash on go");
    match &err {
        ChildError::Died { engine, status, .. } => {
            assert!(engine.contains("child 1"), "{err}");
            assert!(status.contains("exit status: 3"), "{err}");
        }
        other => panic!("expected ChildError::Died, got {other:?}"),
    }
    // The first child, then one fresh child for the retry.
    assert_eq!(echo.count("uci"), 2, "{:?}", echo.lines());
    assert_eq!(echo.count("go"), 2, "{:?}", echo.lines());
    // Both were waited for before the answer came: none is running.
    let running = children_with(echo.path());
    assert!(
        running.is_empty(),
        "crashed children still running: {running:?}"
    );
    pool.shutdown().await;
    let running = children_with(echo.path());
    assert!(running.is_empty(), "processes left behind: {running:?}");
}

#[tokio::test]
async fn pool_serves_the_other_role_while_one_keeps_crashing() {
    let crash = Echo::new("pool-evaluator");
    let sound = Echo::new("pool-opponent");
    let pool = Pool::start(PoolConfig {
        evaluator: config(fake(&["--crash-on-go", &crash.flag()])),
        opponent: config(fake(&["--move=e7e5", &sound.flag()])),
        threads: 1,
    });
    let after_e4 = || game_from(None, "e2e4");
    let evaluator = query(after_e4(), Vec::new(), ChildLimit::Nodes(100));
    let opponent = Query {
        role: Role::Opponent,
        ..evaluator.clone()
    };
    for round in 1..=2 {
        let err = pool
            .search(evaluator.clone(), CancellationToken::new())
            .await
            .map_err(child_fault)
            .expect_err("the evaluator crashes on go");
        assert!(
            matches!(&err, ChildError::Died { engine, .. } if engine.contains("evaluator 1")),
            "round {round}: {err:?}"
        );
        let report = report_of(
            pool.search(opponent.clone(), CancellationToken::new())
                .await,
        );
        assert_eq!(uci(report.best), "e7e5");
        // Each failed search: the crashed child and its replacement.
        assert_eq!(crash.count("uci"), 2 * round, "{:?}", crash.lines());
    }
    // The sound child was started once and kept.
    assert_eq!(sound.count("uci"), 1, "{:?}", sound.lines());
    assert_eq!(sound.count("go"), 2, "{:?}", sound.lines());
    let running = children_with(sound.path());
    assert_eq!(running.len(), 1, "the opponent's process: {running:?}");
    pool.shutdown().await;
    let left = left_behind(&running);
    assert!(left.is_empty(), "processes left behind: {left:?}");
    for echo in [&crash, &sound] {
        let running = children_with(echo.path());
        assert!(running.is_empty(), "processes left behind: {running:?}");
    }
    assert_eq!(sound.lines().last().map(String::as_str), Some("quit"));
}

#[tokio::test]
async fn pool_of_stockfish_answers_and_shuts_down_clean() {
    // Stockfish under a name unique to this test, so its processes can be told
    // apart from those of tests running alongside.
    let dir =
        std::env::temp_dir().join(format!("mpcmc-child-faults-{}-pool-sf", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let program = dir.join("stockfish");
    std::os::unix::fs::symlink(stockfish(), &program).expect("symlink to stockfish");
    let program = program.to_str().expect("UTF-8 temp path").to_owned();

    let mut child = config(quote(&program));
    child.options = vec![
        ("Threads".to_owned(), "1".to_owned()),
        ("Hash".to_owned(), "16".to_owned()),
    ];
    child.clear_hash = true;
    let pool = Pool::start(PoolConfig {
        evaluator: child.clone(),
        opponent: child,
        threads: 2,
    });
    pool.ready().await;
    let game = game_from(None, "e2e4");
    let evaluator = query(game, Vec::new(), ChildLimit::Nodes(2000));
    let opponent = Query {
        role: Role::Opponent,
        ..evaluator.clone()
    };
    let (a, b) = tokio::join!(
        pool.search(evaluator.clone(), CancellationToken::new()),
        pool.search(opponent, CancellationToken::new()),
    );
    let pos = evaluator.position();
    for report in [report_of(a), report_of(b)] {
        assert!(pos.is_legal(report.best), "{report:?}");
        assert!(report.nodes > 0, "{report:?}");
    }
    // Two workers, one process each (the roles share it): the check below can
    // see them.
    let running = children_with(&program);
    assert_eq!(running.len(), 2, "{running:?}");

    pool.shutdown().await;
    let left = left_behind(&running);
    assert!(left.is_empty(), "processes left behind: {left:?}");
    assert!(children_with(&program).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------
// Client against Stockfish

#[tokio::test]
async fn stockfish_search_reports_move_score_nodes_and_pv() {
    let mut child = config(stockfish().to_owned());
    child.options = vec![
        ("Threads".to_owned(), "1".to_owned()),
        ("Hash".to_owned(), "16".to_owned()),
    ];
    child.clear_hash = true;
    let mut client = match Client::spawn(&child, "evaluator 1".to_owned()).await {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    assert!(
        client
            .name
            .as_deref()
            .is_some_and(|n| n.contains("Stockfish")),
        "{:?}",
        client.name
    );
    let q = query(game_from(None, "e2e4"), Vec::new(), ChildLimit::Nodes(2000));
    let report = report_of(client.search(&q, &CancellationToken::new()).await);
    let pos = q.position();
    assert!(pos.is_legal(report.best), "{report:?}");
    let score = report.score.expect("Stockfish reports a score");
    assert!(
        !score.is_mate() && score > Value::cp(-300) && score < Value::cp(300),
        "1.e4 is roughly level: {report:?}"
    );
    assert!(report.nodes > 0 && report.depth > 0, "{report:?}");
    assert_eq!(report.pv.first(), Some(&report.best), "{report:?}");
    assert!(!report.stopped);
    assert!(report.search_time <= report.busy_time);
    client.quit(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_dropped_search_is_drained_before_the_next_command() {
    let mut client = spawn(stockfish().to_owned(), "dropped").await;
    let cancel = CancellationToken::new();
    // A long search whose future is dropped after 30 ms: the child is still
    // searching and will print its bestmove later.
    let long = startpos_query(ChildLimit::Depth(30));
    let dropped =
        tokio::time::timeout(Duration::from_millis(30), client.search(&long, &cancel)).await;
    assert!(
        dropped.is_err(),
        "the depth-30 search cannot finish in 30 ms"
    );
    // The next search must get its own answer, legal after 1.e4.
    let game = game_from(None, "e2e4");
    let pos = game.position().clone();
    let report = report_of(
        client
            .search(&query(game, Vec::new(), ChildLimit::Nodes(1000)), &cancel)
            .await,
    );
    assert!(pos.is_legal(report.best), "{}", uci(report.best));
    assert!(!report.stopped);
    client.quit(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_dropped_pool_search_frees_its_worker() {
    let echo = Echo::new("pool-dropped");
    let child = config(fake(&["--stall-after-go", "--answer-stop", &echo.flag()]));
    let pool = Pool::start(PoolConfig {
        evaluator: child.clone(),
        opponent: child,
        threads: 1,
    });
    // Nobody waits for this one any more after 200 ms.
    let dropped = tokio::time::timeout(
        Duration::from_millis(200),
        pool.search(
            startpos_query(ChildLimit::MoveTime(Duration::from_secs(3))),
            CancellationToken::new(),
        ),
    )
    .await;
    assert!(dropped.is_err());
    // The worker stops it and takes the next search at once.
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stopper.cancel();
    });
    let started = Instant::now();
    let report = report_of(
        pool.search(
            startpos_query(ChildLimit::MoveTime(Duration::from_secs(3))),
            cancel,
        )
        .await,
    );
    assert!(report.stopped);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the worker was held by the abandoned search for {:?}",
        started.elapsed()
    );
    assert_eq!(
        echo.count("go"),
        2,
        "no retry of the abandoned search: {:?}",
        echo.lines()
    );
    pool.shutdown().await;
    assert!(children_with(echo.path()).is_empty());
}

// ---------------------------------------------------------------------------
// Warm children

#[tokio::test]
async fn warm_children_see_ucinewgame_between_games_and_never_between_calls() {
    let echo = Echo::new("warm");
    let child = config(fake(&[&echo.flag()]));
    let pool = Pool::start(PoolConfig {
        evaluator: child.clone(),
        opponent: child,
        threads: 2,
    });
    pool.ready().await;
    async fn search(pool: &Pool) -> Report {
        let q = startpos_query(ChildLimit::Nodes(100));
        report_of(pool.search(q, CancellationToken::new()).await)
    }
    for _ in 0..4 {
        search(&pool).await;
    }
    assert_eq!(echo.count("go"), 4);
    assert_eq!(echo.count("ucinewgame"), 0, "{:#?}", echo.lines());
    // A new game: each child that searches again clears first, once.
    pool.new_game();
    let mut slots = std::collections::BTreeSet::new();
    for _ in 0..4 {
        slots.insert(search(&pool).await.slot);
    }
    assert_eq!(echo.count("ucinewgame"), slots.len(), "{:#?}", echo.lines());
    let lines = echo.lines();
    let first_clear = lines.iter().position(|l| l == "ucinewgame");
    let gos_before = lines[..first_clear.unwrap_or(0)]
        .iter()
        .filter(|l| l.starts_with("go"))
        .count();
    assert_eq!(gos_before, 4, "cleared before the new game's searches only");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_root_moves_calls_share_a_child_and_its_position_comes_back_to_it() {
    use mpcmc::mpc::{Lookahead, Settings, decide};
    let child = config("builtin".to_owned());
    let pool = Arc::new(Pool::start(PoolConfig {
        evaluator: child.clone(),
        opponent: child,
        threads: 2,
    }));
    pool.ready().await;
    let game = Arc::new(Game::default());
    let candidates: Vec<Move> = game.position().legal_moves().into_iter().collect();
    let settings = Settings {
        lookahead: Lookahead::One,
        fortify: true,
        fortify_margin: 0,
    };
    let decision = decide(
        &pool,
        &game,
        &candidates,
        ChildLimit::Nodes(3000),
        settings,
        &CancellationToken::new(),
        &mut |_, _| {},
    )
    .await
    .expect("a decision");
    let pairs: Vec<(Option<usize>, Option<usize>)> = decision
        .candidates
        .iter()
        .filter(|c| c.calls.len() == 2)
        .map(|c| (c.calls[0].slot, c.calls[1].slot))
        .collect();
    assert_eq!(pairs.len(), candidates.len(), "{pairs:?}");
    let both_slots: std::collections::BTreeSet<_> = pairs.iter().map(|p| p.0).collect();
    assert_eq!(both_slots.len(), 2, "the moves are spread: {pairs:?}");
    // An idle worker takes calls a busy one has waiting (on a loaded
    // machine, many); the placement itself is tested exactly in the pool's
    // unit tests. Most calls stay with their root move.
    let together = pairs.iter().filter(|(a, b)| a == b).count();
    assert!(together * 2 > pairs.len(), "{together} of {pairs:?}");

    // The game goes on along a candidate's line: the next root search goes
    // to the child of the last one, which searched this subtree deepest.
    let root_slot = decision.root.as_ref().and_then(|r| r.slot);
    assert!(root_slot.is_some());
    for c in [&decision.candidates[5], &decision.candidates[6]] {
        let (mv, reply) = (c.mv, c.reply.expect("a reply"));
        let mut next = (*game).clone();
        next.push(mv);
        next.push(reply);
        let root = pool
            .search(
                query(next, Vec::new(), ChildLimit::Nodes(1000)),
                CancellationToken::new(),
            )
            .await;
        assert_eq!(report_of(root).slot, root_slot);
    }
    Arc::try_unwrap(pool)
        .unwrap_or_else(|_| panic!("the pool is still shared"))
        .shutdown()
        .await;
}
