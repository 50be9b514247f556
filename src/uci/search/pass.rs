//! One pass, or rounds, of lookahead under the work a plan gives, with
//! the pane kept current and the ends of the `go` watched.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Instant,
};

use tokio_util::sync::CancellationToken;

use crate::{
    mpc::{
        Candidate, Decision, Rule, Settings, lookahead,
        rounds::{RootCell, Round, Rounds},
        tablebase::Tabled,
        time::{CANCEL_GRACE, plan::round_clock},
    },
    uci::trace,
};

use super::{Ends, OnPonderHit, Outcome, Search, plan::Work, report::lines_of};
use crate::uci::pane::PULSE_EVERY;

impl Search {
    /// One lookahead pass, ended early by `stop` and as `ends` says. A complete
    /// pass is reported at once; a cut one only if it is the one played.
    pub(super) async fn pass(
        &mut self,
        mut work: Work,
        settings: Settings,
        ends: Ends,
    ) -> Option<Outcome> {
        // The root search's latest move, kept for when the rounds are
        // given up before one completed.
        let root_seen = RootCell::default();
        if let Work::Rounds(plan) = &mut work {
            plan.anchor_hint = self.anchor_hint();
            plan.root_seen = root_seen.clone();
        }
        let one_pass = !matches!(work, Work::Rounds(_));
        let limit = match &work {
            Work::Pass { calls, .. } => *calls,
            Work::Rounds(plan) => plan.first,
        };
        let cancel = CancellationToken::new();
        let out = self.req.out.clone();
        let castling = self.req.game.castling_mode();
        let debug = self.req.debug;
        let pane = self.pane.clone();
        // The nodes of the calls answered so far, for the pane's pulse.
        let answered = AtomicU64::new(0);
        let mut on_candidate = |c: &crate::mpc::Candidate, done: usize| {
            let nodes: u64 = c.calls.iter().map(|r| r.nodes).sum();
            answered.fetch_add(nodes, Ordering::Relaxed);
            pane.currmove(c.mv, done);
            let mv = c.mv.text(castling);
            if debug {
                let reply = c.reply.map(|r| r.text(castling).to_string());
                let what = match (c.value, &c.failure) {
                    (Some(v), _) => format!("value {v}"),
                    (None, Some(f)) => f.to_string(),
                    (None, None) => "no value".to_owned(),
                };
                out.info_string(format!(
                    "candidate {mv} reply {} {what}",
                    reply.as_deref().unwrap_or("-")
                ));
            }
        };
        // Each complete round: its `info` lines; every round, for the trace.
        let base = self.nodes;
        let multi_pv = self.req.options.multi_pv;
        let tracing_rounds = !self.req.options.trace_file.is_empty();
        let mut traced = Vec::new();
        let mut spent = 0;
        // With `MultiPV` above 1, each move's latest value: a later round
        // re-searches only the contenders, and the lines show the best of
        // every move valued so far.
        let mut latest: Vec<Candidate> = Vec::new();
        // The last complete round's decision: the move when the pass, cut
        // short, does not end in time (a child that answers no `stop`).
        let mut last_complete: Option<Decision> = None;
        let mut on_round = |r: &Round<'_>| {
            if tracing_rounds {
                traced.push(trace::round(r, castling));
            }
            if !r.complete {
                return;
            }
            last_complete = Some(r.decision.clone());
            spent += r.decision.stats.nodes;
            if multi_pv > 1 {
                for c in r.decision.candidates.iter().filter(|c| c.value.is_some()) {
                    match latest.iter().position(|l| l.mv == c.mv) {
                        Some(i) => latest[i] = c.clone(),
                        None => latest.push(c.clone()),
                    }
                }
            }
            let (first, others) = lines_of(&pane, r.decision, &latest, settings.lookahead.plies());
            pane.set(first, &others, base + spent);
        };
        // Positions the tables hold are answered from them.
        let pool = Arc::new(Tabled::new(self.req.pool.clone(), self.req.tables.clone()));
        let noise = self.req.noise.clone();
        let game = self.req.game.clone();
        let candidates = self.candidates.clone();
        let far = Instant::now() + mpcmc_protocol::NO_DEADLINE;
        let mut deadline = ends.deadline;
        if deadline.is_some() {
            self.clock.deadline = deadline;
        }
        let watch_ponderhit = !matches!(ends.on_ponderhit, OnPonderHit::Ignore);
        let mut gave_up = false;
        let decision = {
            let work: std::pin::Pin<Box<dyn Future<Output = Option<Decision>> + Send + '_>> =
                match work {
                    Work::Pass { calls, root } => Box::pin(lookahead::pass(
                        &pool,
                        &game,
                        &candidates,
                        calls,
                        Some(root.unwrap_or_else(|| settings.root_limit(calls))),
                        settings,
                        &cancel,
                        &mut on_candidate,
                    )),
                    Work::Rounds(plan) => Box::pin(
                        Rounds::new(&pool, &game, &candidates, *plan, settings, &noise, &cancel)
                            .decide(&mut on_candidate, &mut on_round),
                    ),
                };
            tokio::pin!(work);
            let mut hit = false;
            // Once cut short (the deadline, `stop`), the pass has a moment
            // to gather its searches; a child that stays silent (hung,
            // frozen, a partitioned host) is then left behind, and the move
            // comes from the rounds complete by then (or the fallback), in
            // time, not after the child's stall deadline.
            let mut give_up: Option<Instant> = None;
            // The pane says when a pulse is due; asked four times as often.
            let tick = PULSE_EVERY / 4;
            let mut pulse = Instant::now() + tick;
            loop {
                if cancel.is_cancelled() && give_up.is_none() {
                    give_up = Some(self.grace_end());
                }
                tokio::select! {
                    d = &mut work => break d,
                    _ = tokio::time::sleep_until(pulse.into()) => {
                        self.pane.pulse(base + answered.load(Ordering::Relaxed));
                        pulse = Instant::now() + tick;
                    }
                    _ = tokio::time::sleep_until(give_up.unwrap_or(far).into()), if give_up.is_some() => {
                        tracing::warn!("a search did not end {CANCEL_GRACE:?} after it was cut short; deciding without it");
                        gave_up = true;
                        break None;
                    }
                    _ = self.req.stop.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
                    _ = self.req.ponderhit.cancelled(), if watch_ponderhit && !hit && !cancel.is_cancelled() => {
                        hit = true;
                        match &ends.on_ponderhit {
                            OnPonderHit::Cancel => cancel.cancel(),
                            OnPonderHit::StartRounds(clock, time) => {
                                let now = Instant::now();
                                clock.set(round_clock(now, time.soft, time.hard));
                                deadline = Some(self.clock.runs_from(now, *time, false));
                            }
                            // Our clock starts now; a fixed budget keeps off the flag.
                            OnPonderHit::StartClock(Some(guard)) => {
                                deadline = Some(self.clock.guarded_from(Instant::now(), *guard));
                            }
                            OnPonderHit::StartClock(None) | OnPonderHit::Ignore => {}
                        }
                    }
                    _ = tokio::time::sleep_until(deadline.unwrap_or(far).into()), if deadline.is_some() && !cancel.is_cancelled() => cancel.cancel(),
                }
            }
        };
        // Left behind (see `give_up`): the last complete round decides,
        // else the root search's latest move (searched, where the built-in
        // fallback would have only what is left of the move's time).
        let decision = if gave_up {
            let root = || {
                root_seen
                    .get()
                    .filter(|r| r.best.is_some_and(|b| candidates.contains(&b)))
                    .and_then(|r| Decision::of_root(r, Rule::EvaluatorFallback))
            };
            last_complete.or_else(root).map(|d| Decision {
                cancelled: true,
                ..d
            })
        } else {
            decision
        };
        let first_round = self.rounds.len();
        self.rounds.append(&mut traced);
        let decision = decision?;
        if tracing_rounds && one_pass {
            // A pass is one round (`deepen` runs several).
            self.rounds
                .push(trace::pass(limit, &decision, !decision.cancelled, castling));
        }
        self.nodes += decision.stats.nodes;
        let mut outcome = Outcome {
            decision,
            limit,
            settings,
            reported: false,
            why: None,
            first_round,
        };
        // A decision no child answered is not the move: the caller falls
        // back, and says what was played.
        if !outcome.decision.cancelled && outcome.decision.rule != Rule::NoAnswer {
            self.report(&outcome);
            outcome.reported = true;
        }
        Some(outcome)
    }
}
