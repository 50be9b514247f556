//! The games the search plays: orthodox chess at full speed, and every
//! variant shakmaty knows (the lichess seven) through [`VariantPosition`].
//!
//! The search is written once over [`Rules`]: shakmaty's [`Position`]
//! (legal moves, each variant's own rules and hash), the evaluation that
//! knows the game's aims, and the few chess-only shortcuts (pseudo-legal
//! captures with exchange evaluation, null moves, Syzygy tables) that a
//! variant goes without.

use shakmaty::{
    Chess, KnownOutcome, Outcome, Position,
    variant::{Variant, VariantPosition},
};

use crate::{eval, score::MATE};

/// What the search needs of a game beyond shakmaty's [`Position`].
pub trait Rules: Position + Clone + Send + Sync {
    /// The position as orthodox chess, where the chess-only shortcuts
    /// apply: static exchange evaluation, pseudo-legal captures in the
    /// quiescence search, Syzygy tables.
    fn chess(&self) -> Option<&Chess>;

    /// The evaluation in centipawns from the side to move.
    fn evaluate(&self) -> i32;

    /// The score of a game its variant's own rule ended (an exploded king,
    /// the king on the hill, the third check, an antichess stalemate),
    /// from the side to move, `ply` plies from the root; `None` when the
    /// variant's rules have not ended it (chess: never).
    fn variant_end(&self, ply: usize) -> Option<i32>;

    /// Whether a null move (passing) is a fair test here: never where
    /// being forced to move is the point (antichess) or the kings touch
    /// by the rules (atomic).
    fn null_move_ok(&self) -> bool;

    /// The position with the other side to move (a null move), if legal.
    fn passed(&self) -> Option<Self>;
}

impl Rules for Chess {
    #[inline]
    fn chess(&self) -> Option<&Chess> {
        Some(self)
    }

    #[inline]
    fn evaluate(&self) -> i32 {
        eval::evaluate(self)
    }

    #[inline]
    fn variant_end(&self, _ply: usize) -> Option<i32> {
        None
    }

    #[inline]
    fn null_move_ok(&self) -> bool {
        true
    }

    fn passed(&self) -> Option<Chess> {
        self.clone().swap_turn().ok()
    }
}

impl Rules for VariantPosition {
    fn chess(&self) -> Option<&Chess> {
        match self {
            VariantPosition::Chess(pos) => Some(pos),
            _ => None,
        }
    }

    fn evaluate(&self) -> i32 {
        eval::evaluate_variant(self)
    }

    fn variant_end(&self, ply: usize) -> Option<i32> {
        match self.variant_outcome() {
            Outcome::Known(KnownOutcome::Decisive { winner }) if winner == self.turn() => {
                Some(MATE - ply as i32)
            }
            Outcome::Known(KnownOutcome::Decisive { .. }) => Some(-MATE + ply as i32),
            Outcome::Known(KnownOutcome::Draw) => Some(0),
            Outcome::Unknown => None,
        }
    }

    fn null_move_ok(&self) -> bool {
        !matches!(self.variant(), Variant::Antichess | Variant::Atomic)
    }

    fn passed(&self) -> Option<VariantPosition> {
        self.clone().swap_turn().ok()
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};

    use super::*;

    fn variant(variant: Variant, fen: &str) -> VariantPosition {
        let setup = fen.parse::<Fen>().expect("fen").into_setup();
        VariantPosition::from_setup(variant, setup, CastlingMode::Standard).expect("position")
    }

    #[test]
    fn a_variant_end_is_scored_for_the_side_to_move() {
        // Antichess: stalemated, the side to move has won.
        let won = variant(Variant::Antichess, "8/8/8/8/8/p7/P7/8 w - - 0 1");
        assert_eq!(won.variant_end(3), Some(MATE - 3));
        // King of the hill: the other king stands on e4.
        let lost = variant(Variant::KingOfTheHill, "8/8/8/8/4K3/8/8/k7 b - - 0 1");
        assert_eq!(lost.variant_end(3), Some(-MATE + 3));
        // Going on, and chess never ends by a variant's rule.
        let on = variant(Variant::Atomic, "4k3/8/8/8/8/8/8/4K3 w - - 0 1");
        assert_eq!(on.variant_end(1), None);
        assert_eq!(Chess::default().variant_end(1), None);
        assert!(!won.null_move_ok() && Chess::default().null_move_ok());
    }
}
