//! What a person's first look ranks high: the plausibility prior of a
//! level's draw ([`crate::mpc::level::Level::choose`]).
//!
//! A player does not weigh every legal move: a glance picks a few — the
//! recapture, the capture of a loose piece, a check, moving away the
//! piece that is attacked, developing a piece and taking the centre in
//! the opening — and the move is chosen among them by how good each looks.
//! Moves nobody considers (a rook pawn or a knight to the rim in the first
//! moves, a king walk) are played only when the position asks for them.
//! [`plausibility`] scores one move so, from the position alone (no
//! search); the draw multiplies each move's weight by its
//! [`Plausibility::factor`], and a level's errors then come where the
//! right move is one a glance does not rank high (a quiet move, a retreat)
//! rather than anywhere.

use shakmaty::{Color, Move, Position, Rank, Role, Square};

/// Plies from the start of a game in which the opening's rules apply
/// (development, the centre, no rim moves).
pub const OPENING_PLIES: u32 = 10;

/// How strongly a plausibility point multiplies a move's weight in the
/// draw: `exp(PRIOR_SLOPE · score)`, so a developing move (+1) weighs
/// twice a neutral one of the same value, a recapture (+2.5) six times.
pub const PRIOR_SLOPE: f64 = 0.7;

/// A move's plausibility at a first look.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Plausibility {
    /// Points: positive for what a glance ranks high, negative for what
    /// it ranks low, 0 for a move with nothing to say for or against it.
    pub score: f64,
    /// A move the player dismisses unless the position asks for it: a
    /// rook pawn or a knight to the rim in the opening, not capturing
    /// (here), or a move a level's second look refuted (the draw's).
    pub dismissed: bool,
}

impl Plausibility {
    /// The factor it multiplies the move's weight by in the draw.
    pub fn factor(self) -> f64 {
        (PRIOR_SLOPE * self.score).exp()
    }
}

/// The plies played since the start of a game, as the position counts
/// them (also for a game set up from a FEN).
pub fn plies(pos: &impl Position) -> u32 {
    let full = pos.fullmoves().get().saturating_sub(1);
    2 * full + u32::from(pos.turn() == Color::Black)
}

/// A rough material value for comparing attacker and victim.
fn worth(role: Role) -> u32 {
    match role {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 100,
    }
}

/// The least valuable piece of `by` attacking `sq` in `pos`, if any.
fn least_attacker(pos: &impl Position, sq: Square, by: Color) -> Option<u32> {
    let board = pos.board();
    board
        .attacks_to(sq, by, board.occupied())
        .into_iter()
        .filter_map(|from| board.role_at(from).map(worth))
        .min()
}

/// Whether a piece of `value` on `sq` (for its side, `own`) would be lost
/// to a plain look: attacked by a cheaper piece, or attacked and not
/// defended.
fn en_prise(pos: &impl Position, sq: Square, own: Color, value: u32) -> bool {
    match least_attacker(pos, sq, !own) {
        None => false,
        Some(attacker) => attacker < value || least_attacker(pos, sq, own).is_none(),
    }
}

/// `mv`'s plausibility in `pos`, the game's last move being `last`.
pub fn plausibility<P: Position + Clone>(pos: &P, last: Option<Move>, mv: Move) -> Plausibility {
    let us = pos.turn();
    let role = mv.role();
    let to = mv.to();
    let Some(from) = mv.from() else {
        return Plausibility::default();
    };
    let mut after = pos.clone();
    after.play_unchecked(mv);
    let opening = plies(pos) < OPENING_PLIES;
    let mut score = 0.0;
    let mut dismissed = false;

    if let Some(victim) = mv.capture() {
        score += 1.0;
        // A loose piece or a bigger one: a capture that gains.
        if worth(victim) > worth(role) || least_attacker(&after, to, !us).is_none() {
            score += 1.0;
        }
    }
    if last.is_some_and(|l| l.is_capture() && l.to() == to) && mv.is_capture() {
        score += 1.5;
    }
    if mv.is_promotion() {
        score += 2.0;
    }
    if after.is_check() {
        score += 0.75;
    }
    let value = worth(role);
    let safe_after = !en_prise(&after, to, us, value);
    if role != Role::King && en_prise(pos, from, us, value) && safe_after {
        // The piece that was attacked, moved to safety.
        score += 1.5;
    } else if !mv.is_capture() && role != Role::Pawn && !safe_after {
        // A piece put where it is taken at once.
        score -= 1.0;
    }
    if mv.is_castle() {
        score += 1.5;
    }
    let home = |rank: Rank| rank == us.backrank();
    let rim = matches!(to.file(), shakmaty::File::A | shakmaty::File::H);
    let quiet = !mv.is_capture() && !mv.is_castle();
    if opening && quiet {
        match role {
            Role::Knight | Role::Bishop if home(from.rank()) => score += 1.0,
            Role::Pawn if matches!(from.file(), shakmaty::File::D | shakmaty::File::E) => {
                score += 1.0;
            }
            Role::Pawn if from.file() == shakmaty::File::C => score += 0.5,
            Role::Queen | Role::Rook => score -= 0.75,
            Role::King => score -= 1.5,
            _ => {}
        }
        dismissed = rim && matches!(role, Role::Pawn | Role::Knight);
    } else if quiet {
        if role == Role::Knight && rim {
            score -= 0.5;
        }
        if role == Role::King && !pos.board().by_role(Role::Queen).is_empty() {
            score -= 0.5;
        }
    }
    let backward = match us {
        Color::White => to.rank() < from.rank(),
        Color::Black => to.rank() > from.rank(),
    };
    if quiet && backward && score <= 0.0 {
        // A retreat that answers nothing: a glance rarely looks back.
        score -= 0.3;
    }
    Plausibility { score, dismissed }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen, uci::UciMove};

    use super::*;
    use shakmaty::Chess;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("position")
    }

    fn mv(pos: &Chess, uci: &str) -> Move {
        uci.parse::<UciMove>()
            .expect("uci")
            .to_move(pos)
            .expect("legal")
    }

    /// `uci`'s plausibility, the last move a capture from and to the
    /// squares `last` names (only its squares and capture are read).
    fn of(pos: &Chess, last: Option<&str>, uci: &str) -> Plausibility {
        let last = last.map(|l| {
            let (from, to): (Square, Square) = (
                l[0..2].parse().expect("square"),
                l[2..4].parse().expect("square"),
            );
            Move::Normal {
                role: Role::Pawn,
                from,
                capture: Some(Role::Knight),
                to,
                promotion: None,
            }
        });
        plausibility(pos, last, mv(pos, uci))
    }

    #[test]
    fn the_opening_ranks_the_centre_and_development_over_the_rim() {
        let start = Chess::default();
        let e4 = of(&start, None, "e2e4");
        let nf3 = of(&start, None, "g1f3");
        let h3 = of(&start, None, "h2h3");
        let na3 = of(&start, None, "b1a3");
        let g4 = of(&start, None, "g2g4");
        assert!(
            e4.score > g4.score && nf3.score > g4.score,
            "{e4:?} {nf3:?} {g4:?}"
        );
        assert!(h3.dismissed && na3.dismissed);
        assert!(!e4.dismissed && !nf3.dismissed && !g4.dismissed);
        assert!(e4.factor() > 1.5 * g4.factor());
        // Past the opening a rook pawn is an ordinary move.
        let later =
            position("r1bq1rk1/pppp1ppp/2n2n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 2 7");
        assert!(!of(&later, None, "h2h3").dismissed);
        assert_eq!(plies(&later), 12);
        assert_eq!(plies(&start), 0);
    }

    #[test]
    fn recaptures_captures_of_loose_pieces_and_saving_an_attacked_piece_rank_high() {
        // After 1.e4 d5 2.exd5: Black's queen recaptures.
        let pos = position("rnbqkbnr/ppp1pppp/8/3P4/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2");
        let recapture = of(&pos, Some("e4d5"), "d8d5");
        let quiet = of(&pos, Some("e4d5"), "g8f6");
        assert!(recapture.score >= 2.5, "{recapture:?}");
        assert!(recapture.score > quiet.score);
        // A knight attacked by a pawn: moving it away ranks above a pawn move.
        let pos = position("rnbqkb1r/pppp1ppp/8/4p3/3Pn3/5P2/PPP1P1PP/RNBQKBNR b KQkq - 0 3");
        let away = of(&pos, None, "e4f6");
        let ignore = of(&pos, None, "a7a6");
        assert!(away.score >= 1.5, "{away:?}");
        assert!(away.score > ignore.score);
        // A piece put where a pawn takes it ranks low.
        let start = Chess::default();
        let pos = {
            let mut p = start.clone();
            p.play_unchecked(mv(&start, "e2e4"));
            p
        };
        assert!(of(&pos, None, "b8a6").dismissed);
        let hangs = of(&pos, None, "g8f6");
        assert!(hangs.score > 0.0, "developing, and not attacked: {hangs:?}");
        let pos = position("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        let bad = of(&pos, None, "d1g4");
        assert!(bad.score < 0.0, "{bad:?}");
    }

    #[test]
    fn mates_and_checks_rank_above_quiet_moves() {
        let pos = position("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 30");
        let mate = of(&pos, None, "a1a8");
        let quiet = of(&pos, None, "g1f2");
        assert!(mate.score > quiet.score + 0.5, "{mate:?} {quiet:?}");
    }
}
