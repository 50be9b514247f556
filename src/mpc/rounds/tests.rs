use std::{collections::HashMap, sync::Mutex, time::Duration};

use shakmaty::{CastlingMode, Position};
use tokio_util::sync::CancellationToken;

use super::{check::check_deviation, *};
use crate::mpc::{
    ChildFault, Children, Lookahead, Query, Report, Role, Value,
    decision::{CheckVerdict, Rule},
    lookahead::sort_candidates,
    noise::Noise,
};

/// Scores each root move by a table (from the side to move after the
/// reply: us), replies with the first legal move, and logs every call.
#[derive(Default)]
struct Valued {
    scores: HashMap<String, i32>,
    /// The deep check's values for us (the evaluator after one root
    /// move); 0, the root search's value, unless given.
    deep: HashMap<String, i32>,
    /// Role, line length, the line's first move, limit.
    asked: Mutex<Vec<Asked>>,
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
            let first = q.line.first().map(|m| m.to_string());
            asked.push((q.role, q.line.len(), first, q.limit));
        }
        let pos = q.position().expect("a board game");
        let mut moves: Vec<GameMove> = pos.legal_moves().into_iter().map(GameMove::Board).collect();
        sort_candidates(&mut moves);
        let key = q.line.first().map(|m| m.to_string());
        let score = match (q.role, q.line.len(), key) {
            // From the opponent's side: the deep check.
            (Role::Evaluator, 1, Some(k)) => -self.deep.get(&k).copied().unwrap_or(0),
            (Role::Evaluator, _, Some(k)) => self.scores.get(&k).copied().unwrap_or(0),
            _ => 0,
        };
        Ok(Report {
            best: Some(moves[0]),
            extra: Default::default(),
            score: Some(Value::cp(score)),
            pv: vec![moves[0]],
            depth: 3,
            // As asked.
            nodes: match q.limit {
                ChildLimit::Nodes(n) => n,
                _ => 10,
            },
            search_time: Duration::from_millis(1),
            busy_time: Duration::from_millis(1),
            stopped: false,
            slot: None,
            exact: false,
        })
    }
}

fn moves(game: &Game, names: &[&str]) -> Vec<GameMove> {
    names
        .iter()
        .map(|n| {
            game.read_after(&[], &n.parse().expect("uci"))
                .expect("legal")
        })
        .collect()
}

/// Runs a decision in rounds over eight opening moves valued by
/// `scores`; the root search (anchor) names a2a3, the first legal move.
type Asked = (Role, usize, Option<String>, ChildLimit);

type Run = (Decision, Vec<(u32, ChildLimit, usize)>, Vec<Asked>);

async fn rounds_over(scores: [i32; 8]) -> Run {
    rounds_with(scores, true, None, &[]).await
}

async fn rounds_with(
    scores: [i32; 8],
    fortify: bool,
    hint: Option<&str>,
    deep: &[(&str, i32)],
) -> Run {
    let game = Arc::new(Game::default());
    let names = [
        "a2a3", "b2b3", "c2c3", "d2d4", "e2e4", "f2f3", "g1f3", "h2h3",
    ];
    let candidates = moves(&game, &names);
    let mut children = Valued::default();
    for (name, score) in names.iter().zip(scores) {
        children.scores.insert((*name).to_owned(), score);
    }
    for (name, value) in deep {
        children.deep.insert((*name).to_owned(), *value);
    }
    let children = Arc::new(children);
    let settings = Settings {
        lookahead: Lookahead::One,
        fortify,
        fortify_margin: 0,
        ..Settings::new(Lookahead::One)
    };
    let anchor_hint = hint.map(|h| moves(&game, &[h])[0]);
    let plan = RoundPlan {
        root: ChildLimit::Nodes(1000),
        root_then: None,
        root_open: false,
        first: ChildLimit::Nodes(100),
        lookahead_nodes: None,
        lanes: None,
        max_rounds: rounds_for(candidates.len()),
        anchor_hint,
        clock: ClockCell::default(),
        root_seen: RootCell::default(),
    };
    let mut seen = Vec::new();
    let d = Rounds::new(
        &children,
        &game,
        &candidates,
        plan,
        settings,
        &Mutex::new(Noise::default()),
        &CancellationToken::new(),
    )
    .decide(&mut |_, _| {}, &mut |r| {
        seen.push((r.number, r.limit, r.decision.candidates.len()))
    })
    .await
    .expect("a decision");
    let asked = children.asked.lock().map(|a| a.clone()).unwrap_or_default();
    (d, seen, asked)
}

#[tokio::test]
async fn every_move_in_round_one_then_the_better_half_at_twice_the_budget() {
    let (d, seen, asked) = rounds_over([5, 10, 15, 40, 50, 1, 30, 2]).await;
    // The better half goes on, and the anchor (a2a3, the worst but one
    // by lookahead) with it.
    assert_eq!(
        seen,
        vec![
            (1, ChildLimit::Nodes(100), 8),
            (2, ChildLimit::Nodes(200), 4 + 1),
            (3, ChildLimit::Nodes(400), 3 + 1),
        ]
    );
    assert_eq!(d.candidates.len(), 8, "every root move keeps its estimate");
    assert!(d.candidates.iter().all(|c| c.value.is_some()));
    let opponent_calls = asked.iter().filter(|(r, ..)| *r == Role::Opponent).count();
    assert_eq!(opponent_calls, 8 + 5 + 4);
    let roots: Vec<ChildLimit> = asked
        .iter()
        .filter(|(r, len, ..)| *r == Role::Evaluator && *len == 0)
        .map(|(.., l)| *l)
        .collect();
    assert_eq!(
        roots,
        vec![ChildLimit::Nodes(1000)],
        "one root search, apart"
    );
    assert_eq!(d.stats.calls, asked.len() as u64);
    assert_eq!(d.spread.map(|s| s.rounds), Some(3));
    // e2e4 leads the anchor by 45 cp in the last round: less than the
    // margin (about twice the prior 30 cp spread), so the anchor stays.
    assert_eq!(d.best.to_string(), "a2a3");
    assert_eq!(d.rule, Rule::Fortified);
    // Shown with the root search's line and value: what kept it.
    assert_eq!((d.value, d.stats.depth), (Some(Value::cp(0)), 3));
    assert_eq!(d.pv, [d.best]);
    assert!(d.ponder.is_some(), "the nominal opponent's reply");
    assert_eq!(
        d.lookahead_choice.map(|(m, v)| (m.to_string(), v)),
        Some(("e2e4".to_owned(), Value::cp(50)))
    );
}

#[tokio::test]
async fn the_lookahead_deviates_from_the_anchor_by_more_than_the_margin() {
    let (d, _, asked) = rounds_over([5, 10, 15, 40, 100, 1, 30, 2]).await;
    assert_eq!(d.best.to_string(), "e2e4");
    assert_eq!(d.rule, Rule::Lookahead);
    assert_eq!(d.value, Some(Value::cp(100)));
    let margin = d.spread.map(|s| s.margin).unwrap_or_default();
    assert!((40..95).contains(&margin), "margin {margin}");
    // Checked first: the evaluator after e2e4, with half the root
    // search's 1000 nodes, found it as good as the anchor.
    let checks: Vec<&Asked> = asked
        .iter()
        .filter(|(r, len, ..)| *r == Role::Evaluator && *len == 1)
        .collect();
    assert_eq!(
        checks,
        vec![&(
            Role::Evaluator,
            1,
            Some("e2e4".to_owned()),
            ChildLimit::Nodes(500)
        )]
    );
    let check = d.spread.and_then(|s| s.check);
    assert_eq!(
        check.map(|c| (c.value, c.nodes, c.verdict)),
        Some((Some(Value::cp(0)), 500, CheckVerdict::Passed))
    );
    assert_eq!(d.stats.calls, asked.len() as u64, "the check is counted");
}

#[tokio::test]
async fn a_deviation_the_deep_check_refutes_is_not_played() {
    // The lookahead's e2e4 beats the anchor by 95 cp, but the deep check
    // finds it 21 cp below the root search's value of its own move.
    let refuted = [("e2e4", -CHECK_TOLERANCE - 1)];
    let (d, _, _) = rounds_with([5, 10, 15, 40, 100, 1, 30, 2], true, None, &refuted).await;
    assert_eq!(d.best.to_string(), "a2a3");
    assert_eq!(d.rule, Rule::Refuted);
    assert_eq!(d.value, Some(Value::cp(0)), "the root search's value");
    let check = d.spread.and_then(|s| s.check);
    assert_eq!(
        check.map(|c| (c.value, c.depth, c.verdict)),
        Some((
            Some(Value::cp(-CHECK_TOLERANCE - 1)),
            3,
            CheckVerdict::Refuted
        ))
    );
    // Within the tolerance it passes.
    let close = [("e2e4", -CHECK_TOLERANCE)];
    let (d, _, _) = rounds_with([5, 10, 15, 40, 100, 1, 30, 2], true, None, &close).await;
    assert_eq!(d.rule, Rule::Lookahead);
}

#[tokio::test]
async fn a_deviation_that_cannot_be_checked_is_not_played() {
    // Cancelled (`stop`, the hard limit) before the check: no search,
    // the anchor.
    let game = Arc::new(Game::default());
    let children = Valued::default();
    let root = Report {
        best: Some(moves(&game, &["a2a3"])[0]),
        extra: Default::default(),
        score: Some(Value::cp(0)),
        pv: Vec::new(),
        depth: 10,
        nodes: 100_000,
        search_time: Duration::from_millis(1),
        busy_time: Duration::from_millis(1),
        stopped: false,
        slot: None,
        exact: false,
    };
    let e4 = moves(&game, &["e2e4"])[0];
    let cancel = CancellationToken::new();
    cancel.cancel();
    let e4 = (e4, Value::cp(100));
    let c = check_deviation(&children, &game, e4, &root, None, &cancel).await;
    assert_eq!(c.verdict, CheckVerdict::Unchecked);
    assert!(c.report.is_none());
    assert!(children.asked.lock().is_ok_and(|a| a.is_empty()));
    // A node total with too little left for a check.
    let running = CancellationToken::new();
    let c = check_deviation(&children, &game, e4, &root, Some(255), &running).await;
    assert_eq!(c.verdict, CheckVerdict::Unchecked);
    assert!(children.asked.lock().is_ok_and(|a| a.is_empty()));
    // Not cancelled: half the root's nodes, no more than a total's left.
    let c = check_deviation(&children, &game, e4, &root, None, &running).await;
    assert_eq!(c.verdict, CheckVerdict::Passed);
    assert_eq!(c.report.map(|r| r.nodes), Some(50_000));
    let c = check_deviation(&children, &game, e4, &root, Some(20_000), &running).await;
    assert_eq!(c.report.map(|r| r.nodes), Some(20_000));

    // A move that ends the game is judged on the lookahead's exact
    // value, without a search, even once cancelled.
    let mate = Arc::new(
        Game::from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", CastlingMode::Standard)
            .expect("test fen"),
    );
    let ra8 = moves(&mate, &["a1a8"])[0];
    let asked = children.asked.lock().map(|a| a.len()).unwrap_or_default();
    let exact = (-Value::MATED).from_child(1);
    let c = check_deviation(&children, &mate, (ra8, exact), &root, None, &cancel).await;
    assert_eq!((c.verdict, c.value), (CheckVerdict::Passed, Some(exact)));
    assert!(c.report.is_none());
    assert!(children.asked.lock().is_ok_and(|a| a.len() == asked));
}

#[tokio::test]
async fn an_earlier_decisions_anchor_joins_the_rounds_at_once() {
    // No root search (fortification off): the hint is the anchor, and
    // h2h3, the worst move but one by lookahead, is searched in every
    // round.
    let (d, seen, asked) =
        rounds_with([5, 10, 15, 40, 50, 1, 30, 2], false, Some("h2h3"), &[]).await;
    assert_eq!(seen.iter().map(|r| r.2).collect::<Vec<_>>(), vec![8, 5, 4]);
    let searched = asked.iter().filter(|(r, ..)| *r == Role::Opponent).count();
    assert_eq!(searched, 8 + 5 + 4);
    let h2h3 = asked
        .iter()
        .filter(|(r, _, first, _)| *r == Role::Opponent && first.as_deref() == Some("h2h3"))
        .count();
    assert_eq!(h2h3, 3, "the hinted anchor in every round");
    assert!(
        asked
            .iter()
            .all(|(r, len, ..)| *r == Role::Opponent || *len > 0),
        "no root search"
    );
    // Without fortification the lookahead's choice is played.
    assert_eq!(d.best.to_string(), "e2e4");
}

#[test]
fn rounds_halve_to_two() {
    assert_eq!(rounds_for(1), 1);
    assert_eq!(rounds_for(2), 1);
    assert_eq!(rounds_for(3), 2);
    assert_eq!(rounds_for(35), 6);
    assert_eq!(round_sizes(35, 10), vec![35, 18, 9, 5, 3, 2]);
    assert_eq!(ChildLimit::Nodes(300).scaled(4), ChildLimit::Nodes(1200));
    assert_eq!(ChildLimit::Depth(3).scaled(4), ChildLimit::Depth(5));
}

#[test]
fn a_node_total_is_spread_over_the_rounds() {
    // One round: every move once, one-step: 40 calls for 20 moves.
    assert_eq!(
        first_round_nodes(40_000, Settings::new(Lookahead::One), 20, 20, 1, None),
        1000
    );
    assert_eq!(
        first_round_nodes(5, Settings::new(Lookahead::One), 20, 20, 1, None),
        1
    );
    // 4 moves in 2 rounds: 8 calls, then (2 + the anchor) × 2 calls at
    // twice the first budget: 20 units.
    assert_eq!(
        first_round_nodes(20_000, Settings::new(Lookahead::One), 4, 4, 2, None),
        1000
    );
    // On lanes, each lane's budget: 20 moves on 5 lanes are 4 waves of
    // 2 calls (8 units); on 20 lanes or more, one wave.
    let one = Settings::new(Lookahead::One);
    assert_eq!(first_round_nodes(8_000, one, 20, 20, 1, Some(5)), 1000);
    assert_eq!(first_round_nodes(2_000, one, 20, 20, 1, Some(20)), 1000);
    assert_eq!(first_round_nodes(2_000, one, 20, 20, 1, Some(64)), 1000);
    // 4 moves in 2 rounds on 2 lanes: 2 waves × 2 calls, then 3
    // searched (2 waves) × 2 calls × 2: 12 units.
    assert_eq!(first_round_nodes(12_000, one, 4, 4, 2, Some(2)), 1000);
}

#[test]
fn the_busiest_lane_is_the_rounds_clock() {
    assert_eq!(busiest_lane([5, 5, 5, 5], 2), 10);
    assert_eq!(busiest_lane([5, 5, 5, 5], 8), 5);
    // Longest first: 7 | 5+2 | 4+3 on three lanes.
    assert_eq!(busiest_lane([3, 7, 2, 5, 4], 3), 7);
    // Greedy, not the best packing (6+6 | 4+4+4 would be 12).
    assert_eq!(busiest_lane([6, 6, 4, 4, 4], 2), 14);
    assert_eq!(busiest_lane([], 3), 0);
    assert_eq!(busiest_lane([9, 1], 1), 10);
}
