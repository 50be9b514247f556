//! `Workers`: one pool over several command lines, each entry serving the
//! evaluator role, the opponent role or both, over real children.

mod common;

use std::{sync::Arc, time::Duration};

use common::{Mpcmc, SECOND, alive, children_of, play, stockfish};
use mpcmc::{
    children::Pool,
    mpc::{ChildLimit, Game, Lookahead, Settings, decide},
    uci::options::Options,
};
use shakmaty::{CastlingMode, Position};
use tokio_util::sync::CancellationToken;

const FEN: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_goes_to_a_worker_of_its_role() {
    let mut options = Options::default();
    let workers = format!("evaluator: builtin; opponent: {}", stockfish());
    options.set("Workers", Some(&workers)).expect("workers");
    let pool = Arc::new(Pool::start(options.pool_config().expect("config")));
    pool.ready().await;
    let game = Arc::new(Game::from_fen(FEN, CastlingMode::Standard).expect("fen"));
    let moves: Vec<_> = game.position().legal_moves().into_iter().collect();
    let d = decide(
        &pool,
        &game,
        &moves,
        ChildLimit::Nodes(2000),
        Settings::new(Lookahead::One),
        &CancellationToken::new(),
        &mut |_, _| {},
    )
    .await
    .expect("a decision");
    // Worker 1 is the built-in evaluator, worker 2 Stockfish as the
    // opponent: each candidate's reply came from 2, its value from 1.
    assert_eq!(d.root.as_ref().and_then(|r| r.slot), Some(1));
    for c in &d.candidates {
        let slots: Vec<_> = c.calls.iter().map(|r| r.slot).collect();
        assert_eq!(slots, [Some(2), Some(1)], "{:?}", c.mv);
    }
    if let Ok(pool) = Arc::try_unwrap(pool) {
        pool.shutdown().await;
    }
}

#[test]
fn a_game_over_a_mixed_pool_leaves_no_process_behind() {
    let workers = format!("--workers=builtin *2; opponent: {} *1", stockfish());
    let mut e = Mpcmc::start(&[&workers]);
    e.handshake();
    let lines = play(&mut e, "go nodes 60000", 1, 20 * SECOND);
    assert!(
        !lines.iter().any(|l| l.contains("child failure")),
        "{lines:?}"
    );
    play(
        &mut e,
        "go wtime 3000 btime 3000 winc 50 binc 50",
        1,
        20 * SECOND,
    );
    let children = children_of(e.pid());
    assert!(!children.is_empty(), "Stockfish runs as a child process");
    assert!(e.quit().success());
    std::thread::sleep(Duration::from_millis(200));
    for pid in children {
        assert!(!alive(pid), "child {pid} left behind");
    }
}

/// A worker whose child stops answering after `go` (a hung engine, a
/// frozen host) must never cost the move its time: the decision leaves the
/// silent search behind once cut short, and moves from the rounds complete
/// by then. (It held the move to the child's stall deadline: 1.38 s on
/// `go movetime 500`, 3.09 s of a 3 s clock.)
#[test]
fn a_hung_worker_never_costs_the_game_on_time() {
    let hang = common::sh_engine("", "", None, "hang-after-go");
    let workers = format!("--workers=builtin; {hang}");
    let mut e = Mpcmc::start(&[&workers]);
    e.handshake();
    e.send("position startpos moves e2e4");
    let sent = std::time::Instant::now();
    e.send("go movetime 500");
    let (mv, lines) = e.bestmove(5 * SECOND);
    let took = sent.elapsed();
    common::assert_legal(&common::position(None, &["e2e4"]), &mv);
    assert!(took < Duration::from_millis(700), "{took:?}: {lines:?}");
    // A move time is kept whole: the silent search is given up by the
    // move's cap, with no grace past it (50 ms past it lost on time by
    // 2-3 ms in fastchess).
    for _ in 0..6 {
        e.send("position startpos moves e2e4");
        let sent = std::time::Instant::now();
        e.send("go movetime 300");
        let (_, lines) = e.bestmove(5 * SECOND);
        let took = sent.elapsed();
        assert!(took < Duration::from_millis(300), "{took:?}: {lines:?}");
    }
    e.send("ucinewgame");
    e.play_clock_game(3000, 30, 30);
    assert!(e.quit().success());
}
