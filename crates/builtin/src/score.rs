//! The search's score scale: centipawns, then tablebase results, then
//! mates, each counted in plies from the root, and the deepest ply that
//! bounds them; and how a score reads in UCI. Every file of the engine
//! that scores a position (the search, the rules' ends, the tablebases)
//! stands on this one.

/// Deepest ply the search reaches (extensions included).
pub const MAX_PLY: usize = 128;
/// Deepest iteration.
pub const MAX_DEPTH: u32 = 100;
/// Mate at the root; mated in `n` plies scores `-(MATE - n)`.
pub const MATE: i32 = 32_000;
/// Scores beyond this are mates.
pub const MATE_BOUND: i32 = MATE - 2 * MAX_PLY as i32;
/// A tablebase win at the root (less the plies to it): above every
/// evaluation, below every mate.
pub const TB_WIN: i32 = MATE_BOUND - 1;
/// Scores beyond this magnitude are decided: a tablebase result or a mate.
pub const DECIDED: i32 = TB_WIN - MAX_PLY as i32;
/// The `cp` a tablebase win at the root reads as (less the plies to it),
/// as Stockfish writes it: GUIs show it as a tablebase win.
const TB_WIN_CP: i32 = 20_000;
/// Above every score: the search's open window.
pub const INF: i32 = 32_500;

/// Converts a search score to UCI terms: `Ok(cp)` or `Err(mate in moves)`;
/// a tablebase result is `cp` ±20000 less the plies to it.
pub fn uci_score(score: i32) -> Result<i32, i32> {
    if score >= MATE_BOUND {
        let plies = MATE - score;
        Err((plies + 1) / 2)
    } else if score <= -MATE_BOUND {
        // Odd plies: a variant lost by the other side's move.
        let plies = MATE + score;
        Err(-((plies + 1) / 2))
    } else if score >= DECIDED {
        Ok(TB_WIN_CP - (TB_WIN - score))
    } else if score <= -DECIDED {
        Ok(-TB_WIN_CP + (TB_WIN + score))
    } else {
        Ok(score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uci_mate_counts_moves() {
        assert_eq!(uci_score(MATE - 1), Err(1));
        assert_eq!(uci_score(MATE - 3), Err(2));
        assert_eq!(uci_score(-(MATE - 2)), Err(-1));
        assert_eq!(uci_score(-(MATE - 4)), Err(-2));
        assert_eq!(uci_score(-MATE), Err(0));
        // A variant lost by the other side's move (antichess): odd plies.
        assert_eq!(uci_score(-(MATE - 1)), Err(-1));
        assert_eq!(uci_score(-(MATE - 3)), Err(-2));
        assert_eq!(uci_score(35), Ok(35));
    }
}
