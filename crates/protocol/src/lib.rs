//! The UCI protocol for mpcmc: every line a GUI or an engine sends, parsed
//! and written back, over shakmaty types ([`codec`]); the game a `position`
//! command describes, with the rules that end it and the one Zobrist key
//! ([`game`]); the one writer of an engine's stdout ([`output`]); and the
//! engine side of a session, for any searcher ([`session`]); the
//! `UCI_Opponent` value ([`opponent`]); lines read off either side's
//! stream, bounded and leniently decoded ([`lines`]). It depends on
//! nothing else of mpcmc's: the built-in engine and the meta-engine both
//! build on it.
// What faces the wire never panics on what comes over it.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod codec;
pub mod game;
pub mod lines;
pub mod moves;
pub mod opponent;
pub mod output;
pub mod session;

pub use codec::*;
pub use moves::{GameMove, MoveText};
pub use opponent::{OpponentError, UciOpponent};

/// A wait with no deadline in effect (a year), where an API needs one:
/// `go infinite` until `stop`, a search pondering until `ponderhit`.
pub const NO_DEADLINE: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);
