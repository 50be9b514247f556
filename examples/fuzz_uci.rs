//! Fuzzes a UCI engine as a careless GUI would: a seeded stream of GUI lines,
//! valid, mutated and garbage (invalid UTF-8, control characters, CRLF, 1 MB
//! lines, every option with odd values, searches started and cut at random),
//! with an `isready` checkpoint every `--every` lines that must be answered.
//! At the end a clean `position` + `go` must give a legal move, and `quit`
//! must end the engine and its children.
//!
//! ```sh
//! cargo build --release
//! cargo run --release --example fuzz_uci -- --lines 1000000
//! cargo run --release --example fuzz_uci -- --lines 1000000 -- engine
//! ```
//!
//! `--transcript FILE` keeps every line the engine wrote, timed.
//! Run it from a scratch directory: a GUI may legitimately name a log file,
//! and a mutated line may too. Arguments after `--` go to the engine (`target/release/mpcmc` unless
//! `--bin`). Exits non-zero on any violation: the engine died, a checkpoint
//! went unanswered within 20 s, a line on stdout that is not UCI or holds a
//! control character, an illegal or missing final move, a child left behind.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Command, ExitCode, Stdio},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
        mpsc,
    },
    thread,
    time::{Duration, Instant},
};

use mpcmc::uci::options::names;
use shakmaty::{Chess, Position, uci::UciMove};

/// xorshift64*: reproducible from `--seed`, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Every option mpcmc declares, and one it does not.
fn option_names() -> Vec<&'static str> {
    names().chain(["MultiPV"]).collect()
}

/// A legal game from the start: its moves in UCI, and its FEN.
fn random_game(rng: &mut Rng, plies: u64) -> (Vec<String>, String) {
    let mut pos = Chess::default();
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[rng.below(legal.len() as u64) as usize];
        moves.push(UciMove::from_standard(m).to_string());
        pos.play_unchecked(m);
    }
    let fen = shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal);
    (moves, fen.to_string())
}

fn option_value(rng: &mut Rng, name: &str) -> String {
    // Never a real path: the fuzz must not litter the disk.
    if name == "LogFile" {
        return "<empty>".to_string();
    }
    let odd = [
        "<empty>",
        "",
        "-1",
        "0",
        "1",
        "true",
        "false",
        "99999999999",
        "x",
        "é",
        "  ",
    ];
    if rng.chance(300) {
        return rng.pick(&odd).to_string();
    }
    match name {
        "Evaluator" | "Opponent" => {
            rng.pick(&[
                "builtin",
                "builtin",
                "/nonexistent/engine",
                "<empty>",
                "'unclosed",
            ])
        }
        .to_string(),
        "EvaluatorOptions" | "OpponentOptions" => {
            { rng.pick(&["Hash=4", "<empty>", "Skill Level=3;Hash=2", "bad", ";;="]) }.to_string()
        }
        "Threads" => (1 + rng.below(3)).to_string(),
        "Hash" => (1 + rng.below(32)).to_string(),
        "Lookahead" => rng.pick(&["half", "one", "two"]).to_string(),
        "Fortify" | "Memoryless" | "Ponder" | "UCI_Chess960" => {
            rng.pick(&["true", "false"]).to_string()
        }
        "FortifyMargin" => (rng.below(200) as i64 - 100).to_string(),
        "ChildNodes" => rng.pick(&["0", "0", "50", "300", "2000"]).to_string(),
        "ChildMoveTime" => rng.pick(&["0", "0", "1", "5"]).to_string(),
        "MoveOverhead" => rng.below(100).to_string(),
        _ => rng.below(10).to_string(),
    }
}

fn go_line(rng: &mut Rng) -> String {
    let mut go = String::from("go");
    match rng.below(12) {
        0 => go.push_str(&format!(" nodes {}", rng.below(5000))),
        1 => go.push_str(&format!(" depth {}", rng.below(5))),
        2 => go.push_str(&format!(" movetime {}", rng.below(60))),
        3 => {
            let (w, b) = (rng.below(3000) as i64 - 100, rng.below(3000) as i64 - 100);
            go.push_str(&format!(
                " wtime {w} btime {b} winc {} binc {}",
                rng.below(50),
                rng.below(50)
            ));
            if rng.chance(300) {
                go.push_str(&format!(" movestogo {}", rng.below(40)));
            }
        }
        4 => go.push_str(" infinite"),
        5 => go.push_str(&format!(
            " ponder wtime {} btime {}",
            rng.below(2000),
            rng.below(2000)
        )),
        6 => go.push_str(&format!(" mate {}", rng.below(4))),
        7 => go.push_str(" searchmoves e2e4 d2d4 a1a1"),
        8 => {}
        _ => go.push_str(&format!(" nodes {}", 1 + rng.below(800))),
    }
    go
}

/// One GUI line: valid, or a valid one mutated, or garbage. Bytes, since
/// some are not UTF-8. `false` in the flag: not to be counted as a command.
fn gui_line(rng: &mut Rng) -> Vec<u8> {
    let line = match rng.below(100) {
        0..=14 => {
            let plies = rng.below(240);
            let (moves, _) = random_game(rng, plies);
            if moves.is_empty() {
                "position startpos".to_owned()
            } else {
                format!("position startpos moves {}", moves.join(" "))
            }
        }
        15..=24 => {
            let plies = rng.below(80);
            let (_, fen) = random_game(rng, plies);
            format!("position fen {fen}")
        }
        25..=29 => go_line(rng),
        30..=37 => "stop".to_owned(),
        38..=40 => "ponderhit".to_owned(),
        41..=55 => {
            let name = *rng.pick(&option_names());
            if rng.chance(100) {
                format!("setoption name {name}")
            } else {
                format!("setoption name {name} value {}", option_value(rng, name))
            }
        }
        56..=60 => rng
            .pick(&[
                "uci",
                "ucinewgame",
                "debug on",
                "debug off",
                "register later",
                "xboard",
                "protover 2",
            ])
            .to_string(),
        61..=64 => "isready".to_owned(),
        65..=69 => {
            // Well-formed words, wrong order.
            let words = [
                "position",
                "fen",
                "startpos",
                "moves",
                "go",
                "e2e4",
                "name",
                "value",
                "setoption",
                "-5",
                "depth",
                "nodes",
                "infinite",
            ];
            let n = 1 + rng.below(8);
            (0..n)
                .map(|_| *rng.pick(&words))
                .collect::<Vec<_>>()
                .join(" ")
        }
        _ => {
            // A valid line, mutated below.
            let base = match rng.below(4) {
                0 => go_line(rng),
                1 => "position startpos moves e2e4 e7e5 g1f3".to_owned(),
                // Not `LogFile`: a mutated value would name a file.
                2 => {
                    let names: Vec<&str> = names().filter(|n| *n != "LogFile").collect();
                    format!("setoption name {} value 3", rng.pick(&names))
                }
                _ => "position fen rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
                    .to_owned(),
            };
            return mutate(rng, base.into_bytes());
        }
    };
    let mut bytes = line.into_bytes();
    if rng.chance(50) {
        bytes.push(b'\r');
    }
    bytes
}

fn mutate(rng: &mut Rng, mut bytes: Vec<u8>) -> Vec<u8> {
    let nasty: [&[u8]; 8] = [
        b"\0",
        b"\x1b[31m",
        b"\xff\xfe",
        b"\t",
        b"\r",
        b"\x07",
        "é".as_bytes(),
        b"\xc3",
    ];
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len() as u64 + 1) as usize;
        match rng.below(4) {
            0 => {
                let n = *rng.pick(&nasty);
                bytes.splice(at..at, n.iter().copied());
            }
            1 if at < bytes.len() => {
                bytes.remove(at);
            }
            2 => bytes.insert(at, rng.below(256) as u8),
            _ => {
                let b = b' ';
                bytes.insert(at, b);
            }
        }
    }
    bytes.retain(|&b| b != b'\n');
    if rng.chance(2) {
        // Rarely, a 1 MB line.
        bytes.extend(std::iter::repeat_n(b'x', 1 << 20));
    }
    bytes
}

/// What the engine wrote, as the checks need it.
#[derive(Default)]
struct Seen {
    readyok: AtomicU64,
    bestmove: AtomicU64,
    lines: AtomicU64,
    bad: Mutex<Vec<String>>,
    last_bestmove: Mutex<Option<String>>,
    /// The last lines read, for the report of a failure.
    tail: Mutex<std::collections::VecDeque<String>>,
}

fn is_uci(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or("");
    [
        "id",
        "uciok",
        "readyok",
        "bestmove",
        "info",
        "option",
        "copyprotection",
        "registration",
    ]
    .contains(&first)
}

/// Writes `line` and a newline; counts the bytes.
fn send(stdin: &mut std::process::ChildStdin, bytes: &mut u64, line: &[u8]) -> bool {
    *bytes += line.len() as u64 + 1;
    stdin
        .write_all(line)
        .and_then(|()| stdin.write_all(b"\n"))
        .is_ok()
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                found.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<u32>().ok()),
                );
            }
        }
    }
    found
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut lines, mut seed, mut every) = (100_000u64, 1u64, 500u64);
    let mut bin = String::from("target/release/mpcmc");
    let mut engine_args: Vec<String> = Vec::new();
    // Every line the engine writes, with the time it was read.
    let mut transcript: Option<String> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--lines" => lines = args.next().and_then(|v| v.parse().ok()).unwrap_or(lines),
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).unwrap_or(seed),
            "--every" => every = args.next().and_then(|v| v.parse().ok()).unwrap_or(every),
            "--bin" => bin = args.next().unwrap_or(bin),
            "--transcript" => transcript = args.next(),
            "--" => engine_args.extend(args.by_ref()),
            other => {
                eprintln!("fuzz_uci: unknown argument '{other}'");
                return ExitCode::from(2);
            }
        }
    }
    let mut child = match Command::new(&bin)
        .args(&engine_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fuzz_uci: cannot start {bin}: {e}");
            return ExitCode::from(2);
        }
    };
    let pid = child.id();
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return ExitCode::from(2);
    };
    let seen = Arc::new(Seen::default());
    let (eof_tx, eof_rx) = mpsc::channel::<()>();
    let mut transcript = match transcript.map(std::fs::File::create).transpose() {
        Ok(file) => file.map(std::io::BufWriter::new),
        Err(e) => {
            eprintln!("fuzz_uci: cannot create the transcript: {e}");
            return ExitCode::from(2);
        }
    };
    let begun = Instant::now();
    {
        let seen = seen.clone();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                seen.lines.fetch_add(1, Ordering::Relaxed);
                if let Some(t) = transcript.as_mut() {
                    let _ = write!(t, "{:.3} ", begun.elapsed().as_secs_f64());
                    let _ = t.write_all(&buf);
                }
                let text = String::from_utf8_lossy(&buf);
                let line = text.strip_suffix('\n').unwrap_or(&text);
                let pure = is_uci(line)
                    && !line.chars().any(char::is_control)
                    && std::str::from_utf8(&buf).is_ok();
                if !pure && let Ok(mut bad) = seen.bad.lock() {
                    // The first few are kept to show; the rest are counted.
                    let shown = if bad.len() < 20 {
                        format!("{line:?}")
                    } else {
                        String::new()
                    };
                    bad.push(shown);
                }
                if let Ok(mut tail) = seen.tail.lock() {
                    if tail.len() == 30 {
                        tail.pop_front();
                    }
                    tail.push_back(line.chars().take(200).collect());
                }
                if line == "readyok" {
                    seen.readyok.fetch_add(1, Ordering::Relaxed);
                } else if line.starts_with("bestmove") {
                    if let Ok(mut last) = seen.last_bestmove.lock() {
                        *last = Some(line.to_owned());
                    }
                    seen.bestmove.fetch_add(1, Ordering::SeqCst);
                }
            }
            let _ = eof_tx.send(());
        });
    }
    let wait_for = |what: &AtomicU64, above: u64, limit: Duration| {
        let deadline = Instant::now() + limit;
        while what.load(Ordering::Relaxed) <= above {
            if Instant::now() > deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(1));
        }
        true
    };

    let started = Instant::now();
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut failures: Vec<String> = Vec::new();
    let (mut bytes, mut checkpoints, mut slowest) = (0u64, 0u64, Duration::ZERO);
    // `isready` lines sent, each owed a `readyok`.
    let mut isready = 0u64;
    if !send(&mut stdin, &mut bytes, b"uci") {
        failures.push("could not write 'uci'".into());
    }
    for i in 1..=lines {
        let line = gui_line(&mut rng);
        // `quit` is never fuzzed: it would end the run.
        if line.trim_ascii().eq_ignore_ascii_case(b"quit") {
            continue;
        }
        if !send(&mut stdin, &mut bytes, &line) {
            failures.push(format!("the engine stopped reading at line {i}"));
            break;
        }
        if line.trim_ascii() == b"isready" {
            isready += 1;
        }
        if i % every == 0 {
            // Every `isready` so far must be answered: the engine is caught
            // up with the stream.
            isready += 1;
            let asked = Instant::now();
            if !send(&mut stdin, &mut bytes, b"isready") || stdin.flush().is_err() {
                failures.push(format!("could not write isready at line {i}"));
                break;
            }
            if !wait_for(&seen.readyok, isready - 1, Duration::from_secs(20)) {
                failures.push(format!(
                    "{} of {isready} isready answered 20 s after line {i}",
                    seen.readyok.load(Ordering::Relaxed)
                ));
                break;
            }
            slowest = slowest.max(asked.elapsed());
            checkpoints += 1;
            if let Ok(Some(status)) = child.try_wait() {
                failures.push(format!("the engine exited at line {i}: {status}"));
                break;
            }
        }
        if i % 100_000 == 0 {
            eprintln!(
                "fuzz_uci: {i} lines, {:.1} MB, {} readyok, {} bestmove, {:.0} s",
                bytes as f64 / 1e6,
                seen.readyok.load(Ordering::Relaxed),
                seen.bestmove.load(Ordering::Relaxed),
                started.elapsed().as_secs_f64()
            );
        }
    }

    // The end: a clean game must still be played.
    let final_position = ["e2e4", "e7e5", "g1f3"];
    let bestmoves = seen.bestmove.load(Ordering::Relaxed);
    isready += 1;
    for line in [
        "stop".to_owned(),
        "setoption name Evaluator value builtin".to_owned(),
        "setoption name ChildNodes value 300".to_owned(),
        "setoption name UCI_Chess960 value false".to_owned(),
        "ucinewgame".to_owned(),
        "isready".to_owned(),
    ] {
        send(&mut stdin, &mut bytes, line.as_bytes());
    }
    let _ = stdin.flush();
    if failures.is_empty() && !wait_for(&seen.readyok, isready - 1, Duration::from_secs(20)) {
        failures.push("no readyok before the final search".into());
    }
    // Let the bestmove of a stopped search arrive first: quiet for 2 s.
    let mut bestmoves = seen.bestmove.load(Ordering::SeqCst).max(bestmoves);
    let quiet_since = Instant::now();
    let mut last_change = Instant::now();
    while last_change.elapsed() < Duration::from_secs(2)
        && quiet_since.elapsed() < Duration::from_secs(30)
    {
        thread::sleep(Duration::from_millis(20));
        let now = seen.bestmove.load(Ordering::SeqCst);
        if now != bestmoves {
            bestmoves = now;
            last_change = Instant::now();
        }
    }
    send(
        &mut stdin,
        &mut bytes,
        format!("position startpos moves {}", final_position.join(" ")).as_bytes(),
    );
    send(&mut stdin, &mut bytes, b"go nodes 20000");
    let _ = stdin.flush();
    let mut final_move = None;
    if wait_for(&seen.bestmove, bestmoves, Duration::from_secs(30)) {
        final_move = seen.last_bestmove.lock().ok().and_then(|l| l.clone());
    } else {
        failures.push("no bestmove for the final search".into());
    }
    if let Some(line) = &final_move {
        let mut pos = Chess::default();
        for m in final_position {
            if let Some(mv) = m.parse::<UciMove>().ok().and_then(|u| u.to_move(&pos).ok()) {
                pos.play_unchecked(mv);
            }
        }
        let word = line.split_whitespace().nth(1).unwrap_or("");
        let legal = word
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .is_some();
        if !legal {
            failures.push(format!("final move '{line}' is not legal"));
        }
    }
    let children = children_of(pid);
    send(&mut stdin, &mut bytes, b"quit");
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            _ if Instant::now() > deadline => break None,
            _ => thread::sleep(Duration::from_millis(10)),
        }
    };
    match status {
        Some(s) if s.success() => {}
        Some(s) => failures.push(format!("quit ended the engine with {s}")),
        None => {
            failures.push("the engine did not exit within 10 s of quit".into());
            let _ = child.kill();
        }
    }
    let _ = eof_rx.recv_timeout(Duration::from_secs(2));
    thread::sleep(Duration::from_millis(200));
    let left: Vec<u32> = children
        .into_iter()
        .filter(|p| std::fs::metadata(format!("/proc/{p}")).is_ok())
        .collect();
    if !left.is_empty() {
        failures.push(format!("children left behind: {left:?}"));
    }
    let bad = seen.bad.lock().map(|b| b.clone()).unwrap_or_default();
    if !bad.is_empty() {
        failures.push(format!(
            "{} non-UCI lines on stdout, first: {:?}",
            bad.len(),
            &bad[..bad.len().min(5)]
        ));
    }
    println!(
        "fuzz_uci: {} {}: {lines} lines ({:.1} MB) seed {seed}, {checkpoints} isready checkpoints answered (slowest {:.0} ms), {} lines read, {} bestmove, final {}, {:.0} s: {}",
        bin,
        engine_args.join(" "),
        bytes as f64 / 1e6,
        slowest.as_secs_f64() * 1e3,
        seen.lines.load(Ordering::Relaxed),
        seen.bestmove.load(Ordering::Relaxed),
        final_move.as_deref().unwrap_or("-"),
        started.elapsed().as_secs_f64(),
        if failures.is_empty() {
            "ok".to_owned()
        } else {
            failures.join("; ")
        }
    );
    if !failures.is_empty()
        && let Ok(tail) = seen.tail.lock()
    {
        eprintln!("fuzz_uci: the last lines read:");
        for line in tail.iter() {
            eprintln!("  {line}");
        }
    }
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
