//! The binary as a GUI sees it, over real Stockfish children.

mod common;

use std::{
    thread,
    time::{Duration, Instant},
};

use common::{ChildKind, Mpcmc, SECOND, alive, assert_legal, position};
use mpcmc::uci::options::names;
use shakmaty::{Chess, Position};

fn handshake_lists_every_option(child: ChildKind) {
    let mut e = Mpcmc::over(child, &[]);
    let lines = e.handshake();
    assert!(
        lines.iter().any(|l| l.starts_with("id name mpcmc ")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.starts_with("id author ")));
    for name in names() {
        let declared = format!("option name {name} type ");
        assert!(
            lines.iter().any(|l| l.starts_with(&declared)),
            "no option line for {name}: {lines:?}"
        );
    }
    // Names are case-insensitive; a bad option or value is an info string.
    e.send("setoption name childnodes value 1000");
    e.send("setoption name No Such Thing value 3");
    e.send("setoption name Threads value many");
    e.send("isready");
    let lines = e.until("readyok", 5 * SECOND);
    let strings: Vec<_> = lines
        .iter()
        .filter(|l| l.starts_with("info string"))
        .collect();
    assert_eq!(strings.len(), 2, "{lines:?}");
    assert!(strings[0].contains("No Such Thing"));
    assert!(strings[1].contains("many"));
    assert!(e.quit().success());
}

fn movetime_answers_a_legal_move_in_time(child: ChildKind) {
    // One worker (the default), then two. With one, the root search takes
    // ROOT_SHARE of the time first, and the rest may not fit a lookahead
    // before the children's speed is known; with two the lookahead has a
    // worker of its own.
    for threads in [1, 2] {
        let flags = [&format!("--threads={threads}"), "--child-threads=1"];
        let mut e = Mpcmc::over(child, &flags);
        e.handshake();
        e.send("position startpos moves e2e4 e7e5");
        let sent = Instant::now();
        e.send("go movetime 1000");
        let (mv, lines) = e.bestmove(5 * SECOND);
        let took = sent.elapsed();
        assert_legal(&position(None, &["e2e4", "e7e5"]), &mv);
        // Not far past the movetime, even on a loaded machine; and the
        // time is used: a move time is a target to reach (two workers
        // answered after 0.41–0.84 s when the root search stopped with the
        // rounds).
        assert!(took < 2 * SECOND, "took {took:?}");
        // Unless the lookahead's best beat the root search's move: then
        // the time left goes to the deep check, which may end sooner.
        let checked = lines.iter().any(|l| l.contains("; deep check:"));
        assert!(
            checked || took >= Duration::from_millis(850),
            "took {took:?}: {lines:?}"
        );
        // A final info line with a score, summed nodes, and a pv starting
        // with our move.
        let info = lines
            .iter()
            .rev()
            .find(|l| l.starts_with("info depth"))
            .expect("an info line");
        assert!(info.contains(" score "), "{info}");
        assert!(info.contains(&format!(" pv {mv}")), "{info}");
        // `MultiPV` 1 (the default): one line, no `multipv` field.
        assert!(!lines.iter().any(|l| l.contains(" multipv ")), "{lines:?}");
        if threads == 2 {
            assert!(lines.iter().any(|l| l.contains("currmovenumber")));
        }
        assert!(e.quit().success());
    }
}

fn never_loses_on_time_at_one_second_plus_ten_ms(child: ChildKind) {
    // mpcmc plays both sides of a 1+0.01 game for 60 plies; the clock is kept
    // here as a GUI keeps it, including pipe latency. One worker, and two
    // running two-step rounds beside the root search. The default
    // `MoveOverhead` (10 ms): what a busy machine needs beyond it is
    // measured as the game goes (`Lateness`).
    for flags in [
        &[][..],
        &["--threads=2", "--child-threads=1", "--lookahead=two"],
    ] {
        let mut e = Mpcmc::over(child, flags);
        e.handshake();
        e.play_clock_game(1000, 10, 60);
        assert!(e.quit().success());
    }
}

fn never_loses_on_time_at_ten_moves_in_one_second(child: ChildKind) {
    // Three controls of 10 moves in 1 s each side: `movestogo` reaches the
    // child, which may spend most of what is left on a control's last move;
    // with two workers the rounds keep to the hard limit beside it. The
    // default `MoveOverhead`, as above.
    for workers in [&[][..], &["--threads=2", "--child-threads=1"]] {
        let mut e = Mpcmc::over(child, workers);
        e.handshake();
        e.play_game_on_clock(1000, 0, Some(10), 60);
        assert!(e.quit().success());
    }
}

fn infinite_waits_for_stop_and_isready_is_answered_mid_search(child: ChildKind) {
    let mut e = Mpcmc::over(child, &[]);
    e.handshake();
    e.infinite_waits_for_stop(Duration::from_millis(1500));
    assert!(e.quit().success());
}

fn a_new_go_replaces_a_search_never_told_to_end(child: ChildKind) {
    let mut e = Mpcmc::over(child, &[]);
    e.handshake();
    e.a_new_go_replaces_a_search_never_told_to_end();
    assert!(e.quit().success());
}

/// The depths of the `info depth` lines among `lines`, in order.
fn info_depths(lines: &[String]) -> Vec<u32> {
    lines
        .iter()
        .filter_map(|l| {
            l.strip_prefix("info depth ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// With one worker (the defaults) on a clock the decision is the
/// evaluator's own search, and so is pondering: the child is sent `go
/// ponder` and `ponderhit`, and its search goes on where it got (its
/// iterations do not start over at `ponderhit`). A ponder miss (`stop`)
/// answers at once, and the next `go` plays.
fn ponder_answers_after_ponderhit(child: ChildKind) {
    let mut e = Mpcmc::over(child, &[]);
    e.handshake();
    e.send("position startpos moves e2e4 e7e5");
    e.send("go ponder wtime 30000 btime 30000 winc 50 binc 50");
    // Iterations are relayed at most 50 a second: some depths are not
    // shown, so wait for any at 6 or deeper.
    let mut pondered = Vec::new();
    while info_depths(&pondered).iter().all(|&d| d < 6) {
        let line = e
            .next_line(10 * SECOND)
            .expect("pondering shows its depths");
        pondered.push(line);
    }
    assert!(!pondered.iter().any(|l| l.starts_with("bestmove")));
    e.silent("bestmove", Duration::from_millis(300));
    let hit = Instant::now();
    e.send("ponderhit");
    let (mv, after) = e.bestmove(15 * SECOND);
    // The child was told: it ends as it would alone (about a second at
    // most), long before the move's cap (10 s), where mpcmc would stop a
    // child still pondering.
    assert!(hit.elapsed() < 5 * SECOND, "took {:?}", hit.elapsed());
    assert_legal(&position(None, &["e2e4", "e7e5"]), &mv);
    assert!(
        after
            .iter()
            .any(|l| l.starts_with("info string rule one_worker")),
        "{after:?}"
    );
    let depths = info_depths(&after);
    assert!(!depths.is_empty(), "{after:?}");
    assert!(
        depths.iter().all(|&d| d >= 6),
        "the search started over at ponderhit: {after:?}"
    );
    // A ponder miss: `stop` is answered at once.
    e.send("position startpos moves e2e4 e7e5 g1f3");
    e.send("go ponder wtime 5000 btime 5000 winc 50 binc 50");
    e.silent("bestmove", Duration::from_millis(500));
    let sent = Instant::now();
    e.send("stop");
    e.bestmove(5 * SECOND);
    assert!(sent.elapsed() < SECOND, "took {:?}", sent.elapsed());
    e.send("position startpos moves e2e4 e7e5 g1f3 b8c6");
    e.send("go wtime 5000 btime 5000 winc 50 binc 50");
    let (mv, _) = e.bestmove(5 * SECOND);
    assert_legal(&position(None, &["e2e4", "e7e5", "g1f3", "b8c6"]), &mv);
    assert!(e.quit().success());
}

/// With two workers, pondering runs rounds, and `ponderhit` puts the same
/// rounds on the clock: they go on where pondering got (no round 1 again).
fn ponderhit_continues_the_rounds(child: ChildKind) {
    let mut e = Mpcmc::over(child, &["--threads=2", "--child-threads=1"]);
    e.handshake();
    e.send("position startpos moves e2e4 e7e5");
    // A short clock: after `ponderhit` there is no time for three rounds
    // afresh.
    e.send("go ponder wtime 1000 btime 1000");
    // Each complete round shows its line: three rounds pondered.
    let pondered = e.until_nth("info depth", 3, 10 * SECOND);
    assert!(!pondered.iter().any(|l| l.starts_with("bestmove")));
    e.send("ponderhit");
    let (mv, after) = e.bestmove(5 * SECOND);
    assert_legal(&position(None, &["e2e4", "e7e5"]), &mv);
    // The decision counts the pondered rounds (its detail: "…; N rounds,
    // M calls, …"), not only those after `ponderhit`.
    let rounds = after
        .iter()
        .filter(|l| l.starts_with("info string"))
        .find_map(|l| {
            l.split("; ")
                .find_map(|part| part.split_once(" rounds, ")?.0.parse::<u32>().ok())
        });
    assert!(
        rounds.is_some_and(|n| n >= 3),
        "rounds started over: {after:?}"
    );
    assert!(e.quit().success());
}

fn finished_root_answers_none(child: ChildKind) {
    let mut e = Mpcmc::over(child, &["--child-nodes=500"]);
    e.handshake();
    // Fool's mate: White is mated.
    e.send("position startpos moves f2f3 e7e5 g2g4 d8h4");
    e.send("go movetime 500");
    let (mv, lines) = e.bestmove(5 * SECOND);
    assert_eq!(mv, "(none)", "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("score mate 0")),
        "{lines:?}"
    );
    // Stalemate.
    e.send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    e.send("go depth 3");
    let (mv, _) = e.bestmove(5 * SECOND);
    assert_eq!(mv, "(none)");
    assert!(e.quit().success());
}

/// Analysis of a position where every move ends the game by rule (K v K,
/// K+N v K, the fifty-move rule reached): every value is exact, so the
/// analysis is complete at once and printed once, not thousands of times a
/// second (it printed 294 860 lines in one second), and `stop` and
/// `isready` are answered at once. With one worker and with two.
fn an_exact_analysis_is_printed_once(child: ChildKind) {
    let positions = [
        "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
        "8/8/4k3/8/8/3K4/8/6N1 w - - 0 1",
        "4k3/8/8/8/8/8/4P3/4K3 w - - 100 80",
    ];
    for threads in ["--threads=1", "--threads=2"] {
        let mut e = Mpcmc::over(child, &[threads, "--child-threads=1"]);
        e.handshake();
        for fen in positions {
            e.send(&format!("position fen {fen}"));
            e.send("go infinite");
            e.silent("bestmove", Duration::from_millis(500));
            e.send("stop");
            let (mv, lines) = e.bestmove(2 * SECOND);
            assert_legal(&position(Some(fen), &[]), &mv);
            assert!(lines.len() < 200, "{threads} {fen}: {} lines", lines.len());
            e.send(&format!("position fen {fen}"));
            e.send("go ponder movetime 1000");
            e.silent("bestmove", Duration::from_millis(300));
            e.send("ponderhit");
            let (_, lines) = e.bestmove(3 * SECOND);
            assert!(lines.len() < 200, "{threads} {fen}: {} lines", lines.len());
            e.send("isready");
            e.until("readyok", SECOND);
        }
        assert!(e.quit().success());
    }
}

fn finds_a_mate_in_one(child: ChildKind) {
    let mut e = Mpcmc::over(child, &["--child-nodes=2000"]);
    e.handshake();
    // Back-rank mate: Rd8#.
    let fen = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1";
    e.send(&format!("position fen {fen}"));
    e.send("go");
    let (mv, lines) = e.bestmove(20 * SECOND);
    assert_eq!(mv, "d1d8", "{lines:?}");
    let info = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .expect("info");
    assert!(info.contains("score mate 1"), "{info}");
    assert!(e.quit().success());
}

fn bad_input_is_survived(child: ChildKind) {
    let mut e = Mpcmc::over(child, &["--child-nodes=300"]);
    e.handshake();

    // go before any position: the start position, with a note.
    e.send("go");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_legal(&Chess::default(), &mv);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string") && l.contains("position"))
    );

    // An impossible FEN (or a position line naming none): the GUI meant a
    // position there is not, so every go answers that there is no move,
    // never a move of the position before (`go depth 3` answered d7d5
    // after 1.e4 here), until the next good position.
    for (bad, go) in [
        ("position fen 8/8/8/8/8/8/8/8 w - - 0 1", "go depth 3"),
        ("position fen not-a-fen", "go nodes 1000"),
        ("position sideways", "go wtime 1000 btime 1000"),
    ] {
        e.send("position startpos moves e2e4");
        e.send(bad);
        e.send(go);
        let (mv, lines) = e.bestmove(10 * SECOND);
        assert_eq!(mv, "(none)", "{bad}: {lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info string") && l.contains("no position to search")),
            "{bad}: {lines:?}"
        );
    }
    // go infinite with none: the answer waits for stop.
    e.send("go infinite");
    e.silent("bestmove", SECOND / 2);
    e.send("stop");
    assert_eq!(e.bestmove(10 * SECOND).0, "(none)");
    e.send("position startpos moves d2d4");
    e.send("go depth 3");
    let (mv, _) = e.bestmove(10 * SECOND);
    assert_legal(&position(None, &["d2d4"]), &mv);

    // An illegal move in the list: the moves before it stand.
    e.send("position startpos moves e2e4 e7e5 e1e3 b8c6");
    e.send("go");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string") && l.contains("e1e3")),
        "{lines:?}"
    );
    assert_legal(&position(None, &["e2e4", "e7e5"]), &mv);

    // A malformed move token and a malformed number.
    e.send("position startpos moves e2e4 xyz");
    e.send("go movetime 12ab nodes 20000");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert!(lines.iter().any(|l| l.contains("xyz")), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("12ab")), "{lines:?}");
    assert_legal(&position(None, &["e2e4"]), &mv);

    // Unknown commands, Arena's `xboard`, binary noise, empty lines.
    e.send("xboard");
    e.send("fly to the moon");
    e.send("");
    e.send("\u{1b}[A\u{0}garbage");
    e.send("setoption");
    e.send("isready");
    let lines = e.until("readyok", 5 * SECOND);
    assert!(!lines.iter().any(|l| l.starts_with("bestmove")));

    // Latin-1 (not UTF-8) in a line, and a line far longer than any UCI
    // line: said, skipped, and the session goes on.
    e.send_bytes(b"setoption name caf\xe9 value 1\n");
    let mut long = vec![b'x'; 1 << 20];
    long.push(b'\n');
    e.send_bytes(&long);
    e.send("position startpos moves e2e4");
    e.send("go nodes 5000");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string") && l.contains("caf\u{fffd}")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("info string")
            && l.contains("a line of more than 65536 bytes, skipped")),
        "{lines:?}"
    );
    assert_legal(&position(None, &["e2e4"]), &mv);
    assert!(e.quit().success());
}

fn searchmoves_restricts_the_candidates(child: ChildKind) {
    let mut e = Mpcmc::over(child, &["--child-nodes=500"]);
    e.handshake();
    e.send("position startpos");
    e.send("go searchmoves a2a3 h2h3");
    let (mv, _) = e.bestmove(10 * SECOND);
    assert!(mv == "a2a3" || mv == "h2h3", "{mv}");
    assert!(e.quit().success());
}

/// A storm of unpaced commands (20 000 lines, thousands of `go`s) is
/// worked through fast: a `go` with a newer command queued behind it
/// starts already stopped, and a `quit` anywhere in the queue ends mpcmc
/// at once. (It took 32-50 s after the input ended, and `quit` waited
/// behind the queue.)
#[test]
fn a_command_storm_is_survived_and_quit_ends_it() {
    let storm = |seed: u64, lines: usize| -> Vec<u8> {
        let commands = [
            "position startpos moves e2e4",
            "go movetime 1000",
            "isready",
            "go nodes 100000",
            "stop",
            "position startpos",
            "go depth 20",
            "go wtime 5000 btime 5000",
            "ucinewgame",
        ];
        let mut x = seed;
        let mut bytes = Vec::new();
        for _ in 0..lines {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let line = commands[(x >> 33) as usize % commands.len()];
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        bytes
    };
    // A storm of 5000 lines, then a clean search: answered, and the last
    // bestmove is for that position. (20 000 lines: 218 s here before, on
    // a busy machine; 25 s now, most of it the 10 ms move of each `go`
    // that a `stop` ended.)
    let mut e = Mpcmc::start(&[]);
    e.handshake();
    let sent = std::time::Instant::now();
    let bytes = storm(1, 5000);
    let gos = bytes
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"go"))
        .count();
    e.send_bytes(&bytes);
    e.send("position startpos moves e2e4 e7e5");
    e.send("go nodes 3000");
    // One bestmove a go, in order: the last is the clean search's.
    for _ in 0..gos {
        e.bestmove(60 * SECOND);
    }
    let (mv, _) = e.bestmove(60 * SECOND);
    assert_legal(&position(None, &["e2e4", "e7e5"]), &mv);
    let took = sent.elapsed();
    assert!(took < 30 * SECOND, "{gos} gos: {took:?}");
    assert!(e.quit().success());
    // The storm, then `quit`: out within a second, every command before it
    // answered in order, each `go` unsearched. (20 000 lines: 0.58 s in a
    // release build on a busy machine; 5000 here, for a test profile
    // beside the other tests.)
    for seed in 1..=3 {
        let mut e = Mpcmc::start(&[]);
        e.handshake();
        let mut bytes = storm(seed, 5000);
        bytes.extend_from_slice(b"quit\n");
        let sent = std::time::Instant::now();
        e.send_bytes(&bytes);
        assert!(e.wait(10 * SECOND).success());
        assert!(sent.elapsed() < SECOND, "seed {seed}: {:?}", sent.elapsed());
    }
}

/// A child's score that the board refutes (mated now, or mated in one, in
/// the start position) never reaches the GUI: GUIs resign or adjudicate on
/// such lines. The child is asked again, then the built-in engine moves.
#[test]
fn a_mate_the_board_refutes_is_never_shown() {
    for claim in ["mate 0", "mate -1"] {
        let on_go =
            format!("echo \"info depth 1 score {claim} nodes 1 pv e2e4\"; echo \"bestmove e2e4\"");
        let child = common::sh_engine("", &on_go, None, "false-mate");
        let evaluator = format!("--evaluator={child}");
        let mut e = Mpcmc::start(&[&evaluator]);
        e.handshake();
        e.send("position startpos");
        e.send("go wtime 2000 btime 2000");
        let (mv, lines) = e.bestmove(10 * SECOND);
        assert_legal(&position(None, &[]), &mv);
        assert!(
            !lines.iter().any(|l| l.starts_with("info ")
                && !l.starts_with("info string")
                && l.contains(&format!("score {claim}"))),
            "{claim}: {lines:?}"
        );
        assert!(e.quit().success());
    }
}

/// A child that floods its `info` lines (200 000 a search) does not flood
/// the GUI: its iterations are relayed at most 50 a second, and the move
/// comes in time.
#[test]
fn a_childs_info_flood_is_not_relayed_line_for_line() {
    let on_go = "seq 1 200000 | sed \"s/.*/info depth & score cp 10 nodes & pv e2e4/\"; echo \"bestmove e2e4\"";
    let child = common::sh_engine("", on_go, None, "info-flood");
    let evaluator = format!("--evaluator={child}");
    let mut e = Mpcmc::start(&[&evaluator]);
    e.handshake();
    e.send("position startpos");
    let sent = std::time::Instant::now();
    e.send("go movetime 1000");
    let (mv, lines) = e.bestmove(30 * SECOND);
    let took = sent.elapsed();
    assert_legal(&position(None, &[]), &mv);
    assert!(lines.len() < 200, "{} lines", lines.len());
    assert!(took < 2 * SECOND, "{took:?}");
    assert!(e.quit().success());
}

/// A child that closes its output on `go` (alive, but mute): each search
/// costs a restart or two, so once two searches failed with none answering
/// the decision asks no more, and the built-in engine moves. (8.5 s for a
/// `go nodes 20000` here before; 32 s where it was found.)
#[test]
fn broken_children_are_not_asked_for_every_move() {
    let child = common::sh_engine("", "exec 1>&-", None, "mute-on-go");
    let evaluator = format!("--evaluator={child}");
    let mut e = Mpcmc::start(&[&evaluator]);
    e.handshake();
    for go in ["go nodes 20000", "go depth 5"] {
        e.send("position startpos moves e2e4");
        let sent = std::time::Instant::now();
        e.send(go);
        let (mv, lines) = e.bestmove(30 * SECOND);
        let took = sent.elapsed();
        assert_legal(&position(None, &["e2e4"]), &mv);
        assert!(took < 4 * SECOND, "{go}: {took:?} {lines:?}");
        // One rule said: the one that chose the move played.
        let rules: Vec<_> = lines
            .iter()
            .filter(|l| l.starts_with("info string") && l.contains("rule "))
            .collect();
        assert_eq!(rules.len(), 1, "{rules:?}");
        assert!(rules[0].contains("rule builtin_fallback"), "{rules:?}");
    }
    assert!(e.quit().success());
}

/// A `go infinite` with a newer `go` already queued behind it is still
/// replaced without a `bestmove` (it answers only when told), not answered
/// unsearched as a stale timed `go` is.
#[test]
fn a_queued_go_replaces_go_infinite_without_a_bestmove() {
    let mut e = Mpcmc::start(&[]);
    e.handshake();
    e.send_bytes(b"position startpos\ngo infinite\nposition startpos moves e2e4\ngo nodes 2000\n");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_legal(&position(None, &["e2e4"]), &mv);
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("bestmove")).count(),
        1,
        "{lines:?}"
    );
    e.silent("bestmove", Duration::from_millis(300));
    assert!(e.quit().success());
}

/// A `go` answered unsearched (a newer `go` queued behind it) replaces a
/// `go infinite` never told to end just as a searched one does: the
/// infinite search ends without a `bestmove`, so two `go`s with limits
/// get two, both of the position they were sent for (it used to write a
/// third, of the infinite search's position, only when the reader had
/// queued the lines in time: issue 57, point 7).
#[test]
fn an_unsearched_go_replaces_go_infinite_without_a_bestmove() {
    let mut e = Mpcmc::start(&[]);
    e.handshake();
    e.send_bytes(
        b"position startpos\ngo infinite\nposition startpos moves e2e4\ngo nodes 2000\ngo nodes 2000\n",
    );
    let after_e2e4 = position(None, &["e2e4"]);
    let (first, lines) = e.bestmove(10 * SECOND);
    assert_legal(&after_e2e4, &first);
    let (second, more) = e.bestmove(10 * SECOND);
    assert_legal(&after_e2e4, &second);
    e.silent("bestmove", Duration::from_millis(500));
    assert!(e.quit().success(), "{lines:?} {more:?}");
}

/// `Threads` above the machine's cores: the children are held to the
/// cores (more only share them and lose time), said in an `info string`.
#[test]
fn threads_beyond_the_cores_are_held_to_them() {
    let mut e = Mpcmc::start(&["--threads=256"]);
    e.send("uci");
    e.until("uciok", 5 * SECOND);
    // Said when the children start: at `isready`.
    e.send("isready");
    let hello = e.until("readyok", 10 * SECOND);
    e.send("position startpos");
    e.send("go wtime 2000 btime 2000");
    let sent = std::time::Instant::now();
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_legal(&position(None, &[]), &mv);
    assert!(
        hello
            .iter()
            .chain(&lines)
            .any(|l| l.starts_with("info string Threads 256 is more than the")),
        "{hello:?} {lines:?}"
    );
    assert!(sent.elapsed() < 2 * SECOND, "{:?}", sent.elapsed());
    assert!(e.quit().success());
}

#[test]
fn quit_leaves_no_child_process() {
    let mut e = Mpcmc::with_stockfish(&[
        "--threads=2",
        "--child-threads=1",
        "--opponent-options=Skill Level=5",
    ]);
    e.handshake();
    e.send("position startpos");
    e.send("go nodes 20000");
    e.bestmove(20 * SECOND);
    // Two workers, each with an evaluator and a (differently configured) opponent.
    let children = e.children();
    assert_eq!(children.len(), 4, "children: {children:?}");
    e.send("go infinite");
    thread::sleep(Duration::from_millis(300));
    // Quit mid-search.
    assert!(e.quit().success());
    thread::sleep(Duration::from_millis(200));
    let left: Vec<_> = children.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "children still alive: {left:?}");
}

/// What a child starts (a wrapper script's engine, or here a process that
/// ignores its input and every polite signal, as a stuck engine does) is
/// mpcmc's grandchild: it ends with mpcmc however mpcmc is ended — `quit`,
/// SIGTERM, the end of input — even mid-search.
#[test]
fn grandchildren_under_a_wrapper_end_with_mpcmc() {
    for end in ["quit", "sigterm", "eof"] {
        let evaluator = format!(
            "--evaluator=sh -c '(trap \"\" TERM HUP INT; exec sleep 600) & exec {}'",
            common::stockfish()
        );
        let mut e = Mpcmc::start(&[&evaluator]);
        e.handshake();
        e.send("position startpos");
        e.send("go nodes 20000");
        e.bestmove(20 * SECOND);
        let children = e.children();
        let grandchildren: Vec<u32> = children
            .iter()
            .flat_map(|&w| common::children_of(w))
            .collect();
        assert!(
            !grandchildren.is_empty(),
            "{end}: nothing under {children:?}"
        );
        e.send("go infinite");
        thread::sleep(Duration::from_millis(200));
        match end {
            "quit" => e.send("quit"),
            // SAFETY: a signal to the mpcmc this test started.
            "sigterm" => unsafe {
                libc::kill(e.pid() as libc::pid_t, libc::SIGTERM);
            },
            _ => e.close_stdin(),
        }
        e.wait(10 * SECOND);
        let deadline = std::time::Instant::now() + 2 * SECOND;
        while grandchildren.iter().any(|&p| alive(p)) && std::time::Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        let left: Vec<_> = grandchildren.iter().filter(|&&p| alive(p)).collect();
        assert!(
            left.is_empty(),
            "{end}: grandchildren still alive: {left:?}"
        );
    }
}

fn end_of_input_quits(child: ChildKind) {
    let mut e = Mpcmc::over(child, &[]);
    e.handshake();
    e.send("position startpos");
    e.send("go nodes 5000");
    e.bestmove(20 * SECOND);
    let children = e.children();
    assert_eq!(
        children.is_empty(),
        child == ChildKind::Builtin,
        "{children:?}"
    );
    e.close_stdin();
    assert!(e.wait(10 * SECOND).success());
    thread::sleep(Duration::from_millis(200));
    assert!(
        children.iter().all(|p| !alive(*p)),
        "children: {children:?}"
    );
}

#[test]
fn a_broken_evaluator_still_yields_a_legal_move() {
    let mut e = Mpcmc::start(&["--evaluator=/nonexistent/engine"]);
    e.handshake();
    e.send("position startpos moves g1f3");
    e.send("go movetime 300");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_legal(&position(None, &["g1f3"]), &mv);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string") && l.contains("/nonexistent/engine")),
        "{lines:?}"
    );
    assert!(e.quit().success());
}

fn castling_in_both_notations(child: ChildKind) {
    // Standard chess: the GUI writes e1g1; mpcmc answers in the same notation.
    let mut e = Mpcmc::over(child, &["--child-nodes=500"]);
    e.handshake();
    let moves = [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1", "f8c5",
    ];
    e.send(&format!("position startpos moves {}", moves.join(" ")));
    e.send("go");
    let (mv, _) = e.bestmove(10 * SECOND);
    assert_legal(&position(None, &moves), &mv);
    // Black can castle short here; only castling is allowed by searchmoves.
    let moves = ["e2e4", "e7e5", "g1f3", "g8f6", "f1c4", "f8c5", "d2d3"];
    e.send(&format!("position startpos moves {}", moves.join(" ")));
    e.send("go searchmoves e8g8");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_eq!(mv, "e8g8");
    assert!(
        lines.iter().any(|l| l.contains(" 1/1 candidates")),
        "{lines:?}"
    );
    assert!(e.quit().success());

    // Chess960: king-takes-rook, to the GUI and to the children.
    let mut e = Mpcmc::over(child, &["--child-nodes=500", "--uci-chess960"]);
    e.handshake();
    // King on f1 between rooks on b1 and g1; short castling is f1g1 (king takes rook).
    let fen = "1r3kr1/pppppppp/8/8/8/8/PPPPPPPP/1R3KR1 w GBgb - 0 1";
    e.send(&format!("position fen {fen} moves g2g3 g7g6 f2f4 f7f5"));
    e.send("go searchmoves f1g1");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_eq!(mv, "f1g1", "{lines:?}");
    // The children understood the line: the lookahead finished its candidate.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("rule lookahead:") || l.contains("rule fortified:")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains(" 1/1 candidates")),
        "{lines:?}"
    );
    assert!(e.quit().success());
}

fn a_fixed_budget_is_cut_before_the_flag_with_a_real_move(child: ChildKind) {
    // 200k nodes a call cannot finish on a 1 s clock: the flag guard cuts the
    // pass, and the evaluator's root search (served first) names the move.
    let mut e = Mpcmc::over(child, &["--child-nodes=200000"]);
    e.handshake();
    e.send("position startpos moves e2e4");
    let sent = Instant::now();
    e.send("go wtime 1000 btime 1000");
    let (mv, lines) = e.bestmove(5 * SECOND);
    // Before the flag.
    assert!(sent.elapsed() < SECOND, "took {:?}", sent.elapsed());
    assert_legal(&position(None, &["e2e4"]), &mv);
    assert!(
        !lines.iter().any(|l| l.contains("no child answered")),
        "{lines:?}"
    );
    // The last info line is the decision played.
    let info = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .expect("info");
    assert!(info.contains(&format!(" pv {mv}")), "{info} vs {mv}");

    // Pondering with the same budget: the clock starts at ponderhit.
    e.send("position startpos moves e2e4 e7e5");
    e.send("go ponder wtime 1000 btime 1000");
    e.silent("bestmove", Duration::from_millis(300));
    let hit = Instant::now();
    e.send("ponderhit");
    let (mv, _) = e.bestmove(5 * SECOND);
    // Before the flag.
    assert!(hit.elapsed() < SECOND, "took {:?}", hit.elapsed());
    assert_legal(&position(None, &["e2e4", "e7e5"]), &mv);
    assert!(e.quit().success());
}

#[test]
fn infinite_over_broken_children_waits_quietly() {
    let mut e = Mpcmc::start(&["--evaluator=/nonexistent/engine"]);
    e.handshake();
    e.send("position startpos");
    e.send("go infinite");
    thread::sleep(SECOND);
    e.send("stop");
    let (mv, lines) = e.bestmove(5 * SECOND);
    assert_legal(&Chess::default(), &mv);
    assert!(
        lines.len() < 200,
        "{} lines in a second: it spins",
        lines.len()
    );
    assert!(e.quit().success());
}

/// The nominal opponent's predicted reply to each move played is counted
/// against the reply the game goes on with, per game; a pondered reply
/// counts once `ponderhit` says it was played.
fn the_nominal_opponents_hit_rate_is_counted(child: ChildKind) {
    // One pass: every root move has its predicted reply, sent as `ponder`.
    let mut e = Mpcmc::over(child, &["--child-nodes=300"]);
    e.handshake();
    e.send("ucinewgame");
    let mut moves: Vec<String> = Vec::new();
    let said = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l.contains("nominal opponent predicted"))
            .cloned()
            .collect()
    };
    let go = |e: &mut Mpcmc, moves: &[String], go: &str| {
        e.send(&format!("position startpos moves {}", moves.join(" ")));
        e.send(go);
        if go.contains("ponder") {
            e.silent("bestmove", Duration::from_millis(300));
            e.send("ponderhit");
        }
        let (mv, lines) = e.bestmove(10 * SECOND);
        let last = lines.last().cloned().unwrap_or_default();
        let words: Vec<&str> = last.split_whitespace().collect();
        assert_eq!(words.get(2), Some(&"ponder"), "{last}");
        (mv, words[3].to_owned(), lines)
    };
    // The first move has nothing to count.
    let (m1, p1, lines) = go(&mut e, &moves, "go");
    assert!(said(&lines).is_empty(), "{lines:?}");
    // The predicted reply.
    moves.extend([m1, p1]);
    let (m2, p2, lines) = go(&mut e, &moves, "go");
    assert_eq!(said(&lines).len(), 1, "{lines:?}");
    assert!(said(&lines)[0].ends_with("predicted 1 of 1 replies this game (100 %)"));
    // Another reply.
    let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
    let mut after = position(None, &refs);
    after.play_unchecked(assert_legal(&after, &m2));
    let other = after
        .legal_moves()
        .into_iter()
        .map(|m| shakmaty::uci::UciMove::from_standard(m).to_string())
        .find(|m| *m != p2)
        .expect("a second legal reply");
    moves.extend([m2, other]);
    let (m3, p3, lines) = go(&mut e, &moves, "go");
    assert_eq!(said(&lines).len(), 1, "{lines:?}");
    assert!(said(&lines)[0].ends_with("predicted 1 of 2 replies this game (50 %)"));
    // Pondered on the predicted reply, then played.
    moves.extend([m3, p3]);
    let (m4, p4, lines) = go(&mut e, &moves, "go ponder wtime 60000 btime 60000");
    assert_eq!(said(&lines).len(), 1, "{lines:?}");
    assert!(said(&lines)[0].ends_with("predicted 2 of 3 replies this game (67 %)"));
    // A new game counts afresh: the position the last seed predicted
    // counts nothing after `ucinewgame`.
    e.send("ucinewgame");
    moves.extend([m4, p4]);
    let (_, _, lines) = go(&mut e, &moves, "go");
    assert!(said(&lines).is_empty(), "{lines:?}");
    let (m1, p1, _) = go(&mut e, &[], "go");
    let (_, _, lines) = go(&mut e, &[m1, p1], "go");
    assert_eq!(said(&lines).len(), 1, "{lines:?}");
    assert!(said(&lines)[0].ends_with("predicted 1 of 1 replies this game (100 %)"));
    // A search still running at `ucinewgame` seeds nothing in the new game.
    e.send("position startpos");
    e.send("go infinite");
    e.silent("bestmove", Duration::from_millis(300));
    e.send("ucinewgame");
    e.send("stop");
    let (m1, lines) = e.bestmove(10 * SECOND);
    let last = lines.last().cloned().unwrap_or_default();
    let p1 = last
        .split_whitespace()
        .nth(3)
        .expect("a ponder move")
        .to_owned();
    let (_, _, lines) = go(&mut e, &[m1, p1], "go");
    assert!(said(&lines).is_empty(), "{lines:?}");
    assert!(e.quit().success());
}

/// `MultiPV` 3: the decision's last `info` lines show three root moves,
/// `multipv 1` the move played, then the others best first.
fn multipv_shows_the_best_root_moves(child: ChildKind) {
    let mut e = Mpcmc::over(child, &[]);
    e.handshake();
    e.send("setoption name MultiPV value 3");
    // Under a move time with one worker too (the evaluator alone would
    // value one move).
    for go in ["go depth 3", "go movetime 4000"] {
        e.send("position startpos moves e2e4");
        e.send(go);
        let (mv, lines) = e.bestmove(20 * SECOND);
        let infos: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with("info depth"))
            .collect();
        assert!(infos.len() >= 3, "{lines:?}");
        let last = &infos[infos.len() - 3..];
        let field = |l: &str, name: &str| -> String {
            let words: Vec<&str> = l.split_whitespace().collect();
            let at = words.iter().position(|w| *w == name).expect(name);
            words[at + 1..].join(" ")
        };
        let mut firsts = Vec::new();
        for (k, l) in last.iter().enumerate() {
            assert!(
                field(l, "multipv").starts_with(&format!("{} ", k + 1)),
                "{l}"
            );
            assert!(l.contains(" score "), "{l}");
            let pv = field(l, "pv");
            let first = pv.split(' ').next().expect("a pv").to_owned();
            assert_legal(&position(None, &["e2e4"]), &first);
            firsts.push(first);
        }
        assert_eq!(firsts[0], mv, "{last:?}");
        assert!(
            firsts[1] != firsts[2] && !firsts[1..].contains(&mv),
            "{firsts:?}"
        );
        let cp = |l: &str| {
            let score = field(l, "score");
            score
                .strip_prefix("cp ")?
                .split(' ')
                .next()?
                .parse::<i32>()
                .ok()
        };
        if let (Some(second), Some(third)) = (cp(last[1]), cp(last[2])) {
            assert!(second >= third, "{last:?}");
        }
    }
    assert!(e.quit().success());
}

/// With one worker on a game clock the decision is the evaluator's own
/// search: the GUI sees its iterations as they complete, as from the child
/// alone, then the decision's line and the move.
fn one_worker_on_a_clock_shows_the_childs_iterations(child: ChildKind) {
    let mut e = Mpcmc::over(child, &["--threads=1"]);
    e.handshake();
    e.send("position startpos moves e2e4 e7e5");
    e.send("go wtime 20000 btime 20000 winc 200 binc 200");
    let (mv, lines) = e.bestmove(10 * SECOND);
    let pos = position(None, &["e2e4", "e7e5"]);
    assert_legal(&pos, &mv);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string rule one_worker")),
        "{lines:?}"
    );
    let iterations: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("info depth "))
        .collect();
    // Several iterations before the decision's own last line.
    assert!(iterations.len() >= 4, "{lines:?}");
    let depths = info_depths(&lines);
    assert_eq!(depths.len(), iterations.len(), "{lines:?}");
    assert!(depths.is_sorted(), "{depths:?}");
    for line in &iterations {
        assert!(
            line.contains(" score ") && line.contains(" nodes "),
            "{line}"
        );
        let first = line
            .split(" pv ")
            .nth(1)
            .and_then(|pv| pv.split(' ').next());
        assert_legal(&pos, first.expect("a pv"));
    }
    let last = iterations.last().expect("a line");
    assert!(last.contains(&format!(" pv {mv}")), "{last}");
    assert!(e.quit().success());
}

/// With rounds (`go nodes`, a total), each round's `info` lines show the
/// `MultiPV` best of every move valued so far, though later rounds
/// re-search only the contenders.
fn multipv_rounds_show_every_move_valued_so_far(child: ChildKind) {
    let mut e = Mpcmc::over(child, &[]);
    e.handshake();
    e.send("setoption name MultiPV value 6");
    e.send("position startpos moves e2e4");
    e.send("go nodes 400000");
    let (_, lines) = e.bestmove(60 * SECOND);
    // (depth, multipv, centipawns) of every line that has a multipv.
    let shown: Vec<(u32, u32, Option<i32>)> = lines
        .iter()
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let after = |name: &str| words.get(words.iter().position(|w| *w == name)? + 1);
            let number = |name: &str| after(name)?.parse::<u32>().ok();
            let cp = (after("score") == Some(&"cp"))
                .then(|| after("cp")?.parse::<i32>().ok())
                .flatten();
            Some((number("depth")?, number("multipv")?, cp))
        })
        .collect();
    let rounds = shown.iter().filter(|(_, k, _)| *k == 1).count();
    // Several rounds, then the decision's own lines.
    assert!(rounds >= 3, "{lines:?}");
    assert_eq!(shown.len(), rounds * 6, "{lines:?}");
    for group in shown.chunks(6) {
        let ks: Vec<u32> = group.iter().map(|(_, k, _)| *k).collect();
        assert_eq!(ks, [1, 2, 3, 4, 5, 6], "{lines:?}");
        // The other moves best first.
        let cps: Vec<i32> = group[1..].iter().filter_map(|(_, _, cp)| *cp).collect();
        assert!(cps.is_sorted_by(|a, b| a >= b), "{group:?}");
    }
    assert!(e.quit().success());
}

/// Each test above, over each kind of child engine.
macro_rules! over_each_child {
    ($($name:ident),* $(,)?) => {
        mod over_stockfish {
            $( #[test] fn $name() { super::$name(super::ChildKind::Stockfish) } )*
        }
        mod over_builtin {
            $( #[test] fn $name() { super::$name(super::ChildKind::Builtin) } )*
        }
    };
}

over_each_child!(
    handshake_lists_every_option,
    movetime_answers_a_legal_move_in_time,
    never_loses_on_time_at_one_second_plus_ten_ms,
    never_loses_on_time_at_ten_moves_in_one_second,
    infinite_waits_for_stop_and_isready_is_answered_mid_search,
    a_new_go_replaces_a_search_never_told_to_end,
    ponder_answers_after_ponderhit,
    ponderhit_continues_the_rounds,
    finished_root_answers_none,
    an_exact_analysis_is_printed_once,
    finds_a_mate_in_one,
    bad_input_is_survived,
    searchmoves_restricts_the_candidates,
    end_of_input_quits,
    castling_in_both_notations,
    a_fixed_budget_is_cut_before_the_flag_with_a_real_move,
    the_nominal_opponents_hit_rate_is_counted,
    multipv_shows_the_best_root_moves,
    multipv_rounds_show_every_move_valued_so_far,
    one_worker_on_a_clock_shows_the_childs_iterations,
);

/// `Clear Hash` is a button (sent with no value, as GUIs send buttons):
/// the children forget before their next search — an external child is
/// sent `ucinewgame` — and the paper's memoryless mode is its own check
/// box, `Memoryless`; the old name is refused with a line.
#[test]
fn clear_hash_is_a_button_and_memoryless_a_setting() {
    let log = std::env::temp_dir().join(format!("mpcmc-clear-hash-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let child = common::sh_engine(
        "",
        "echo \"info depth 1 score cp 10 pv e2e4\"; echo \"bestmove e2e4\"",
        Some(&log),
        "clear-hash-child",
    );
    let evaluator = format!("--evaluator={child}");
    // One worker on a move time: the evaluator's root search alone (the
    // child answers e2e4 whatever the position).
    let mut e = Mpcmc::start(&[&evaluator]);
    let declared = e.handshake();
    assert!(
        declared
            .iter()
            .any(|l| l == "option name Clear Hash type button")
    );
    assert!(
        declared
            .iter()
            .any(|l| l.starts_with("option name Memoryless type check default false"))
    );
    let searches = |e: &mut Mpcmc| {
        e.send("position startpos");
        e.send("go movetime 300");
        let (mv, lines) = e.bestmove(20 * SECOND);
        assert_eq!(mv, "e2e4", "{lines:?}");
    };
    searches(&mut e);
    let heard = || std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!heard().contains("ucinewgame"), "{}", heard());
    e.send("setoption name Clear Hash");
    e.send("setoption name ClearHash value true");
    let refused = e.until("info string", 5 * SECOND);
    assert!(
        refused
            .last()
            .is_some_and(|l| l.contains("unknown option 'ClearHash'")),
        "{refused:?}"
    );
    searches(&mut e);
    let lines = heard();
    let clear = lines
        .find("ucinewgame")
        .unwrap_or_else(|| panic!("the child was told to forget: {lines}"));
    assert!(
        lines[clear..].contains("go "),
        "before its next search: {lines}"
    );
    assert!(e.quit().success());
    let _ = std::fs::remove_file(&log);
}

/// `--help` says what each flag means, its default and range, from the
/// option table's documentation, and that no command runs the engine (it
/// said "Sets the UCI option X before any setoption" for every flag).
#[test]
fn help_tells_each_flag_its_meaning_default_and_range() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mpcmc"))
        .arg("--help")
        .output()
        .expect("mpcmc --help");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{help}");
    let line = |flag: &str| -> String {
        help.lines()
            .find(|l| l.trim_start().starts_with(flag))
            .unwrap_or_else(|| panic!("no {flag} in {help}"))
            .to_owned()
    };
    let threads = line("--threads");
    assert!(
        threads.contains("Cores for the children") && threads.contains("Default 1; 1–256."),
        "{threads}"
    );
    assert!(line("--uci-elo").contains("Default 1500; 600–2800."));
    assert!(!help.contains("before any setoption"), "{help}");
    assert!(
        help.contains("With no command, mpcmc runs as a UCI engine"),
        "{help}"
    );
    // A button is an action, not a flag.
    assert!(!help.contains("--clear-hash"), "{help}");
}

/// `mpcmc engine` refuses the meta-engine's flags it would ignore (it
/// listed and silently accepted `--lookahead`, `--evaluator`, …) and takes
/// its own.
#[test]
fn the_engine_alone_refuses_the_meta_engines_flags() {
    let run = |flags: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mpcmc"))
            .args(flags)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("mpcmc runs")
    };
    let refused = run(&["engine", "--lookahead=two"]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("--lookahead is an option of the meta-engine"),
        "{said}"
    );
    let taken = run(&["engine", "--threads=1", "--hash=8"]);
    assert!(
        taken.status.success(),
        "{}",
        String::from_utf8_lossy(&taken.stderr)
    );
}
