//! A game as the GUI gave it: where it started, every move since, and the
//! repetition history, with the exact rules that end it.
//!
//! The meta-engine decides finished games itself, at every node of its
//! lookahead, so no child is ever asked about one. Threefold repetition needs the
//! whole history from `position … moves …`, which is why a [`Game`] keeps the
//! hash of every position it passed through.

use shakmaty::{
    CastlingMode, Chess, Color, EnPassantMode, KnownOutcome, Move, Outcome, Position,
    PositionError, PositionErrorKinds,
    fen::Fen,
    uci::{IllegalUciMoveError, UciMove},
    variant::{Variant, VariantPosition},
    zobrist::Zobrist64,
};

use crate::{GameMove, MoveText, StartPosition};

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

/// The rules a game is played by: shakmaty's, for chess and the
/// lichess variants (mpcmc decides every position itself), or a child's,
/// for a game mpcmc knows by its `UCI_Variant` name only (xiangqi,
/// shogi, makruk…: the child lists the legal moves and ends the game).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rules {
    Board(Variant),
    Named(&'static str),
}

impl Rules {
    /// The games Fairy-Stockfish plays that shakmaty has no rules for,
    /// by the names its `UCI_Variant` combo writes: each played and
    /// refereed in the tests (`tests/named_games.rs`).
    pub const NAMED: [&'static str; 12] = [
        "xiangqi",
        "shogi",
        "makruk",
        "janggi",
        "capablanca",
        "grand",
        "seirawan",
        "shatranj",
        "minishogi",
        "minixiangqi",
        "cambodian",
        "sittuyin",
    ];

    /// Every game by its `UCI_Variant` name: chess, shakmaty's lichess
    /// variants, then [`Rules::NAMED`].
    pub fn all() -> impl Iterator<Item = Rules> {
        Variant::ALL
            .into_iter()
            .map(Rules::Board)
            .chain(Rules::NAMED.into_iter().map(Rules::Named))
    }

    /// The game a `UCI_Variant` value names (as Fairy-Stockfish writes it).
    pub fn from_uci(name: &str) -> Option<Rules> {
        Rules::all().find(|r| r.uci() == name)
    }

    /// The `UCI_Variant` value.
    pub fn uci(self) -> &'static str {
        match self {
            Rules::Board(v) => v.uci(),
            Rules::Named(name) => name,
        }
    }

    /// The shakmaty variant, where mpcmc knows the rules.
    pub fn board(self) -> Option<Variant> {
        match self {
            Rules::Board(v) => Some(v),
            Rules::Named(_) => None,
        }
    }
}

impl From<Variant> for Rules {
    fn from(v: Variant) -> Rules {
        Rules::Board(v)
    }
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::Board(Variant::Chess)
    }
}

impl std::fmt::Display for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.uci())
    }
}

/// A game from its start position with every move played since.
#[derive(Debug, Clone)]
pub struct Game {
    moves: Vec<GameMove>,
    /// Hash of every position reached, the start included: `moves.len() + 1`.
    hashes: Vec<u64>,
    castling: CastlingMode,
    kind: Kind,
}

// One per game, behind an `Arc`: the board kind's size costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum Kind {
    /// shakmaty's rules: every position is known.
    Board {
        /// `None`: the standard start position (written `startpos` to
        /// children).
        start_fen: Option<Fen>,
        start: VariantPosition,
        current: VariantPosition,
    },
    /// A child's rules: the moves are its tokens, as the GUI sent them.
    Named {
        name: &'static str,
        /// The FEN as the GUI sent it; `None`: the variant's start.
        start_fen: Option<String>,
        /// Whether White (the side the FEN's second field names; the
        /// first player, Fairy-Stockfish's `w`) moved first.
        white_first: bool,
        /// The current position's legal moves, once a child listed them
        /// ([`Game::with_legal`]).
        legal: Option<Vec<MoveText>>,
        /// How the game ended at the current position, once a child said
        /// (no legal move: [`Game::with_legal`]).
        end: Option<VariantEnd>,
    },
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
            hashes: vec![hash(&start)],
            moves: Vec::new(),
            castling,
            kind: Kind::Board {
                start_fen,
                current: start.clone(),
                start,
            },
        }
    }

    /// A game by a child's rules: `name` from `start` (the variant's own,
    /// or a FEN mpcmc does not read) with the GUI's `moves`, unchecked
    /// until a child lists each position's legal moves.
    pub fn named(name: &'static str, start: StartPosition, moves: &[MoveText]) -> Game {
        let start_fen = match start {
            StartPosition::Startpos => None,
            StartPosition::Fen(text) => Some(text),
        };
        let white_first = start_fen
            .as_deref()
            .and_then(|f| f.split_whitespace().nth(1))
            .is_none_or(|side| side != "b");
        let mut game = Game {
            hashes: vec![named_hash(0, start_fen.as_deref().unwrap_or(name))],
            moves: Vec::new(),
            castling: CastlingMode::Standard,
            kind: Kind::Named {
                name,
                start_fen,
                white_first,
                legal: None,
                end: None,
            },
        };
        for m in moves {
            game.push(GameMove::Named(*m));
        }
        game
    }

    /// The same game with the current position's legal moves, as a child
    /// listed them, and, when there are none, how that ended the game for
    /// the side to move, as the child scored it (a game by a child's
    /// rules; a board game knows its own).
    pub fn with_legal(mut self, moves: Vec<MoveText>, ended: Option<VariantEnd>) -> Game {
        if let Kind::Named { legal, end, .. } = &mut self.kind {
            *end = ended.filter(|_| moves.is_empty());
            *legal = Some(moves);
        }
        self
    }

    /// The game's first `plies` moves (`plies` at most the game's).
    pub fn truncated(&self, plies: usize) -> Game {
        let mut game = self.clone();
        game.moves.truncate(plies);
        game.hashes.truncate(plies + 1);
        match &mut game.kind {
            Kind::Board { start, current, .. } => {
                *current = start.clone();
                for m in game.moves.iter().filter_map(|m| m.board()) {
                    current.play_unchecked(m);
                }
            }
            Kind::Named { legal, end, .. } => (*legal, *end) = (None, None),
        }
        game
    }

    /// The start position of `rules` (written `startpos` to children,
    /// which know the variant's own).
    pub fn start_of(rules: impl Into<Rules>, castling: CastlingMode) -> Game {
        match rules.into() {
            Rules::Board(variant) => Game::new(None, VariantPosition::new(variant), castling),
            Rules::Named(name) => Game::named(name, StartPosition::Startpos, &[]),
        }
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
        moves: &[MoveText],
        mode: CastlingMode,
        rules: impl Into<Rules>,
    ) -> Result<(Game, Vec<String>), String> {
        let variant = match rules.into() {
            Rules::Board(variant) => variant,
            Rules::Named(name) => return Ok((Game::named(name, start, moves), Vec::new())),
        };
        let mut notes = Vec::new();
        let (fen, pos) = match start {
            StartPosition::Startpos => (None, VariantPosition::new(variant)),
            StartPosition::Fen(text) => {
                // cutechess writes an empty crazyhouse pocket `[-]`;
                // shakmaty (and lichess) `[]`.
                let fen = Fen::from_ascii(text.replacen("[-]", "[]", 1).as_bytes())
                    .map_err(|e| format!("invalid fen '{text}': {e}"))?;
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
            if game.push_text(uci).is_none() {
                let fen = game
                    .position()
                    .map(|pos| Fen::from_position(pos, EnPassantMode::Legal).to_string())
                    .unwrap_or_default();
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
        let Kind::Board { current, .. } = &self.kind else {
            return Err(IllegalUciMoveError);
        };
        let m = uci.to_move(current)?;
        self.push(m);
        Ok(m)
    }

    /// Plays a move as a UCI line writes it (either castling notation)
    /// if it is legal in [`Game::position`]; `None` if it is not.
    pub fn push_text(&mut self, text: &MoveText) -> Option<GameMove> {
        self.push_uci(&text.uci()?).ok().map(GameMove::Board)
    }

    /// Plays a move known to be legal in [`Game::position`] (read by this
    /// game: a board game's moves are shakmaty's, and a child's token is
    /// never one of them).
    pub fn push(&mut self, m: impl Into<GameMove>) {
        let m = m.into();
        let last = self.hashes.last().copied().unwrap_or_default();
        match (&mut self.kind, m) {
            (Kind::Board { current, .. }, GameMove::Board(b)) => {
                current.play_unchecked(b);
                self.hashes.push(hash(current));
            }
            (Kind::Named { legal, end, .. }, GameMove::Named(text)) => {
                (*legal, *end) = (None, None);
                self.hashes.push(named_hash(last, text.as_str()));
            }
            _ => return,
        }
        self.moves.push(m);
    }

    /// The legal moves of the current position: a game by a child's rules
    /// knows them once a child listed them ([`Game::with_legal`]), and has
    /// none before.
    pub fn legal_moves(&self) -> Vec<GameMove> {
        match &self.kind {
            Kind::Board { current, .. } => current
                .legal_moves()
                .into_iter()
                .map(GameMove::Board)
                .collect(),
            Kind::Named { legal, .. } => legal
                .iter()
                .flatten()
                .copied()
                .map(GameMove::Named)
                .collect(),
        }
    }

    /// The move `text` names in the position after `line` (legal moves
    /// from the current position), if it is legal there. In a game by a
    /// child's rules, a move of the current position must be on the
    /// child's list; later, every move token is the child's to judge.
    pub fn read_after(&self, line: &[GameMove], text: &MoveText) -> Option<GameMove> {
        match &self.kind {
            Kind::Board { .. } => {
                let pos = self.after(line)?;
                text.uci()?.to_move(&pos).ok().map(GameMove::Board)
            }
            Kind::Named { legal, .. } => {
                let listed = match (line, legal) {
                    ([], Some(legal)) => legal.contains(text),
                    _ => true,
                };
                listed.then_some(GameMove::Named(*text))
            }
        }
    }

    /// The longest prefix of `pv` (a child's line, from the position
    /// after `line`) that is legal: in a game by a child's rules, every
    /// move token (the child's rules judge them).
    pub fn read_line(&self, line: &[GameMove], pv: &[MoveText]) -> Vec<GameMove> {
        let mut read: Vec<GameMove> = Vec::with_capacity(pv.len());
        let Some(mut pos) = self.after(line) else {
            return pv.iter().map(|t| GameMove::Named(*t)).collect();
        };
        for text in pv {
            let Some(m) = text.uci().and_then(|u| u.to_move(&pos).ok()) else {
                break;
            };
            pos.play_unchecked(m);
            read.push(GameMove::Board(m));
        }
        read
    }

    /// Where the position after `line` is, for messages: its FEN in a
    /// board game; in a game by a child's rules, the start and the moves.
    pub fn describe_after(&self, line: &[GameMove]) -> String {
        if let Some(pos) = self.after(line) {
            return Fen::from_position(&pos, EnPassantMode::Legal).to_string();
        }
        let start = self.start_fen().unwrap_or_else(|| "startpos".to_owned());
        let moves: Vec<String> = (self.moves.iter().chain(line))
            .map(|m| m.text(self.castling).to_string())
            .collect();
        format!("{} {start} moves {}", self.rules(), moves.join(" "))
    }

    /// A key of the position after `line` (legal moves from the current
    /// position): the position's [`hash`] in a board game; in a game by a
    /// child's rules, a hash of the moves that led there.
    pub fn hash_after(&self, line: &[GameMove]) -> u64 {
        let now = self.hashes.last().copied().unwrap_or_default();
        match (&self.kind, self.after(line)) {
            (Kind::Board { .. }, Some(pos)) => hash(&pos),
            _ => line
                .iter()
                .fold(now, |h, m| named_hash(h, m.text(self.castling).as_str())),
        }
    }

    /// The position after `line` (legal moves from the current position):
    /// `None` in a game by a child's rules.
    pub fn after(&self, line: &[GameMove]) -> Option<VariantPosition> {
        let mut pos = self.position()?.clone();
        for m in line {
            pos.play_unchecked(m.board()?);
        }
        Some(pos)
    }

    /// The current position, where mpcmc knows the rules (`None` in a game
    /// by a child's rules).
    pub fn position(&self) -> Option<&VariantPosition> {
        match &self.kind {
            Kind::Board { current, .. } => Some(current),
            Kind::Named { .. } => None,
        }
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        match &self.kind {
            Kind::Board { current, .. } => current.turn(),
            Kind::Named { white_first, .. } => {
                let first = Color::from_white(*white_first);
                if self.moves.len().is_multiple_of(2) {
                    first
                } else {
                    !first
                }
            }
        }
    }

    /// The current position when the game is orthodox chess (or
    /// Chess960): what the chess-only parts (the built-in engine, the
    /// tablebases, the books) read; `None` in a variant.
    pub fn chess(&self) -> Option<&Chess> {
        match self.position()? {
            VariantPosition::Chess(pos) => Some(pos),
            _ => None,
        }
    }

    /// The game's rules (`UCI_Variant`): chess, one of shakmaty's lichess
    /// variants, or a game a child knows.
    pub fn rules(&self) -> Rules {
        match &self.kind {
            Kind::Board { current, .. } => Rules::Board(current.variant()),
            Kind::Named { name, .. } => Rules::Named(name),
        }
    }

    /// The start position's FEN as children are sent it; `None`: the
    /// variant's start (`startpos`).
    pub fn start_fen(&self) -> Option<String> {
        match &self.kind {
            Kind::Board { start_fen, .. } => start_fen.as_ref().map(Fen::to_string),
            Kind::Named { start_fen, .. } => start_fen.clone(),
        }
    }

    /// The start position, where mpcmc knows the rules.
    pub fn start(&self) -> Option<&VariantPosition> {
        match &self.kind {
            Kind::Board { start, .. } => Some(start),
            Kind::Named { .. } => None,
        }
    }

    pub fn moves(&self) -> &[GameMove] {
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
    /// In a game by a child's rules: `None` (the child ends it).
    pub fn terminal_after(&self, line: &[GameMove]) -> Option<Terminal> {
        let mut pos = self.position()?.clone();
        let mut seen: Vec<u64> = Vec::with_capacity(line.len());
        for m in line {
            pos.play_unchecked(m.board()?);
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
    pub fn repeats_after(&self, line: &[GameMove]) -> bool {
        let Some(pos) = self.position() else {
            return false;
        };
        let mut pos = pos.clone();
        let mut seen: Vec<u64> = Vec::with_capacity(line.len());
        for m in line {
            let Some(m) = m.board() else {
                return false;
            };
            pos.play_unchecked(m);
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
    pub fn until_end<'a>(&self, line: &'a [GameMove]) -> &'a [GameMove] {
        let Some(pos) = self.position() else {
            return line;
        };
        let mut pos = pos.clone();
        let mut seen: Vec<u64> = Vec::with_capacity(line.len());
        for (i, m) in line.iter().enumerate() {
            let Some(m) = m.board() else {
                return line;
            };
            pos.play_unchecked(m);
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
        let pos = match &self.kind {
            Kind::Board { current, .. } => current,
            Kind::Named { end, .. } => return end.map(Terminal::Variant),
        };
        terminal_of(pos).or_else(|| {
            let (last, earlier) = self.hashes.split_last()?;
            threefold(*last, earlier)
        })
    }
}

/// The key after `text` from the key `before`, in a game by a child's
/// rules (FNV-1a over the move's bytes, seeded with the key before).
fn named_hash(before: u64, text: &str) -> u64 {
    text.bytes().fold(before ^ 0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
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
mod tests;
