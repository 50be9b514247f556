//! The child side over real processes: what only a process does (exits
//! with a status, must be waited for and never left behind), real Stockfish,
//! and the built-in children. The protocol's faults (stalls, bad answers,
//! garbage, `stop`) are tested in process, with time paused, in
//! `src/children/tests.rs`.
//!
//! Every failure must come back as the right `ChildError`, naming the child and
//! what it was doing; the pool must retry once and leave no process behind.

mod common;

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use common::sh_engine;
use mpcmc::{
    children::{ChildConfig, ChildError, Client, Pool, PoolConfig, SearchError},
    mpc::{ChildLimit, Children, Game, Query, Report, Role, Value},
};
use shakmaty::Position;
use tokio_util::sync::CancellationToken;

const STOCKFISH: &str = "/usr/games/stockfish";

// ---------------------------------------------------------------------------
// Helpers

/// Quotes a word for the shell-words split of `ChildConfig::command`.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

fn stockfish() -> &'static str {
    assert!(
        Path::new(STOCKFISH).is_file(),
        "this test needs Stockfish at {STOCKFISH} (apt-get install -y stockfish); it is missing"
    );
    STOCKFISH
}

/// A file in the temp dir, unique to this test process and `name`, removed on
/// drop; a [`sh_engine`] appends what it receives there.
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

    /// A shell engine that exits with status 3 on `go`, echoing here.
    fn crasher(&self) -> String {
        sh_engine("", "exit 3", Some(&self.0), self.path())
    }

    /// Every line the engine(s) received so far.
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

/// The game after 1. e4.
fn after_e4() -> Game {
    let mut game = Game::default();
    game.push_uci(&"e2e4".parse().expect("test move"))
        .expect("legal test move");
    game
}

fn root_query(game: Game, limit: ChildLimit) -> Query {
    Query::root(Arc::new(game), limit)
}

async fn spawn(command: String, label: &str) -> Client {
    match Client::spawn(&ChildConfig::new(command.clone()), label.to_owned()).await {
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
// Processes

#[tokio::test]
async fn crash_on_go_is_died_with_the_exit_status() {
    let echo = Echo::new("crash");
    let mut client = spawn(echo.crasher(), "crasher").await;
    let err = client
        .search(
            &root_query(Game::default(), ChildLimit::Nodes(100)),
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
            assert!(engine.contains("exit 3"), "{message}");
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
async fn a_child_that_prints_without_end_is_overlong_not_out_of_memory() {
    // `cat /dev/zero` on `go`: one line without end. Read unbounded, it
    // grew to gigabytes in a second and aborted mpcmc.
    let command = sh_engine("", "exec cat /dev/zero", None, "endless-line");
    let mut client = spawn(command, "endless").await;
    let started = std::time::Instant::now();
    let err = client
        .search(
            &root_query(Game::default(), ChildLimit::Nodes(100)),
            &CancellationToken::new(),
        )
        .await
        .map_err(child_fault)
        .expect_err("no line ever ends");
    assert!(
        matches!(&err, ChildError::Overlong { engine, doing } if engine.contains("endless") && doing == "searching"),
        "{err:?}"
    );
    assert!(err.needs_restart());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    client.quit(Duration::from_millis(500)).await;
}

#[tokio::test]
async fn spawn_of_a_missing_program_names_it() {
    let command = "/nonexistent/mpcmc-no-such-engine --uci".to_owned();
    let err = match Client::spawn(&ChildConfig::new(command), "ghost".to_owned()).await {
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
    let err = match Client::spawn(&ChildConfig::new("'unclosed"), "typo".to_owned()).await {
        Ok(_) => panic!("an unsplittable command line cannot start"),
        Err(e) => e,
    };
    assert!(matches!(err, ChildError::Command(_)), "{err:?}");
    assert!(err.to_string().contains("'unclosed"), "{err}");
}

#[tokio::test]
async fn pool_retries_a_crashed_child_once_then_fails() {
    let echo = Echo::new("pool-crash");
    let child = ChildConfig::new(echo.crasher());
    let pool = Pool::start(PoolConfig::new(child.clone(), child, 1));
    let err = pool
        .search(
            root_query(Game::default(), ChildLimit::Nodes(100)),
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

    let mut child = ChildConfig::new(quote(&program));
    child.options = vec![
        ("Threads".to_owned(), "1".to_owned()),
        ("Hash".to_owned(), "16".to_owned()),
    ];
    child.clear_hash = true;
    let pool = Pool::start(PoolConfig::new(child.clone(), child, 2));
    pool.ready().await;
    let game = after_e4();
    let evaluator = root_query(game, ChildLimit::Nodes(2000));
    let opponent = Query {
        role: Role::Opponent,
        ..evaluator.clone()
    };
    let (a, b) = tokio::join!(
        pool.search(evaluator.clone(), CancellationToken::new()),
        pool.search(opponent, CancellationToken::new()),
    );
    let pos = evaluator.position().expect("a board game");
    for report in [report_of(a), report_of(b)] {
        assert!(
            pos.is_legal(report.best.expect("a move").board().expect("a chess move")),
            "{report:?}"
        );
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
    let mut child = ChildConfig::new(stockfish());
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
    let q = root_query(after_e4(), ChildLimit::Nodes(2000));
    let report = report_of(client.search(&q, &CancellationToken::new()).await);
    let pos = q.position().expect("a board game");
    assert!(
        pos.is_legal(report.best.expect("a move").board().expect("a chess move")),
        "{report:?}"
    );
    let score = report.score.expect("Stockfish reports a score");
    assert!(
        !score.is_mate() && score > Value::cp(-300) && score < Value::cp(300),
        "1.e4 is roughly level: {report:?}"
    );
    assert!(report.nodes > 0 && report.depth > 0, "{report:?}");
    assert_eq!(
        report.pv.first(),
        Some(&report.best.expect("a move")),
        "{report:?}"
    );
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
    let long = root_query(Game::default(), ChildLimit::Depth(30));
    let dropped =
        tokio::time::timeout(Duration::from_millis(30), client.search(&long, &cancel)).await;
    assert!(
        dropped.is_err(),
        "the depth-30 search cannot finish in 30 ms"
    );
    // The next search must get its own answer, legal after 1.e4.
    let game = after_e4();
    let pos = game.position().expect("a board game").clone();
    let report = report_of(
        client
            .search(&root_query(game, ChildLimit::Nodes(1000)), &cancel)
            .await,
    );
    assert!(
        pos.is_legal(report.best.expect("a move").board().expect("a chess move")),
        "{report:?}"
    );
    assert!(!report.stopped);
    client.quit(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_root_moves_calls_share_a_child_and_its_position_comes_back_to_it() {
    use mpcmc::mpc::{Lookahead, Settings, decide};
    let child = ChildConfig::new("builtin");
    let pool = Arc::new(Pool::start(PoolConfig::new(child.clone(), child, 2)));
    pool.ready().await;
    let game = Arc::new(Game::default());
    let candidates = game.legal_moves();
    let settings = Settings {
        lookahead: Lookahead::One,
        fortify: true,
        fortify_margin: 0,
        ..Settings::new(Lookahead::One)
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
                root_query(next, ChildLimit::Nodes(1000)),
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

/// What a child writes on its stderr is read to the end, bytes that are not
/// UTF-8 included: a wrapper that complains in Latin-1 and then complains
/// again is not killed by a closed pipe (SIGPIPE) and still searches.
#[tokio::test]
async fn a_child_that_writes_bytes_not_utf8_on_stderr_keeps_working() {
    let script = format!(
        "printf 'caf\\351\\n' >&2; sleep 0.2; printf 'again\\n' >&2; exec {}",
        stockfish()
    );
    let mut client = spawn(format!("sh -c {}", quote(&script)), "latin1").await;
    let q = root_query(after_e4(), ChildLimit::Nodes(2000));
    let report = report_of(client.search(&q, &CancellationToken::new()).await);
    assert!(
        q.position()
            .expect("a board game")
            .is_legal(report.best.expect("a move").board().expect("a chess move")),
        "{report:?}"
    );
    client.quit(Duration::from_secs(1)).await;
}
