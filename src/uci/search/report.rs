//! What a decision shows: its `info` lines and its trace.

use std::sync::{Arc, Mutex};

use mpcmc_protocol::GameMove;

use crate::{
    mpc::{Candidate, Decision, Progress, ProgressSink, Rule, Value},
    uci::{
        pane::{Pane, PvLine},
        trace,
    },
};

use super::{Outcome, Search};

/// A decision's lines for the pane: its own move's first, then (when the
/// pane shows more than one) every other root move of `candidates` with a
/// value, all at the decision's depth (the pane shows one set at one
/// depth).
pub(super) fn lines_of(
    pane: &Pane,
    d: &Decision,
    candidates: &[Candidate],
    plies: u32,
) -> (PvLine, Vec<PvLine>) {
    let depth = d.stats.depth;
    let pv = if d.pv.first() == Some(&d.best) {
        d.pv.clone()
    } else {
        vec![d.best]
    };
    let first = PvLine {
        depth,
        value: d.value,
        pv,
        extra: d.extra,
    };
    let others = candidates
        .iter()
        .filter(|_| pane.shows_others())
        .filter(|c| c.mv != d.best && c.value.is_some())
        .map(|c| PvLine {
            depth,
            value: c.value,
            pv: c.line(),
            extra: c.extra(plies),
        })
        .collect();
    (first, others)
}

impl Search {
    /// The decision's trace, kept until its `bestmove` is out, when
    /// `TraceFile` is set.
    pub(super) fn trace(&mut self, o: &Outcome) {
        if self.req.options.trace_file.is_empty() {
            return;
        }
        self.trace = Some(trace::Trace::of(
            &o.decision,
            trace::Context {
                game: &self.req.game,
                go: self.req.go.to_string(),
                settings: o.settings,
                rounds: std::mem::take(&mut self.rounds),
                time_ms: self.req.received.elapsed().as_millis() as u64,
            },
        ));
    }

    /// Appends the trace to `TraceFile`, with whether its move was `played`
    /// and the hit rate as it now stands; a file that cannot be written is
    /// said in an `info string`, and play goes on.
    pub(super) fn write_trace(&mut self, played: bool) {
        let Some(mut record) = self.trace.take() else {
            return;
        };
        record.played = played;
        if let Ok(carry) = self.req.carry.lock() {
            record.replies = carry.replies;
        }
        let path = &self.req.options.trace_file;
        if let Err(e) = record.append(std::path::Path::new(path)) {
            self.pane
                .notice(format!("TraceFile: cannot write '{path}': {e}"));
        }
    }

    /// A sink that shows a child search's iterations in the pane, the
    /// nodes counted for this `go`, while `showing`.
    /// The latest iteration is kept in `last`.
    pub(super) fn relayed(
        &self,
        showing: Arc<Mutex<bool>>,
        last: Arc<Mutex<Option<Progress>>>,
    ) -> ProgressSink {
        let (pane, before) = (self.pane.clone(), self.nodes);
        ProgressSink::new(move |p: Progress| {
            let showing = showing.lock().unwrap_or_else(|e| e.into_inner());
            if *showing {
                pane.relay(&p, before);
                *last.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
            }
        })
        .showing(self.req.options.multi_pv)
    }

    /// A decision's lines in the pane, and how it was reached: detail
    /// (the rule, the rounds), and a notice for each kind of child fault.
    pub(super) fn report(&self, o: &Outcome) {
        let d = &o.decision;
        let (first, others) = lines_of(&self.pane, d, &d.candidates, o.settings.lookahead.plies());
        // Unless the pane shows it last already (a root search relayed as
        // it went): one line twice told nothing.
        self.pane.finish(first, &others, self.nodes);
        self.pane.detail(self.how(o));
        // Child failures other than being cut short are worth a line each kind.
        let mut failures: Vec<String> = d
            .root_failure
            .iter()
            .chain(d.candidates.iter().filter_map(|c| c.failure.as_ref()))
            .filter(|f| f.is_fault())
            .map(ToString::to_string)
            .collect();
        failures.sort_unstable();
        failures.dedup();
        for f in failures.iter().take(3) {
            self.pane.notice(format!("child failure: {f}"));
        }
    }

    /// How a decision was reached, in one line: its rule, and the
    /// lookahead's and the evaluator's choices, the level's draw or the
    /// rounds.
    pub(super) fn how(&self, o: &Outcome) -> String {
        let d = &o.decision;
        let show = |c: Option<(GameMove, Value)>| match c {
            Some((m, v)) => format!("{} {v}", self.uci(m)),
            None => "-".to_owned(),
        };
        let finished = d.candidates.iter().filter(|c| c.value.is_some()).count();
        let rule = format!("rule {}: {}", d.rule.key(), d.rule.meaning());
        if let Some(why) = &o.why {
            return format!("{rule} ({why})");
        }
        let cut = if d.cancelled { ", cut short" } else { "" };
        if let Some(draw) = o.settings.level {
            let what = match d.drawn {
                Some(c) => {
                    let show_candidate = |i: usize| {
                        let c = &d.candidates[i];
                        show(c.value.map(|v| (c.mv, v)))
                    };
                    let how = trace::draw_text(c.decided, c.loss, &show_candidate(c.best));
                    let looks: String = d
                        .looks
                        .iter()
                        .map(|l| {
                            let mv = self.uci(d.candidates[l.index].mv).to_string();
                            let deeper = l.deeper.map(|v| v.to_string());
                            let shallow = l.shallow.to_string();
                            let against = l.against.map(|(best, v)| {
                                (self.uci(d.candidates[best].mv).to_string(), v.to_string())
                            });
                            let look = trace::look_text(
                                &mv,
                                &shallow,
                                deeper.as_deref(),
                                against,
                                l.refuted,
                            );
                            format!("; {look}")
                        })
                        .collect();
                    format!("{} ({how}){looks}", show_candidate(c.index))
                }
                // Nothing drawn: the pass was cut short before every move
                // was valued (or none was), and the root search played.
                None => format!(
                    "evaluator {}, the best valued {}",
                    show(d.evaluator_choice),
                    show(d.lookahead_choice)
                ),
            };
            return format!(
                "{rule}: level {} over {} under {}: {what}; {finished}/{} candidates{cut}",
                draw.level.elo(),
                draw.level.calibration().engine(),
                o.limit,
                d.candidates.len(),
            );
        }
        if matches!(d.rule, Rule::EvaluatorOnly | Rule::OneWorker) {
            return format!("{rule}: {} under {}", show(d.evaluator_choice), o.limit);
        }
        let lookahead = format!("{}-step", o.settings.lookahead.name());
        let (margin, spread) = match d.spread {
            // Rounds: the measured margin; how the lookahead's nodes were spread.
            Some(s) => (
                s.margin,
                format!(
                    "; {} rounds, {} calls, {} nodes, {:.0}% of the lookahead's on its top 3 moves{}",
                    s.rounds,
                    d.stats.calls,
                    d.stats.nodes,
                    100.0 * s.top3_nodes as f64 / s.lookahead_nodes.max(1) as f64,
                    d.root.as_ref().map_or(String::new(), |r| format!(
                        "; root search depth {}, {} nodes, {} ms",
                        r.depth,
                        r.nodes,
                        r.search_time.as_millis()
                    )),
                ) + &s.check.map_or(String::new(), |c| {
                    format!(
                        "; deep check: depth {}, {} nodes, {} ({:?})",
                        c.depth,
                        c.nodes,
                        c.value.map_or("no value".to_owned(), |v| v.to_string()),
                        c.verdict
                    )
                }),
            ),
            None => (o.settings.fortify_margin, String::new()),
        };
        let wanted = o.settings.lookahead.steps();
        let steps = if d.steps < wanted {
            format!(" ({} of {wanted} steps)", d.steps)
        } else {
            String::new()
        };
        format!(
            "{lookahead}{steps}, {}: {rule}; lookahead {} vs evaluator {} (margin {margin}); {finished}/{} candidates{cut}{spread}",
            o.limit,
            show(d.lookahead_choice),
            show(d.evaluator_choice),
            d.candidates.len(),
        )
    }
}
