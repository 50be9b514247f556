//! A game as the GUI gave it: where it started, every move since, and the
//! repetition history, with the exact rules that end it.
//!
//! The meta-engine decides finished games itself, at every node of its
//! lookahead, so no child is ever asked about one. Threefold repetition needs the
//! whole history from `position … moves …`, which is why a [`Game`] keeps the
//! hash of every position it passed through.

use shakmaty::{
    CastlingMode, Chess, EnPassantMode, KnownOutcome, Move, Outcome, Position, PositionError,
    PositionErrorKinds,
    fen::Fen,
    uci::{IllegalUciMoveError, UciMove},
    variant::{Variant, VariantPosition},
    zobrist::Zobrist64,
};

use crate::StartPosition;

/// Why a position ends the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    /// The side to move is checkmated.
    Checkmate,
    Stalemate,
    InsufficientMaterial,
    FiftyMoves,
    Threefold,
    /// The variant's own rule ended the game (an exploded king, the king
    /// on the hill, the third check, no pieces left, an antichess
    /// stalemate): won, lost or drawn for the side to move.
    Variant(VariantEnd),
}

/// What a variant's own rule gave the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariantEnd {
    Won,
    Lost,
    Drawn,
}

/// A FEN that cannot start a game, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}: '{fen}'")]
pub struct FenError {
    pub fen: String,
    pub reason: String,
}

/// The position a FEN describes, validated strictly (nothing repaired).
pub fn position_from_fen(fen: &str, castling: CastlingMode) -> Result<(Fen, Chess), FenError> {
    let err = |reason: String| FenError {
        fen: fen.to_owned(),
        reason,
    };
    let parsed: Fen = fen.parse().map_err(|e| err(format!("invalid fen: {e}")))?;
    let pos = parsed
        .clone()
        .into_position(castling)
        .map_err(|e| err(format!("impossible position: {e}")))?;
    Ok((parsed, pos))
}

/// A game from its start position with every move played since.
#[derive(Debug, Clone)]
pub struct Game {
    /// `None`: the standard start position (written `startpos` to children).
    start_fen: Option<Fen>,
    start: VariantPosition,
    moves: Vec<Move>,
    /// Hash of every position reached, the start included: `moves.len() + 1`.
    hashes: Vec<u64>,
    current: VariantPosition,
    castling: CastlingMode,
}

/// The repetition hash of a position: shakmaty's `Zobrist64` with
/// `EnPassantMode::Legal`. The one key: the built-in engine's search
/// hashes its nodes with it, so its repetition checks see the game's
/// history.
#[inline]
pub fn hash<P: Position>(pos: &P) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The [`hash`] of `after`, the position `m` leads to from `pos` (whose
/// hash is `hash`): incrementally when shakmaty can.
#[inline]
pub fn hash_after<P: Position>(pos: &P, hash: u64, m: Move, after: &P) -> u64 {
    match pos.update_zobrist_hash::<Zobrist64>(Zobrist64(hash), m, EnPassantMode::Legal) {
        Some(h) => h.0,
        None => self::hash(after),
    }
}

impl Default for Game {
    fn default() -> Self {
        Game::new(None, Chess::default(), CastlingMode::Standard)
    }
}

impl Game {
    pub fn new(
        start_fen: Option<Fen>,
        start: impl Into<VariantPosition>,
        castling: CastlingMode,
    ) -> Game {
        let start = start.into();
        Game {
            start_fen,
            hashes: vec![hash(&start)],
            current: start.clone(),
            start,
            moves: Vec::new(),
            castling,
        }
    }

    /// The start position of `variant` (written `startpos` to children,
    /// which know the variant's own).
    pub fn start_of(variant: Variant, castling: CastlingMode) -> Game {
        Game::new(None, VariantPosition::new(variant), castling)
    }

    /// A game starting at `fen` (strictly validated).
    pub fn from_fen(fen: &str, castling: CastlingMode) -> Result<Game, FenError> {
        let (fen, pos) = position_from_fen(fen, castling)?;
        Ok(Game::new(Some(fen), pos, castling))
    }

    /// The game a GUI's `position` command describes, read as forgivingly
    /// as python-chess reads it: castling rights and en-passant squares
    /// that cannot be are dropped, and an illegal move ends the moves
    /// there. `Err` (what to tell the GUI) for a FEN no repair makes
    /// possible; otherwise the game, and a sentence for each repair.
    pub fn from_position_command(
        start: StartPosition,
        moves: &[UciMove],
        mode: CastlingMode,
        variant: Variant,
    ) -> Result<(Game, Vec<String>), String> {
        let mut notes = Vec::new();
        let (fen, pos) = match start {
            StartPosition::Startpos => (None, VariantPosition::new(variant)),
            StartPosition::Fen(fen) => {
                let parsed = VariantPosition::from_setup(variant, fen.clone().into_setup(), mode)
                    .or_else(PositionError::ignore_invalid_ep_square);
                let pos = match parsed {
                    Ok(pos) => Ok(pos),
                    Err(e) => {
                        let castling = e
                            .kinds()
                            .contains(PositionErrorKinds::INVALID_CASTLING_RIGHTS);
                        let pos = e.ignore_invalid_castling_rights();
                        if castling && let Ok(pos) = &pos {
                            let hint = match mode {
                                CastlingMode::Standard => {
                                    " (Shredder-FEN castling files need UCI_Chess960 true)"
                                }
                                CastlingMode::Chess960 => "",
                            };
                            notes.push(format!(
                                "castling rights that cannot be are dropped{hint}: position set to {}",
                                Fen::from_position(pos, EnPassantMode::Legal)
                            ));
                        }
                        pos
                    }
                };
                match pos {
                    Ok(pos) => (Some(Fen::from_position(&pos, EnPassantMode::Legal)), pos),
                    Err(e) => {
                        let what = match variant {
                            Variant::Chess => String::new(),
                            v => format!("{v} "),
                        };
                        return Err(format!("impossible {what}position '{fen}': {e}"));
                    }
                }
            }
        };
        let mut game = Game::new(fen, pos, mode);
        for (i, uci) in moves.iter().enumerate() {
            if game.push_uci(uci).is_err() {
                let fen = Fen::from_position(game.position(), EnPassantMode::Legal);
                notes.push(format!(
                    "illegal move '{uci}' (move {}) in position {fen}; position set to the moves before it",
                    i + 1
                ));
                break;
            }
        }
        Ok((game, notes))
    }

    /// Plays a move given in UCI (either castling notation) if it is legal in
    /// [`Game::position`].
    pub fn push_uci(&mut self, uci: &UciMove) -> Result<Move, IllegalUciMoveError> {
        let m = uci.to_move(&self.current)?;
        self.push(m);
        Ok(m)
    }

    /// Plays a move known to be legal in [`Game::position`].
    pub fn push(&mut self, m: Move) {
        self.current.play_unchecked(m);
        self.hashes.push(hash(&self.current));
        self.moves.push(m);
    }

    pub fn position(&self) -> &VariantPosition {
        &self.current
    }

    /// The current position when the game is orthodox chess (or
    /// Chess960): what the chess-only parts (the built-in engine, the
    /// tablebases, the books) read; `None` in a variant.
    pub fn chess(&self) -> Option<&Chess> {
        match &self.current {
            VariantPosition::Chess(pos) => Some(pos),
            _ => None,
        }
    }

    /// The game's variant (`UCI_Variant`): chess, or one of shakmaty's
    /// lichess variants.
    pub fn variant(&self) -> Variant {
        self.current.variant()
    }

    pub fn start_fen(&self) -> Option<&Fen> {
        self.start_fen.as_ref()
    }

    pub fn start(&self) -> &VariantPosition {
        &self.start
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Hashes (`Zobrist64`, `EnPassantMode::Legal`) of every position of the
    /// game, the start first and the current position last.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    pub fn castling_mode(&self) -> CastlingMode {
        self.castling
    }

    /// Whether the position after the game plus `line` (legal moves from the
    /// current position) ends the game, and why. Checkmate is tested first: a
    /// mate on the hundredth half-move is still a mate.
    pub fn terminal_after(&self, line: &[Move]) -> Option<Terminal> {
        let mut pos = self.current.clone();
        let mut seen: Vec<u64> = Vec::with_capacity(line.len());
        for m in line {
            pos.play_unchecked(*m);
            seen.push(hash(&pos));
        }
        let Some(&last) = seen.last() else {
            return self.terminal_now();
        };
        let earlier = self.hashes.iter().chain(&seen[..seen.len() - 1]);
        terminal_of(&pos).or_else(|| threefold(last, earlier))
    }

    /// Whether the position after `line` (legal moves from the current
    /// position) stood on the board before, in the game or earlier on the
    /// line: a repetition, though not yet a draw.
    pub fn repeats_after(&self, line: &[Move]) -> bool {
        let mut pos = self.current.clone();
        let mut seen: Vec<u64> = Vec::with_capacity(line.len());
        for m in line {
            pos.play_unchecked(*m);
            seen.push(hash(&pos));
        }
        let Some((last, earlier)) = seen.split_last() else {
            return false;
        };
        self.hashes.iter().chain(earlier).any(|h| h == last)
    }

    /// `line` (legal moves from the current position) up to the move after
    /// which the game ends by rule, that move included: a line shown past
    /// a mate, a threefold repetition or the fifty-move rule holds moves
    /// that cannot be played (fastchess warns of every such `pv`).
    pub fn until_end<'a>(&self, line: &'a [Move]) -> &'a [Move] {
        let mut pos = self.current.clone();
        let mut seen: Vec<u64> = Vec::with_capacity(line.len());
        for (i, m) in line.iter().enumerate() {
            pos.play_unchecked(*m);
            let h = hash(&pos);
            let ends = terminal_of(&pos).or_else(|| threefold(h, self.hashes.iter().chain(&seen)));
            if ends.is_some() {
                return &line[..=i];
            }
            seen.push(h);
        }
        line
    }

    /// Whether the current position ends the game.
    pub fn terminal_now(&self) -> Option<Terminal> {
        terminal_of(&self.current).or_else(|| {
            let (last, earlier) = self.hashes.split_last()?;
            threefold(*last, earlier)
        })
    }
}

/// A threefold repetition: the position of key `now` stood twice before,
/// among the `earlier` keys.
fn threefold<'a>(now: u64, earlier: impl IntoIterator<Item = &'a u64>) -> Option<Terminal> {
    let repeats = earlier.into_iter().filter(|&&h| h == now).count();
    (repeats >= 2).then_some(Terminal::Threefold)
}

/// Rules that the position alone decides: the variant's own first (an
/// antichess stalemate is a win, an exploded king a loss), then chess's.
fn terminal_of(pos: &VariantPosition) -> Option<Terminal> {
    if let Outcome::Known(known) = pos.variant_outcome() {
        let end = match known {
            KnownOutcome::Decisive { winner } if winner == pos.turn() => VariantEnd::Won,
            KnownOutcome::Decisive { .. } => VariantEnd::Lost,
            KnownOutcome::Draw => VariantEnd::Drawn,
        };
        return Some(Terminal::Variant(end));
    }
    if pos.legal_moves().is_empty() {
        return Some(if pos.is_check() {
            Terminal::Checkmate
        } else {
            Terminal::Stalemate
        });
    }
    if pos.is_insufficient_material() {
        return Some(Terminal::InsufficientMaterial);
    }
    if pos.halfmoves() >= 100 {
        return Some(Terminal::FiftyMoves);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(fen: &str, moves: &str) -> Game {
        let mut g = Game::from_fen(fen, CastlingMode::Standard).expect("test fen");
        for m in moves.split_whitespace() {
            g.push_uci(&m.parse().expect("uci")).expect("legal");
        }
        g
    }

    fn mv(g: &Game, line: &[Move], uci: &str) -> Move {
        let mut pos = g.position().clone();
        for m in line {
            pos.play_unchecked(*m);
        }
        uci.parse::<UciMove>()
            .expect("uci")
            .to_move(&pos)
            .expect("legal")
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn rules_that_end_a_game() {
        let cases = [
            // Fool's mate: white to move is mated.
            (
                "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
                Some(Terminal::Checkmate),
            ),
            ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", Some(Terminal::Stalemate)),
            (
                "8/8/4k3/8/8/3BK3/8/8 w - - 0 1",
                Some(Terminal::InsufficientMaterial),
            ),
            (
                "8/8/4k3/8/8/3RK3/8/8 w - - 100 80",
                Some(Terminal::FiftyMoves),
            ),
            ("8/8/4k3/8/8/3RK3/8/8 w - - 99 80", None),
            (START, None),
        ];
        for (fen, want) in cases {
            assert_eq!(game(fen, "").terminal_now(), want, "{fen}");
        }
    }

    #[test]
    fn threefold_counts_the_game_history() {
        // The start position occurs twice in the history (after 4 knight moves).
        let g = game(START, "g1f3 g8f6 f3g1 f6g8");
        assert_eq!(g.terminal_now(), None);
        let a = mv(&g, &[], "g1f3");
        let b = mv(&g, &[a], "g8f6");
        let c = mv(&g, &[a, b], "f3g1");
        let d = mv(&g, &[a, b, c], "f6g8");
        assert_eq!(g.terminal_after(&[a]), None);
        assert_eq!(g.terminal_after(&[a, b]), None, "second occurrence only");
        // Third occurrence of the position after 1. Nf3 Nf6 2. Ng1: ply 3 of the game.
        assert_eq!(
            g.terminal_after(&[a, b, c]),
            None,
            "second occurrence of this one"
        );
        assert_eq!(g.terminal_after(&[a, b, c, d]), Some(Terminal::Threefold));
        // A repetition short of a draw: after 1. Nf3 the position stood on
        // the board at ply 1 of the game; 1. Nc3 is new, and returning to it
        // on the line repeats it.
        assert!(g.repeats_after(&[a]));
        let n = mv(&g, &[], "b1c3");
        assert!(!g.repeats_after(&[n]));
        let back = [
            n,
            b,
            mv(&g, &[n, b], "c3b1"),
            mv(&g, &[n, b, mv(&g, &[n, b], "c3b1")], "f6g8"),
        ];
        assert!(g.repeats_after(&back));
        assert!(!g.repeats_after(&[]));
        // Mate beats the fifty-move rule.
        let g = game("7k/8/6K1/8/8/8/8/R7 w - - 99 80", "");
        let m = mv(&g, &[], "a1a8");
        assert_eq!(g.terminal_after(&[m]), Some(Terminal::Checkmate));
    }

    fn variant_game(variant: Variant, fen: &str, moves: &str) -> Game {
        let moves: Vec<UciMove> = moves
            .split_whitespace()
            .map(|m| m.parse().expect("uci"))
            .collect();
        let start = StartPosition::Fen(fen.parse().expect("test fen"));
        let (g, notes) =
            Game::from_position_command(start, &moves, CastlingMode::Standard, variant)
                .expect("a position of the variant");
        assert!(notes.is_empty(), "{notes:?}");
        g
    }

    #[test]
    fn each_variant_ends_by_its_own_rules() {
        use VariantEnd::*;
        let cases = [
            // Atomic: Nxf7 takes a pawn in chess; here the capture
            // explodes f7's neighbours, e8's king among them.
            (
                Variant::Atomic,
                "rnbqkbnr/pppppppp/8/6N1/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 1",
                "g5f7",
                Some(Terminal::Variant(Lost)),
            ),
            // Antichess: stalemated, the side to move wins.
            (
                Variant::Antichess,
                "8/8/8/8/8/p7/P7/8 w - - 0 1",
                "",
                Some(Terminal::Variant(Won)),
            ),
            // Antichess: no piece left wins.
            (
                Variant::Antichess,
                "8/8/8/8/8/8/1p6/R7 b - - 0 1",
                "b2a1q",
                Some(Terminal::Variant(Won)),
            ),
            // King of the hill: the king on e4.
            (
                Variant::KingOfTheHill,
                "4k3/8/8/8/8/4K3/8/8 w - - 0 1",
                "e3e4",
                Some(Terminal::Variant(Lost)),
            ),
            // Three-check: the third check ends it, mate or not.
            (
                Variant::ThreeCheck,
                "4k3/8/8/8/8/8/8/4K2R w K - 1+3 0 1",
                "h1h8",
                Some(Terminal::Variant(Lost)),
            ),
            // Racing kings: white reaches the eighth rank, black cannot.
            (
                Variant::RacingKings,
                "8/6K1/8/8/8/8/k7/8 w - - 0 1",
                "g7g8",
                Some(Terminal::Variant(Lost)),
            ),
            // Horde: black takes white's last piece.
            (
                Variant::Horde,
                "4k3/8/8/8/8/8/3r4/3P4 b - - 0 1",
                "d2d1",
                Some(Terminal::Variant(Lost)),
            ),
            // Crazyhouse: a mate a chess board would call one is one here
            // only when no drop blocks it; a knight in hand blocks the rook.
            (
                Variant::Crazyhouse,
                "6k1/5ppp/8/8/8/8/8/R5K1[n] w - - 0 1",
                "a1a8",
                None,
            ),
            (
                Variant::Crazyhouse,
                "6k1/5ppp/8/8/8/8/8/R5K1[] w - - 0 1",
                "a1a8",
                Some(Terminal::Checkmate),
            ),
            (Variant::Atomic, START, "e2e4", None),
        ];
        for (variant, fen, moves, want) in cases {
            let g = variant_game(variant, fen, moves);
            assert_eq!(g.terminal_now(), want, "{variant} {fen} {moves}");
            assert_eq!(g.variant(), variant);
        }
        // The same capture in chess takes a pawn, and the game goes on.
        let g = game(
            "rnbqkbnr/pppppppp/8/6N1/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 1",
            "g5f7",
        );
        assert_eq!(g.terminal_now(), None);
        assert!(g.chess().is_some());
        // A line ends where the variant's game does, and leaves no move.
        let g = variant_game(Variant::KingOfTheHill, "4k3/8/8/8/8/8/4K3/8 w - - 0 1", "");
        let a = mv(&g, &[], "e2e3");
        let b = mv(&g, &[a], "e8e7");
        let up = mv(&g, &[a, b], "e3e4");
        assert_eq!(
            g.terminal_after(&[a, b, up]),
            Some(Terminal::Variant(VariantEnd::Lost))
        );
        assert_eq!(g.terminal_after(&[a, b]), None);
        let mut end = g.position().clone();
        for m in [a, b, up] {
            end.play_unchecked(m);
        }
        assert!(end.legal_moves().is_empty(), "no move after the end");
        assert!(g.chess().is_none());
    }

    #[test]
    fn a_variant_position_command_reads_pockets_checks_and_drops() {
        let start = StartPosition::Fen(
            "r1bqkbnr/ppp2ppp/2n5/4p3/4P3/5N2/PPP2PPP/RNBQKB1R[Pp] w KQkq - 0 5"
                .parse()
                .expect("fen"),
        );
        let moves: Vec<UciMove> = ["P@d5", "N@d4"]
            .iter()
            .map(|m| m.parse().expect("uci"))
            .collect();
        let (g, notes) =
            Game::from_position_command(start, &moves, CastlingMode::Standard, Variant::Crazyhouse)
                .expect("a crazyhouse position");
        // Black has no knight in hand: its drop is refused, noted.
        assert_eq!(g.moves().len(), 1, "{notes:?}");
        assert_eq!(notes.len(), 1);
        // The variant's own start position, for `startpos`.
        let (g, _) = Game::from_position_command(
            StartPosition::Startpos,
            &[],
            CastlingMode::Standard,
            Variant::RacingKings,
        )
        .expect("racing kings");
        assert_eq!(
            Fen::from_position(g.position(), EnPassantMode::Legal).to_string(),
            "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - - 0 1"
        );
        // Three-check's counters: one check left for white to give.
        let (g, _) = Game::from_position_command(
            StartPosition::Fen("4k3/8/8/8/8/8/8/4K2R w K - 1+3 0 1".parse().expect("fen")),
            &[],
            CastlingMode::Standard,
            Variant::ThreeCheck,
        )
        .expect("three-check");
        assert!(
            Fen::from_position(g.position(), EnPassantMode::Legal)
                .to_string()
                .contains(" 1+3 "),
        );
        // A FEN no variant rule allows is refused, naming the variant.
        let e = Game::from_position_command(
            StartPosition::Fen("8/8/8/8/8/8/8/8 w - - 0 1".parse().expect("fen")),
            &[],
            CastlingMode::Standard,
            Variant::Atomic,
        )
        .expect_err("no kings");
        assert!(e.contains("atomic"), "{e}");
    }

    #[test]
    fn incremental_hash_matches_full() {
        let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
        let (_, mut p) = position_from_fen(fen, CastlingMode::Standard).expect("test fen");
        let mut h = hash(&p);
        // A few plies through every kind of move the position has.
        for _ in 0..6 {
            for m in p.legal_moves() {
                let mut c = p.clone();
                c.play_unchecked(m);
                assert_eq!(hash_after(&p, h, m, &c), hash(&c), "{m:?}");
            }
            let m = p.legal_moves()[3];
            let mut c = p.clone();
            c.play_unchecked(m);
            h = hash_after(&p, h, m, &c);
            p = c;
        }
    }

    #[test]
    fn a_line_ends_where_the_game_does() {
        // Knights out and back twice: the start position a third time
        // after the eighth move.
        let g = game(START, "");
        let shuffle = [
            "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8", "e2e4", "e7e5",
        ];
        let mut line = Vec::new();
        for uci in shuffle {
            let m = mv(&g, &line, uci);
            line.push(m);
        }
        assert_eq!(g.until_end(&line).len(), 8);
        assert_eq!(g.until_end(&line[..5]).len(), 5);
        // Fool's mate: nothing after the mate.
        let g = game(START, "f2f3 e7e5 g2g4");
        let mate = mv(&g, &[], "d8h4");
        assert_eq!(g.until_end(&[mate]).len(), 1);
    }
}
