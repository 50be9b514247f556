//! `mpcmc bench`: the cost of a decision beyond its child searches.
//!
//! Runs one-step decisions on fixed positions with a fixed `ChildNodes`, at
//! each requested `Threads`, and prints per decision the wall time, the summed
//! child time, the meta overhead and the parallel efficiency. The ideal
//! decision time is the summed child busy time divided by `Threads`; the
//! overhead is what the wall time adds to that.

use std::{
    io::Write,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use mpcmc_protocol::GameMove;
use shakmaty::CastlingMode;
use tokio_util::sync::CancellationToken;

use crate::{
    children::{
        ChildConfig, Pool, PoolConfig,
        simulated::{Network, Searches, simulated},
    },
    mpc::{
        Candidate, ChildLimit, Decision, Game,
        budget::{ROOT_SHARE, node_rounds},
        decide,
        noise::Noise,
        rounds::{Rounds, branching},
    },
    uci::{options::Options, trace},
};

/// Middlegames, an opening and endgames with many and few moves.
pub const POSITIONS: [&str; 6] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "2r3k1/pp3ppp/4p3/3pP3/3P1P2/P3K3/1P4PP/2R5 b - - 0 28",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 1 8",
];

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Nodes per child call (overrides --child-nodes).
    #[arg(long, default_value_t = 5000)]
    nodes: u64,
    /// Comma-separated Threads values to measure (not `--threads`: that
    /// is the `Threads` option's flag).
    #[arg(long = "each-threads", default_value = "1,2", value_delimiter = ',')]
    threads: Vec<usize>,
    /// Node total of the `go nodes` decisions in rounds (0: none).
    #[arg(long, default_value_t = 100_000)]
    total: u64,
    /// Instead: this many slots of simulated children (searches that take
    /// time in proportion to the nodes asked, over a network), to measure
    /// the scheduler at scale.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    simulate: Option<u32>,
    /// The simulated network's round trip, in milliseconds.
    #[arg(long, default_value_t = 2.0)]
    latency_ms: f64,
    /// The simulated children's speed, in nodes a second.
    #[arg(long, default_value_t = 1_000_000)]
    speed: u64,
}

/// Runs the bench, writing its table to `out` (stdout: bench is not a UCI
/// session).
pub async fn run(
    mut options: Options,
    args: BenchArgs,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    options.child_nodes = args.nodes;
    let games: Vec<Arc<Game>> = POSITIONS
        .iter()
        .map(|text| Game::from_fen(text, CastlingMode::Standard).map(Arc::new))
        .collect::<Result<_, _>>()?;
    if let Some(slots) = args.simulate {
        let network = Network {
            speed: args.speed,
            latency: Duration::from_secs_f64(args.latency_ms.max(0.0) / 1000.0),
        };
        return simulate(&options, slots as usize, network, &games, out).await;
    }
    writeln!(
        out,
        "mpcmc bench: evaluator '{}', one-step, ChildNodes {}, Memoryless {}",
        options.evaluator, args.nodes, options.memoryless
    )?;
    // One thread a child: the bench measures how the pool spreads calls
    // over `Threads` workers.
    options.child_threads = 1;
    let mut first_wall: Option<(usize, Duration)> = None;
    for &threads in &args.threads {
        options.threads = threads as u32;
        let pool = Arc::new(Pool::start(options.pool_config()?));
        // Warm-up: children started and networks loaded before timing.
        decision(&pool, &games[0], &options).await;
        writeln!(out, "\nThreads {threads}")?;
        writeln!(
            out,
            "{:>3} {:>5} {:>6} {:>9} {:>9} {:>9} {:>9} {:>6}",
            "pos", "moves", "calls", "wall ms", "busy ms", "search ms", "overhead", "eff"
        )?;
        let (mut wall_sum, mut busy_sum, mut search_sum) =
            (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        for (i, game) in games.iter().enumerate() {
            let (wall, d, moves) = decision(&pool, game, &options).await;
            let stats = d.map(|d| d.stats).unwrap_or_default();
            let ideal = stats.busy_time / threads as u32;
            writeln!(
                out,
                "{:>3} {:>5} {:>6} {:>9.1} {:>9.1} {:>9.1} {:>8.1}% {:>5.1}%",
                i + 1,
                moves,
                stats.calls,
                ms(wall),
                ms(stats.busy_time),
                ms(stats.search_time),
                100.0 * (ms(wall) - ms(ideal)) / ms(ideal).max(1e-9),
                100.0 * ms(ideal) / ms(wall).max(1e-9),
            )?;
            wall_sum += wall;
            busy_sum += stats.busy_time;
            search_sum += stats.search_time;
        }
        let ideal = busy_sum / threads as u32;
        writeln!(
            out,
            "all {:>5} {:>6} {:>9.1} {:>9.1} {:>9.1} {:>8.1}% {:>5.1}%",
            "",
            "",
            ms(wall_sum),
            ms(busy_sum),
            ms(search_sum),
            100.0 * (ms(wall_sum) - ms(ideal)) / ms(ideal).max(1e-9),
            100.0 * ms(ideal) / ms(wall_sum).max(1e-9),
        )?;
        match first_wall {
            None => first_wall = Some((threads, wall_sum)),
            Some((t0, wall0)) => writeln!(
                out,
                "speedup over Threads {t0}: {:.2}x ({:.1}% of linear)",
                ms(wall0) / ms(wall_sum).max(1e-9),
                100.0 * ms(wall0) / ms(wall_sum).max(1e-9) * t0 as f64 / threads as f64
            )?,
        }
        if let Ok(pool) = Arc::try_unwrap(pool) {
            pool.shutdown().await;
        }
    }
    writeln!(
        out,
        "\nbusy = summed child time per call (hash clear + position + search); \
         search = go..bestmove only;\noverhead = wall / (busy / Threads) - 1; eff = (busy / Threads) / wall"
    )?;
    if args.total > 0 {
        options.threads = args.threads.iter().copied().max().unwrap_or(1) as u32;
        rounds(&options, args.total, &games, out).await?;
    }
    Ok(())
}

/// Decisions in rounds (`go nodes total`): how each spread its budget.
async fn rounds(
    options: &Options,
    total: u64,
    games: &[Arc<Game>],
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let pool = Arc::new(Pool::start(options.pool_config()?));
    let noise = Mutex::new(Noise::default());
    writeln!(
        out,
        "\nRounds: go nodes {total}, Threads {} (root search {:.0}%, the rest in rounds)",
        options.threads,
        100.0 * ROOT_SHARE
    )?;
    writeln!(
        out,
        "{:>3} {:>6} {:>6} {:>9} {:>9} {:>6} {:>7}  {:<10} {:>6} {:>6}",
        "pos", "rounds", "calls", "nodes", "wall ms", "top3", "margin", "rule", "move", "root"
    )?;
    let tracing = !options.trace_file.is_empty();
    // With a TraceFile, what the trace costs: building it (on the clock in
    // play: each round's values, then the decision's object) and writing
    // it (after the `bestmove`).
    let (mut built, mut written) = (Duration::ZERO, Duration::ZERO);
    let settings = options.settings();
    for (i, game) in games.iter().enumerate() {
        pool.new_game();
        let moves = game.legal_moves();
        let plan = node_rounds(total, settings, moves.len(), branching(game, moves.len()));
        let mut traced = Vec::new();
        let mut building = Duration::ZERO;
        let start = Instant::now();
        let Some(d) = Rounds::new(
            &pool,
            game,
            &moves,
            plan,
            settings,
            &noise,
            &CancellationToken::new(),
        )
        .decide(&mut |_, _| {}, &mut |r| {
            if tracing {
                let t = Instant::now();
                traced.push(trace::round(r, CastlingMode::Standard));
                building += t.elapsed();
            }
        })
        .await
        else {
            continue;
        };
        let wall = start.elapsed();
        if tracing {
            let t = Instant::now();
            let record = trace::Trace::of(
                &d,
                trace::Context {
                    game,
                    go: format!("go nodes {total}"),
                    settings,
                    rounds: traced,
                    time_ms: wall.as_millis() as u64,
                },
            );
            built += building + t.elapsed();
            let t = Instant::now();
            record.append(std::path::Path::new(&options.trace_file))?;
            written += t.elapsed();
        }
        let spread = d.spread.unwrap_or_default();
        let uci = |m: GameMove| m.to_string();
        writeln!(
            out,
            "{:>3} {:>6} {:>6} {:>9} {:>9.1} {:>5.0}% {:>7}  {:<10} {:>6} {:>6}",
            i + 1,
            spread.rounds,
            d.stats.calls,
            d.stats.nodes,
            ms(wall),
            100.0 * spread.top3_nodes as f64 / spread.lookahead_nodes.max(1) as f64,
            spread.margin,
            format!("{:?}", d.rule),
            uci(d.best),
            d.evaluator_choice.map_or("-".to_owned(), |(m, _)| uci(m)),
        )?;
    }
    writeln!(
        out,
        "top3 = share of the lookahead's nodes spent on the three moves that got the most; \
         margin = what a deviation from the root search's move had to clear (cp)"
    )?;
    if tracing {
        let n = games.len().max(1) as u32;
        writeln!(
            out,
            "TraceFile: {:.0} µs a decision to build (on the clock), {:.0} µs to write (after bestmove)",
            built.as_secs_f64() * 1e6 / f64::from(n),
            written.as_secs_f64() * 1e6 / f64::from(n),
        )?;
    }
    if let Ok(pool) = Arc::try_unwrap(pool) {
        pool.shutdown().await;
    }
    Ok(())
}

/// Decisions over `slots` simulated children on `network`: per decision,
/// the wall time against the critical path (the longest chain of calls
/// that must follow one another: for one-step, the opponent's call then the
/// evaluator's; the root search runs alongside) and how busy the slots
/// were; then the same over all decisions.
async fn simulate(
    options: &Options,
    slots: usize,
    network: Network,
    games: &[Arc<Game>],
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let settings = options.settings();
    let simulated_child = ChildConfig::new("simulated");
    let config = PoolConfig::new(simulated_child.clone(), simulated_child, slots);
    let searches = Searches::default();
    let pool = Arc::new(Pool::start_with(
        config,
        simulated(network, searches.clone()),
    ));
    pool.ready().await;
    let measured = pool.round_trip();
    // Every chain: the first step's plies, then two calls a deeper step.
    let chain = settings.lookahead.plies() + 2 * (settings.lookahead.steps() - 1);
    writeln!(
        out,
        "mpcmc bench --simulate {slots}: {}-step, {} nodes a call at {} nodes/s, \
         round trip {:?} (measured {:.1} ms): a call takes {:.1} ms, a chain of {chain} calls {:.1} ms",
        settings.lookahead.name(),
        options.child_nodes,
        network.speed,
        network.latency,
        ms(measured),
        ms(network.call(options.child_nodes)),
        ms(network.call(options.child_nodes) * chain),
    )?;
    writeln!(
        out,
        "{:>3} {:>5} {:>6} {:>9} {:>9} {:>10} {:>6} {:>6}",
        "pos", "moves", "calls", "wall ms", "critical", "wall/crit", "util", "full"
    )?;
    // Warm-up: the first decision's calls start the children's tasks.
    decision(&pool, &games[0], options).await;
    searches.take();
    let (mut wall_sum, mut critical_sum, mut model_sum) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut busy, mut full) = (Busy::default(), Busy::default());
    const REPEAT: usize = 3;
    for (i, game) in games.iter().enumerate() {
        for _ in 0..REPEAT {
            let start = Instant::now();
            let (wall, d, moves) = decision(&pool, game, options).await;
            let Some(d) = d else {
                continue;
            };
            let stats = d.stats;
            let critical = critical_path(&d, settings.lookahead.plies());
            let logged = searches.take();
            let all = Busy::over(&logged, start, start + wall, slots);
            // While calls outnumber slots (every slot searched at once at
            // some point): until the last search began, every slot should
            // be searching.
            let last_began = logged.iter().map(|s| s.0).max().unwrap_or(start);
            let filled = if most_at_once(&logged) >= slots {
                Busy::over(&logged, start, last_began, slots)
            } else {
                Busy::default()
            };
            writeln!(
                out,
                "{:>3} {:>5} {:>6} {:>9.1} {:>9.1} {:>10.2} {:>5.0}% {:>5.0}%",
                i + 1,
                moves,
                stats.calls,
                ms(wall),
                ms(critical),
                ms(wall) / ms(critical).max(1e-9),
                all.percent().unwrap_or(0.0),
                filled.percent().unwrap_or(f64::NAN),
            )?;
            wall_sum += wall;
            critical_sum += critical;
            model_sum += network.call(options.child_nodes) * chain;
            busy.add(all);
            full.add(filled);
        }
    }
    writeln!(
        out,
        "critical = the longest chain of calls that follow one another (the root search, or a \
         move's opponent call then its evaluator call), each as long as it took;\n\
         util = the slots' search time / (slots × wall); full = the same until the last search \
         began (while calls wait for a slot, or all have one);\n\
         the model's chain = the same calls at the nominal nodes/speed + round trip (a simulated \
         search overshoots it by the timer's millisecond)"
    )?;
    let while_full = full
        .percent()
        .map_or("calls never outnumbered slots".to_owned(), |p| {
            format!("{p:.0} % while calls outnumber slots")
        });
    writeln!(
        out,
        "simulated {slots} slots: wall/critical-path {:.2}, utilisation {:.0} % ({while_full}); \
         wall / the model's chain {:.2}",
        ms(wall_sum) / ms(critical_sum).max(1e-9),
        busy.percent().unwrap_or(0.0),
        ms(wall_sum) / ms(model_sum).max(1e-9),
    )?;
    if let Ok(pool) = Arc::try_unwrap(pool) {
        pool.shutdown().await;
    }
    Ok(())
}

/// The longest chain of calls that had to follow one another, as long as
/// those calls took: the root search, or a move's first-step calls (the
/// opponent's, then the evaluator's) followed by the longest chain of its
/// next step. What a decision cannot beat, however many slots it has.
fn critical_path(d: &Decision, plies: u32) -> Duration {
    fn chain(c: &Candidate, own: usize) -> Duration {
        let mine: Duration = c.calls.iter().take(own).map(|r| r.busy_time).sum();
        mine + c.next.iter().map(|n| chain(n, 2)).max().unwrap_or_default()
    }
    let root = d.root.as_ref().map_or(Duration::ZERO, |r| r.busy_time);
    d.candidates
        .iter()
        .map(|c| chain(c, plies as usize))
        .max()
        .unwrap_or_default()
        .max(root)
}

/// Slot time spent searching, against slot time available.
#[derive(Debug, Clone, Copy, Default)]
struct Busy {
    searching: Duration,
    available: Duration,
}

impl Busy {
    /// The part of `searches` inside `from..to` on `slots` slots.
    fn over(searches: &[(Instant, Instant)], from: Instant, to: Instant, slots: usize) -> Busy {
        let searching = searches
            .iter()
            .map(|&(began, ended)| ended.min(to).saturating_duration_since(began.max(from)))
            .sum();
        Busy {
            searching,
            available: to.saturating_duration_since(from) * slots as u32,
        }
    }

    fn add(&mut self, other: Busy) {
        self.searching += other.searching;
        self.available += other.available;
    }

    /// `None` when no slot time was available.
    fn percent(&self) -> Option<f64> {
        (!self.available.is_zero()).then(|| 100.0 * ms(self.searching) / ms(self.available))
    }
}

/// The most searches that ran at once.
fn most_at_once(searches: &[(Instant, Instant)]) -> usize {
    let mut events: Vec<(Instant, i32)> = searches
        .iter()
        .flat_map(|&(began, ended)| [(began, 1), (ended, -1)])
        .collect();
    // Ends before starts at the same instant.
    events.sort();
    let mut now = 0i32;
    let mut most = 0;
    for (_, step) in events {
        now += step;
        most = most.max(now);
    }
    most.max(0) as usize
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn decision(
    pool: &Arc<Pool>,
    game: &Arc<Game>,
    options: &Options,
) -> (Duration, Option<Decision>, usize) {
    let moves = game.legal_moves();
    let start = Instant::now();
    let d = decide(
        pool,
        game,
        &moves,
        ChildLimit::Nodes(options.child_nodes),
        options.settings(),
        &CancellationToken::new(),
        &mut |_, _| {},
    )
    .await;
    (start.elapsed(), d, moves.len())
}
