//! A decision on the clock or a move time: rounds until the target, or
//! one even pass with a worker for every root move, ended by the hard
//! limit.

use std::time::Instant;

use crate::mpc::{
    ChildLimit, Rule, Settings,
    time::{
        MoveTime,
        plan::{EvaluatorOnly, INITIAL_SPEED, TimedBudget, TimedPlan, plan_timed},
    },
};

use super::{
    Ends, OnPonderHit, Outcome, Search, no_candidates,
    plan::{Due, Work},
};

impl Search {
    /// What the move's `time` from `start` has to work with.
    pub(super) fn timed_budget(&self, start: Instant, time: MoveTime) -> TimedBudget {
        let pool = &self.req.pool;
        TimedBudget {
            start,
            soft: time.soft,
            hard: time.hard,
            threads: pool.config().threads(),
            lanes: pool.config().lookahead_lanes(),
            speed: pool.speed().unwrap_or(INITIAL_SPEED),
            call_cost: pool.call_cost(),
            clock: self.clock.child,
            lines: self.req.options.multi_pv,
        }
    }

    /// How the move's `time` from `start` is spent ([`plan_timed`]).
    pub(super) fn timed_plan(
        &self,
        start: Instant,
        time: MoveTime,
        settings: Settings,
    ) -> TimedPlan {
        let budget = self.timed_budget(start, time);
        plan_timed(budget, self.candidates.len(), self.branching(), settings)
    }

    /// Rounds on the clock from `start`, ended by the hard limit. `Err` says
    /// why no child could answer in time.
    pub(super) async fn timed(
        &mut self,
        start: Instant,
        time: MoveTime,
        settings: Settings,
    ) -> Result<Outcome, String> {
        let plan = self.timed_plan(start, time, settings);
        let deadline = self
            .clock
            .runs_from(start, time, plan.root_keeps_clock(settings.fortify));
        let ends = Ends {
            deadline: Some(deadline),
            on_ponderhit: OnPonderHit::Ignore,
        };
        match plan {
            TimedPlan::Rounds(lookahead, plan) => {
                if lookahead != settings.lookahead {
                    self.pane.detail(format!(
                        "time is short ({:?}): {} lookahead this move",
                        time.soft,
                        lookahead.name()
                    ));
                }
                let settings = Settings {
                    lookahead,
                    ..settings
                };
                self.pass(Work::Rounds(plan), settings, ends)
                    .await
                    .ok_or_else(no_candidates)
            }
            TimedPlan::EvenPass { calls, root } => {
                let work = Work::Pass {
                    calls,
                    root: Some(root),
                };
                self.pass(work, settings, ends)
                    .await
                    .ok_or_else(no_candidates)
            }
            TimedPlan::NoTime => Err(format!(
                "{:?} for this move leaves no time for a child round trip",
                time.soft
            )),
            TimedPlan::EvaluatorOnly(limit, why) => {
                let rule = match why {
                    EvaluatorOnly::ShortOfTime => Rule::EvaluatorOnly,
                    EvaluatorOnly::OneWorker => Rule::OneWorker,
                };
                self.evaluator_only(limit, rule, Due::At(deadline), settings)
                    .await
            }
        }
    }

    /// Pondering, when the decision on the clock would be the evaluator
    /// alone ([`EvaluatorOnly::OneWorker`]): its search under the game's
    /// clock (to be sent `go ponder`, as to the child playing alone) and
    /// the move's time, whose cap then runs from `ponderhit`.
    pub(super) fn ponders_alone(&self, settings: Settings) -> Option<(ChildLimit, MoveTime)> {
        if !self.req.go.ponder {
            return None;
        }
        let time = self.clock.time?;
        match self.timed_plan(Instant::now(), time, settings) {
            TimedPlan::EvaluatorOnly(
                limit @ ChildLimit::Clock { .. },
                EvaluatorOnly::OneWorker,
            ) => Some((limit, time)),
            _ => None,
        }
    }
}
