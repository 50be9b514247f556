//! Half-step and one-step lookahead over every root move, with fortification.
//!
//! One pass: for every candidate `u` at the root `x`, one-step asks the nominal
//! opponent for `w = ν(x,u)` and the evaluator for `V(u) = E(x·u·w)` (we are to
//! move there; `ReplyWeight` mixes in ν's own score of `x·u`); half-step
//! scores `x·u` with the evaluator from the opponent's side. Finished games
//! are scored here, exactly, and never sent to a child. In parallel, the
//! evaluator searches the root itself: its move and value are the
//! fortification reference and the fallback when the lookahead cannot finish.
//! No candidate is pruned; the calls all go out at once and the [`Children`]
//! implementation bounds how many run together.

mod deeper;
pub(crate) mod first;
pub(crate) mod line;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use mpcmc_protocol::GameMove;
use tokio_util::sync::CancellationToken;

pub use first::{BROKEN_AFTER, sort_candidates};

use crate::mpc::{
    ChildLimit, Children, Extra, Game, Report,
    candidate::{Candidate, best_valued},
    decision::{Decision, Rule, Settings, Stats},
    fortify::{Verdict, fortify},
    level::{Choice, look::draw_and_look},
};
use deeper::expand;
use first::{finished_root, first_step};

/// Runs one pass over `candidates` (legal at the game's position, non-empty).
/// Returns when every call finished, or at once when `cancel` fires or a child
/// stalls (past a deadline proportional to what it was asked: asking on would
/// wait as long again), with what finished by then. `on_candidate` sees each
/// candidate as it finishes, with its rank of completion (1-based). The
/// evaluator's root search runs beside, under [`Settings::root_limit`].
/// Returns `None` only for an empty candidate list.
pub async fn decide<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    candidates: &[GameMove],
    limit: ChildLimit,
    settings: Settings,
    cancel: &CancellationToken,
    on_candidate: &mut (dyn FnMut(&Candidate, usize) + Send),
) -> Option<Decision> {
    pass(
        children,
        game,
        candidates,
        limit,
        Some(settings.root_limit(limit)),
        settings,
        cancel,
        on_candidate,
    )
    .await
}
/// [`decide`], with the evaluator's root search under `root`, or none
/// (the rounds run the root search apart). A multistep lookahead expands
/// its deeper steps once the first is complete ([`expand`]).
#[allow(clippy::too_many_arguments)]
pub async fn pass<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    candidates: &[GameMove],
    limit: ChildLimit,
    root_limit: Option<ChildLimit>,
    settings: Settings,
    cancel: &CancellationToken,
    on_candidate: &mut (dyn FnMut(&Candidate, usize) + Send),
) -> Option<Decision> {
    let mut found = first_step(
        children,
        game,
        &[],
        candidates,
        limit,
        root_limit,
        settings,
        cancel,
        on_candidate,
    )
    .await?;
    let mut steps = 1;
    if settings.lookahead.steps() > 1 && !found.cancelled {
        let deeper = expand(
            children,
            game,
            &mut found.candidates,
            settings,
            limit,
            cancel,
        )
        .await;
        found.stats.merge(&deeper.stats);
        steps = deeper.steps;
        // The pass did not finish: a round or pass that did wins over it.
        found.cancelled = deeper.cut;
    }
    // A level's pass cut short before every move was valued (the clock, a
    // stalled child) draws nothing: the moves valued are the ones the
    // children happened to take first, and a draw among a few of them
    // played pawn moves in a won game at 0.4 s left. The root search,
    // which weighed every move at the pass's budget, plays instead.
    let (drawn, looks) = match settings.level {
        Some(draw) if !found.cut_before_the_draw() => {
            draw_and_look(children, game, &mut found, draw, limit, settings, cancel).await
        }
        _ => (None, Vec::new()),
    };
    let mut decision = choose(
        found.candidates,
        found.root,
        settings,
        found.stats,
        found.first,
        found.cancelled,
        drawn,
    );
    decision.root_failure = found.root_failure;
    decision.steps = steps;
    decision.looks = looks;
    Some(decision)
}
/// Picks the move from the finished candidates and the root report.
fn choose(
    candidates: Vec<Candidate>,
    root: Option<Report>,
    settings: Settings,
    stats: Stats,
    first: GameMove,
    cancelled: bool,
    drawn: Option<Choice>,
) -> Decision {
    let best = best_valued(&candidates).and_then(|i| Some((i, candidates[i].value?)));
    let lookahead_choice = best.map(|(i, v)| (candidates[i].mv, v));
    let evaluator_choice = finished_root(root.as_ref(), &candidates);

    let (chosen, rule) = match (best, evaluator_choice) {
        _ if drawn.is_some() => (drawn.map(|c| c.index), Rule::Level),
        // A level that drew nothing (cut short before every move was
        // valued, or none was): the root search's move.
        (_, Some((m, _))) if settings.level.is_some() => (
            candidates.iter().position(|c| c.mv == m),
            Rule::EvaluatorFallback,
        ),
        // Both name the same move: the lookahead's, as in rounds.
        (Some((i, _)), Some((m, _))) if candidates[i].mv == m => (Some(i), Rule::Lookahead),
        (Some((i, v)), Some((m, s))) if settings.fortify => {
            match fortify(v, s, settings.fortify_margin) {
                Verdict::Lookahead => (Some(i), Rule::Lookahead),
                Verdict::Evaluator => (candidates.iter().position(|c| c.mv == m), Rule::Fortified),
            }
        }
        (Some((i, _)), _) => (Some(i), Rule::Lookahead),
        (None, _) => (None, Rule::EvaluatorFallback),
    };

    let mut decision = Decision {
        best: first,
        extra: Extra::default(),
        ponder: None,
        value: None,
        pv: vec![first],
        rule: Rule::NoAnswer,
        lookahead_choice,
        evaluator_choice,
        candidates,
        root,
        root_failure: None,
        stats,
        cancelled,
        spread: None,
        steps: 1,
        drawn,
        looks: Vec::new(),
    };
    let plies = settings.lookahead.plies();
    match chosen {
        Some(i) => {
            let mv = decision.candidates[i].mv;
            decision.play(mv, rule, plies);
        }
        // The root's move stands in only if its search completed an
        // iteration (it has a score): a search stopped before that names a
        // move it never looked at.
        None => {
            if let Some(mv) = decision.root_move() {
                decision.play(mv, Rule::EvaluatorFallback, plies);
            }
        }
    }
    decision
}
