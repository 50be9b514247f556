//! Starting a child process: its command line (under the
//! [`supervisor`] in the mpcmc binary, else directly, ending with mpcmc),
//! its pipes, a process group of its own, its stderr logged.

use std::process::Stdio;

use tokio::{
    io::BufReader,
    process::{Child, ChildStdin, ChildStdout, Command},
};

use crate::children::{
    command::EngineCommand,
    error::ChildError,
    group::{self, End, Group},
    supervisor,
};

/// A child process started, its pipes taken.
pub struct Started {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    /// The group it leads, ended when this is dropped.
    pub group: Option<Group>,
}

/// Starts `command_line` as a child process whose stderr is logged under
/// `label`.
pub fn start(command_line: &str, label: &str) -> Result<Started, ChildError> {
    let command = EngineCommand::parse(command_line)?;
    let end = command.end();
    let spawn_error = |source| ChildError::Spawn {
        command: command_line.to_owned(),
        source,
    };
    let mut child = if supervisor::enabled() {
        // The supervisor ends the group should mpcmc die.
        let (program, args) =
            supervisor::command_line(&command.program, &command.args, end).map_err(spawn_error)?;
        let mut child = Command::new(program);
        // Named as what it is in `ps`, not `/proc/self/exe`.
        child.arg0("mpcmc").args(args);
        child
    } else {
        let mut child = Command::new(&command.program);
        child.args(&command.args);
        die_with_parent(&mut child, end);
        child
    };
    child
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    child.process_group(0);
    // A launcher ended by SIGTERM must not be killed first: its group
    // is ended its way when the client goes.
    child.kill_on_drop(end == End::Kill);
    let mut child = child.spawn().map_err(spawn_error)?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(ChildError::Spawn {
            command: command_line.to_owned(),
            source: std::io::Error::other("no pipes to the child"),
        });
    };
    let group = child.id().and_then(|pid| Group::led_by(pid, end));
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(log_stderr(stderr, label.to_owned()));
    }
    Ok(Started {
        child,
        stdin,
        stdout,
        group,
    })
}

/// Logs what a child writes on its stderr, a line at a time, with its
/// label, until it closes it: an engine's own complaints, and a
/// launcher's word on why its child ended (`srun`: the step, cancelled
/// or timed out, and the node).
async fn log_stderr(stderr: tokio::process::ChildStderr, label: String) {
    use tokio::io::AsyncBufReadExt;
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    // Read to the end whatever it writes (bytes that are not UTF-8
    // included): a pipe closed early would end the child on SIGPIPE.
    while reader
        .read_until(b'\n', &mut line)
        .await
        .is_ok_and(|n| n > 0)
    {
        let text = String::from_utf8_lossy(&line);
        tracing::info!("{label} stderr: {}", text.trim_end());
        line.clear();
    }
}

/// Has a child started without a [`supervisor`] (outside the mpcmc
/// binary: the library's tests) end when mpcmc dies: `kill_on_drop` and
/// `quit` cover every orderly end, but a child that ignores SIGTERM and
/// stops reading its stdin would outlive a killed mpcmc. On Linux the
/// kernel sends it `end`'s signal when its parent thread exits (the
/// runtime's worker threads live as long as mpcmc): SIGKILL, SIGTERM for a
/// launcher that must clean up (`srun`). It reaches the direct child only:
/// the supervisor ends the whole group.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command, end: End) {
    let signal = group::signal(end);
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (prctl, getppid, _exit), and nothing is allocated.
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the prctl took effect.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut Command, _: End) {}
