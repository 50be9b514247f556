//! What the host does to mpcmc (issue 57): a memory control group as a
//! container sets one, and a `kill -9` that leaves mpcmc no chance to end
//! its children.

mod common;

use std::{
    path::{Path, PathBuf},
    thread,
    time::{Duration, Instant},
};

use common::{Mpcmc, SECOND, assert_legal, kill9_then_left};

/// A memory control group made for one test (cgroup v1's `memory`
/// hierarchy or v2's), removed when dropped; as `docker run --memory`
/// makes one.
struct MemoryGroup {
    dir: PathBuf,
    v2: bool,
}

impl MemoryGroup {
    /// A group limited to `bytes`; `None` (said on stderr) where this
    /// machine lets the test make none (not root, no memory controller).
    fn new(name: &str, bytes: u64) -> Option<MemoryGroup> {
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let v2 = Path::new("/sys/fs/cgroup");
        let (top, v2) = if v1.join("memory.limit_in_bytes").exists() {
            (v1, false)
        } else if std::fs::read_to_string(v2.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == "memory"))
        {
            let _ = std::fs::write(v2.join("cgroup.subtree_control"), "+memory");
            (v2, true)
        } else {
            eprintln!("no memory control group hierarchy here: not tested");
            return None;
        };
        let group = MemoryGroup {
            dir: top.join(format!("{name}-{}", std::process::id())),
            v2,
        };
        let limit = if v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        let made = std::fs::create_dir(&group.dir)
            .and_then(|()| std::fs::write(group.dir.join(limit), bytes.to_string()));
        if let Err(e) = made {
            eprintln!(
                "cannot make memory group {}: {e}: not tested",
                group.dir.display()
            );
            return None;
        }
        Some(group)
    }

    /// Starts mpcmc with `flags` in the group, as a container's processes
    /// are from their start.
    fn start(&self, flags: &[&str]) -> Mpcmc {
        use std::os::unix::{ffi::OsStrExt, process::CommandExt};
        let procs = std::ffi::CString::new(self.dir.join("cgroup.procs").as_os_str().as_bytes())
            .expect("a path without NUL");
        Mpcmc::start_with(flags, move |command| {
            // SAFETY: between fork and exec only open, write and close, on
            // a path made before the fork; "0" is the writing process.
            unsafe {
                command.pre_exec(move || {
                    let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                    libc::close(fd);
                    if written != 1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        })
    }

    /// The most memory the group's processes held at once, in MB.
    fn peak_mb(&self) -> Option<u64> {
        let file = if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        let bytes: u64 = std::fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        Some(bytes / (1024 * 1024))
    }

    /// How many times the kernel killed a process of the group for memory.
    fn oom_kills(&self) -> u64 {
        let file = if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        std::fs::read_to_string(self.dir.join(file))
            .ok()
            .and_then(|text| {
                let line = text.lines().find(|l| l.starts_with("oom_kill "))?;
                line.split_whitespace().nth(1)?.parse().ok()
            })
            .unwrap_or(0)
    }
}

impl Drop for MemoryGroup {
    fn drop(&mut self) {
        // Empty by now: its processes have ended.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// In an 8 GB memory group (`docker run --memory=8g`), `Hash` 65 536 is
/// held to half the group's limit, said so, and mpcmc plays on; the
/// kernel kills nothing. (The cap read the machine's 24 GB: 12 052 MB, and
/// mpcmc was killed as the table filled; the table was written whole at
/// its creation, so the first search waited for it.)
#[test]
fn hash_is_held_to_the_memory_group_it_runs_in() {
    const GB: u64 = 1 << 30;
    let Some(group) = MemoryGroup::new("mpcmc-hash", 8 * GB) else {
        return;
    };
    for flags in [&[][..], &["engine"][..]] {
        let mut e = group.start(flags);
        e.handshake();
        e.send("setoption name Hash value 65536");
        e.send("position startpos");
        let started = Instant::now();
        e.send("go nodes 200000");
        let (mv, lines) = e.bestmove(60 * SECOND);
        let took = started.elapsed();
        assert_legal(&shakmaty::Chess::default(), &mv);
        let said = lines
            .iter()
            .find(|l| l.starts_with("info string Hash 65536 MB"))
            .unwrap_or_else(|| panic!("{flags:?}: no word on Hash: {lines:#?}"));
        assert!(
            said.contains("the 8192 MB limit of this process's memory control group")
                && said.contains("4096 MB used"),
            "{said}"
        );
        e.send("isready");
        e.until("readyok", 10 * SECOND);
        assert!(e.quit().success(), "{flags:?}");
        eprintln!(
            "{flags:?}: '{said}'; the first go nodes 200000 took {took:?}; the group's peak {:?} MB",
            group.peak_mb()
        );
    }
    assert_eq!(group.oom_kills(), 0, "the kernel killed for memory");
}

/// The processes under `pid`, its children's children included.
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(p) = queue.pop() {
        for child in common::children_of(p) {
            found.push(child);
            queue.push(child);
        }
    }
    found
}

/// A child engine behind a wrapper, whose engine hangs after `go`
/// (ignores SIGTERM, stops reading), ends with mpcmc when mpcmc is killed
/// with SIGKILL: the wrapper died with its parent, but the engine under it
/// never learnt and ran on (its process group was never signalled).
#[test]
fn a_hung_engine_behind_a_wrapper_ends_with_a_killed_mpcmc() {
    let dir = std::env::temp_dir().join(format!("mpcmc-wrapped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let engine = dir.join("hung-engine.sh");
    std::fs::write(
        &engine,
        "#!/bin/sh\n\
         while read -r l; do case \"$l\" in\n\
         uci) echo uciok;; isready) echo readyok;;\n\
         go*) trap \"\" TERM; sleep 1000; sleep 1000;;\n\
         quit) exit 0;; esac; done\n",
    )
    .expect("engine script");
    let wrapper = dir.join("wrapper.sh");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\n{}\necho done\n", engine.display()),
    )
    .expect("wrapper script");
    for script in [&engine, &wrapper] {
        let status = std::process::Command::new("chmod")
            .arg("+x")
            .arg(script)
            .status()
            .expect("chmod");
        assert!(status.success());
    }
    for command in [
        format!("sh -c '{}; true'", engine.display()),
        wrapper.display().to_string(),
    ] {
        let mut e = Mpcmc::start(&[&format!("--evaluator={command}")]);
        e.handshake();
        e.send("position startpos");
        e.send("go infinite");
        // Until the engine hangs in its `sleep`.
        let deadline = Instant::now() + 10 * SECOND;
        let mut tree = descendants(e.pid());
        while !tree.iter().any(|&p| command_of(p).starts_with("sleep")) && Instant::now() < deadline
        {
            thread::sleep(Duration::from_millis(20));
            tree = descendants(e.pid());
        }
        assert!(
            tree.iter().any(|&p| command_of(p).starts_with("sleep")),
            "{command}: the engine never hung: {:?}",
            tree.iter().map(|&p| command_of(p)).collect::<Vec<_>>()
        );
        let left: Vec<String> = kill9_then_left(e.pid(), &tree, 5 * SECOND)
            .into_iter()
            .map(|p| format!("{p} {}", command_of(p)))
            .collect();
        assert!(
            left.is_empty(),
            "{command}: outlived a killed mpcmc: {left:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A process's command line, its words joined by spaces.
fn command_of(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            String::from_utf8_lossy(&bytes)
                .split('\0')
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}
