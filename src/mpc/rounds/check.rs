//! The deep check of a deviation from the root search's move.

use std::sync::Arc;

use mpcmc_protocol::GameMove;
use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildFault, ChildLimit, Children, Game, Query, Report, Role, Value,
    decision::{CheckVerdict, DeepCheck},
};

/// How far below the root search's value of its own move the deep check
/// may find a deviation and still let it be played, in centipawns: the
/// most a deviation may cost by the evaluator's own deeper judgement.
pub const CHECK_TOLERANCE: i32 = 20;

/// The outcome of [`check_deviation`].
pub(super) struct Check {
    /// The evaluator's search of the position after the deviation; `None`
    /// when that position is finished (scored exactly) or no search ran.
    pub(super) report: Option<Report>,
    /// The deviation's value for us by that search (or exactly).
    pub(super) value: Option<Value>,
    pub(super) verdict: CheckVerdict,
}

impl Check {
    fn unchecked(report: Option<Report>) -> Check {
        Check {
            report,
            value: None,
            verdict: CheckVerdict::Unchecked,
        }
    }

    fn judged(report: Option<Report>, value: Value, root: Value) -> Check {
        let verdict = if value >= root.plus_cp(-CHECK_TOLERANCE) {
            CheckVerdict::Passed
        } else {
            CheckVerdict::Refuted
        };
        Check {
            report,
            value: Some(value),
            verdict,
        }
    }

    pub(super) fn summary(&self) -> DeepCheck {
        DeepCheck {
            value: self.value,
            depth: self.report.as_ref().map_or(0, |r| r.depth),
            nodes: self.report.as_ref().map_or(0, |r| r.nodes),
            verdict: self.verdict,
        }
    }
}

/// The deep check of a deviation `b` from the root search's move: the
/// lookahead's calls are far smaller than the root search under a real
/// clock or a node total (thousands of nodes against hundreds of
/// thousands), and a small opponent search that misses the refutation makes
/// a move look better than it is. So before `b` is played, the evaluator
/// searches the position after `b` with half the nodes its root search
/// used — on `b` alone, more than the root search gave it — and `b` stands
/// only if that value is within [`CHECK_TOLERANCE`] of the root search's
/// value of its own move. Under a node total it gets no more than the
/// `left` of it. A check that cannot finish (`cancel`: `stop` or the
/// move's hard limit), that `left` cannot pay for ([`MIN_CHECK_NODES`]),
/// or whose child fails leaves the root search's move. `vb` is the lookahead's value of `b`: exact when `b` ends the game,
/// and then the check's.
pub(super) async fn check_deviation<C: Children>(
    children: &C,
    game: &Arc<Game>,
    (b, vb): (GameMove, Value),
    root: &Report,
    left: Option<u64>,
    cancel: &CancellationToken,
) -> Check {
    let Some(root_value) = root.score else {
        return Check::unchecked(None);
    };
    if game.terminal_after(&[b]).is_some() {
        return Check::judged(None, vb, root_value);
    }
    let nodes = (root.nodes / 2)
        .max(MIN_CHECK_NODES)
        .min(left.unwrap_or(u64::MAX));
    if cancel.is_cancelled() || nodes < MIN_CHECK_NODES {
        return Check::unchecked(None);
    }
    let query = Query {
        role: Role::Evaluator,
        game: game.clone(),
        line: vec![b],
        limit: ChildLimit::Nodes(nodes),
        progress: None,
        ponderhit: None,
    };
    match children.search(query, cancel.child_token()).await {
        Ok(report) if report.stopped => Check::unchecked(Some(report)),
        Ok(report) => match report.score {
            Some(score) => Check::judged(Some(report), (-score).from_child(1), root_value),
            None => Check::unchecked(Some(report)),
        },
        Err(e) => {
            if !e.is_cancelled() {
                tracing::warn!("deep check of a deviation failed: {e}");
            }
            Check::unchecked(None)
        }
    }
}

/// The smallest deep check, in nodes.
const MIN_CHECK_NODES: u64 = 256;
