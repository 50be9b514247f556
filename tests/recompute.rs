//! One decision recomputed independently: for every legal move, the nominal
//! opponent's reply and the evaluator's score after it, through the child
//! client alone, with the same budget and cleared hashes. The engine (run as a
//! binary, with two workers) must play the argmax.

mod common;

use std::{sync::Arc, time::Duration};

use common::{Mpcmc, stockfish};
use mpcmc::{
    children::{ChildConfig, Client},
    mpc::{ChildLimit, Game, Query, Role, Value},
};
use shakmaty::{CastlingMode, Move, Position, uci::UciMove};
use tokio_util::sync::CancellationToken;

const NODES: u64 = 3000;

/// The argmax of `V(u) = E(x·u·ν(x,u))`, ties to the first in UCI order.
async fn recompute(fen: &str) -> (String, Vec<(String, Value)>) {
    let game = Arc::new(Game::from_fen(fen, CastlingMode::Standard).expect("test fen"));
    let pos = game.position().clone();
    let config = ChildConfig {
        command: stockfish().to_owned(),
        options: vec![("Threads".into(), "1".into()), ("Hash".into(), "16".into())],
        castling: CastlingMode::Standard,
        clear_hash: true,
    };
    let mut child = Client::spawn(&config, "recompute".into())
        .await
        .expect("stockfish starts");
    let cancel = CancellationToken::new();
    let mut moves: Vec<Move> = pos.legal_moves().into_iter().collect();
    moves.sort_by_key(|m| UciMove::from_standard(*m).to_string());
    let mut values = Vec::new();
    for u in moves {
        let mut after_u = pos.clone();
        after_u.play_unchecked(u);
        assert!(
            !after_u.is_game_over(),
            "pick a test position without finished lines"
        );
        let reply = child
            .search(
                &Query {
                    role: Role::Opponent,
                    game: game.clone(),
                    line: vec![u],
                    limit: ChildLimit::Nodes(NODES),
                },
                &cancel,
            )
            .await
            .expect("opponent");
        // A finished game after the reply is scored by the rules, not asked.
        let mut y = after_u.clone();
        y.play_unchecked(reply.best);
        if y.is_checkmate() {
            values.push((
                UciMove::from_standard(u).to_string(),
                Value::MATED.from_child(2),
            ));
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
                    line: vec![u, reply.best],
                    limit: ChildLimit::Nodes(NODES),
                },
                &cancel,
            )
            .await
            .expect("evaluator")
            .score
            .expect("a score");
        values.push((UciMove::from_standard(u).to_string(), score.from_child(2)));
    }
    let mut best = &values[0];
    for v in &values {
        if v.1 > best.1 {
            best = v;
        }
    }
    let best = best.0.clone();
    child.quit(Duration::from_secs(1)).await;
    (best, values)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_plays_the_recomputed_argmax() {
    for fen in [
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
        "2r3k1/pp3ppp/4p3/3pP3/3P1P2/P3K3/1P4PP/2R5 b - - 0 28",
    ] {
        let (want, values) = recompute(fen).await;
        let flags = [
            format!("--child-nodes={NODES}"),
            "--threads=2".to_owned(),
            // Two one-thread children: Stockfish is deterministic at fixed
            // nodes only on one thread.
            "--child-threads=1".to_owned(),
            "--fortify=false".to_owned(),
            "--clear-hash=true".to_owned(),
        ];
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
        assert_eq!(got, want, "values: {values:?}");
    }
}
