//! The evaluator's own search of the root as the decision, by plan:
//! too short a time for a lookahead, or one worker on a clock.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildFault, ChildLimit, Children, Decision, Progress, Query, Report, Rule, Settings,
};

use super::{Outcome, Search, plan::Due};

impl Search {
    /// The evaluator's own move at the root, by plan (`rule`): under severe
    /// time pressure, or with one worker on a game clock or a move time
    /// (also pondering on a clock:
    /// the child ponders, and is told `ponderhit` when the GUI says it).
    pub(super) async fn evaluator_only(
        &mut self,
        limit: ChildLimit,
        rule: Rule,
        due: Due,
        settings: Settings,
    ) -> Result<Outcome, String> {
        let limit = match limit {
            ChildLimit::MoveTime(t) => ChildLimit::MoveTime(t.max(Duration::from_millis(1))),
            other => other,
        };
        // The search is the decision: the GUI sees its iterations as they
        // complete (as from the child alone), until it ends.
        let showing = Arc::new(Mutex::new(true));
        let last: Arc<Mutex<Option<Progress>>> = Arc::default();
        let started = Instant::now();
        let (mut deadline, after_ponderhit) = match due {
            Due::At(t) => (Some(t), None),
            Due::AfterPonderhit(time) => (None, Some(time)),
        };
        let query = Query {
            progress: Some(self.relayed(showing.clone(), last.clone())),
            ponderhit: after_ponderhit.map(|_| self.req.ponderhit.clone()),
            ..Query::root(self.req.game.clone(), limit)
        };
        let cancel = CancellationToken::new();
        let search = self.req.pool.search(query, cancel.clone());
        tokio::pin!(search);
        // After the deadline or `stop`, the child gets a moment to answer.
        let mut grace: Option<Instant> = None;
        let result = loop {
            let wake = grace.or(deadline);
            tokio::select! {
                r = &mut search => break r,
                _ = tokio::time::sleep_until(wake.unwrap_or(self.req.received).into()), if wake.is_some() => {
                    if grace.is_some() {
                        break Err(crate::children::SearchError::Cancelled);
                    }
                    cancel.cancel();
                    grace = Some(self.grace_end());
                }
                _ = self.req.stop.cancelled(), if grace.is_none() => {
                    cancel.cancel();
                    grace = Some(self.grace_end());
                }
                // The clock is ours from now: the child was told (the pool
                // relays the token); the move is due at the cap.
                _ = self.req.ponderhit.cancelled(), if deadline.is_none() && grace.is_none() => {
                    if let Some(time) = after_ponderhit {
                        deadline = Some(self.clock.runs_from(Instant::now(), time, true));
                    }
                }
            }
        };
        // Under the lock: no line of this search after it (nor after the
        // `bestmove`).
        *showing.lock().unwrap_or_else(|e| e.into_inner()) = false;
        let report = match result {
            Ok(r) if r.score.is_none() => {
                return Err("the evaluator was stopped before its first iteration".to_owned());
            }
            Ok(r) if r.best.is_some_and(|b| self.candidates.contains(&b)) => r,
            Ok(r) => {
                return Err(format!(
                    "the evaluator's move {} is not among the searchmoves",
                    r.best
                        .map_or("(none)".to_owned(), |b| self.uci(b).to_string())
                ));
            }
            // Given up at the move's cap (a loaded machine, a child slow
            // to answer `stop`): its latest iteration is a searched move,
            // deeper than what the built-in engine finds in what is left.
            Err(e) if e.is_cancelled() => {
                let latest = last.lock().unwrap_or_else(|e| e.into_inner()).take();
                match latest.filter(|p| p.pv.first().is_some_and(|m| self.candidates.contains(m))) {
                    Some(p) => Report {
                        best: Some(p.pv[0]),
                        extra: p.extra,
                        score: p.score,
                        pv: p.pv,
                        depth: p.depth,
                        nodes: p.nodes,
                        search_time: started.elapsed(),
                        busy_time: started.elapsed(),
                        stopped: true,
                        slot: None,
                        exact: false,
                    },
                    None => return Err("the evaluator did not answer in time".to_owned()),
                }
            }
            Err(e) => return Err(format!("evaluator failed: {e}")),
        };
        let decision = Decision {
            cancelled: grace.is_some(),
            ..Decision::of_root(report, rule).ok_or("the evaluator had no move")?
        };
        self.nodes += decision.stats.nodes;
        Ok(Outcome {
            decision,
            limit,
            settings,
            reported: false,
            why: None,
            first_round: self.rounds.len(),
        })
    }
}
