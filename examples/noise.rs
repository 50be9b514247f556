//! How noisy one-step values are at small budgets: the measurement behind
//! the margin a lookahead deviation must clear.
//!
//! For positions from an EPD file, every legal root move `u` gets its one-step
//! value `V_n(u)` at each budget `n` (ascending, on warm children, as the
//! rounds of a decision search and value them, `ReplyWeight`'s default mix
//! included); the largest budget is the reference.
//! Printed per budget: the spread of `V_n(u) - V_ref(u)` over single moves, the
//! spread of the *paired* error `(V_n(u) - V_n(u')) - (V_ref(u) - V_ref(u'))`
//! over pairs of the reference's top 5 moves, and how often a pair that looks
//! `m` centipawns apart at `n` is in the wrong order at the reference.
//!
//! ```text
//! cargo run --release --example noise -- --positions 40 --nodes 250,1000,4000,16000
//! cargo run --release --example noise -- --evaluator /usr/games/stockfish --nodes 500,2000,8000,32000
//! ```

use std::{collections::HashMap, sync::Arc};

use clap::Parser;
use mpcmc::protocol::GameMove;
use mpcmc::{
    children::Pool,
    mpc::{ChildLimit, Game, Lookahead, Settings, decide},
    uci::options::Options,
};
use shakmaty::CastlingMode;
use tokio_util::sync::CancellationToken;

#[derive(Parser, Debug)]
struct Args {
    /// `builtin` or a child engine's command line.
    #[arg(long, default_value = "builtin")]
    evaluator: String,
    #[arg(long, default_value = "tests/data/openings.epd")]
    epd: String,
    #[arg(long, default_value_t = 30)]
    positions: usize,
    /// Per-call node budgets, ascending; the last is the reference.
    #[arg(long, default_value = "250,1000,4000,16000", value_delimiter = ',')]
    nodes: Vec<u64>,
    #[arg(long, default_value_t = 2)]
    threads: u32,
}

/// Centipawns, or `None` for mates (left out of the spreads).
fn cp(v: mpcmc::mpc::Value) -> Option<f64> {
    v.centipawns().filter(|c| c.abs() < 1500).map(f64::from)
}

fn spread(xs: &[f64]) -> f64 {
    let n = xs.len().max(1) as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut options = Options {
        threads: args.threads,
        ..Options::default()
    };
    options.set("Evaluator", Some(&args.evaluator))?;
    let pool = Arc::new(Pool::start(options.pool_config()?));
    // The rounds' own values: the options' defaults (`ReplyWeight` too).
    let settings = Settings {
        lookahead: Lookahead::One,
        fortify: false,
        fortify_margin: 0,
        ..options.settings()
    };
    let text = std::fs::read_to_string(&args.epd)?;
    let budgets = args.nodes.len();
    // Per budget: single errors, paired errors, and (gap at n, order right at ref).
    let mut single: Vec<Vec<f64>> = vec![Vec::new(); budgets];
    let mut paired: Vec<Vec<f64>> = vec![Vec::new(); budgets];
    let mut gaps: Vec<Vec<(f64, bool)>> = vec![Vec::new(); budgets];
    for line in text.lines().take(args.positions) {
        let fields: Vec<&str> = line.split_whitespace().take(4).collect();
        let game = Arc::new(Game::from_fen(
            &format!("{} 0 1", fields.join(" ")),
            CastlingMode::Standard,
        )?);
        pool.new_game();
        let moves = game.legal_moves();
        let mut values: Vec<HashMap<GameMove, f64>> = Vec::new();
        for &n in &args.nodes {
            let d = decide(
                &pool,
                &game,
                &moves,
                ChildLimit::Nodes(n),
                settings,
                &CancellationToken::new(),
                &mut |_, _| {},
            )
            .await
            .ok_or_else(|| anyhow::anyhow!("no decision"))?;
            values.push(
                d.candidates
                    .iter()
                    .filter_map(|c| Some((c.mv, cp(c.value?)?)))
                    .collect(),
            );
        }
        let reference = &values[budgets - 1];
        let mut top: Vec<(GameMove, f64)> = reference.iter().map(|(m, v)| (*m, *v)).collect();
        top.sort_by(|a, b| b.1.total_cmp(&a.1));
        top.truncate(5);
        for (b, at) in values.iter().enumerate() {
            for (m, v) in at {
                if let Some(r) = reference.get(m) {
                    single[b].push(v - r);
                }
            }
            for (i, (u, ru)) in top.iter().enumerate() {
                for (w, rw) in &top[i + 1..] {
                    let (Some(vu), Some(vw)) = (at.get(u), at.get(w)) else {
                        continue;
                    };
                    paired[b].push((vu - vw) - (ru - rw));
                    // Oriented so the move that looks better at n comes first.
                    let (gap, right) = if vu >= vw {
                        (vu - vw, ru >= rw)
                    } else {
                        (vw - vu, rw >= ru)
                    };
                    gaps[b].push((gap, right));
                }
            }
        }
        eprint!(".");
    }
    eprintln!();
    println!(
        "evaluator {}, {} positions, reference {} nodes per call",
        args.evaluator,
        args.positions,
        args.nodes[budgets - 1]
    );
    println!(
        "{:>8} {:>8} {:>9} {:>9}  wrong order at the reference when the gap at n is ≥ 0/25/50/100/200 cp",
        "nodes", "moves", "σ single", "σ pair"
    );
    for b in 0..budgets - 1 {
        let wrong = |m: f64| {
            let seen: Vec<bool> = gaps[b]
                .iter()
                .filter(|(g, _)| *g >= m)
                .map(|(_, r)| *r)
                .collect();
            let bad = seen.iter().filter(|r| !**r).count();
            format!(
                "{:.0}%/{}",
                100.0 * bad as f64 / seen.len().max(1) as f64,
                seen.len()
            )
        };
        println!(
            "{:>8} {:>8} {:>9.1} {:>9.1}  {} {} {} {} {}",
            args.nodes[b],
            single[b].len(),
            spread(&single[b]),
            spread(&paired[b]),
            wrong(0.0),
            wrong(25.0),
            wrong(50.0),
            wrong(100.0),
            wrong(200.0),
        );
    }
    if let Ok(pool) = Arc::try_unwrap(pool) {
        pool.shutdown().await;
    }
    Ok(())
}
