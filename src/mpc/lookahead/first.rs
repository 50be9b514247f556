//! The first step of a pass: every candidate's lookahead line and the
//! evaluator's root search, all sent at once, gathered as they finish.

use std::{sync::Arc, time::Instant};

use mpcmc_protocol::GameMove;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildFault, ChildLimit, Children, Game, Query, Report, Role, Value,
    candidate::{Candidate, Failure},
    decision::{Settings, Stats},
    lookahead::line::evaluate,
    time::CANCEL_GRACE,
};

/// Searches of a step that may fail by a child's fault, with none
/// answering, before its other searches are not asked for: the children are
/// broken, and each further search would cost a restart or two (a child
/// that closed its output cost 8.5 s a `go nodes` here, 32 s where found).
pub const BROKEN_AFTER: usize = 2;
enum Finished<E> {
    Root(Result<Report, E>),
    Candidate(usize, Candidate),
}
/// Orders candidates deterministically (by UCI text) so ties break the same way
/// on every run.
pub fn sort_candidates(candidates: &mut [GameMove]) {
    candidates.sort_by_cached_key(|m| m.to_string());
}
/// What one step of a pass found (the first, or one position's at a
/// deeper step).
pub(crate) struct StepFound {
    /// In candidate order.
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) root: Option<Report>,
    pub(crate) root_failure: Option<Failure>,
    pub(crate) stats: Stats,
    /// The first candidate in order (the move of last resort).
    pub(crate) first: GameMove,
    pub(crate) cancelled: bool,
}

impl StepFound {
    /// Cut short before every candidate was valued, with the root search
    /// finished on one of them: what a level then plays instead of a draw
    /// over the few valued.
    pub(crate) fn cut_before_the_draw(&self) -> bool {
        self.cancelled
            && self.candidates.iter().any(|c| c.value.is_none())
            && finished_root(self.root.as_ref(), &self.candidates).is_some()
    }
}
/// The root search's move and value when it finished (not stopped, with a
/// score) on one of the `candidates` (it may not, under `go
/// searchmoves`): the reference fortification weighs, and a level's move
/// when its pass was cut short.
pub(crate) fn finished_root(
    root: Option<&Report>,
    candidates: &[Candidate],
) -> Option<(GameMove, Value)> {
    root.filter(|r| !r.stopped)
        .and_then(|r| Some((r.best?, r.score?)))
        .filter(|(m, _)| candidates.iter().any(|c| c.mv == *m))
}
/// Every candidate's first step of lookahead (`settings.lookahead`'s
/// plies) at the position after `prefix`, and the evaluator's root search
/// under `root_limit`, all at once.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn first_step<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    prefix: &[GameMove],
    candidates: &[GameMove],
    limit: ChildLimit,
    root_limit: Option<ChildLimit>,
    settings: Settings,
    cancel: &CancellationToken,
    on_candidate: &mut (dyn FnMut(&Candidate, usize) + Send),
) -> Option<StepFound> {
    let mut order = candidates.to_vec();
    sort_candidates(&mut order);
    let first = *order.first()?;
    // Cancelled by the caller, or by this pass when a child stalls.
    let cancel = &cancel.child_token();

    let mut tasks = JoinSet::new();
    // The root call is the fallback when time runs out; `Query::urgency` has
    // the children serve it first. A root that is already a finished game (a
    // draw by rule with moves left) is not sent to a child.
    if let Some(limit) = root_limit
        && game.terminal_now().is_none()
    {
        let query = Query::root(game.clone(), limit);
        let (children, cancel) = (children.clone(), cancel.clone());
        let (queued, is_queued) = tokio::sync::oneshot::channel();
        tasks.spawn(async move {
            let search = children.search(query, cancel);
            tokio::pin!(search);
            // One poll queues the call; only then may the candidates queue
            // theirs, so the root is never behind a whole candidate search.
            let first = tokio::select! {
                biased;
                done = &mut search => Some(done),
                _ = std::future::ready(()) => None,
            };
            let _ = queued.send(());
            let done = match first {
                Some(done) => done,
                None => search.await,
            };
            Finished::Root(done)
        });
        let _ = is_queued.await;
    }
    for (index, &mv) in order.iter().enumerate() {
        let (children, game, cancel) = (children.clone(), game.clone(), cancel.clone());
        let prefix = prefix.to_vec();
        tasks.spawn(async move {
            let candidate = evaluate(&*children, game, &prefix, mv, settings, limit, cancel).await;
            Finished::Candidate(index, candidate)
        });
    }

    let mut finished: Vec<Option<Candidate>> = vec![None; order.len()];
    let mut root = None;
    let mut root_failure = None;
    let mut stats = Stats::default();
    let mut done = 0;
    let mut cancelled = false;
    // Searches that failed by a child's fault (each already tried twice by
    // the pool) and searches that answered: with BROKEN_AFTER faults and
    // no answer the children are broken, and the rest is not asked for.
    let (mut faults, mut answers) = (0, 0);
    // Cut short with nothing finished, the root's stopped search still names
    // a move worth more than the first candidate: wait a moment for it.
    let mut grace: Option<Instant> = None;
    loop {
        let next = tokio::select! {
            biased;
            _ = cancel.cancelled(), if !cancelled => {
                cancelled = true;
                let any = finished.iter().flatten().any(|c| c.value.is_some());
                if root.is_some() || any || root_limit.is_none() {
                    break;
                }
                grace = Some(Instant::now() + CANCEL_GRACE);
                continue;
            }
            _ = tokio::time::sleep_until(grace.unwrap_or_else(Instant::now).into()), if grace.is_some() => break,
            next = tasks.join_next() => next,
        };
        let Some(joined) = next else { break };
        match joined {
            Ok(Finished::Root(result)) => {
                match result {
                    Ok(report) => {
                        stats.add(&report);
                        root = Some(report);
                        answers += 1;
                    }
                    Err(e) => {
                        tracing::warn!("evaluator at the root failed: {e}");
                        if e.is_stall() {
                            cancel.cancel();
                        }
                        let failure = Failure::of(Role::Evaluator, &e);
                        faults += usize::from(failure.is_fault());
                        root_failure = Some(failure);
                    }
                }
                if grace.is_some() {
                    break;
                }
            }
            Ok(Finished::Candidate(index, candidate)) => {
                if let Some(Failure::Child { stalled: true, .. }) = candidate.failure {
                    cancel.cancel();
                }
                candidate.calls.iter().for_each(|r| stats.add(r));
                match &candidate.failure {
                    Some(f) if f.is_fault() => faults += 1,
                    None if candidate.value.is_some() => answers += 1,
                    _ => {}
                }
                done += 1;
                on_candidate(&candidate, done);
                finished[index] = Some(candidate);
            }
            Err(e) => tracing::error!("candidate task failed: {e}"),
        }
        if faults >= BROKEN_AFTER && answers == 0 && !cancel.is_cancelled() {
            tracing::warn!("{faults} searches failed and none answered: the rest is not asked for");
            cancel.cancel();
        }
    }
    // Waiters still pending are dropped here; the children are stopped through
    // `cancel` by whoever runs them.
    tasks.abort_all();

    let candidates: Vec<Candidate> = order
        .iter()
        .zip(finished)
        .map(|(&mv, c)| {
            c.unwrap_or_else(|| Candidate {
                failure: Some(Failure::Unfinished),
                ..Candidate::new(mv)
            })
        })
        .collect();
    Some(StepFound {
        candidates,
        root,
        root_failure,
        stats,
        first,
        cancelled,
    })
}
