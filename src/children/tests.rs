//! The child side under fault injection, in process: [`Client`] and [`Pool`]
//! over the fake engine of [`super::fake`], with time paused, so a stall
//! costs its deadline in virtual time and every deadline is checked exactly.
//! What needs a real process (an exit status, no process left behind, a
//! child outliving a killed mpcmc) is in `tests/child_faults.rs` and
//! `tests/tournament.rs`.

use std::{sync::Arc, time::Duration};

use mpcmc_protocol::GameMove;
use shakmaty::{CastlingMode, Move, Position, uci::UciMove};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::{
    children::{
        ChildConfig, ChildError, Client, Pool, PoolConfig, SearchError,
        client::{Connect, Connecting, HANDSHAKE_TIMEOUT, STOP_TIMEOUT, stall_deadline},
        fake::{Heard, connect, fakes},
        pool::WorkerGroup,
    },
    mpc::{ChildLimit, Children, Game, Query, Report, Role, Value},
};

const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

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
    let mut pos = game.position().expect("a board game").clone();
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
        line: line.into_iter().map(GameMove::Board).collect(),
        ..Query::root(Arc::new(game), limit)
    }
}

fn startpos_query(limit: ChildLimit) -> Query {
    Query::root(Arc::new(Game::default()), limit)
}

fn uci(m: GameMove) -> String {
    m.text(CastlingMode::Standard).to_string()
}

async fn client(flags: &str, label: &str, heard: &Heard) -> Client {
    match connect(&ChildConfig::new(flags), label, heard).await {
        Ok(client) => client,
        Err(e) => panic!("could not start the fake '{flags}': {e}"),
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

/// Lets the fakes read what was last written to them (a client's `quit`
/// does not wait for a fake as it waits for a process): time is paused, so
/// every task runs until it waits before the clock moves on.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

/// A token cancelled `after` from now (virtual time).
fn cancelled_after(after: Duration) -> CancellationToken {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        trigger.cancel();
    });
    cancel
}

// ---------------------------------------------------------------------------
// A search that fails: one row per fault

/// The error a fault must come back as.
#[derive(Debug)]
enum Want {
    Died,
    Overlong,
    Stalled {
        waiting_for: &'static str,
    },
    BadAnswer {
        line: &'static str,
        fen: &'static str,
    },
}

struct Fault {
    flags: &'static str,
    /// Moves from the start position to the searched one.
    moves: &'static str,
    limit: ChildLimit,
    /// The asker cancels this long after the search starts.
    cancel_after: Option<Duration>,
    want: Want,
    /// The error's message contains each.
    says: &'static [&'static str],
    /// The search fails exactly this long after it started.
    took: Duration,
}

fn faults() -> Vec<Fault> {
    let movetime = ChildLimit::MoveTime(Duration::from_millis(50));
    let long = ChildLimit::MoveTime(Duration::from_secs(60));
    vec![
        Fault {
            // `cat /dev/zero`: reported at the line bound, not when memory
            // runs out.
            flags: "--endless-line-on-go",
            moves: "",
            limit: ChildLimit::Nodes(100),
            cancel_after: None,
            want: Want::Overlong,
            says: &[
                "--endless-line-on-go",
                "a line of more than 65536 bytes while searching",
            ],
            took: Duration::ZERO,
        },
        Fault {
            flags: "--crash-on-go",
            moves: "",
            limit: ChildLimit::Nodes(100),
            cancel_after: None,
            want: Want::Died,
            says: &["--crash-on-go", "died while searching", "end of output"],
            took: Duration::ZERO,
        },
        Fault {
            flags: "--stall-after-go",
            moves: "",
            limit: movetime,
            cancel_after: None,
            want: Want::Stalled {
                waiting_for: "bestmove",
            },
            says: &["no bestmove"],
            // Counted from `go`.
            took: stall_deadline(movetime),
        },
        Fault {
            // `stop` is ignored too: stalled STOP_TIMEOUT after the cancel.
            flags: "--stall-after-go",
            moves: "",
            limit: long,
            cancel_after: Some(Duration::from_millis(100)),
            want: Want::Stalled {
                waiting_for: "bestmove",
            },
            says: &["no bestmove"],
            took: Duration::from_millis(100) + STOP_TIMEOUT,
        },
        Fault {
            flags: "--illegal-bestmove",
            moves: "",
            limit: ChildLimit::Nodes(100),
            cancel_after: None,
            want: Want::BadAnswer {
                line: "bestmove a1a1",
                fen: START_FEN,
            },
            says: &["illegal move", "go nodes 100"],
            took: Duration::ZERO,
        },
        Fault {
            flags: "--none-bestmove",
            moves: "e2e4 e7e5",
            limit: ChildLimit::Depth(3),
            cancel_after: None,
            want: Want::BadAnswer {
                line: "bestmove (none)",
                fen: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            },
            says: &["no move", "go depth 3"],
            took: Duration::ZERO,
        },
        Fault {
            // A null move in the child's own spelling: the message quotes it.
            flags: "--move=0000",
            moves: "",
            limit: ChildLimit::Nodes(100),
            cancel_after: None,
            want: Want::BadAnswer {
                line: "bestmove 0000",
                fen: START_FEN,
            },
            says: &["no move", "go nodes 100"],
            took: Duration::ZERO,
        },
        false_mate(
            "--mate=1",
            &["claims mate in one, but its move does not mate"],
        ),
        false_mate("--mate=-1", &["claims to be mated in one, but", "escapes"]),
        false_mate("--mate=0", &["claims to be mated, but has legal moves"]),
    ]
}

/// A fake that answers its default `e2e4` from the start position with
/// the false mate claim `flag`.
fn false_mate(flag: &'static str, says: &'static [&'static str]) -> Fault {
    Fault {
        flags: flag,
        moves: "",
        limit: ChildLimit::Nodes(100),
        cancel_after: None,
        want: Want::BadAnswer {
            line: "bestmove e2e4",
            fen: START_FEN,
        },
        says,
        took: Duration::ZERO,
    }
}

#[tokio::test]
async fn a_child_that_prints_latin1_is_sound() {
    let heard = Heard::default();
    let mut c = client("--latin1 --move=d2d4", "latin1", &heard).await;
    for _ in 0..2 {
        let q = query(game_from(None, ""), Vec::new(), ChildLimit::Nodes(100));
        let report = c
            .search(&q, &CancellationToken::new())
            .await
            .expect("a Latin-1 info string is no fault");
        assert_eq!(report.best.expect("a move").to_string(), "d2d4");
    }
    // One child throughout: the handshake and both searches.
    assert_eq!(heard.count("uci"), 1, "{:?}", heard.lines());
}

#[tokio::test]
async fn a_true_mate_in_one_claim_is_taken() {
    // (FEN, moves, the fake's flags): fool's mate, Qh4 mates; a king
    // whose one move, Kb8, is answered by Rh8 mate.
    let cases = [
        (None, "f2f3 e7e5 g2g4", "--mate=1 --move=d8h4"),
        (
            Some("k7/8/1K6/8/8/8/8/7R b - - 0 1"),
            "",
            "--mate=-1 --move=a8b8",
        ),
    ];
    for (fen, moves, flags) in cases {
        let heard = Heard::default();
        let mut c = client(flags, "mate", &heard).await;
        let q = query(game_from(fen, moves), Vec::new(), ChildLimit::Nodes(100));
        let report = report_of(c.search(&q, &CancellationToken::new()).await);
        assert!(
            report.score.is_some_and(|v| v.is_mate()),
            "{flags}: {report:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn every_fault_is_its_own_error_naming_the_child_at_its_deadline() {
    for (i, f) in faults().into_iter().enumerate() {
        let label = format!("fault {i}");
        let heard = Heard::default();
        let mut client = client(f.flags, &label, &heard).await;
        let cancel = match f.cancel_after {
            Some(after) => cancelled_after(after),
            None => CancellationToken::new(),
        };
        let started = Instant::now();
        let q = query(game_from(None, f.moves), Vec::new(), f.limit);
        let err = client
            .search(&q, &cancel)
            .await
            .map_err(child_fault)
            .expect_err("a faulty child cannot answer");
        let took = started.elapsed();
        let message = err.to_string();
        match (&f.want, &err) {
            (Want::Died, ChildError::Died { engine, doing, .. })
            | (Want::Overlong, ChildError::Overlong { engine, doing }) => {
                assert!(engine.contains(&label), "{message}");
                assert_eq!(doing, "searching", "{message}");
                assert!(err.needs_restart(), "{message}");
            }
            (
                Want::Stalled { waiting_for },
                ChildError::Stalled {
                    engine,
                    waiting_for: w,
                    after,
                },
            ) => {
                assert!(engine.contains(&label), "{message}");
                assert_eq!(w, waiting_for, "{message}");
                let since = f.cancel_after.map_or(f.took, |c| f.took - c);
                assert_eq!(*after, since, "{message}");
            }
            (
                Want::BadAnswer { line, fen },
                ChildError::BadAnswer {
                    engine,
                    line: l,
                    fen: at,
                    ..
                },
            ) => {
                assert!(engine.contains(&label), "{message}");
                assert_eq!(l, line, "{message}");
                assert_eq!(at, fen, "{message}");
            }
            (want, got) => panic!("{}: expected {want:?}, got {got:?}", f.flags),
        }
        for s in f.says {
            assert!(message.contains(s), "'{s}' not in: {message}");
        }
        assert_eq!(took, f.took, "{}: {message}", f.flags);
        assert!(err.needs_restart(), "{message}");
        client.quit(Duration::from_millis(100)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn no_uciok_is_stalled_at_the_handshake_deadline() {
    let started = Instant::now();
    let result = connect(
        &ChildConfig::new("--stall-on-uci"),
        "mute",
        &Heard::default(),
    )
    .await;
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
            assert_eq!(*waiting_for, "uciok", "{message}");
            assert_eq!(*after, HANDSHAKE_TIMEOUT, "{message}");
        }
        other => panic!("expected ChildError::Stalled, got {other:?}"),
    }
    assert_eq!(took, HANDSHAKE_TIMEOUT);
    assert!(message.contains("no uciok"), "{message}");
}

// ---------------------------------------------------------------------------
// A search that succeeds

#[tokio::test(start_paused = true)]
async fn cancel_stops_the_search_and_reports_stopped() {
    let heard = Heard::default();
    let mut client = client("--stall-after-go --answer-stop", "stoppable", &heard).await;
    // A long movetime: only `stop` can end this search early.
    let q = startpos_query(ChildLimit::MoveTime(Duration::from_secs(60)));
    for round in 0..2 {
        let cancel = cancelled_after(Duration::from_millis(200));
        let started = Instant::now();
        let report = report_of(client.search(&q, &cancel).await);
        assert!(report.stopped, "round {round}: {report:?}");
        assert_eq!(uci(report.best.expect("a move")), "e2e4");
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(200),
            "round {round}"
        );
    }
    // Drained after each stop: one go, one stop per search, nothing else.
    assert_eq!(heard.count("go"), 2, "{:?}", heard.lines());
    assert_eq!(heard.count("stop"), 2, "{:?}", heard.lines());
    client.quit(Duration::from_millis(100)).await;
}

/// A pondering query is sent `go ponder` on its clock and, once its token
/// is cancelled, `ponderhit`: the child's own search goes on (no `stop`).
/// The opponent's think may outlast the clock's stall deadline. Cancelled
/// instead (a ponder miss), it is sent `stop`.
#[tokio::test(start_paused = true)]
async fn a_pondering_search_is_sent_ponderhit() {
    let heard = Heard::default();
    let mut client = client("", "ponderer", &heard).await;
    let second = Duration::from_secs(1);
    let clock = ChildLimit::Clock {
        wtime: 10 * second,
        btime: 10 * second,
        winc: Duration::ZERO,
        binc: Duration::ZERO,
        movestogo: None,
    };
    // Past `stall_deadline(clock)`, 11 s.
    let ponder = 20 * second;
    let q = Query {
        ponderhit: Some(cancelled_after(ponder)),
        ..startpos_query(clock)
    };
    let started = Instant::now();
    let report = report_of(client.search(&q, &CancellationToken::new()).await);
    assert!(!report.stopped, "{report:?}");
    assert_eq!(started.elapsed(), ponder);
    let lines = heard.lines();
    let go = lines.iter().find(|l| l.starts_with("go")).expect("a go");
    assert_eq!(go, "go ponder wtime 10000 btime 10000 winc 0 binc 0");
    assert_eq!(heard.count("ponderhit"), 1, "{lines:?}");
    assert_eq!(heard.count("stop"), 0, "{lines:?}");
    // A ponder miss.
    let q = Query {
        ponderhit: Some(CancellationToken::new()),
        ..startpos_query(clock)
    };
    let cancel = cancelled_after(Duration::from_millis(200));
    let report = report_of(client.search(&q, &cancel).await);
    assert!(report.stopped, "{report:?}");
    assert_eq!(heard.count("ponderhit"), 1, "{:?}", heard.lines());
    assert_eq!(heard.count("stop"), 1, "{:?}", heard.lines());
    client.quit(Duration::from_millis(100)).await;
}

#[tokio::test(start_paused = true)]
async fn garbage_lines_are_skipped() {
    let heard = Heard::default();
    let mut client = client("--garbage --move=d2d4", "noisy", &heard).await;
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
    assert_eq!(uci(report.best.expect("a move")), "d2d4");
    assert_eq!(report.score, Some(Value::cp(10)));
    assert_eq!((report.depth, report.nodes), (1, 1));
    assert_eq!(report.pv, [report.best.expect("a move")]);
    assert!(!report.stopped);
    client.quit(Duration::from_millis(100)).await;
}

#[tokio::test(start_paused = true)]
async fn a_bestmoves_ponder_move_completes_a_line_of_one_move() {
    async fn line_of(flags: &str) -> String {
        let heard = Heard::default();
        let mut client = client(flags, "ponder", &heard).await;
        let q = startpos_query(ChildLimit::Nodes(100));
        let report = report_of(client.search(&q, &CancellationToken::new()).await);
        client.quit(Duration::from_millis(100)).await;
        report
            .pv
            .iter()
            .map(|&m| uci(m))
            .collect::<Vec<_>>()
            .join(" ")
    }
    // The `pv` was `e2e4` alone, as Stockfish's last line after a stop often is.
    assert_eq!(line_of("--ponder=e7e5").await, "e2e4 e7e5");
    // An illegal ponder move is left out; no ponder move, no second move.
    assert_eq!(line_of("--ponder=e2e4").await, "e2e4");
    assert_eq!(line_of("").await, "e2e4");
}

#[tokio::test(start_paused = true)]
async fn position_sends_the_whole_history_and_clears_the_hash_when_asked() {
    // From the start position, with hash clearing and options.
    let heard = Heard::default();
    let mut child = ChildConfig::new("--move=d2d3");
    child.clear_hash = true;
    child.options = vec![
        ("hash".to_owned(), "32".to_owned()),
        ("No Such Option".to_owned(), "1".to_owned()),
    ];
    let mut client = connect(&child, "historian", &heard)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let game = game_from(None, "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5");
    let line = line_from(&game, "e1g1 g8f6");
    let q = query(game, line, ChildLimit::Nodes(1000));
    for _ in 0..2 {
        let report = report_of(client.search(&q, &CancellationToken::new()).await);
        assert_eq!(uci(report.best.expect("a move")), "d2d3");
    }
    client.quit(Duration::from_millis(100)).await;
    settle().await;
    let position = "position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 e1g1 g8f6";
    let search = ["ucinewgame", "isready", position, "go nodes 1000"];
    // Two `isready`s: the first may wait for a network to load, the
    // second measures the round trip.
    let mut want = vec!["uci", "setoption name Hash value 32", "isready", "isready"];
    want.extend(search);
    want.extend(search);
    want.push("quit");
    assert_eq!(heard.lines(), want);

    // From a FEN, without hash clearing, castling written the Chess960 way.
    let heard = Heard::default();
    let fen = "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let mut child = ChildConfig::new("--move=e8h8");
    child.castling = CastlingMode::Chess960;
    let mut client = connect(&child, "historian960", &heard)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let game = game_from(Some(fen), "d2d3 g8f6");
    let line = line_from(&game, "e1g1");
    let q = query(game, line, ChildLimit::MoveTime(Duration::from_millis(20)));
    let report = report_of(client.search(&q, &CancellationToken::new()).await);
    assert!(
        matches!(
            report.best.expect("a move"),
            GameMove::Board(Move::Castle { .. })
        ),
        "king takes rook is castling: {:?}",
        report.best.expect("a move")
    );
    client.quit(Duration::from_millis(100)).await;
    settle().await;
    let position = format!("position fen {fen} moves d2d3 g8f6 e1h1");
    assert_eq!(
        heard.lines(),
        [
            "uci",
            "isready",
            "isready",
            &position,
            "go movetime 20",
            "quit"
        ]
    );
}

// ---------------------------------------------------------------------------
// Pool

fn pool_of(evaluator: &str, opponent: &str, threads: usize, heard: &Heard) -> Pool {
    Pool::start_with(
        PoolConfig::new(
            ChildConfig::new(evaluator),
            ChildConfig::new(opponent),
            threads,
        ),
        fakes(heard),
    )
}

/// A worker whose children cannot be started is down: the calls go to
/// the others (the root search too), the user is told, and none fails;
/// it tries again later, and is up once its children start.
#[tokio::test(start_paused = true)]
async fn a_worker_that_cannot_start_its_children_is_down_and_the_others_play() {
    let heard = Heard::default();
    // Refuses its first two connections (the start, the first retry).
    let refusals = Arc::new(std::sync::atomic::AtomicUsize::new(2));
    let connect: Connect = {
        let heard = heard.clone();
        Arc::new(move |config: ChildConfig, label: String| -> Connecting {
            let (heard, refusals) = (heard.clone(), refusals.clone());
            Box::pin(async move {
                let refuse = config.command == "--move=d2d4"
                    && refusals
                        .fetch_update(
                            std::sync::atomic::Ordering::Relaxed,
                            std::sync::atomic::Ordering::Relaxed,
                            |n| n.checked_sub(1),
                        )
                        .is_ok();
                if refuse {
                    return Err(ChildError::Spawn {
                        command: config.command,
                        source: std::io::Error::other("connection refused"),
                    });
                }
                connect(&config, &label, &heard).await
            })
        })
    };
    let config = one_slot_each(&["--move=d2d4", "--move=e2e4"]);
    let pool = Pool::start_with(config, connect);
    pool.ready().await;
    let news = pool.news();
    assert!(
        news.iter().any(|l| l.starts_with("worker 1 is down")),
        "{news:?}"
    );
    let game = Game::default();
    for line in [
        Vec::new(),
        line_from(&game, "d2d4 d7d5"),
        line_from(&game, "g1f3 g8f6"),
    ] {
        let q = query(game.clone(), line, ChildLimit::Nodes(100));
        let report = report_of(pool.search(q, CancellationToken::new()).await);
        assert_eq!(report.slot, Some(2));
    }
    // Refused again after 1 s, up after 2 s more.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(pool.news().is_empty(), "still down, said once");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(pool.news(), ["worker 1 is up again"]);
    pool.shutdown().await;
}

/// A pool of one worker a command line, each serving both roles.
fn one_slot_each(commands: &[&str]) -> PoolConfig {
    let groups = commands
        .iter()
        .map(|command| {
            let child = ChildConfig::new(*command);
            WorkerGroup::both(child.clone(), child, 1)
        })
        .collect();
    PoolConfig { groups }
}

/// Fakes whose command line names `fault` report to the first `Heard`, the
/// others to the second.
fn faulty_and_sound(fault: &'static str) -> (Heard, Heard, Connect) {
    let (crash, sound) = (Heard::default(), Heard::default());
    let connect: Connect = {
        let (crash, sound) = (crash.clone(), sound.clone());
        Arc::new(move |config: ChildConfig, label: String| -> Connecting {
            let heard = if config.command.contains(fault) {
                crash.clone()
            } else {
                sound.clone()
            };
            Box::pin(async move { connect(&config, &label, &heard).await })
        })
    };
    (crash, sound, connect)
}

/// With every worker of a role down, a search of that role fails at once
/// (the session then has the built-in engine answer), rather than wait for
/// a host that may never come back.
#[tokio::test(start_paused = true)]
async fn with_every_worker_down_a_search_fails_at_once() {
    let connect: Connect = Arc::new(|config: ChildConfig, _label: String| -> Connecting {
        Box::pin(async move {
            Err(ChildError::Spawn {
                command: config.command,
                source: std::io::Error::other("connection refused"),
            })
        })
    });
    let child = ChildConfig::new("unreachable");
    let pool = Pool::start_with(PoolConfig::new(child.clone(), child, 2), connect);
    pool.ready().await;
    let asked = Instant::now();
    let result = pool
        .search(
            startpos_query(ChildLimit::Nodes(100)),
            CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(result, Err(SearchError::NoWorker(Role::Evaluator))),
        "{result:?}"
    );
    assert_eq!(asked.elapsed(), Duration::ZERO);
    pool.shutdown().await;
}

/// A child that dies mid-search (a dropped connection): the search is
/// tried again at once by another worker of its role, while the first
/// starts a fresh child; a search is tried again only once.
#[tokio::test(start_paused = true)]
async fn a_search_whose_child_dies_is_tried_again_on_another_worker() {
    let (crash, sound, connect) = faulty_and_sound("--crash-on-go");
    let config = one_slot_each(&["--crash-on-go", "--move=e2e4"]);
    let pool = Pool::start_with(config, connect);
    pool.ready().await;
    // The root search is placed on worker 1 first.
    let report = report_of(
        pool.search(
            startpos_query(ChildLimit::Nodes(100)),
            CancellationToken::new(),
        )
        .await,
    );
    assert_eq!(report.slot, Some(2));
    assert_eq!(crash.count("go"), 1, "{:?}", crash.lines());
    assert_eq!(sound.count("go"), 1, "{:?}", sound.lines());
    // Worker 1 started a fresh child at once.
    settle().await;
    assert_eq!(crash.count("uci"), 2, "{:?}", crash.lines());
    pool.shutdown().await;

    // Every worker's child dies on it: the second death is the answer.
    let heard = Heard::default();
    let config = one_slot_each(&["--crash-on-go", "--crash-on-go"]);
    let pool = Pool::start_with(config, fakes(&heard));
    pool.ready().await;
    let result = pool
        .search(
            startpos_query(ChildLimit::Nodes(100)),
            CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(result, Err(SearchError::Child(ChildError::Died { .. }))),
        "{result:?}"
    );
    assert_eq!(heard.count("go"), 2, "{:?}", heard.lines());
    pool.shutdown().await;
}

/// A worker whose child keeps dying mid-search (a host that accepts
/// connections, then drops them) is out of rotation after three dropped
/// searches: the user is told, the others take its calls, and it is tried
/// again later, out for longer when it drops again.
#[tokio::test(start_paused = true)]
async fn a_worker_that_keeps_dropping_searches_is_out_of_rotation_for_a_while() {
    let (crash, sound, connect) = faulty_and_sound("--crash-on-go");
    // A move legal in every position searched.
    let config = one_slot_each(&["--crash-on-go", "--move=a2a3"]);
    let pool = Pool::start_with(config, connect);
    pool.ready().await;
    let search = || {
        pool.search(
            startpos_query(ChildLimit::Nodes(100)),
            CancellationToken::new(),
        )
    };
    // The root searches are placed on worker 1 while it is up.
    for _ in 0..6 {
        assert_eq!(report_of(search().await).slot, Some(2));
    }
    settle().await;
    assert_eq!(crash.count("go"), 3, "{:?}", crash.lines());
    assert_eq!(sound.count("go"), 6);
    let news = pool.news();
    assert!(
        news.iter().any(
            |l| l.starts_with("worker 1 is down (out of rotation: 3 searches dropped")
                && l.ends_with("trying again in 8s")
        ),
        "{news:?}"
    );
    // Back after 8 s, and out again, for 16 s, at its next drop.
    tokio::time::sleep(Duration::from_secs(9)).await;
    assert_eq!(pool.news(), ["worker 1 is up again"]);
    // The root searches stay on worker 2; other calls go round.
    let game = Game::default();
    let lines = ["e2e4 e7e5", "d2d4 d7d5", "g1f3 g8f6", "c2c4 c7c5"];
    for line in lines {
        let q = query(game.clone(), line_from(&game, line), ChildLimit::Nodes(100));
        assert_eq!(
            report_of(pool.search(q, CancellationToken::new()).await).slot,
            Some(2)
        );
    }
    settle().await;
    assert_eq!(crash.count("go"), 4, "{:?}", crash.lines());
    let news = pool.news();
    assert!(
        news.iter().any(|l| l.ends_with("trying again in 16s")),
        "{news:?}"
    );
    pool.shutdown().await;
}

/// A worker whose child hangs (no `bestmove`, not even after `stop`) is
/// out of rotation after three stalls, as one whose child dies: each
/// stalled search is answered as stalled at its deadline (the decision
/// goes on without it), and the searches after the third go elsewhere.
#[tokio::test(start_paused = true)]
async fn a_worker_whose_child_keeps_stalling_is_out_of_rotation_for_a_while() {
    let (stall, sound, connect) = faulty_and_sound("--stall-after-go");
    let config = one_slot_each(&["--stall-after-go", "--move=a2a3"]);
    let pool = Pool::start_with(config, connect);
    pool.ready().await;
    let long = startpos_query(ChildLimit::MoveTime(Duration::from_secs(60)));
    // The root searches are placed on worker 1 while it is up.
    for _ in 0..3 {
        let started = Instant::now();
        let cancel = cancelled_after(Duration::from_millis(100));
        let result = pool.search(long.clone(), cancel).await;
        assert!(
            matches!(result, Err(SearchError::Child(ChildError::Stalled { .. }))),
            "{result:?}"
        );
        assert_eq!(started.elapsed(), Duration::from_millis(100) + STOP_TIMEOUT);
        settle().await;
    }
    let news = pool.news();
    assert!(
        news.iter().any(
            |l| l.starts_with("worker 1 is down (out of rotation: 3 searches dropped")
                && l.contains("stalled")
        ),
        "{news:?}"
    );
    let report = report_of(
        pool.search(
            startpos_query(ChildLimit::Nodes(100)),
            CancellationToken::new(),
        )
        .await,
    );
    assert_eq!(report.slot, Some(2));
    assert_eq!(stall.count("go"), 3, "{:?}", stall.lines());
    assert_eq!(sound.count("go"), 1, "{:?}", sound.lines());
    pool.shutdown().await;
}

/// When every worker keeps dropping searches, one stays in rotation: the
/// searches are still tried (and fail as dropped), never for want of a
/// worker.
#[tokio::test(start_paused = true)]
async fn the_last_worker_of_a_role_is_never_out_of_rotation() {
    let heard = Heard::default();
    let config = one_slot_each(&["--crash-on-go", "--crash-on-go"]);
    let pool = Pool::start_with(config, fakes(&heard));
    pool.ready().await;
    let game = Game::default();
    let lines = [
        "e2e4 e7e5",
        "d2d4 d7d5",
        "g1f3 g8f6",
        "c2c4 c7c5",
        "b2b3 b7b6",
    ];
    for line in lines.into_iter().cycle().take(10) {
        let q = query(game.clone(), line_from(&game, line), ChildLimit::Nodes(100));
        let result = pool.search(q, CancellationToken::new()).await;
        assert!(
            matches!(result, Err(SearchError::Child(ChildError::Died { .. }))),
            "{result:?}"
        );
        settle().await;
    }
    assert_eq!(heard.count("go"), 20, "each search tried twice");
    let out: Vec<String> = pool
        .news()
        .into_iter()
        .filter(|l| l.contains("out of rotation"))
        .collect();
    assert_eq!(out.len(), 1, "{out:?}");
    pool.shutdown().await;
}

/// A child still starting (a restart, a slow connection to another host)
/// does not hold a search its asker has given up on.
#[tokio::test(start_paused = true)]
async fn a_search_waiting_for_its_child_to_start_ends_when_cancelled() {
    let heard = Heard::default();
    let pool = pool_of("--stall-on-uci", "--stall-on-uci", 1, &heard);
    let cancel = CancellationToken::new();
    let asked = tokio::time::Instant::now();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.cancel();
    });
    let result = pool
        .search(startpos_query(ChildLimit::Nodes(100)), cancel)
        .await;
    assert!(matches!(result, Err(SearchError::Cancelled)), "{result:?}");
    assert!(
        asked.elapsed() < Duration::from_millis(200),
        "{:?}",
        asked.elapsed()
    );
    pool.shutdown().await;
}

/// A pool of one worker whose first child drops its first search and
/// whose later children take `slow` to connect; how many were started.
fn slow_restarts(slow: Duration) -> (Pool, Arc<std::sync::atomic::AtomicUsize>) {
    let heard = Heard::default();
    let starts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let connect: Connect = {
        let starts = starts.clone();
        Arc::new(move |config: ChildConfig, label: String| -> Connecting {
            let (heard, starts) = (heard.clone(), starts.clone());
            Box::pin(async move {
                let flags = if starts.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 0 {
                    "--crash-on-go".to_owned()
                } else {
                    tokio::time::sleep(slow).await;
                    config.command.clone()
                };
                connect(&ChildConfig::new(&flags), &label, &heard).await
            })
        })
    };
    let pool = Pool::start_with(one_slot_each(&["--move=e2e4"]), connect);
    (pool, starts)
}

/// Asks for a search whose child drops it, so it waits for a restart, and
/// gives up after 500 ms: answered at once.
async fn give_up_during_a_restart(pool: &Pool) {
    let asked = Instant::now();
    let result = pool
        .search(
            startpos_query(ChildLimit::Nodes(100)),
            cancelled_after(Duration::from_millis(500)),
        )
        .await;
    assert!(matches!(result, Err(SearchError::Cancelled)), "{result:?}");
    let waited = asked.elapsed();
    assert!(waited < Duration::from_millis(600), "{waited:?}");
}

/// A restart slower than the asker waits (a host slow to connect) is not
/// thrown away with the search: the asker is answered at once, the start
/// goes on, and the next search finds the child up.
#[tokio::test(start_paused = true)]
async fn a_start_the_asker_gave_up_on_goes_on_for_the_next_search() {
    const SLOW: Duration = Duration::from_secs(3);
    let (pool, starts) = slow_restarts(SLOW);
    pool.ready().await;
    give_up_during_a_restart(&pool).await;
    tokio::time::sleep(SLOW).await;
    let asked = Instant::now();
    let report = report_of(
        pool.search(
            startpos_query(ChildLimit::Nodes(100)),
            CancellationToken::new(),
        )
        .await,
    );
    assert_eq!(uci(report.best.expect("a move")), "e2e4");
    let waited = asked.elapsed();
    assert!(waited < Duration::from_millis(100), "{waited:?}");
    assert_eq!(starts.load(std::sync::atomic::Ordering::Relaxed), 2);
    pool.shutdown().await;
}

/// A start still going on for nobody does not hold the pool's shutdown.
#[tokio::test(start_paused = true)]
async fn a_closing_pool_drops_a_start_nobody_waits_for() {
    let (pool, _) = slow_restarts(Duration::from_secs(30));
    pool.ready().await;
    give_up_during_a_restart(&pool).await;
    let closing = Instant::now();
    pool.shutdown().await;
    let took = closing.elapsed();
    assert!(took < Duration::from_millis(100), "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn pool_retries_a_crashed_child_once_then_fails() {
    let heard = Heard::default();
    let pool = pool_of("--crash-on-go", "--crash-on-go", 1, &heard);
    let err = pool
        .search(
            startpos_query(ChildLimit::Nodes(100)),
            CancellationToken::new(),
        )
        .await
        .map_err(child_fault)
        .expect_err("both children crash on go");
    assert!(
        matches!(&err, ChildError::Died { engine, .. } if engine.contains("child 1")),
        "{err:?}"
    );
    // The first child, then one fresh child for the retry.
    assert_eq!(heard.count("uci"), 2, "{:?}", heard.lines());
    assert_eq!(heard.count("go"), 2, "{:?}", heard.lines());
    pool.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn pool_serves_the_other_role_while_one_keeps_crashing() {
    // Each role's fakes report to their own `Heard`.
    let (crash, sound, connect_by_role) = faulty_and_sound("--crash-on-go");
    let pool = Pool::start_with(
        PoolConfig::new(
            ChildConfig::new("--crash-on-go"),
            ChildConfig::new("--move=e7e5"),
            1,
        ),
        connect_by_role,
    );
    let evaluator = query(game_from(None, "e2e4"), Vec::new(), ChildLimit::Nodes(100));
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
        assert_eq!(uci(report.best.expect("a move")), "e7e5");
        // Each failed search: the crashed child and its replacement.
        assert_eq!(crash.count("uci"), 2 * round, "{:?}", crash.lines());
    }
    // The sound child was started once and kept.
    assert_eq!(sound.count("uci"), 1, "{:?}", sound.lines());
    assert_eq!(sound.count("go"), 2, "{:?}", sound.lines());
    pool.shutdown().await;
    settle().await;
    assert_eq!(sound.lines().last().map(String::as_str), Some("quit"));
}

#[tokio::test(start_paused = true)]
async fn a_dropped_pool_search_frees_its_worker() {
    let heard = Heard::default();
    let fake = "--stall-after-go --answer-stop";
    let pool = pool_of(fake, fake, 1, &heard);
    let limit = ChildLimit::MoveTime(Duration::from_secs(3));
    // Nobody waits for this one any more after 200 ms.
    let dropped = tokio::time::timeout(
        Duration::from_millis(200),
        pool.search(startpos_query(limit), CancellationToken::new()),
    )
    .await;
    assert!(dropped.is_err());
    // The worker stops it and takes the next search at once.
    let started = Instant::now();
    let cancel = cancelled_after(Duration::from_millis(100));
    let report = report_of(pool.search(startpos_query(limit), cancel).await);
    assert!(report.stopped);
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(100),
        "the worker was held by the abandoned search"
    );
    assert_eq!(
        heard.count("go"),
        2,
        "no retry of the abandoned search: {:?}",
        heard.lines()
    );
    pool.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn warm_children_see_ucinewgame_between_games_and_never_between_calls() {
    let heard = Heard::default();
    let pool = pool_of("", "", 2, &heard);
    pool.ready().await;
    async fn search(pool: &Pool) -> Report {
        let q = startpos_query(ChildLimit::Nodes(100));
        report_of(pool.search(q, CancellationToken::new()).await)
    }
    for _ in 0..4 {
        search(&pool).await;
    }
    assert_eq!(heard.count("go"), 4);
    assert_eq!(heard.count("ucinewgame"), 0, "{:#?}", heard.lines());
    // A new game: each child that searches again clears first, once.
    pool.new_game();
    let mut slots = std::collections::BTreeSet::new();
    for _ in 0..4 {
        slots.insert(search(&pool).await.slot);
    }
    assert_eq!(
        heard.count("ucinewgame"),
        slots.len(),
        "{:#?}",
        heard.lines()
    );
    let lines = heard.lines();
    let first_clear = lines.iter().position(|l| l == "ucinewgame");
    let gos_before = lines[..first_clear.unwrap_or(0)]
        .iter()
        .filter(|l| l.starts_with("go"))
        .count();
    assert_eq!(gos_before, 4, "cleared before the new game's searches only");
    pool.shutdown().await;
}

/// A child that stops answering `isready` after `ucinewgame` costs the
/// next search its stall deadline, not READY_TIMEOUT: it is dropped and
/// a fresh one (which has seen no `ucinewgame`) answers.
#[tokio::test(start_paused = true)]
async fn a_child_deaf_after_ucinewgame_costs_the_search_its_stall_deadline() {
    let heard = Heard::default();
    let pool = pool_of("--deaf-after-ucinewgame", "", 1, &heard);
    pool.ready().await;
    let limit = ChildLimit::Nodes(100);
    report_of(
        pool.search(startpos_query(limit), CancellationToken::new())
            .await,
    );
    pool.new_game();
    let started = tokio::time::Instant::now();
    report_of(
        pool.search(startpos_query(limit), CancellationToken::new())
            .await,
    );
    let took = started.elapsed();
    assert!(
        took <= stall_deadline(limit) + Duration::from_millis(100),
        "{took:?}: {:#?}",
        heard.lines()
    );
    // Both children were sent it (the pool's two roles); the deaf one was
    // started again.
    assert_eq!(heard.count("ucinewgame"), 2, "{:#?}", heard.lines());
    assert_eq!(
        heard.count("uci"),
        3,
        "restarted once: {:#?}",
        heard.lines()
    );
    pool.shutdown().await;
}

/// `go perft 1` read into the position's moves, tokens of any board kept
/// whole; a count that disagrees with the lines is a bad answer.
#[tokio::test]
async fn perft_lists_the_moves_and_checks_their_count() {
    let heard = Heard::default();
    let xiangqi = || {
        Arc::new(Game::named(
            "xiangqi",
            mpcmc_protocol::StartPosition::Startpos,
            &[],
        ))
    };
    let mut c = client("--perft=h3h10,b1c3,P@e5", "lister", &heard).await;
    let moves = c.perft(&xiangqi()).await.expect("a list");
    let moves: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
    assert_eq!(moves, ["h3h10", "b1c3", "P@e5"]);
    assert!(
        heard.lines().iter().any(|l| l == "go perft 1"),
        "{:?}",
        heard.lines()
    );
    let mut c = client("--perft=h3h10,b1c3/3", "miscounter", &heard).await;
    match c.perft(&xiangqi()).await {
        Err(ChildError::BadAnswer { line, reason, .. }) => {
            assert_eq!(line, "Nodes searched: 3");
            assert!(reason.contains("2 moves listed"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

/// A call's commands go to the child in one write: `ucinewgame` with the
/// `isready` after it, `position` with its `go`. Through a socket (`srun`,
/// `ssh`) a second small write waits for the first one's acknowledgement,
/// which the far end may hold back 40 ms (Nagle's algorithm).
#[tokio::test(start_paused = true)]
async fn a_call_is_one_write() {
    let heard = Heard::default();
    let mut config = ChildConfig::new("--move=d2d4");
    config.clear_hash = true;
    let mut c = match connect(&config, "one write", &heard).await {
        Ok(client) => client,
        Err(e) => panic!("could not start the fake: {e}"),
    };
    let query = startpos_query(ChildLimit::Nodes(100));
    report_of(c.search(&query, &CancellationToken::new()).await);
    let writes = heard.writes();
    assert!(
        writes.contains(&"ucinewgame\nisready\n".to_owned()),
        "{writes:#?}"
    );
    assert!(
        writes.contains(&"position startpos\ngo nodes 100\n".to_owned()),
        "{writes:#?}"
    );
}
