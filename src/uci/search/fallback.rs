//! The built-in engine in this process, for moves the children cannot
//! make in time.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use mpcmc_builtin::{
    self as builtin,
    go::{self as builtin_go, BuiltinGo},
};
use mpcmc_protocol::game::Rules;
use mpcmc_protocol::{GameMove, Go, output::Output};
use tokio_util::sync::CancellationToken;

use crate::mpc::{ChildLimit, Decision, Game, Rule, Settings, Value, decision::Stats};

use super::{Outcome, Search};
use crate::mpc::time::FALLBACK_AFTER_STOP;

/// The fallback engine's hash table, MB (besides `Hash`, which the children
/// share).
const FALLBACK_HASH_MB: usize = 1;

/// The built-in engine a session keeps for moves its children cannot make
/// (or when no children can be configured, or they refuse the variant):
/// its own small table, cleared only when the game's variant changes (the
/// same board has one key in every variant), and the variant it searched
/// last.
#[derive(Clone)]
pub struct Fallback(Arc<Mutex<builtin::Engine>>, Arc<Mutex<Rules>>);

impl Default for Fallback {
    fn default() -> Fallback {
        Fallback(
            Arc::new(Mutex::new(builtin::Engine::new(FALLBACK_HASH_MB))),
            Arc::default(),
        )
    }
}

impl Fallback {
    /// One `go` of it.
    pub fn go(
        &self,
        go: Go,
        game: Arc<Game>,
        out: Output,
        overhead: Duration,
        stop: CancellationToken,
        ponderhit: CancellationToken,
    ) -> BuiltinGo {
        let clear = match self.1.lock() {
            Ok(mut last) => std::mem::replace(&mut *last, game.rules()) != game.rules(),
            Err(_) => true,
        };
        BuiltinGo {
            go,
            game,
            engine: self.0.clone(),
            hash_mb: FALLBACK_HASH_MB,
            threads: 1,
            clear: Arc::new(clear.into()),
            out,
            overhead,
            // A root the tables hold never reaches it (the session plays
            // the tables' move).
            tables: None,
            fifty_move_rule: true,
            stop,
            ponderhit,
        }
    }
}

impl Search {
    /// The built-in engine's own search of the root, in this process, when
    /// the children cannot answer (`why`): until the move's hard limit (or
    /// its deadline when that is earlier); after a
    /// `stop` (the GUI wants the move now) for [`FALLBACK_AFTER_STOP`];
    /// without a deadline, as the `go` line asks (until `stop` under
    /// `infinite`). Its first iteration always completes.
    pub(super) async fn fallback(&mut self, why: String, settings: Settings) -> Option<Outcome> {
        let mut go = Go::default();
        let mut overhead = Duration::ZERO;
        let mut stop = self.req.stop.clone();
        if self.req.stop.is_cancelled() {
            go.movetime = Some(FALLBACK_AFTER_STOP.as_millis() as u64);
            // Already stopped: only the move time may end this search.
            stop = CancellationToken::new();
        } else if let Some(deadline) = self.clock.deadline {
            let by = self.clock.hard.map_or(deadline, |hard| hard.min(deadline));
            let left = by.saturating_duration_since(Instant::now());
            go.movetime = Some(left.as_millis().max(1) as u64);
        } else {
            go = self.req.go.clone();
            overhead = Duration::from_millis(self.req.options.move_overhead);
        }
        go.searchmoves = self.candidates.iter().map(|m| self.uci(*m)).collect();
        // Its own lines would count its own nodes from zero: the pane
        // shows its result with the rest of the `go`.
        let (muted, gate) = self.req.out.gated();
        gate.shut();
        let request = self.req.fallback.go(
            go,
            self.req.game.clone(),
            muted,
            overhead,
            stop,
            self.req.ponderhit.clone(),
        );
        let started = Instant::now();
        let outcome = builtin_go::search(&request).await?;
        let elapsed = started.elapsed();
        let best = outcome.best?;
        self.nodes += outcome.nodes;
        let decision = Decision {
            best: GameMove::Board(best),
            extra: Default::default(),
            ponder: outcome.ponder.map(GameMove::Board),
            value: outcome.score.map(Value::from_uci),
            pv: outcome.pv.into_iter().map(GameMove::Board).collect(),
            rule: Rule::BuiltinFallback,
            lookahead_choice: None,
            evaluator_choice: None,
            candidates: Vec::new(),
            steps: 0,
            root: None,
            root_failure: None,
            stats: Stats {
                calls: 1,
                nodes: outcome.nodes,
                busy_time: elapsed,
                search_time: elapsed,
                depth: outcome.depth,
            },
            cancelled: false,
            spread: None,
            drawn: None,
            looks: Vec::new(),
        };
        Some(Outcome {
            decision,
            limit: ChildLimit::MoveTime(elapsed),
            settings,
            reported: false,
            why: Some(why),
            first_round: self.rounds.len(),
        })
    }
}
