//! The deeper steps of a multistep lookahead: the most promising
//! positions of each step expanded by a one-step pass of their own, the
//! best backed up.

use std::sync::Arc;

use mpcmc_protocol::GameMove;
use shakmaty::Position;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildLimit, Children, Game, Value,
    candidate::Candidate,
    decision::{Lookahead, Settings, Stats},
    lookahead::first::{StepFound, first_step},
};

/// What the deeper steps of a multistep lookahead did.
pub(crate) struct Deeper {
    /// Every call they made, the calls of a step cut short too.
    pub(crate) stats: Stats,
    /// Complete steps, the first included.
    pub(crate) steps: u32,
    /// A step was cut short (`cancel`, a stalled child), or not started
    /// because `cancel` had fired: the pass did not finish.
    pub(crate) cut: bool,
}

/// Steps 2 and deeper of a multistep lookahead, after a complete first
/// step: each step takes the `prune_width` most promising positions of
/// the step above (by the values already found, over the whole step),
/// and from each, after its move and predicted reply, runs a one-step
/// pass over every legal move there; all of a step's passes go out at
/// once. Their calls carry the whole line from the root, so the pool
/// sends them where the root move's subtree was searched. A move's value
/// is then the best of its next step, backed up (see
/// [`Candidate::next`]); moves not expanded keep their own, and so does
/// a position where a child failed on some move (the best of the rest is
/// no maximum). A step cut short (`cancel`, a stalled child: the step's
/// other passes are stopped with it) is dropped whole: an unfinished
/// step never replaces a finished one, and no later step starts.
pub(crate) async fn expand<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    candidates: &mut [Candidate],
    settings: Settings,
    limit: ChildLimit,
    cancel: &CancellationToken,
) -> Deeper {
    let mut stats = Stats::default();
    let mut steps = 1;
    let mut cut = false;
    // The paths (indices step by step) of the step above's positions.
    let mut above: Vec<Vec<usize>> = (0..candidates.len()).map(|i| vec![i]).collect();
    // A deeper step lists the moves of positions inside the lookahead:
    // only where mpcmc knows the rules (a game by a child's rules stops
    // at the first step).
    let deeper = game.position().is_some();
    while deeper && steps < settings.lookahead.steps() {
        if cancel.is_cancelled() {
            cut = true;
            break;
        }
        let chosen = most_promising(candidates, &above, settings.prune_width);
        if chosen.is_empty() {
            break;
        }
        // One token for the step: a pass cut short stops the others.
        let step_cancel = cancel.child_token();
        let mut tasks = JoinSet::new();
        for (job, path) in chosen.iter().enumerate() {
            let prefix = line_to(candidates, path);
            let moves: Vec<GameMove> = game.after(&prefix).map_or_else(Vec::new, |at| {
                at.legal_moves().into_iter().map(GameMove::Board).collect()
            });
            let (children, game, cancel) = (children.clone(), game.clone(), step_cancel.clone());
            tasks.spawn(async move {
                let found = first_step(
                    &children,
                    &game,
                    &prefix,
                    &moves,
                    limit,
                    None,
                    // Each expanded position gets a one-step pass.
                    Settings {
                        lookahead: Lookahead::One,
                        ..settings
                    },
                    &cancel,
                    &mut |_, _| {},
                )
                .await;
                (job, found)
            });
        }
        let mut found: Vec<Option<StepFound>> = (0..chosen.len()).map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok((job, found_one)) => {
                    if found_one.as_ref().is_none_or(|l| l.cancelled) {
                        step_cancel.cancel();
                    }
                    found[job] = found_one;
                }
                Err(e) => {
                    tracing::error!("a deeper step's pass failed: {e}");
                    step_cancel.cancel();
                }
            }
        }
        for (path, one) in chosen.iter().zip(&found) {
            if let Some(one) = one {
                stats.merge(&one.stats);
                // A root move's calls are all its lookahead's calls.
                let calls = one.candidates.iter().flat_map(|c| c.calls.iter().cloned());
                candidates[path[0]].calls.extend(calls);
            }
        }
        if step_cancel.is_cancelled() {
            cut = true;
            break;
        }
        for (path, one) in chosen.iter().zip(found) {
            if let Some(one) = one.filter(|l| l.candidates.iter().all(|c| c.value.is_some())) {
                node_mut(candidates, path).next = one.candidates;
            }
        }
        steps += 1;
        // The new step's positions: every move of every expanded one.
        above = chosen
            .iter()
            .flat_map(|path| {
                let moves = node(candidates, path).next.len();
                (0..moves).map(move |i| [path.as_slice(), &[i]].concat())
            })
            .collect();
    }
    candidates.iter_mut().for_each(back_up);
    Deeper { stats, steps, cut }
}

/// The candidate at `path` (indices step by step from the root's).
fn node<'a>(candidates: &'a [Candidate], path: &[usize]) -> &'a Candidate {
    let (&first, rest) = path.split_first().expect("a path names a candidate");
    rest.iter().fold(&candidates[first], |c, &i| &c.next[i])
}

/// [`node`], to attach a step to.
fn node_mut<'a>(candidates: &'a mut [Candidate], path: &[usize]) -> &'a mut Candidate {
    let (&first, rest) = path.split_first().expect("a path names a candidate");
    rest.iter()
        .fold(&mut candidates[first], |c, &i| &mut c.next[i])
}

/// The moves from the root to the position after the candidate at `path`
/// and its predicted reply.
fn line_to(candidates: &[Candidate], path: &[usize]) -> Vec<GameMove> {
    (1..=path.len())
        .flat_map(|n| {
            let c = node(candidates, &path[..n]);
            std::iter::once(c.mv).chain(c.reply)
        })
        .collect()
}

/// The `width` best valued positions among `paths` that a deeper step
/// can start from (a reply was predicted and the game goes on), best
/// first; equal values keep their order.
fn most_promising(candidates: &[Candidate], paths: &[Vec<usize>], width: usize) -> Vec<Vec<usize>> {
    let mut open: Vec<(Value, &Vec<usize>)> = paths
        .iter()
        .filter_map(|path| {
            let c = node(candidates, path);
            let expandable = c.reply.is_some() && c.terminal.is_none();
            Some((c.value.filter(|_| expandable)?, path))
        })
        .collect();
    open.sort_by_key(|(v, _)| std::cmp::Reverse(*v));
    open.into_iter()
        .take(width)
        .map(|(_, path)| path.clone())
        .collect()
}

/// Backs a candidate's next steps up into its value: the best of its
/// next step, two plies further from the root.
fn back_up(c: &mut Candidate) {
    c.next.iter_mut().for_each(back_up);
    if let Some(best) = c.best_next().and_then(|n| n.value) {
        c.shallow = c.value;
        c.value = Some(best.from_child(2));
    }
}
