//! What a GUI sees of mpcmc's thinking, with the options a GUI sends by
//! default (issue 33): one story per `go` — `depth`, `nodes` and `time`
//! never go down, the last line before `bestmove` is the move played, a
//! `MultiPV` report is one set at one depth with the move played on top —
//! and no diagnostics on the thinking pane.

mod common;

use common::{ChildKind, Mpcmc, SECOND, assert_legal, position};
use mpcmc_protocol::{EngineLine, Info, ScoreKind, UciScore, parse_engine_line};

/// A score on one scale: mates beyond every centipawn score.
fn order(s: &UciScore) -> i64 {
    match s.kind {
        ScoreKind::Mate(m) if m > 0 => 1_000_000 - i64::from(m),
        ScoreKind::Mate(m) => -1_000_000 - i64::from(m),
        ScoreKind::Cp(cp) => i64::from(cp),
    }
}

/// The `info` lines of one `go`'s output that `keep` keeps.
fn infos(lines: &[String], keep: impl Fn(&Info) -> bool) -> Vec<Info> {
    lines
        .iter()
        .filter_map(|l| match parse_engine_line(l) {
            Ok(EngineLine::Info(i)) if keep(&i) => Some(i),
            _ => None,
        })
        .collect()
}

/// The thinking lines (an `info` with a `pv`) of one `go`'s output.
fn thinking(lines: &[String]) -> Vec<Info> {
    infos(lines, |i| !i.pv.is_empty())
}

/// Asserts one consistent story over the lines of one `go` that answered
/// `best`.
fn assert_one_story(lines: &[String], best: &str) {
    let infos = thinking(lines);
    assert!(!infos.is_empty(), "no thinking line: {lines:#?}");
    for w in infos.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(b.depth >= a.depth, "depth went down: {a} then {b}");
        assert!(b.nodes >= a.nodes, "nodes went down: {a} then {b}");
        assert!(b.time >= a.time, "time went down: {a} then {b}");
    }
    // The last set: from its `multipv 1` line (or the last line).
    let start = infos
        .iter()
        .rposition(|i| i.multipv.is_none_or(|k| k == 1))
        .expect("a first line");
    let set = &infos[start..];
    assert_eq!(
        set[0].pv[0].to_string(),
        best,
        "the last report is not the move played: {lines:#?}"
    );
    let top = set[0].score.as_ref().map(order);
    for (k, line) in set.iter().enumerate() {
        if k > 0 {
            assert_eq!(line.multipv, Some(k as u32 + 1), "{set:#?}");
        }
        assert_eq!(line.depth, set[0].depth, "one set, one depth: {set:#?}");
        if let (Some(top), Some(s)) = (top, line.score.as_ref()) {
            assert!(order(s) <= top, "a line above the move played: {set:#?}");
        }
    }
    // Diagnostics stay off the pane by default.
    for l in lines.iter().filter(|l| l.starts_with("info string")) {
        assert!(!l.contains("rule "), "a decision's detail shown: {l}");
    }
}

fn stories(child: ChildKind, flags: &[&str], gos: &[&str]) {
    let mut all = vec!["--show-decisions=false"];
    all.extend_from_slice(flags);
    let mut e = Mpcmc::over(child, &all);
    e.handshake();
    let moves = [
        "e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4", "g8f6",
    ];
    for go in gos {
        e.send(&format!("position startpos moves {}", moves.join(" ")));
        e.send(go);
        let (mv, lines) = e.bestmove(30 * SECOND);
        assert_legal(&position(None, &moves), &mv);
        assert_one_story(&lines, &mv);
    }
    assert!(e.quit().success());
}

const GOS: [&str; 3] = [
    "go wtime 6500 btime 15000 winc 1000 binc 1000",
    "go movetime 700",
    "go nodes 60000",
];

#[test]
fn one_story_with_rounds_over_the_builtin_engine() {
    let two = ["--threads=2", "--child-threads=1"];
    stories(ChildKind::Builtin, &two, &GOS);
    stories(
        ChildKind::Builtin,
        &[&two[..], &["--multi-pv=3"]].concat(),
        &GOS,
    );
}

#[test]
fn one_story_with_rounds_over_stockfish() {
    let flags = ["--threads=2", "--child-threads=1", "--multi-pv=3"];
    stories(ChildKind::Stockfish, &flags, &GOS);
}

#[test]
fn one_story_from_one_worker() {
    // The evaluator's own search decides on a clock (its iterations
    // relayed); a fixed budget runs a pass.
    stories(ChildKind::Stockfish, &[], &GOS);
    stories(ChildKind::Builtin, &["--multi-pv=2"], &GOS);
}

/// `MultiPV` when the root search alone decides (one worker on a clock or
/// a move time, or too little time for a lookahead): the child is asked
/// for the lines and the GUI gets them, as from the child alone. (One
/// line came, the child's first: `go movetime 1000` with `MultiPV` 3 over
/// the defaults.)
#[test]
fn multipv_lines_come_from_the_root_search_when_it_decides_alone() {
    for child in [ChildKind::Builtin, ChildKind::Stockfish] {
        let mut e = Mpcmc::over(child, &["--show-decisions=false", "--multi-pv=3"]);
        e.handshake();
        for go in [
            "go movetime 1000",
            "go wtime 20000 btime 20000 winc 100 binc 100",
        ] {
            e.send("position startpos moves e2e4");
            e.send(go);
            let (mv, lines) = e.bestmove(30 * SECOND);
            assert_legal(&position(None, &["e2e4"]), &mv);
            assert_one_story(&lines, &mv);
            let infos = thinking(&lines);
            let full = infos.windows(3).any(|w| {
                (w[0].multipv, w[1].multipv, w[2].multipv) == (Some(1), Some(2), Some(3))
                    && w[0].depth == w[2].depth
                    && w[0].pv[0] != w[1].pv[0]
                    && w[1].pv[0] != w[2].pv[0]
                    && w[0].pv[0] != w[2].pv[0]
            });
            assert!(full, "{child:?} {go}: no set of three lines: {lines:#?}");
        }
        assert!(e.quit().success());
    }
}

/// In analysis a pass can run for a minute: the GUI still hears of the
/// work at least every second (`info nodes … time …`, no line of moves),
/// the counts never going down. (Nothing came for over a minute in
/// XBoard's analysis; its clock looked frozen.)
#[test]
fn analysis_says_its_work_at_least_every_second() {
    let mut e = Mpcmc::over(ChildKind::Builtin, &["--show-decisions=false"]);
    e.handshake();
    e.send("position startpos moves e2e4 e7e5");
    e.send("go infinite");
    std::thread::sleep(std::time::Duration::from_secs(6));
    e.send("stop");
    let (_, lines) = e.bestmove(10 * SECOND);
    let counted = infos(&lines, |i| i.nodes.is_some());
    let pulses = counted.iter().filter(|i| i.pv.is_empty()).count();
    assert!(pulses > 0, "no pulse: {lines:#?}");
    for i in counted.iter().filter(|i| i.pv.is_empty()) {
        assert!(i.depth.is_none() && i.score.is_none(), "{i}");
    }
    // Gaps by the engine's own `time`: none above a second and a quarter
    // (the pulse is looked at four times a second), more only when the
    // machine is busy.
    let slack = if common::machine_busy() { 1000 } else { 0 };
    let mut last = (0, 0);
    for i in &counted {
        let (time, nodes) = (i.time.expect("time"), i.nodes.expect("nodes"));
        assert!(
            time - last.0 <= 1250 + slack,
            "{} ms without a count: {lines:#?}",
            time - last.0
        );
        assert!(nodes >= last.1, "nodes went down: {i}");
        last = (time, nodes);
    }
    assert!(e.quit().success());
}

#[test]
fn one_story_in_analysis() {
    for flags in [
        &["--threads=1"][..],
        &["--threads=2", "--child-threads=1", "--multi-pv=3"],
    ] {
        let mut all = vec!["--show-decisions=false"];
        all.extend_from_slice(flags);
        let mut e = Mpcmc::over(ChildKind::Builtin, &all);
        e.handshake();
        e.send("position startpos moves e2e4 e7e5");
        e.send("go infinite");
        std::thread::sleep(std::time::Duration::from_millis(1500));
        e.send("stop");
        let (mv, lines) = e.bestmove(10 * SECOND);
        assert_legal(&position(None, &["e2e4", "e7e5"]), &mv);
        assert_one_story(&lines, &mv);
        assert!(e.quit().success());
    }
}

/// A GUI's view through real GUI software: Debian's Polyglot, the UCI to
/// xboard adapter of XBoard and many Arena setups, in front of mpcmc with
/// the setup of the report (two workers, two-step lookahead,
/// MultiPV 3). Every thinking line it makes of mpcmc's output is a real
/// one: a move first in its line, a node count (no `+0.00`/0-node line
/// made from a diagnostic), depths that never go down within a search.
#[test]
fn polyglot_makes_only_real_thinking_lines() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    const POLYGLOT: &str = "/usr/games/polyglot";
    assert!(
        std::path::Path::new(POLYGLOT).is_file(),
        "this test needs Debian's polyglot: apt-get install -y polyglot"
    );
    let engine = format!(
        "{} --threads=2 --child-threads=1 --lookahead=two --multi-pv=3",
        env!("CARGO_BIN_EXE_mpcmc")
    );
    let dir = std::env::temp_dir().join(format!("mpcmc-polyglot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let mut p = Command::new(POLYGLOT)
        .args(["-noini", "-ec", &engine, "-ed"])
        .arg(&dir)
        // Polyglot keeps its settings file under $HOME.
        .env("HOME", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("polyglot starts");
    let mut stdin = p.stdin.take().expect("stdin");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stdout = p.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |s: &str| {
        writeln!(stdin, "{s}").expect("polyglot reads");
        stdin.flush().expect("flush");
    };
    // Lines until one starts with `prefix` (or `wait` passes, when
    // `prefix` is empty).
    let read = |prefix: &str, wait: Duration| -> Vec<String> {
        let end = Instant::now() + wait;
        let mut seen = Vec::new();
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(l) => {
                    let done = !prefix.is_empty() && l.starts_with(prefix);
                    seen.push(l);
                    if done {
                        return seen;
                    }
                }
                Err(_) => break,
            }
        }
        assert!(
            prefix.is_empty(),
            "no '{prefix}' within {wait:?}: {seen:#?}"
        );
        seen
    };
    send("xboard");
    send("protover 2");
    read("feature done=1", 20 * SECOND);
    // A move of a game, then the analysis of the position after it.
    send("new");
    send("post");
    send("st 2");
    send("go");
    let game = read("move ", 30 * SECOND);
    send("force");
    send("analyze");
    // Until a few lines came (the first round of a two-step lookahead
    // over every move takes seconds on a loaded machine), at most 60 s.
    let mut analysis = Vec::new();
    let since = Instant::now();
    while analysis
        .iter()
        .filter(|l: &&String| l.starts_with(char::is_numeric))
        .count()
        < 3
        && since.elapsed() < 60 * SECOND
    {
        analysis.extend(read("", SECOND));
    }
    send("exit");
    send("quit");
    let _ = p.wait();
    let _ = std::fs::remove_dir_all(&dir);
    for (what, lines) in [("game", &game), ("analysis", &analysis)] {
        // `ply score time nodes pv…`
        let thinking: Vec<(u32, u64, String)> = lines
            .iter()
            .filter_map(|l| {
                let f: Vec<&str> = l.splitn(5, ' ').collect();
                let [ply, score, _, nodes, pv] = f[..] else {
                    return None;
                };
                score.parse::<i32>().ok()?;
                Some((ply.parse().ok()?, nodes.parse().ok()?, pv.to_owned()))
            })
            .collect();
        assert!(!thinking.is_empty(), "{what}: no thinking line: {lines:#?}");
        for (ply, nodes, pv) in &thinking {
            let first = pv.split(' ').next().unwrap_or_default();
            // SAN: every move names a square, but castling.
            let is_move = first.contains(|c: char| c.is_ascii_digit()) || first.starts_with("O-O");
            assert!(
                is_move,
                "{what}: a line that is not a line of moves: {ply} {nodes} {pv}"
            );
            assert!(
                *nodes > 1,
                "{what}: a line with no nodes: {ply} {nodes} {pv}"
            );
        }
        for w in thinking.windows(2) {
            assert!(w[1].0 >= w[0].0, "{what}: depth went down: {w:?}");
        }
    }
}

/// The line that decided carries what its search said besides depth and
/// score: `seldepth`, `hashfull`, and over Stockfish with `UCI_ShowWDL`
/// the `wdl` (issue 33, point 7).
#[test]
fn the_deciding_line_carries_seldepth_hashfull_and_wdl() {
    for (child, flags, wdl) in [
        (ChildKind::Stockfish, vec!["--uci-show-wdl=true"], true),
        (
            ChildKind::Stockfish,
            vec!["--uci-show-wdl=true", "--threads=2", "--child-threads=1"],
            true,
        ),
        (
            ChildKind::Builtin,
            vec!["--threads=2", "--child-threads=1"],
            false,
        ),
    ] {
        let mut e = Mpcmc::over(child, &flags);
        e.handshake();
        for go in ["go depth 10", "go nodes 40000"] {
            e.send("position startpos moves e2e4");
            e.send(go);
            let (mv, lines) = e.bestmove(30 * SECOND);
            let last = thinking(&lines).pop().expect("a thinking line");
            assert_eq!(last.pv[0].to_string(), mv);
            assert!(
                last.seldepth.is_some_and(|s| Some(s) >= last.depth),
                "{flags:?} {go}: {last}"
            );
            assert!(last.hashfull.is_some(), "{flags:?} {go}: {last}");
            assert_eq!(last.wdl.is_some(), wdl, "{flags:?} {go}: {last}");
        }
        assert!(e.quit().success());
    }
}
