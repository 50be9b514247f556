//! Syzygy endgame tablebases (`SyzygyPath`): the exact value of a position
//! with few pieces, and the move that keeps it, read with
//! `shakmaty-syzygy` (by shakmaty's author).
//!
//! Values are under the fifty-move rule, as a game is played: a win the
//! rule frustrates (cursed) and a loss it saves (blessed) are draws (unless
//! `Syzygy50MoveRule` is off). A win
//! is [`Value::tablebase_win`]: above every centipawn score, below every
//! mate, higher the sooner it reaches its next capture or pawn move.
// The tables are files a user names: nothing in them may panic the engine.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use std::{cmp::Ordering, sync::Arc, time::Duration};

use mpcmc_builtin::syzygy::{self, Syzygy};
use mpcmc_protocol::GameMove;
use shakmaty::{Chess, Move, Position, variant::VariantPosition};
use shakmaty_syzygy::AmbiguousWdl;
use tokio_util::sync::CancellationToken;

use crate::mpc::{Children, Extra, Query, Report, Value};

pub use mpcmc_builtin::syzygy::{PATH_SEPARATOR, SyzygyError};

/// The tables of a `SyzygyPath` (opened by the built-in engine's
/// [`Syzygy`], which probes them in its own search), valued on the
/// meta-engine's scale.
#[derive(Debug)]
pub struct Tables {
    tables: Arc<Syzygy>,
    /// `Syzygy50MoveRule`: a win the fifty-move rule frustrates (cursed)
    /// and a loss it saves (blessed) are draws; off, they are a win and a
    /// loss (correspondence chess without the rule).
    fifty_move_rule: bool,
}

impl Tables {
    /// Opens every directory of `path` (separated by [`PATH_SEPARATOR`]),
    /// valuing under the fifty-move rule or not.
    pub fn open(path: &str, fifty_move_rule: bool) -> Result<Tables, SyzygyError> {
        Ok(Tables::new(Syzygy::shared(path)?, fifty_move_rule))
    }

    pub fn new(tables: Arc<Syzygy>, fifty_move_rule: bool) -> Tables {
        Tables {
            tables,
            fifty_move_rule,
        }
    }

    /// Table files found.
    pub fn files(&self) -> usize {
        self.tables.files()
    }

    /// The most pieces (kings included) of any table found.
    pub fn max_pieces(&self) -> usize {
        self.tables.max_pieces()
    }

    /// Whether `pos` may be in the tables: few enough pieces, no castling
    /// rights (the tables know none).
    pub fn covers(&self, pos: &Chess) -> bool {
        self.tables.covers(pos)
    }

    /// The value of `pos` for the side to move, counting its fifty-move
    /// counter; `None` when the tables do not hold it (a table missing, a
    /// file that cannot be read: said in the log).
    pub fn value(&self, pos: &Chess) -> Option<Value> {
        if !self.covers(pos) {
            return None;
        }
        // One DTZ probe: the result follows from it and the counter (as
        // `probe_wdl` derives it, which would probe DTZ once more).
        let dtz = match self.tables.tables().probe_dtz(pos) {
            Ok(dtz) => dtz,
            Err(e) => {
                tracing::debug!("tablebase probe failed: {e}");
                return None;
            }
        };
        let wdl = AmbiguousWdl::from_dtz_and_halfmoves(dtz, pos.halfmoves());
        let win = Value::tablebase_win(dtz.ignore_rounding().0.unsigned_abs());
        Some(match syzygy::outcome(wdl, self.fifty_move_rule) {
            Ordering::Greater => win,
            Ordering::Less => -win,
            Ordering::Equal => Value::DRAW,
        })
    }

    /// The tables' move at `pos`, with its value for the side to move: the
    /// fastest to convert a win, the slowest to lose, a move that keeps a
    /// draw. `None` when the tables do not hold `pos` or a position after
    /// one of its moves.
    pub fn best_move(&self, pos: &Chess) -> Option<(Move, Value)> {
        let value = self.value(pos)?;
        match self.tables.tables().best_move(pos) {
            Ok(Some((mv, _))) => Some((mv, value)),
            Ok(None) => None,
            Err(e) => {
                tracing::debug!("tablebase move failed: {e}");
                None
            }
        }
    }
}

/// Children with the tables in front: a search of a position the tables
/// hold is answered from them (the tables' move and value, no nodes,
/// `tbhits` 1) and never reaches a child; every other search goes on to
/// `children`. So every line of the lookahead, at every level, and the
/// opponent's predicted reply there, are exact where the tables reach.
pub struct Tabled<C> {
    children: Arc<C>,
    tables: Option<Arc<Tables>>,
}

impl<C> Tabled<C> {
    pub fn new(children: Arc<C>, tables: Option<Arc<Tables>>) -> Tabled<C> {
        Tabled { children, tables }
    }

    /// The tables' answer to `query`, when they hold its position.
    fn answer(&self, query: &Query) -> Option<Report> {
        let tables = self.tables.as_ref()?;
        // Syzygy tables are chess's.
        let pieces = query.game.chess()?.board().occupied().count();
        if pieces > tables.max_pieces() + query.line.len() {
            // Not even a capture at every move of the line brings it in.
            return None;
        }
        let Some(VariantPosition::Chess(pos)) = query.position() else {
            return None;
        };
        let (best, value) = tables.best_move(&pos)?;
        let best = GameMove::Board(best);
        Some(Report {
            best: Some(best),
            extra: Extra {
                tbhits: Some(1),
                ..Extra::default()
            },
            score: Some(value),
            pv: vec![best],
            depth: 1,
            nodes: 0,
            search_time: Duration::ZERO,
            busy_time: Duration::ZERO,
            stopped: false,
            slot: None,
            exact: true,
        })
    }
}

impl<C: Children> Children for Tabled<C> {
    type Error = C::Error;

    async fn search(&self, query: Query, cancel: CancellationToken) -> Result<Report, C::Error> {
        match self.answer(&query) {
            Some(report) => Ok(report),
            None => self.children.search(query, cancel).await,
        }
    }
}
