//! One root move's lookahead line: the nominal opponent's reply and the
//! evaluator's score after it (or after our move alone, a half step).

use std::sync::Arc;

use mpcmc_protocol::{GameMove, game::Terminal};
use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildLimit, Children, Game, Query, Role, Value,
    candidate::{Candidate, Failure},
    decision::Settings,
};

/// The lookahead for one move `mv` at the position after `prefix` (the
/// root's moves: `prefix` is empty; a deeper step's: the moves to it).
/// Its value is for the side to move there.
pub(crate) async fn evaluate<C: Children>(
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
