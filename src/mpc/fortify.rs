//! Fortification: the lookahead must beat the evaluator's own choice.
//!
//! The MPC choice `ũ` (best lookahead value `V(ũ)`) is played only when `V(ũ)`
//! is at least the evaluator's own root value `s(x)` plus a margin; otherwise
//! the evaluator's move `û` is played. Both values are from our side at the root.
//! Margin 0 is the paper's rule; a positive margin asks the lookahead to prove
//! its deviation.

use crate::mpc::score::Value;

/// Which rule chose the move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The lookahead's move: it matched or beat the evaluator by the margin.
    Lookahead,
    /// The evaluator's move: the lookahead did not prove its deviation.
    Evaluator,
}

/// Decides between the lookahead's value and the evaluator's root value.
pub fn fortify(lookahead: Value, evaluator: Value, margin_cp: i32) -> Verdict {
    if lookahead >= evaluator.plus_cp(margin_cp) {
        Verdict::Lookahead
    } else {
        Verdict::Evaluator
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margin_decides() {
        let cases = [
            (30, 30, 0, Verdict::Lookahead),
            (29, 30, 0, Verdict::Evaluator),
            (50, 30, 20, Verdict::Lookahead),
            (49, 30, 20, Verdict::Evaluator),
            (-10, -40, 0, Verdict::Lookahead),
        ];
        for (v, s, margin, want) in cases {
            assert_eq!(
                fortify(Value::cp(v), Value::cp(s), margin),
                want,
                "{v} {s} {margin}"
            );
        }
        // A forced mate found by the lookahead beats any centipawn root score.
        let mate = (-Value::MATED).from_child(3);
        assert_eq!(fortify(mate, Value::cp(900), 50), Verdict::Lookahead);
    }
}
