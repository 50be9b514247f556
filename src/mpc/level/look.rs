//! A level's second look: the drawn move's line searched again deeper
//! before it is played, and the move drawn again when the look refutes it.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildLimit, Children, Game,
    candidate::Candidate,
    decision::{Draw, Settings},
    level::{Choice, LOOK_NODES, Look, MAX_LOOKS, Rng},
    lookahead::{first::StepFound, line::evaluate},
    plausible::{Plausibility, plausibility},
};

/// A level's draw among the valued candidates of `found` ([`Level::choose`]),
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
pub(crate) async fn draw_and_look<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    found: &mut StepFound,
    draw: Draw,
    limit: ChildLimit,
    settings: Settings,
    cancel: &CancellationToken,
) -> (Option<Choice>, Vec<Look>) {
    let pos = game.position();
    let last = game.moves().last().and_then(|m| m.board());
    // A child's token has no piece to judge: every such move is as plausible.
    let mut priors: Vec<Plausibility> = found
        .candidates
        .iter()
        .map(|c| match (pos, c.mv.board()) {
            (Some(pos), Some(m)) => plausibility(pos, last, m),
            _ => Plausibility::default(),
        })
        .collect();
    let mut choice = draw.level.choose(&found.candidates, &priors, draw.random);
    let mut looks: Vec<Look> = Vec::new();
    let look_limit = match (draw.level.looks(), limit) {
        (Some(_), ChildLimit::Nodes(n)) if !found.cancelled && !draw.decided => {
            ChildLimit::Nodes(n.saturating_mul(LOOK_NODES))
        }
        _ => return (choice, looks),
    };
    let mut randoms = Rng::new(draw.random);
    while let Some(c) = choice {
        let Some(shallow) = found.candidates[c.index].value.filter(|_| {
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
        let deeper = look(found.candidates[c.index].mv).await;
        // The best as deep, searched once: a candidate whose value a look
        // replaced keeps the pass's as `shallow` (a level's pass is
        // one-step, so nothing else sets it).
        let against = match draw.level.compares() {
            Some(_) if c.index != c.best => {
                if found.candidates[c.best].shallow.is_none() {
                    let best = look(found.candidates[c.best].mv).await;
                    join_look(found, c.best, best, true);
                }
                let best = &found.candidates[c.best];
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
        join_look(found, c.index, deeper, refuted);
        if !refuted {
            break;
        }
        // Seen to lose: dismissed, unless the position still asks for it.
        priors[c.index].dismissed = true;
        choice = draw
            .level
            .choose(&found.candidates, &priors, randoms.next_u64());
    }
    (choice, looks)
}
/// A second look's `deeper` line for candidate `index`: its calls join the
/// candidate's (and the pass's stats); with `replace`, when it found a
/// value, that value replaces the pass's (kept as the candidate's
/// `shallow`).
fn join_look(found: &mut StepFound, index: usize, mut deeper: Candidate, replace: bool) {
    deeper.calls.iter().for_each(|r| found.stats.add(r));
    let looked = &mut found.candidates[index];
    if !replace || deeper.value.is_none() {
        looked.calls.append(&mut deeper.calls);
        return;
    }
    deeper.calls = [std::mem::take(&mut looked.calls), deeper.calls].concat();
    deeper.shallow = looked.value;
    *looked = deeper;
}
