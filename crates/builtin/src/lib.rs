//! The built-in engine: an alpha-beta searcher over shakmaty, so mpcmc runs
//! with nothing else installed. It knows the UCI protocol's types
//! ([`mpcmc_protocol`]) and nothing of the meta-engine.
//!
//! One instance per worker: `Threads` instances search in parallel without a
//! process; an instance may search with helper threads of its own
//! ([`Engine::set_threads`]). The same code answers `mpcmc engine`, the standalone UCI engine
//! ([`uci`], one `go` in [`go`]).
//!
//! The search lives in `search`, the evaluation in `eval`, the hash table in
//! `tt`; this module turns [`Limits`] into a budget, runs the iterations and
//! reports them.
// A panic here would take the meta-engine down with it.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

mod eval;
pub mod go;
pub mod machine;
pub mod rules;
mod score;
mod search;
pub mod syzygy;
pub mod time;
mod tt;
pub mod uci;

pub use self::machine::{Held, machine_cores, usable_hash_mb, usable_threads};
pub use self::tt::TranspositionTable;

use mpcmc_protocol::{Bound, Go, ScoreKind, UciScore};
use shakmaty::{CastlingMode, Chess, Color, Move, MoveList, Position, variant::VariantPosition};

use self::rules::Rules;
use self::score::{DECIDED, uci_score};
use self::search::{History, Search};
use self::syzygy::{RootRanking, Syzygy};
pub use self::time::Clock;
use self::time::{Budget, CLOCK_MOVES, budget};
use mpcmc_protocol::game::{FenError, position_from_fen};

/// Sets the stop flag when dropped: a search whose waiter went away (an
/// aborted task, a dropped future) ends instead of running on unseen.
pub struct StopOnDrop(pub Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What limits one search; `None`/`false` fields do not limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    pub movetime: Option<Duration>,
    /// Our clock: time left, increment, moves to the next control.
    pub clock: Option<Clock>,
    /// Search until `stop` (depth limits still apply).
    pub infinite: bool,
    /// Search only these root moves (`go searchmoves`); empty: every move.
    /// Moves not legal at the root are ignored.
    pub searchmoves: Vec<Move>,
    /// Lines an iteration (`MultiPV`): the best root move, then the best of
    /// the others, and so on ([`Progress::others`]); 0 and 1: one.
    pub multipv: usize,
}

/// The most search threads an engine runs ([`Engine::set_threads`]).
pub const MAX_THREADS: usize = 256;

/// A bare `go` (no limit at all) searches this many nodes, about a second.
pub const BARE_GO_NODES: u64 = 1_000_000;

impl Limits {
    /// A `go`'s limits, from the side to move, less `overhead` on the clock
    /// and on `movetime`. Pondering (and `infinite`) searches until told;
    /// the clock then starts at `ponderhit`. `searchmoves` are left to the
    /// caller (they need the position).
    pub fn from_go(go: &Go, us: Color, overhead: Duration) -> Limits {
        let ms = |v: i64| Duration::from_millis(v.max(0) as u64);
        let (time, inc) = go.clock_of(us);
        let bare = go.nodes.is_none()
            && go.depth.is_none()
            && go.mate.is_none()
            && go.movetime.is_none()
            && time.is_none()
            && !go.ends_when_told();
        Limits {
            nodes: go.nodes.or(bare.then_some(BARE_GO_NODES)),
            depth: go.depth.or(go.mate_depth()),
            movetime: go.movetime.map(|t| {
                Duration::from_millis(t)
                    .saturating_sub(overhead)
                    .max(Duration::from_millis(1))
            }),
            clock: go
                .usable_clock(us, overhead, CLOCK_MOVES)
                .map(|time| Clock {
                    time,
                    inc: inc.map_or(Duration::ZERO, ms),
                    movestogo: go.moves_to_go(),
                }),
            infinite: go.ends_when_told(),
            multipv: 1,
            searchmoves: Vec::new(),
        }
    }

    /// The moves searched at `root`: its legal moves, those of
    /// `searchmoves` when any of them is legal.
    pub fn root_moves(&self, root: &impl Position) -> MoveList {
        let mut moves = root.legal_moves();
        if self.searchmoves.iter().any(|m| moves.contains(m)) {
            moves.retain(|m| self.searchmoves.contains(m));
        }
        moves
    }

    /// When a pondering search (`go ponder`, searching until told) of
    /// `root` ends after `ponderhit`, `pondered` after its `go`: `Some(d)`,
    /// `d` after `ponderhit`; `None`, at its own depth or node limit. The
    /// time pondered counts as the move's, as Stockfish counts it: on a
    /// clock ([`Clock::after_ponderhit`]) and under `movetime` (what is
    /// left of it). A forced move, and a `go ponder` of no limit, end at
    /// once.
    pub fn after_ponderhit(&self, root: &impl Position, pondered: Duration) -> Option<Duration> {
        let clock = self.clock.map(|c| c.after_ponderhit(pondered));
        let movetime = self.movetime.map(|t| t.saturating_sub(pondered));
        let timed = clock.into_iter().chain(movetime).min();
        let own_end = self.nodes.is_some() || self.depth.is_some();
        if self.root_moves(root).len() <= 1 || (timed.is_none() && !own_end) {
            Some(Duration::ZERO)
        } else {
            timed
        }
    }

    /// When a pondering search of `root` that began at `started` stops, on
    /// a `ponderhit` that arrives now ([`Limits::after_ponderhit`]).
    pub fn stop_on_ponderhit(&self, root: &impl Position, started: Instant) -> Option<Instant> {
        let now = Instant::now();
        self.after_ponderhit(root, now.duration_since(started))
            .map(|t| now + t)
    }
}

/// One completed iteration, as an `info` line reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub depth: u32,
    pub seldepth: u32,
    /// From the side to move at the root.
    pub score: UciScore,
    pub nodes: u64,
    /// Positions the tablebases valued.
    pub tbhits: u64,
    pub time: Duration,
    pub pv: Vec<Move>,
    /// With [`Limits::multipv`] above 1, the best lines of the other root
    /// moves at the same depth, best first: each root move's score and line
    /// searched without the moves of the lines before it.
    pub others: Vec<(UciScore, Vec<Move>)>,
}

/// The result of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// `None` only when the root has no legal move.
    pub best: Option<Move>,
    pub ponder: Option<Move>,
    /// From the side to move at the root; `None` if no iteration completed.
    pub score: Option<UciScore>,
    pub depth: u32,
    pub nodes: u64,
    /// Positions the tablebases valued.
    pub tbhits: u64,
    pub pv: Vec<Move>,
}

/// A built-in engine instance with its own hash table, or one it shares
/// with other instances ([`Engine::sharing`]).
pub struct Engine {
    hash_mb: usize,
    tt: Arc<TranspositionTable>,
    /// The table is shared with other engines ([`Engine::sharing`]).
    shared: bool,
    history: History,
    /// Reused by every search ([`search::pv_table`]).
    pv: Vec<Vec<Move>>,
    /// The helper threads' own state, one each ([`Engine::set_threads`]).
    helpers: Vec<Helper>,
    /// Tablebases (`SyzygyPath`) and whether the fifty-move rule holds.
    tablebases: Option<(Arc<Syzygy>, bool)>,
}

/// What a helper thread keeps between searches: its move ordering and its
/// PV table (the hash table is the engine's).
struct Helper {
    history: History,
    pv: Vec<Vec<Move>>,
}

impl Engine {
    pub fn new(hash_mb: usize) -> Engine {
        Engine::over(Arc::new(TranspositionTable::new(hash_mb)), hash_mb, false)
    }

    fn over(tt: Arc<TranspositionTable>, hash_mb: usize, shared: bool) -> Engine {
        Engine {
            hash_mb,
            tt,
            shared,
            history: History::new(),
            pv: search::pv_table(),
            helpers: Vec::new(),
            tablebases: None,
        }
    }

    /// Tablebases to probe at the root and in the search (`SyzygyPath`),
    /// valued under the fifty-move rule or not (`Syzygy50MoveRule`).
    pub fn set_tablebases(&mut self, tables: Option<Arc<Syzygy>>, fifty_move_rule: bool) {
        self.tablebases = tables.map(|t| (t, fifty_move_rule));
    }

    /// Search threads (`Threads`, at least 1): the extra ones are helpers
    /// searching the same root over the same table at the same time (lazy
    /// SMP), so that the main thread finds deeper results in the table;
    /// the move and the line are the main thread's. They help searches
    /// limited by time or depth; a node limit is searched on one thread, so
    /// that a fixed-node search gives the same answer every time.
    pub fn set_threads(&mut self, threads: usize) {
        self.helpers
            .resize_with(threads.clamp(1, MAX_THREADS) - 1, || Helper {
                history: History::new(),
                pv: search::pv_table(),
            });
    }

    /// Search threads, as last set.
    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    /// An engine searching with `table`, which other engines search with at
    /// the same time: what one learns, the others find. Its searches neither
    /// age nor clear the table; whoever shares it out does
    /// ([`Engine::age_table`], [`TranspositionTable::clear`]) — in-process
    /// children age it once per decision, so that the searches of one
    /// decision keep each other's entries at their worth.
    pub fn sharing(table: Arc<TranspositionTable>) -> Engine {
        let mb = table.mb();
        Engine::over(table, mb, true)
    }

    /// Searches on behalf of `root` (a game position, by its
    /// [`mpcmc_protocol::game::hash`]) begin: the first of them makes the
    /// table's older entries replaceable.
    pub fn age_table(&self, root: u64) {
        self.tt.new_search_at(root);
    }

    /// Resizes the hash table (clearing it).
    pub fn set_hash(&mut self, mb: usize) {
        self.hash_mb = mb;
        self.tt = Arc::new(TranspositionTable::new(mb));
        self.shared = false;
    }

    /// The hash table size in MB, as last set.
    pub fn hash_mb(&self) -> usize {
        self.hash_mb
    }

    /// Permille of the hash table written by the last search.
    pub fn hashfull(&self) -> u32 {
        self.tt.hashfull()
    }

    /// Forgets everything learned (`ucinewgame`); a shared table is its
    /// owner's to clear.
    pub fn clear(&mut self) {
        if !self.shared {
            self.tt.clear();
        }
        self.history.clear();
        for helper in &mut self.helpers {
            helper.history.clear();
        }
    }

    /// Searches `root`. `history` holds the Zobrist hashes
    /// (`Zobrist64`, `EnPassantMode::Legal`) of the game's positions before
    /// `root`, oldest first, for repetitions. Returns when a limit is reached
    /// or `stop` is set (checked often: a stop is honoured within about a
    /// millisecond). `on_progress` sees every completed iteration.
    pub fn search<P: Rules>(
        &mut self,
        root: &P,
        history: &[u64],
        limits: &Limits,
        stop: &AtomicBool,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Outcome {
        let started = Instant::now();
        let root_moves = limits.root_moves(root);
        let Some(&first_move) = root_moves.first() else {
            return Outcome {
                best: None,
                ponder: None,
                score: None,
                depth: 0,
                nodes: 0,
                tbhits: 0,
                pv: Vec::new(),
            };
        };
        if !self.shared {
            self.tt.new_search();
        }
        self.history.age();
        let budget = budget(limits, started, root_moves.len());
        // A node limit is a measure of work: searched on one thread, it
        // gives the same answer every time.
        let threads = if root_moves.len() > 1 && budget.nodes.is_none() {
            self.threads()
        } else {
            1
        };
        let root_hash = mpcmc_protocol::game::hash(root);
        // A root the tables hold: only the moves that keep its result are
        // searched, and the search probes no further (its positions are
        // all in the tables; the ranking already read their DTZ).
        let ranking = self.tablebases.as_ref().and_then(|(tables, rule)| {
            let root = root.chess()?;
            let since = history.len().saturating_sub(root.halfmoves() as usize);
            let mut since_zeroing = history[since..].to_vec();
            since_zeroing.push(root_hash);
            tables.rank_root(root, &root_moves, &since_zeroing, *rule)
        });
        let root_moves = match &ranking {
            Some(r) => r.moves.iter().copied().collect(),
            None => root_moves,
        };
        let first_move = root_moves.first().copied().unwrap_or(first_move);
        let probing = match (&ranking, &self.tablebases) {
            (None, Some((tables, rule))) if root.chess().is_some() => Some((&**tables, *rule)),
            _ => None,
        };
        let searchmoves = (root_moves.len() < root.legal_moves().len()).then(|| root_moves.clone());
        let helpers_stop = Arc::new(AtomicBool::new(false));
        let helper_counts = Counts::default();
        let (tt, main_history, main_pv) = (&*self.tt, &mut self.history, &mut self.pv);
        std::thread::scope(|scope| {
            // Helpers run until the main search ends, however it ends (a
            // panic too: the scope waits for them before it goes on).
            let _stop_helpers = StopOnDrop(helpers_stop.clone());
            for helper in self.helpers.iter_mut().take(threads - 1) {
                let (stop, nodes, moves) = (&*helpers_stop, &helper_counts, searchmoves.clone());
                let depth = budget.depth;
                let spawned = std::thread::Builder::new()
                    .name("builtin-helper".into())
                    .spawn_scoped(scope, move || {
                        helper.search(
                            tt, root, history, root_hash, moves, depth, probing, stop, nodes,
                        );
                    });
                // A thread the system refuses is a helper fewer.
                if spawned.is_err() {
                    break;
                }
            }
            Engine::search_main(
                tt,
                main_history,
                main_pv,
                root,
                history,
                root_hash,
                searchmoves.clone(),
                &root_moves,
                first_move,
                budget,
                Tablebases {
                    probing,
                    ranking: ranking.as_ref(),
                },
                stop,
                &helper_counts,
                started,
                limits.multipv,
                on_progress,
            )
        })
        .with_helpers(&helper_counts)
    }

    /// [`Engine::search`] of a game's position: orthodox chess on its own
    /// path (monomorphic, every chess shortcut), a variant by its rules.
    pub fn search_game(
        &mut self,
        root: &VariantPosition,
        history: &[u64],
        limits: &Limits,
        stop: &AtomicBool,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Outcome {
        match root {
            VariantPosition::Chess(chess) => self.search(chess, history, limits, stop, on_progress),
            variant => self.search(variant, history, limits, stop, on_progress),
        }
    }

    /// The main thread's search (see [`Engine::search`]); `helpers`
    /// counts the helpers' nodes so far.
    #[allow(clippy::too_many_arguments)]
    fn search_main<P: Rules>(
        tt: &TranspositionTable,
        main_history: &mut History,
        main_pv: &mut [Vec<Move>],
        root: &P,
        history: &[u64],
        root_hash: u64,
        searchmoves: Option<MoveList>,
        root_moves: &MoveList,
        first_move: Move,
        budget: Budget,
        tablebases: Tablebases,
        stop: &AtomicBool,
        helper_counts: &Counts,
        started: Instant,
        multipv: usize,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Outcome {
        let max_depth = budget.depth;
        let mut search = Search::new(tt, main_history, main_pv, stop, budget, history, root_hash);
        search.root_moves = searchmoves;
        tablebases.arm(&mut search);
        // The root's ranking read every move's DTZ.
        let root_hits = tablebases.ranking.map_or(0, |r| r.probed as u64);
        let shown = |score: i32| to_uci(tablebases.shown(score));

        // (depth, score, pv) of the last completed iteration.
        let mut completed: Option<(u32, i32, Vec<Move>)> = None;
        for depth in 1..=max_depth {
            search.root_best = None;
            search.seldepth = 0;
            let prev = completed.as_ref().map(|c| c.1);
            let Some(score) = search.iterate(root, depth, prev) else {
                break;
            };
            let mut pv = legal_prefix(root, &search.root_pv());
            if pv.is_empty() {
                pv = search
                    .root_best
                    .as_ref()
                    .map(|b| legal_prefix(root, &b.pv))
                    .filter(|pv| !pv.is_empty())
                    .unwrap_or_else(|| vec![first_move]);
            }
            let others = search.other_lines(root, root_moves, (&pv, score), depth, multipv);
            on_progress(&Progress {
                depth,
                seldepth: (search.seldepth as u32).max(depth),
                score: shown(score),
                nodes: search.nodes + helper_counts.nodes.load(Ordering::Relaxed),
                tbhits: root_hits + search.tbhits + helper_counts.tbhits.load(Ordering::Relaxed),
                time: started.elapsed(),
                pv: pv.clone(),
                others: others
                    .into_iter()
                    .map(|(score, pv)| (shown(score), legal_prefix(root, &pv)))
                    .filter(|(_, pv)| !pv.is_empty())
                    .collect(),
            });
            completed = Some((depth, score, pv));
            if search.stopped {
                // Stopped in another line's search: what it found is not
                // the best move's.
                search.root_best = None;
                break;
            }
            search.limits_armed = true;
            if search
                .budget()
                .soft
                .is_some_and(|soft| Instant::now() >= soft)
            {
                break;
            }
        }

        // An iteration cut short may already have found a better move.
        let partial = if search.stopped {
            search
                .root_best
                .as_ref()
                .map(|b| legal_prefix(root, &b.pv))
                .filter(|pv| !pv.is_empty())
        } else {
            None
        };
        let pv = match (partial, &completed) {
            (Some(pv), _) => pv,
            (None, Some((_, _, pv))) => pv.clone(),
            (None, None) => search
                .root_tt_move()
                .and_then(|m| m.find(root_moves))
                .map_or_else(|| vec![first_move], |m| vec![m]),
        };
        Outcome {
            best: pv.first().copied().or(Some(first_move)),
            ponder: pv.get(1).copied(),
            score: completed.as_ref().map(|c| shown(c.1)),
            depth: completed.as_ref().map_or(0, |c| c.0),
            nodes: search.nodes,
            tbhits: root_hits + search.tbhits,
            pv,
        }
    }
}

impl Helper {
    /// Searches `root` deeper and deeper until `stop`, adding its nodes to
    /// `nodes` after every iteration. It starts at depth 1 with the main
    /// thread; what each finds in the table soon puts them apart.
    #[allow(clippy::too_many_arguments)]
    fn search<P: Rules>(
        &mut self,
        tt: &TranspositionTable,
        root: &P,
        history: &[u64],
        root_hash: u64,
        root_moves: Option<MoveList>,
        max_depth: u32,
        probing: Option<(&Syzygy, bool)>,
        stop: &AtomicBool,
        counts: &Counts,
    ) {
        self.history.age();
        let budget = Budget {
            hard: None,
            soft: None,
            nodes: None,
            depth: max_depth,
        };
        let mut search = Search::new(
            tt,
            &mut self.history,
            &mut self.pv,
            stop,
            budget,
            history,
            root_hash,
        );
        search.root_moves = root_moves;
        Tablebases {
            probing,
            ranking: None,
        }
        .arm(&mut search);
        let mut prev = None;
        let mut counted = (0, 0);
        for depth in 1..=max_depth {
            search.root_best = None;
            search.seldepth = 0;
            let score = search.iterate(root, depth, prev);
            counts
                .nodes
                .fetch_add(search.nodes - counted.0, Ordering::Relaxed);
            counts
                .tbhits
                .fetch_add(search.tbhits - counted.1, Ordering::Relaxed);
            counted = (search.nodes, search.tbhits);
            match score {
                Some(score) => prev = Some(score),
                None => break,
            }
        }
    }
}

/// What the helper threads have searched so far.
#[derive(Default)]
struct Counts {
    nodes: AtomicU64,
    tbhits: AtomicU64,
}

impl Outcome {
    /// The outcome with the helpers' nodes and probes counted in.
    fn with_helpers(mut self, helpers: &Counts) -> Outcome {
        self.nodes += helpers.nodes.load(Ordering::Relaxed);
        self.tbhits += helpers.tbhits.load(Ordering::Relaxed);
        self
    }
}

/// The tablebases in one search.
#[derive(Clone, Copy)]
struct Tablebases<'a> {
    /// Probed in the search, under the fifty-move rule or not.
    probing: Option<(&'a Syzygy, bool)>,
    /// The root's moves as the tables rank them, when they hold the root.
    ranking: Option<&'a RootRanking>,
}

impl<'a> Tablebases<'a> {
    fn arm(self, search: &mut Search<'a>) {
        if let Some((tables, rule)) = self.probing {
            search.tables = Some(tables);
            search.fifty_move_rule = rule;
        }
    }

    /// The score an `info` line shows: the tables' at a root they hold,
    /// unless the search found a mate or the tables' result itself (as
    /// Stockfish shows it).
    fn shown(self, score: i32) -> i32 {
        match self.ranking {
            Some(r) if score.abs() < DECIDED => r.score,
            _ => score,
        }
    }
}

/// A static evaluation of `pos` in centipawns from the side to move.
pub fn static_eval(pos: &Chess) -> i32 {
    eval::evaluate(pos)
}

fn to_uci(score: i32) -> UciScore {
    UciScore {
        kind: match uci_score(score) {
            Ok(cp) => ScoreKind::Cp(cp),
            Err(mate) => ScoreKind::Mate(mate),
        },
        bound: Bound::Exact,
    }
}

/// The longest prefix of `line` that is legal from `root`.
fn legal_prefix<P: Position + Clone>(root: &P, line: &[Move]) -> Vec<Move> {
    let mut pos = root.clone();
    let mut out = Vec::with_capacity(line.len());
    for &m in line {
        if !pos.is_legal(m) {
            break;
        }
        pos.play_unchecked(m);
        out.push(m);
    }
    out
}

/// Positions for [`bench`]: opening, middlegames, endgames.
pub const BENCH_FENS: [&str; 6] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8",
    "2r3k1/5pp1/p2q3p/1p1pR3/3P4/1P3Q1P/P4PP1/6K1 b - - 0 30",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "8/5pk1/6p1/3P4/1r6/6P1/5PK1/3R4 w - - 0 45",
];

/// Searches each of [`BENCH_FENS`] to `depth` with a fresh 16 MB engine;
/// returns the total nodes and the total time spent searching.
pub fn bench(depth: u32) -> (u64, Duration) {
    BENCH_FENS
        .iter()
        .filter_map(|fen| bench_position(fen, depth).ok())
        .fold((0, Duration::ZERO), |(n, t), (nodes, time)| {
            (n + nodes, t + time)
        })
}

/// Searches `fen` to `depth` with a fresh 16 MB engine: nodes and time.
pub fn bench_position(fen: &str, depth: u32) -> Result<(u64, Duration), FenError> {
    let (_, pos) = position_from_fen(fen, CastlingMode::Standard)?;
    let limits = Limits {
        depth: Some(depth.max(1)),
        ..Limits::default()
    };
    let mut engine = Engine::new(16);
    let started = Instant::now();
    let outcome = engine.search(&pos, &[], &limits, &AtomicBool::new(false), &mut |_| {});
    Ok((outcome.nodes, started.elapsed()))
}

/// A position for the tests of this engine.
#[cfg(test)]
pub(crate) fn test_position(fen: &str) -> Chess {
    match position_from_fen(fen, CastlingMode::Standard) {
        Ok((_, pos)) => pos,
        Err(e) => panic!("{e}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use shakmaty::uci::UciMove;

    use super::*;

    use crate::{score::MAX_DEPTH, test_position as pos};

    fn uci(m: Move) -> String {
        UciMove::from_standard(m).to_string()
    }

    /// After `ponderhit` the time pondered counts: on a clock, the move's
    /// budget from `go`, none past half of it; under `movetime`, what is
    /// left of it; depth and nodes end the search themselves; a forced
    /// move or no limit, at once.
    #[test]
    fn a_pondered_move_ends_by_its_limits_counted_from_go() {
        let ms = Duration::from_millis;
        let start = Chess::default();
        let go = |line: &str| {
            let Ok(mpcmc_protocol::GuiCommand::Go(go)) =
                mpcmc_protocol::parse_gui_line(line).map(|p| p.command)
            else {
                panic!("{line}");
            };
            Limits::from_go(&go, Color::White, Duration::ZERO)
        };
        // Budget 1990 ms: 60 s / 30, less 10 ms.
        let clock = go("go ponder wtime 60000 btime 60000");
        assert_eq!(clock.clock.map(|c| c.move_budget()), Some(ms(1990)));
        assert_eq!(clock.after_ponderhit(&start, ms(0)), Some(ms(1990)));
        assert_eq!(clock.after_ponderhit(&start, ms(994)), Some(ms(996)));
        assert_eq!(clock.after_ponderhit(&start, ms(995)), Some(ms(0)));
        let movetime = go("go ponder movetime 1000");
        assert_eq!(movetime.after_ponderhit(&start, ms(300)), Some(ms(700)));
        assert_eq!(movetime.after_ponderhit(&start, ms(1300)), Some(ms(0)));
        let both = go("go ponder wtime 60000 btime 60000 movetime 500");
        assert_eq!(both.after_ponderhit(&start, ms(100)), Some(ms(400)));
        assert_eq!(
            go("go ponder depth 8").after_ponderhit(&start, ms(10)),
            None
        );
        assert_eq!(
            go("go ponder nodes 5000").after_ponderhit(&start, ms(10)),
            None
        );
        assert_eq!(go("go ponder").after_ponderhit(&start, ms(10)), Some(ms(0)));
        let forced = pos("k7/8/8/8/8/8/1r6/K7 w - - 0 1");
        assert_eq!(forced.legal_moves().len(), 1);
        assert_eq!(clock.after_ponderhit(&forced, ms(0)), Some(ms(0)));
    }

    fn run(fen: &str, limits: &Limits) -> (Outcome, Vec<Progress>) {
        let stop = AtomicBool::new(false);
        let mut seen = Vec::new();
        let mut engine = Engine::new(4);
        let out = engine.search(&pos(fen), &[], limits, &stop, &mut |p| seen.push(p.clone()));
        (out, seen)
    }

    #[test]
    fn multipv_gives_the_best_lines_of_distinct_root_moves() {
        // Rxd5 wins the queen; every other move does not.
        let fen = "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1";
        let limits = Limits {
            multipv: 3,
            ..depth(5)
        };
        let (out, seen) = run(fen, &limits);
        assert_eq!(out.best.map(|m| m.to().to_string()), Some("d5".to_owned()));
        for p in &seen {
            assert_eq!(p.others.len(), 2, "depth {}", p.depth);
            let mut firsts: Vec<Move> = p.others.iter().map(|(_, pv)| pv[0]).collect();
            firsts.push(p.pv[0]);
            firsts.sort_by_key(|m| m.to_string());
            firsts.dedup();
            assert_eq!(firsts.len(), 3, "distinct root moves at depth {}", p.depth);
        }
        let last = seen.last().expect("iterations");
        let cp = |s: &UciScore| match s.kind {
            ScoreKind::Cp(cp) => cp,
            ScoreKind::Mate(m) => 100_000 * m.signum(),
        };
        assert!(cp(&last.others[0].0) < cp(&last.score) - 500, "{last:?}");
        // Stopped anywhere (by nodes), the move is the best line's: the
        // other lines' searches left their move in the table's root entry,
        // searched first the next iteration (Rd1 at 694 nodes, Rh2 at
        // 3385-3454).
        for nodes in (50..6000).step_by(23) {
            let limits = Limits {
                multipv: 3,
                nodes: Some(nodes),
                ..Limits::default()
            };
            let (out, _) = run(fen, &limits);
            let to = out.best.map(|m| m.to().to_string());
            assert_eq!(to.as_deref(), Some("d5"), "at {nodes} nodes: {out:?}");
        }
        // One line: none other.
        let (same, seen) = run(fen, &depth(5));
        assert_eq!(same.best, out.best);
        assert!(seen.iter().all(|p| p.others.is_empty()));
    }

    fn depth(d: u32) -> Limits {
        Limits {
            depth: Some(d),
            ..Limits::default()
        }
    }

    fn legal(p: &Chess, m: Option<Move>) -> bool {
        m.is_some_and(|m| p.is_legal(m))
    }

    #[test]
    fn mate_in_one() {
        let (out, seen) = run("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", &depth(4));
        assert_eq!(out.best.map(uci).as_deref(), Some("d1d8"));
        assert_eq!(out.score.map(|s| s.kind), Some(ScoreKind::Mate(1)));
        assert_eq!(seen.last().map(|p| p.score.kind), Some(ScoreKind::Mate(1)));
        assert_eq!(out.pv.len(), 1);
    }

    #[test]
    fn mated_in_one_is_negative() {
        // Black's only move walks into Rh8#.
        let (out, _) = run("k7/8/1K6/8/8/8/8/7R b - - 0 1", &depth(4));
        assert_eq!(out.best.map(uci).as_deref(), Some("a8b8"));
        assert_eq!(out.score.map(|s| s.kind), Some(ScoreKind::Mate(-1)));
        assert_eq!(out.ponder.map(uci).as_deref(), Some("h1h8"));
    }

    #[test]
    fn mate_in_two() {
        // 1. Nf6+ gxf6 2. Bxf7#.
        let fen = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 10";
        let (out, _) = run(fen, &depth(5));
        assert_eq!(out.best.map(uci).as_deref(), Some("d5f6"));
        assert_eq!(out.score.map(|s| s.kind), Some(ScoreKind::Mate(2)));
        assert_eq!(out.pv.len(), 3);
    }

    #[test]
    fn black_mate_in_three() {
        // 1... Bc5+ 2. Kxc5 Qb6+ 3. Kd5 Qd6# (Stockfish 15.1 agrees).
        let fen = "r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1";
        let (out, _) = run(fen, &depth(6));
        assert_eq!(out.best.map(uci).as_deref(), Some("f8c5"));
        assert_eq!(
            out.score.map(|s| s.kind),
            Some(ScoreKind::Mate(3)),
            "{out:?}"
        );
    }

    #[test]
    fn never_stalemates_when_winning() {
        // Each has a queen move that stalemates (Qg6, Qc7, Qf7) next to ones
        // that win.
        for fen in [
            "7k/8/5K2/8/8/8/8/6Q1 w - - 0 1",
            "k7/8/1K6/8/8/8/8/2Q5 w - - 0 1",
            "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1",
        ] {
            let p = pos(fen);
            for d in 1..=5 {
                let (out, _) = run(fen, &depth(d));
                let best = out.best.unwrap();
                let mut after = p.clone();
                after.play_unchecked(best);
                assert!(!after.is_stalemate(), "{fen} depth {d}: {}", uci(best));
                assert!(!after.is_insufficient_material(), "{fen}: {}", uci(best));
            }
        }
    }

    /// King and queen against king, played out by the engine for both
    /// sides on small budgets: it ends in mate, never stalemate.
    #[test]
    fn mates_with_king_and_queen() {
        let mut p = pos("8/8/8/3k4/8/8/8/Q3K3 w - - 0 1");
        let mut history = Vec::new();
        let stop = AtomicBool::new(false);
        let mut engine = Engine::new(4);
        let limits = Limits {
            nodes: Some(4_000),
            ..Limits::default()
        };
        for _ in 0..60 {
            if p.is_game_over() {
                break;
            }
            let out = engine.search(&p, &history, &limits, &stop, &mut |_| {});
            history.push(mpcmc_protocol::game::hash(&p));
            p.play_unchecked(out.best.unwrap());
        }
        assert!(
            p.is_checkmate(),
            "{}",
            shakmaty::fen::Fen::from_position(&p, shakmaty::EnPassantMode::Legal)
        );
    }

    #[test]
    fn a_helper_searches_into_the_table_until_stopped() {
        let root = pos(BENCH_FENS[2]);
        let tt = TranspositionTable::new(4);
        let mut helper = Helper {
            history: History::new(),
            pv: search::pv_table(),
        };
        let (stop, counts) = (AtomicBool::new(false), Counts::default());
        let started = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                let hash = mpcmc_protocol::game::hash(&root);
                helper.search(&tt, &root, &[], hash, None, MAX_DEPTH, None, &stop, &counts);
            });
            std::thread::sleep(Duration::from_millis(100));
            stop.store(true, Ordering::Relaxed);
        });
        // It searched (to no depth limit: only the flag ended it), counted
        // its nodes and wrote what it found where the main thread looks.
        assert!(started.elapsed() < Duration::from_millis(100) + SLACK);
        assert!(counts.nodes.load(Ordering::Relaxed) > 1_000);
        assert!(tt.hashfull() > 0);
        let root_entry = tt.probe(mpcmc_protocol::game::hash(&root));
        assert!(root_entry.and_then(|e| e.mv).is_some());
    }

    #[test]
    fn two_threads_keep_the_limits_and_the_root_moves() {
        let mut engine = Engine::new(4);
        engine.set_threads(2);
        assert_eq!(engine.threads(), 2);
        let root = pos(BENCH_FENS[2]);
        let some: Vec<Move> = root.legal_moves()[3..6].to_vec();
        let movetime = Duration::from_millis(150);
        let limits = Limits {
            movetime: Some(movetime),
            searchmoves: some.clone(),
            ..Limits::default()
        };
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        let out = engine.search(&root, &[], &limits, &stop, &mut |_| {});
        let took = started.elapsed();
        assert!(took >= movetime && took < movetime + SLACK, "{took:?}");
        assert!(out.best.is_some_and(|m| some.contains(&m)), "{out:?}");
        // A depth limit ends the helpers with the main thread.
        let out = engine.search(&root, &[], &depth(6), &stop, &mut |_| {});
        assert_eq!(out.depth, 6);
        assert!(legal(&root, out.best));
        // A node limit is searched on one thread: the same search as with
        // one thread, node for node.
        let nodes = Limits {
            nodes: Some(30_000),
            ..Limits::default()
        };
        let (alone, _) = run(BENCH_FENS[2], &nodes);
        let mut two = Engine::new(4);
        two.set_threads(2);
        let out = two.search(&root, &[], &nodes, &stop, &mut |_| {});
        assert_eq!((out.nodes, out.pv), (alone.nodes, alone.pv));
        engine.set_threads(0);
        assert_eq!(engine.threads(), 1);
        engine.set_threads(100_000);
        assert_eq!(engine.threads(), MAX_THREADS);
    }

    #[test]
    fn finished_roots_have_no_move() {
        for fen in [
            // Fool's mate.
            "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
            // Stalemate.
            "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
        ] {
            let (out, seen) = run(fen, &depth(3));
            assert_eq!(out.best, None, "{fen}");
            assert_eq!(out.ponder, None);
            assert!(seen.is_empty());
        }
    }

    #[test]
    fn depth_limit_is_exact() {
        for d in [1, 3, 5] {
            let (out, seen) = run(BENCH_FENS[1], &depth(d));
            assert_eq!(out.depth, d);
            let depths: Vec<u32> = seen.iter().map(|p| p.depth).collect();
            assert_eq!(depths, (1..=d).collect::<Vec<_>>());
            assert!(legal(&pos(BENCH_FENS[1]), out.best));
            let last = seen.last().unwrap();
            assert_eq!(last.pv, out.pv);
            assert!(last.nodes <= out.nodes && last.seldepth >= d);
        }
    }

    #[test]
    fn node_limit_stops_near_it_after_a_complete_first_iteration() {
        // Depth 1 always completes, so a move comes with a real score even
        // under a tiny budget; past it, the limit holds.
        let (first, _) = run(BENCH_FENS[1], &depth(1));
        for n in [1, 100, 5_000] {
            let limits = Limits {
                nodes: Some(n),
                ..Limits::default()
            };
            let (out, _) = run(BENCH_FENS[1], &limits);
            let cap = n.max(first.nodes);
            assert!(out.nodes <= cap + 1, "{} > {cap}", out.nodes);
            assert!(out.depth >= 1 && out.score.is_some(), "{out:?}");
            assert!(legal(&pos(BENCH_FENS[1]), out.best));
        }
    }

    /// What a busy machine may add to a search's deadline before it is seen
    /// (the tests check deadlines are kept, not how fast the machine is; a
    /// search that ignored them would run for minutes).
    const SLACK: Duration = Duration::from_secs(2);

    #[test]
    fn movetime_returns_in_time() {
        let movetime = Duration::from_millis(150);
        let limits = Limits {
            movetime: Some(movetime),
            ..Limits::default()
        };
        let started = Instant::now();
        let b = budget(&limits, started, 20);
        assert_eq!((b.hard, b.soft), (Some(started + movetime), None));
        let (out, seen) = run(BENCH_FENS[2], &limits);
        let took = started.elapsed();
        // The time is used (no mate to stop early), and the deadline kept.
        assert!(took >= movetime, "{took:?}");
        assert!(took < movetime + SLACK, "{took:?}");
        assert!(!seen.is_empty());
        assert!(legal(&pos(BENCH_FENS[2]), out.best));
    }

    #[test]
    fn clock_uses_a_share() {
        // 3 s left: the move gets `Clock::move_budget` (about 100 ms, never
        // more than half; its numbers are `clock_budget`'s test) as its hard
        // deadline, and starts no iteration past half of it.
        let clock = |ms, movestogo| Clock {
            time: Duration::from_millis(ms),
            inc: Duration::ZERO,
            movestogo,
        };
        let started = Instant::now();
        let limits = Limits {
            clock: Some(clock(3000, None)),
            ..Limits::default()
        };
        let share = clock(3000, None).move_budget();
        let b = budget(&limits, started, 20);
        assert_eq!(b.hard, Some(started + share));
        assert_eq!(b.soft, Some(started + share / 2));
        // A forced move needs no thought.
        assert_eq!(budget(&limits, started, 1).soft, Some(started));
        let (out, _) = run(BENCH_FENS[0], &limits);
        assert!(started.elapsed() < share + SLACK, "{:?}", started.elapsed());
        assert!(legal(&Chess::default(), out.best));
        // Almost no time left still gives a move.
        let limits = Limits {
            clock: Some(clock(2, Some(1))),
            ..Limits::default()
        };
        let started = Instant::now();
        let (out, _) = run(BENCH_FENS[0], &limits);
        assert!(started.elapsed() < clock(2, Some(1)).move_budget() + SLACK);
        assert!(legal(&Chess::default(), out.best));
    }

    #[test]
    fn infinite_stops_promptly() {
        let stop = AtomicBool::new(false);
        let limits = Limits {
            infinite: true,
            // Ignored under `infinite`.
            movetime: Some(Duration::from_millis(1)),
            ..Limits::default()
        };
        let root = pos(BENCH_FENS[1]);
        let mut engine = Engine::new(4);
        let (out, latency) = std::thread::scope(|s| {
            let handle = s.spawn(|| {
                let out = engine.search(&root, &[], &limits, &stop, &mut |_| {});
                (out, Instant::now())
            });
            std::thread::sleep(Duration::from_millis(200));
            let asked = Instant::now();
            stop.store(true, Ordering::Relaxed);
            let (out, done) = handle.join().unwrap();
            (out, done - asked)
        });
        assert!(latency < Duration::from_millis(30), "{latency:?}");
        assert!(out.depth >= 2, "{out:?}");
        assert!(legal(&root, out.best));
    }

    #[test]
    fn stop_before_start_still_moves() {
        let stop = AtomicBool::new(true);
        let root = pos(BENCH_FENS[1]);
        let out = Engine::new(1).search(&root, &[], &Limits::default(), &stop, &mut |_| {});
        assert!(legal(&root, out.best));
    }

    /// Black is a queen down; one move repeats a position for the third
    /// time, which only the game history reveals.
    #[test]
    fn repetition_from_history_draws() {
        let mut p = pos("6k1/8/8/8/8/2K5/8/2Q5 b - - 0 1");
        let mut history = Vec::new();
        for m in [
            "g8h8", "c1d1", "h8g8", "d1c1", "g8h8", "c1d1", "h8g8", "d1c1", "g8h8", "c1d1",
        ] {
            history.push(mpcmc_protocol::game::hash(&p));
            let m = m.parse::<UciMove>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(m);
        }
        let stop = AtomicBool::new(false);
        let mut engine = Engine::new(4);
        let out = engine.search(&p, &history, &depth(5), &stop, &mut |_| {});
        assert_eq!(out.best.map(uci).as_deref(), Some("h8g8"));
        assert_eq!(out.score.map(|s| s.kind), Some(ScoreKind::Cp(0)));
        // Without the history the same move is just lost.
        engine.clear();
        let out = engine.search(&p, &[], &depth(5), &stop, &mut |_| {});
        assert!(
            matches!(out.score.map(|s| s.kind), Some(ScoreKind::Cp(cp)) if cp < -500)
                || matches!(out.score.map(|s| s.kind), Some(ScoreKind::Mate(m)) if m < 0),
            "{out:?}"
        );
    }

    #[test]
    fn fifty_move_rule_draws() {
        // A queen up, but the fifty-move rule ends the game at the next move
        // unless it mates now (it cannot).
        let (out, _) = run("7k/8/8/8/8/8/2K5/2Q5 w - - 99 120", &depth(4));
        assert_eq!(out.score.map(|s| s.kind), Some(ScoreKind::Cp(0)));
    }

    /// Every best and ponder move is legal, over positions from a fixed
    /// pseudo-random playout, with small and tiny limits.
    #[test]
    fn best_moves_are_legal() {
        let mut engine = Engine::new(2);
        let stop = AtomicBool::new(false);
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut checked = 0;
        for start in BENCH_FENS {
            let mut p = pos(start);
            let mut history = Vec::new();
            for ply in 0..24 {
                let moves = p.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let limits = Limits {
                    nodes: Some(if ply % 3 == 0 { 3 } else { 400 }),
                    ..Limits::default()
                };
                let out = engine.search(&p, &history, &limits, &stop, &mut |_| {});
                assert!(
                    legal(&p, out.best),
                    "{}",
                    shakmaty::fen::Fen::from_position(&p, shakmaty::EnPassantMode::Legal)
                );
                if let (Some(b), Some(q)) = (out.best, out.ponder) {
                    let mut after = p.clone();
                    after.play_unchecked(b);
                    assert!(after.is_legal(q));
                }
                checked += 1;
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                history.push(mpcmc_protocol::game::hash(&p));
                p.play_unchecked(moves[(seed % moves.len() as u64) as usize]);
            }
        }
        assert!(checked > 100);
    }

    /// The first ten of Win at Chess, half a second each; prints the hits.
    #[test]
    #[ignore = "slow in debug: run in release with --ignored --nocapture"]
    fn win_at_chess() {
        let suite = [
            (
                "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
                &["g3g6"][..],
            ),
            (
                "8/7p/5k2/5p2/p1p2P2/Pr1pPK2/1P1R3P/8 b - - 0 1",
                &["b3b2", "b3b7"],
            ),
            (
                "5rk1/1ppb3p/p1pb4/6q1/3P1p1r/2P1R2P/PP1BQ1P1/5RKN w - - 0 1",
                &["e3g3"],
            ),
            (
                "r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - 0 1",
                &["h6h7"],
            ),
            (
                "5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1",
                &["c6c4"],
            ),
            ("7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - 0 1", &["b6b7"]),
            (
                "rnbqkb1r/pppp1ppp/8/4P3/6n1/7P/PPPNPPP1/R1BQKBNR b KQkq - 0 1",
                &["g4e3"],
            ),
            (
                "r4q1k/p2bR1rp/2p2Q1N/5p2/5p2/2P5/PP3PPP/R5K1 w - - 0 1",
                &["e7f7"],
            ),
            (
                "3q1rk1/p4pp1/2pb3p/3p4/6Pr/1PNQ4/P1PB1PP1/4RRK1 b - - 0 1",
                &["d6h2"],
            ),
            (
                "2br2k1/2q3rn/p2NppQ1/2p1P3/Pp5R/4P3/1P3PPP/3R2K1 w - - 0 1",
                &["h4h7"],
            ),
        ];
        let limits = Limits {
            movetime: Some(Duration::from_millis(500)),
            ..Limits::default()
        };
        let mut hits = 0;
        for (fen, best) in suite {
            let (out, _) = run(fen, &limits);
            let played = out.best.map(uci).unwrap_or_default();
            let hit = best.contains(&played.as_str());
            hits += usize::from(hit);
            eprintln!(
                "{fen}: {played} ({best:?}) depth {} {:?}",
                out.depth, out.score
            );
        }
        eprintln!("{hits}/10");
    }

    #[test]
    #[ignore = "benchmark: run in release with --ignored --nocapture"]
    fn bench_print() {
        for d in [8, 10, 11] {
            let (nodes, time) = bench(d);
            eprintln!(
                "depth {d}: {nodes} nodes in {time:?}: {} nps",
                (nodes as f64 / time.as_secs_f64()) as u64
            );
        }
        let stop = AtomicBool::new(false);
        let limits = Limits {
            movetime: Some(Duration::from_secs(1)),
            ..Limits::default()
        };
        let mut last = None;
        let out = Engine::new(16).search(&Chess::default(), &[], &limits, &stop, &mut |p| {
            last = Some(p.clone());
        });
        eprintln!(
            "1 s from the start: depth {} nodes {} {last:?}",
            out.depth, out.nodes
        );
    }

    /// `movestogo` reaches the clock, except 0, which says nothing.
    #[test]
    fn movestogo_zero_is_sudden_death() {
        let go = |movestogo| Go {
            wtime: Some(10_000),
            btime: Some(10_000),
            movestogo,
            ..Go::default()
        };
        let moves = |g: Go| {
            Limits::from_go(&g, Color::White, Duration::ZERO)
                .clock
                .map(|c| c.movestogo)
        };
        assert_eq!(moves(go(Some(20))), Some(Some(20)));
        assert_eq!(moves(go(Some(0))), Some(None));
        assert_eq!(moves(go(None)), Some(None));
    }
}
