//! A decision in rounds: the evaluator's own root search as the anchor,
//! sequential halving over the root moves as the challenge.
//!
//! The evaluator's warm search of the root is the strongest single thing a
//! decision has, so it runs apart, with its own share of the budget (on its
//! own worker when there are two or more), and its move `a` is what mpcmc
//! plays unless the lookahead proves a better one. Round 1 gives every
//! candidate its exact one-step lookahead (ν, then E) at a small budget —
//! nothing at the first step is pruned. Each later round re-runs ν and E for
//! the better half of the previous round's candidates at twice the budget
//! (the predicted reply may change), with `a` among them as soon as the root
//! search names it. Every round costs about as much as the first, and most of
//! the compute goes to the contenders (Karnin, Koren and Somekh 2013; the root
//! allocation of Gumbel MuZero). Warm children make a re-search a deepening,
//! not a restart: the pool sends a position back to the child that searched
//! it.
//!
//! The move: the last complete round's best `b` is played instead of `a` only
//! when, in that round — the same budget, the same kind of search — `V(b)`
//! beats `V(a)` by a margin that reflects how noisy searches of that size are
//! ([`Noise`], measured as the decision goes, from how a pair's difference
//! moves from one round to the next); otherwise `a`. Under a clock the rounds
//! go on while time is left: less of it when the choice is settled, more when
//! the lookahead's best and the anchor are close.

use std::sync::{Arc, Mutex};

use mpcmc_protocol::GameMove;

use crate::mpc::{
    ChildLimit, Game, Report,
    candidate::Candidate,
    decision::{Decision, Settings},
    time::rounds::RoundClock,
};

mod check;
mod decide;
#[cfg(test)]
mod tests;

pub use check::CHECK_TOLERANCE;
pub use decide::Rounds;

/// How wide the positions a deeper step expands are, estimated: the legal
/// moves at the root (more than the `candidates` under `go searchmoves`).
pub fn branching(game: &Game, candidates: usize) -> usize {
    game.legal_moves().len().max(candidates)
}

/// The rounds a decision over `moves` candidates takes to halve down to
/// two: 1 for a single move, 6 for 35.
pub fn rounds_for(moves: usize) -> u32 {
    round_sizes(moves, u32::MAX).len() as u32
}

/// How many candidates each round searches, halving down to two (a single
/// move gets one round).
fn round_sizes(moves: usize, max_rounds: u32) -> Vec<usize> {
    let mut sizes = vec![moves.max(1)];
    while sizes.len() < max_rounds as usize {
        let last = sizes[sizes.len() - 1];
        if last <= 2 {
            break;
        }
        sizes.push(next_size(last));
    }
    sizes
}

/// The survivors of a round of `n` candidates: the better half, at least two.
fn next_size(n: usize) -> usize {
    n.div_ceil(2).max(2).min(n)
}

/// Round 1's per-call nodes when `total` lookahead nodes are spent in
/// `rounds` rounds of sequential halving over `moves` root moves: round `r`
/// re-searches its candidates, and from round 2 the anchor with them (it
/// usually is one of them when it is not), at `2^(r-1)` times round 1's
/// budget. A multistep lookahead's deeper steps count too, with
/// `branching` legal moves at every position they expand. On `lanes`
/// virtual workers ([`RoundPlan::lanes`]) `total` is each lane's, and a
/// round costs its waves: the candidates a lane searches one after the
/// other (all of a candidate's calls on one lane, as the pool places
/// them).
pub fn first_round_nodes(
    total: u64,
    settings: Settings,
    moves: usize,
    branching: usize,
    rounds: u32,
    lanes: Option<usize>,
) -> u64 {
    let units: u64 = round_sizes(moves, rounds)
        .iter()
        .enumerate()
        .map(|(r, &alive)| {
            let searched = if r == 0 { alive } else { alive + 1 };
            let calls = settings
                .lookahead
                .calls(searched, branching, settings.prune_width);
            let calls = match lanes {
                Some(lanes) => {
                    let waves = searched.div_ceil(lanes.max(1)) as u64;
                    waves * calls.div_ceil(searched as u64)
                }
                None => calls,
            };
            calls * (1u64 << r.min(40))
        })
        .sum();
    (total / units.max(1)).max(1)
}

/// The nodes the busiest of `lanes` virtual workers searched in a round
/// whose candidates each cost `costs` (all of a candidate's calls on one
/// lane): dealt longest first, each to the least loaded lane. A real pool
/// deals them as workers come free, in arrival order; a round's calls
/// share one budget, so the two come out alike.
pub fn busiest_lane(costs: impl IntoIterator<Item = u64>, lanes: usize) -> u64 {
    let mut costs: Vec<u64> = costs.into_iter().collect();
    costs.sort_unstable_by(|a, b| b.cmp(a));
    let mut load = vec![0u64; lanes.max(1)];
    for cost in costs {
        if let Some(least) = load.iter_mut().min() {
            *least += cost;
        }
    }
    load.into_iter().max().unwrap_or(0)
}

/// How a decision in rounds spends its budget.
#[derive(Debug, Clone)]
pub struct RoundPlan {
    /// The evaluator's root search (the anchor).
    pub root: ChildLimit,
    /// A second root search after the first (warm: a deepening): it keeps a
    /// worker on the root for the whole decision while the first names the
    /// anchor early.
    pub root_then: Option<ChildLimit>,
    /// The last root search is stopped when the rounds end (it is meant to
    /// run as long as they do); otherwise it runs to its limit.
    pub root_open: bool,
    /// Round 1's per-call limit, doubled each round.
    pub first: ChildLimit,
    /// With a node total: the lookahead's share of it. Each later round's
    /// per-call budget is then what is left spread over the rounds left, so
    /// that small searches that overshoot their limit (a child always ends
    /// its first iteration) do not overspend the total.
    pub lookahead_nodes: Option<u64>,
    /// Virtual workers the lookahead runs on (`VirtualWorkers` less the
    /// root search's): `lookahead_nodes` is then each one's budget, and a
    /// round costs what its busiest one searched ([`busiest_lane`]), as if
    /// every lane were a machine of its own whose time is counted in
    /// nodes. `None`: the budget is the sum of every call's nodes.
    pub lanes: Option<usize>,
    pub max_rounds: u32,
    /// The evaluator's move here as an earlier decision found it (its leaf
    /// search of this very position, when the game went as predicted): the
    /// anchor until the root search names one.
    pub anchor_hint: Option<GameMove>,
    /// Under a clock, when to stop starting rounds; read after every round,
    /// so a clock that starts later (`ponderhit`) counts from then.
    pub clock: ClockCell,
    /// Where the root search leaves each report with a score as it comes.
    pub root_seen: RootCell,
}

/// A value that one side sets while the rounds run and another reads.
#[derive(Debug)]
pub struct Shared<T>(Arc<Mutex<Option<T>>>);

// Derived, these would ask `T: Clone`/`T: Default` of the cell itself.
impl<T> Clone for Shared<T> {
    fn clone(&self) -> Shared<T> {
        Shared(self.0.clone())
    }
}

impl<T> Default for Shared<T> {
    fn default() -> Shared<T> {
        Shared(Arc::default())
    }
}

impl<T: Clone> Shared<T> {
    pub fn new(value: Option<T>) -> Shared<T> {
        Shared(Arc::new(Mutex::new(value)))
    }

    pub fn set(&self, value: T) {
        if let Ok(mut c) = self.0.lock() {
            *c = Some(value);
        }
    }

    pub fn get(&self) -> Option<T> {
        self.0.lock().ok().and_then(|c| c.clone())
    }
}

/// A [`RoundClock`] that may be set while the rounds run (`ponderhit`).
pub type ClockCell = Shared<RoundClock>;

/// The root search's latest report with a score, as soon as it has one:
/// the caller's move when it gives up on rounds that do not end (a child
/// that answers no `stop`) before any of them completed.
pub type RootCell = Shared<Report>;

/// A round's outcome, as [`Rounds::decide`] reports it.
pub struct Round<'a> {
    /// 1-based.
    pub number: u32,
    pub limit: ChildLimit,
    /// The round's decision (over the round's candidates only).
    pub decision: &'a Decision,
    /// All its calls finished; a round cut short (by the clock, `stop`, the
    /// root search's answer) is the last, and only its finished candidates
    /// have values.
    pub complete: bool,
}

/// The better half (rounded up, at least two) of a round's candidates by
/// value, in candidate order; candidates without a value go last.
fn survivors(candidates: &[Candidate]) -> Vec<GameMove> {
    let keep = next_size(candidates.len());
    let mut ranked: Vec<&Candidate> = candidates.iter().collect();
    // Stable: equal values keep root order.
    ranked.sort_by_key(|c| std::cmp::Reverse(c.value));
    let chosen: Vec<GameMove> = ranked.iter().take(keep).map(|c| c.mv).collect();
    candidates
        .iter()
        .map(|c| c.mv)
        .filter(|m| chosen.contains(m))
        .collect()
}
