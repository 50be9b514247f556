//! What goes wrong with a child ([`ChildError`], naming the child and what
//! it was doing) and why a search brings no report ([`SearchError`]).

use std::time::Duration;

use mpcmc_protocol::game::Rules;

use crate::{
    children::command::CommandError,
    mpc::{ChildFault, Role},
};

/// What went wrong with a child, naming the child and what it was doing.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    #[error(transparent)]
    Command(#[from] CommandError),
    #[error("could not start '{command}': {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("{engine} died while {doing} ({status})")]
    Died {
        engine: String,
        doing: String,
        status: String,
    },
    /// The child printed a line longer than any UCI line
    /// ([`MAX_LINE`](mpcmc_protocol::lines::MAX_LINE)): its output cannot
    /// be trusted, and it is restarted as one that died.
    #[error(
        "{engine} printed a line of more than {} bytes while {doing}: not UCI",
        mpcmc_protocol::lines::MAX_LINE
    )]
    Overlong { engine: String, doing: String },
    #[error("{engine} stalled: no {waiting_for} within {after:?}")]
    Stalled {
        engine: String,
        waiting_for: &'static str,
        after: Duration,
    },
    /// A worker asked for a role its `Workers` entry does not serve (the
    /// pool places every call on a worker that does).
    #[error("worker {worker} has no child for the {role} role")]
    NoChild { worker: usize, role: Role },
    /// The game (`UCI_Variant`) is not one the child plays: no restart
    /// helps.
    #[error("{engine} does not play {variant} (its UCI_Variant offers: {offered})")]
    NoVariant {
        engine: String,
        variant: Rules,
        /// The child's `UCI_Variant` values, or `chess only`.
        offered: String,
    },
    #[error("{engine} answered '{line}' in position {fen}: {reason}")]
    BadAnswer {
        engine: String,
        line: String,
        fen: String,
        reason: String,
    },
}

/// Why a search brought no report: the asker's own doing (it cancelled,
/// or shut the pool down), or a child's fault.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("the search was cancelled before it had a move")]
    Cancelled,
    #[error("the engine pool is shut down")]
    PoolClosed,
    /// Every worker serving the role is down (`Workers`: hosts that cannot
    /// be reached): the search fails at once rather than wait for one.
    #[error("no worker of the {0} role is up")]
    NoWorker(Role),
    #[error(transparent)]
    Child(#[from] ChildError),
}

impl ChildError {
    /// Names the searched position in a bad answer that was read before the
    /// position was at hand.
    pub(super) fn at(self, place: impl FnOnce() -> String) -> ChildError {
        match self {
            ChildError::BadAnswer {
                engine,
                line,
                fen,
                reason,
            } if fen.is_empty() => ChildError::BadAnswer {
                engine,
                line,
                fen: place(),
                reason,
            },
            other => other,
        }
    }

    /// Whether the child process is no longer usable and must be restarted.
    pub fn needs_restart(&self) -> bool {
        self.worth_retrying() || matches!(self, ChildError::Stalled { .. })
    }

    /// Whether the search is worth asking once more, of a fresh child: the
    /// child dropped it (died, printed what is not UCI, answered wrongly).
    /// A stall is not: it already cost a whole deadline.
    pub fn worth_retrying(&self) -> bool {
        matches!(
            self,
            ChildError::Died { .. } | ChildError::Overlong { .. } | ChildError::BadAnswer { .. }
        )
    }
}

impl SearchError {
    /// Whether the child that failed must be restarted.
    pub fn needs_restart(&self) -> bool {
        matches!(self, SearchError::Child(e) if e.needs_restart())
    }
}

impl ChildFault for SearchError {
    fn is_stall(&self) -> bool {
        matches!(self, SearchError::Child(ChildError::Stalled { .. }))
    }

    fn is_cancelled(&self) -> bool {
        matches!(self, SearchError::Cancelled | SearchError::PoolClosed)
    }
}
