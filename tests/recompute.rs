//! One decision recomputed independently: for every legal move, the nominal
//! opponent's reply and the evaluator's score after it, through the child
//! client alone, with the same budget and cleared hashes. The engine (run as a
//! binary, with two workers) must play the argmax, and its decision trace
//! (`TraceFile`) must hold the same replies and values.

mod common;

use std::{sync::Arc, time::Duration};

use common::{Mpcmc, stockfish};
use mpcmc::{
    children::{ChildConfig, Client},
    mpc::{ChildLimit, Game, Query, Role, Value},
    uci::trace::{Score, Trace},
};
use shakmaty::{CastlingMode, Move, Position, uci::UciMove};
use tokio_util::sync::CancellationToken;

const NODES: u64 = 3000;

/// One root move as recomputed.
#[derive(Debug)]
struct Recomputed {
    mv: String,
    /// The predicted reply; empty when the game ended after the move.
    reply: String,
    /// `V(u)`, the evaluator's value after the reply, or the game's result
    /// when it ended on the line.
    value: Value,
    /// Whether the evaluator gave `value` (the game did not end on the line).
    evaluated: bool,
    /// The nominal opponent's own value of `x·u`, for us.
    reply_value: Option<Value>,
}

/// A Stockfish child as both roles, with cleared hashes: deterministic.
async fn child() -> Client {
    let config = ChildConfig {
        command: stockfish().to_owned(),
        options: vec![("Threads".into(), "1".into()), ("Hash".into(), "16".into())],
        clear_hash: true,
        ..ChildConfig::new(stockfish())
    };
    Client::spawn(&config, "recompute".into())
        .await
        .expect("stockfish starts")
}

/// `V(u) = E(x·u·ν(x,u))` for every legal `u` at the position after
/// `prefix`, in UCI order, for the side to move there.
async fn one_step(child: &mut Client, game: &Arc<Game>, prefix: &[Move]) -> Vec<Recomputed> {
    let mut pos = game.position().expect("a board game").clone();
    prefix.iter().for_each(|&m| pos.play_unchecked(m));
    let cancel = CancellationToken::new();
    let mut moves: Vec<Move> = pos.legal_moves().into_iter().collect();
    moves.sort_by_key(|m| UciMove::from_standard(*m).to_string());
    let mut values = Vec::new();
    for u in moves {
        let mut after_u = pos.clone();
        after_u.play_unchecked(u);
        let u_text = UciMove::from_standard(u).to_string();
        if after_u.is_checkmate() {
            values.push(Recomputed {
                mv: u_text,
                reply: String::new(),
                value: (-Value::MATED).from_child(1),
                evaluated: false,
                reply_value: None,
            });
            continue;
        }
        assert!(
            !after_u.is_game_over(),
            "pick a test position without drawn lines"
        );
        let line = [prefix, &[u]].concat();
        let reply = child
            .search(
                &Query {
                    role: Role::Opponent,
                    game: game.clone(),
                    line: board(&line),
                    limit: ChildLimit::Nodes(NODES),
                    progress: None,
                    ponderhit: None,
                },
                &cancel,
            )
            .await
            .expect("opponent");
        let reply_value = reply.score.map(|s| (-s).from_child(1));
        // A finished game after the reply is scored by the rules, not asked.
        let mut y = after_u.clone();
        let reply_move = reply.best.and_then(|b| b.board()).expect("a chess move");
        y.play_unchecked(reply_move);
        let w_text = UciMove::from_standard(reply_move).to_string();
        if y.is_checkmate() {
            values.push(Recomputed {
                mv: u_text,
                reply: w_text,
                value: Value::MATED.from_child(2),
                evaluated: false,
                reply_value,
            });
            continue;
        }
        assert!(
            !y.is_game_over(),
            "pick a test position without drawn lines"
        );
        let score = child
            .search(
                &Query {
                    role: Role::Evaluator,
                    game: game.clone(),
                    line: board(&[line, vec![reply_move]].concat()),
                    limit: ChildLimit::Nodes(NODES),
                    progress: None,
                    ponderhit: None,
                },
                &cancel,
            )
            .await
            .expect("evaluator")
            .score
            .expect("a score");
        values.push(Recomputed {
            mv: u_text,
            reply: w_text,
            value: score.from_child(2),
            evaluated: true,
            reply_value,
        });
    }
    values
}

/// `V(u)` with `percent` % of it taken from the nominal opponent's own
/// value (`ReplyWeight`), rounded half up; only when both are centipawns.
fn mixed(r: &Recomputed, percent: i64) -> Value {
    match (
        r.value.centipawns(),
        r.reply_value.and_then(Value::centipawns),
    ) {
        (Some(e), Some(o)) => {
            let sum = i64::from(e) * (100 - percent) + i64::from(o) * percent;
            Value::cp(i32::try_from((sum + 50).div_euclid(100)).expect("centipawns"))
        }
        _ => r.value,
    }
}

/// The first of the best values at `percent` (UCI order breaks ties).
fn argmax(values: &[Recomputed], percent: i64) -> &Recomputed {
    let mut best = &values[0];
    for v in values {
        if mixed(v, percent) > mixed(best, percent) {
            best = v;
        }
    }
    best
}

fn game(fen: &str) -> Arc<Game> {
    Arc::new(Game::from_fen(fen, CastlingMode::Standard).expect("test fen"))
}

/// `V(u) = E(x·u·ν(x,u))` and ν's own value of `x·u` for every root move.
async fn recompute(fen: &str) -> Vec<Recomputed> {
    let mut child = child().await;
    let values = one_step(&mut child, &game(fen), &[]).await;
    child.quit(Duration::from_secs(1)).await;
    values
}

/// Two-step with `width` expanded: the one-step values, then from the
/// `width` best positions `x·u·w` a one-step over every move there, the
/// best of it backed up into `V(u)`. Returns the argmax, and per move its
/// value and its one-step value when expanded.
async fn recompute_two_step(
    fen: &str,
    width: usize,
) -> (String, Vec<(String, Value, Option<Value>)>) {
    let game = game(fen);
    let mut child = child().await;
    let first = one_step(&mut child, &game, &[]).await;
    let mut ranked: Vec<&Recomputed> = first.iter().filter(|v| !v.reply.is_empty()).collect();
    ranked.sort_by_key(|v| std::cmp::Reverse(v.value));
    let mut values: Vec<(String, Value, Option<Value>)> = first
        .iter()
        .map(|r| (r.mv.clone(), r.value, None))
        .collect();
    for Recomputed {
        mv: u,
        reply: w,
        value: v,
        ..
    } in ranked.into_iter().take(width)
    {
        let pos = game.position().expect("a board game");
        let u_move = u
            .parse::<UciMove>()
            .expect("uci")
            .to_move(pos)
            .expect("legal");
        let mut after = pos.clone();
        after.play_unchecked(u_move);
        let w_move = w
            .parse::<UciMove>()
            .expect("uci")
            .to_move(&after)
            .expect("legal");
        let next = one_step(&mut child, &game, &[u_move, w_move]).await;
        let best = argmax(&next, 0).value.from_child(2);
        let entry = values.iter_mut().find(|e| &e.0 == u).expect("a root move");
        *entry = (u.clone(), best, Some(*v));
    }
    child.quit(Duration::from_secs(1)).await;
    let mut best = &values[0];
    for v in &values {
        if v.1 > best.1 {
            best = v;
        }
    }
    (best.0.clone(), values)
}

/// Runs the engine on `fen` with `extra` flags (and a trace file), returns its
/// move and its one trace line.
async fn engine_decision(fen: &str, extra: &[&str]) -> (String, Trace) {
    // A directory per flag set: the tests run at once.
    let dir = std::env::temp_dir().join(format!(
        "mpcmc-recompute-{}{}",
        std::process::id(),
        extra.concat()
    ));
    std::fs::create_dir_all(&dir).expect("trace dir");
    let trace_file = dir.join("trace.jsonl");
    let _ = std::fs::remove_file(&trace_file);
    let mut flags = vec![
        format!("--trace-file={}", trace_file.display()),
        format!("--child-nodes={NODES}"),
        "--threads=2".to_owned(),
        // Two one-thread children: Stockfish is deterministic at fixed
        // nodes only on one thread.
        "--child-threads=1".to_owned(),
        "--fortify=false".to_owned(),
        "--memoryless=true".to_owned(),
    ];
    flags.extend(extra.iter().map(|f| (*f).to_owned()));
    let fen = fen.to_owned();
    let got = tokio::task::spawn_blocking(move || {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let mut e = Mpcmc::with_stockfish(&flags);
        e.handshake();
        e.send(&format!("position fen {fen}"));
        e.send("go");
        let (mv, _) = e.bestmove(Duration::from_secs(60));
        assert!(e.quit().success());
        mv
    })
    .await
    .expect("engine run");
    let text = std::fs::read_to_string(&trace_file).expect("the trace file");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let trace: Trace = serde_json::from_str(lines[0]).expect("a trace object");
    let _ = std::fs::remove_dir_all(&dir);
    (got, trace)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_plays_the_recomputed_argmax() {
    for fen in [
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
        "2r3k1/pp3ppp/4p3/3pP3/3P1P2/P3K3/1P4PP/2R5 b - - 0 28",
    ] {
        let values = recompute(fen).await;
        assert!(
            values.iter().any(|r| mixed(r, 50) != r.value),
            "the mix changes a value here: {values:?}"
        );
        // `Memoryless=true` alone is the paper's rule, the evaluator's value
        // unmixed; `ReplyWeight` set mixes in the opponent's value.
        for (flags, percent) in [(&[][..], 0), (&["--reply-weight=50"][..], 50)] {
            let want = argmax(&values, percent).mv.clone();
            let (got, trace) = engine_decision(fen, flags).await;
            assert_eq!(got, want, "at {percent} %, values: {values:?}");
            assert_eq!(trace.reply_weight, percent as u32);
            check_trace(&trace, fen, &want, &values, percent);
        }
    }
}

/// The trace holds the recomputed decision: every move's reply, both
/// estimates and the value mixed at `percent`.
fn check_trace(trace: &Trace, fen: &str, want: &str, values: &[Recomputed], percent: i64) {
    assert_eq!(trace.fen, fen);
    assert!(trace.moves.is_empty());
    assert_eq!(
        (trace.chosen.as_str(), trace.rule.as_str()),
        (want, "lookahead")
    );
    assert_eq!(trace.rounds.len(), 1, "one pass");
    assert_eq!(trace.rounds[0].budget, format!("nodes {NODES}"));
    type Traced = (String, Option<String>, Option<Score>, Option<Score>);
    let traced: Vec<(Traced, Option<Score>)> = trace
        .candidates
        .iter()
        .map(|c| {
            let t = (c.mv.clone(), c.reply.clone(), c.value, c.reply_value);
            (t, c.evaluator_value)
        })
        .collect();
    let expected: Vec<(Traced, Option<Score>)> = values
        .iter()
        .map(|r| {
            let t = (
                r.mv.clone(),
                Some(r.reply.clone()),
                Some(Score::from(mixed(r, percent))),
                r.reply_value.map(Score::from),
            );
            (t, r.evaluated.then(|| Score::from(r.value)))
        })
        .collect();
    assert_eq!(traced, expected);
    for c in &trace.candidates {
        assert_eq!(c.line[..2], [c.mv.clone(), c.reply.clone().expect("reply")]);
        assert_eq!(c.budget.as_deref(), Some(format!("nodes {NODES}").as_str()));
    }
    let best = trace
        .candidates
        .iter()
        .find(|c| c.rank == Some(1))
        .expect("a rank 1");
    assert_eq!(best.value, trace.value);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_step_plays_the_recomputed_backed_up_argmax() {
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let (want, values) = recompute_two_step(fen, 2).await;
    let (got, trace) = engine_decision(fen, &["--lookahead=two", "--prune-width=2"]).await;
    assert_eq!(got, want, "values: {values:?}");
    assert_eq!((trace.lookahead.as_str(), trace.steps), ("two", 2));
    // A trace written before the field was named `steps` reads the same.
    let old = serde_json::to_string(&trace)
        .expect("a trace")
        .replace("\"steps\":", "\"levels\":");
    let old: Trace = serde_json::from_str(&old).expect("a trace with `levels`");
    assert_eq!(old, trace);
    let traced: Vec<(String, Option<Score>, Option<Score>)> = trace
        .candidates
        .iter()
        .map(|c| (c.mv.clone(), c.value, c.one_step_value))
        .collect();
    let expected: Vec<(String, Option<Score>, Option<Score>)> = values
        .iter()
        .map(|(u, v, one)| (u.clone(), Some(Score::from(*v)), one.map(Score::from)))
        .collect();
    assert_eq!(traced, expected);
    let expanded: Vec<_> = trace
        .candidates
        .iter()
        .filter(|c| c.one_step_value.is_some())
        .collect();
    assert_eq!(expanded.len(), 2, "PruneWidth positions expanded");
    for c in expanded {
        assert!(
            c.line.len() >= 4,
            "u w u' w' for an expanded move: {:?}",
            c.line
        );
    }
}

fn board(line: &[shakmaty::Move]) -> Vec<mpcmc::protocol::GameMove> {
    line.iter()
        .copied()
        .map(mpcmc::protocol::GameMove::Board)
        .collect()
}
