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
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

mod eval;
pub mod go;
pub mod machine;
mod ordering;
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
    /// The helper threads' own state, one each ([`Engine::set_threads`]),
    /// held by a helper thread while it runs. A search answers as soon as
    /// its main thread is done and tells its helpers to stop, without
    /// waiting for the system to run each of them again (on a loaded
    /// 2-core machine, 50-140 ms after the main thread was done): the
    /// next search's helper waits for this state instead.
    helpers: Vec<Arc<Mutex<Helper>>>,
    /// Tablebases (`SyzygyPath`) and whether the fifty-move rule holds.
    tablebases: Option<(Arc<Syzygy>, bool)>,
}

/// The helpers' state, once the last search's helper threads (told to
/// stop when it answered) have let go of it.
fn when_stopped(helpers: &[Arc<Mutex<Helper>>]) -> Vec<std::sync::MutexGuard<'_, Helper>> {
    helpers
        .iter()
        .map(|h| h.lock().unwrap_or_else(PoisonError::into_inner))
        .collect()
}

/// How many `nice` steps below the main thread a helper thread searches.
#[cfg(target_os = "linux")]
const HELPER_NICENESS: i32 = 5;

/// Lowers the calling thread's priority by [`HELPER_NICENESS`] (Linux:
/// `nice` applies to the calling thread alone; at most to 19, the lowest).
/// Where each thread has a core of its own it should change nothing; on a
/// busy machine the main thread, which must answer in time, runs before
/// its helpers. Elsewhere nothing.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: `nice` takes no pointer and acts on the calling thread only.
    unsafe {
        libc::nice(HELPER_NICENESS);
    }
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
            .resize_with(threads.clamp(1, MAX_THREADS) - 1, || {
                Arc::new(Mutex::new(Helper {
                    history: History::new(),
                    pv: search::pv_table(),
                }))
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
        // The last search's helpers first, so that none writes to the
        // table after it is cleared.
        let mut helpers = when_stopped(&self.helpers);
        if !self.shared {
            self.tt.clear();
        }
        self.history.clear();
        for helper in &mut helpers {
            helper.history.clear();
        }
    }

    /// Searches `root`. `history` holds the Zobrist hashes
    /// (`Zobrist64`, `EnPassantMode::Legal`) of the game's positions before
    /// `root`, oldest first, for repetitions. Returns when a limit is reached
    /// or `stop` is set (checked often: a stop is honoured within about a
    /// millisecond). `on_progress` sees every completed iteration.
    pub fn search<P: Rules + 'static>(
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
            // No helper of the last search may write to the table beside
            // such a search: wait for them to stop.
            drop(when_stopped(&self.helpers));
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
        let helper_counts = Arc::new(Counts::default());
        // Helpers run until the main search ends, however it ends (a panic
        // too: dropped, this sets their flag).
        let _stop_helpers = StopOnDrop(helpers_stop.clone());
        let helper_tables = probing.and(self.tablebases.clone());
        // One copy of the root and the game for all helpers (they outlive
        // this call), made only when there are helpers.
        if threads > 1 {
            let (shared_root, shared_history) =
                (Arc::new(root.clone()), Arc::<[u64]>::from(history));
            for helper in self.helpers.iter().take(threads - 1) {
                let (helper, tt, root, history) = (
                    helper.clone(),
                    self.tt.clone(),
                    shared_root.clone(),
                    shared_history.clone(),
                );
                let (stop, nodes, moves) = (
                    helpers_stop.clone(),
                    helper_counts.clone(),
                    searchmoves.clone(),
                );
                let (tables, depth) = (helper_tables.clone(), budget.depth);
                let spawned = std::thread::Builder::new()
                    .name("builtin-helper".into())
                    .spawn(move || {
                        lower_priority();
                        let probing = tables.as_ref().map(|(t, rule)| (&**t, *rule));
                        helper
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .search(
                                &tt, &*root, &history, root_hash, moves, depth, probing, &stop,
                                &nodes,
                            );
                    });
                // A thread the system refuses is a helper fewer.
                if spawned.is_err() {
                    break;
                }
            }
        }
        Engine::search_main(
            &self.tt,
            &mut self.history,
            &mut self.pv,
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
    /// `counts` as it goes (its probes after every iteration). It starts at
    /// depth 1 with the main thread; what each finds in the table soon puts
    /// them apart.
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
        search.shared_nodes = Some(&counts.nodes);
        Tablebases {
            probing,
            ranking: None,
        }
        .arm(&mut search);
        let mut prev = None;
        let mut counted_tbhits = 0;
        for depth in 1..=max_depth {
            search.root_best = None;
            search.seldepth = 0;
            let score = search.iterate(root, depth, prev);
            search.publish();
            counts
                .tbhits
                .fetch_add(search.tbhits - counted_tbhits, Ordering::Relaxed);
            counted_tbhits = search.tbhits;
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
    /// The outcome with the helpers' nodes and probes counted in: their
    /// nodes to within [`search::PUBLISH_INTERVAL`] each, their probes of
    /// finished iterations (the answer does not wait for the rest).
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
mod tests;
