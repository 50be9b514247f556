//! Generates a balanced opening set, reproducibly and without downloads.
//!
//! From the start position it plays a random number of random legal plies
//! (`--min-plies`..=`--max-plies`, from a fixed-seed xorshift64* generator),
//! scores the position with a short search of a UCI engine (hash cleared
//! before each search, so a score depends on the position only), and keeps it
//! when the game is not over and |score| ≤ `--threshold` centipawns. Positions
//! are deduplicated by EPD and written in the order they were drawn, one EPD
//! line each (board, side to move, castling, en passant; no move counters).
//! The output is the same for the same seed, engine and node count, whatever
//! `--concurrency`.
//!
//! `tests/data/openings.epd` was made with this command (11 s on 2 cores;
//! 20 s with `--concurrency 1`, which writes the same file):
//!
//! ```text
//! cargo run --release --example gen_openings -- \
//!     --engine /usr/games/stockfish --nodes 20000 --count 200 \
//!     --seed 20240601 --threshold 60 --concurrency 2 \
//!     --out tests/data/openings.epd
//! ```

use std::{collections::HashSet, path::PathBuf, sync::Arc, time::Instant};

use anyhow::{Context, bail};
use clap::Parser;
use mpcmc::{
    children::{ChildConfig, Client, client::QUIT_TIMEOUT},
    mpc::{ChildLimit, Game, Query},
    protocol::ScoreKind,
};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position, fen::Epd};
use tokio_util::sync::CancellationToken;

#[derive(Parser, Debug)]
#[command(about = "Generates a balanced opening set (EPD) with a fixed seed")]
struct Args {
    /// UCI engine command line used to score candidates.
    #[arg(long, default_value = "/usr/games/stockfish")]
    engine: String,
    /// Nodes per scoring search.
    #[arg(long, default_value_t = 20_000)]
    nodes: u64,
    /// Positions to write.
    #[arg(long, default_value_t = 200)]
    count: usize,
    /// Seed of the random plies.
    #[arg(long, default_value_t = 20_240_601)]
    seed: u64,
    /// Fewest random plies from the start position.
    #[arg(long, default_value_t = 6)]
    min_plies: u32,
    /// Most random plies from the start position.
    #[arg(long, default_value_t = 8)]
    max_plies: u32,
    /// Keep positions scored within ± this many centipawns.
    #[arg(long, default_value_t = 60)]
    threshold: i32,
    /// Engines scoring at once (the output does not depend on it).
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Give up after drawing this many candidates.
    #[arg(long, default_value_t = 100_000)]
    max_candidates: usize,
    /// Output file.
    #[arg(long, default_value = "tests/data/openings.epd")]
    out: PathBuf,
}

/// xorshift64* (Vigna): tiny, deterministic, good enough to pick moves.
struct XorShift64Star(u64);

impl XorShift64Star {
    fn new(seed: u64) -> Self {
        // Zero is a fixed point of xorshift; mix the seed (splitmix64 step).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift64Star(if z == 0 { 1 } else { z })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0), by rejection so no value is favoured.
    fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next();
            if x < zone {
                return x % n;
            }
        }
    }
}

/// A random game from the start position, or `None` when it ended early.
fn random_game(rng: &mut XorShift64Star, min: u32, max: u32) -> Option<Game> {
    let plies = min + rng.below(u64::from(max - min + 1)) as u32;
    let mut game = Game::new(None, Chess::default(), CastlingMode::Standard);
    for _ in 0..plies {
        let moves = game.position().expect("a board game").legal_moves();
        if moves.is_empty() {
            return None;
        }
        let m = moves[rng.below(moves.len() as u64) as usize];
        game.push(m);
    }
    game.terminal_now().is_none().then_some(game)
}

/// The position of `game` as a standalone start: from its FEN, not its moves.
fn as_start(game: &Game) -> Game {
    Game::new(
        Some(shakmaty::fen::Fen::from_position(
            game.position().expect("a board game"),
            EnPassantMode::Legal,
        )),
        game.position().expect("a board game").clone(),
        CastlingMode::Standard,
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .init();
    if args.min_plies > args.max_plies {
        bail!("--min-plies is above --max-plies");
    }
    let started = Instant::now();
    let config = ChildConfig {
        options: vec![
            ("Threads".to_owned(), "1".to_owned()),
            ("Hash".to_owned(), "16".to_owned()),
        ],
        // Fresh hash per search: a score depends on the position alone, so
        // the set is reproducible whatever ran before.
        clear_hash: true,
        ..ChildConfig::new(args.engine.clone())
    };
    let workers = args.concurrency.max(1);
    let mut clients = Vec::new();
    for i in 0..workers {
        clients.push(
            Client::spawn(&config, format!("scorer {}", i + 1))
                .await
                .context("starting the engine")?,
        );
    }
    let mut rng = XorShift64Star::new(args.seed);
    let mut seen = HashSet::new();
    let mut kept: Vec<String> = Vec::new();
    let (mut drawn, mut scored) = (0usize, 0usize);
    while kept.len() < args.count {
        if drawn >= args.max_candidates {
            bail!(
                "only {} positions within ±{} cp after {drawn} candidates",
                kept.len(),
                args.threshold
            );
        }
        // A batch of new candidates (in draw order), one per engine.
        let mut batch = Vec::new();
        while batch.len() < workers && drawn < args.max_candidates {
            drawn += 1;
            let Some(game) = random_game(&mut rng, args.min_plies, args.max_plies) else {
                continue;
            };
            let epd =
                Epd::from_position(game.position().expect("a board game"), EnPassantMode::Legal)
                    .to_string();
            if seen.insert(epd.clone()) {
                batch.push((epd, as_start(&game)));
            }
        }
        // One task per candidate, each owning an engine for the search; the
        // answers are read in draw order.
        let mut tasks = Vec::new();
        for (_, game) in &batch {
            let Some(mut client) = clients.pop() else {
                break;
            };
            let query = Query::root(Arc::new(game.clone()), ChildLimit::Nodes(args.nodes));
            tasks.push(tokio::spawn(async move {
                let report = client.search(&query, &CancellationToken::new()).await;
                (client, report)
            }));
        }
        let mut reports = Vec::new();
        for task in tasks {
            let (client, report) = task.await?;
            clients.push(client);
            reports.push(report);
        }
        for ((epd, _), report) in batch.into_iter().zip(reports) {
            scored += 1;
            let report = report.with_context(|| format!("scoring {epd}"))?;
            let balanced = match report.score.map(|v| v.to_uci().kind) {
                Some(ScoreKind::Cp(cp)) => cp.abs() <= args.threshold,
                _ => false,
            };
            if balanced && kept.len() < args.count {
                kept.push(epd);
            }
        }
    }
    for client in clients {
        client.quit(QUIT_TIMEOUT).await;
    }
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut text = kept.join("\n");
    text.push('\n');
    std::fs::write(&args.out, text).with_context(|| format!("writing {}", args.out.display()))?;
    eprintln!(
        "wrote {} positions to {} ({scored} scored, {drawn} drawn, seed {}) in {:.1} s",
        kept.len(),
        args.out.display(),
        args.seed,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
