//! The core against a scripted in-process child: exact values, sides and
//! rules, no processes.

use std::{collections::HashMap, time::Duration};

use shakmaty::{CastlingMode, Position};

use super::*;
use crate::mpc::{
    ChildFault, Failure, Lookahead, Query, Role, Terminal, Value,
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
        let (d, looked) = decide_at(script(-60, -280), &g, &cands, comparing, rng.next_u64()).await;
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
async fn reply_weight_mixes_at_every_step_of_a_two_step_lookahead() {
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
    // c4, the best of a step whose other moves are (-500 + 0) / 2.
    assert_eq!(d4.shallow, Some(Value::cp(23)));
    assert_eq!(d4.value, Some(Value::cp(20)), "the next step's, mixed");
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
    assert_eq!(d.steps, 2);
    let d4 = candidate(&d, "d2d4");
    assert_eq!(d4.shallow, Some(Value::cp(45)));
    assert_eq!(d4.value, Some(Value::cp(10)), "the best of its next step");
    assert_eq!(key(&d4.line()[..4]), "d2d4 d7d5 c2c4 d5c4");
    assert_eq!(d4.calls.len(), 56, "its own two calls and its next step's");
    assert_eq!(d4.depth(2), Some(5 + 4));
    // e4 keeps its one-step value and wins.
    assert_eq!(
        (key(&[d.best]), d.value),
        ("e2e4".into(), Some(Value::cp(30)))
    );
    assert_eq!(d.stats.calls, 1 + 4 + 54);

    // Three steps: the best second-step position (c4 dxc4) is expanded too.
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
    assert_eq!(d.steps, 3);
    let deepest = asked.iter().map(|k| k.split(' ').count()).max();
    assert_eq!(deepest, Some(6), "u w u' w' u'' w''");
    assert!(
        asked
            .iter()
            .filter(|k| k.split(' ').count() > 4)
            .all(|k| k.starts_with("d2d4 d7d5 c2c4 d5c4 ")),
        "only the best second-step position is expanded"
    );
    // 60 at the third step, backed up through c4 dxc4 (10 at one
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
    // A fault, not a stall: the step completes, but d4 d5 a3 has no
    // value, so the best of d4's next step is no maximum.
    c.fail.push("d2d4 d7d5 a2a3".into());
    let two = Settings {
        lookahead: Lookahead::Two,
        prune_width: 1,
        ..ONE
    };
    let d = run(c, &g, &cands, two).await;
    assert_eq!((d.steps, d.cancelled), (2, false));
    let d4 = candidate(&d, "d2d4");
    assert!(d4.next.is_empty() && d4.shallow.is_none());
    assert_eq!(
        (key(&[d.best]), d.value),
        ("d2d4".into(), Some(Value::cp(45)))
    );
}

#[tokio::test]
async fn a_deeper_step_cut_short_leaves_the_step_above() {
    let g = game(START);
    let cands = moves(&g, &["e2e4", "d2d4"]);
    let mut c = two_step_script();
    c.stall.push("d2d4 d7d5 c2c4".into());
    let two = Settings {
        lookahead: Lookahead::Two,
        ..ONE
    };
    let d = run(c, &g, &cands, two).await;
    assert_eq!(d.steps, 1);
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
