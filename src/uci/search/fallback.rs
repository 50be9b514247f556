//! The built-in engine in this process, for moves the children cannot
//! make in time.

use std::{
    sync::{Arc, Mutex, TryLockError, atomic::AtomicBool},
    time::{Duration, Instant},
};

use mpcmc_builtin::{
    self as builtin, Limits,
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

/// Nodes of the built-in engine's search for a move to ponder on
/// ([`Fallback::reply`]): depth three, about a millisecond.
const PONDER_GUESS_NODES: u64 = 1_000;

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

/// Whether `rules` differ from those of the fallback's last search (its
/// table holds another variant's keys), now noted as the last.
fn variant_changed(last: &Mutex<Rules>, rules: Rules) -> bool {
    match last.lock() {
        Ok(mut last) => std::mem::replace(&mut *last, rules) != rules,
        Err(_) => true,
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
        let clear = variant_changed(&self.1, game.rules());
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

    /// The built-in engine's reply to `best` in `game`, from a search of
    /// [`PONDER_GUESS_NODES`]: the move to ponder on when the decision
    /// predicted none (a child's search cut at depth one names no second
    /// move, a book or tablebase move predicts nothing). `None` when no
    /// move follows `best` (mate, stalemate, a variant's end), when the
    /// game has no board the built-in engine plays (a game by a child's
    /// rules), or when the engine is still searching for an earlier `go`.
    pub async fn reply(&self, game: &Game, best: GameMove) -> Option<GameMove> {
        let after = game.after(&[best])?;
        // The positions before the reply's root, for repetitions.
        let history = game.hashes().to_vec();
        let (engine, last, rules) = (self.0.clone(), self.1.clone(), game.rules());
        let searched = tokio::task::spawn_blocking(move || {
            // Busy with a search of an earlier `go` still ending: no
            // guess rather than a wait.
            let mut engine = match engine.try_lock() {
                Ok(engine) => engine,
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => return None,
            };
            if variant_changed(&last, rules) {
                engine.clear();
            }
            let limits = Limits {
                nodes: Some(PONDER_GUESS_NODES),
                ..Limits::default()
            };
            let stop = AtomicBool::new(false);
            Some(engine.search_game(&after, &history, &limits, &stop, &mut |_| {}))
        });
        searched.await.ok()??.best.map(GameMove::Board)
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
