//! The built-in engine as a child, without a process.
//!
//! `Evaluator=builtin` gives every pool worker its own [`builtin::Engine`]; a
//! search runs on a blocking thread and is stopped through a flag. It answers
//! like a process child ([`Report`], [`ChildError`]), so the pool and the
//! decision core cannot tell the two apart.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use shakmaty::{Color, Position};
use tokio_util::sync::CancellationToken;

use crate::{
    engine::{
        builtin::{self, Clock, Limits},
        client::{ChildConfig, ChildError, STOP_TIMEOUT},
    },
    mpc::{ChildLimit, Query, Report, Value, game::hash},
};

/// The command line that names the built-in engine.
pub const BUILTIN: &str = "builtin";

/// Whether a child command line names the built-in engine.
pub fn is_builtin(command: &str) -> bool {
    command.trim().eq_ignore_ascii_case(BUILTIN)
}

/// One built-in engine serving a pool worker.
pub struct InProcess {
    label: String,
    engine: Arc<Mutex<builtin::Engine>>,
    clear_hash: bool,
}

impl InProcess {
    /// A fresh engine; of the configured options it knows `Hash` (others are
    /// reported and ignored: it has no others).
    pub fn new(config: &ChildConfig, label: String) -> InProcess {
        let mut hash_mb = 16;
        for (name, value) in &config.options {
            match (name.to_ascii_lowercase().as_str(), value.parse::<usize>()) {
                ("hash", Ok(mb)) => hash_mb = mb.clamp(1, 65_536),
                ("threads", _) => {}
                _ => tracing::warn!("{label}: the built-in engine has no option '{name}={value}'"),
            }
        }
        InProcess {
            label: format!("{label} ({BUILTIN})"),
            engine: Arc::new(Mutex::new(builtin::Engine::new(hash_mb))),
            clear_hash: config.clear_hash,
        }
    }

    /// One search for `query`; on `cancel` the engine is told to stop and the
    /// report is marked `stopped`.
    pub async fn search(
        &mut self,
        query: &Query,
        cancel: &CancellationToken,
    ) -> Result<Report, ChildError> {
        let root = query.position();
        // The positions before the root: the game's, then the line's.
        let mut history = query.game.hashes().to_vec();
        let mut pos = query.game.position().clone();
        if let Some((_, before_root)) = query.line.split_last() {
            for m in before_root {
                pos.play_unchecked(*m);
                history.push(hash(&pos));
            }
        }
        let limits = limits(query.limit, root.turn());
        let stop = Arc::new(AtomicBool::new(false));
        let (engine, flag, clear) = (self.engine.clone(), stop.clone(), self.clear_hash);
        let label = self.label.clone();
        let searched = root.clone();
        let started = Instant::now();
        let mut task = tokio::task::spawn_blocking(move || {
            // A previous search that outlived its deadline still holds the
            // engine: that is a stall, not a wait.
            let Ok(mut engine) = engine.try_lock() else {
                return None;
            };
            if clear {
                engine.clear();
            }
            Some(engine.search(&searched, &history, &limits, &flag, &mut |_| {}))
        });
        let mut stopped = false;
        let joined = tokio::select! {
            joined = &mut task => joined,
            _ = cancel.cancelled() => {
                stopped = true;
                stop.store(true, Ordering::Relaxed);
                match tokio::time::timeout(STOP_TIMEOUT, &mut task).await {
                    Ok(joined) => joined,
                    Err(_) => return Err(self.stalled(started)),
                }
            }
        };
        let elapsed = started.elapsed();
        let outcome = match joined {
            Ok(Some(outcome)) => outcome,
            Ok(None) => return Err(self.stalled(started)),
            Err(e) => {
                return Err(ChildError::Died {
                    engine: label,
                    doing: "searching".to_owned(),
                    status: e.to_string(),
                });
            }
        };
        let Some(best) = outcome.best.filter(|m| root.is_legal(*m)) else {
            if stopped {
                return Err(ChildError::Cancelled);
            }
            return Err(ChildError::BadAnswer {
                engine: label,
                line: format!("{:?}", outcome.best),
                fen: shakmaty::fen::Fen::from_position(&root, shakmaty::EnPassantMode::Legal)
                    .to_string(),
                reason: "no legal move in a position with legal moves".to_owned(),
            });
        };
        Ok(Report {
            best,
            score: outcome.score.map(Value::from_uci),
            pv: outcome.pv,
            depth: outcome.depth,
            nodes: outcome.nodes,
            search_time: elapsed,
            busy_time: elapsed,
            stopped,
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

/// A child limit as the built-in engine's limits; the clock is the side to
/// move's.
fn limits(limit: ChildLimit, turn: Color) -> Limits {
    let mut limits = Limits::default();
    match limit {
        ChildLimit::Nodes(n) => limits.nodes = Some(n),
        ChildLimit::MoveTime(t) => limits.movetime = Some(t.max(Duration::from_millis(1))),
        ChildLimit::Depth(d) => limits.depth = Some(d),
        ChildLimit::Clock {
            wtime,
            btime,
            winc,
            binc,
        } => {
            let (time, inc) = match turn {
                Color::White => (wtime, winc),
                Color::Black => (btime, binc),
            };
            limits.clock = Some(Clock {
                time,
                inc,
                movestogo: None,
            });
        }
    }
    limits
}
