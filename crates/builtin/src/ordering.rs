//! Move ordering for the search: captures by static exchange (SEE), a
//! fast capture generator for quiescence, the pick of the next best move.

use shakmaty::{
    Bitboard, Chess, Color, Move, MoveList, Position, Role,
    attacks::{self, pawn_attacks},
};

use super::{eval::see_value, rules::Rules};

/// A pawn move to the 6th or 7th rank (promotions are not quiet anyway).
pub(crate) fn advanced_pawn_push(m: Move, us: Color) -> bool {
    m.role() == Role::Pawn
        && match us {
            Color::White => m.to().rank() >= shakmaty::Rank::Sixth,
            Color::Black => m.to().rank() <= shakmaty::Rank::Third,
        }
}

/// Moves the best-scored move of `moves[from..]` to `from`.
pub(crate) fn pick_best(moves: &mut MoveList, scores: &mut [i32; 256], from: usize) {
    let mut best = from;
    for j in from + 1..moves.len() {
        if scores[j] > scores[best] {
            best = j;
        }
    }
    if best != from {
        moves.swap(from, best);
        scores.swap(from, best);
    }
}

/// Ordering score of a capture or promotion: MVV-LVA above the quiet moves
/// when it does not lose material, below them when it does.
/// (A variant's captures are ordered by MVV-LVA alone.)
pub(crate) fn capture_order<P: Rules>(pos: &P, m: Move) -> i32 {
    let victim = m.capture().map_or(0, see_value);
    let attacker = see_value(m.role());
    let promo = m.promotion().map_or(0, see_value);
    if m.is_promotion() && m.promotion() != Some(Role::Queen) {
        return -1_000_000 + promo;
    }
    let mvv_lva = victim * 16 + promo - attacker / 16;
    if attacker > victim && !m.is_promotion() && pos.chess().is_some_and(|c| see(c, m) < 0) {
        -500_000 + mvv_lva
    } else {
        1_000_000 + mvv_lva
    }
}

/// Static exchange evaluation of a capture on `m.to()`: the material balance
/// after both sides recapture with their least valuable attackers.
pub(crate) fn see(pos: &Chess, m: Move) -> i32 {
    let board = pos.board();
    let Some(from) = m.from() else { return 0 };
    let to = m.to();
    let mut occupied = board.occupied() ^ Bitboard::from_square(from);
    if m.is_en_passant() {
        occupied ^= Bitboard::from_square(shakmaty::Square::from_coords(to.file(), from.rank()));
    }
    let mut gain = [0i32; 32];
    gain[0] = m.capture().map_or(0, see_value);
    let mut on_square = see_value(m.promotion().unwrap_or(m.role()));
    let mut side = !pos.turn();
    let mut d = 0;
    loop {
        let attackers = board.attacks_to(to, side, occupied) & occupied;
        // The least valuable attacker.
        let Some((sq, role)) = [
            Role::Pawn,
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
            Role::King,
        ]
        .into_iter()
        .find_map(|r| (attackers & board.by_role(r)).first().map(|sq| (sq, r))) else {
            break;
        };
        d += 1;
        if d >= gain.len() {
            break;
        }
        gain[d] = on_square - gain[d - 1];
        // Pruning: neither side can improve by continuing.
        if (-gain[d - 1]).max(gain[d]) < 0 {
            break;
        }
        if role == Role::King
            && (board.attacks_to(to, !side, occupied ^ Bitboard::from_square(sq)) & occupied).any()
        {
            // The king cannot capture into a defended square.
            d -= 1;
            break;
        }
        on_square = see_value(role);
        occupied ^= Bitboard::from_square(sq);
        side = !side;
    }
    while d > 0 {
        gain[d - 1] = -(-gain[d - 1]).max(gain[d]);
        d -= 1;
    }
    gain[0]
}

/// Captures and queen promotions, pseudo-legal (the king may be left in
/// check; the caller filters). En passant is left to the main search.
pub(crate) fn generate_captures(pos: &Chess, moves: &mut MoveList) {
    let board = pos.board();
    let us = pos.turn();
    let ours = board.by_color(us);
    let theirs = board.by_color(!us);
    let occupied = board.occupied();
    let promotion_rank = match us {
        Color::White => Bitboard::from_rank(shakmaty::Rank::Eighth),
        Color::Black => Bitboard::from_rank(shakmaty::Rank::First),
    };
    for from in ours {
        let Some(role) = board.role_at(from) else {
            continue;
        };
        if role == Role::Pawn {
            for to in pawn_attacks(us, from) & theirs {
                let promotion = promotion_rank.contains(to).then_some(Role::Queen);
                let _ = moves.try_push(Move::Normal {
                    role,
                    from,
                    capture: board.role_at(to),
                    to,
                    promotion,
                });
            }
            let push = match us {
                Color::White => from.offset(8),
                Color::Black => from.offset(-8),
            };
            if let Some(to) = push
                && promotion_rank.contains(to)
                && !occupied.contains(to)
            {
                let _ = moves.try_push(Move::Normal {
                    role,
                    from,
                    capture: None,
                    to,
                    promotion: Some(Role::Queen),
                });
            }
            continue;
        }
        let targets = attacks::attacks(from, role.of(us), occupied) & theirs;
        for to in targets {
            let _ = moves.try_push(Move::Normal {
                role,
                from,
                capture: board.role_at(to),
                to,
                promotion: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Square, uci::UciMove};

    use super::*;

    use crate::test_position as pos;

    fn mv(p: &Chess, uci: &str) -> Move {
        uci.parse::<UciMove>().unwrap().to_move(p).unwrap()
    }

    #[test]
    fn see_values_exchanges() {
        // Pawn takes a defended knight: wins knight for pawn.
        let p = pos("4k3/8/2n1p3/3P4/8/8/8/4K3 w - - 0 1");
        assert_eq!(see(&p, mv(&p, "d5c6")), 320);
        // Queen takes a pawn defended by a pawn: loses the queen for a pawn.
        let p = pos("4k3/3p4/4p3/8/8/8/4Q3/4K3 w - - 0 1");
        assert_eq!(see(&p, mv(&p, "e2e6")), 100 - 950);
        // Rook takes an undefended rook.
        let p = pos("4k3/8/8/3r4/8/8/3R4/4K3 w - - 0 1");
        assert_eq!(see(&p, mv(&p, "d2d5")), 500);
        // Rook x rook, rook x rook, rook x rook along a file (x-rays).
        let p = pos("3rk3/3r4/8/8/8/8/3R4/3RK3 w - - 0 1");
        assert_eq!(see(&p, mv(&p, "d2d7")), 0);
    }

    #[test]
    fn capture_generation_matches_legal_captures() {
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        ] {
            let p = pos(fen);
            let mut generated = MoveList::new();
            generate_captures(&p, &mut generated);
            let king = p.board().king_of(p.turn());
            let legal_gen: Vec<Move> = generated
                .into_iter()
                .filter(|m| {
                    let mut c = p.clone();
                    c.play_unchecked(*m);
                    let k = if m.role() == Role::King {
                        Some(m.to())
                    } else {
                        king
                    };
                    !k.is_some_and(|k| {
                        c.board()
                            .attacks_to(k, !p.turn(), c.board().occupied())
                            .any()
                    })
                })
                .collect();
            let expected: Vec<Move> = p
                .legal_moves()
                .into_iter()
                .filter(|m| {
                    (m.is_capture()
                        && !m.is_en_passant()
                        && m.promotion().is_none_or(|r| r == Role::Queen))
                        || m.promotion() == Some(Role::Queen)
                })
                .collect();
            assert_eq!(legal_gen.len(), expected.len(), "{fen}");
            for m in &expected {
                assert!(legal_gen.contains(m), "{fen}: {m:?}");
            }
        }
        let _ = Square::A1;
    }
}
