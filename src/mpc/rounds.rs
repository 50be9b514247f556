//! A decision in rounds: sequential halving over the root moves.
//!
//! Round 1 gives every candidate its exact one-step lookahead (ν, then E) at
//! a small budget — nothing at the first level is pruned. Each later round
//! re-runs ν and E for the better half of the previous round's candidates at
//! twice the budget (the predicted reply may change), and the evaluator's own
//! root search, the fortification reference, grows with it. Every round
//! costs about as much as the first, and most of the compute goes to the
//! contenders (Karnin, Koren and Somekh 2013; the root allocation of Gumbel
//! MuZero). The move is chosen among the last complete round's candidates,
//! all seen at the largest budget, so a move seen only at a small budget
//! never wins on a noisy estimate; the evaluator's own move always stays
//! among them, as fortification compares against it. Warm children make a re-search a
//! deepening, not a restart: the pool sends a position back to the child
//! that searched it.

use std::{collections::HashMap, sync::Arc};

use shakmaty::Move;
use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildLimit, Children, Game,
    budget::calls_per_pass,
    lookahead::{Candidate, Decision, Lookahead, Settings, Stats, decide, sort_candidates},
};

/// The rounds a decision over `moves` candidates takes to halve down to
/// one: 1 for a single move, 7 for 35.
pub fn rounds_for(moves: usize) -> u32 {
    let mut rounds = 1;
    let mut alive = moves.max(1);
    while alive > 1 {
        alive = alive.div_ceil(2);
        rounds += 1;
    }
    rounds
}

/// Round 1's per-call nodes when a total (`go nodes N`) is spent in
/// `rounds` rounds of sequential halving over `moves` root moves: round `r`
/// re-searches `⌈moves / 2^(r-1)⌉` candidates and the root, each call at
/// `2^(r-1)` times round 1's budget. One round is one even pass.
pub fn first_round_nodes(total: u64, lookahead: Lookahead, moves: usize, rounds: u32) -> u64 {
    let mut units: u64 = 0;
    let mut alive = moves.max(1);
    for r in 0..rounds.max(1) {
        units += calls_per_pass(lookahead, alive) as u64 * (1u64 << r.min(40));
        alive = alive.div_ceil(2);
    }
    (total / units.max(1)).max(1)
}

/// `limit` made `factor` times larger (a depth limit grows by one ply a
/// doubling).
pub fn scaled(limit: ChildLimit, factor: u32) -> ChildLimit {
    match limit {
        ChildLimit::Nodes(n) => ChildLimit::Nodes(n.saturating_mul(u64::from(factor))),
        ChildLimit::MoveTime(t) => ChildLimit::MoveTime(t.saturating_mul(factor)),
        ChildLimit::Depth(d) => ChildLimit::Depth(d + factor.ilog2()),
        clock @ ChildLimit::Clock { .. } => clock,
    }
}

/// A complete round's outcome, as [`decide_in_rounds`] reports it.
pub struct Round<'a> {
    /// 1-based.
    pub number: u32,
    pub limit: ChildLimit,
    /// The round's decision (over the round's candidates only).
    pub decision: &'a Decision,
}

/// Runs rounds until `max_rounds` are done, one candidate is left after a
/// round with two or more, or `cancel` fires; `first` is round 1's per-call
/// limit, doubled each round. The decision is the
/// last complete round's (a round cut short replaces it only when none
/// completed); its `candidates` hold every root move with its latest
/// estimate, its `stats` every call of every round. `None` only for an empty
/// candidate list.
#[allow(clippy::too_many_arguments)]
pub async fn decide_in_rounds<C: Children>(
    children: &Arc<C>,
    game: &Arc<Game>,
    candidates: &[Move],
    first: ChildLimit,
    max_rounds: u32,
    settings: Settings,
    cancel: &CancellationToken,
    on_round: &mut (dyn FnMut(&Round<'_>) + Send),
) -> Option<Decision> {
    let mut alive = candidates.to_vec();
    sort_candidates(&mut alive);
    // The latest estimate of every root move (sorted when returned).
    let mut latest: HashMap<Move, Candidate> = HashMap::new();
    let mut kept: Option<Decision> = None;
    let mut stats = Stats::default();
    let mut factor = 1u32;
    for number in 1..=max_rounds.max(1) {
        let limit = scaled(first, factor);
        let decision = decide(
            children,
            game,
            &alive,
            limit,
            settings,
            cancel,
            &mut |_, _| {},
        )
        .await?;
        stats.merge(&decision.stats);
        let complete = !decision.cancelled;
        for c in &decision.candidates {
            // A cut round's unfinished candidates keep their earlier value.
            if c.value.is_some() || !latest.contains_key(&c.mv) {
                latest.insert(c.mv, c.clone());
            }
        }
        if complete {
            on_round(&Round {
                number,
                limit,
                decision: &decision,
            });
        }
        let mut next = survivors(&decision.candidates);
        // The evaluator's own move stays a contender: fortification weighs
        // the lookahead's choice against it, so it too is searched at the
        // largest budget.
        if let Some(root) = decision.root.as_ref().filter(|r| !r.stopped)
            && candidates.contains(&root.best)
            && !next.contains(&root.best)
        {
            next.push(root.best);
            sort_candidates(&mut next);
        }
        let done = !complete || alive.len() <= 1 || next.len() == alive.len();
        if complete || kept.is_none() {
            kept = Some(decision);
        }
        if done || number == max_rounds || cancel.is_cancelled() {
            break;
        }
        alive = next;
        factor = factor.saturating_mul(2);
    }
    let mut decision = kept?;
    let mut all: Vec<Candidate> = latest.into_values().collect();
    all.sort_by_cached_key(|c| shakmaty::uci::UciMove::from_standard(c.mv).to_string());
    decision.candidates = all;
    let depth = decision.stats.depth;
    decision.stats = Stats { depth, ..stats };
    Some(decision)
}

/// The better half (rounded up) of a round's candidates by value, in
/// candidate order; candidates without a value go last.
fn survivors(candidates: &[Candidate]) -> Vec<Move> {
    let keep = candidates.len().div_ceil(2);
    let mut ranked: Vec<&Candidate> = candidates.iter().collect();
    // Stable: equal values keep root order.
    ranked.sort_by_key(|c| std::cmp::Reverse(c.value));
    let chosen: Vec<Move> = ranked.iter().take(keep).map(|c| c.mv).collect();
    candidates
        .iter()
        .map(|c| c.mv)
        .filter(|m| chosen.contains(m))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::{sync::Mutex, time::Duration};

    use shakmaty::{Position, uci::UciMove};

    use super::*;
    use crate::mpc::{ChildFault, Query, Report, Role, Value};

    /// Scores each root move by a table (from the side to move after the
    /// reply: us), replies with the first legal move, and logs every call.
    #[derive(Default)]
    struct Valued {
        scores: HashMap<String, i32>,
        asked: Mutex<Vec<(Role, usize, ChildLimit)>>,
    }

    #[derive(Debug)]
    struct Never;
    impl std::fmt::Display for Never {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("never")
        }
    }
    impl ChildFault for Never {
        fn is_stall(&self) -> bool {
            false
        }
        fn is_cancelled(&self) -> bool {
            false
        }
    }

    impl Children for Valued {
        type Error = Never;
        async fn search(&self, q: Query, _: CancellationToken) -> Result<Report, Never> {
            if let Ok(mut asked) = self.asked.lock() {
                asked.push((q.role, q.line.len(), q.limit));
            }
            let pos = q.position();
            let mut moves: Vec<Move> = pos.legal_moves().into_iter().collect();
            sort_candidates(&mut moves);
            let score = match (q.role, q.line.first()) {
                (Role::Evaluator, Some(m)) => {
                    let key = UciMove::from_standard(*m).to_string();
                    self.scores.get(&key).copied().unwrap_or(0)
                }
                _ => 0,
            };
            Ok(Report {
                best: moves[0],
                score: Some(Value::cp(score)),
                pv: vec![moves[0]],
                depth: 3,
                nodes: 10,
                search_time: Duration::from_millis(1),
                busy_time: Duration::from_millis(1),
                stopped: false,
                slot: None,
            })
        }
    }

    #[tokio::test]
    async fn every_move_in_round_one_then_the_better_half_at_twice_the_budget() {
        let game = Arc::new(Game::default());
        let names = [
            "a2a3", "b2b3", "c2c3", "d2d4", "e2e4", "f2f3", "g1f3", "h2h3",
        ];
        let candidates: Vec<Move> = names
            .iter()
            .map(|n| {
                n.parse::<UciMove>()
                    .ok()
                    .and_then(|u| u.to_move(game.position()).ok())
                    .expect("legal")
            })
            .collect();
        let mut children = Valued::default();
        for (name, score) in names.iter().zip([5, 10, 15, 40, 50, 1, 30, 2]) {
            children.scores.insert((*name).to_owned(), score);
        }
        let children = Arc::new(children);
        let settings = Settings {
            lookahead: Lookahead::One,
            fortify: false,
            fortify_margin: 0,
        };
        let mut seen = Vec::new();
        let d = decide_in_rounds(
            &children,
            &game,
            &candidates,
            ChildLimit::Nodes(100),
            rounds_for(candidates.len()),
            settings,
            &CancellationToken::new(),
            &mut |r| seen.push((r.number, r.limit, r.decision.candidates.len())),
        )
        .await
        .expect("a decision");
        // The better half goes on, and the evaluator's own move (a2a3, the
        // worst by lookahead) with it.
        assert_eq!(
            seen,
            vec![
                (1, ChildLimit::Nodes(100), 8),
                (2, ChildLimit::Nodes(200), 4 + 1),
                (3, ChildLimit::Nodes(400), 3 + 1),
                (4, ChildLimit::Nodes(800), 2 + 1),
            ]
        );
        assert_eq!(UciMove::from_standard(d.best).to_string(), "e2e4");
        assert_eq!(d.candidates.len(), 8, "every root move keeps its estimate");
        let asked = children.asked.lock().map(|a| a.clone()).unwrap_or_default();
        let opponent_calls = asked.iter().filter(|(r, ..)| *r == Role::Opponent).count();
        assert_eq!(opponent_calls, 8 + 5 + 4 + 3);
        let roots: Vec<ChildLimit> = asked
            .iter()
            .filter(|(r, len, _)| *r == Role::Evaluator && *len == 0)
            .map(|(.., l)| *l)
            .collect();
        assert_eq!(roots.len(), 4, "the root search grows every round");
        assert_eq!(d.stats.calls, asked.len() as u64);
        assert_eq!(d.value, Some(Value::cp(50)));
        assert!(d.candidates.iter().all(|c| c.value.is_some()));
    }

    #[test]
    fn rounds_halve_to_one() {
        assert_eq!(rounds_for(1), 1);
        assert_eq!(rounds_for(2), 2);
        assert_eq!(rounds_for(3), 3);
        assert_eq!(rounds_for(35), 7);
        assert_eq!(scaled(ChildLimit::Nodes(300), 4), ChildLimit::Nodes(1200));
        assert_eq!(scaled(ChildLimit::Depth(3), 4), ChildLimit::Depth(5));
    }

    #[test]
    fn a_node_total_is_spread_over_the_rounds() {
        // One round is one even pass: 20 moves, one-step, 41 calls.
        assert_eq!(first_round_nodes(41_000, Lookahead::One, 20, 1), 1000);
        assert_eq!(first_round_nodes(5, Lookahead::One, 20, 1), 1);
        // 4 moves in 3 rounds: 9 calls, then 5 at twice, then 3 at four
        // times the first budget: 31 units.
        assert_eq!(first_round_nodes(31_000, Lookahead::One, 4, 3), 1000);
    }
}
