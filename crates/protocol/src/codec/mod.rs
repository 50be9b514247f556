//! The UCI wire format, both directions, over shakmaty types.
//!
//! One codec serves both sides of mpcmc: it parses what a GUI sends us
//! ([`GuiCommand`]) and what a child engine sends us ([`EngineLine`]), and it
//! writes both kinds of line back (`Display`). Parsing is lenient where the
//! protocol is loose (unknown tokens in `info`, unknown commands) and strict
//! where a mistake would cost a game (`bestmove`, numbers, FENs). A problem that
//! leaves the rest of a line usable is reported next to the parsed command as a
//! [`ParseError`] in [`Parsed::problems`], so the session can answer
//! `info string` and carry on with what was understood.
//!
//! ```
//! use mpcmc_protocol::{EngineLine, ScoreKind, parse_engine_line};
//!
//! let line = "info depth 20 score mate -3 wdl 0 0 1000 nodes 5 pv h7h8 g8h8";
//! let Ok(EngineLine::Info(info)) = parse_engine_line(line) else { panic!("{line}") };
//! assert_eq!(info.score.map(|s| s.kind), Some(ScoreKind::Mate(-3)));
//! assert_eq!(info.pv.len(), 2);
//! assert_eq!(info.to_string(), "info depth 20 score mate -3 wdl 0 0 1000 nodes 5 pv h7h8 g8h8");
//! ```

mod engine;
mod gui;

pub use engine::*;
pub use gui::*;

/// How an empty string is written in an `option … type string default` line
/// (Stockfish's convention); GUIs send it back in `setoption` for "empty".
pub const EMPTY: &str = "<empty>";

/// A failure to understand (part of) a UCI line; keeps the failed input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("empty line")]
    Empty,
    #[error("invalid move '{token}' in '{line}'")]
    Move { token: String, line: String },
    #[error("invalid number '{token}' after '{field}'")]
    Number { field: String, token: String },
    #[error("missing value after '{field}'")]
    MissingValue { field: String },
    #[error("'{line}': {reason}")]
    Syntax { line: String, reason: String },
    /// A `position` line that names no position (`position foo`).
    #[error("'{line}': {reason}")]
    Position { line: String, reason: String },
    #[error("a line of more than {} bytes, skipped", crate::lines::MAX_LINE)]
    Overlong,
}

impl ParseError {
    /// The line was a `position` command that names no position (its FEN
    /// cannot be read, or no start is given): the GUI meant a position
    /// other than the last one.
    pub fn is_position(&self) -> bool {
        matches!(self, ParseError::Position { .. })
    }
}

/// A parsed line with the recoverable problems found in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<T> {
    pub command: T,
    pub problems: Vec<ParseError>,
}

impl<T> Parsed<T> {
    fn clean(command: T) -> Self {
        Parsed {
            command,
            problems: Vec::new(),
        }
    }
}
