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

use std::{sync::Arc, time::Instant};

use mpcmc_protocol::{GameMove, game::Terminal};
use shakmaty::Position;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildFault, ChildLimit, Children, Extra, Game, Query, Report, Role, Value,
    candidate::{Candidate, Failure, best_valued},
    decision::{Decision, Draw, Lookahead, Rule, Settings, Stats},
    fortify::{Verdict, fortify},
    level::{Choice, LOOK_NODES, Look, MAX_LOOKS, Rng},
    plausible::{Plausibility, plausibility},
    time::CANCEL_GRACE,
};

/// Searches of a level that may fail by a child's fault, with none
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
/// its deeper levels once the first is complete ([`expand`]).
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
    let mut level = first_level(
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
    let mut levels = 1;
    if settings.lookahead.levels() > 1 && !level.cancelled {
        let deeper = expand(
            children,
            game,
            &mut level.candidates,
            settings,
            limit,
            cancel,
        )
        .await;
        level.stats.merge(&deeper.stats);
        levels = deeper.levels;
        // The pass did not finish: a round or pass that did wins over it.
        level.cancelled = deeper.cut;
    }
    // A level's pass cut short before every move was valued (the clock, a
    // stalled child) draws nothing: the moves valued are the ones the
    // children happened to take first, and a draw among a few of them
    // played pawn moves in a won game at 0.4 s left. The root search,
    // which weighed every move at the pass's budget, plays instead.
    let (drawn, looks) = match settings.level {
        Some(draw) if !level.cut_before_the_draw() => {
            draw_and_look(children, game, &mut level, draw, limit, settings, cancel).await
        }
        _ => (None, Vec::new()),
    };
    let mut decision = choose(
        level.candidates,
        level.root,
        settings,
        level.stats,
        level.first,
        level.cancelled,
        drawn,
    );
    decision.root_failure = level.root_failure;
    decision.levels = levels;
    decision.looks = looks;
    Some(decision)
}

/// A level's draw among the valued candidates of `level` ([`Level::choose`]),
/// the drawn move given a second look first where the level has one
/// ([`Level::looks`]): its one-step line searched again at
/// [`LOOK_NODES`] times the calls' node budget, and where the level
/// compares ([`Level::compares`]) the best valued move's too, once (its
/// deeper value then stands for it). A look that refutes the move (its
/// value drops by the level's threshold, or falls short of the best's as
/// deep by the comparison's) replaces its value with the deeper one (its
/// calls join the move's) and the move is drawn again with the next
/// random number of the draw's sequence, the refuted move dismissed
/// ([`Plausibility::dismissed`]: drawn only where the position still asks
/// for it), at most [`MAX_LOOKS`] looks; each draw weighs every move's
/// plausibility at a glance ([`plausibility`]); a move already looked at,
/// a limit that is not a node budget, or a pass cut short (`cancel`: the
/// clock; a stalled child) play the move drawn;
/// in a game the last decision already found decided ([`Draw::decided`])
/// the pass's calls were the deep search, and no move is looked at. A
/// decided choice the pass found at the level's budget is looked at too:
/// a one-step value is the evaluator's after the *predicted* reply, and a
/// mate after a reply a small search predicted may be none (at 1400 over
/// Stockfish two gross blunders of 35 were such a mate at 150 nodes). A
/// look cut short refutes nothing.
async fn draw_and_look<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    level: &mut LevelFound,
    draw: Draw,
    limit: ChildLimit,
    settings: Settings,
    cancel: &CancellationToken,
) -> (Option<Choice>, Vec<Look>) {
    let pos = game.position();
    let last = game.moves().last().and_then(|m| m.board());
    // A child's token has no piece to judge: every such move is as plausible.
    let mut priors: Vec<Plausibility> = level
        .candidates
        .iter()
        .map(|c| match (pos, c.mv.board()) {
            (Some(pos), Some(m)) => plausibility(pos, last, m),
            _ => Plausibility::default(),
        })
        .collect();
    let mut choice = draw.level.choose(&level.candidates, &priors, draw.random);
    let mut looks: Vec<Look> = Vec::new();
    let look_limit = match (draw.level.looks(), limit) {
        (Some(_), ChildLimit::Nodes(n)) if !level.cancelled && !draw.decided => {
            ChildLimit::Nodes(n.saturating_mul(LOOK_NODES))
        }
        _ => return (choice, looks),
    };
    let mut randoms = Rng::new(draw.random);
    while let Some(c) = choice {
        let Some(shallow) = level.candidates[c.index].value.filter(|_| {
            looks.len() < MAX_LOOKS
                && !looks.iter().any(|l| l.index == c.index)
                && !cancel.is_cancelled()
        }) else {
            break;
        };
        let look = |mv| {
            evaluate(
                &**children,
                game.clone(),
                &[],
                mv,
                settings,
                look_limit,
                cancel.clone(),
            )
        };
        let deeper = look(level.candidates[c.index].mv).await;
        // The best as deep, searched once: a candidate whose value a look
        // replaced keeps the pass's as `shallow` (a level's pass is
        // one-step, so nothing else sets it).
        let against = match draw.level.compares() {
            Some(_) if c.index != c.best => {
                if level.candidates[c.best].shallow.is_none() {
                    let best = look(level.candidates[c.best].mv).await;
                    join_look(level, c.best, best, true);
                }
                let best = &level.candidates[c.best];
                best.shallow.and(best.value).map(|v| (c.best, v))
            }
            _ => None,
        };
        let refuted = deeper.value.is_some_and(|v| {
            draw.level.refutes(shallow, v)
                || against.is_some_and(|(_, best)| draw.level.falls_short(best, v))
        });
        looks.push(Look {
            index: c.index,
            shallow,
            deeper: deeper.value,
            against: against.filter(|_| deeper.value.is_some()),
            refuted,
            limit: look_limit,
        });
        join_look(level, c.index, deeper, refuted);
        if !refuted {
            break;
        }
        // Seen to lose: dismissed, unless the position still asks for it.
        priors[c.index].dismissed = true;
        choice = draw
            .level
            .choose(&level.candidates, &priors, randoms.next_u64());
    }
    (choice, looks)
}

/// A second look's `deeper` line for candidate `index`: its calls join the
/// candidate's (and the pass's stats); with `replace`, when it found a
/// value, that value replaces the pass's (kept as the candidate's
/// `shallow`).
fn join_look(level: &mut LevelFound, index: usize, mut deeper: Candidate, replace: bool) {
    deeper.calls.iter().for_each(|r| level.stats.add(r));
    let looked = &mut level.candidates[index];
    if !replace || deeper.value.is_none() {
        looked.calls.append(&mut deeper.calls);
        return;
    }
    deeper.calls = [std::mem::take(&mut looked.calls), deeper.calls].concat();
    deeper.shallow = looked.value;
    *looked = deeper;
}

/// What one level of a pass found.
struct LevelFound {
    /// In candidate order.
    candidates: Vec<Candidate>,
    root: Option<Report>,
    root_failure: Option<Failure>,
    stats: Stats,
    /// The first candidate in order (the move of last resort).
    first: GameMove,
    cancelled: bool,
}

impl LevelFound {
    /// Cut short before every candidate was valued, with the root search
    /// finished on one of them: what a level then plays instead of a draw
    /// over the few valued.
    fn cut_before_the_draw(&self) -> bool {
        self.cancelled
            && self.candidates.iter().any(|c| c.value.is_none())
            && finished_root(self.root.as_ref(), &self.candidates).is_some()
    }
}

/// The root search's move and value when it finished (not stopped, with a
/// score) on one of the `candidates` (it may not, under `go
/// searchmoves`): the reference fortification weighs, and a level's move
/// when its pass was cut short.
fn finished_root(root: Option<&Report>, candidates: &[Candidate]) -> Option<(GameMove, Value)> {
    root.filter(|r| !r.stopped)
        .and_then(|r| Some((r.best?, r.score?)))
        .filter(|(m, _)| candidates.iter().any(|c| c.mv == *m))
}

/// Every candidate's first level of lookahead (`settings.lookahead`'s
/// plies) at the position after `prefix`, and the evaluator's root search
/// under `root_limit`, all at once.
#[allow(clippy::too_many_arguments)]
async fn first_level<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    prefix: &[GameMove],
    candidates: &[GameMove],
    limit: ChildLimit,
    root_limit: Option<ChildLimit>,
    settings: Settings,
    cancel: &CancellationToken,
    on_candidate: &mut (dyn FnMut(&Candidate, usize) + Send),
) -> Option<LevelFound> {
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
    Some(LevelFound {
        candidates,
        root,
        root_failure,
        stats,
        first,
        cancelled,
    })
}

/// What the deeper levels of a multistep lookahead did.
struct Deeper {
    /// Every call they made, the calls of a level cut short too.
    stats: Stats,
    /// Complete levels, the first included.
    levels: u32,
    /// A level was cut short (`cancel`, a stalled child), or not started
    /// because `cancel` had fired: the pass did not finish.
    cut: bool,
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
async fn expand<C: Children>(
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

/// The lookahead for one move `mv` at the position after `prefix` (the
/// root's moves: `prefix` is empty; a deeper level's: the moves to it).
/// Its value is for the side to move there.
async fn evaluate<C: Children>(
    children: &C,
    game: Arc<Game>,
    prefix: &[GameMove],
    mv: GameMove,
    settings: Settings,
    limit: ChildLimit,
    cancel: CancellationToken,
) -> Candidate {
    let mut candidate = Candidate::new(mv);
    let mut line = [prefix, &[mv]].concat();
    candidate.repeats = game.repeats_after(&line);
    // After our move the opponent is to move: a finished game there is scored
    // from its side, one ply down.
    if let Some(t) = game.terminal_after(&line) {
        candidate.terminal = Some(t);
        candidate.value = Some((-Value::of(t)).from_child(1));
        return candidate;
    }
    let mut reply_exact = false;
    if settings.lookahead.plies() == 2 {
        let query = Query {
            role: Role::Opponent,
            game: game.clone(),
            line: line.clone(),
            limit: settings.opponent_limit(limit),
            progress: None,
            ponderhit: None,
        };
        match children.search(query, cancel.clone()).await {
            Ok(report) if report.stopped => {
                candidate.failure = Some(Failure::Stopped(Role::Opponent));
                candidate.calls.push(report);
                return candidate;
            }
            Ok(report) => {
                // No reply: the game ended after our move by a child's
                // rules, and its score says how.
                let Some(reply) = report.best else {
                    let t = Terminal::Variant(Value::end_of(report.score));
                    candidate.terminal = Some(t);
                    candidate.value = Some((-Value::of(t)).from_child(1));
                    candidate.calls.push(report);
                    return candidate;
                };
                candidate.reply = Some(reply);
                candidate.reply_value = report.score.map(|s| (-s).from_child(1));
                reply_exact = report.exact;
                line.push(reply);
                candidate.calls.push(report);
            }
            Err(e) => {
                candidate.failure = Some(Failure::of(Role::Opponent, &e));
                return candidate;
            }
        }
        if let Some(t) = game.terminal_after(&line) {
            candidate.terminal = Some(t);
            candidate.value = Some(Value::of(t).from_child(2));
            return candidate;
        }
    }
    let plies = (line.len() - prefix.len()) as u32;
    let query = Query {
        role: Role::Evaluator,
        game,
        line,
        limit,
        progress: None,
        ponderhit: None,
    };
    match children.search(query, cancel).await {
        Ok(report) if report.stopped || report.score.is_none() => {
            candidate.failure = Some(if report.stopped {
                Failure::Stopped(Role::Evaluator)
            } else {
                Failure::NoScore
            });
            candidate.calls.push(report);
        }
        Ok(report) => {
            let score = report.score.unwrap_or(Value::DRAW);
            // The evaluator scores from the side to move: us after one step,
            // the opponent after a half step.
            let ours = if plies.is_multiple_of(2) {
                score
            } else {
                -score
            };
            let evaluated = ours.from_child(plies);
            candidate.evaluated = Some(evaluated);
            // An exact value (the tables') is not mixed with an estimate:
            // an exact leaf is the line's value as it is, and an exact
            // reply's value is the leaf's anyway.
            let mixed = (!report.exact && !reply_exact).then_some(candidate.reply_value);
            candidate.value = Some(evaluated.toward(mixed.flatten(), settings.reply_weight));
            candidate.leaf = Some(report.clone());
            candidate.calls.push(report);
        }
        Err(e) => candidate.failure = Some(Failure::of(Role::Evaluator, &e)),
    }
    candidate
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
        levels: 1,
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

#[cfg(test)]
mod tests {
    //! The core against a scripted in-process child: exact values, sides and
    //! rules, no processes.
    use std::{collections::HashMap, time::Duration};

    use shakmaty::{CastlingMode, Position};

    use super::*;
    use crate::mpc::{
        Terminal,
        decision::Draw,
        level::{self, Level},
    };

    /// Replies and scores keyed by the UCI line from the game's position.
    #[derive(Default)]
    struct Scripted {
        replies: HashMap<String, &'static str>,
        scores: HashMap<String, i32>,
        root: Option<(&'static str, i32)>,
        /// The root search is stopped before its first iteration: a move, no
        /// score.
        root_unsearched: bool,
        fail: Vec<String>,
        stall: Vec<String>,
        /// Lines whose answer is exact (as the tables answer).
        exact: Vec<String>,
        /// The evaluator's scores of lines searched with more nodes than
        /// [`run`]'s 100 (a level's second look), where they differ.
        deep_scores: HashMap<String, i32>,
        /// Every query, in the order the children got them.
        asked: std::sync::Mutex<Vec<String>>,
        /// Every query's role and limit, in the same order.
        limits: std::sync::Mutex<Vec<(Role, ChildLimit)>>,
    }

    /// The decision's candidate for the root move `mv` (UCI).
    fn candidate<'a>(d: &'a Decision, mv: &str) -> &'a Candidate {
        d.candidates
            .iter()
            .find(|c| key(&[c.mv]) == mv)
            .unwrap_or_else(|| panic!("no candidate {mv}"))
    }

    fn key(line: &[GameMove]) -> String {
        line.iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn report(pos: &impl Position, best: &str, score: i32) -> Report {
        let best = best
            .parse::<shakmaty::uci::UciMove>()
            .expect("uci")
            .to_move(pos)
            .expect("scripted move is legal")
            .into();
        Report {
            best: Some(best),
            extra: Extra::default(),
            score: Some(Value::cp(score)),
            pv: vec![best],
            depth: 5,
            nodes: 100,
            search_time: Duration::from_millis(1),
            busy_time: Duration::from_millis(2),
            stopped: false,
            slot: None,
            exact: false,
        }
    }

    /// A scripted failure, a stall or not, and what it says.
    #[derive(Debug)]
    struct ScriptedFailure {
        stall: bool,
        message: String,
    }

    impl ScriptedFailure {
        fn fault(message: String) -> ScriptedFailure {
            ScriptedFailure {
                stall: false,
                message,
            }
        }
    }

    impl std::fmt::Display for ScriptedFailure {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.message)
        }
    }

    impl ChildFault for ScriptedFailure {
        fn is_stall(&self) -> bool {
            self.stall
        }
        fn is_cancelled(&self) -> bool {
            false
        }
    }

    impl Children for Scripted {
        type Error = ScriptedFailure;
        async fn search(
            &self,
            q: Query,
            _cancel: CancellationToken,
        ) -> Result<Report, ScriptedFailure> {
            let k = key(&q.line);
            if let Ok(mut asked) = self.asked.lock() {
                asked.push(k.clone());
            }
            if let Ok(mut limits) = self.limits.lock() {
                limits.push((q.role, q.limit));
            }
            let pos = q.position().expect("a board game");
            if self.fail.contains(&k) {
                return Err(ScriptedFailure::fault(format!("scripted failure at '{k}'")));
            }
            if self.stall.contains(&k) {
                // The first call to stall ends the pass; no other call must
                // be waited for.
                return Err(ScriptedFailure {
                    stall: true,
                    message: format!("scripted stall at '{k}'"),
                });
            }
            match q.role {
                Role::Opponent => {
                    let reply = self.replies.get(&k).copied().unwrap_or_else(|| {
                        // Any legal move, deterministically.
                        let mut moves: Vec<GameMove> =
                            pos.legal_moves().into_iter().map(GameMove::Board).collect();
                        sort_candidates(&mut moves);
                        Box::leak(moves[0].to_string().into_boxed_str())
                    });
                    // Its own score of the position, from its side.
                    let s = self.scores.get(&k).copied().unwrap_or(0);
                    Ok(report(&pos, reply, s))
                }
                Role::Evaluator if q.is_root() => {
                    if self.root_unsearched {
                        let first = pos.legal_moves()[0];
                        return Ok(Report {
                            score: None,
                            stopped: true,
                            depth: 0,
                            ..report(&pos, &first.to_string(), 0)
                        });
                    }
                    let (m, s) = self
                        .root
                        .ok_or_else(|| ScriptedFailure::fault("no root script".into()))?;
                    Ok(report(&pos, m, s))
                }
                Role::Evaluator => {
                    let deep = matches!(q.limit, ChildLimit::Nodes(n) if n > 100);
                    let s = (self.deep_scores.get(&k).filter(|_| deep))
                        .or(self.scores.get(&k))
                        .copied()
                        .unwrap_or(-500);
                    let mut moves: Vec<GameMove> =
                        pos.legal_moves().into_iter().map(GameMove::Board).collect();
                    sort_candidates(&mut moves);
                    let m = moves[0].to_string();
                    Ok(Report {
                        exact: self.exact.contains(&k),
                        ..report(&pos, &m, s)
                    })
                }
            }
        }
    }

    fn game(fen: &str) -> Arc<Game> {
        Arc::new(Game::from_fen(fen, CastlingMode::Standard).expect("test fen"))
    }

    fn moves(g: &Game, names: &[&str]) -> Vec<GameMove> {
        names
            .iter()
            .map(|n| g.read_after(&[], &n.parse().expect("uci")).expect("legal"))
            .collect()
    }

    async fn run(
        children: Scripted,
        g: &Arc<Game>,
        cands: &[GameMove],
        settings: Settings,
    ) -> Decision {
        let mut seen = Vec::new();
        let children = Arc::new(children);
        let d = decide(
            &children,
            g,
            cands,
            ChildLimit::Nodes(100),
            settings,
            &CancellationToken::new(),
            &mut |c, rank| seen.push((c.mv, rank)),
        )
        .await
        .expect("candidates");
        if !d.cancelled {
            assert_eq!(seen.len(), cands.len(), "every candidate reported once");
        }
        let asked = children.asked.lock().map(|a| a.clone()).unwrap_or_default();
        if g.terminal_now().is_none() {
            assert_eq!(
                asked.first().map(String::as_str),
                Some(""),
                "the root is asked first: {asked:?}"
            );
        }
        d
    }

    const ONE: Settings = Settings {
        fortify: false,
        ..Settings::new(Lookahead::One)
    };
    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[tokio::test]
    async fn one_step_plays_the_argmax_of_the_values_after_the_reply() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4", "g1f3"]);
        let mut c = Scripted::default();
        c.replies.insert("e2e4".into(), "e7e5");
        c.replies.insert("d2d4".into(), "d7d5");
        c.replies.insert("g1f3".into(), "g8f6");
        c.scores.insert("e2e4 e7e5".into(), 30);
        c.scores.insert("d2d4 d7d5".into(), 45);
        c.scores.insert("g1f3 g8f6".into(), 10);
        c.root = Some(("e2e4", 20));
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(key(&[d.best]), "d2d4");
        assert_eq!(key(&d.ponder.into_iter().collect::<Vec<_>>()), "d7d5");
        assert_eq!(d.value, Some(Value::cp(45)));
        assert_eq!(d.rule, Rule::Lookahead);
        assert_eq!(key(&d.pv[..2]), "d2d4 d7d5");
        // 3 candidates x 2 calls + the root call.
        assert_eq!(d.stats.calls, 7);
        assert_eq!(d.stats.nodes, 700);
    }

    #[tokio::test]
    async fn a_modelled_person_replies_at_their_levels_budget() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4", "g1f3"]);
        let c = Arc::new(Scripted {
            root: Some(("e2e4", 0)),
            ..Scripted::default()
        });
        let person = Level::new(crate::mpc::calibration::MIN_ELO);
        let settings = Settings {
            person: Some(person),
            ..ONE
        };
        let limit = ChildLimit::Nodes(100_000);
        decide(
            &c,
            &g,
            &cands,
            limit,
            settings,
            &CancellationToken::new(),
            &mut |_, _| {},
        )
        .await
        .expect("candidates");
        let limits = c.limits.lock().map(|l| l.clone()).unwrap_or_default();
        assert_eq!(limits.len(), 7, "{limits:?}");
        for (role, asked) in limits {
            let want = match role {
                Role::Opponent => ChildLimit::Nodes(person.call_nodes()),
                Role::Evaluator => limit,
            };
            assert_eq!(asked, want, "{role}");
        }
        // A smaller budget stands; a time or a depth becomes the person's.
        assert_eq!(
            settings.opponent_limit(ChildLimit::Nodes(100)),
            ChildLimit::Nodes(100)
        );
        assert_eq!(
            settings.opponent_limit(ChildLimit::MoveTime(Duration::from_secs(1))),
            ChildLimit::Nodes(person.call_nodes())
        );
        assert_eq!(ONE.opponent_limit(limit), limit);
    }

    /// e4, d4 and Nf3 from the start, answered symmetrically, valued
    /// `values` after the reply; the root search names `root`.
    fn three_moves(values: [i32; 3], root: (&'static str, i32)) -> Scripted {
        let mut c = Scripted::default();
        for ((mv, reply), value) in [("e2e4", "e7e5"), ("d2d4", "d7d5"), ("g1f3", "g8f6")]
            .into_iter()
            .zip(values)
        {
            c.replies.insert(mv.into(), reply);
            c.scores.insert(format!("{mv} {reply}"), value);
        }
        c.root = Some(root);
        c
    }

    /// One decision at `level` drawing with `random` over `children` (a
    /// pass at [`run`]'s 100 nodes a call), and how many calls the children
    /// got at a second look's 16 times that.
    async fn decide_at(
        children: Scripted,
        g: &Arc<Game>,
        cands: &[GameMove],
        level: Level,
        random: u64,
    ) -> (Decision, usize) {
        let children = Arc::new(children);
        let level = Some(Draw {
            level,
            random,
            decided: false,
        });
        let d = decide(
            &children,
            g,
            cands,
            ChildLimit::Nodes(100),
            Settings { level, ..ONE },
            &CancellationToken::new(),
            &mut |_, _| {},
        )
        .await
        .expect("candidates");
        let deep = ChildLimit::Nodes(100 * level::LOOK_NODES);
        let looked = children
            .limits
            .lock()
            .map_or(0, |l| l.iter().filter(|(_, l)| *l == deep).count());
        (d, looked)
    }

    #[tokio::test]
    async fn a_level_draws_the_move_from_the_values() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4", "g1f3"]);
        let script = || three_moves([30, 25, -400], ("g1f3", 500));
        let mut rng = level::Rng::new(1);
        let mut played = Vec::new();
        for _ in 0..20 {
            let settings = Settings {
                level: Some(Draw {
                    level: Level::new(crate::mpc::calibration::MIN_ELO),
                    random: rng.next_u64(),
                    decided: false,
                }),
                ..ONE
            };
            let d = run(script(), &g, &cands, settings).await;
            assert_eq!(d.rule, Rule::Level);
            let drawn = d.drawn.expect("a draw");
            assert_eq!(d.candidates[drawn.index].mv, d.best);
            assert_eq!(key(&[d.candidates[drawn.index].mv]), key(&[d.best]));
            assert_eq!(key(&[d.candidates[drawn.best].mv]), "e2e4");
            played.push(key(&[d.best]));
        }
        // Both close moves are drawn; the one losing a piece, though the
        // root search likes it, is not.
        assert!(played.iter().any(|m| m == "e2e4"), "{played:?}");
        assert!(played.iter().any(|m| m == "d2d4"), "{played:?}");
        assert!(played.iter().all(|m| m != "g1f3"), "{played:?}");
    }

    /// Over Stockfish at 2200 the level takes a second look at the drawn
    /// move (its own line alone): e4 looks best at the pass's nodes and
    /// loses a piece at 16 times them, so it is refuted whenever drawn and
    /// never played.
    #[tokio::test]
    async fn a_second_look_refutes_a_drawn_move_and_draws_again() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4", "g1f3"]);
        let script = || {
            let mut c = three_moves([40, 25, 20], ("e2e4", 40));
            c.deep_scores.insert("e2e4 e7e5".into(), -300);
            c
        };
        let at = |elo, calibration| Level::new(elo).over(calibration);
        let looking = at(2200, crate::mpc::calibration::Calibration::Stockfish);
        assert!(looking.looks().is_some() && looking.compares().is_none());
        let mut rng = level::Rng::new(5);
        let (mut played, mut refuted) = (Vec::new(), 0);
        for _ in 0..30 {
            let (d, looked) = decide_at(script(), &g, &cands, looking, rng.next_u64()).await;
            assert_eq!(d.rule, Rule::Level);
            let last = d.looks.last().expect("the drawn move looked at");
            assert!(!last.refuted, "{:?}", d.looks);
            assert_eq!(d.candidates[last.index].mv, d.best, "the move played");
            assert!(d.looks.len() <= level::MAX_LOOKS);
            for l in &d.looks[..d.looks.len() - 1] {
                // Only e4 is refuted, and its deeper value replaces its own.
                assert!(l.refuted, "{:?}", d.looks);
                let e4 = candidate(&d, "e2e4");
                assert_eq!(key(&[d.candidates[l.index].mv]), "e2e4");
                assert_eq!(
                    (l.shallow, l.deeper),
                    (Value::cp(40), Some(Value::cp(-300)))
                );
                assert_eq!(
                    (e4.shallow, e4.value),
                    (l.deeper.map(|_| l.shallow), l.deeper)
                );
                assert_eq!(e4.calls.len(), 4, "the pass's two calls and the look's");
                refuted += 1;
            }
            // The pass's 7 calls and the looks' 2 each, at 16 times the nodes.
            assert_eq!(d.stats.calls, 7 + 2 * d.looks.len() as u64);
            assert_eq!(looked, 2 * d.looks.len());
            played.push(key(&[d.best]));
        }
        assert!(refuted > 0, "e4 drawn and refuted at times: {played:?}");
        assert!(played.iter().all(|m| m != "e2e4"), "{played:?}");
        assert!(played.iter().any(|m| m == "d2d4"), "{played:?}");
        // Over the built-in engine the levels take no second look: the
        // shallow best is played at times.
        let plain = at(1800, crate::mpc::calibration::Calibration::Builtin);
        assert!(plain.looks().is_none());
        let mut plain_played = Vec::new();
        for _ in 0..30 {
            let level = Some(Draw {
                level: plain,
                random: rng.next_u64(),
                decided: false,
            });
            let d = run(script(), &g, &cands, Settings { level, ..ONE }).await;
            assert!(d.looks.is_empty());
            assert_eq!(d.stats.calls, 7);
            plain_played.push(key(&[d.best]));
        }
        assert!(plain_played.iter().any(|m| m == "e2e4"), "{plain_played:?}");
    }

    /// Over Stockfish at 1400 a second look also searches the best move as
    /// deep and measures the drawn move against it: d4, a slip at the
    /// pass's nodes (-60 against e4's 40) that drops by less than the
    /// look's own threshold (to -280) but falls more than a quarter of the
    /// win probability short of e4 as deep, is refuted whenever drawn; the
    /// best is searched deeper once a decision. At 2200 (no comparison)
    /// d4, a small slip (25) whose drop (to -150) is below the look's
    /// threshold, is refuted never and played at times.
    #[tokio::test]
    async fn a_second_look_measures_the_drawn_move_against_the_best_as_deep() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4", "g1f3"]);
        let script = |d4: i32, deep: i32| {
            let mut c = three_moves([40, d4, 20], ("e2e4", 40));
            c.deep_scores.insert("d2d4 d7d5".into(), deep);
            c
        };
        let at = |elo| Level::new(elo).over(crate::mpc::calibration::Calibration::Stockfish);
        let comparing = at(1400);
        assert!(comparing.compares().is_some() && comparing.look_lines() == 2);
        assert!(
            !comparing.refutes(Value::cp(-60), Value::cp(-280)),
            "d4's own drop is below the look's threshold"
        );
        let mut rng = level::Rng::new(11);
        let (mut played, mut refuted) = (Vec::new(), 0);
        for _ in 0..40 {
            let (d, looked) =
                decide_at(script(-60, -280), &g, &cands, comparing, rng.next_u64()).await;
            let last = d.looks.last().expect("the drawn move looked at");
            assert!(!last.refuted, "{:?}", d.looks);
            assert_eq!(d.candidates[last.index].mv, d.best, "the move played");
            let e4 = d.candidates.iter().position(|c| key(&[c.mv]) == "e2e4");
            for l in &d.looks {
                let compared = l.index != e4.expect("e4 a candidate");
                assert_eq!(
                    l.against,
                    e4.filter(|_| compared).map(|i| (i, Value::cp(40))),
                    "{:?}",
                    d.looks
                );
                let d4 = key(&[d.candidates[l.index].mv]) == "d2d4";
                assert_eq!(l.refuted, d4, "{:?}", d.looks);
                refuted += usize::from(d4);
            }
            // The best searched as deep once, when a move but the best was
            // drawn: its value is then the deeper one (the same here).
            let e4 = candidate(&d, "e2e4");
            let best_looked = d.looks.iter().any(|l| l.against.is_some());
            assert_eq!(e4.shallow.is_some(), best_looked, "{:?}", d.looks);
            let lines = d.looks.len() + usize::from(best_looked);
            assert_eq!(d.stats.calls, 7 + 2 * lines as u64);
            assert_eq!(looked, 2 * lines);
            played.push(key(&[d.best]));
        }
        assert!(refuted > 0, "d4 drawn and refuted at times: {played:?}");
        assert!(played.iter().all(|m| m != "d2d4"), "{played:?}");
        assert!(played.iter().any(|m| m == "g1f3"), "{played:?}");
        // At 2200 the look does not compare: d4's drop alone refutes
        // nothing, and only the drawn move is searched again.
        let own = at(2200);
        assert!(own.compares().is_none() && own.look_lines() == 1);
        let mut own_played = Vec::new();
        for _ in 0..40 {
            let level = Some(Draw {
                level: own,
                random: rng.next_u64(),
                decided: false,
            });
            let d = run(script(25, -150), &g, &cands, Settings { level, ..ONE }).await;
            assert!(d.looks.iter().all(|l| l.against.is_none() && !l.refuted));
            assert_eq!(d.stats.calls, 9);
            own_played.push(key(&[d.best]));
        }
        assert!(own_played.iter().any(|m| m == "d2d4"), "{own_played:?}");
    }

    /// A decided choice the pass found at the level's budget gets a second
    /// look: e4's +9 after the predicted reply is -1 searched deeper, so
    /// it is refuted and d4 (still decisive) is played. A game the last
    /// decision already found decided plays without a look, its best move
    /// or, once the game is no longer decided, the move drawn.
    #[tokio::test]
    async fn a_decided_choice_is_looked_at_once_but_a_decided_game_not() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let draw = |decided| {
            Some(Draw {
                level: Level::new(1800).over(crate::mpc::calibration::Calibration::Stockfish),
                random: 9,
                decided,
            })
        };
        let script = || {
            let mut c = Scripted::default();
            c.scores.insert("e2e4 e7e5".into(), 900);
            c.scores.insert("d2d4 d7d5".into(), 800);
            c.deep_scores.insert("e2e4 e7e5".into(), -100);
            c.replies.insert("e2e4".into(), "e7e5");
            c.replies.insert("d2d4".into(), "d7d5");
            c.root = Some(("e2e4", 900));
            c
        };
        let d = run(
            script(),
            &g,
            &cands,
            Settings {
                level: draw(false),
                ..ONE
            },
        )
        .await;
        assert!(d.drawn.is_some_and(|c| c.decided), "{:?}", d.drawn);
        assert_eq!(key(&[d.best]), "d2d4", "{:?}", d.looks);
        let looked: Vec<_> = d
            .looks
            .iter()
            .map(|l| (key(&[d.candidates[l.index].mv]), l.refuted))
            .collect();
        assert_eq!(
            looked,
            [("e2e4".to_string(), true), ("d2d4".to_string(), false)]
        );
        assert_eq!(candidate(&d, "e2e4").value, Some(Value::cp(-100)));
        let d = run(
            script(),
            &g,
            &cands,
            Settings {
                level: draw(true),
                ..ONE
            },
        )
        .await;
        assert!(d.drawn.is_some_and(|c| c.decided));
        assert_eq!(key(&[d.best]), "e2e4");
        assert!(d.looks.is_empty());
        // The game stops being decided: the move drawn from the pass's deep
        // calls is played unlooked, where a game not decided before looks.
        let even = || {
            let mut c = script();
            c.scores.insert("e2e4 e7e5".into(), 30);
            c.scores.insert("d2d4 d7d5".into(), 20);
            c
        };
        for (decided, looked) in [(true, false), (false, true)] {
            let level = draw(decided);
            let d = run(even(), &g, &cands, Settings { level, ..ONE }).await;
            assert!(d.drawn.is_some_and(|c| !c.decided), "{:?}", d.drawn);
            assert_eq!(!d.looks.is_empty(), looked, "{:?}", d.looks);
        }
    }

    /// A level's pass cut short before every move was valued plays the
    /// root search's move, not a draw among the few the children took
    /// first; with no finished root search, the draw over those, and a
    /// pass cut short looks at nothing (no time for it).
    #[tokio::test]
    async fn a_level_cut_short_plays_the_root_search_not_a_draw_of_the_few_valued() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let level = Some(Draw {
            level: Level::new(1400).over(crate::mpc::calibration::Calibration::Stockfish),
            random: 3,
            decided: false,
        });
        // e4 is asked after d4 (candidates go in UCI order): d4 is valued,
        // e4's reply stalls and cuts the pass short.
        let cut = |root_unsearched| Scripted {
            root: Some(("e2e4", 0)),
            root_unsearched,
            stall: vec!["e2e4".into()],
            ..Scripted::default()
        };
        let d = run(cut(false), &g, &cands, Settings { level, ..ONE }).await;
        assert!(d.cancelled);
        assert_eq!(key(&[d.best]), "e2e4", "the root search's move");
        assert_eq!(d.rule, Rule::EvaluatorFallback);
        assert!(d.drawn.is_none(), "{:?}", d.drawn);
        assert!(d.looks.is_empty(), "{:?}", d.looks);
        // A root search that did not finish leaves the draw over the valued.
        let d = run(cut(true), &g, &cands, Settings { level, ..ONE }).await;
        assert!(d.cancelled);
        assert_eq!(key(&[d.best]), "d2d4");
        assert_eq!(d.rule, Rule::Level);
        assert!(d.drawn.is_some());
        assert!(d.looks.is_empty(), "{:?}", d.looks);
    }

    #[tokio::test]
    async fn half_step_scores_from_the_opponents_side() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let mut c = Scripted::default();
        // The evaluator speaks for Black after our move: lower is better for us.
        c.scores.insert("e2e4".into(), -40);
        c.scores.insert("d2d4".into(), 15);
        c.root = Some(("d2d4", 0));
        let settings = Settings {
            lookahead: Lookahead::Half,
            ..ONE
        };
        let d = run(c, &g, &cands, settings).await;
        assert_eq!(key(&[d.best]), "e2e4");
        assert_eq!(d.value, Some(Value::cp(40)));
        assert_eq!(d.stats.calls, 3);
    }

    /// 1. e4 and 1. d4, the nominal opponent answering e5 and d5.
    fn e4_d4_script() -> Scripted {
        let mut c = Scripted::default();
        c.replies.insert("e2e4".into(), "e7e5");
        c.replies.insert("d2d4".into(), "d7d5");
        c
    }

    #[tokio::test]
    async fn fortification_keeps_the_evaluator_move_unless_beaten_by_the_margin() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let script = || {
            let mut c = e4_d4_script();
            c.scores.insert("e2e4 e7e5".into(), 20);
            c.scores.insert("d2d4 d7d5".into(), 50);
            c.root = Some(("e2e4", 40));
            c
        };
        let fortified = |margin| Settings {
            fortify: true,
            fortify_margin: margin,
            ..ONE
        };
        let d = run(script(), &g, &cands, fortified(0)).await;
        assert_eq!((key(&[d.best]), d.rule), ("d2d4".into(), Rule::Lookahead));
        let d = run(script(), &g, &cands, fortified(11)).await;
        assert_eq!((key(&[d.best]), d.rule), ("e2e4".into(), Rule::Fortified));
        // Kept by the root search: its value and line; the reply to
        // ponder on stays the nominal opponent's prediction.
        assert_eq!(d.value, Some(Value::cp(40)), "the root search's value");
        assert_eq!(key(&d.pv), "e2e4");
        assert_eq!(key(&d.ponder.into_iter().collect::<Vec<_>>()), "e7e5");
        assert_eq!(d.lookahead_choice.map(|(_, v)| v), Some(Value::cp(50)));
        assert_eq!(d.evaluator_choice.map(|(_, v)| v), Some(Value::cp(40)));
        // Both name d2d4: the lookahead's move, whatever the values.
        let mut agree = script();
        agree.root = Some(("d2d4", 90));
        let d = run(agree, &g, &cands, fortified(11)).await;
        assert_eq!((key(&[d.best]), d.rule), ("d2d4".into(), Rule::Lookahead));
        assert_eq!(d.value, Some(Value::cp(50)), "the lookahead's value");
    }

    #[tokio::test]
    async fn reply_weight_mixes_the_opponents_own_score_into_the_value() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let script = || {
            let mut c = e4_d4_script();
            // The nominal opponent's own scores, from Black's side: e4 is
            // worth 30 to us, d4 -15.
            c.scores.insert("e2e4".into(), -30);
            c.scores.insert("d2d4".into(), 15);
            c.scores.insert("e2e4 e7e5".into(), 30);
            c.scores.insert("d2d4 d7d5".into(), 45);
            c.root = Some(("e2e4", 20));
            c
        };
        let weighted = |reply_weight| Settings {
            reply_weight,
            ..ONE
        };
        let d = run(script(), &g, &cands, weighted(0)).await;
        assert_eq!(
            (key(&[d.best]), d.value),
            ("d2d4".into(), Some(Value::cp(45)))
        );
        let d = run(script(), &g, &cands, weighted(50)).await;
        assert_eq!(
            (key(&[d.best]), d.value),
            ("e2e4".into(), Some(Value::cp(30)))
        );
        let d4 = candidate(&d, "d2d4");
        assert_eq!(
            (d4.value, d4.evaluated, d4.reply_value),
            (
                Some(Value::cp(15)),
                Some(Value::cp(45)),
                Some(Value::cp(-15))
            ),
            "d4: (45 - 15) / 2"
        );
        let d = run(script(), &g, &cands, weighted(100)).await;
        assert_eq!(
            (key(&[d.best]), d.value),
            ("e2e4".into(), Some(Value::cp(30)))
        );
        let d4 = candidate(&d, "d2d4");
        assert_eq!(d4.value, Some(Value::cp(-15)), "all the reply's");
    }

    #[tokio::test]
    async fn an_exact_leaf_is_not_mixed_with_the_replys_estimate() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let mut c = e4_d4_script();
        c.scores.insert("d2d4".into(), 15);
        c.scores.insert("d2d4 d7d5".into(), 0);
        c.root = Some(("e2e4", 20));
        // The position after d4 d5 is an exact draw (the tables' 0).
        c.exact = vec!["d2d4 d7d5".into()];
        let settings = Settings {
            reply_weight: 50,
            ..ONE
        };
        let d = run(c, &g, &cands, settings).await;
        let d4 = candidate(&d, "d2d4");
        assert_eq!(
            (d4.value, d4.reply_value),
            (Some(Value::DRAW), Some(Value::cp(-15)))
        );
    }

    #[tokio::test]
    async fn reply_weight_mixes_at_every_level_of_a_two_step_lookahead() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let mut c = two_step_script();
        // After d4 d5 c4 the nominal opponent (Black) values its position
        // at -30: 30 for us, against the evaluator's 10 after dxc4.
        c.scores.insert("d2d4 d7d5 c2c4".into(), -30);
        let two = Settings {
            lookahead: Lookahead::Two,
            prune_width: 1,
            reply_weight: 50,
            ..ONE
        };
        let d = run(c, &g, &cands, two).await;
        let d4 = candidate(&d, "d2d4");
        // One step: (45 + 0) / 2, rounded; two steps: (10 + 30) / 2 after
        // c4, the best of a level whose other moves are (-500 + 0) / 2.
        assert_eq!(d4.shallow, Some(Value::cp(23)));
        assert_eq!(d4.value, Some(Value::cp(20)), "the next level's, mixed");
        assert_eq!(
            (key(&[d.best]), d.value),
            ("d2d4".into(), Some(Value::cp(20)))
        );
    }

    /// One-step prefers d4 (45 against 30); from d4 d5 every move of ours
    /// is worth at most 10 (c4 dxc4; the rest -500 by default).
    fn two_step_script() -> Scripted {
        let mut c = Scripted::default();
        c.replies.insert("e2e4".into(), "e7e5");
        c.replies.insert("d2d4".into(), "d7d5");
        c.scores.insert("e2e4 e7e5".into(), 30);
        c.scores.insert("d2d4 d7d5".into(), 45);
        c.replies.insert("d2d4 d7d5 c2c4".into(), "d5c4");
        c.scores.insert("d2d4 d7d5 c2c4 d5c4".into(), 10);
        c.root = Some(("e2e4", 20));
        c
    }

    #[tokio::test]
    async fn two_step_expands_the_most_promising_moves_and_backs_the_best_up() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let two = Settings {
            lookahead: Lookahead::Two,
            prune_width: 1,
            ..ONE
        };
        let children = Arc::new(two_step_script());
        let d = decide(
            &children,
            &g,
            &cands,
            ChildLimit::Nodes(100),
            two,
            &CancellationToken::new(),
            &mut |_, _| {},
        )
        .await
        .expect("candidates");
        let asked = children.asked.lock().map(|a| a.clone()).unwrap_or_default();
        // Only d4, the better at one step, is expanded: 27 moves after d4 d5.
        assert!(
            !asked.iter().any(|k| k.starts_with("e2e4 e7e5 ")),
            "{asked:?}"
        );
        assert_eq!(
            asked.iter().filter(|k| k.starts_with("d2d4 d7d5 ")).count(),
            54
        );
        assert_eq!(d.levels, 2);
        let d4 = candidate(&d, "d2d4");
        assert_eq!(d4.shallow, Some(Value::cp(45)));
        assert_eq!(d4.value, Some(Value::cp(10)), "the best of its next level");
        assert_eq!(key(&d4.line()[..4]), "d2d4 d7d5 c2c4 d5c4");
        assert_eq!(d4.calls.len(), 56, "its own two calls and its next level's");
        assert_eq!(d4.depth(2), Some(5 + 4));
        // e4 keeps its one-step value and wins.
        assert_eq!(
            (key(&[d.best]), d.value),
            ("e2e4".into(), Some(Value::cp(30)))
        );
        assert_eq!(d.stats.calls, 1 + 4 + 54);

        // Three steps: the best second-level position (c4 dxc4) is expanded too.
        let three = Settings {
            lookahead: Lookahead::Three,
            ..two
        };
        let mut script = two_step_script();
        script
            .replies
            .insert("d2d4 d7d5 c2c4 d5c4 e2e4".into(), "b7b5");
        script
            .scores
            .insert("d2d4 d7d5 c2c4 d5c4 e2e4 b7b5".into(), 60);
        let children = Arc::new(script);
        let d = decide(
            &children,
            &g,
            &cands,
            ChildLimit::Nodes(100),
            three,
            &CancellationToken::new(),
            &mut |_, _| {},
        )
        .await
        .expect("candidates");
        let asked = children.asked.lock().map(|a| a.clone()).unwrap_or_default();
        assert_eq!(d.levels, 3);
        let deepest = asked.iter().map(|k| k.split(' ').count()).max();
        assert_eq!(deepest, Some(6), "u w u' w' u'' w''");
        assert!(
            asked
                .iter()
                .filter(|k| k.split(' ').count() > 4)
                .all(|k| k.starts_with("d2d4 d7d5 c2c4 d5c4 ")),
            "only the best second-level position is expanded"
        );
        // 60 at the third level, backed up through c4 dxc4 (10 at one
        // step) to d4: now the best.
        let d4 = candidate(&d, "d2d4");
        let c4 = d4.best_next().expect("expanded");
        assert_eq!(
            (c4.shallow, c4.value),
            (Some(Value::cp(10)), Some(Value::cp(60)))
        );
        assert_eq!(d4.value, Some(Value::cp(60)));
        assert_eq!(key(&d4.line()[..6]), "d2d4 d7d5 c2c4 d5c4 e2e4 b7b5");
        assert_eq!(
            (key(&[d.best]), d.value),
            ("d2d4".into(), Some(Value::cp(60)))
        );
    }

    #[tokio::test]
    async fn a_position_where_a_child_failed_keeps_its_one_step_value() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let mut c = two_step_script();
        // A fault, not a stall: the level completes, but d4 d5 a3 has no
        // value, so the best of d4's next level is no maximum.
        c.fail.push("d2d4 d7d5 a2a3".into());
        let two = Settings {
            lookahead: Lookahead::Two,
            prune_width: 1,
            ..ONE
        };
        let d = run(c, &g, &cands, two).await;
        assert_eq!((d.levels, d.cancelled), (2, false));
        let d4 = candidate(&d, "d2d4");
        assert!(d4.next.is_empty() && d4.shallow.is_none());
        assert_eq!(
            (key(&[d.best]), d.value),
            ("d2d4".into(), Some(Value::cp(45)))
        );
    }

    #[tokio::test]
    async fn a_deeper_level_cut_short_leaves_the_level_above() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let mut c = two_step_script();
        c.stall.push("d2d4 d7d5 c2c4".into());
        let two = Settings {
            lookahead: Lookahead::Two,
            ..ONE
        };
        let d = run(c, &g, &cands, two).await;
        assert_eq!(d.levels, 1);
        assert!(d.cancelled, "the pass did not finish");
        assert_eq!(
            (key(&[d.best]), d.value),
            ("d2d4".into(), Some(Value::cp(45)))
        );
        assert!(
            d.candidates
                .iter()
                .all(|c| c.next.is_empty() && c.shallow.is_none())
        );
        assert_eq!(key(&d.pv), "d2d4 d7d5 a2a3", "the one-step line");
    }

    #[tokio::test]
    async fn finished_games_are_decided_without_children() {
        // White mates with Ra8#; Rb1 would stalemate nothing, just a move.
        let g = game("7k/8/6K1/8/8/8/8/R7 w - - 0 1");
        let cands = moves(&g, &["a1a8", "a1b1"]);
        let mut c = Scripted::default();
        c.fail.push("a1a8".into()); // a child asked about the mate would fail the test
        c.replies.insert("a1b1".into(), "h8g8");
        c.scores.insert("a1b1 h8g8".into(), 900);
        c.root = Some(("a1b1", 900));
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(key(&[d.best]), "a1a8");
        assert_eq!(
            d.value.map(|v| v.to_uci().kind),
            Some(mpcmc_protocol::ScoreKind::Mate(1))
        );
        assert_eq!(d.candidates[0].terminal, Some(Terminal::Checkmate));

        // Stalemating the opponent is a draw, worse than a won position.
        let g = game("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1");
        let cands = moves(&g, &["g1g6", "g1g2"]);
        let mut c = Scripted::default();
        c.fail.push("g1g6".into());
        c.replies.insert("g1g2".into(), "h8h7");
        c.scores.insert("g1g2 h8h7".into(), 1500);
        c.root = Some(("g1g2", 1500));
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(key(&[d.best]), "g1g2");
        assert_eq!(
            d.candidates
                .iter()
                .find(|c| key(&[c.mv]) == "g1g6")
                .and_then(|c| c.terminal),
            Some(Terminal::Stalemate)
        );
    }

    #[tokio::test]
    async fn failures_fall_back_to_a_legal_move() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let c = Scripted {
            fail: vec!["e2e4".into(), "d2d4".into()],
            root: Some(("d2d4", 10)),
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(
            (key(&[d.best]), d.rule),
            ("d2d4".into(), Rule::EvaluatorFallback)
        );
        assert!(d.candidates.iter().all(|c| c.failure.is_some()));

        let c = Scripted {
            fail: vec!["e2e4".into(), "d2d4".into()],
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!((key(&[d.best]), d.rule), ("d2d4".into(), Rule::NoAnswer));

        // A root search stopped before its first iteration is no answer.
        let c = Scripted {
            fail: vec!["e2e4".into(), "d2d4".into()],
            root_unsearched: true,
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(d.rule, Rule::NoAnswer);
    }

    #[tokio::test]
    async fn a_stalled_child_ends_the_pass_with_what_finished() {
        let g = game(START);
        let cands = moves(&g, &["e2e4", "d2d4"]);
        let c = Scripted {
            stall: vec!["d2d4".into()],
            root: Some(("e2e4", 10)),
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert!(d.cancelled, "a stall cuts the pass");
        let stalled = d.candidates.iter().find(|c| key(&[c.mv]) == "d2d4");
        assert!(
            matches!(
                stalled.and_then(|c| c.failure.clone()),
                Some(Failure::Child {
                    role: Role::Opponent,
                    stalled: true,
                    ..
                })
            ),
            "{stalled:?}"
        );
        assert!(
            stalled
                .and_then(|c| c.failure.as_ref())
                .is_some_and(Failure::is_fault)
        );
        // The root stalling leaves nothing to wait for either.
        let c = Scripted {
            stall: vec!["".into()],
            ..Default::default()
        };
        let d = run(c, &g, &cands, ONE).await;
        assert!(d.cancelled);
        assert!(matches!(
            d.root_failure,
            Some(Failure::Child { stalled: true, .. })
        ));
    }

    #[tokio::test]
    async fn ties_break_by_candidate_order() {
        let g = game(START);
        let cands = moves(&g, &["g1f3", "e2e4", "b1c3"]);
        let mut c = Scripted::default();
        for (m, r) in [("g1f3", "g8f6"), ("e2e4", "e7e5"), ("b1c3", "b8c6")] {
            c.replies.insert(m.into(), r);
            c.scores.insert(format!("{m} {r}"), 25);
        }
        c.root = Some(("e2e4", 0));
        let d = run(c, &g, &cands, ONE).await;
        assert_eq!(key(&[d.best]), "b1c3");
    }
}
