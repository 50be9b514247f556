//! Static evaluation: a hand-written, tapered (middlegame/endgame) score in
//! centipawns from the side to move.
//!
//! Terms: material and piece-square tables (PeSTO's values), mobility, king
//! safety (attacks on the king's zone, pawn shield), pawn structure (passed,
//! doubled, isolated), bishop pair, rooks on open files, and a mop-up term
//! that drives a bare king to the edge. Every weight lives in [`weights`].

use shakmaty::{
    Bitboard, Board, Chess, Color, Position, Role, Square,
    attacks::{bishop_attacks, king_attacks, knight_attacks, queen_attacks, rook_attacks},
    variant::VariantPosition,
};

/// Every tunable number of the evaluation, in one place. Pairs are
/// `(middlegame, endgame)`; tables are indexed from a8 (index 0) to h1 from
/// White's point of view, as printed.
pub mod weights {
    /// Material by role (pawn, knight, bishop, rook, queen, king): PeSTO.
    pub const MATERIAL_MG: [i32; 6] = [82, 337, 365, 477, 1025, 0];
    pub const MATERIAL_EG: [i32; 6] = [94, 281, 297, 512, 936, 0];
    /// Game-phase weight by role; a full board is [`PHASE_TOTAL`].
    pub const PHASE: [i32; 6] = [0, 1, 1, 2, 4, 0];
    pub const PHASE_TOTAL: i32 = 24;

    /// Per reachable square (not own pawn/king, not attacked by enemy pawns),
    /// above a baseline count, for knight, bishop, rook, queen.
    pub const MOBILITY_MG: [i32; 4] = [4, 5, 2, 1];
    pub const MOBILITY_EG: [i32; 4] = [4, 5, 4, 2];
    pub const MOBILITY_BASE: [i32; 4] = [4, 6, 6, 12];

    /// King-zone attack units per attacked zone square, by attacker (knight,
    /// bishop, rook, queen). Penalty = units² / KING_DANGER_DIV, capped.
    pub const KING_ATTACK_UNITS: [i32; 4] = [2, 2, 3, 5];
    pub const KING_DANGER_DIV: i32 = 4;
    pub const KING_DANGER_MAX: i32 = 500;
    /// Own pawns in front of a castled-ish king, one and two ranks ahead.
    pub const SHIELD_NEAR_MG: i32 = 12;
    pub const SHIELD_FAR_MG: i32 = 6;

    /// Passed pawn by relative rank (1st..8th).
    pub const PASSED_MG: [i32; 8] = [0, 2, 5, 10, 20, 35, 55, 0];
    pub const PASSED_EG: [i32; 8] = [0, 5, 10, 20, 35, 60, 90, 0];
    pub const DOUBLED: (i32, i32) = (-10, -20);
    pub const ISOLATED: (i32, i32) = (-10, -12);

    pub const BISHOP_PAIR: (i32, i32) = (25, 50);
    pub const ROOK_OPEN_FILE: (i32, i32) = (20, 10);
    pub const ROOK_SEMI_OPEN_FILE: (i32, i32) = (10, 5);
    /// For the side to move.
    pub const TEMPO: i32 = 10;

    /// Mop-up (endgame, only when one side is far ahead and the other has no
    /// pawns): per step of the loser's king from the centre, and per step the
    /// kings are closer than 14.
    pub const MOPUP_EDGE: i32 = 10;
    pub const MOPUP_CLOSE: i32 = 4;
    pub const MOPUP_MARGIN: i32 = 400;
    /// Without pawns, an advantage below a rook is scaled down (KB v K, KR v
    /// KB, ...): divided by this.
    pub const DRAWISH_DIV: i32 = 8;

    // The variants' own aims, on top of the chess terms (hand-set, not
    // tuned).
    /// Antichess: each piece a side still has counts against it.
    pub const ANTICHESS_PIECE: i32 = 60;
    /// King of the hill: the king by its steps from the centre (0: on the
    /// hill, which has already won).
    pub const HILL: [i32; 7] = [0, 150, 60, 20, 0, 0, 0];
    /// Three-check: by checks already given (0, 1, 2).
    pub const CHECKS_GIVEN: [i32; 3] = [0, 120, 350];
    /// Crazyhouse: a piece in hand by role (pawn..queen); it can be
    /// dropped anywhere, so it is worth about a piece on the board.
    pub const IN_HAND: [i32; 5] = [100, 300, 310, 450, 850];
    /// Racing kings: per rank the king has climbed.
    pub const RACE_RANK: i32 = 120;

    #[rustfmt::skip]
    pub const PST_MG: [[i32; 64]; 6] = [
        [ // pawn
              0,   0,   0,   0,   0,   0,  0,   0,
             98, 134,  61,  95,  68, 126, 34, -11,
             -6,   7,  26,  31,  65,  56, 25, -20,
            -14,  13,   6,  21,  23,  12, 17, -23,
            -27,  -2,  -5,  12,  17,   6, 10, -25,
            -26,  -4,  -4, -10,   3,   3, 33, -12,
            -35,  -1, -20, -23, -15,  24, 38, -22,
              0,   0,   0,   0,   0,   0,  0,   0,
        ],
        [ // knight
            -167, -89, -34, -49,  61, -97, -15, -107,
             -73, -41,  72,  36,  23,  62,   7,  -17,
             -47,  60,  37,  65,  84, 129,  73,   44,
              -9,  17,  19,  53,  37,  69,  18,   22,
             -13,   4,  16,  13,  28,  19,  21,   -8,
             -23,  -9,  12,  10,  19,  17,  25,  -16,
             -29, -53, -12,  -3,  -1,  18, -14,  -19,
            -105, -21, -58, -33, -17, -28, -19,  -23,
        ],
        [ // bishop
            -29,   4, -82, -37, -25, -42,   7,  -8,
            -26,  16, -18, -13,  30,  59,  18, -47,
            -16,  37,  43,  40,  35,  50,  37,  -2,
             -4,   5,  19,  50,  37,  37,   7,  -2,
             -6,  13,  13,  26,  34,  12,  10,   4,
              0,  15,  15,  15,  14,  27,  18,  10,
              4,  15,  16,   0,   7,  21,  33,   1,
            -33,  -3, -14, -21, -13, -12, -39, -21,
        ],
        [ // rook
             32,  42,  32,  51, 63,  9,  31,  43,
             27,  32,  58,  62, 80, 67,  26,  44,
             -5,  19,  26,  36, 17, 45,  61,  16,
            -24, -11,   7,  26, 24, 35,  -8, -20,
            -36, -26, -12,  -1,  9, -7,   6, -23,
            -45, -25, -16, -17,  3,  0,  -5, -33,
            -44, -16, -20,  -9, -1, 11,  -6, -71,
            -19, -13,   1,  17, 16,  7, -37, -26,
        ],
        [ // queen
            -28,   0,  29,  12,  59,  44,  43,  45,
            -24, -39,  -5,   1, -16,  57,  28,  54,
            -13, -17,   7,   8,  29,  56,  47,  57,
            -27, -27, -16, -16,  -1,  17,  -2,   1,
             -9, -26,  -9, -10,  -2,  -4,   3,  -3,
            -14,   2, -11,  -2,  -5,   2,  14,   5,
            -35,  -8,  11,   2,   8,  15,  -3,   1,
             -1, -18,  -9,  10, -15, -25, -31, -50,
        ],
        [ // king
            -65,  23,  16, -15, -56, -34,   2,  13,
             29,  -1, -20,  -7,  -8,  -4, -38, -29,
             -9,  24,   2, -16, -20,   6,  22, -22,
            -17, -20, -12, -27, -30, -25, -14, -36,
            -49,  -1, -27, -39, -46, -44, -33, -51,
            -14, -14, -22, -46, -44, -30, -15, -27,
              1,   7,  -8, -64, -43, -16,   9,   8,
            -15,  36,  12, -54,   8, -28,  24,  14,
        ],
    ];

    #[rustfmt::skip]
    pub const PST_EG: [[i32; 64]; 6] = [
        [ // pawn
              0,   0,   0,   0,   0,   0,   0,   0,
            178, 173, 158, 134, 147, 132, 165, 187,
             94, 100,  85,  67,  56,  53,  82,  84,
             32,  24,  13,   5,  -2,   4,  17,  17,
             13,   9,  -3,  -7,  -7,  -8,   3,  -1,
              4,   7,  -6,   1,   0,  -5,  -1,  -8,
             13,   8,   8,  10,  13,   0,   2,  -7,
              0,   0,   0,   0,   0,   0,   0,   0,
        ],
        [ // knight
            -58, -38, -13, -28, -31, -27, -63, -99,
            -25,  -8, -25,  -2,  -9, -25, -24, -52,
            -24, -20,  10,   9,  -1,  -9, -19, -41,
            -17,   3,  22,  22,  22,  11,   8, -18,
            -18,  -6,  16,  25,  16,  17,   4, -18,
            -23,  -3,  -1,  15,  10,  -3, -20, -22,
            -42, -20, -10,  -5,  -2, -20, -23, -44,
            -29, -51, -23, -15, -22, -18, -50, -64,
        ],
        [ // bishop
            -14, -21, -11,  -8, -7,  -9, -17, -24,
             -8,  -4,   7, -12, -3, -13,  -4, -14,
              2,  -8,   0,  -1, -2,   6,   0,   4,
             -3,   9,  12,   9, 14,  10,   3,   2,
             -6,   3,  13,  19,  7,  10,  -3,  -9,
            -12,  -3,   8,  10, 13,   3,  -7, -15,
            -14, -18,  -7,  -1,  4,  -9, -15, -27,
            -23,  -9, -23,  -5, -9, -16,  -5, -17,
        ],
        [ // rook
            13, 10, 18, 15, 12,  12,   8,   5,
            11, 13, 13, 11, -3,   3,   8,   3,
             7,  7,  7,  5,  4,  -3,  -5,  -3,
             4,  3, 13,  1,  2,   1,  -1,   2,
             3,  5,  8,  4, -5,  -6,  -8, -11,
            -4,  0, -5, -1, -7, -12,  -8, -16,
            -6, -6,  0,  2, -9,  -9, -11,  -3,
            -9,  2,  3, -1, -5, -13,   4, -20,
        ],
        [ // queen
             -9,  22,  22,  27,  27,  19,  10,  20,
            -17,  20,  32,  41,  58,  25,  30,   0,
            -20,   6,   9,  49,  47,  35,  19,   9,
              3,  22,  24,  45,  57,  40,  57,  36,
            -18,  28,  19,  47,  31,  34,  39,  23,
            -16, -27,  15,   6,   9,  17,  10,   5,
            -22, -23, -30, -16, -16, -23, -36, -32,
            -33, -28, -22, -43,  -5, -32, -20, -41,
        ],
        [ // king
            -74, -35, -18, -18, -11,  15,   4, -17,
            -12,  17,  14,  17,  17,  38,  23,  11,
             10,  17,  23,  15,  20,  45,  44,  13,
             -8,  22,  24,  27,  26,  33,  26,   3,
            -18,  -4,  21,  24,  27,  23,   9, -11,
            -19,  -3,  11,  21,  23,  16,   7,  -9,
            -27, -11,   4,  13,  14,   4,  -5, -17,
            -53, -34, -21, -11, -28, -14, -24, -43,
        ],
    ];
}

use weights::*;

/// Piece values for move ordering, SEE and pruning margins (pawn..king).
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20_000];

pub fn see_value(role: Role) -> i32 {
    SEE_VALUE[role as usize - 1]
}

const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_H: u64 = FILE_A << 7;
const RANK_1: u64 = 0xff;

const fn file_mask(file: usize) -> u64 {
    FILE_A << file
}

const fn adjacent_files(file: usize) -> u64 {
    let mut m = 0;
    if file > 0 {
        m |= file_mask(file - 1);
    }
    if file < 7 {
        m |= file_mask(file + 1);
    }
    m
}

/// Squares in front of a pawn on its own and the adjacent files: no enemy
/// pawn there means the pawn is passed. Index 0 is White.
const fn front_spans() -> [[u64; 64]; 2] {
    let mut out = [[0u64; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let (file, rank) = (sq % 8, sq / 8);
        let files = file_mask(file) | adjacent_files(file);
        let mut r = 0;
        while r < 8 {
            let row = files & (RANK_1 << (8 * r));
            if r > rank {
                out[0][sq] |= row;
            }
            if r < rank {
                out[1][sq] |= row;
            }
            r += 1;
        }
        sq += 1;
    }
    out
}

const FRONT_SPAN: [[u64; 64]; 2] = front_spans();

fn color_index(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
}

fn pawn_attacks_of(color: Color, pawns: u64) -> u64 {
    match color {
        Color::White => ((pawns & !FILE_A) << 7) | ((pawns & !FILE_H) << 9),
        Color::Black => ((pawns & !FILE_A) >> 9) | ((pawns & !FILE_H) >> 7),
    }
}

/// Index into the tables (printed from a8) for a piece of `color` on `sq`.
fn table_index(color: Color, sq: Square) -> usize {
    match color {
        Color::White => sq.to_usize() ^ 56,
        Color::Black => sq.to_usize(),
    }
}

/// Rank from `color`'s side, 0..8.
fn relative_rank(color: Color, sq: Square) -> usize {
    match color {
        Color::White => sq.rank().to_usize(),
        Color::Black => 7 - sq.rank().to_usize(),
    }
}

/// Middlegame and endgame score of one side, plus its phase and non-pawn
/// material.
#[derive(Default)]
struct Side {
    mg: i32,
    eg: i32,
    phase: i32,
    non_pawn: i32,
    pawns: i32,
}

fn side_terms(board: &Board, color: Color) -> Side {
    let mut s = Side::default();
    let occ = board.occupied();
    let ours = board.by_color(color);
    let theirs = board.by_color(!color);
    let our_pawns = (board.pawns() & ours).0;
    let their_pawns = (board.pawns() & theirs).0;
    let mobility_area =
        !(our_pawns | (board.kings() & ours).0 | pawn_attacks_of(!color, their_pawns));
    let their_king = board.king_of(!color);
    let zone = their_king.map_or(0, |k| king_attacks(k).0 | (1u64 << k.to_usize()));
    let mut attackers = 0;
    let mut units = 0;

    for sq in ours {
        let Some(role) = board.role_at(sq) else {
            continue;
        };
        let r = role as usize - 1;
        let idx = table_index(color, sq);
        s.mg += MATERIAL_MG[r] + PST_MG[r][idx];
        s.eg += MATERIAL_EG[r] + PST_EG[r][idx];
        s.phase += PHASE[r];
        let attacks = match role {
            Role::Pawn => {
                s.pawns += 1;
                continue;
            }
            Role::King => continue,
            Role::Knight => knight_attacks(sq),
            Role::Bishop => bishop_attacks(sq, occ),
            Role::Rook => rook_attacks(sq, occ),
            Role::Queen => queen_attacks(sq, occ),
        }
        .0;
        s.non_pawn += MATERIAL_MG[r];
        let m = r - 1;
        let mobility = (attacks & mobility_area).count_ones() as i32 - MOBILITY_BASE[m];
        s.mg += MOBILITY_MG[m] * mobility;
        s.eg += MOBILITY_EG[m] * mobility;
        let hits = (attacks & zone).count_ones() as i32;
        if hits > 0 {
            attackers += 1;
            units += KING_ATTACK_UNITS[m] * hits;
        }
        if role == Role::Rook {
            let file = file_mask(sq.file().to_usize());
            if file & (our_pawns | their_pawns) == 0 {
                s.mg += ROOK_OPEN_FILE.0;
                s.eg += ROOK_OPEN_FILE.1;
            } else if file & our_pawns == 0 {
                s.mg += ROOK_SEMI_OPEN_FILE.0;
                s.eg += ROOK_SEMI_OPEN_FILE.1;
            }
        }
    }

    // Our attack on their king: a bonus for us.
    if attackers >= 2 {
        s.mg += (units * units / KING_DANGER_DIV).min(KING_DANGER_MAX);
    }

    // Our king's pawn shield, while it sits on its first two ranks.
    if let Some(k) = board.king_of(color)
        && relative_rank(color, k) <= 1
    {
        let rank = k.rank().to_usize();
        let span = FRONT_SPAN[color_index(color)][k.to_usize()];
        let (near, far) = match color {
            Color::White => (RANK_1 << (8 * (rank + 1)), RANK_1 << (8 * (rank + 2))),
            Color::Black => (RANK_1 << (8 * (rank - 1)), RANK_1 << (8 * (rank - 2))),
        };
        s.mg += SHIELD_NEAR_MG * (span & near & our_pawns).count_ones() as i32;
        s.mg += SHIELD_FAR_MG * (span & far & our_pawns).count_ones() as i32;
    }

    // Pawn structure.
    for file in 0..8 {
        let on_file = (our_pawns & file_mask(file)).count_ones() as i32;
        if on_file == 0 {
            continue;
        }
        if on_file > 1 {
            s.mg += DOUBLED.0 * (on_file - 1);
            s.eg += DOUBLED.1 * (on_file - 1);
        }
        if our_pawns & adjacent_files(file) == 0 {
            s.mg += ISOLATED.0 * on_file;
            s.eg += ISOLATED.1 * on_file;
        }
    }
    for sq in Bitboard(our_pawns) {
        if FRONT_SPAN[color_index(color)][sq.to_usize()] & their_pawns == 0 {
            let rank = relative_rank(color, sq);
            s.mg += PASSED_MG[rank];
            s.eg += PASSED_EG[rank];
        }
    }

    if (board.bishops() & ours).more_than_one() {
        s.mg += BISHOP_PAIR.0;
        s.eg += BISHOP_PAIR.1;
    }
    s
}

/// Distance of a square from the centre, 0 (d4..e5) to 6 (corners).
fn centre_distance(sq: Square) -> i32 {
    let f = sq.file().to_usize() as i32;
    let r = sq.rank().to_usize() as i32;
    let df = (2 * f - 7).abs() / 2;
    let dr = (2 * r - 7).abs() / 2;
    df + dr
}

/// The evaluation of `pos` in centipawns from the side to move.
pub fn evaluate(pos: &Chess) -> i32 {
    evaluate_board(pos.board(), pos.turn())
}

/// The evaluation of a variant position from the side to move: the chess
/// terms, and the variant's own aim (for antichess, instead of them).
pub fn evaluate_variant(pos: &VariantPosition) -> i32 {
    let (board, us) = (pos.board(), pos.turn());
    let aim = |color: Color| -> i32 {
        match pos {
            VariantPosition::KingOfTheHill(_) => board
                .king_of(color)
                .map_or(0, |k| HILL[centre_distance(k) as usize]),
            VariantPosition::ThreeCheck(_) => pos.remaining_checks().map_or(0, |r| {
                let given = 3u32.saturating_sub(u32::from(*r.get(color)));
                CHECKS_GIVEN[given.min(2) as usize]
            }),
            VariantPosition::Crazyhouse(_) => pos.pockets().map_or(0, |p| {
                let hand = p.get(color);
                Role::ALL[..5]
                    .iter()
                    .map(|&role| i32::from(*hand.get(role)) * IN_HAND[role as usize - 1])
                    .sum()
            }),
            VariantPosition::RacingKings(_) => board
                .king_of(color)
                .map_or(0, |k| k.rank().to_usize() as i32 * RACE_RANK),
            _ => 0,
        }
    };
    match pos {
        VariantPosition::Chess(chess) => evaluate(chess),
        VariantPosition::Antichess(_) => {
            let count = |color: Color| board.by_color(color).count() as i32;
            (count(!us) - count(us)) * ANTICHESS_PIECE + TEMPO
        }
        _ => evaluate_board(board, us) + aim(us) - aim(!us),
    }
}

/// The chess evaluation of `board` from `turn`'s side.
fn evaluate_board(board: &Board, turn: Color) -> i32 {
    let white = side_terms(board, Color::White);
    let black = side_terms(board, Color::Black);
    let phase = (white.phase + black.phase).min(PHASE_TOTAL);
    let mg = white.mg - black.mg;
    let mut eg = white.eg - black.eg;

    // Mop-up: a far stronger side against a pawnless one wants the lone king
    // on the edge and its own king close.
    let (strong, weak, sign) = if white.non_pawn >= black.non_pawn {
        (&white, &black, 1)
    } else {
        (&black, &white, -1)
    };
    if let (Some(wk), Some(bk)) = (board.king_of(Color::White), board.king_of(Color::Black)) {
        let weak_king = if sign > 0 { bk } else { wk };
        if weak.pawns == 0 && strong.non_pawn - weak.non_pawn >= MOPUP_MARGIN {
            let close = 14 - (wk.distance(bk) as i32) * 2;
            eg += sign * (MOPUP_EDGE * centre_distance(weak_king) + MOPUP_CLOSE * close);
        }
    }

    let mut score = (mg * phase + eg * (PHASE_TOTAL - phase)) / PHASE_TOTAL;

    // Without pawns, a small material edge rarely wins.
    let (leader, trailer) = if score >= 0 {
        (&white, &black)
    } else {
        (&black, &white)
    };
    if leader.pawns == 0 && leader.non_pawn - trailer.non_pawn < MATERIAL_MG[3] {
        score /= DRAWISH_DIV;
    }

    let score = match turn {
        Color::White => score,
        Color::Black => -score,
    };
    score + TEMPO
}

#[cfg(test)]
mod tests {

    use super::*;

    use crate::test_position as pos;

    /// Mirroring the board and swapping colours leaves the score unchanged.
    #[test]
    fn symmetric() {
        for (fen, mirrored) in [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",
            ),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                "r3k2r/pppbbppp/2n2q1P/1P2p3/3pn3/BN2PNP1/P1PPQPB1/R3K2R b KQkq - 0 1",
            ),
            (
                "8/8/4k3/8/8/8/3QK3/8 w - - 0 1",
                "8/3qk3/8/8/8/4K3/8/8 b - - 0 1",
            ),
        ] {
            assert_eq!(evaluate(&pos(fen)), evaluate(&pos(mirrored)), "{fen}");
        }
    }

    #[test]
    fn material_counts() {
        // White is a queen up.
        let up = evaluate(&pos("4k3/pppppppp/8/8/8/8/PPPPPPPP/3QK3 w - - 0 1"));
        assert!(up > 700, "{up}");
        let down = evaluate(&pos("4k3/pppppppp/8/8/8/8/PPPPPPPP/3QK3 b - - 0 1"));
        assert!(down < -700, "{down}");
        // The start position is about level.
        let start = evaluate(&Chess::default());
        assert!(start.abs() < 40, "{start}");
    }

    #[test]
    fn passed_pawn_is_worth_more() {
        let passed = evaluate(&pos("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1"));
        let blocked = evaluate(&pos("4k3/3p4/8/3P4/8/8/8/4K3 w - - 0 1"));
        assert!(passed > blocked + 50, "{passed} vs {blocked}");
    }
}
