//! Syzygy endgame tablebases (`SyzygyPath`), read with `shakmaty-syzygy`
//! (by shakmaty's author): opened here, and shared by the whole program
//! ([`Syzygy::shared`]) — the engine's own search and root, every
//! in-process child's, and the meta-engine's exact values.
//!
//! In the search a position reached by a capture or pawn move with few
//! enough pieces is valued by its WDL (as Stockfish probes); at a root the
//! tables hold, the moves are ranked by DTZ and the fifty-move counter and
//! only the best-ranked are searched, so a win is never let go and a draw
//! never lost ([`Syzygy::rank_root`]).

use std::{
    cmp::Ordering,
    path::PathBuf,
    sync::{Arc, Mutex},
};

use mpcmc_protocol::{output::Output, session::Opened};
use shakmaty::{Chess, Move, Position};
use shakmaty_syzygy::{AmbiguousWdl, Tablebase, Wdl};

use crate::score::{MAX_PLY, TB_WIN};

/// Separates directories in `SyzygyPath`, as Stockfish reads it.
#[cfg(windows)]
pub const PATH_SEPARATOR: char = ';';
#[cfg(not(windows))]
pub const PATH_SEPARATOR: char = ':';

/// A `SyzygyPath` that cannot be used, naming what failed. Its text says
/// what is wrong with the path in plain words, never the system's error
/// text: a GUI reads some of those (XBoard: `No such file`) as its engine
/// failing to start.
#[derive(Debug, thiserror::Error)]
pub enum SyzygyError {
    #[error("{}", unreadable(dir, source))]
    Read {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("no Syzygy tables (.rtbw/.rtbz) in '{path}'")]
    Empty { path: String },
}

/// Why `dir` cannot be read, in words of our own.
fn unreadable(dir: &std::path::Path, source: &std::io::Error) -> String {
    let dir = dir.display();
    match source.kind() {
        std::io::ErrorKind::NotFound => format!("there is no directory '{dir}'"),
        std::io::ErrorKind::PermissionDenied => format!("directory '{dir}' may not be read"),
        std::io::ErrorKind::NotADirectory => format!("'{dir}' is not a directory"),
        _ => format!("directory '{dir}' cannot be read"),
    }
}

/// The tables of every directory of a `SyzygyPath`.
pub struct Syzygy {
    tables: Tablebase<Chess>,
    files: usize,
}

impl std::fmt::Debug for Syzygy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Syzygy")
            .field("files", &self.files)
            .field("max_pieces", &self.max_pieces())
            .finish()
    }
}

/// A root the tables hold: the moves worth searching and the value the
/// tables give them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootRanking {
    /// The best-ranked moves: every one keeps the root's result.
    pub moves: Vec<Move>,
    /// Positions probed to rank them (one a root move).
    pub probed: usize,
    /// That result on the search's scale, for the side to move: a win
    /// above every evaluation ([`TB_WIN`] less the plies to the next
    /// capture or pawn move), 0 for a draw (a cursed win or blessed loss
    /// under the fifty-move rule included), a loss below.
    pub score: i32,
}

/// Rank of a move that wins (loses) within the fifty-move rule, as
/// Stockfish ranks root moves.
const MAX_DTZ: i32 = 1000;

impl Syzygy {
    /// Opens every directory of `path` (separated by [`PATH_SEPARATOR`]).
    pub fn open(path: &str) -> Result<Syzygy, SyzygyError> {
        let mut tables = Tablebase::new();
        let mut files = 0;
        for dir in path.split(PATH_SEPARATOR).map(str::trim) {
            if dir.is_empty() {
                continue;
            }
            files += tables
                .add_directory(dir)
                .map_err(|source| SyzygyError::Read {
                    dir: PathBuf::from(dir),
                    source,
                })?;
        }
        if files == 0 || tables.max_pieces() == 0 {
            return Err(SyzygyError::Empty {
                path: path.to_owned(),
            });
        }
        Ok(Syzygy { tables, files })
    }

    /// The tables of `path`, opened once for the whole program: every
    /// engine that names the same path shares them (and the table files
    /// they hold open). A path that cannot be used is tried again at the
    /// next call.
    pub fn shared(path: &str) -> Result<Arc<Syzygy>, SyzygyError> {
        static LAST: Mutex<Option<(String, Arc<Syzygy>)>> = Mutex::new(None);
        let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((opened, tables)) = &*last
            && opened == path
        {
            return Ok(tables.clone());
        }
        let tables = Arc::new(Syzygy::open(path)?);
        *last = Some((path.to_owned(), tables.clone()));
        Ok(tables)
    }

    /// The tables `path` (a `SyzygyPath`, trimmed) names: opened once a
    /// path (`opened` keeps them, [`Syzygy::shared`] shares them), what it
    /// holds said in an `info string` when first tried (as Stockfish says
    /// `Found N tablebases` when the option is set); `None` for an empty
    /// path or one that holds none (the engine plays without).
    pub fn opened(
        opened: &mut Opened<String, Syzygy>,
        path: &str,
        out: &Output,
    ) -> Option<Arc<Syzygy>> {
        if path.is_empty() {
            return None;
        }
        opened.get(path.to_owned(), || match Syzygy::shared(path) {
            Ok(tables) => {
                out.info_string(format!(
                    "SyzygyPath: found {} tablebase files, up to {} pieces",
                    tables.files(),
                    tables.max_pieces()
                ));
                Some(tables)
            }
            Err(e) => {
                tracing::info!("SyzygyPath '{path}': {e:?}");
                out.info_string(format!(
                    "SyzygyPath: found 0 tablebases ({e}); playing without tablebases"
                ));
                None
            }
        })
    }

    /// Table files found.
    pub fn files(&self) -> usize {
        self.files
    }

    /// The most pieces (kings included) of any table found.
    pub fn max_pieces(&self) -> usize {
        self.tables.max_pieces()
    }

    /// The tables themselves, for a prober of its own scale.
    pub fn tables(&self) -> &Tablebase<Chess> {
        &self.tables
    }

    /// Whether `pos` may be in the tables: few enough pieces, no castling
    /// rights (the tables know none).
    pub fn covers(&self, pos: &Chess) -> bool {
        pos.board().occupied().count() <= self.max_pieces() && pos.castles().is_empty()
    }

    /// The result of `pos`, reached by a capture or pawn move, for the side
    /// to move; `None` when the tables do not hold it.
    pub(crate) fn wdl_after_zeroing(&self, pos: &Chess) -> Option<Wdl> {
        if !self.covers(pos) {
            return None;
        }
        self.tables.probe_wdl_after_zeroing(pos).ok()
    }

    /// The root's `moves` ranked as Stockfish ranks them: by the plies to
    /// the next capture or pawn move (DTZ) each leaves, counted with the
    /// root's fifty-move counter, so that every move that still wins within
    /// the rule ranks alike (the search chooses among them) unless a
    /// position has repeated since the last capture or pawn move (then
    /// the fastest conversions only, so that no win is shuffled away); a
    /// move into a third repetition is a draw. `since_zeroing`: the keys
    /// ([`mpcmc_protocol::game::hash`]) of the game's positions since the
    /// last capture or pawn move, the root last. Without `fifty_move_rule`
    /// a cursed win is a win and a blessed loss a loss. `None` when the
    /// tables do not hold the root or a position after one of its moves.
    pub fn rank_root(
        &self,
        root: &Chess,
        moves: &[Move],
        since_zeroing: &[u64],
        fifty_move_rule: bool,
    ) -> Option<RootRanking> {
        if !self.covers(root) || moves.is_empty() {
            return None;
        }
        let mut seen = since_zeroing.to_vec();
        seen.sort_unstable();
        let repeated = seen.windows(2).any(|w| w[0] == w[1]);
        let third_time = |after: &Chess| {
            let key = mpcmc_protocol::game::hash(after);
            seen.iter().filter(|&&k| k == key).count() >= 2
        };
        let counter = root.halfmoves().min(100) as i32;
        let bound = if fifty_move_rule { MAX_DTZ - 100 } else { 1 };
        let mut ranked = Vec::with_capacity(moves.len());
        for &m in moves {
            let dtz = self.dtz_after(root, m, &third_time).ok()?;
            let rank = if dtz > 0 {
                if dtz + counter <= 99 && !repeated {
                    MAX_DTZ
                } else {
                    MAX_DTZ - (dtz + counter)
                }
            } else if dtz < 0 {
                if -dtz * 2 + counter < 100 {
                    -MAX_DTZ
                } else {
                    -MAX_DTZ + (-dtz + counter)
                }
            } else {
                0
            };
            let plies = dtz.unsigned_abs().min(MAX_PLY as u32) as i32;
            let score = if rank >= bound {
                TB_WIN - plies
            } else if rank <= -bound {
                -TB_WIN + plies
            } else {
                0
            };
            ranked.push((m, rank, score));
        }
        let best = ranked.iter().map(|r| r.1).max()?;
        let probed = ranked.len();
        ranked.retain(|r| r.1 == best);
        Some(RootRanking {
            probed,
            score: ranked.iter().map(|r| r.2).max()?,
            moves: ranked.into_iter().map(|r| r.0).collect(),
        })
    }

    /// The plies from `root` to the next capture or pawn move on the
    /// tables' best line after `m` (DTZ): positive when the side to move at
    /// `root` wins, negative when it loses, 0 for a draw (a move into a
    /// position that is there for the `third_time` too); ±101 and more for
    /// a win or loss the fifty-move rule undoes.
    fn dtz_after(
        &self,
        root: &Chess,
        m: Move,
        third_time: &impl Fn(&Chess) -> bool,
    ) -> Result<i32, shakmaty_syzygy::SyzygyError> {
        let mut after = root.clone();
        after.play_unchecked(m);
        if after.is_checkmate() {
            return Ok(1);
        }
        if third_time(&after) {
            return Ok(0);
        }
        if m.is_zeroing() {
            // The opponent's result right after the capture or pawn move.
            return Ok(match self.tables.probe_wdl_after_zeroing(&after)? {
                Wdl::Loss => 1,
                Wdl::BlessedLoss => 101,
                Wdl::Draw => 0,
                Wdl::CursedWin => -101,
                Wdl::Win => -1,
            });
        }
        if after.halfmoves() >= 100 {
            return Ok(0);
        }
        let theirs = self.tables.probe_dtz(&after)?.ignore_rounding().0;
        Ok(match -theirs {
            ours if ours > 0 => ours + 1,
            ours if ours < 0 => ours - 1,
            _ => 0,
        })
    }
}

/// What a tablebase result is for the side to move: a win (`Greater`), a
/// draw or a loss. Under the fifty-move rule a win it frustrates (cursed)
/// and a loss it saves (blessed) are draws; without it (correspondence
/// chess) a win and a loss. A result DTZ rounding leaves open (maybe a
/// win) counts as the win.
pub fn outcome(wdl: AmbiguousWdl, fifty_move_rule: bool) -> Ordering {
    match wdl {
        AmbiguousWdl::Win | AmbiguousWdl::MaybeWin => Ordering::Greater,
        AmbiguousWdl::CursedWin if !fifty_move_rule => Ordering::Greater,
        AmbiguousWdl::Loss | AmbiguousWdl::MaybeLoss => Ordering::Less,
        AmbiguousWdl::BlessedLoss if !fifty_move_rule => Ordering::Less,
        AmbiguousWdl::CursedWin | AmbiguousWdl::Draw | AmbiguousWdl::BlessedLoss => Ordering::Equal,
    }
}

/// The value of a position reached by a capture or pawn move whose
/// result for the side to move is `wdl`, `ply` plies below the root
/// ([`outcome`]): a win above every evaluation and below every mate, a
/// loss below, a draw 0 — a cursed win or blessed loss under the
/// fifty-move rule nudged by 2 (Stockfish's). Whether the value is exact
/// or a bound on what the search would find (a win may be a mate).
pub(crate) fn value_after_zeroing(wdl: Wdl, fifty_move_rule: bool, ply: usize) -> (i32, Bound) {
    match outcome(AmbiguousWdl::from(wdl), fifty_move_rule) {
        Ordering::Greater => (TB_WIN - ply as i32, Bound::AtLeast),
        Ordering::Less => (-TB_WIN + ply as i32, Bound::AtMost),
        Ordering::Equal => (
            2 * (wdl as i32) * i32::from(fifty_move_rule),
            Bound::Exactly,
        ),
    }
}

/// What a tablebase value says of the search's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    Exactly,
    AtLeast,
    AtMost,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_after_zeroing_order_as_results() {
        let v = |wdl, rule| value_after_zeroing(wdl, rule, 3).0;
        assert_eq!(v(Wdl::Win, true), TB_WIN - 3);
        assert_eq!(v(Wdl::CursedWin, true), 2);
        assert_eq!(v(Wdl::Draw, true), 0);
        assert_eq!(v(Wdl::BlessedLoss, true), -2);
        assert_eq!(v(Wdl::Loss, true), -(TB_WIN - 3));
        assert_eq!(v(Wdl::CursedWin, false), TB_WIN - 3);
        assert_eq!(v(Wdl::BlessedLoss, false), -(TB_WIN - 3));
        assert_eq!(
            value_after_zeroing(Wdl::Win, true, 0).1,
            Bound::AtLeast,
            "a win may be a mate"
        );
    }

    #[test]
    fn no_path_or_a_missing_one_opens_nothing() {
        // What is said is read back through the binary (tests/tablebase.rs).
        let (out, _writer) = Output::start(std::io::sink()).expect("writer");
        let mut opened = Opened::default();
        assert!(Syzygy::opened(&mut opened, "", &out).is_none());
        for _ in 0..2 {
            assert!(Syzygy::opened(&mut opened, "/nonexistent/syzygy", &out).is_none());
        }
    }
}
