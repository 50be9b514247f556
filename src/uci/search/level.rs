//! A decision at a level (`UCI_LimitStrength`): one pass at the level's
//! budget, the move drawn from the values (the root search's, when the
//! pass is cut short before every move is valued).

use crate::mpc::{
    ChildLimit, Settings,
    decision::{Draw, Lookahead},
    level::Level,
    time::plan::level_call_nodes,
};

use super::{Ends, OnPonderHit, Outcome, Search, no_candidates, plan::Work};

impl Search {
    /// A decision at a level: one pass of one-step lookahead over every
    /// root move, each call at the level's budget or less when the GUI's
    /// limits leave less ([`level_call_nodes`]), and the move drawn from
    /// the values, with a second look at it where the level has one
    /// ([`Level::looks`]). A clock or a move time also ends the pass at the
    /// move's hard limit (cut short there before every move was valued, the
    /// root search beside the pass plays); pondering, the pass runs at once
    /// and its move waits for `ponderhit`.
    pub(super) async fn at_level(
        &mut self,
        level: Level,
        settings: Settings,
    ) -> Result<Outcome, String> {
        let go = &self.req.go;
        let time = self.clock.time;
        let budget = time.map(|t| self.timed_budget(self.req.received, t));
        let decided = self.req.carry.lock().is_ok_and(|c| c.decided);
        let nodes = level_call_nodes(
            if decided {
                level.decided_call_nodes()
            } else {
                level.call_nodes()
            },
            self.candidates.len(),
            // A game already decided plays its best move without a look.
            if decided { 0 } else { level.look_lines() },
            go.nodes,
            budget.as_ref(),
        );
        let settings = Settings {
            lookahead: Lookahead::One,
            fortify: false,
            level: Some(Draw {
                level,
                random: self.random(),
                decided,
            }),
            ..settings
        };
        let ends = if go.ponder {
            Ends {
                deadline: None,
                on_ponderhit: OnPonderHit::StartClock(time.map(|t| t.hard)),
            }
        } else {
            Ends {
                deadline: time.map(|t| self.req.received + t.hard),
                on_ponderhit: OnPonderHit::Ignore,
            }
        };
        if let Some(t) = time.filter(|_| !go.ponder) {
            self.clock.runs_from(self.req.received, t, false);
        }
        let outcome = self
            .pass(Work::pass(ChildLimit::Nodes(nodes)), settings, ends)
            .await
            .ok_or_else(no_candidates)?;
        if let Some(drawn) = outcome.decision.drawn
            && let Ok(mut carry) = self.req.carry.lock()
        {
            carry.decided = drawn.decided;
        }
        Ok(outcome)
    }
}
