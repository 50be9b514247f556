//! One ordered value scale for centipawns and mates.
//!
//! Children report `cp N` or `mate N` from the side to move at the position
//! they searched. [`Value`] puts both on one `i32` scale, always from one side's
//! point of view: mates sit above every centipawn score, and a faster mate above
//! a slower one. Mate distances are counted in plies from the position the value
//! is about, so a value is shifted by [`Value::from_child`] when it is carried
//! up the tree, and negated when the point of view changes side.

use std::fmt;

use mpcmc_protocol::{
    ScoreKind, UciScore,
    game::{Terminal, VariantEnd},
};

/// A score from one side's point of view; larger is better for that side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Value(i32);

/// Mate on the board: the side to move is mated now (negated: it mates now).
const MATE: i32 = 32_000;
/// Values beyond this magnitude are mates; centipawns are clamped inside it.
const MATE_BOUND: i32 = MATE - 1_000;
const CP_LIMIT: i32 = 20_000;
/// A tablebase win (by the tables, under the fifty-move rule): above every
/// centipawn score, below every mate; less the plies to the next capture
/// or pawn move (the tables' DTZ), so a faster conversion ranks higher.
const TB_WIN: i32 = CP_LIMIT + 1_000;

impl Value {
    pub const DRAW: Value = Value(0);
    /// The side to move is checkmated.
    pub const MATED: Value = Value(-MATE);

    /// The value of a finished game from the side to move.
    pub fn of(terminal: Terminal) -> Value {
        match terminal {
            Terminal::Checkmate | Terminal::Variant(VariantEnd::Lost) => Value::MATED,
            Terminal::Variant(VariantEnd::Won) => Value(MATE),
            _ => Value::DRAW,
        }
    }

    /// How a finished game ended for the side to move, from a child's
    /// score of the position (a game by a child's rules: `mate 0` lost,
    /// anything short of a mate drawn); `None` scored as a draw.
    pub fn end_of(score: Option<Value>) -> VariantEnd {
        match score {
            Some(v) if v.is_mate() && v.0 < 0 => VariantEnd::Lost,
            Some(v) if v.is_mate() => VariantEnd::Won,
            _ => VariantEnd::Drawn,
        }
    }

    pub fn cp(cp: i32) -> Value {
        Value(cp.clamp(-CP_LIMIT, CP_LIMIT))
    }

    /// The side to move wins by the tablebases, `dtz` plies from the next
    /// capture or pawn move (negate for a loss). GUIs read its `cp` (above
    /// 20000) as a tablebase win, as Stockfish's.
    pub fn tablebase_win(dtz: u32) -> Value {
        Value(TB_WIN - dtz.min(999) as i32)
    }

    /// The side to move mates in `plies` plies (`plies > 0`) or is mated in
    /// `-plies` plies (`plies <= 0`).
    fn mate_in_plies(plies: i32) -> Value {
        if plies > 0 {
            Value(MATE - plies)
        } else {
            Value(-MATE - plies)
        }
    }

    /// A child's `score …` line, from the side to move at the searched position.
    /// UCI `mate N` counts moves: mate in N moves is 2N-1 plies, mated in N is 2N.
    pub fn from_uci(score: UciScore) -> Value {
        match score.kind {
            ScoreKind::Cp(cp) => Value::cp(cp),
            ScoreKind::Mate(n) if n > 0 => Value::mate_in_plies(2 * n.min(400) - 1),
            ScoreKind::Mate(n) => Value::mate_in_plies(2 * n.max(-400)),
        }
    }

    /// This value (from the side to move at a node `plies` below the root) seen
    /// from the same side at the root: mates get `plies` further away. Flipping
    /// the side is a separate step ([`std::ops::Neg`]).
    pub fn from_child(self, plies: u32) -> Value {
        let plies = plies.min(500) as i32;
        if self.0 > MATE_BOUND {
            Value(self.0 - plies)
        } else if self.0 < -MATE_BOUND {
            Value(self.0 + plies)
        } else {
            self
        }
    }

    /// Adds centipawns without leaving the centipawn band (mates and
    /// tablebase results stay what they are).
    pub fn plus_cp(self, cp: i32) -> Value {
        match self.centipawns() {
            Some(v) => Value::cp(v.saturating_add(cp)),
            None => self,
        }
    }

    /// This value moved `percent` % of the way toward `other` (rounded),
    /// when both are centipawns from the same side; otherwise this value:
    /// a mate is not averaged with a centipawn score, and the first
    /// estimate's own mate claim is the one searched further down its line.
    pub fn toward(self, other: Option<Value>, percent: u32) -> Value {
        match (self.centipawns(), other.and_then(Value::centipawns)) {
            (Some(a), Some(b)) if percent > 0 => {
                let p = i64::from(percent.min(100));
                let mixed = (i64::from(a) * (100 - p) + i64::from(b) * p + 50).div_euclid(100);
                Value::cp(mixed as i32)
            }
            _ => self,
        }
    }

    /// Centipawns, or `None` for a mate or a tablebase win or loss.
    pub fn centipawns(self) -> Option<i32> {
        (self.0.abs() <= CP_LIMIT).then_some(self.0)
    }

    /// Plies to the mate this value is: positive when the side to move
    /// mates, negative when it is mated (`score mate -1` is -2: its move,
    /// then the mating one); `None` for centipawns.
    pub fn mate_plies(self) -> Option<i32> {
        if self.0 > MATE_BOUND {
            Some(MATE - self.0)
        } else if self.0 < -MATE_BOUND {
            Some(-MATE - self.0)
        } else {
            None
        }
    }

    pub fn is_mate(self) -> bool {
        self.0.abs() > MATE_BOUND
    }

    /// The value as the UCI `score` a GUI expects, from the side to move.
    pub fn to_uci(self) -> UciScore {
        let kind = if self.0 > MATE_BOUND {
            let plies = MATE - self.0;
            ScoreKind::Mate((plies + 1) / 2)
        } else if self.0 < -MATE_BOUND {
            // Odd plies: a variant lost by the other side's move.
            let plies = MATE + self.0;
            ScoreKind::Mate(-((plies + 1) / 2))
        } else {
            ScoreKind::Cp(self.0)
        };
        UciScore {
            kind,
            bound: mpcmc_protocol::Bound::Exact,
        }
    }
}

impl std::ops::Neg for Value {
    type Output = Value;
    fn neg(self) -> Value {
        Value(-self.0)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_uci().kind {
            ScoreKind::Cp(cp) => write!(f, "{cp:+}cp"),
            ScoreKind::Mate(n) => write!(f, "mate {n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpcmc_protocol::Bound;

    fn uci(kind: ScoreKind) -> Value {
        Value::from_uci(UciScore {
            kind,
            bound: Bound::Exact,
        })
    }

    #[test]
    fn a_finished_game_is_mated_or_drawn() {
        assert_eq!(Value::of(Terminal::Checkmate), Value::MATED);
        assert_eq!(Value::of(Terminal::Threefold), Value::DRAW);
        // A variant's own end, for the side to move.
        use mpcmc_protocol::game::VariantEnd::*;
        assert_eq!(Value::of(Terminal::Variant(Lost)), Value::MATED);
        assert_eq!(Value::of(Terminal::Variant(Won)), -Value::MATED);
        assert_eq!(Value::of(Terminal::Variant(Drawn)), Value::DRAW);
        // Lost one ply on (the other side's move ends it): mate -1.
        assert_eq!(Value(-MATE + 1).to_uci().kind, ScoreKind::Mate(-1));
        assert_eq!(Value(-MATE + 2).to_uci().kind, ScoreKind::Mate(-1));
    }

    #[test]
    fn the_scale_is_ordered() {
        let ladder = [
            Value::MATED,
            uci(ScoreKind::Mate(-1)),
            uci(ScoreKind::Mate(-5)),
            -Value::tablebase_win(3),
            -Value::tablebase_win(40),
            uci(ScoreKind::Cp(-100_000)),
            uci(ScoreKind::Cp(-30)),
            Value::DRAW,
            uci(ScoreKind::Cp(250)),
            uci(ScoreKind::Cp(100_000)),
            Value::tablebase_win(40),
            Value::tablebase_win(3),
            uci(ScoreKind::Mate(5)),
            uci(ScoreKind::Mate(1)),
        ];
        for pair in ladder.windows(2) {
            assert!(pair[0] < pair[1], "{:?} < {:?}", pair[0], pair[1]);
        }
    }

    #[test]
    fn uci_round_trip_and_side_flips() {
        for kind in [
            ScoreKind::Cp(-17),
            ScoreKind::Mate(3),
            ScoreKind::Mate(-3),
            ScoreKind::Mate(1),
            ScoreKind::Mate(-1),
        ] {
            assert_eq!(uci(kind).to_uci().kind, kind);
        }
        // Black to move is mated in 1 move (2 plies) after our move: from our
        // side at the root that is mate in 3 plies = mate 2.
        let after_our_move = uci(ScoreKind::Mate(-1));
        assert_eq!(
            (-after_our_move).from_child(1).to_uci().kind,
            ScoreKind::Mate(2)
        );
        // Mate on the board after our move and their reply: we are mated, 2 plies in.
        assert_eq!(
            Value::MATED.from_child(2).to_uci().kind,
            ScoreKind::Mate(-1)
        );
        assert_eq!(Value::cp(40).from_child(2), Value::cp(40));
        assert_eq!(uci(ScoreKind::Mate(2)).plus_cp(50), uci(ScoreKind::Mate(2)));
        assert_eq!(Value::cp(10).plus_cp(-25), Value::cp(-15));
    }

    #[test]
    fn toward_mixes_centipawns_and_leaves_mates() {
        let (a, b) = (Value::cp(40), Value::cp(-20));
        assert_eq!(a.toward(Some(b), 0), a);
        assert_eq!(a.toward(Some(b), 50), Value::cp(10));
        assert_eq!(a.toward(Some(b), 100), b);
        assert_eq!(a.toward(Some(Value::cp(-21)), 50), Value::cp(10), "half up");
        assert_eq!(
            Value::cp(-21).toward(Some(Value::cp(0)), 50),
            Value::cp(-10)
        );
        assert_eq!(a.toward(None, 50), a);
        let mate = (-Value::MATED).from_child(3);
        assert_eq!(a.toward(Some(mate), 50), a, "a mate is not averaged");
        assert_eq!(mate.toward(Some(a), 50), mate);
        let won = Value::tablebase_win(10);
        assert_eq!(won.toward(Some(a), 50), won, "a tablebase result neither");
        assert_eq!(a.toward(Some(won), 50), a);
        assert_eq!(won.plus_cp(-500), won);
        assert_eq!(won.to_uci().kind, ScoreKind::Cp(20_990));
    }
}
