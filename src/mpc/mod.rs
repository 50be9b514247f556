//! The decision core: MPC-MC lookahead over child engines.
//!
//! This module knows child engines only through [`Children`]: ask a child, in a
//! given [`Role`], to search a position reached from the game, and get a
//! [`Report`] back. Processes and pipes live in `children/`; the GUI side in
//! `uci/`. That keeps the decision logic testable in-process.

pub mod budget;
pub mod calibration;
pub mod candidate;
pub mod decision;
pub mod fortify;
pub mod level;
pub mod limit;
pub mod lookahead;
pub mod noise;
pub mod plausible;
pub mod rounds;
pub mod score;
pub mod tablebase;
pub mod time;

use std::{fmt, future::Future, sync::Arc, time::Duration};

use mpcmc_protocol::GameMove;
use shakmaty::variant::VariantPosition;
use tokio_util::sync::CancellationToken;

pub use candidate::{Candidate, Failure};
pub use decision::{Decision, Lookahead, Rule, Settings};
pub use game::{Game, Terminal, VariantEnd};
pub use limit::ChildLimit;
pub use lookahead::decide;
use mpcmc_protocol::Go;
pub use mpcmc_protocol::game;
pub use score::Value;

/// What a child engine is asked to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The position evaluator `E`: scores a position (and names its own move).
    Evaluator,
    /// The nominal opponent `ν`: predicts the reply.
    Opponent,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Evaluator => "evaluator",
            Role::Opponent => "opponent",
        })
    }
}

/// One child search: the position after `game` and `line`, searched by a child
/// in `role` under `limit`.
#[derive(Debug, Clone)]
pub struct Query {
    pub role: Role,
    pub game: Arc<Game>,
    /// Legal moves from the game's current position.
    pub line: Vec<GameMove>,
    pub limit: ChildLimit,
    /// Where the search's iterations go as they complete, when someone
    /// shows them (a search that is the whole decision).
    pub progress: Option<ProgressSink>,
    /// Set when the search ponders (`go ponder` on a [`ChildLimit::Clock`],
    /// as the child playing alone would be sent it): it runs until this
    /// token is cancelled, and the child is then told `ponderhit` and goes
    /// on on the clock. `None`: an ordinary search.
    pub ponderhit: Option<CancellationToken>,
}

impl Query {
    /// The evaluator's search of the game's current position: the decision's
    /// root (the anchor and fortification reference).
    pub fn root(game: Arc<Game>, limit: ChildLimit) -> Query {
        Query {
            role: Role::Evaluator,
            game,
            line: Vec::new(),
            limit,
            progress: None,
            ponderhit: None,
        }
    }

    /// The lines of each iteration its search shows (`MultiPV`): 1 unless
    /// its progress is shown with more ([`ProgressSink::showing`]).
    pub fn lines(&self) -> u32 {
        self.progress.as_ref().map_or(1, ProgressSink::lines)
    }

    /// How soon the call should run, 0 first: the evaluator at the root (the
    /// fortification reference and the fallback when time runs out), then
    /// calls that complete a candidate, then calls that start one. A pass cut
    /// short then holds finished candidates, not a row of half-done ones.
    pub fn urgency(&self) -> u8 {
        match (self.role, self.line.is_empty()) {
            (Role::Evaluator, true) => 0,
            (Role::Evaluator, false) => 1,
            (Role::Opponent, _) => 2,
        }
    }

    /// The evaluator's own search of the decision's root (the anchor), not a
    /// lookahead call.
    pub fn is_root(&self) -> bool {
        self.role == Role::Evaluator && self.line.is_empty()
    }

    /// The `go` a child is sent for this search: the limit's, pondering
    /// when the query ponders.
    pub fn go(&self) -> Go {
        Go {
            ponder: self.ponderhit.is_some(),
            ..self.limit.go()
        }
    }

    /// The position the child searches.
    /// `None` in a game by a child's rules.
    pub fn position(&self) -> Option<VariantPosition> {
        self.game.after(&self.line)
    }
}

/// What a child's search said besides depth, score and nodes, shown with
/// the line it decided (`info seldepth … hashfull … tbhits … wdl …`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extra {
    pub seldepth: Option<u32>,
    /// Permille of its hash table in use.
    pub hashfull: Option<u32>,
    pub tbhits: Option<u64>,
    /// Win, draw, loss in permille, from the side to move in the queried
    /// position (`UCI_ShowWDL`).
    pub wdl: Option<[u32; 3]>,
}

impl Extra {
    /// The same seen from the other side, `plies` moves later: the
    /// selective depth grows by them, an odd count swaps win and loss.
    pub fn after(self, plies: u32) -> Extra {
        Extra {
            seldepth: self.seldepth.map(|s| s + plies),
            wdl: self
                .wdl
                .map(|[w, d, l]| if plies % 2 == 1 { [l, d, w] } else { [w, d, l] }),
            ..self
        }
    }
}

/// One completed iteration of a child search, as its `info` line said it.
/// Moves are legal in the queried position.
#[derive(Debug, Clone)]
pub struct Progress {
    pub depth: u32,
    pub extra: Extra,
    /// From the side to move in the queried position.
    pub score: Option<Value>,
    pub nodes: u64,
    pub pv: Vec<GameMove>,
    /// With [`ProgressSink::lines`] above 1, the iteration's next best
    /// root moves (the child's own `multipv` 2, 3, …), best first.
    pub others: Vec<PvOf>,
}

/// One more line of a child's iteration: its score and its moves, the
/// first a root move.
#[derive(Debug, Clone, PartialEq)]
pub struct PvOf {
    pub score: Option<Value>,
    pub pv: Vec<GameMove>,
}

/// Receives a search's [`Progress`] (on whatever thread the child reports
/// from), and says how many lines of each iteration it shows.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(Progress) + Send + Sync>, u32);

impl ProgressSink {
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> ProgressSink {
        ProgressSink(Arc::new(f), 1)
    }

    /// The same sink, shown `lines` lines an iteration (`MultiPV`): the
    /// child is asked for them.
    pub fn showing(self, lines: u32) -> ProgressSink {
        ProgressSink(self.0, lines.max(1))
    }

    /// The lines of each iteration shown: the child's `MultiPV`.
    pub fn lines(&self) -> u32 {
        self.1
    }

    pub fn send(&self, progress: Progress) {
        (self.0)(progress)
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// What a child found. Moves are legal in the queried position (checked by the
/// side that talks to the child).
#[derive(Debug, Clone)]
pub struct Report {
    /// `None`: the position has no move, in a game by a child's rules
    /// (where mpcmc knows them, no child is asked about a finished game);
    /// `score` says how it ended for the side to move.
    pub best: Option<GameMove>,
    /// What its last `info` said besides depth, score and nodes.
    pub extra: Extra,
    /// Last exact score (a bound only when no exact score came), from the side
    /// to move in the queried position.
    pub score: Option<Value>,
    /// The child's principal variation, legal from the queried position.
    /// An external child's starts with `best`, its `bestmove … ponder` move
    /// completing a line of one move; [`Report::line`] checks the first
    /// move for the others.
    pub pv: Vec<GameMove>,
    pub depth: u32,
    pub nodes: u64,
    /// From `go` written to `bestmove` read.
    pub search_time: Duration,
    /// The whole call (hash clearing, position, search): the child was busy.
    pub busy_time: Duration,
    /// The search was cut short by `stop`.
    pub stopped: bool,
    /// Which of the children's slots answered (the pool worker), when the
    /// children say: traces and placement tests read it.
    pub slot: Option<usize>,
    /// The score is the game's own value, not a search's estimate (the
    /// tablebases answered): nothing mixes it with an estimate.
    pub exact: bool,
}

impl Report {
    /// The child's line from the queried position: its pv when that starts
    /// with `best`, else `best` alone; empty where the game had ended.
    pub fn line(&self) -> Vec<GameMove> {
        match self.best {
            Some(best) if self.pv.first() == Some(&best) => self.pv.clone(),
            best => best.into_iter().collect(),
        }
    }
}

/// What the core must know of a failed child call beyond its message.
pub trait ChildFault: fmt::Display + Send + 'static {
    /// The child missed its deadline: more calls in this pass would likely
    /// wait as long again.
    fn is_stall(&self) -> bool;
    /// The call was cancelled by its asker (or the children are shut down):
    /// nothing wrong with the child.
    fn is_cancelled(&self) -> bool;
}

/// Child engines as the core sees them.
pub trait Children: Send + Sync + 'static {
    type Error: ChildFault;

    /// Runs one search. On `cancel` the child is stopped and the search ends
    /// with whatever it had (`Report::stopped`), or an error.
    fn search(
        &self,
        query: Query,
        cancel: CancellationToken,
    ) -> impl Future<Output = Result<Report, Self::Error>> + Send;
}
