//! Tournament habits (issue 6): never a blind move, never a hang, `readyok`
//! in order, clean stdout, no child outliving mpcmc, `<empty>` options.
//! Fault cases run over child processes written in `sh` (`common::sh_engine`);
//! chess over Stockfish and the built-in engine.

mod common;

use std::{
    thread,
    time::{Duration, Instant},
};

use common::{Mpcmc, SECOND, assert_legal, kill9_then_left, position, sh_engine, stockfish};

/// `--evaluator=` a shell engine that runs `on_go` on `go` (after `on_uci`
/// on `uci`).
fn sh_evaluator(on_uci: &str, on_go: &str) -> String {
    format!(
        "--evaluator={}",
        sh_engine(on_uci, on_go, None, "mpcmc-tournament-child")
    )
}

/// Never answers `go`, nor `stop`.
const STALL: &str = ":";

/// The `nodes` of the last `info depth` line in `lines`.
fn last_info_nodes(lines: &[String]) -> Option<u64> {
    let info = lines.iter().rev().find(|l| l.starts_with("info depth"))?;
    let mut words = info.split_whitespace();
    words.find(|w| *w == "nodes")?;
    words.next()?.parse().ok()
}

/// Asserts the `bestmove` closing `lines` was searched: a final `info` line
/// with nodes, and no "first legal move".
fn assert_searched(lines: &[String]) {
    assert!(
        !lines.iter().any(|l| l.contains("first legal move")),
        "{lines:#?}"
    );
    assert!(
        last_info_nodes(lines).is_some_and(|n| n > 0),
        "no searched info line before the move: {lines:#?}"
    );
}

/// A child sent the game's clock decides its own time, as it would playing
/// alone: a move it thinks on past mpcmc's hard limit (three times the
/// move's share of the clock) is waited for, not cut.
#[test]
fn a_child_on_the_game_clock_may_think_past_the_hard_limit() {
    // Every `go` is answered after 2 s, with a move no short search plays.
    let slow = sh_evaluator(
        "",
        "sleep 2; echo info depth 1 score cp 10 pv h7h5; echo bestmove h7h5",
    );
    let mut e = Mpcmc::start(&[&slow, "--threads=1"]);
    e.handshake();
    e.send("position startpos moves e2e4");
    let sent = Instant::now();
    // The hard limit: three times (10 s / 25), 1.2 s; the flag guard: 5 s.
    e.send("go wtime 10000 btime 10000");
    let (mv, lines) = e.bestmove(10 * SECOND);
    let took = sent.elapsed();
    assert_eq!(mv, "h7h5", "{lines:#?}");
    assert!(took >= 2 * SECOND && took < 4 * SECOND, "took {took:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string rule one_worker")),
        "{lines:#?}"
    );
    assert!(e.quit().success());
}

#[test]
fn near_the_flag_the_move_is_searched_never_blind() {
    let sf = stockfish();
    let mut e = Mpcmc::start(&[&format!("--evaluator={sf}")]);
    e.handshake();
    let pos = position(None, &["e2e4", "e7e5"]);
    for clock in [20, 40, 60, 100, 20, 40, 60, 100] {
        e.send("position startpos moves e2e4 e7e5");
        let sent = Instant::now();
        e.send(&format!("go wtime {clock} btime {clock} winc 0 binc 0"));
        let (mv, lines) = e.bestmove(5 * SECOND);
        let took = sent.elapsed();
        assert_legal(&pos, &mv);
        assert_searched(&lines);
        assert!(
            took < Duration::from_millis(clock + 100),
            "{clock} ms on the clock, answered after {took:?}"
        );
    }
    assert!(e.quit().success());
}

#[test]
fn a_stalled_child_under_a_clock_still_yields_a_searched_move_in_time() {
    let mut e = Mpcmc::start(&[&sh_evaluator("", STALL)]);
    e.handshake();
    e.send("position startpos moves d2d4");
    let sent = Instant::now();
    e.send("go wtime 3000 btime 3000");
    let (mv, lines) = e.bestmove(5 * SECOND);
    let took = sent.elapsed();
    assert_legal(&position(None, &["d2d4"]), &mv);
    assert_searched(&lines);
    assert!(took < 2 * SECOND, "answered after {took:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string") && l.contains("built-in engine")),
        "{lines:#?}"
    );
    assert!(e.quit().success());
}

/// A child that stops answering after an iteration (a loaded machine, a
/// child slow to answer `stop`) is given up at the move's cap: its latest
/// iteration is a searched move and is played, not the built-in engine's
/// quick one (that was played, at depth 2, when Stockfish overran a
/// `go movetime 500` by a few milliseconds on a busy machine).
#[test]
fn a_child_that_goes_silent_after_an_iteration_is_played_from_it() {
    let on_go = "echo \"info depth 9 seldepth 12 score cp 20 nodes 90000 pv a7a6 h2h3\"";
    let mut e = Mpcmc::start(&[&sh_evaluator("", on_go)]);
    e.handshake();
    e.send("position startpos moves d2d4");
    let sent = Instant::now();
    e.send("go movetime 500");
    let (mv, lines) = e.bestmove(5 * SECOND);
    assert!(sent.elapsed() < Duration::from_millis(700), "{lines:#?}");
    assert_eq!(mv, "a7a6", "{lines:#?}");
    let last = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .expect("a line");
    assert!(
        last.contains("depth 9 seldepth 12 score cp 20") && last.contains("pv a7a6"),
        "{last}"
    );
    assert!(e.quit().success());
}

#[test]
fn searches_without_a_clock_end_when_a_child_hangs() {
    let mut e = Mpcmc::start(&[&sh_evaluator("", STALL)]);
    e.handshake();
    for go in ["go depth 3", "go nodes 5000"] {
        e.send("position startpos");
        let sent = Instant::now();
        e.send(go);
        let (mv, lines) = e.bestmove(15 * SECOND);
        let took = sent.elapsed();
        assert_legal(&shakmaty::Chess::default(), &mv);
        assert_searched(&lines);
        assert!(took < 8 * SECOND, "'{go}' answered after {took:?}");
        // The reason reaches the GUI, not only stderr.
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string") && l.contains("stalled")),
            "{lines:#?}"
        );
    }
    assert!(e.quit().success());
}

#[test]
fn a_second_go_mid_search_leaves_the_first_answer_searched() {
    let sf = stockfish();
    // Calls far too big to finish before the second `go` arrives.
    let mut e = Mpcmc::start(&[&format!("--evaluator={sf}"), "--child-nodes=50000000"]);
    e.handshake();
    e.send("position startpos moves e2e4");
    e.send("go");
    thread::sleep(Duration::from_millis(200));
    e.send("go movetime 300");
    let (first, lines) = e.bestmove(5 * SECOND);
    let pos = position(None, &["e2e4"]);
    assert_legal(&pos, &first);
    assert_searched(&lines);
    let (second, lines) = e.bestmove(5 * SECOND);
    assert_legal(&pos, &second);
    assert_searched(&lines);
    assert!(e.quit().success());
}

#[test]
fn readyok_comes_in_order_and_before_quit() {
    // `printf 'uci\nisready\nquit\n' | mpcmc`
    let mut e = Mpcmc::start(&[]);
    e.send("uci");
    e.send("isready");
    e.send("quit");
    e.close_stdin();
    e.until("readyok", 10 * SECOND);
    assert!(e.wait(10 * SECOND).success());

    // `isready` before a `go`: `readyok` first.
    let mut e = Mpcmc::start(&["--child-nodes=200"]);
    e.send("uci");
    e.send("position startpos");
    e.send("isready");
    e.send("go");
    let lines = e.until("readyok", 10 * SECOND);
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("info") || l.starts_with("bestmove")),
        "{lines:#?}"
    );
    e.bestmove(10 * SECOND);
    assert!(e.quit().success());
}

#[test]
fn a_slow_child_does_not_hold_readyok_or_the_move() {
    // Slower than isready's 5 s wait plus the move: a readyok that waited
    // for it would come after 9 s. (The sleep outlives a killed shell by
    // those 9 s at most.)
    let mut e = Mpcmc::start(&[&sh_evaluator("sleep 9;", STALL)]);
    e.send("uci");
    e.until("uciok", 5 * SECOND);
    let sent = Instant::now();
    e.send("isready");
    e.until("readyok", 10 * SECOND);
    let took = sent.elapsed();
    assert!(took < Duration::from_millis(6500), "readyok after {took:?}");
    e.send("position startpos");
    e.send("go movetime 500");
    let (mv, lines) = e.bestmove(3 * SECOND);
    assert_legal(&shakmaty::Chess::default(), &mv);
    assert_searched(&lines);
    assert!(e.quit().success());
}

#[test]
fn control_characters_in_bad_input_never_reach_stdout() {
    let mut e = Mpcmc::start(&["--child-nodes=100"]);
    e.handshake();
    e.send("setoption name \u{1b}[31mRed\u{0} value 1");
    e.send("position fen \u{0}\u{1b}x");
    e.send("position startpos moves e2e4 \u{7}\u{1b}");
    e.send("go nodes \u{1b}9");
    e.bestmove(10 * SECOND);
    e.send("isready");
    e.until("readyok", 5 * SECOND);
    for line in &e.transcript {
        assert!(!line.chars().any(char::is_control), "{line:?}");
    }
    assert!(
        e.transcript.iter().any(|l| l.contains("\\u{1b}")),
        "the bad input is still named, escaped: {:#?}",
        e.transcript
    );
    assert!(e.quit().success());
}

#[test]
fn a_hung_child_dies_with_a_killed_mpcmc() {
    // On `go` the child ignores SIGTERM and never reads again: only SIGKILL
    // ends it.
    let deaf = r#"trap "" TERM; exec sleep 1000"#;
    let mut e = Mpcmc::start(&[&sh_evaluator("", deaf)]);
    e.handshake();
    let children = e.children();
    assert!(!children.is_empty(), "the shell child runs");
    e.send("position startpos");
    e.send("go infinite");
    thread::sleep(Duration::from_millis(300));
    // SIGKILL: no chance to clean up.
    let left = kill9_then_left(e.pid(), &children, 3 * SECOND);
    assert!(left.is_empty(), "children {left:?} outlived a killed mpcmc");
}

#[test]
fn empty_as_a_gui_echoes_it_means_empty() {
    let dir = std::env::temp_dir().join(format!("mpcmc-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut e = common::Mpcmc::start_in(&dir, &["--child-nodes=200"]);
    e.handshake();
    for name in ["Opponent", "OpponentOptions", "EvaluatorOptions", "LogFile"] {
        e.send(&format!("setoption name {name} value <empty>"));
    }
    e.send("position startpos");
    e.send("go");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_legal(&shakmaty::Chess::default(), &mv);
    assert!(!lines.iter().any(|l| l.contains("<empty>")), "{lines:#?}");
    assert!(e.quit().success());
    assert!(
        !dir.join("<empty>").exists(),
        "a log file named '<empty>' was written"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shredder_castling_without_chess960_is_reported() {
    let mut e = Mpcmc::start(&["--child-nodes=100"]);
    e.handshake();
    e.send("position fen nrbbqkrn/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKRN w GBgb - 0 1");
    e.send("isready");
    let lines = e.until("readyok", 5 * SECOND);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string") && l.contains("castling rights")),
        "{lines:#?}"
    );
    // With UCI_Chess960 the same FEN is fine.
    e.send("setoption name UCI_Chess960 value true");
    e.send("position fen nrbbqkrn/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKRN w GBgb - 0 1");
    e.send("isready");
    let lines = e.until("readyok", 5 * SECOND);
    assert!(
        !lines.iter().any(|l| l.starts_with("info string")),
        "{lines:#?}"
    );
    assert!(e.quit().success());
}
