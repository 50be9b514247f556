//! Every child process leads a process group of its own, and what it starts
//! stays in that group: a wrapper (`sh -c 'stockfish; true'`, a script that
//! runs the engine, `ssh`) and the engine under it end together.
//!
//! `PR_SET_PDEATHSIG` and `kill_on_drop` reach the direct child only; a
//! grandchild outlived `quit`, SIGTERM and the end of input. Now a
//! [`Group`] ends its whole group when it is dropped (after `quit`, or with
//! the client), and [`end_all`] ends every group still running when
//! mpcmc itself is told to stop by a signal. Against `kill -9` of mpcmc
//! nothing of mpcmc runs: the child's [`supervisor`](super::supervisor),
//! which leads the group, ends it then.

use std::{
    collections::BTreeMap,
    sync::{Mutex, MutexGuard},
};

/// How a child's group is ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// SIGKILL: nothing in the group may outlive mpcmc.
    Kill,
    /// SIGTERM, for a launcher whose own clean-up must run: `srun` killed
    /// with SIGKILL left its job step (and the engine) running on the
    /// cluster (measured, Slurm 22.05); on SIGTERM it cancels the step.
    Term,
}

/// The groups of the children now running, and how each is ended.
static RUNNING: Mutex<BTreeMap<i32, End>> = Mutex::new(BTreeMap::new());

fn running() -> MutexGuard<'static, BTreeMap<i32, End>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The process group a child leads (its id is the child's pid); ended on
/// drop.
#[derive(Debug)]
pub struct Group(i32, End);

impl Group {
    /// The group of a child started with `process_group(0)`, ended by
    /// `end`.
    pub fn led_by(pid: u32, end: End) -> Option<Group> {
        let id = i32::try_from(pid).ok().filter(|&id| id > 1)?;
        running().insert(id, end);
        Some(Group(id, end))
    }

    /// Ends the group now (it is ended again when dropped).
    pub fn end(&self) {
        end_group(self.0, self.1);
    }

    /// How it is ended.
    pub fn ends_by(&self) -> End {
        self.1
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        running().remove(&self.0);
        end_group(self.0, self.1);
    }
}

/// Ends every child's group now (mpcmc was told to stop by a signal).
pub fn end_all() {
    for (id, end) in std::mem::take(&mut *running()) {
        end_group(id, end);
    }
}

/// The signal that ends a child's process itself when mpcmc dies
/// (`PR_SET_PDEATHSIG`).
#[cfg(unix)]
pub fn signal(end: End) -> i32 {
    match end {
        End::Kill => libc::SIGKILL,
        End::Term => libc::SIGTERM,
    }
}

#[cfg(unix)]
fn end_group(id: i32, end: End) {
    // SAFETY: kill(2) with a negative pid signals that process group; no
    // memory is touched. A group already gone answers ESRCH, ignored.
    unsafe {
        libc::kill(-id, signal(end));
    }
}

#[cfg(not(unix))]
fn end_group(_: i32, _: End) {}
