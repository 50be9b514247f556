//! The built-in engine: an alpha-beta searcher over shakmaty that lives in
//! this crate, so mpcmc runs with nothing else installed.
//!
//! One instance per worker: `Threads` instances search in parallel without a
//! process. The same code answers `mpcmc engine`, the standalone UCI engine.
//!
//! (Interface fixed; the search is being written.)

use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::{Duration, Instant},
};

use shakmaty::{Chess, Move, Position};

use crate::uci::codec::{Bound, ScoreKind, UciScore};

/// What limits one search; `None`/`false` fields do not limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    pub movetime: Option<Duration>,
    /// Our clock: time left, increment, moves to the next control.
    pub clock: Option<Clock>,
    /// Search until `stop` (depth limits still apply).
    pub infinite: bool,
}

/// The side to move's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub time: Duration,
    pub inc: Duration,
    pub movestogo: Option<u32>,
}

/// One completed iteration, as an `info` line reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub depth: u32,
    pub seldepth: u32,
    /// From the side to move at the root.
    pub score: UciScore,
    pub nodes: u64,
    pub time: Duration,
    pub pv: Vec<Move>,
}

/// The result of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// `None` only when the root has no legal move.
    pub best: Option<Move>,
    pub ponder: Option<Move>,
    /// From the side to move at the root; `None` if no iteration completed.
    pub score: Option<UciScore>,
    pub depth: u32,
    pub nodes: u64,
    pub pv: Vec<Move>,
}

/// A built-in engine instance with its own hash table.
pub struct Engine {
    hash_mb: usize,
}

impl Engine {
    pub fn new(hash_mb: usize) -> Engine {
        Engine { hash_mb }
    }

    /// Resizes the hash table (clearing it).
    pub fn set_hash(&mut self, mb: usize) {
        self.hash_mb = mb;
    }

    /// Forgets everything learned (`ucinewgame`).
    pub fn clear(&mut self) {}

    /// Searches `root`. `history` holds the Zobrist hashes
    /// (`Zobrist64`, `EnPassantMode::Legal`) of the game's positions before
    /// `root`, oldest first, for repetitions. Returns when a limit is reached
    /// or `stop` is set (checked often: a stop is honoured within about a
    /// millisecond). `on_progress` sees every completed iteration.
    pub fn search(
        &mut self,
        root: &Chess,
        history: &[u64],
        limits: &Limits,
        stop: &AtomicBool,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Outcome {
        // Placeholder until the search lands: the first legal move.
        let _ = (history, limits, self.hash_mb);
        let started = Instant::now();
        let best = root.legal_moves().first().copied();
        if !stop.load(Ordering::Relaxed)
            && let Some(m) = best
        {
            on_progress(&Progress {
                depth: 1,
                seldepth: 1,
                score: UciScore {
                    kind: ScoreKind::Cp(0),
                    bound: Bound::Exact,
                },
                nodes: 1,
                time: started.elapsed(),
                pv: vec![m],
            });
        }
        Outcome {
            best,
            ponder: None,
            score: None,
            depth: 1,
            nodes: 1,
            pv: best.into_iter().collect(),
        }
    }
}
