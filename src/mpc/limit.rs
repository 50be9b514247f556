//! The limit of one child search ([`ChildLimit`]) and the least a call is
//! worth: the words every part of the decision and the child side speak,
//! resting on nothing of the decision itself.

use std::time::Duration;

use mpcmc_protocol::Go;

/// The limit of one child search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildLimit {
    Nodes(u64),
    MoveTime(Duration),
    Depth(u32),
    /// A game clock (`go wtime … btime … winc … binc … [movestogo …]`): the
    /// child manages its own time (a decision's root search on the game's
    /// clock; match play).
    Clock {
        wtime: Duration,
        btime: Duration,
        winc: Duration,
        binc: Duration,
        movestogo: Option<u32>,
    },
}

/// As the child is asked it: the `go` line's limits (`nodes 5000`,
/// `wtime 9950 btime 10000 winc 100 binc 100`).
impl std::fmt::Display for ChildLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let go = self.go().to_string();
        f.write_str(go.strip_prefix("go ").unwrap_or(&go))
    }
}

impl ChildLimit {
    /// This limit made `factor` times larger (a depth limit grows by one
    /// ply a doubling; a clock stays the clock).
    pub fn scaled(self, factor: u32) -> ChildLimit {
        match self {
            ChildLimit::Nodes(n) => ChildLimit::Nodes(n.saturating_mul(u64::from(factor))),
            ChildLimit::MoveTime(t) => ChildLimit::MoveTime(t.saturating_mul(factor)),
            ChildLimit::Depth(d) => ChildLimit::Depth(d + factor.max(1).ilog2()),
            clock @ ChildLimit::Clock { .. } => clock,
        }
    }

    /// The `go` that asks a child for this search: the one conversion from
    /// a decision's limit to the wire (the client sends it; the in-process
    /// built-in engine reads it as the standalone engine reads a GUI's).
    pub fn go(self) -> Go {
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        match self {
            ChildLimit::Nodes(n) => Go {
                nodes: Some(n),
                ..Go::default()
            },
            ChildLimit::MoveTime(t) => Go {
                movetime: Some(u64::try_from(t.as_millis()).unwrap_or(u64::MAX).max(1)),
                ..Go::default()
            },
            ChildLimit::Depth(d) => Go {
                depth: Some(d),
                ..Go::default()
            },
            ChildLimit::Clock {
                wtime,
                btime,
                winc,
                binc,
                movestogo,
            } => Go {
                wtime: Some(ms(wtime)),
                btime: Some(ms(btime)),
                winc: Some(ms(winc)),
                binc: Some(ms(binc)),
                movestogo,
                ..Go::default()
            },
        }
    }
}

/// Fewer nodes a call than this are not worth a child round trip.
pub const MIN_CALL_NODES: u64 = 64;
