//! How much search each child call gets.
//!
//! With a fixed per-call limit (`ChildNodes`, `ChildMoveTime`, `go depth`) a
//! decision is one pass and there is nothing to split. A node total (`go
//! nodes`) and a clock are spent in rounds ([`crate::mpc::rounds`]): a share
//! for the evaluator's own root search, the rest for the lookahead, whose
//! round 1 gives every root move a small budget — on a clock sized from the
//! children's measured speed and call cost; when that gets too small to be
//! worth a child round trip the lookahead is made shallower, down to asking
//! the evaluator alone.

use crate::mpc::{
    ChildLimit,
    decision::Settings,
    rounds::{ClockCell, RootCell, RoundPlan, first_round_nodes, rounds_for},
};

/// Share of a decision's budget for the evaluator's root search when it has
/// no worker of its own: a node total (`go nodes`), or with one worker
/// (`Threads / ChildThreads` < 2) `go searchmoves` on a clock or a move
/// time. Its move is played on almost
/// every move (149 of 150 at `go nodes 150000` over the built-in engine),
/// so the lookahead gets little: 0.9 against 0.75 scored 84 against 67
/// points of the same 200 games against the engine alone at equal nodes
/// (-56 ± 36 against -119 ± 39 Elo; the deep check then came on top of
/// the total).
pub const ROOT_SHARE: f64 = 0.9;

/// A node total (`go nodes N`) as rounds: [`ROOT_SHARE`] of it for the
/// evaluator's root search, the rest over rounds of halving that end with
/// two candidates. `moves` root moves are weighed; `branching` is the
/// legal moves at the root (the estimate for every position a deeper step
/// expands; more than `moves` under `go searchmoves`).
pub fn node_rounds(total: u64, settings: Settings, moves: usize, branching: usize) -> RoundPlan {
    let root = ((total as f64 * ROOT_SHARE) as u64).max(1);
    let rest = total.saturating_sub(root);
    rounds_over_nodes(root, rest, None, settings, (moves, branching))
}

/// `go nodes B` on `workers` virtual workers (`VirtualWorkers`): what
/// `workers` machines do in the wall time one spends on `B` nodes, each
/// worker's time counted in nodes (as Stockfish's `nodestime` counts one
/// engine's). The root search has a worker of its own for the whole
/// decision, `B` nodes; the rounds run on the other `workers - 1`, each
/// lane's budget `B`, a round costing what its busiest lane searched. It
/// ignores what a real pool pays besides nodes: latency, calls waiting on
/// each other within a round, a machine's own speed.
pub fn virtual_rounds(
    per_worker: u64,
    settings: Settings,
    moves: usize,
    branching: usize,
    workers: usize,
) -> RoundPlan {
    let lanes = workers.saturating_sub(1).max(1);
    let root = per_worker.max(1);
    rounds_over_nodes(root, per_worker, Some(lanes), settings, (moves, branching))
}

/// One even pass on virtual workers of `per_worker` nodes each, one for
/// every root move besides the root search's (`VirtualWorkers`, `go nodes
/// B`): the root search `B` nodes, each move's calls one after another on
/// a worker of its own, each a share of `B` ([`calls_a_move`]: half for a
/// one-step line's two calls, the paper's setting). The per-call limit,
/// then the root's.
pub fn virtual_pass(
    per_worker: u64,
    settings: Settings,
    moves: usize,
    branching: usize,
) -> (ChildLimit, ChildLimit) {
    let each = (per_worker / calls_a_move(settings, moves, branching)).max(1);
    (
        ChildLimit::Nodes(each),
        ChildLimit::Nodes(per_worker.max(1)),
    )
}

/// The calls of one root move's lines in `settings`' lookahead (2 for
/// one-step): an even pass, each move's calls on a worker of their own,
/// gives each call this share of the worker's budget.
pub(crate) fn calls_a_move(settings: Settings, moves: usize, branching: usize) -> u64 {
    let moves = moves.max(1);
    settings
        .lookahead
        .calls(moves, branching.max(moves), settings.prune_width)
        .div_ceil(moves as u64)
        .max(1)
}

/// A root search of `root` nodes and rounds of halving over `lookahead`
/// nodes (on `lanes`, each lane's: [`RoundPlan::lanes`]).
fn rounds_over_nodes(
    root: u64,
    lookahead: u64,
    lanes: Option<usize>,
    settings: Settings,
    (moves, branching): (usize, usize),
) -> RoundPlan {
    let rounds = rounds_for(moves);
    let first = first_round_nodes(lookahead, settings, moves, branching, rounds, lanes);
    RoundPlan {
        root: ChildLimit::Nodes(root),
        root_then: None,
        root_open: false,
        first: ChildLimit::Nodes(first),
        lookahead_nodes: Some(lookahead),
        lanes,
        max_rounds: rounds,
        anchor_hint: None,
        clock: ClockCell::default(),
        root_seen: RootCell::default(),
    }
}

/// Rounds until `stop` (`go infinite`, `go ponder`) over `moves` root moves
/// with two or more workers: the root search has one to itself until the
/// rounds end (a first search as large as round 1 names the anchor early,
/// a second goes on until the end); the rounds start from `first` nodes a
/// call and go on halving, then doubling on the last two. `clock` may be
/// set later (`ponderhit`). `branching` as in [`node_rounds`].
pub fn open_rounds(
    first: u64,
    settings: Settings,
    moves: usize,
    branching: usize,
    clock: ClockCell,
) -> RoundPlan {
    let moves = moves.max(1);
    let calls = settings
        .lookahead
        .calls(moves, branching.max(moves), settings.prune_width);
    let round_one = first.saturating_mul(calls);
    RoundPlan {
        root: ChildLimit::Nodes(round_one),
        root_then: Some(ChildLimit::Nodes(OPEN_ROOT_NODES)),
        root_open: true,
        first: ChildLimit::Nodes(first),
        lookahead_nodes: None,
        lanes: None,
        max_rounds: MAX_OPEN_ROUNDS,
        anchor_hint: None,
        clock,
        root_seen: RootCell::default(),
    }
}

/// An open root search's node limit: never reached, `stop` ends it.
const OPEN_ROOT_NODES: u64 = 1 << 40;

/// Rounds of an open decision (from 1000 nodes a call, 2^30 at the last).
const MAX_OPEN_ROUNDS: u32 = 31;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpc::Lookahead;

    #[test]
    fn a_node_total_keeps_most_for_the_root() {
        let plan = node_rounds(100_000, Settings::new(Lookahead::One), 20, 20);
        assert_eq!(plan.root, ChildLimit::Nodes(90_000));
        assert_eq!(plan.max_rounds, rounds_for(20));
        assert!(plan.clock.get().is_none() && plan.root_then.is_none() && !plan.root_open);
    }
}
