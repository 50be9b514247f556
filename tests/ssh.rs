//! Children on other "hosts", reached through a real OpenSSH server on the
//! loopback address: a decision over a mixed pool, a connection killed
//! mid-search, a host that refuses connections, and `quit` leaving no
//! process on either side. Each test starts its own `sshd` (a host key and
//! a client key made for the run, a free loopback port) and stops it.

mod common;

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use common::{Mpcmc, SECOND, WayRun, alive, assert_legal, children_of, play, position, stockfish};

const SSHD: &str = "/usr/sbin/sshd";

/// One SSH test at a time: each runs an sshd, Stockfish on its "hosts" and
/// mpcmc, and the clock assertions want the two cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An `sshd` on 127.0.0.1 that lets in one key made for it.
struct Sshd {
    daemon: Child,
    dir: PathBuf,
    port: u16,
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", ""])
        .arg("-f")
        .arg(path)
        .status()
        .expect("ssh-keygen runs")
        .success();
    assert!(ok, "ssh-keygen made {}", path.display());
}

impl Sshd {
    fn start(name: &str) -> Sshd {
        assert!(
            Path::new(SSHD).is_file(),
            "these tests need an OpenSSH server at {SSHD}: apt-get install -y openssh-server"
        );
        let dir = std::env::temp_dir().join(format!("mpcmc-sshd-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("sshd dir");
        // sshd run as root wants its privilege separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        keygen(&dir.join("host_key"));
        keygen(&dir.join("client_key"));
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys"))
            .expect("authorized_keys");
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
             AuthorizedKeysFile {dir}/authorized_keys\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nStrictModes no\n\
             UsePAM no\nPidFile {dir}/sshd.pid\nLogLevel ERROR\n",
            dir = dir.display()
        );
        std::fs::write(dir.join("sshd_config"), config).expect("sshd_config");
        let daemon = Command::new(SSHD)
            .arg("-D")
            .arg("-E")
            .arg(dir.join("sshd.log"))
            .arg("-f")
            .arg(dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sshd starts");
        let mut sshd = Sshd { daemon, dir, port };
        // Listening within a few seconds.
        let deadline = Instant::now() + 10 * SECOND;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            let log = || std::fs::read_to_string(sshd.dir.join("sshd.log")).unwrap_or_default();
            if let Ok(Some(status)) = sshd.daemon.try_wait() {
                panic!("sshd exited ({status}): {}", log());
            }
            assert!(
                Instant::now() < deadline,
                "sshd listens on {port}: {}",
                log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        sshd
    }

    /// The command line that runs `program` on this "host".
    fn command(&self, program: &str) -> String {
        ssh_to(self.port, &self.dir.join("client_key"), program)
    }

    /// Every process the daemon started (its per-connection sessions and
    /// what they run), deepest last.
    fn descendants(&self) -> Vec<u32> {
        let mut found = Vec::new();
        let mut frontier = vec![self.daemon.id()];
        while let Some(pid) = frontier.pop() {
            for child in children_of(pid) {
                found.push(child);
                frontier.push(child);
            }
        }
        found
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // Sessions and what they run first (a failed test leaves them).
        for pid in self.descendants() {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `ssh` to a loopback port with a key, never asking anything.
fn ssh_to(port: u16, key: &Path, program: &str) -> String {
    format!(
        "ssh -F /dev/null -p {port} -i {} -o BatchMode=yes -o StrictHostKeyChecking=no \
         -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=5 \
         127.0.0.1 {program}",
        key.display()
    )
}

/// Waits until none of `pids` is alive (or fails after a few seconds).
fn all_gone(pids: &[u32], what: &str) {
    let deadline = Instant::now() + 5 * SECOND;
    while pids.iter().any(|&p| alive(p)) {
        assert!(Instant::now() < deadline, "{what} left behind: {pids:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_pool_over_two_hosts_and_this_machine_plays_and_quits_cleanly() {
    let _one = one_at_a_time();
    let (a, b) = (Sshd::start("a"), Sshd::start("b"));
    let sf = stockfish();
    let workers = format!(
        "--workers=builtin *1; {} *1; opponent: {} *1",
        a.command(sf),
        b.command(sf)
    );
    let mut e = Mpcmc::start(&[&workers]);
    e.handshake();
    let lines = play(&mut e, "go movetime 1500", 2, 3 * SECOND);
    assert!(
        !lines.iter().any(|l| l.contains("child failure")),
        "{lines:?}"
    );
    // Stockfish runs on both "hosts" (a worker whose start missed its
    // deadline on a loaded machine is down for a second, then restarts).
    let deadline = Instant::now() + 10 * SECOND;
    let (on_a, on_b) = loop {
        let (on_a, on_b) = (a.descendants(), b.descendants());
        if !on_a.is_empty() && !on_b.is_empty() {
            break (on_a, on_b);
        }
        assert!(Instant::now() < deadline, "{on_a:?} {on_b:?} {lines:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let ours = children_of(e.pid());
    assert!(e.quit().success());
    all_gone(&ours, "ssh clients");
    all_gone(&on_a, "processes on host a");
    all_gone(&on_b, "processes on host b");
}

#[test]
fn a_connection_killed_mid_search_still_gives_a_legal_move_in_time() {
    let _one = one_at_a_time();
    let host = Sshd::start("kill");
    let workers = format!("--workers=builtin *1; {} *2", host.command(stockfish()));
    let mut e = Mpcmc::start(&[&workers]);
    e.handshake();
    play(&mut e, "go movetime 500", 1, 2 * SECOND);
    e.send("position startpos moves e2e4 e7e5");
    let asked = Instant::now();
    e.send("go movetime 2000");
    std::thread::sleep(Duration::from_millis(600));
    // Kill every session on the host: the connections drop mid-search.
    let sessions = host.descendants();
    assert!(!sessions.is_empty(), "sessions on the host");
    for pid in &sessions {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    let (mv, _) = e.bestmove(10 * SECOND);
    assert!(
        asked.elapsed() < 3 * SECOND,
        "answered in {:?}",
        asked.elapsed()
    );
    assert_legal(&position(None, &["e2e4", "e7e5"]), &mv);
    // And it goes on playing.
    play(&mut e, "go movetime 500", 1, 2 * SECOND);
    assert!(e.quit().success());
}

#[test]
fn a_host_that_refuses_connections_does_not_stop_the_others() {
    let _one = one_at_a_time();
    let host = Sshd::start("up");
    let key = host.dir.join("client_key");
    // Nothing listens on this port. First in the list, after the root
    // entry the remote hosts add (`Evaluator` on this machine: worker 1).
    let refused = ssh_to(free_port(), &key, stockfish());
    let workers = format!(
        "--workers={refused} *1; builtin *1; {} *1",
        host.command(stockfish())
    );
    let mut e = Mpcmc::start(&[&workers]);
    e.handshake();
    // Time enough for a round over a host's Stockfish on a loaded machine
    // (at 800 ms, with both cores busy besides the tests, no round finished
    // and the built-in engine moved: in time, but not what this checks).
    let lines = play(&mut e, "go movetime 2500", 2, 4 * SECOND);
    // The evaluator's root search ran (on a worker that is up), every
    // candidate was valued, and the user was told once.
    let said = e.transcript.join("\n");
    assert!(said.contains("info string worker 2 is down"), "{said}");
    assert!(
        lines.iter().any(|l| l.contains("; root search depth")),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("child failure")),
        "{lines:?}"
    );
    assert!(e.quit().success());

    // With no host up at all, the root search on this machine plays alone,
    // in time.
    let mut e = Mpcmc::start(&[&format!("--workers={refused} *2")]);
    e.handshake();
    let lines = play(&mut e, "go movetime 800", 1, 2 * SECOND);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("rule evaluator_fallback") && l.contains("root search depth")),
        "{lines:?}"
    );
    assert!(e.quit().success());
}

/// Issue 61: what the way through SSH costs a lookahead call, against the
/// same child on this machine (the root search here both ways): the same
/// decisions, and when each of the child's lines arrived. A measurement,
/// not a check: `cargo test --release --test ssh -- --ignored --nocapture`
/// on a quiet machine.
#[test]
#[ignore = "a measurement; run by hand on a quiet machine"]
fn measure_an_ssh_child_against_a_local_child() {
    let _one = one_at_a_time();
    let host = Sshd::start("measure");
    let sf = stockfish();
    let ready = |flags: &[&str]| {
        let mut e = Mpcmc::start(flags);
        e.handshake();
        e.send("isready");
        e.until("readyok", 60 * SECOND);
        e
    };
    let ssh = WayRun::run(
        &host.dir,
        "ssh",
        &format!("root: {sf}; {}", host.command(sf)),
        ready,
    );
    let local = WayRun::run(&host.dir, "local", &format!("root: {sf}; {sf}"), ready);
    ssh.compare(&local);
}
