//! One `go` of the built-in engine on its own: `mpcmc engine`'s, and the
//! meta-engine's when it has no children to ask.
//!
//! The GUI's limits become [`Limits`]; every completed iteration
//! becomes an `info` line; the task ends with exactly one `bestmove`, under
//! `go infinite` and `go ponder` only after `stop`/`ponderhit`. The search
//! runs on a blocking thread and is stopped through a flag.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use mpcmc_protocol::{GameMove, Go, Info, MoveText, game::Game, output::Output};
use shakmaty::{Move, Position};
use tokio_util::sync::CancellationToken;

use crate::{Engine, Limits, Outcome, Progress, StopOnDrop, syzygy::Syzygy};

/// Everything one `go` of the engine alone needs.
pub struct BuiltinGo {
    pub go: Go,
    pub game: Arc<Game>,
    pub engine: Arc<Mutex<Engine>>,
    /// `Hash` as set: the table is resized, off the coordinator, if it differs.
    pub hash_mb: usize,
    /// `Threads` as set.
    pub threads: usize,
    /// `ucinewgame` came since the last search: clear before searching.
    pub clear: Arc<AtomicBool>,
    pub out: Output,
    pub overhead: Duration,
    /// `SyzygyPath`'s tables, and `Syzygy50MoveRule`.
    pub tables: Option<Arc<Syzygy>>,
    pub fifty_move_rule: bool,
    pub stop: CancellationToken,
    pub ponderhit: CancellationToken,
}

/// Runs the `go` to its one `bestmove`.
pub async fn run(req: BuiltinGo) {
    if req.game.position().is_none() && req.go.ends_when_told() {
        // No search of a game by a child's rules: the answer still waits
        // to be told, as a search's would.
        tokio::select! {
            () = req.stop.cancelled() => {}
            () = req.ponderhit.cancelled(), if req.go.ponder => {}
        }
    }
    let outcome = search(&req).await;
    // Only a finished game has no move; a search that failed otherwise is
    // still answered with a legal move.
    let best = outcome
        .as_ref()
        .and_then(|o| o.best)
        .map(GameMove::Board)
        .or_else(|| req.game.legal_moves().first().copied());
    let ponder = outcome.as_ref().and_then(|o| o.ponder);
    req.out
        .bestmove(&req.game, best, ponder.map(GameMove::Board));
}

/// Searches the `go`, writing an `info` line for every completed iteration;
/// under `go infinite` and `go ponder` returns only after `stop`/`ponderhit`.
/// `None` when the search task failed, or the game is not one the
/// built-in engine knows the rules of.
pub async fn search(req: &BuiltinGo) -> Option<Outcome> {
    let pos = req.game.position()?.clone();
    let castling = req.game.castling_mode();
    // Set when this search ends, however it ends (also when aborted).
    let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
    let flag = stop.0.clone();
    let mut limits = Limits::from_go(&req.go, pos.turn(), req.overhead);
    for uci in &req.go.searchmoves {
        match uci.uci().and_then(|u| u.to_move(&pos).ok()) {
            Some(m) => limits.searchmoves.push(m),
            None => req
                .out
                .info_string(format!("searchmoves: '{uci}' is not legal here; ignored")),
        }
    }
    let history = match req.game.hashes().split_last() {
        Some((_, before)) => before.to_vec(),
        None => Vec::new(),
    };
    let (engine, out, stop_flag, root) = (
        req.engine.clone(),
        req.out.clone(),
        flag.clone(),
        pos.clone(),
    );
    // Pondering, what ends the search after `ponderhit`.
    let ponder_limits = req.go.ponder.then(|| limits.clone());
    let (hash_mb, threads, clear) = (req.hash_mb, req.threads, req.clear.clone());
    let (tables, fifty_move_rule) = (req.tables.clone(), req.fifty_move_rule);
    let started = Instant::now();
    let mut search = tokio::task::spawn_blocking(move || {
        // A panic in an earlier search poisoned the lock: start clean.
        let mut engine = engine.lock().unwrap_or_else(|poisoned| {
            clear.store(true, Ordering::Relaxed);
            poisoned.into_inner()
        });
        if engine.hash_mb() != hash_mb {
            engine.set_hash(hash_mb);
        }
        engine.set_threads(threads);
        engine.set_tablebases(tables, fifty_move_rule);
        if clear.swap(false, Ordering::Relaxed) {
            engine.clear();
        }
        let mut last_pv: Vec<Move> = Vec::new();
        let outcome = {
            let mut report = |p: &Progress| {
                last_pv.clone_from(&p.pv);
                out.info(info(p, castling, started));
            };
            engine.search_game(&root, &history, &limits, &stop_flag, &mut report)
        };
        // A search stopped in an iteration that had already found a better
        // move answers with that move: its line goes out first, so that the
        // last `info` pv starts with the `bestmove` (fastchess checks).
        if !outcome.pv.is_empty()
            && outcome.pv != last_pv
            && let Some(score) = outcome.score
        {
            let depth = outcome.depth.max(1);
            let last = Progress {
                depth,
                seldepth: depth,
                score,
                nodes: outcome.nodes,
                tbhits: outcome.tbhits,
                time: started.elapsed(),
                pv: outcome.pv.clone(),
                others: Vec::new(),
            };
            out.info(info(&last, castling, started));
        }
        Some(outcome)
    });

    // `stop` sets the flag; `ponderhit` starts our clock (a timer sets it).
    let mut clock: Option<Instant> = None;
    let far = Instant::now() + mpcmc_protocol::NO_DEADLINE;
    let mut released = !req.go.ends_when_told();
    let outcome = loop {
        tokio::select! {
            joined = &mut search => break joined.ok().flatten(),
            _ = req.stop.cancelled(), if !flag.load(Ordering::Relaxed) => {
                flag.store(true, Ordering::Relaxed);
                released = true;
            }
            _ = req.ponderhit.cancelled(), if req.go.ponder && !released => {
                released = true;
                // The clock starts now; the search, under way since `go
                // ponder`, stops by the engine's rule for a pondered move.
                clock = ponder_limits.as_ref().and_then(|l| l.stop_on_ponderhit(&pos, started));
            }
            _ = tokio::time::sleep_until(clock.unwrap_or(far).into()), if clock.is_some() => {
                flag.store(true, Ordering::Relaxed);
                clock = None;
            }
        }
    };
    // A search that ended on its own under `infinite`/`ponder` still waits.
    if !released {
        tokio::select! {
            _ = req.stop.cancelled() => {}
            _ = req.ponderhit.cancelled(), if req.go.ponder => {}
        }
    }
    outcome
}

fn info(p: &Progress, castling: shakmaty::CastlingMode, started: Instant) -> Info {
    Info {
        depth: Some(p.depth),
        seldepth: Some(p.seldepth),
        score: Some(p.score),
        pv: p.pv.iter().map(|m| MoveText::of(*m, castling)).collect(),
        tbhits: (p.tbhits > 0).then_some(p.tbhits),
        ..Info::counts(p.nodes, started.elapsed())
    }
}
