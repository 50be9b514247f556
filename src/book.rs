//! Polyglot opening books (`.bin`): the book moves of a position and a
//! weighted random choice among them.
//!
//! A Polyglot book is a file of 16-byte entries sorted by key, each
//! big-endian: the position's key (`u64`), a move (`u16`), its weight
//! (`u16`) and a learning value (`u32`, unused here). The move packs the
//! to-square in bits 0-5 (file, then rank), the from-square in bits 6-11 and
//! the promotion in bits 12-14 (0 none, 1 knight, 2 bishop, 3 rook,
//! 4 queen); castling is written king-takes-own-rook (`e1h1`). The key is
//! shakmaty's [`Zobrist64`], which uses Polyglot's random numbers, with the
//! en passant file hashed the way Polyglot does (see [`key`]). A [`Book`] reads
//! the whole file once and finds a position's entries by binary search;
//! entries whose move is not legal in the position (key collisions) are
//! skipped, and entries of weight 0 are listed but never picked.
// A book is a file a user names: nothing in it may panic the engine.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use std::{
    path::{Path, PathBuf},
    sync::{Arc, OnceLock},
};

use shakmaty::{
    Chess, EnPassantMode, Move, Position, Role, Square, uci::UciMove, zobrist::Zobrist64,
};

/// Bytes in one book entry.
const ENTRY_LEN: usize = 16;

/// A book file that cannot be used, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    #[error("cannot read opening book '{}': {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "opening book '{}' is {len} bytes long, not a multiple of {ENTRY_LEN}",
        path.display()
    )]
    Length { path: PathBuf, len: usize },
    #[error("opening book '{}' is empty", path.display())]
    Empty { path: PathBuf },
    /// Binary search would miss positions of an unsorted book, silently.
    #[error(
        "opening book '{}' is not sorted by key (entry {index} is out of order)",
        path.display()
    )]
    Unsorted { path: PathBuf, index: usize },
}

/// One book move at a position, with its weight (the weights of the same
/// move listed twice added up).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookMove {
    pub mv: Move,
    pub weight: u32,
}

/// One entry of the file, without its learning value.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u64,
    mv: u16,
    weight: u16,
}

/// A Polyglot opening book, held in memory.
#[derive(Debug, Clone)]
pub struct Book {
    /// Sorted by key, in file order within a key.
    entries: Vec<Entry>,
}

impl Book {
    /// Reads the book at `path`, checking that it is a whole number of
    /// entries, not empty, and sorted by key.
    pub fn open(path: &Path) -> Result<Book, BookError> {
        let bytes = std::fs::read(path).map_err(|source| BookError::Read {
            path: path.to_owned(),
            source,
        })?;
        Book::from_bytes(&bytes).map_err(|fault| fault.at(path))
    }

    /// The human openings a level plays from (`LevelBook`), built into
    /// the engine: `data/openings.bin`, the lines of Debian's
    /// `gnuchess-book` (public domain, from human games of the University
    /// of Pittsburgh chess server) to 12 plies, each move kept where it
    /// holds 5 % or more of its position's weight
    /// (`scripts/make_openings.py` builds it). `None` only if the built-in
    /// bytes were damaged, which a test rules out.
    pub fn openings() -> Option<Arc<Book>> {
        static OPENINGS: OnceLock<Option<Arc<Book>>> = OnceLock::new();
        OPENINGS
            .get_or_init(|| {
                Book::from_bytes(include_bytes!("../data/openings.bin"))
                    .ok()
                    .map(Arc::new)
            })
            .clone()
    }

    fn from_bytes(bytes: &[u8]) -> Result<Book, Fault> {
        if bytes.is_empty() {
            return Err(Fault::Empty);
        }
        if !bytes.len().is_multiple_of(ENTRY_LEN) {
            return Err(Fault::Length(bytes.len()));
        }
        let entries: Vec<Entry> = bytes
            .chunks_exact(ENTRY_LEN)
            .map(|chunk| {
                let be = |range: std::ops::Range<usize>| {
                    chunk[range]
                        .iter()
                        .fold(0u64, |n, &b| n << 8 | u64::from(b))
                };
                Entry {
                    key: be(0..8),
                    // Two bytes each: they fit.
                    mv: be(8..10) as u16,
                    weight: be(10..12) as u16,
                }
            })
            .collect();
        if let Some(i) = entries.windows(2).position(|w| w[0].key > w[1].key) {
            return Err(Fault::Unsorted(i + 1));
        }
        Ok(Book { entries })
    }

    /// How many entries the book holds (for a log line).
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    /// The legal book moves at `pos`, in file order, weight 0 included.
    pub fn moves(&self, pos: &Chess) -> Vec<BookMove> {
        let key = key(pos);
        let start = self.entries.partition_point(|e| e.key < key);
        let mut moves: Vec<BookMove> = Vec::new();
        for entry in self.entries[start..].iter().take_while(|e| e.key == key) {
            let Some(mv) = decode(entry.mv, pos) else {
                continue;
            };
            let weight = u32::from(entry.weight);
            match moves.iter_mut().find(|m| m.mv == mv) {
                Some(known) => known.weight += weight,
                None => moves.push(BookMove { mv, weight }),
            }
        }
        moves
    }

    /// A book move at `pos` chosen at random in proportion to the weights,
    /// from `random`, a uniformly random number the caller draws; `None`
    /// when the book has no move of positive weight there.
    pub fn pick(&self, pos: &Chess, random: u64) -> Option<BookMove> {
        draw(&self.moves(pos), random).copied()
    }
}

/// One of `moves` chosen in proportion to the weights, from `random`, a
/// uniformly random number; `None` when no move has a positive weight.
pub fn draw(moves: &[BookMove], random: u64) -> Option<&BookMove> {
    let total: u64 = moves.iter().map(|m| u64::from(m.weight)).sum();
    // `random / 2^64` scaled to the total, without modulo bias: below
    // `total`, so it fits a u64.
    let mut target = ((u128::from(random) * u128::from(total)) >> 64) as u64;
    moves.iter().find(|m| {
        let weight = u64::from(m.weight);
        if target < weight {
            true
        } else {
            target -= weight;
            false
        }
    })
}

/// The Polyglot key of `pos`: shakmaty's [`Zobrist64`] with the en passant
/// file hashed when a pawn of the side to move stands next to the pawn that
/// just advanced two squares, whether or not it may legally take it
/// ([`EnPassantMode::PseudoLegal`], as the Polyglot format says). This
/// differs from the game's repetition hash ([`mpcmc_protocol::game::hash`],
/// `EnPassantMode::Legal`) when that pawn is pinned: two positions of
/// gnuchess's book are such (see the tests).
pub fn key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::PseudoLegal).0
}

/// The move a book entry's `raw` move means at `pos`, if it is legal there.
fn decode(raw: u16, pos: &Chess) -> Option<Move> {
    let to = Square::try_from(raw & 0x3f).ok()?;
    let from = Square::try_from((raw >> 6) & 0x3f).ok()?;
    let promotion = match (raw >> 12) & 0x7 {
        0 => None,
        1 => Some(Role::Knight),
        2 => Some(Role::Bishop),
        3 => Some(Role::Rook),
        4 => Some(Role::Queen),
        _ => return None,
    };
    // A king moving onto its own rook is castling with that rook, which is
    // how Polyglot writes castling: shakmaty reads the UCI move that way when
    // the side still has the right, and turns it into `Move::Castle`.
    UciMove::Normal {
        from,
        to,
        promotion,
    }
    .to_move(pos)
    .ok()
}

/// What is wrong with a book's bytes, before the path is known.
enum Fault {
    Empty,
    Length(usize),
    Unsorted(usize),
}

impl Fault {
    fn at(self, path: &Path) -> BookError {
        let path = path.to_owned();
        match self {
            Fault::Empty => BookError::Empty { path },
            Fault::Length(len) => BookError::Length { path, len },
            Fault::Unsorted(index) => BookError::Unsorted { path, index },
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, CastlingSide, fen::Fen};

    use super::*;

    /// Debian's `gnuchess-book` package.
    const GNUCHESS_BOOK: &str = "/usr/share/games/gnuchess/book.bin";

    fn gnuchess() -> Book {
        Book::open(Path::new(GNUCHESS_BOOK))
            .unwrap_or_else(|e| panic!("{e} (install Debian's gnuchess-book package)"))
    }

    fn play(moves: &[&str]) -> Chess {
        let mut pos = Chess::default();
        for m in moves {
            let mv = m
                .parse::<UciMove>()
                .expect("uci move")
                .to_move(&pos)
                .expect("legal move");
            pos.play_unchecked(mv);
        }
        pos
    }

    fn from_fen(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("position")
    }

    /// The book moves in UCI (castling as the king's move), with weights.
    fn uci_moves(book: &Book, pos: &Chess) -> Vec<(String, u32)> {
        book.moves(pos)
            .into_iter()
            .map(|m| (m.mv.to_uci(CastlingMode::Standard).to_string(), m.weight))
            .collect()
    }

    fn expected(list: &[(&str, u32)]) -> Vec<(String, u32)> {
        list.iter().map(|&(m, w)| (m.to_owned(), w)).collect()
    }

    /// How often each move is picked over `n` evenly spaced randoms (the
    /// middles of `n` equal slices of the u64 range, off the slices' edges
    /// where rounding would tip a pick over).
    fn pick_counts(book: &Book, pos: &Chess, n: u64) -> Vec<(Move, u64)> {
        let mut counts: Vec<(Move, u64)> = Vec::new();
        for i in 0..n {
            let random = ((u128::from(2 * i + 1) << 63) / u128::from(n)) as u64;
            let picked = book.pick(pos, random).expect("a book move").mv;
            match counts.iter_mut().find(|(m, _)| *m == picked) {
                Some((_, c)) => *c += 1,
                None => counts.push((picked, 1)),
            }
        }
        counts
    }

    #[test]
    fn gnuchess_start_position_has_the_main_first_moves() {
        let book = gnuchess();
        let pos = Chess::default();
        let moves = book.moves(&pos);
        assert!(moves.len() >= 5, "{moves:?}");
        assert!(moves.iter().all(|m| pos.is_legal(m.mv) && m.weight > 0));
        let ucis: Vec<String> = uci_moves(&book, &pos).into_iter().map(|(m, _)| m).collect();
        assert!(ucis.contains(&"e2e4".to_owned()), "{ucis:?}");
        assert!(ucis.contains(&"d2d4".to_owned()), "{ucis:?}");

        let after_e4 = play(&["e2e4"]);
        let replies = book.moves(&after_e4);
        assert!(replies.len() >= 5, "{replies:?}");
        assert!(replies.iter().all(|m| after_e4.is_legal(m.mv)));
    }

    /// The built-in openings open, start with the four moves people play
    /// (1.e4, 1.d4, 1.Nf3, 1.c4: each 5 % or more of gnuchess-book's first
    /// moves), and hold nothing gnuchess-book does not: every line walked
    /// from the start is the bigger book's, move for move and weight for
    /// weight, to 12 plies and no further.
    #[test]
    fn the_built_in_openings_are_gnuchess_books_main_lines() {
        let openings = Book::openings().expect("the built-in openings parse");
        let gnu = gnuchess();
        let start = Chess::default();
        let mut first: Vec<String> = uci_moves(&openings, &start)
            .into_iter()
            .map(|(m, _)| m)
            .collect();
        first.sort();
        assert_eq!(first, ["c2c4", "d2d4", "e2e4", "g1f3"]);
        let (mut positions, mut deepest) = (0, 0);
        // Breadth first, each position once, at the fewest plies it is
        // reached in.
        let mut seen = std::collections::HashSet::from([key(&start)]);
        let mut queue = std::collections::VecDeque::from([(start, 0)]);
        while let Some((pos, ply)) = queue.pop_front() {
            let ours = uci_moves(&openings, &pos);
            if ours.is_empty() {
                continue;
            }
            positions += 1;
            deepest = deepest.max(ply);
            let theirs = uci_moves(&gnu, &pos);
            let total: u32 = theirs.iter().map(|(_, w)| w).sum();
            for (mv, weight) in &ours {
                assert!(theirs.contains(&(mv.clone(), *weight)), "{mv} at {pos:?}");
                assert!(20 * weight >= total, "{mv}: {weight} of {total}");
            }
            for m in openings.moves(&pos) {
                let mut next = pos.clone();
                next.play_unchecked(m.mv);
                if seen.insert(key(&next)) {
                    queue.push_back((next, ply + 1));
                }
            }
        }
        assert_eq!(deepest, 11, "12 plies: the last book move at ply 11");
        assert!(positions > 1000, "{positions}");
    }

    #[test]
    fn pick_is_a_function_of_the_random_number() {
        let book = gnuchess();
        let pos = Chess::default();
        let first = book.pick(&pos, 0).expect("book move");
        let last = book.pick(&pos, u64::MAX).expect("book move");
        assert_ne!(first.mv, last.mv);
        for random in [0, 12_345, 1 << 63, u64::MAX - 7] {
            assert_eq!(book.pick(&pos, random), book.pick(&pos, random));
        }
    }

    #[test]
    fn picks_follow_the_weights() {
        let book = gnuchess();
        let n = 10_000;
        for pos in [Chess::default(), play(&["e2e4"]), play(&["d2d4", "g8f6"])] {
            let moves = book.moves(&pos);
            let total: u64 = moves.iter().map(|m| u64::from(m.weight)).sum();
            let counts = pick_counts(&book, &pos, n);
            for m in &moves {
                let count = counts
                    .iter()
                    .find(|(mv, _)| *mv == m.mv)
                    .map_or(0, |&(_, c)| c);
                let share = count as f64 / n as f64;
                let weight_share = f64::from(m.weight) / total as f64;
                assert!(
                    (share - weight_share).abs() < 0.01,
                    "{:?}: picked {share}, weight share {weight_share}",
                    m.mv
                );
            }
        }
    }

    #[test]
    fn positions_out_of_the_book_have_no_moves() {
        let book = gnuchess();
        for fen in [
            "8/8/8/4k3/8/8/8/R3K3 w - - 0 1",
            // Kiwipete, a middlegame no game reaches.
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        ] {
            let pos = from_fen(fen);
            assert!(book.moves(&pos).is_empty(), "{fen}");
            assert_eq!(book.pick(&pos, 0), None, "{fen}");
        }
    }

    #[test]
    fn castling_in_the_book_is_the_kings_castling_move() {
        let book = gnuchess();
        // Ruy Lopez, 4...Nf6: 5.O-O is the main move.
        let pos = play(&[
            "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6",
        ]);
        let moves = book.moves(&pos);
        let castle = moves
            .iter()
            .find(|m| m.mv.is_castle())
            .expect("O-O in the book");
        assert_eq!(
            castle.mv,
            Move::Castle {
                king: Square::E1,
                rook: Square::H1
            }
        );
        assert_eq!(castle.mv.castling_side(), Some(CastlingSide::KingSide));
        assert!(pos.is_legal(castle.mv));
        assert_eq!(castle.mv.to_uci(CastlingMode::Standard).to_string(), "e1g1");
    }

    // The moves and weights below were read with python-chess 1.11
    // `chess.polyglot` (`open_reader(...).find_all(board, minimum_weight=0)`)
    // from Debian's gnuchess-book, and its `zobrist_hash` gave the keys.
    #[test]
    fn gnuchess_book_agrees_with_python_chess() {
        let book = gnuchess();
        // A position, its key, its book moves in UCI with their weights.
        type Case = (Chess, u64, &'static [(&'static str, u32)]);
        let cases: [Case; 8] = [
            (
                Chess::default(),
                0x463b_9618_1691_fc9c,
                &[
                    ("e2e4", 12135),
                    ("d2d4", 11257),
                    ("g1f3", 3745),
                    ("c2c4", 3294),
                    ("g2g3", 243),
                    ("b2b3", 38),
                    ("f2f4", 35),
                    ("b1c3", 16),
                    ("b2b4", 16),
                    ("e2e3", 7),
                    ("d2d3", 5),
                    ("g2g4", 4),
                    ("a2a3", 2),
                ],
            ),
            (
                play(&["e2e4"]),
                0x823c_9b50_fd11_4196,
                &[
                    ("c7c5", 14550),
                    ("e7e5", 10621),
                    ("e7e6", 3913),
                    ("c7c6", 2340),
                    ("d7d6", 1135),
                    ("g7g6", 922),
                    ("g8f6", 860),
                    ("d7d5", 303),
                    ("b8c6", 167),
                    ("b7b6", 48),
                    ("g7g5", 12),
                    ("a7a6", 8),
                    ("h7h6", 5),
                ],
            ),
            (
                play(&["d2d4", "g8f6"]),
                0xd8e0_8d47_aaa2_9048,
                &[
                    ("c2c4", 13682),
                    ("g1f3", 3188),
                    ("c1g5", 235),
                    ("b1c3", 81),
                    ("g2g3", 29),
                    ("c2c3", 20),
                    ("e2e3", 14),
                    ("c1f4", 5),
                    ("b1d2", 2),
                ],
            ),
            (
                play(&[
                    "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6",
                ]),
                0xf309_fde4_ccbb_2e7d,
                &[
                    ("e1g1", 7424),
                    ("d2d3", 239),
                    ("d1e2", 175),
                    ("d2d4", 166),
                    ("b1c3", 136),
                    ("a4c6", 29),
                ],
            ),
            // Promotions: a pawn takes a rook and queens, on both sides.
            (
                from_fen("r2qkb1r/pb1n1pPp/2p1p3/8/3P4/5N2/Pp2BPPP/R1BQK2R b KQkq - 0 12"),
                0xb33b_20ef_60f8_708c,
                &[("b2a1q", 6), ("f8g7", 2)],
            ),
            (
                from_fen("r2qkb1r/pb1n1pPp/2p1p3/8/3P4/5N2/P3BPPP/q1BQK2R w Kkq - 0 13"),
                0x0001_8410_2c67_07c2,
                &[("g7h8q", 6)],
            ),
            // After 17.f4 the e4 pawn could take en passant but is pinned:
            // Polyglot hashes the file anyway.
            (
                play(&[
                    "g1f3", "b8c6", "e2e4", "e7e5", "f1b5", "f7f5", "b1c3", "f5e4", "c3e4", "d7d5",
                    "f3e5", "d5e4", "e5c6", "d8g5", "d1e2", "g8f6", "f2f4",
                ]),
                0xe801_afbf_2efe_fc15,
                &[("g5f4", 13), ("g5h4", 3)],
            ),
            (
                from_fen("r1b1kb1r/ppp3pp/2N2n2/1B6/3Ppq2/8/PPP1Q1PP/R1B1K2R b KQkq d3 0 10"),
                0x82fc_5018_e318_1a35,
                &[("f4d6", 2)],
            ),
        ];
        for (pos, python_key, moves) in cases {
            let fen = Fen::from_position(&pos, EnPassantMode::Always);
            assert_eq!(key(&pos), python_key, "{fen}");
            assert_eq!(uci_moves(&book, &pos), expected(moves), "{fen}");
        }
    }

    #[test]
    fn key_hashes_a_pinned_en_passant_pawn_unlike_the_game_hash() {
        let ordinary = play(&["e2e4", "d7d5", "e4e5", "f7f5"]);
        assert_eq!(key(&ordinary), mpcmc_protocol::game::hash(&ordinary));
        let pinned = from_fen("r1b1kb1r/ppp3pp/2N2n2/1B6/3Ppq2/8/PPP1Q1PP/R1B1K2R b KQkq d3 0 10");
        assert_ne!(key(&pinned), mpcmc_protocol::game::hash(&pinned));
    }

    /// A book file in the temporary directory, removed when dropped.
    struct TempBook(PathBuf);

    impl TempBook {
        fn new(name: &str, bytes: &[u8]) -> TempBook {
            let path =
                std::env::temp_dir().join(format!("mpcmc-book-{}-{name}.bin", std::process::id()));
            std::fs::write(&path, bytes).expect("write temp book");
            TempBook(path)
        }
    }

    impl Drop for TempBook {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// Polyglot's packing of a from-to move with an optional promotion.
    fn encode(uci: &str) -> u16 {
        let square = |s: &str| s.parse::<Square>().expect("square") as u16;
        let promotion = match uci.get(4..) {
            Some("n") => 1,
            Some("b") => 2,
            Some("r") => 3,
            Some("q") => 4,
            _ => 0,
        };
        promotion << 12 | square(&uci[0..2]) << 6 | square(&uci[2..4])
    }

    /// The bytes of a book with these (position, move, weight) entries,
    /// sorted by key as Polyglot requires, in the given order within a key.
    fn book_bytes(entries: &[(&Chess, &str, u16)]) -> Vec<u8> {
        let mut entries: Vec<(u64, u16, u16)> = entries
            .iter()
            .map(|&(pos, mv, weight)| (key(pos), encode(mv), weight))
            .collect();
        entries.sort_by_key(|e| e.0);
        let mut bytes = Vec::new();
        for (key, mv, weight) in entries {
            bytes.extend(key.to_be_bytes());
            bytes.extend(mv.to_be_bytes());
            bytes.extend(weight.to_be_bytes());
            bytes.extend(0u32.to_be_bytes());
        }
        bytes
    }

    #[test]
    fn a_tiny_book_skips_illegal_moves_merges_duplicates_and_never_picks_weight_0() {
        let start = Chess::default();
        let after_e4 = play(&["e2e4"]);
        let ending = from_fen("8/8/8/4k3/8/8/8/R3K3 w - - 0 1");
        let file = TempBook::new(
            "tiny",
            &book_bytes(&[
                (&start, "e2e4", 10),
                (&start, "e2e5", 50), // not legal: a key collision
                (&start, "d2d4", 0),
                (&start, "g1f3", 3),
                (&start, "e2e4", 5), // listed again
                (&after_e4, "e7e5", 0),
                (&ending, "e1a1", 7), // castling without the right
                (&ending, "a1a5", 1),
            ]),
        );
        let book = Book::open(&file.0).expect("tiny book");
        assert_eq!(book.entry_count(), 8);
        assert_eq!(
            uci_moves(&book, &start),
            expected(&[("e2e4", 15), ("d2d4", 0), ("g1f3", 3)])
        );
        let counts = pick_counts(&book, &start, 1800);
        let count = |uci: &str| {
            let mv = uci
                .parse::<UciMove>()
                .expect("uci")
                .to_move(&start)
                .expect("legal");
            counts.iter().find(|(m, _)| *m == mv).map_or(0, |&(_, c)| c)
        };
        assert_eq!(
            (count("e2e4"), count("g1f3"), count("d2d4")),
            (1500, 300, 0)
        );

        // Only a move of weight 0: a book move, but none to play.
        assert_eq!(book.moves(&after_e4).len(), 1);
        assert_eq!(book.pick(&after_e4, 0), None);
        assert_eq!(book.pick(&after_e4, u64::MAX), None);

        assert_eq!(uci_moves(&book, &ending), expected(&[("a1a5", 1)]));
        assert_eq!(book.moves(&play(&["d2d4"])), vec![]);
    }

    #[test]
    fn bad_files_are_errors_naming_the_file() {
        let short = TempBook::new("short", &[0; 17]);
        let err = Book::open(&short.0).expect_err("17 bytes");
        assert!(matches!(err, BookError::Length { len: 17, .. }), "{err:?}");
        assert!(
            err.to_string().contains(&*short.0.to_string_lossy()),
            "{err}"
        );

        let empty = TempBook::new("empty", &[]);
        let err = Book::open(&empty.0).expect_err("empty");
        assert!(matches!(err, BookError::Empty { .. }), "{err:?}");

        let start = Chess::default();
        let after_e4 = play(&["e2e4"]);
        let mut bytes = book_bytes(&[(&start, "e2e4", 1), (&after_e4, "e7e5", 1)]);
        let (first, second) = bytes.split_at_mut(ENTRY_LEN);
        first.swap_with_slice(second);
        let unsorted = TempBook::new("unsorted", &bytes);
        let err = Book::open(&unsorted.0).expect_err("unsorted");
        assert!(
            matches!(err, BookError::Unsorted { index: 1, .. }),
            "{err:?}"
        );

        let missing = std::env::temp_dir().join("mpcmc-book-no-such-file.bin");
        let err = Book::open(&missing).expect_err("missing");
        assert!(matches!(err, BookError::Read { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.starts_with("cannot read opening book"), "{message}");
        assert!(message.contains(&*missing.to_string_lossy()), "{message}");
    }
}
