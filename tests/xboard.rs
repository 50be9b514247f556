//! mpcmc in Debian's XBoard, as a new user meets it (issue 57): XBoard
//! 4.9 with its stock `/etc/xboard/xboard.conf`, mpcmc loaded as a UCI
//! engine through Polyglot (XBoard's own adapter command), a game against
//! Stockfish in match mode, on a virtual display (Xvfb).
//!
//! The stock settings send `egtpath syzygy /EGT/Syzygy`, a directory a
//! new user does not have; mpcmc said so in the system's words (`No such
//! file or directory`) during its first search, which XBoard reads as a
//! program that failed to start: it stopped reading mpcmc and the game was
//! lost on time.

mod common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use common::stockfish;

/// Debian's programs this test drives.
fn program(path: &str, package: &str) -> PathBuf {
    assert!(
        Path::new(path).is_file(),
        "this test needs {path}: apt-get install -y {package}"
    );
    PathBuf::from(path)
}

/// Runs `command` in a process group of its own for at most `limit`; the
/// whole group is killed after it. Whether it ended by itself, and well.
fn run_for(mut command: Command, limit: Duration) -> Option<bool> {
    use std::os::unix::process::CommandExt;
    let mut child = command.process_group(0).spawn().expect("start xvfb-run");
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status.success());
        }
        if Instant::now() > deadline {
            // SAFETY: kill(2) on the group this test started.
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            let _ = child.wait();
            return None;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// One game, mpcmc (white, its defaults: the built-in engine as its
/// child) against Stockfish at 30 s + 0.5 s a move, to a result; XBoard's
/// debug file, its saved game and Polyglot's log read after.
#[test]
fn debians_xboard_plays_a_game_with_mpcmc_to_a_result() {
    let xvfb_run = program("/usr/bin/xvfb-run", "xvfb");
    program("/usr/games/xboard", "xboard");
    program("/usr/games/polyglot", "polyglot");
    let conf = std::fs::read_to_string("/etc/xboard/xboard.conf").expect("XBoard's settings");
    assert!(
        conf.contains("syzygy:/EGT/Syzygy"),
        "Debian's stock settings name /EGT/Syzygy"
    );
    let dir = std::env::temp_dir().join(format!("mpcmc-xboard-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Each engine's directory, where its Polyglot writes its log.
    let (first, second) = (dir.join("mpcmc"), dir.join("stockfish"));
    for d in [&first, &second] {
        std::fs::create_dir_all(d).expect("temp dir");
    }
    let (debug, game) = (dir.join("xboard.debug"), dir.join("game.pgn"));
    let mut command = Command::new(xvfb_run);
    command
        .current_dir(&dir)
        // A new user's: a home of their own, and Debian's PATH for users
        // (XBoard finds `polyglot` in /usr/games).
        .env("HOME", &dir)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/games")
        .arg("-a")
        .arg("/usr/games/xboard")
        .arg("-fcp")
        .arg(env!("CARGO_BIN_EXE_mpcmc"))
        .args(["-fUCI", "-fd"])
        .arg(&first)
        .arg("-scp")
        .arg(stockfish())
        .args(["-sUCI", "-sd"])
        .arg(&second)
        // The stock adapter command, with Polyglot's log on (in the
        // engine's directory).
        .args([
            "-adapterCommand",
            "polyglot -noini -ec \"%fcp\" -ed \"%fd\" -uci NalimovCache=%defaultCacheSizeEGTB \
             -pg ShowTbHits=true -pg Log=true -pg LogFile=%fd/polyglot.log",
        ])
        // A match from the command line, which ends XBoard when played
        // (with no message box to close).
        .args(["-matchMode", "true", "-matchGames", "1"])
        .args(["-tc", "0:30", "-inc", "0.5", "-popupExitMessage", "false"])
        .args(["-debugMode", "true", "-nameOfDebugFile"])
        .arg(&debug)
        .arg("-saveGameFile")
        .arg(&game)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let ended = run_for(command, Duration::from_secs(300));
    let debug = std::fs::read_to_string(&debug).unwrap_or_default();
    let game = std::fs::read_to_string(&game).unwrap_or_default();
    let polyglot = std::fs::read_to_string(first.join("polyglot.log")).unwrap_or_default();
    let tail = |text: &str| {
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    };
    assert!(
        !debug.contains("Failed to start"),
        "XBoard read mpcmc as failing to start:\n{}",
        debug
            .lines()
            .filter(|l| l.contains("Failed") || l.starts_with("<first"))
            .take(60)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(
        ended,
        Some(true),
        "XBoard did not end its match:\n{}",
        tail(&debug)
    );
    // The game: played to a result, by the board, never on time nor by an
    // illegal move (XBoard names such an end in the game's last comment).
    let result = game
        .lines()
        .find_map(|l| l.strip_prefix("[Result \""))
        .and_then(|r| r.strip_suffix("\"]"))
        .unwrap_or("none");
    assert!(
        ["1-0", "0-1", "1/2-1/2"].contains(&result),
        "result {result}:\n{game}"
    );
    let end = game.lines().rev().find(|l| l.contains('{')).unwrap_or("");
    for lost in ["flag", "time", "illegal", "Illegal", "False"] {
        assert!(!end.contains(lost), "the game ended: {end}");
    }
    let ours = debug
        .lines()
        .filter(|l| l.contains("<first : move "))
        .count();
    assert!(ours >= 5, "mpcmc made {ours} moves:\n{game}");
    for bad in [
        "Illegal move",
        "illegal move",
        "tellusererror",
        "False illegal",
    ] {
        assert!(
            !debug.contains(bad) && !polyglot.contains(bad),
            "'{bad}' in XBoard's lines or Polyglot's of mpcmc"
        );
    }
    // What mpcmc told Polyglot: the tablebase path said before the first
    // search, and no word XBoard reads as failure anywhere.
    assert!(
        polyglot.contains("id name mpcmc"),
        "Polyglot's log of mpcmc"
    );
    let mpcmc_log = &polyglot;
    let said = mpcmc_log
        .find("info string SyzygyPath: found 0 tablebases")
        .expect("the tablebase path said");
    let first_go = mpcmc_log.find("Adapter->Engine: go").expect("a search");
    assert!(said < first_go, "the tablebase path said in a search");
    for phrase in ["No such file", "not found", "Permission denied", "os error"] {
        assert!(!mpcmc_log.contains(phrase), "'{phrase}' in mpcmc's lines");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
