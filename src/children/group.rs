//! Every child process leads a process group of its own, and what it starts
//! stays in that group: a wrapper (`sh -c 'stockfish; true'`, a script that
//! runs the engine, `ssh`) and the engine under it end together.
//!
//! `PR_SET_PDEATHSIG` and `kill_on_drop` reach the direct child only; a
//! grandchild outlived `quit`, SIGTERM and the end of input. Now a
//! [`Group`] ends its whole group when it is dropped (after `quit`, or with
//! the client), and [`end_all`] ends every group still running when
//! mpcmc itself is told to stop by a signal. (Against `kill -9` of mpcmc
//! nothing runs: the direct child still dies with its parent, and an
//! engine under a wrapper sees the end of its input.)

use std::{
    collections::BTreeSet,
    sync::{Mutex, MutexGuard},
};

/// The groups of the children now running.
static RUNNING: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn running() -> MutexGuard<'static, BTreeSet<i32>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The process group a child leads (its id is the child's pid); ended on
/// drop.
#[derive(Debug)]
pub struct Group(i32);

impl Group {
    /// The group of a child started with `process_group(0)`.
    pub fn led_by(pid: u32) -> Option<Group> {
        let id = i32::try_from(pid).ok().filter(|&id| id > 1)?;
        running().insert(id);
        Some(Group(id))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        running().remove(&self.0);
        kill_group(self.0);
    }
}

/// Ends every child's group now (mpcmc was told to stop by a signal).
pub fn end_all() {
    for id in std::mem::take(&mut *running()) {
        kill_group(id);
    }
}

#[cfg(unix)]
fn kill_group(id: i32) {
    // SAFETY: kill(2) with a negative pid signals that process group; no
    // memory is touched. A group already gone answers ESRCH, ignored.
    unsafe {
        libc::kill(-id, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_: i32) {}
