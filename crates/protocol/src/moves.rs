//! Moves as the wire carries them, and as a game holds them.
//!
//! A UCI line writes a move as one token; for chess and shakmaty's
//! variants that token is a [`UciMove`], but the games a child knows by
//! name only (xiangqi's tenth rank `h3h10`, shogi's promotions `h2b8+`,
//! makruk's `e6e7m`) write tokens shakmaty cannot read. The codec keeps
//! every move token whole ([`MoveText`]); a game reads it into a
//! [`GameMove`]: a shakmaty move where mpcmc knows the rules, the token
//! itself where only the child does.

use std::{fmt, str::FromStr};

use shakmaty::{CastlingMode, Move, uci::UciMove};

/// One move token of a UCI line, kept whole: up to [`MoveText::MAX`]
/// bytes of letters, digits and `@ + = - ~ ,` (drops, promotions,
/// gating). `Copy`, so a game's moves are as cheap to pass as shakmaty's.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MoveText {
    len: u8,
    bytes: [u8; MoveText::MAX],
}

/// A token that is not a move token, with the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a move: '{0}'")]
pub struct NotAMove(pub String);

impl MoveText {
    /// The longest token kept (Fairy-Stockfish's longest, a gating move on
    /// a twelve-file board `a10l10+`, is 7).
    pub const MAX: usize = 11;

    pub fn as_str(&self) -> &str {
        // Only ASCII goes in (`from_str`).
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or_default()
    }

    /// The token as a shakmaty UCI move, when it is one.
    pub fn uci(&self) -> Option<UciMove> {
        self.as_str().parse().ok()
    }

    /// The token of a shakmaty move, in the game's castling notation.
    pub fn of(m: Move, castling: CastlingMode) -> MoveText {
        UciMove::from_move(m, castling).into()
    }
}

impl From<UciMove> for MoveText {
    fn from(m: UciMove) -> MoveText {
        let text = m.to_string();
        // A UCI move is at most 5 bytes (`a7a8q`, `Q@h8`).
        text.parse().unwrap_or(MoveText {
            len: 0,
            bytes: [0; MoveText::MAX],
        })
    }
}

impl FromStr for MoveText {
    type Err = NotAMove;

    fn from_str(s: &str) -> Result<MoveText, NotAMove> {
        let fits = !s.is_empty()
            && s.len() <= MoveText::MAX
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"@+=-~,".contains(&b))
            && s.bytes().any(|b| b.is_ascii_digit());
        if !fits {
            return Err(NotAMove(s.to_owned()));
        }
        let mut bytes = [0; MoveText::MAX];
        bytes[..s.len()].copy_from_slice(s.as_bytes());
        Ok(MoveText {
            len: s.len() as u8,
            bytes,
        })
    }
}

impl fmt::Display for MoveText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for MoveText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MoveText({})", self.as_str())
    }
}

/// A move of a game: shakmaty's where mpcmc knows the rules (chess and
/// the lichess variants), the child's token where it does not.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GameMove {
    Board(Move),
    Named(MoveText),
}

impl GameMove {
    /// The shakmaty move, in a game whose rules mpcmc knows.
    pub fn board(self) -> Option<Move> {
        match self {
            GameMove::Board(m) => Some(m),
            GameMove::Named(_) => None,
        }
    }

    /// The move as a UCI line writes it, in the game's castling notation.
    pub fn text(self, castling: CastlingMode) -> MoveText {
        match self {
            GameMove::Board(m) => MoveText::of(m, castling),
            GameMove::Named(t) => t,
        }
    }
}

impl From<Move> for GameMove {
    fn from(m: Move) -> GameMove {
        GameMove::Board(m)
    }
}

impl fmt::Display for GameMove {
    /// In standard castling notation (`e1g1`): for logs and sorting; a
    /// line to a child or GUI writes [`GameMove::text`] in the game's.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.text(CastlingMode::Standard))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_every_family_are_kept_whole() {
        for t in [
            "e2e4", "e7e8q", "P@e4", "h3h10", "h2b8+", "e6e7m", "a10l10+", "e1g1h",
        ] {
            let m: MoveText = t.parse().expect(t);
            assert_eq!(m.as_str(), t);
            assert_eq!(m.to_string(), t);
        }
        assert_eq!(
            "e2e4".parse::<MoveText>().expect("move").uci(),
            "e2e4".parse().ok()
        );
        assert_eq!("h3h10".parse::<MoveText>().expect("move").uci(), None);
        for bad in ["", "ponder", "e2e4;", "a1a2a3a4a5a6", "é2e4", "(none)"] {
            assert!(bad.parse::<MoveText>().is_err(), "{bad}");
        }
    }
}
