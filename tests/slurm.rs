//! Children as Slurm job steps (`Workers=slurm COMMAND`), on a real Slurm:
//! each test starts a one-node cluster of its own — `munged`, `slurmctld`
//! and `slurmd` (Debian's `slurm-wlm` and `munge`, which `scripts/test`
//! installs), their configuration and key in a temporary directory, ports
//! of their own — takes an allocation with `salloc --no-shell`, runs mpcmc
//! in it as `salloc`/`sbatch` would (Slurm's variables in its
//! environment), and stops exactly those daemons. The daemons need root:
//! without it the tests say so and are skipped.

mod common;

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use common::{Mpcmc, SECOND, WayRun, assert_legal, position, stockfish};

const MUNGED: &str = "/usr/sbin/munged";
const SLURMCTLD: &str = "/usr/sbin/slurmctld";
const SLURMD: &str = "/usr/sbin/slurmd";

/// One cluster at a time: each runs daemons, Stockfish steps and mpcmc.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A one-node Slurm cluster of this test's own.
struct Cluster {
    dir: PathBuf,
    daemons: Vec<Child>,
}

/// An allocation on the cluster.
struct Job {
    id: String,
    nodes: String,
    cpus: String,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("the host name")
        .trim()
        .to_owned()
}

impl Cluster {
    /// Starts the cluster, its node with `cpus` CPUs (more than the
    /// machine has: slurmd is told to take the configuration's word);
    /// `None`, said, where it cannot (not root).
    fn start(name: &str, cpus: usize) -> Option<Cluster> {
        if !is_root() {
            eprintln!(
                "SKIPPED {name}: the Slurm daemons (munged, slurmctld, slurmd) need root to start"
            );
            return None;
        }
        for daemon in [MUNGED, SLURMCTLD, SLURMD] {
            assert!(
                Path::new(daemon).is_file(),
                "the Slurm tests need {daemon}: apt-get install -y slurm-wlm munge (scripts/test does)"
            );
        }
        let dir = std::env::temp_dir().join(format!("mpcmc-slurm-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(dir.join(sub)).expect("cluster dir");
        }
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(
            &mut std::fs::File::open("/dev/urandom").expect("/dev/urandom"),
            &mut key,
        )
        .expect("a key");
        std::fs::write(dir.join("munge.key"), key).expect("munge key");
        Command::new("chmod")
            .args(["600"])
            .arg(dir.join("munge.key"))
            .status()
            .expect("chmod");
        let d = dir.display();
        let host = this_host();
        let (ctld, slurmd) = (free_port(), free_port());
        let config = format!(
            "ClusterName=mpcmc{pid}\nSlurmctldHost={host}\nSlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={d}/munge.sock\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU_Memory\n\
             SlurmdParameters=config_overrides\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
             SlurmctldPort={ctld}\nSlurmdPort={slurmd}\nReturnToService=2\nMpiDefault=none\n\
             JobCompType=jobcomp/none\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             NodeName={host} CPUs={cpus} RealMemory=4000 State=UNKNOWN\n\
             PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            pid = std::process::id()
        );
        std::fs::write(dir.join("slurm.conf"), config).expect("slurm.conf");
        let mut cluster = Cluster {
            dir,
            daemons: Vec::new(),
        };
        let conf = cluster.conf();
        let d = cluster.dir.clone();
        let munged = [
            "-F".to_owned(),
            "--force".to_owned(),
            format!("--key-file={}", d.join("munge.key").display()),
            format!("--socket={}", d.join("munge.sock").display()),
            format!("--pid-file={}", d.join("munged.pid").display()),
            format!("--log-file={}", d.join("munged.log").display()),
            format!("--seed-file={}", d.join("munge.seed").display()),
        ];
        cluster.spawn(MUNGED, &munged);
        cluster.wait_for("the munge socket", || d.join("munge.sock").exists());
        cluster.spawn(SLURMCTLD, &["-D".to_owned(), "-f".to_owned(), conf.clone()]);
        cluster.spawn(SLURMD, &["-D".to_owned(), "-f".to_owned(), conf]);
        cluster.wait_for("the node up", || {
            let out = cluster.cmd("sinfo").args(["-h", "-o", "%t"]).output();
            out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        Some(cluster)
    }

    fn conf(&self) -> String {
        self.dir.join("slurm.conf").display().to_string()
    }

    fn spawn(&mut self, program: &str, args: &[String]) {
        let child = Command::new(program)
            .args(args)
            .env("SLURM_CONF", self.conf())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} starts: {e}"));
        self.daemons.push(child);
    }

    fn wait_for(&self, what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + 30 * SECOND;
        while !done() {
            let logs: Vec<String> = ["munged.log", "slurmctld.log", "slurmd.log"]
                .iter()
                .map(|f| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default())
                .collect();
            assert!(Instant::now() < deadline, "{what}: {logs:#?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A Slurm command of this cluster.
    fn cmd(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("SLURM_CONF", self.conf());
        command
    }

    /// An allocation of `cpus` CPUs, as `salloc` makes it.
    fn allocate(&self, cpus: usize) -> Job {
        let out = self
            .cmd("salloc")
            .args(["--no-shell", "-J", "mpcmc-test", "-n"])
            .arg(cpus.to_string())
            .output()
            .expect("salloc runs");
        let said = String::from_utf8_lossy(&out.stderr);
        let id = said
            .split("Granted job allocation ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("an allocation: {said}"))
            .to_owned();
        let out = self
            .cmd("squeue")
            .args(["-h", "-j", &id, "-o", "%N %C"])
            .output()
            .expect("squeue runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let (nodes, cpus) = text.trim().split_once(' ').expect("nodes and CPUs");
        Job {
            id,
            nodes: nodes.to_owned(),
            cpus: cpus.to_owned(),
        }
    }

    /// mpcmc inside `job`, as `salloc` or `sbatch` starts it.
    fn mpcmc(&self, job: &Job, flags: &[&str]) -> Mpcmc {
        Mpcmc::start_with(flags, |c| {
            for (name, _) in std::env::vars().filter(|(n, _)| n.starts_with("SLURM")) {
                c.env_remove(name);
            }
            c.env("SLURM_CONF", self.conf())
                .env("SLURM_JOB_ID", &job.id)
                .env("SLURM_JOB_NODELIST", &job.nodes)
                .env("SLURM_JOB_CPUS_PER_NODE", &job.cpus);
        })
    }

    /// mpcmc inside `job` with `flags`, its children up: `steps` job steps
    /// running.
    fn ready_mpcmc(&self, job: &Job, flags: &[&str], steps: usize) -> Mpcmc {
        let mut e = self.mpcmc(job, flags);
        e.handshake();
        e.send("isready");
        e.until("readyok", 60 * SECOND);
        self.wait_steps(job, steps);
        e
    }

    /// mpcmc's job steps running in `job`.
    fn steps(&self, job: &Job) -> Vec<String> {
        let out = self
            .cmd("squeue")
            .args(["--steps", "-h", "-j", &job.id, "-o", "%i %j"])
            .output()
            .expect("squeue runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.ends_with(" mpcmc-child"))
            .map(|l| l.split_whitespace().next().unwrap_or_default().to_owned())
            .collect()
    }

    /// Waits until `job` runs `n` of mpcmc's steps.
    fn wait_steps(&self, job: &Job, n: usize) {
        let deadline = Instant::now() + 20 * SECOND;
        loop {
            let steps = self.steps(job);
            if steps.len() == n {
                return;
            }
            assert!(Instant::now() < deadline, "{n} steps expected: {steps:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn cancel(&self, what: &str) {
        let ok = self
            .cmd("scancel")
            .arg(what)
            .status()
            .expect("scancel runs")
            .success();
        assert!(ok, "scancel {what}");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // The jobs first (a failed test leaves them), then the daemons.
        let _ = self.cmd("scancel").args(["--user", "root"]).status();
        std::thread::sleep(Duration::from_millis(500));
        for daemon in self.daemons.iter_mut().rev() {
            let _ = Command::new("kill").arg(daemon.id().to_string()).status();
            let deadline = Instant::now() + 10 * SECOND;
            while daemon.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether the decision line says the lookahead decided (over the steps),
/// not a fallback.
fn by_lookahead(lines: &[String]) -> bool {
    ["lookahead", "fortified", "refuted", "unchecked"]
        .iter()
        .any(|rule| {
            lines
                .iter()
                .any(|l| l.starts_with("info string") && l.contains(&format!("rule {rule}:")))
        })
}

/// A decision over `slurm /usr/games/stockfish` in an allocation of three
/// CPUs: two job steps (the root search keeps one CPU here), a legal move;
/// a step cancelled mid-search costs no time (the move comes when due),
/// the log names the step and why (srun's word), and the step is started
/// again; `quit` leaves no step behind.
#[test]
fn a_decision_runs_on_job_steps_and_outlives_a_cancelled_one() {
    let _one = one_at_a_time();
    let Some(cluster) = Cluster::start("steps", 4) else {
        return;
    };
    let job = cluster.allocate(3);
    let log = cluster.dir.join("mpcmc.log");
    let workers = format!("--workers=slurm {}", stockfish());
    let evaluator = format!("--evaluator={}", stockfish());
    let log_flag = format!("--log-file={}", log.display());
    let mut e = cluster.ready_mpcmc(&job, &[&workers, &evaluator, &log_flag], 2);
    e.send("position startpos");
    e.send("go nodes 200000");
    let (mv, lines) = e.bestmove(30 * SECOND);
    assert_legal(&position(None, &[]), &mv);
    assert!(by_lookahead(&lines), "{lines:?}");
    // A step cancelled mid-search.
    e.send("position startpos moves e2e4");
    let sent = Instant::now();
    e.send("go movetime 3000");
    std::thread::sleep(SECOND);
    let steps = cluster.steps(&job);
    cluster.cancel(&steps[0]);
    let (mv, _) = e.bestmove(10 * SECOND);
    let took = sent.elapsed();
    assert_legal(&position(None, &["e2e4"]), &mv);
    assert!(took < Duration::from_millis(3500), "{took:?}");
    // Started again for the next decisions.
    let deadline = Instant::now() + 30 * SECOND;
    while cluster.steps(&job).len() < 2 {
        assert!(Instant::now() < deadline, "the step started again");
        e.send("go nodes 20000");
        e.bestmove(10 * SECOND);
    }
    assert!(e.quit().success());
    cluster.wait_steps(&job, 0);
    let logged = std::fs::read_to_string(&log).expect("the log");
    let named = logged.lines().any(|l| {
        l.contains(" stderr: ")
            && l.contains(&format!("StepId={} ", steps[0]))
            && l.contains("launching")
    });
    let why = logged
        .lines()
        .any(|l| l.contains(" stderr: ") && (l.contains("Killed") || l.contains("CANCELLED")));
    assert!(
        named && why,
        "the log names the cancelled step and why: {logged}"
    );
    cluster.cancel(&job.id);
}

/// SIGTERM to mpcmc, the end of its input, and `kill -9` (srun's
/// parent-death signal is SIGTERM) end every job step it started.
#[test]
fn sigterm_eof_and_kill_end_every_job_step() {
    let _one = one_at_a_time();
    let Some(cluster) = Cluster::start("sigterm", 4) else {
        return;
    };
    let job = cluster.allocate(4);
    let workers = format!("--workers=slurm {}", stockfish());
    for end in ["SIGTERM", "EOF", "KILL"] {
        let mut e = cluster.ready_mpcmc(&job, &[&workers, "--evaluator=builtin"], 3);
        if end == "EOF" {
            e.close_stdin();
        } else {
            let ok = Command::new("kill")
                .args([
                    &format!("-{}", end.trim_start_matches("SIG")),
                    &e.pid().to_string(),
                ])
                .status()
                .expect("kill runs")
                .success();
            assert!(ok);
        }
        e.wait(10 * SECOND);
        cluster.wait_steps(&job, 0);
    }
    cluster.cancel(&job.id);
}

/// A node lost with its allocation (`scontrol update … State=DOWN`: Slurm
/// ends the job and its steps) costs no time: the move comes when due,
/// and the next `go`, with no step left to start, is still answered in
/// time by the root search here.
#[test]
fn a_lost_node_costs_no_time() {
    let _one = one_at_a_time();
    let Some(cluster) = Cluster::start("down", 4) else {
        return;
    };
    let job = cluster.allocate(3);
    let workers = format!("--workers=slurm {}", stockfish());
    let evaluator = format!("--evaluator={}", stockfish());
    let mut e = cluster.ready_mpcmc(&job, &[&workers, &evaluator], 2);
    e.send("position startpos");
    let sent = Instant::now();
    e.send("go movetime 2000");
    std::thread::sleep(Duration::from_millis(500));
    let ok = cluster
        .cmd("scontrol")
        .args([
            "update",
            &format!("NodeName={}", this_host()),
            "State=DOWN",
            "Reason=test",
        ])
        .status()
        .expect("scontrol runs")
        .success();
    assert!(ok, "the node set down");
    let (mv, _) = e.bestmove(10 * SECOND);
    assert_legal(&position(None, &[]), &mv);
    let took = sent.elapsed();
    assert!(took < Duration::from_millis(2500), "{took:?}");
    cluster.wait_steps(&job, 0);
    e.send("position startpos moves e2e4");
    let sent = Instant::now();
    e.send("go movetime 500");
    let (mv, _) = e.bestmove(10 * SECOND);
    assert_legal(&position(None, &["e2e4"]), &mv);
    let took = sent.elapsed();
    assert!(took < Duration::from_millis(1000), "{took:?}");
    assert!(e.quit().success());
}

/// `slurm builtin` runs this program's built-in engine (`mpcmc engine`)
/// as the job steps: a decision over them.
#[test]
fn slurm_builtin_runs_the_engine_alone_as_job_steps() {
    let _one = one_at_a_time();
    let Some(cluster) = Cluster::start("builtin", 4) else {
        return;
    };
    let job = cluster.allocate(3);
    let mut e = cluster.ready_mpcmc(&job, &["--workers=slurm builtin"], 2);
    e.send("position startpos moves e2e4");
    e.send("go nodes 100000");
    let (mv, lines) = e.bestmove(30 * SECOND);
    assert_legal(&position(None, &["e2e4"]), &mv);
    assert!(by_lookahead(&lines), "{lines:?}");
    assert!(e.quit().success());
    cluster.wait_steps(&job, 0);
    cluster.cancel(&job.id);
}

/// Outside an allocation a `slurm` entry is refused with one clear `info
/// string`, and the engine plays on without that pool.
#[test]
fn outside_an_allocation_a_slurm_entry_is_refused() {
    let workers = format!("--workers=slurm {}", stockfish());
    let mut e = Mpcmc::start_with(&[&workers], |c| {
        for (name, _) in std::env::vars().filter(|(n, _)| n.starts_with("SLURM")) {
            c.env_remove(name);
        }
    });
    e.handshake();
    e.send("position startpos");
    e.send("go movetime 300");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_legal(&position(None, &[]), &mv);
    assert!(
        lines.iter().any(|l| l.starts_with("info string")
            && l.contains("needs a Slurm allocation and SLURM_JOB_ID is not set")),
        "{lines:?}"
    );
    assert!(e.quit().success());
}

/// Measures, for the README (`cargo test --release --test slurm --
/// --ignored --nocapture`): the time from `isready` to `readyok` with 2
/// and 8 children as job steps against as local processes, and a
/// fixed-node decision (`ChildNodes`, `Memoryless`: every call from a
/// cleared hash) with the lookahead's child in a job step against the same
/// child here (the root search's child here both ways) — the same moves
/// and values, and what a call costs more ([`WayRun`]).
#[test]
#[ignore = "a measurement, not a test"]
fn measure_job_steps_against_local_children() {
    let _one = one_at_a_time();
    let Some(cluster) = Cluster::start("measure", 9) else {
        return;
    };
    let sf = stockfish();
    let ready = |e: &mut Mpcmc| {
        e.send("uci");
        e.until("uciok", 10 * SECOND);
        let sent = Instant::now();
        e.send("isready");
        e.until("readyok", 60 * SECOND);
        sent.elapsed()
    };
    for k in [2, 8] {
        let job = cluster.allocate(k + 1);
        let workers = format!("--workers=root: {sf}; slurm {sf}");
        let mut e = cluster.mpcmc(&job, &[&workers]);
        let steps = ready(&mut e);
        assert_eq!(cluster.steps(&job).len(), k);
        assert!(e.quit().success());
        cluster.cancel(&job.id);
        let workers = format!("--workers=root: {sf}; {sf} *{k}");
        let mut e = Mpcmc::start(&[&workers]);
        let local = ready(&mut e);
        assert!(e.quit().success());
        println!("isready to readyok, {k} children: job steps {steps:?}, local {local:?}");
    }
    // The lookahead's child in a job step and here (the root search's
    // here both ways), in memoryless calls: the same decisions, and the
    // way's cost in each call, from the log's lines.
    let job = cluster.allocate(2);
    let steps = WayRun::run(
        &cluster.dir,
        "job-step",
        &format!("root: {sf}; slurm {sf}"),
        |f| cluster.ready_mpcmc(&job, f, 1),
    );
    let local = WayRun::run(&cluster.dir, "local", &format!("root: {sf}; {sf}"), |f| {
        cluster.ready_mpcmc(&job, f, 0)
    });
    steps.compare(&local);
    cluster.cancel(&job.id);
}
