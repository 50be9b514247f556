//! The deeper levels of a multistep lookahead: the most promising
//! positions of each level expanded by a one-step pass of their own, the
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
    lookahead::first::{LevelFound, first_level},
};

/// What the deeper levels of a multistep lookahead did.
pub(crate) struct Deeper {
    /// Every call they made, the calls of a level cut short too.
    pub(crate) stats: Stats,
    /// Complete levels, the first included.
    pub(crate) levels: u32,
    /// A level was cut short (`cancel`, a stalled child), or not started
    /// because `cancel` had fired: the pass did not finish.
    pub(crate) cut: bool,
}

/// Levels 2 and deeper of a multistep lookahead, after a complete first
/// level: each level takes the `prune_width` most promising positions of
/// the level above (by the values already found, over the whole level),
/// and from each, after its move and predicted reply, runs a one-step
/// pass over every legal move there; all of a level's passes go out at
/// once. Their calls carry the whole line from the root, so the pool
/// sends them where the root move's subtree was searched. A move's value
/// is then the best of its next level, backed up (see
/// [`Candidate::next`]); moves not expanded keep their own, and so does
/// a position where a child failed on some move (the best of the rest is
/// no maximum). A level cut short (`cancel`, a stalled child: the level's
/// other passes are stopped with it) is dropped whole: an unfinished
/// level never replaces a finished one, and no later level starts.
pub(crate) async fn expand<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    candidates: &mut [Candidate],
    settings: Settings,
    limit: ChildLimit,
    cancel: &CancellationToken,
) -> Deeper {
    let mut stats = Stats::default();
    let mut levels = 1;
    let mut cut = false;
    // The paths (indices level by level) of the level above's positions.
    let mut above: Vec<Vec<usize>> = (0..candidates.len()).map(|i| vec![i]).collect();
    // A deeper level lists the moves of positions inside the lookahead:
    // only where mpcmc knows the rules (a game by a child's rules stops
    // at the first level).
    let deeper = game.position().is_some();
    while deeper && levels < settings.lookahead.levels() {
        if cancel.is_cancelled() {
            cut = true;
            break;
        }
        let chosen = most_promising(candidates, &above, settings.prune_width);
        if chosen.is_empty() {
            break;
        }
        // One token for the level: a pass cut short stops the others.
        let level_cancel = cancel.child_token();
        let mut tasks = JoinSet::new();
        for (job, path) in chosen.iter().enumerate() {
            let prefix = line_to(candidates, path);
            let moves: Vec<GameMove> = game.after(&prefix).map_or_else(Vec::new, |at| {
                at.legal_moves().into_iter().map(GameMove::Board).collect()
            });
            let (children, game, cancel) = (children.clone(), game.clone(), level_cancel.clone());
            tasks.spawn(async move {
                let level = first_level(
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
                (job, level)
            });
        }
        let mut found: Vec<Option<LevelFound>> = (0..chosen.len()).map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok((job, level)) => {
                    if level.as_ref().is_none_or(|l| l.cancelled) {
                        level_cancel.cancel();
                    }
                    found[job] = level;
                }
                Err(e) => {
                    tracing::error!("a deeper level's pass failed: {e}");
                    level_cancel.cancel();
                }
            }
        }
        for (path, level) in chosen.iter().zip(&found) {
            if let Some(level) = level {
                stats.merge(&level.stats);
                // A root move's calls are all its lookahead's calls.
                let calls = level
                    .candidates
                    .iter()
                    .flat_map(|c| c.calls.iter().cloned());
                candidates[path[0]].calls.extend(calls);
            }
        }
        if level_cancel.is_cancelled() {
            cut = true;
            break;
        }
        for (path, level) in chosen.iter().zip(found) {
            if let Some(level) = level.filter(|l| l.candidates.iter().all(|c| c.value.is_some())) {
                node_mut(candidates, path).next = level.candidates;
            }
        }
        levels += 1;
        // The new level's positions: every move of every expanded one.
        above = chosen
            .iter()
            .flat_map(|path| {
                let moves = node(candidates, path).next.len();
                (0..moves).map(move |i| [path.as_slice(), &[i]].concat())
            })
            .collect();
    }
    candidates.iter_mut().for_each(back_up);
    Deeper { stats, levels, cut }
}

/// The candidate at `path` (indices level by level from the root's).
fn node<'a>(candidates: &'a [Candidate], path: &[usize]) -> &'a Candidate {
    let (&first, rest) = path.split_first().expect("a path names a candidate");
    rest.iter().fold(&candidates[first], |c, &i| &c.next[i])
}

/// [`node`], to attach a level to.
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

/// The `width` best valued positions among `paths` that a deeper level
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

/// Backs a candidate's next levels up into its value: the best of its
/// next level, two plies further from the root.
fn back_up(c: &mut Candidate) {
    c.next.iter_mut().for_each(back_up);
    if let Some(best) = c.best_next().and_then(|n| n.value) {
        c.shallow = c.value;
        c.value = Some(best.from_child(2));
    }
}
