//! Deepening until `stop` (`go infinite`, and `go ponder` until
//! `ponderhit`).

use std::time::Instant;

use crate::mpc::{ChildLimit, Rule, Settings, budget::open_rounds, rounds::ClockCell};

use super::{Ends, OnPonderHit, Outcome, Search, plan::Work};

/// Per-call nodes of the first pass under `go infinite`; each pass doubles it.
const FIRST_PASS_NODES: u64 = 1_000;

impl Search {
    /// Until `stop`, or `ponderhit` while pondering. With two or more
    /// workers: rounds with the root search on a worker of its own, which
    /// at `ponderhit` go on under the clock that starts then. With one:
    /// passes of doubling size, and at `ponderhit` a fresh timed decision
    /// (on warm children). (With one worker on the game's clock, pondering is
    /// the evaluator's own instead: [`Search::ponders_alone`].)
    pub(super) async fn deepen(&mut self, settings: Settings) -> Option<Outcome> {
        if self.req.pool.config().threads() >= 2 {
            let clock = ClockCell::default();
            let on_ponderhit = match self.clock.time {
                Some(time) if self.req.go.ponder => OnPonderHit::StartRounds(clock.clone(), time),
                _ => OnPonderHit::Ignore,
            };
            let ends = Ends {
                deadline: None,
                on_ponderhit,
            };
            let (moves, branching) = (self.candidates.len(), self.branching());
            let plan = open_rounds(FIRST_PASS_NODES, settings, moves, branching, clock);
            return self
                .pass(Work::Rounds(Box::new(plan)), settings, ends)
                .await;
        }
        let mut last: Option<Outcome> = None;
        let mut nodes = FIRST_PASS_NODES;
        let pondering = self.req.go.ponder;
        let ends = Ends {
            deadline: None,
            on_ponderhit: if pondering {
                OnPonderHit::Cancel
            } else {
                OnPonderHit::Ignore
            },
        };
        loop {
            let outcome = self
                .pass(Work::pass(ChildLimit::Nodes(nodes)), settings, ends.clone())
                .await;
            // No child answered (the pass may have been cut by its own
            // rule for broken children: `stop` and `ponderhit` are
            // checked first).
            let broken = outcome
                .as_ref()
                .is_some_and(|o| o.decision.rule == Rule::NoAnswer);
            // The analysis is complete: more passes would only print it
            // again, thousands of times a second.
            let exact = outcome
                .as_ref()
                .is_some_and(|o| !o.decision.cancelled && o.decision.exact());
            last = self.keep_better(last, outcome);
            if self.req.stop.is_cancelled() {
                return last;
            }
            if pondering && self.req.ponderhit.is_cancelled() {
                // The clock is ours now: a fresh, timed decision.
                let hit = Instant::now();
                return match self.clock.time {
                    Some(time) => {
                        let timed = self.timed(hit, time, settings).await;
                        self.keep_better(last, timed.ok())
                    }
                    None => last,
                };
            }
            if broken || exact {
                // No child answers: more passes would only spin; the
                // built-in engine takes over until `stop`.
                return last;
            }
            nodes = nodes.saturating_mul(2).min(1 << 30);
        }
    }
}
