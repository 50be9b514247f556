//! The built-in engine as a child, without a process.
//!
//! `Evaluator=builtin` gives every pool worker its own [`builtin::Engine`]; a
//! search runs on a blocking thread and is stopped through a flag. It answers
//! like a process child ([`Report`], [`SearchError`]), so the pool and the
//! decision core cannot tell the two apart.
//!
//! Children that keep their hash (`Memoryless=false`) share one hash table
//! ([`shared_table`]), as the threads of one engine do: the lookahead's
//! searches find what the root search learned about their positions, and
//! the root search finds theirs.

use std::{
    sync::{
        Arc, Mutex, TryLockError,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use mpcmc_protocol::GameMove;
use shakmaty::Position;
use tokio_util::sync::CancellationToken;

use mpcmc_builtin::{self as builtin, Limits, StopOnDrop, TranspositionTable, syzygy::Syzygy};

use crate::{
    children::client::{ChildConfig, STOP_TIMEOUT},
    children::error::{ChildError, SearchError},
    mpc::{Extra, Progress, PvOf, Query, Report, Value, game::hash},
};

/// The command line that names the built-in engine.
pub const BUILTIN: &str = "builtin";

/// Whether a child command line names the built-in engine.
pub fn is_builtin(command: &str) -> bool {
    command.trim().eq_ignore_ascii_case(BUILTIN)
}

/// The hash table that `engines` built-in children configured by `config`
/// share, each bringing its `Hash`: `None` unless `config` names the
/// built-in engine and keeps the hash (`Memoryless=true` children clear
/// before every call, so each keeps a table of its own).
pub fn shared_table(config: &ChildConfig, engines: usize) -> Option<Arc<TranspositionTable>> {
    (is_builtin(&config.command) && !config.clear_hash)
        .then(|| Arc::new(TranspositionTable::new(hash_mb(config) * engines.max(1))))
}

/// The `Hash` in `config`'s options (the last one), else 16 MB.
fn hash_mb(config: &ChildConfig) -> usize {
    config
        .options
        .iter()
        .rev()
        .find(|(name, _)| name.eq_ignore_ascii_case("hash"))
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .map_or(16, |mb| mb.clamp(1, 65_536))
}

/// One built-in engine serving a pool worker.
pub struct InProcess {
    label: String,
    engine: Arc<Mutex<builtin::Engine>>,
    clear_hash: bool,
    /// Its table is shared with the pool's other children.
    shared: bool,
}

impl InProcess {
    /// A fresh engine searching with `table` (see [`shared_table`]), or
    /// with a table of its own; of the configured options it knows `Hash`,
    /// `Threads`, `SyzygyPath` and `Syzygy50MoveRule` (others are reported
    /// and ignored: it has no others).
    pub fn new(
        config: &ChildConfig,
        label: String,
        table: Option<Arc<TranspositionTable>>,
    ) -> InProcess {
        let mut threads = 1;
        let (mut syzygy_path, mut fifty_move_rule) = (String::new(), true);
        for (name, value) in &config.options {
            match name.to_ascii_lowercase().as_str() {
                "syzygypath" => syzygy_path = value.trim().to_owned(),
                "syzygy50moverule" => fifty_move_rule = !value.trim().eq_ignore_ascii_case("false"),
                "threads" => match value.trim().parse::<usize>() {
                    Ok(n) if n >= 1 => threads = n,
                    _ => tracing::warn!("{label}: 'Threads={value}' is not a thread count; 1"),
                },
                // Castling notation is the pool's business (the engine plays
                // Chess960 from any FEN shakmaty reads).
                "hash" | "uci_chess960" => {}
                _ => tracing::warn!("{label}: the built-in engine has no option '{name}={value}'"),
            }
        }
        let shared = table.is_some();
        let mut engine = match table {
            Some(table) => builtin::Engine::sharing(table),
            None => builtin::Engine::new(hash_mb(config)),
        };
        engine.set_threads(threads);
        if !syzygy_path.is_empty() {
            // The session said whether the path opens; a child that cannot
            // open it searches without.
            match Syzygy::shared(&syzygy_path) {
                Ok(tables) => engine.set_tablebases(Some(tables), fifty_move_rule),
                Err(e) => tracing::warn!("{label}: {e}"),
            }
        }
        InProcess {
            label: format!("{label} ({BUILTIN})"),
            engine: Arc::new(Mutex::new(engine)),
            clear_hash: config.clear_hash,
            shared,
        }
    }

    /// `ucinewgame`: the history and a table of its own are cleared (a
    /// shared table is the pool's to clear), unless a stalled search still
    /// holds the engine (the pool replaces it then).
    pub fn new_game(&mut self) {
        if let Ok(mut engine) = self.engine.try_lock() {
            engine.clear();
        }
    }

    /// One search for `query`; on `cancel` the engine is told to stop and the
    /// report is marked `stopped`.
    pub async fn search(
        &mut self,
        query: &Query,
        cancel: &CancellationToken,
    ) -> Result<Report, SearchError> {
        // A game by a child's rules never reaches it: its worker refuses
        // the variant at start.
        let (Some(root), Some(current)) = (query.position(), query.game.position()) else {
            return Err(SearchError::Child(ChildError::NoVariant {
                engine: self.label.clone(),
                variant: query.game.rules(),
                offered: "chess and shakmaty's variants".to_owned(),
            }));
        };
        // The positions before the root: the game's (its last is the current
        // position), then the line's; the root itself is not history.
        let mut history = query.game.hashes().to_vec();
        let mut pos = current.clone();
        for m in query.line.iter().filter_map(|m| m.board()) {
            pos.play_unchecked(m);
            history.push(hash(&pos));
        }
        history.pop();
        let limits = Limits {
            multipv: query.lines() as usize,
            ..Limits::from_go(&query.go(), root.turn(), Duration::ZERO)
        };
        // Pondering, what ends the search after `ponderhit`.
        let ponder_limits = query.ponderhit.is_some().then(|| limits.clone());
        // Set when this future ends, however it ends (also when dropped).
        let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
        let (engine, flag, clear) = (self.engine.clone(), stop.0.clone(), self.clear_hash);
        // A decision's first search starts a new generation of a shared
        // table: what earlier decisions stored may be replaced.
        let age = self.shared.then(|| hash(current));
        let label = self.label.clone();
        let searched = root.clone();
        let sink = query.progress.clone();
        let started = Instant::now();
        let run = move || {
            // A previous search that outlived its deadline still holds the
            // engine: that is a stall, not a wait. A panic in an earlier search
            // poisoned it: start afresh (a table of its own cleared; a shared
            // one holds nothing a panic could have left half-written).
            let mut engine = match engine.try_lock() {
                Ok(engine) => engine,
                Err(TryLockError::Poisoned(poisoned)) => {
                    let mut engine = poisoned.into_inner();
                    engine.clear();
                    engine
                }
                Err(TryLockError::WouldBlock) => return None,
            };
            if clear {
                engine.clear();
            }
            if let Some(root) = age {
                engine.age_table(root);
            }
            let mut seldepth = None;
            let mut show = |p: &builtin::Progress| {
                seldepth = Some(p.seldepth);
                if let Some(sink) = &sink {
                    sink.send(Progress {
                        depth: p.depth,
                        extra: Extra {
                            seldepth: Some(p.seldepth),
                            tbhits: (p.tbhits > 0).then_some(p.tbhits),
                            ..Extra::default()
                        },
                        score: Some(Value::from_uci(p.score)),
                        nodes: p.nodes,
                        pv: board_line(&p.pv),
                        others: p
                            .others
                            .iter()
                            .map(|(score, pv)| PvOf {
                                score: Some(Value::from_uci(*score)),
                                pv: board_line(pv),
                            })
                            .collect(),
                    });
                }
            };
            let outcome = engine.search_game(&searched, &history, &limits, &flag, &mut show);
            let extra = Extra {
                seldepth,
                hashfull: Some(engine.hashfull()),
                tbhits: (outcome.tbhits > 0).then_some(outcome.tbhits),
                ..Extra::default()
            };
            Some((outcome, extra))
        };
        let mut task = if query.is_root() {
            on_own_thread(run)
        } else {
            tokio::task::spawn_blocking(move || {
                give_way_to_root_searches();
                Ok(run())
            })
        };
        let mut stopped = false;
        // Pondering, `ponderhit` starts the clock: the search then stops by
        // the engine's own rule for a pondered move, as `mpcmc engine`
        // pondering ([`Limits::after_ponderhit`]).
        let hit = query.ponderhit.clone().unwrap_or_default();
        let mut pondering = query.ponderhit.is_some();
        let mut clock: Option<Instant> = None;
        let joined = loop {
            tokio::select! {
                joined = &mut task => break joined,
                _ = cancel.cancelled() => {
                    stopped = true;
                    stop.0.store(true, Ordering::Relaxed);
                    match tokio::time::timeout(STOP_TIMEOUT, &mut task).await {
                        Ok(joined) => break joined,
                        Err(_) => return Err(self.stalled(started).into()),
                    }
                }
                _ = hit.cancelled(), if pondering => {
                    pondering = false;
                    clock = ponder_limits
                        .as_ref()
                        .and_then(|l| l.stop_on_ponderhit(&root, started));
                }
                _ = tokio::time::sleep_until(clock.unwrap_or(started).into()), if clock.is_some() => {
                    clock = None;
                    stop.0.store(true, Ordering::Relaxed);
                }
            }
        };
        let elapsed = started.elapsed();
        let (outcome, extra) = match joined.map_err(|e| e.to_string()).flatten() {
            Ok(Some(searched)) => searched,
            Ok(None) => return Err(self.stalled(started).into()),
            Err(status) => {
                return Err(SearchError::Child(ChildError::Died {
                    engine: label,
                    doing: "searching".to_owned(),
                    status,
                }));
            }
        };
        let Some(best) = outcome.best.filter(|m| root.is_legal(*m)) else {
            if stopped {
                return Err(SearchError::Cancelled);
            }
            return Err(SearchError::Child(ChildError::BadAnswer {
                engine: label,
                line: format!("{:?}", outcome.best),
                fen: shakmaty::fen::Fen::from_position(&root, shakmaty::EnPassantMode::Legal)
                    .to_string(),
                reason: "no legal move in a position with legal moves".to_owned(),
            }));
        };
        Ok(Report {
            best: Some(GameMove::Board(best)),
            extra,
            score: outcome.score.map(Value::from_uci),
            pv: board_line(&outcome.pv),
            depth: outcome.depth,
            nodes: outcome.nodes,
            search_time: elapsed,
            busy_time: elapsed,
            stopped,
            slot: None,
            exact: false,
        })
    }

    fn stalled(&self, since: Instant) -> ChildError {
        ChildError::Stalled {
            engine: self.label.clone(),
            waiting_for: "the end of its search",
            after: since.elapsed(),
        }
    }
}

/// Runs `f` on a thread of its own, at the priority mpcmc started with.
/// Root searches run so: the blocking pool's threads run lookahead calls and
/// give way (see [`give_way_to_root_searches`]), and an unprivileged thread
/// cannot take that back.
fn on_own_thread<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> tokio::task::JoinHandle<Result<T, String>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("mpcmc-root".into())
        .spawn(move || {
            let _ = tx.send(f());
        });
    tokio::spawn(async move {
        match spawned {
            // A panic drops the sender.
            Ok(_) => rx
                .await
                .map_err(|_| "the root search's thread panicked".to_owned()),
            Err(e) => Err(format!("no thread for the root search: {e}")),
        }
    })
}

/// The nice value of the threads that run lookahead calls beside a root
/// search. Each lookahead call is a hand-off between threads (runtime →
/// search → runtime); at a few milliseconds a call that is hundreds of
/// wake-ups a second, and each one that lands on the root search's core
/// preempts it: beside a process making 3000-node calls a search ran at 77 %
/// of a core, 889 involuntary switches in 3 s against 12 alone (issue 7).
/// At a lower priority they wait for the core the root search does not use.
const LOOKAHEAD_NICE: i32 = 10;

/// Lowers the calling thread's priority to [`LOOKAHEAD_NICE`] (Linux; once a
/// thread — it stays, so the blocking pool's threads ask the kernel only on
/// their first lookahead call). Elsewhere nothing.
fn give_way_to_root_searches() {
    #[cfg(target_os = "linux")]
    {
        thread_local! {
            static GAVE_WAY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        }
        if GAVE_WAY.replace(true) {
            return;
        }
        // SAFETY: plain syscalls on the calling thread's own id.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            if libc::getpriority(libc::PRIO_PROCESS, tid) < LOOKAHEAD_NICE {
                libc::setpriority(libc::PRIO_PROCESS, tid, LOOKAHEAD_NICE);
            }
        }
    }
}

/// The built-in engine's line as the meta-engine's moves.
fn board_line(line: &[shakmaty::Move]) -> Vec<GameMove> {
    line.iter().copied().map(GameMove::Board).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use shakmaty::{CastlingMode, Color, uci::UciMove};

    use super::*;
    use mpcmc_protocol::ScoreKind;

    use crate::mpc::{ChildLimit, Game, Role};

    /// Black, a queen down, draws only by repeating a third time (h8g8): the
    /// game's history must reach the engine whether the query's line is empty
    /// (the root evaluator call) or not.
    #[tokio::test]
    async fn the_game_history_reaches_the_engine() {
        let moves = [
            "g8h8", "c1d1", "h8g8", "d1c1", "g8h8", "c1d1", "h8g8", "d1c1", "g8h8", "c1d1",
        ];
        let game = |plies: usize| {
            let mut game =
                Game::from_fen("6k1/8/8/8/8/2K5/8/2Q5 b - - 0 1", CastlingMode::Standard)
                    .expect("test fen");
            for m in &moves[..plies] {
                game.push_uci(&m.parse().expect("uci")).expect("legal");
            }
            Arc::new(game)
        };
        let config = ChildConfig {
            options: vec![("Hash".into(), "4".into())],
            clear_hash: true,
            ..ChildConfig::new(BUILTIN)
        };
        let mut child = InProcess::new(&config, "test".into(), shared_table(&config, 1));
        let cancel = CancellationToken::new();
        let draw = Some(ScoreKind::Cp(0));
        // The whole game played: Black to move at the root, h8g8 draws.
        let at_root = Query::root(game(10), ChildLimit::Depth(5));
        let report = child.search(&at_root, &cancel).await.expect("search");
        assert_eq!(report.score.map(|s| s.to_uci().kind), draw, "{report:?}");
        // The last move in the query's line instead of the game.
        let before = game(9);
        let c1d1 = "c1d1"
            .parse::<UciMove>()
            .expect("uci")
            .to_move(before.position().expect("a board game"))
            .expect("legal");
        let in_line = Query {
            game: before,
            line: vec![GameMove::Board(c1d1)],
            ..at_root
        };
        let report = child.search(&in_line, &cancel).await.expect("search");
        assert_eq!(report.score.map(|s| s.to_uci().kind), draw, "{report:?}");
    }

    /// Children that keep their hash share one table: a search the other
    /// child made first shortens this one's; children that clear theirs
    /// (`Memoryless=true`, the paper's memoryless calls) share nothing.
    #[tokio::test]
    async fn children_that_keep_their_hash_share_one_table() {
        let mut config = ChildConfig {
            options: vec![("Hash".into(), "4".into())],
            ..ChildConfig::new(BUILTIN)
        };
        let game = Arc::new(
            Game::from_fen(
                "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
                CastlingMode::Standard,
            )
            .expect("test fen"),
        );
        let query = |depth| Query {
            role: Role::Opponent,
            game: game.clone(),
            line: Vec::new(),
            limit: ChildLimit::Depth(depth),
            progress: None,
            ponderhit: None,
        };
        let cancel = CancellationToken::new();
        let nodes = |mut child: InProcess, depth| {
            let (query, cancel) = (query(depth), cancel.clone());
            async move {
                let report = child.search(&query, &cancel).await.expect("search");
                (report.nodes, child)
            }
        };
        let (alone, _) = nodes(InProcess::new(&config, "alone".into(), None), 7).await;

        let table = shared_table(&config, 2).expect("a shared table");
        assert_eq!(table.mb(), 8, "each child brings its Hash");
        let first = InProcess::new(&config, "first".into(), Some(table.clone()));
        let second = InProcess::new(&config, "second".into(), Some(table));
        let (deep, _) = nodes(first, 9).await;
        let (after, _) = nodes(second, 7).await;
        assert!(
            deep > alone && after * 3 < alone * 2,
            "alone {alone}, the other's deeper search {deep}, then {after}"
        );
        // Control: a child with a table of its own does not see it.
        let (own, _) = nodes(InProcess::new(&config, "own".into(), None), 7).await;
        assert_eq!(own, alone);

        config.clear_hash = true;
        assert!(shared_table(&config, 2).is_none());
        config.clear_hash = false;
        config.command = "/usr/games/stockfish".to_owned();
        assert!(shared_table(&config, 2).is_none());
    }

    /// A pondering search goes on until `ponderhit`, then stops by the
    /// engine's own rule for a pondered move (not stopped): at the move's
    /// budget from `go`, or at once when it pondered past half of that.
    #[tokio::test]
    async fn a_pondering_search_runs_until_ponderhit_then_on_the_clock() {
        let config = ChildConfig {
            options: vec![("Hash".into(), "4".into())],
            ..ChildConfig::new(BUILTIN)
        };
        let mut child = InProcess::new(&config, "test".into(), None);
        const MS: Duration = Duration::from_millis(1);
        let second = Duration::from_secs(1);
        let clock = ChildLimit::Clock {
            wtime: 30 * second,
            btime: 30 * second,
            winc: Duration::ZERO,
            binc: Duration::ZERO,
            movestogo: None,
        };
        let budget = Limits::from_go(&clock.go(), Color::White, Duration::ZERO)
            .clock
            .expect("a clock")
            .move_budget();
        // About a second on this clock.
        assert!(budget > 900 * MS && budget < second, "{budget:?}");
        let slack = 100 * MS;
        for (ponder, answer_at) in [(300 * MS, budget), (700 * MS, 700 * MS)] {
            let hit = CancellationToken::new();
            let query = Query {
                ponderhit: Some(hit.clone()),
                ..Query::root(Arc::new(Game::default()), clock)
            };
            let started = Instant::now();
            let trigger = tokio::spawn(async move {
                tokio::time::sleep(ponder).await;
                hit.cancel();
            });
            let cancel = CancellationToken::new();
            let report = child.search(&query, &cancel).await.expect("search");
            let took = started.elapsed();
            trigger.await.expect("trigger");
            assert!(!report.stopped, "{report:?}");
            assert!(
                took + slack / 2 >= answer_at && took < answer_at + 5 * slack,
                "pondered {ponder:?}: took {took:?}, budget {budget:?}"
            );
        }
    }

    /// `Threads` reaches the engine (`ChildThreads` for built-in children);
    /// a value that is not a count leaves it at one thread.
    #[test]
    fn the_threads_option_sets_the_engines_search_threads() {
        let threads = |value: &str| {
            let config = ChildConfig {
                options: vec![("Threads".into(), value.into())],
                ..ChildConfig::new(BUILTIN)
            };
            let child = InProcess::new(&config, "test".into(), None);
            let engine = child.engine.lock().expect("engine");
            engine.threads()
        };
        assert_eq!(threads("2"), 2);
        assert_eq!(threads("1"), 1);
        assert_eq!(threads("0"), 1);
        assert_eq!(threads("two"), 1);
    }

    #[cfg(target_os = "linux")]
    fn nice() -> i32 {
        // SAFETY: a read of the calling thread's own priority.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    /// Lookahead calls run on threads that give way; a root search on a
    /// thread of its own keeps the priority mpcmc runs at, even after the
    /// blocking pool's threads gave way.
    #[cfg(target_os = "linux")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn lookahead_threads_give_way_and_root_searches_do_not() {
        let ours = nice();
        let lookahead = tokio::task::spawn_blocking(|| {
            give_way_to_root_searches();
            nice()
        })
        .await
        .expect("lookahead thread");
        assert_eq!(lookahead, ours.max(LOOKAHEAD_NICE));
        let root = on_own_thread(nice)
            .await
            .expect("join")
            .expect("root thread");
        assert_eq!(root, ours);
    }
}
