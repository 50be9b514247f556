//! `mpcmc engine`: the built-in engine alone must behave as a UCI engine the
//! way the meta-engine does.

mod common;

use std::time::{Duration, Instant};

use common::{Mpcmc, SECOND, assert_legal, position};
use shakmaty::Chess;

#[test]
fn handshake_options_and_bad_input() {
    let mut e = Mpcmc::builtin(&[]);
    let lines = e.handshake();
    assert!(
        lines.iter().any(|l| l.starts_with("id name mpcmc-builtin")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("option name Hash type spin"))
    );
    assert!(
        !lines.iter().any(|l| l.contains("Evaluator")),
        "no meta options: {lines:?}"
    );
    e.send("setoption name hash value 32");
    e.send("setoption name Evaluator value stockfish");
    e.send("xboard");
    e.send("position fen this is not a fen");
    e.send("position startpos moves e2e4 e2e4");
    e.send("go depth x");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_legal(&position(None, &["e2e4"]), &mv);
    let strings: Vec<_> = lines
        .iter()
        .filter(|l| l.starts_with("info string"))
        .collect();
    assert!(
        strings.iter().any(|l| l.contains("Evaluator")),
        "{strings:?}"
    );
    assert!(
        strings.iter().any(|l| l.contains("not a fen")),
        "{strings:?}"
    );
    assert!(strings.iter().any(|l| l.contains("e2e4")), "{strings:?}");
    assert!(strings.iter().any(|l| l.contains("'x'")), "{strings:?}");
    assert!(e.quit().success());
}

#[test]
fn infinite_stop_and_isready_mid_search() {
    let mut e = Mpcmc::builtin(&[]);
    e.handshake();
    e.infinite_waits_for_stop(Duration::from_millis(700));
    assert!(e.quit().success());
}

#[test]
fn a_new_go_replaces_a_search_never_told_to_end() {
    let mut e = Mpcmc::builtin(&[]);
    e.handshake();
    e.a_new_go_replaces_a_search_never_told_to_end();
    assert!(e.quit().success());
}

#[test]
fn every_go_limit_and_finished_roots() {
    let mut e = Mpcmc::builtin(&[]);
    e.handshake();
    e.send("position startpos moves d2d4");
    for go in [
        "go depth 4",
        "go nodes 20000",
        "go movetime 300",
        "go mate 2",
        "go wtime 2000 btime 2000 winc 20 binc 20",
    ] {
        let sent = Instant::now();
        e.send(go);
        let (mv, _) = e.bestmove(10 * SECOND);
        assert_legal(&position(None, &["d2d4"]), &mv);
        assert!(
            sent.elapsed() < 3 * SECOND,
            "{go} took {:?}",
            sent.elapsed()
        );
    }
    e.send("position startpos moves f2f3 e7e5 g2g4 d8h4");
    e.send("go depth 3");
    assert_eq!(e.bestmove(5 * SECOND).0, "(none)");
    e.send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    e.send("go movetime 100");
    assert_eq!(e.bestmove(5 * SECOND).0, "(none)");
    // Ponder: no answer before ponderhit. The time pondered counts as the
    // move's: past half its budget (2 s on this clock), or past its move
    // time, the move comes at ponderhit; with a depth, once the search
    // reached it; with no limit, at once. (The ponder runs 1.2 s.)
    for go in [
        "go ponder wtime 60000 btime 60000",
        "go ponder movetime 1000",
        "go ponder depth 3",
        "go ponder",
    ] {
        e.send("position startpos moves e2e4");
        e.send(go);
        e.silent("bestmove", Duration::from_millis(1200));
        let hit = Instant::now();
        e.send("ponderhit");
        let (mv, _) = e.bestmove(5 * SECOND);
        assert!(
            hit.elapsed() < Duration::from_millis(500),
            "{go}: {:?}",
            hit.elapsed()
        );
        assert_legal(&position(None, &["e2e4"]), &mv);
    }
    assert!(e.quit().success());
}

#[test]
fn finds_mates_in_one_and_two() {
    let mut e = Mpcmc::builtin(&[]);
    e.handshake();
    e.send("position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1");
    e.send("go depth 4");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_eq!(mv, "d1d8", "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("score mate 1")),
        "{lines:?}"
    );
    // Mate in two, the rook ladder: 1. Ra7 Kg8 2. Rb8#.
    e.send("position fen 7k/8/8/8/8/8/8/RR4K1 w - - 0 1");
    e.send("go depth 6");
    let (_, lines) = e.bestmove(10 * SECOND);
    assert!(
        lines.iter().any(|l| l.contains("score mate 2")),
        "{lines:?}"
    );
    assert!(e.quit().success());
}

#[test]
fn never_loses_on_time_at_one_second_plus_ten_ms() {
    let mut e = Mpcmc::builtin(&[]);
    e.handshake();
    e.play_clock_game(1000, 10, 60);
    e.close_stdin();
    assert!(e.wait(5 * SECOND).success());
}

/// A GUI's `Threads` far above the machine's cores (256 on 2 took 8.8 s of
/// a 1 s clock): held to the cores, said once a search, and on time.
#[test]
fn threads_beyond_the_cores_are_held_to_them() {
    let mut e = Mpcmc::builtin(&[]);
    e.handshake();
    e.send("setoption name Threads value 256");
    e.send("position startpos");
    e.send("go wtime 1000 btime 1000");
    let sent = Instant::now();
    let (mv, lines) = e.bestmove(5 * SECOND);
    assert_legal(&position(None, &[]), &mv);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string Threads 256 is more than the")),
        "{lines:?}"
    );
    assert!(sent.elapsed() < SECOND, "{:?}", sent.elapsed());
    e.play_clock_game(1000, 10, 40);
    assert!(e.quit().success());
}

#[test]
fn quickstart_needs_nothing_but_the_binary() {
    // The README's first command: no flags, no Stockfish, input then EOF.
    let mut e = Mpcmc::start(&[]);
    e.send("uci");
    e.send("position startpos");
    let sent = Instant::now();
    e.send("go movetime 1000");
    e.close_stdin();
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_legal(&Chess::default(), &mv);
    let took = sent.elapsed();
    assert!(
        took > Duration::from_millis(500) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("option name Evaluator type string default builtin")),
        "{lines:?}"
    );
    assert!(e.wait(5 * SECOND).success());
}

#[test]
fn searchmoves_restricts_the_root() {
    // d1d8 mates; told to look at other moves only, the engine plays one of
    // them, and an illegal searchmove is named and ignored.
    let fen = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1";
    let pos = position(Some(fen), &[]);
    let mut e = Mpcmc::builtin(&[]);
    e.handshake();
    e.send(&format!("position fen {fen}"));
    e.send("go depth 4 searchmoves h2h3 g1f1");
    let (mv, _) = e.bestmove(10 * SECOND);
    assert_legal(&pos, &mv);
    assert!(["h2h3", "g1f1"].contains(&mv.as_str()), "{mv}");
    e.send("go depth 4 searchmoves e2e4 h2h3 d1d8");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_eq!(mv, "d1d8");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string") && l.contains("e2e4")),
        "{lines:?}"
    );
    assert!(e.quit().success());
}
