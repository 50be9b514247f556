//! A small supervisor between mpcmc and each child process, so that the
//! child's whole process group ends with mpcmc however mpcmc ends —
//! `kill -9` included.
//!
//! The kernel's parent-death signal (`PR_SET_PDEATHSIG`) reaches only the
//! direct child: an engine started through a wrapper (`sh -c 'engine;
//! true'`, a script) that hung after `go` outlived a killed mpcmc, its
//! process group never signalled. So the direct child is mpcmc's own
//! binary in supervisor mode (`mpcmc` [`ARG`] `END PARENT -- PROGRAM
//! ARGS…`): it leads the child's process group, starts the engine's
//! command in it on mpcmc's pipes, and lives as long as the engine. When
//! mpcmc dies (its parent-death signal, or its parent no longer mpcmc at
//! a check every [`CHECK`]) it ends the group: SIGKILL, or SIGTERM first
//! for a launcher that cleans up (`srun` cancels its job step), then
//! SIGKILL after [`TERM_GRACE`]. When the engine ends, it ends the same
//! way (its exit code, or its signal), so mpcmc sees what it saw before.
//!
//! A fresh process, not a fork of mpcmc: a forked copy would hold every
//! page of mpcmc's memory (a hash table of gigabytes) copy-on-write for
//! as long as it lives. Only the mpcmc binary can be one: [`enable`] is
//! called by its `main`; elsewhere (the library's own tests) children are
//! started directly, with the parent-death signal alone.

use std::{
    ffi::OsString,
    io,
    path::{Path, PathBuf},
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use crate::children::group::End;

/// The first argument that puts the mpcmc binary in supervisor mode.
pub const ARG: &str = "--supervise-child";

/// How often the supervisor checks that its parent is still mpcmc.
pub const CHECK: Duration = Duration::from_millis(250);

/// How long a launcher ended by SIGTERM has to clean up before SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(10);

static ENABLED: AtomicBool = AtomicBool::new(false);

/// This process is the mpcmc binary (`/proc/self/exe` can supervise):
/// children are started under a supervisor from now on (Linux, with
/// `/proc` mounted; else directly, as before).
pub fn enable() {
    let can = cfg!(target_os = "linux") && Path::new("/proc/self/exe").exists();
    ENABLED.store(can, Ordering::Relaxed);
}

/// Whether children are started under a supervisor.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The command line that runs `program` with `args` under a supervisor
/// ending its group by `end`: the program found first (on `PATH`, as the
/// engine would be), so that one that is not there fails to start here,
/// as without a supervisor.
pub fn command_line(
    program: &str,
    args: &[String],
    end: End,
) -> io::Result<(PathBuf, Vec<OsString>)> {
    let found = find_program(program)?;
    let mut words: Vec<OsString> = vec![
        ARG.into(),
        end_word(end).into(),
        std::process::id().to_string().into(),
        "--".into(),
        found.into_os_string(),
    ];
    words.extend(args.iter().map(OsString::from));
    Ok((PathBuf::from("/proc/self/exe"), words))
}

fn end_word(end: End) -> &'static str {
    match end {
        End::Kill => "kill",
        End::Term => "term",
    }
}

/// `program` as `execvp` finds it: a path as it is, a bare name on `PATH`;
/// a file that is not there, or not executable, is an error of the kind
/// the system would give (`NotFound`, `PermissionDenied`).
fn find_program(program: &str) -> io::Result<PathBuf> {
    let executable = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let denied = || {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("'{program}' is not a program this user may run"),
        )
    };
    if program.contains('/') {
        return match executable(Path::new(program)) {
            Ok(true) => Ok(PathBuf::from(program)),
            Ok(false) => Err(denied()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("there is no program '{program}'"),
            )),
            Err(e) => Err(e),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut found_but_denied = false;
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        match executable(&candidate) {
            Ok(true) => return Ok(candidate),
            Ok(false) => found_but_denied = true,
            Err(_) => {}
        }
    }
    Err(if found_but_denied {
        denied()
    } else {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("there is no program '{program}' on PATH"),
        )
    })
}

/// Supervisor mode, when the process's arguments ask for it: runs the
/// child's command to its end and returns the code to exit with (the
/// process may also end by the child's signal, or by ending its group).
pub fn run_if_asked() -> Option<i32> {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().and_then(|a| a.to_str()) != Some(ARG) {
        return None;
    }
    Some(supervise(&args[1..]))
}

#[cfg(target_os = "linux")]
fn supervise(args: &[OsString]) -> i32 {
    let word = |i: usize| args.get(i).and_then(|a| a.to_str());
    let end = match word(0) {
        Some("kill") => End::Kill,
        Some("term") => End::Term,
        _ => return usage(),
    };
    let Some(parent) = word(1).and_then(|p| p.parse::<libc::pid_t>().ok()) else {
        return usage();
    };
    if word(2) != Some("--") || args.len() < 4 {
        return usage();
    }
    linux::supervise(end, parent, &args[3], &args[4..])
}

#[cfg(not(target_os = "linux"))]
fn supervise(_: &[OsString]) -> i32 {
    usage()
}

fn usage() -> i32 {
    eprintln!("mpcmc {ARG} kill|term PARENT_PID -- PROGRAM [ARGS...]: mpcmc starts this itself");
    2
}

#[cfg(target_os = "linux")]
mod linux {
    use std::{
        ffi::OsString,
        os::unix::process::{CommandExt, ExitStatusExt},
        process::{Child, Command, ExitStatus},
        time::Instant,
    };

    use super::{CHECK, TERM_GRACE};
    use crate::children::group::{End, signal};

    /// The signal the kernel sends the supervisor when mpcmc dies.
    const PARENT_DIED: libc::c_int = libc::SIGUSR1;

    /// The signals the supervisor waits for rather than dies of: the
    /// child's end, mpcmc's, and those sent to the whole group (the child
    /// gets them too, and the supervisor ends when it does).
    fn waited_for() -> libc::sigset_t {
        // SAFETY: a sigset_t is plain data that sigemptyset initialises.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in [
                libc::SIGCHLD,
                PARENT_DIED,
                libc::SIGTERM,
                libc::SIGINT,
                libc::SIGHUP,
                libc::SIGPIPE,
            ] {
                libc::sigaddset(&mut set, s);
            }
            set
        }
    }

    pub fn supervise(end: End, parent: libc::pid_t, program: &OsString, args: &[OsString]) -> i32 {
        let set = waited_for();
        // SAFETY: plain system calls on this single-threaded process.
        unsafe {
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_DIED);
        }
        if !parent_alive(parent) {
            return 1;
        }
        let me = std::process::id() as libc::pid_t;
        let end_signal = signal(end);
        let mut command = Command::new(program);
        command.args(args);
        // SAFETY: between fork and exec only async-signal-safe calls
        // (sigprocmask, prctl, getppid, _exit), nothing allocated.
        unsafe {
            command.pre_exec(move || {
                let mut none: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut none);
                libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                // The engine ends too should the supervisor itself be
                // killed (by `kill_on_drop`).
                if libc::prctl(libc::PR_SET_PDEATHSIG, end_signal) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != me {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                eprintln!(
                    "mpcmc supervisor: cannot start {}: {e}",
                    program.to_string_lossy()
                );
                return 127;
            }
        };
        let_go_of_the_pipes();
        loop {
            let got = wait_for_signal(&set);
            if let Ok(Some(status)) = child.try_wait() {
                return end_as(status);
            }
            if got == Some(PARENT_DIED) || !parent_alive(parent) {
                return end_group(end, &mut child);
            }
        }
    }

    /// Whether mpcmc is still this process's parent (an orphan is adopted
    /// by init or a subreaper).
    fn parent_alive(parent: libc::pid_t) -> bool {
        // SAFETY: getppid has no failure and touches no memory.
        unsafe { libc::getppid() == parent }
    }

    /// The next of the signals waited for, or `None` after [`CHECK`].
    fn wait_for_signal(set: &libc::sigset_t) -> Option<libc::c_int> {
        let timeout = libc::timespec {
            tv_sec: CHECK.as_secs() as libc::time_t,
            tv_nsec: CHECK.subsec_nanos() as libc::c_long,
        };
        // SAFETY: the set and timeout outlive the call; no info asked.
        let got = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &timeout) };
        (got > 0).then_some(got)
    }

    /// Only the engine holds mpcmc's pipes to it: the supervisor's copies
    /// of stdin and stdout become `/dev/null`, so that the engine's end is
    /// an end of output to mpcmc at once. (Its stderr stays, for its own
    /// last word; it ends with the supervisor.)
    fn let_go_of_the_pipes() {
        // SAFETY: open and dup2 on descriptors this process owns.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if null >= 0 {
                libc::dup2(null, 0);
                libc::dup2(null, 1);
                if null > 2 {
                    libc::close(null);
                }
            }
        }
    }

    /// mpcmc died: its child's group ends (the supervisor with it).
    fn end_group(end: End, child: &mut Child) -> i32 {
        let leads = {
            // SAFETY: getpgrp and getpid have no failure.
            unsafe { libc::getpgrp() == libc::getpid() }
        };
        let target = if leads {
            // SAFETY: getpgrp has no failure.
            -unsafe { libc::getpgrp() }
        } else {
            child.id() as libc::pid_t
        };
        let kill = |sig| {
            // SAFETY: signals this process's own group, or its child.
            unsafe { libc::kill(target, sig) };
        };
        if end == End::Term {
            // The launcher's clean-up runs; the supervisor waits for it.
            kill(libc::SIGTERM);
            let deadline = Instant::now() + TERM_GRACE;
            let set = waited_for();
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                wait_for_signal(&set);
            }
        }
        kill(libc::SIGKILL);
        let _ = child.kill();
        let _ = child.wait();
        1
    }

    /// Ends as the child ended: its code, or its signal.
    fn end_as(status: ExitStatus) -> i32 {
        if let Some(code) = status.code() {
            return code;
        }
        let sig = status.signal().unwrap_or(libc::SIGKILL);
        // SAFETY: no core file (the engine's crash is not the
        // supervisor's), default disposition, unblocked, then the same
        // signal to this process; signal numbers come from the kernel.
        unsafe {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            libc::signal(sig, libc::SIG_DFL);
            let mut one: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut one);
            libc::sigaddset(&mut one, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
            libc::raise(sig);
        }
        128 + sig
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_found_as_exec_would_find_it() {
        assert_eq!(find_program("sh").map(|p| p.is_absolute()).ok(), Some(true));
        assert_eq!(find_program("/bin/sh").ok(), Some(PathBuf::from("/bin/sh")));
        assert_eq!(
            find_program("no-such-engine-anywhere")
                .map_err(|e| e.kind())
                .err(),
            Some(io::ErrorKind::NotFound)
        );
        assert_eq!(
            find_program("/nonexistent/engine")
                .map_err(|e| e.kind())
                .err(),
            Some(io::ErrorKind::NotFound)
        );
        // A directory, or a file that may not be run.
        assert_eq!(
            find_program("/tmp").map_err(|e| e.kind()).err(),
            Some(io::ErrorKind::PermissionDenied)
        );
        let (program, words) =
            command_line("sh", &["-c".into(), "true".into()], End::Term).expect("sh is there");
        assert_eq!(program, PathBuf::from("/proc/self/exe"));
        assert_eq!(words[0], ARG);
        assert_eq!(words[1], "term");
        assert_eq!(words[3], "--");
        assert_eq!(&words[5..], &["-c", "true"]);
    }
}
