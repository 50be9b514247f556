//! Drives the built `mpcmc` binary over its stdin/stdout, like a GUI.

#![allow(dead_code)]

use std::{
    io::{BufRead, BufReader, Write},
    path::Path,
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc::{self, Receiver, RecvTimeoutError},
    thread,
    time::{Duration, Instant},
};

use shakmaty::{CastlingMode, Chess, Position, fen::Fen, uci::UciMove};

pub const SECOND: Duration = Duration::from_secs(1);

/// Stockfish as Debian installs it. Tests that need it fail without it: CI
/// installs it (`apt-get install -y stockfish`).
pub fn stockfish() -> &'static str {
    let path = "/usr/games/stockfish";
    assert!(
        Path::new(path).is_file(),
        "these tests need Stockfish at {path}: apt-get install -y stockfish"
    );
    path
}

/// Fairy-Stockfish as Debian installs it: the variant tests' child and
/// opponent. CI installs it (`apt-get install -y fairy-stockfish`).
pub fn fairy_stockfish() -> &'static str {
    let path = "/usr/games/fairy-stockfish";
    assert!(
        Path::new(path).is_file(),
        "these tests need Fairy-Stockfish at {path}: apt-get install -y fairy-stockfish"
    );
    path
}

/// Runs the Python referee `tests/python/<script>` with `args` and returns
/// what it printed, failing the test unless it exited well and printed
/// `ok_line`, and printed a line starting `<game>: mpcmc` for each of
/// `games` (every game was played and reported).
pub fn referee(script: &str, args: &[String], ok_line: &str, games: &[&str]) -> String {
    let path = format!("{}/tests/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("python3")
        .arg(&path)
        .args(args)
        .output()
        .expect("python3 runs (scripts/test installs python-chess and pyffish)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(ok_line),
        "{script} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    for game in games {
        assert!(
            stdout.contains(&format!("{game}: mpcmc")),
            "{game}:\n{stdout}"
        );
    }
    stdout
}

/// A real child process for fault tests, in POSIX `sh`, as a child command
/// line: it answers `uci` (after running `on_uci`, shell commands ending in
/// `;`, or nothing) and `isready`, runs `on_go` on every `go`, ignores
/// everything else, and exits on `quit` or end of input. With `echo`, every
/// line it reads is appended to that file. Its `$0` is `marker`, so a test
/// finds its processes by command line (until `on_go` `exec`s another
/// program). The shell commands must not contain `'`. The in-process fake
/// (`src/children/fake.rs`) covers the protocol's faults; this one is for
/// what only a process does: exit with a status, hang past SIGTERM.
pub fn sh_engine(on_uci: &str, on_go: &str, echo: Option<&Path>, marker: &str) -> String {
    let log = echo.map_or(String::new(), |p| {
        format!("echo \"$l\" >> {}; ", p.display())
    });
    format!(
        "sh -c 'while read -r l; do {log}case \"$l\" in uci) {on_uci} echo uciok;; isready) echo readyok;; go*) {on_go};; quit) exit 0;; esac; done' {marker}"
    )
}

/// The child engine a meta-engine test runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    /// Stockfish processes.
    Stockfish,
    /// The built-in engine, in process.
    Builtin,
}

/// A running mpcmc and the lines it wrote.
pub struct Mpcmc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every line read so far, for failure messages.
    pub transcript: Vec<String>,
}

impl Mpcmc {
    /// Starts mpcmc with `flags` (option flags like `--child-nodes=1000`).
    pub fn start(flags: &[&str]) -> Mpcmc {
        Mpcmc::start_in(Path::new("."), flags)
    }

    /// Starts mpcmc in directory `dir`, as a GUI starts engines in its own.
    /// The tests read how each decision was reached from its `info
    /// string`s, so `ShowDecisions` is on unless `flags` set it (or run a
    /// subcommand); the tests of what a GUI sees by default turn it off.
    pub fn start_in(dir: &Path, flags: &[&str]) -> Mpcmc {
        Mpcmc::start_with(flags, |c| {
            c.current_dir(dir);
        })
    }

    /// Starts mpcmc with `flags`, its command prepared by `prepare` (an
    /// environment of its own).
    pub fn start_with(flags: &[&str], prepare: impl FnOnce(&mut Command)) -> Mpcmc {
        let subcommand = flags.first().is_some_and(|f| !f.starts_with('-'));
        let show = !subcommand && !flags.iter().any(|f| f.starts_with("--show-decisions"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_mpcmc"));
        prepare(&mut command);
        let mut child = command
            .args(show.then_some("--show-decisions=true"))
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start mpcmc");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Mpcmc {
            child,
            stdin,
            lines,
            transcript: Vec::new(),
        }
    }

    /// Starts mpcmc over `child`.
    pub fn over(child: ChildKind, flags: &[&str]) -> Mpcmc {
        match child {
            ChildKind::Stockfish => Mpcmc::with_stockfish(flags),
            ChildKind::Builtin => {
                let mut all = vec!["--evaluator=builtin"];
                all.extend_from_slice(flags);
                Mpcmc::start(&all)
            }
        }
    }

    /// Starts mpcmc over Stockfish.
    pub fn with_stockfish(flags: &[&str]) -> Mpcmc {
        let evaluator = format!("--evaluator={}", stockfish());
        let mut all = vec![evaluator.as_str()];
        all.extend_from_slice(flags);
        Mpcmc::start(&all)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to mpcmc");
        stdin.flush().expect("flush");
    }

    /// Writes raw bytes (not necessarily UTF-8, not necessarily a line).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to mpcmc");
        stdin.flush().expect("flush");
    }

    /// Closes stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line, or `None` after `timeout`.
    pub fn next_line(&mut self, timeout: Duration) -> Option<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                self.transcript.push(line.clone());
                Some(line)
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Lines up to and including the `n`th that starts with `prefix`.
    pub fn until_nth(&mut self, prefix: &str, n: usize, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        for _ in 0..n {
            let left = deadline.saturating_duration_since(Instant::now());
            seen.extend(self.until(prefix, left));
        }
        seen
    }

    /// Lines up to and including the first that starts with `prefix`; panics
    /// with the transcript after `timeout`.
    pub fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_line(left) {
                Some(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                None => panic!(
                    "no line starting with '{prefix}' within {timeout:?}; transcript:\n{}",
                    self.transcript.join("\n")
                ),
            }
        }
    }

    /// Sends `uci` and `isready` and waits for both answers.
    pub fn handshake(&mut self) -> Vec<String> {
        self.send("uci");
        let lines = self.until("uciok", Duration::from_secs(5));
        self.send("isready");
        // mpcmc answers within 5 s even while children still start
        // (READY_WAIT); the rest is slack for a loaded machine.
        self.until("readyok", Duration::from_secs(10));
        lines
    }

    /// At `position`, a finished game lost by the side to move, a `go`
    /// is answered as Stockfish answers it: `score mate 0`, then
    /// `bestmove (none)`.
    pub fn assert_lost_at(&mut self, position: &str) {
        self.send(position);
        self.send("go nodes 1000");
        let (mv, lines) = self.bestmove(60 * SECOND);
        assert_eq!(mv, "(none)", "{lines:#?}");
        assert!(
            lines.iter().any(|l| l.contains("score mate 0")),
            "{lines:#?}"
        );
    }

    /// Waits for the `bestmove` line and returns its move text.
    pub fn bestmove(&mut self, timeout: Duration) -> (String, Vec<String>) {
        let lines = self.until("bestmove", timeout);
        let last = lines.last().cloned().unwrap_or_default();
        let mv = last
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        (mv, lines)
    }

    /// Asserts no line starting with `prefix` comes within `wait`.
    pub fn silent(&mut self, prefix: &str, wait: Duration) {
        let deadline = Instant::now() + wait;
        while let Some(line) = self.next_line(deadline.saturating_duration_since(Instant::now())) {
            assert!(
                !line.starts_with(prefix),
                "unexpected '{line}'; transcript:\n{}",
                self.transcript.join("\n")
            );
        }
    }

    /// The processes whose parent is mpcmc.
    pub fn children(&self) -> Vec<u32> {
        children_of(self.pid())
    }

    /// Sends `quit` and waits for the exit.
    pub fn quit(mut self) -> std::process::ExitStatus {
        if self.stdin.is_some() {
            self.send("quit");
        }
        self.wait(Duration::from_secs(10))
    }

    pub fn wait(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "mpcmc did not exit within {timeout:?}"
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Mpcmc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Child processes of `pid`, from /proc.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return found;
    };
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            found.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    found
}

/// Whether other work than the test's own may be slowing it: the
/// machine's one-minute load average (`/proc/loadavg`) is at least half
/// its cores, or cannot be read. The average lags (about 40 s of a load
/// of four on two cores to reach two), hence half: tests running beside
/// this one count as busy soon enough. A test that lets a lapse pass only
/// because a busy machine explains it asks this, so that on a quiet
/// machine the same lapse fails.
pub fn machine_busy() -> bool {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<f64>().ok())
        .is_none_or(|load| 2.0 * load >= cores as f64)
}

/// Kills mpcmc (`pid`) with SIGKILL, gives `watched` (processes it
/// started) `within` to end, and returns those still alive, killed now so
/// that no test leaves them behind.
pub fn kill9_then_left(pid: u32, watched: &[u32], within: Duration) -> Vec<u32> {
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let deadline = Instant::now() + within;
    while watched.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = watched.iter().copied().filter(|&p| alive(p)).collect();
    for p in &left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
    }
    left
}

/// Whether process `pid` still exists (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// The position after `fen` (or startpos) and `moves`.
pub fn position(fen: Option<&str>, moves: &[&str]) -> Chess {
    let mut pos: Chess = match fen {
        Some(f) => f
            .parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("legal fen"),
        None => Chess::default(),
    };
    for m in moves {
        let m = m
            .parse::<UciMove>()
            .expect("uci")
            .to_move(&pos)
            .expect("legal");
        pos.play_unchecked(m);
    }
    pos
}

/// Asserts `mv` is legal in `pos` and returns it.
pub fn assert_legal(pos: &Chess, mv: &str) -> shakmaty::Move {
    let uci: UciMove = mv
        .parse()
        .unwrap_or_else(|_| panic!("'{mv}' is not a UCI move"));
    uci.to_move(pos).unwrap_or_else(|_| {
        panic!(
            "'{mv}' is illegal in {}",
            Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
        )
    })
}

impl Mpcmc {
    /// Starts `mpcmc engine`, the built-in engine alone.
    pub fn builtin(flags: &[&str]) -> Mpcmc {
        let mut all = vec!["engine"];
        all.extend_from_slice(flags);
        Mpcmc::start(&all)
    }
}

impl Mpcmc {
    /// Plays both sides of a game from the start position on a clock of
    /// `base` ms plus `inc` ms a move, kept here as a GUI keeps it (pipe
    /// latency included), for at most `plies`. Asserts every move is legal
    /// and no side's clock runs out.
    pub fn play_clock_game(&mut self, base: i64, inc: i64, plies: usize) {
        self.play_game_on_clock(base, inc, None, plies);
    }

    /// As [`Mpcmc::play_clock_game`], with `control` moves a side to each
    /// time control when given: `movestogo` counts down to it, and each
    /// side's clock gets `base` again when it reaches it.
    pub fn play_game_on_clock(&mut self, base: i64, inc: i64, control: Option<u32>, plies: usize) {
        assert_ne!(control, Some(0), "a time control of no moves");
        let mut moves: Vec<String> = Vec::new();
        let mut clock = [base, base];
        let mut pos = Chess::default();
        for ply in 0..plies {
            if pos.is_game_over() {
                break;
            }
            let side = if pos.turn() == shakmaty::Color::White {
                0
            } else {
                1
            };
            self.send(&format!("position startpos moves {}", moves.join(" ")));
            let sent = Instant::now();
            // Moves this side has made, and so left to its control.
            let made = (ply / 2) as u32;
            let to_go = control.map(|c| c - made % c);
            let moves_to_go = to_go.map_or(String::new(), |n| format!(" movestogo {n}"));
            self.send(&format!(
                "go wtime {} btime {} winc {inc} binc {inc}{moves_to_go}",
                clock[0], clock[1]
            ));
            let (mv, _) = self.bestmove(Duration::from_millis(clock[side].max(0) as u64 + 2000));
            clock[side] -= sent.elapsed().as_millis() as i64;
            assert!(clock[side] > 0, "lost on time at ply {ply}: {clock:?}");
            clock[side] += inc;
            if to_go == Some(1) {
                clock[side] += base;
            }
            let m = assert_legal(&pos, &mv);
            pos.play_unchecked(m);
            moves.push(mv);
        }
    }
}

impl Mpcmc {
    /// `go infinite` from the start position: nothing before `stop` (the
    /// first `wait` of it checked), `isready` answered mid-search, then one
    /// legal `bestmove` whose move is the last `info` line's, and a second
    /// `stop` ignored.
    pub fn infinite_waits_for_stop(&mut self, wait: Duration) {
        self.send("position startpos");
        self.send("go infinite");
        self.silent("bestmove", wait);
        self.send("isready");
        let lines = self.until("readyok", 2 * SECOND);
        assert!(
            !lines.iter().any(|l| l.starts_with("bestmove")),
            "{lines:?}"
        );
        self.send("stop");
        let (mv, lines) = self.bestmove(2 * SECOND);
        assert_legal(&Chess::default(), &mv);
        let info = self
            .transcript
            .iter()
            .rev()
            .find(|l| l.starts_with("info depth"))
            .expect("info lines during the search");
        assert!(
            info.contains(&format!(" pv {mv}")),
            "{info} vs {mv}; {lines:?}"
        );
        self.send("stop");
        self.send("isready");
        let lines = self.until("readyok", 2 * SECOND);
        assert!(
            !lines.iter().any(|l| l.starts_with("bestmove")),
            "{lines:?}"
        );
    }
}

impl Mpcmc {
    /// A `go` that comes while `go ponder` or `go infinite` runs, with no
    /// `stop` or `ponderhit` before it (python-chess does this after a
    /// `play(…, ponder=True)`; a `ponderhit` is no end for `go infinite`):
    /// the old search ends with no line more, the new `go` gets its own
    /// lines and one `bestmove`.
    pub fn a_new_go_replaces_a_search_never_told_to_end(&mut self) {
        for (first, stray) in [
            ("go ponder wtime 30000 btime 30000", None),
            ("go infinite", Some("ponderhit")),
        ] {
            self.send("position startpos moves e2e4 e7e5");
            self.send(first);
            self.silent("bestmove", Duration::from_millis(500));
            if let Some(line) = stray {
                self.send(line);
            }
            // Black to move: the old search's moves (White's) are illegal here.
            self.send("position startpos moves e2e4 e7e5 g1f3");
            self.send("go movetime 300");
            let (mv, lines) = self.bestmove(5 * SECOND);
            if stray.is_some() {
                let ignored = "info string ponderhit with no go ponder running";
                assert!(lines.iter().any(|l| l.starts_with(ignored)), "{lines:?}");
            }
            let now = position(None, &["e2e4", "e7e5", "g1f3"]);
            assert_legal(&now, &mv);
            let replaced = lines
                .iter()
                .position(|l| l.starts_with("info string go with a search running"))
                .unwrap_or_else(|| panic!("{first}: {lines:?}"));
            for line in &lines[replaced..] {
                if let Some((_, pv)) = line.split_once(" pv ") {
                    let first_move = pv.split(' ').next().unwrap_or_default();
                    assert_legal(&now, first_move);
                }
            }
            self.silent("bestmove", SECOND);
        }
    }
}

/// Plays `plies` of our moves from the start position (the opponent's reply
/// the first legal move), each under `go`, asserting each move legal and
/// answered within `within`; returns the transcript's last lines.
pub fn play(e: &mut Mpcmc, go: &str, plies: usize, within: Duration) -> Vec<String> {
    let mut moves: Vec<String> = Vec::new();
    let mut last = Vec::new();
    for _ in 0..plies {
        e.send(&format!("position startpos moves {}", moves.join(" ")));
        let asked = Instant::now();
        e.send(go);
        let (mv, lines) = e.bestmove(within + 5 * SECOND);
        assert!(
            asked.elapsed() <= within,
            "{go} answered in {:?}",
            asked.elapsed()
        );
        let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
        assert_legal(&position(None, &refs), &mv);
        moves.push(mv);
        let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
        let reply = position(None, &refs).legal_moves()[0];
        moves.push(shakmaty::uci::UciMove::from_standard(reply).to_string());
        last = lines;
    }
    last
}

/// Runs `command` to its end and returns its output, failing the test
/// with its stderr when it did not succeed.
pub fn output_ok(command: &mut Command) -> std::process::Output {
    let out = command.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Issue 61's measure of the way to a child (a job step, an SSH
/// connection): three memoryless decisions at `--child-nodes=20000` over
/// one lookahead child (`workers` names it, the root search on a child of
/// its own), traced and logged in `dir` as `name`, each one's time from
/// `go` to `bestmove`. Prints `scripts/measure/child_lag.py` over the log:
/// when each of the child's lines arrived against its own clock.
pub struct WayRun {
    pub name: String,
    pub decisions: Vec<serde_json::Value>,
    pub took: Vec<Duration>,
}

impl WayRun {
    /// `start` starts mpcmc with the flags given and makes it ready.
    pub fn run(
        dir: &Path,
        name: &str,
        workers: &str,
        start: impl FnOnce(&[&str]) -> Mpcmc,
    ) -> WayRun {
        let trace = dir.join(format!("{name}.jsonl"));
        let log = dir.join(format!("{name}.log"));
        let flags = [
            format!("--workers={workers}"),
            "--child-nodes=20000".to_owned(),
            "--child-threads=1".to_owned(),
            "--memoryless=true".to_owned(),
            format!("--trace-file={}", trace.display()),
            format!("--log-file={}", log.display()),
        ];
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let mut e = start(&flags);
        let mut took = Vec::new();
        for moves in ["", "e2e4 e7e5", "d2d4 d7d5 c2c4"] {
            e.send(&format!("position startpos moves {moves}"));
            let sent = Instant::now();
            e.send("go");
            e.bestmove(60 * SECOND);
            took.push(sent.elapsed());
        }
        assert!(e.quit().success());
        let text = std::fs::read_to_string(&trace).expect("trace");
        let decisions: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(
            decisions.len(),
            took.len(),
            "{name}: a trace line a decision"
        );
        let lag = output_ok(
            Command::new("python3")
                .arg(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/scripts/measure/child_lag.py"
                ))
                .arg(&log),
        );
        println!("{name}: {}", String::from_utf8_lossy(&lag.stdout));
        WayRun {
            name: name.to_owned(),
            decisions,
            took,
        }
    }

    /// Asserts that `self` and `local` decided the same (moves and values)
    /// and prints what the way cost each lookahead call.
    pub fn compare(&self, local: &WayRun) {
        assert_eq!(self.decisions.len(), local.decisions.len());
        for (i, (s, l)) in self.decisions.iter().zip(&local.decisions).enumerate() {
            assert_eq!(s["chosen"], l["chosen"], "decision {i}");
            let values = |d: &serde_json::Value| {
                let mut candidates = d["candidates"].clone();
                for c in candidates.as_array_mut().into_iter().flatten() {
                    c.as_object_mut().map(|c| c.remove("time_ms"));
                }
                candidates
            };
            assert_eq!(values(s), values(l), "decision {i}: the same values");
            let calls = s["candidates"].as_array().map_or(0, Vec::len) * 2;
            let extra = self.took[i].as_secs_f64() - local.took[i].as_secs_f64();
            println!(
                "decision {i}: {} both ways; {calls} lookahead calls on one child: {} {:?}, \
                 {} {:?}, {:.2} ms more a call",
                s["chosen"],
                self.name,
                self.took[i],
                local.name,
                local.took[i],
                1000.0 * extra / calls as f64
            );
        }
    }
}
