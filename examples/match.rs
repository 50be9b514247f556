//! Plays a match between two UCI engines from a set of openings and reports
//! W/D/L, score and Elo difference (with a 95 % interval), time forfeits and
//! illegal moves per engine; optionally writes the games as PGN.
//!
//! ```text
//! cargo run --release --example match -- \
//!     --engine1 /usr/games/stockfish --engine2 /usr/games/stockfish \
//!     --options2 "Skill Level=0" --games 10 --nodes 2000 --concurrency 2 \
//!     --pgn /tmp/test.pgn
//! cargo run --release --example match -- \
//!     --engine1 "target/release/mpcmc --child-nodes 5000" \
//!     --engine2 /usr/games/stockfish --tc 10+0.1 --games 20
//! ```
//!
//! Each opening is played twice, colours swapped (game 1: engine1 white,
//! game 2: engine2 white, both from opening 1; then opening 2, …), cycling
//! through the openings when there are more games than pairs. Every game gets
//! fresh engine processes, so nothing carries over from one game to the next
//! (that stands in for `ucinewgame`). The clock is kept here, from the wall
//! time around each search (pipes included), as a GUI would: an engine that
//! overruns its clock loses on time, one that answers an illegal move loses by
//! it, one that dies or stalls loses too. The rules (mate, stalemate,
//! insufficient material, threefold, fifty moves) are applied by the match,
//! plus a draw at `--max-plies`.

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    fs::File,
    io::Write as _,
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use anyhow::{Context, bail};
use clap::{ArgGroup, Parser};
use mpcmc::{
    children::{
        ChildConfig, ChildError, Client, SearchError, assembly::parse_child_options,
        client::QUIT_TIMEOUT,
    },
    mpc::{ChildLimit, Game, Query, Report, Terminal, VariantEnd},
    protocol::ScoreKind,
};
use shakmaty::{
    CastlingMode, Chess, Color, Position,
    fen::{Epd, Fen},
    san::SanPlus,
};
use tokio_util::sync::CancellationToken;

#[derive(Parser, Debug)]
#[command(about = "Plays a match between two UCI engines")]
#[command(group(ArgGroup::new("limit").required(true).args(["nodes", "movetime", "tc"])))]
struct Args {
    /// First engine's command line (split by shell-words rules, no shell).
    #[arg(long)]
    engine1: String,
    /// Second engine's command line.
    #[arg(long)]
    engine2: String,
    /// First engine's name in reports and PGN (default: its `id name`).
    #[arg(long)]
    name1: Option<String>,
    /// Second engine's name (default: its `id name`).
    #[arg(long)]
    name2: Option<String>,
    /// UCI options of the first engine: `Name=Value;Name=Value`.
    #[arg(long, default_value = "")]
    options1: String,
    /// UCI options of the second engine.
    #[arg(long, default_value = "")]
    options2: String,
    /// EPD file, one opening a line (the first four fields are used).
    #[arg(long, default_value = "tests/data/openings.epd")]
    openings: PathBuf,
    /// Games to play (default: every opening once with each colour).
    #[arg(long)]
    games: Option<usize>,
    /// Fixed nodes per move (`go nodes N`).
    #[arg(long)]
    nodes: Option<u64>,
    /// Fixed time per move in milliseconds (`go movetime MS`).
    #[arg(long)]
    movetime: Option<u64>,
    /// Game clock: `seconds+increment`, e.g. `10+0.1` (or `60` for no increment).
    #[arg(long, value_parser = parse_tc)]
    tc: Option<TimeControl>,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Write the games here as PGN.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// `Hash` in MB for both engines (sent when the engine declares it; an
    /// explicit `Hash=` in the options wins).
    #[arg(long, default_value_t = 16)]
    hash: u32,
    /// Adjudicate a draw after this many plies.
    #[arg(long, default_value_t = 400)]
    max_plies: usize,
    /// PGN `Event` tag.
    #[arg(long, default_value = "mpcmc match")]
    event: String,
    /// Log level of the engine client on stderr (error, warn, info, debug, trace).
    #[arg(long, default_value = "warn")]
    log: tracing::Level,
}

#[derive(Debug, Clone, Copy)]
struct TimeControl {
    base: Duration,
    inc: Duration,
}

impl TimeControl {
    /// The PGN `TimeControl` tag: `10+0.1`.
    fn tag(self) -> String {
        let inc = self.inc.as_secs_f64();
        if inc > 0.0 {
            format!("{}+{}", self.base.as_secs_f64(), inc)
        } else {
            format!("{}", self.base.as_secs_f64())
        }
    }
}

fn parse_tc(text: &str) -> Result<TimeControl, String> {
    let seconds = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| format!("'{s}' is not a number of seconds (want e.g. 10+0.1)"))
    };
    let (base, inc) = match text.split_once('+') {
        Some((base, inc)) => (seconds(base)?, seconds(inc)?),
        None => (seconds(text)?, Duration::ZERO),
    };
    if base.is_zero() {
        return Err("the clock must start above zero".to_owned());
    }
    Ok(TimeControl { base, inc })
}

/// How each move is limited.
#[derive(Debug, Clone, Copy)]
enum Limit {
    Nodes(u64),
    MoveTime(Duration),
    Clock(TimeControl),
}

impl Limit {
    fn describe(self) -> String {
        match self {
            Limit::Nodes(n) => format!("{n} nodes/move"),
            Limit::MoveTime(t) => format!("{} ms/move", t.as_millis()),
            Limit::Clock(tc) => format!("clock {}", tc.tag()),
        }
    }
}

/// One side of the match.
#[derive(Debug, Clone)]
struct Player {
    name: String,
    config: ChildConfig,
}

/// A start position from the openings file.
#[derive(Debug, Clone)]
struct Opening {
    fen: Fen,
    pos: Chess,
}

fn load_openings(path: &PathBuf) -> anyhow::Result<Vec<Opening>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut openings = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // EPD: board, side, castling, en passant; operations (`bm …; id …;`)
        // may follow and are ignored.
        let fields: Vec<&str> = line.split_whitespace().take(4).collect();
        let epd: Epd = fields
            .join(" ")
            .parse()
            .with_context(|| format!("{}:{}: not an EPD: {line}", path.display(), n + 1))?;
        let pos: Chess = epd
            .clone()
            .into_position(CastlingMode::Standard)
            .with_context(|| format!("{}:{}: illegal position: {line}", path.display(), n + 1))?;
        openings.push(Opening {
            fen: Fen::from(epd),
            pos,
        });
    }
    if openings.is_empty() {
        bail!("{} holds no openings", path.display());
    }
    Ok(openings)
}

/// Starts the engine once before the match: it must start, and must declare
/// every option it is given (a typo would silently change the match). Returns
/// the engine with `Hash` added and its `id name`.
async fn probe(command: &str, options: &str, hash: u32, which: usize) -> anyhow::Result<Player> {
    let options =
        parse_child_options(options).map_err(|e| anyhow::anyhow!("--options{which}: want {e}"))?;
    let mut config = ChildConfig::new(command);
    let client = Client::spawn(&config, format!("engine{which}"))
        .await
        .with_context(|| format!("starting engine{which}"))?;
    let declares = |name: &str| {
        client
            .options
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case(name))
    };
    for (name, _) in &options {
        if !declares(name) {
            let known: Vec<&str> = client.options.iter().map(|o| o.name.as_str()).collect();
            bail!(
                "engine{which} has no option '{name}' (it declares: {})",
                known.join(", ")
            );
        }
    }
    if declares("Hash") {
        config.options.push(("Hash".to_owned(), hash.to_string()));
    }
    config.options.extend(options);
    let name = client.name.clone().unwrap_or_else(|| command.to_owned());
    client.quit(QUIT_TIMEOUT).await;
    Ok(Player { name, config })
}

/// How a game ended badly for one engine (index 0 = engine1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Time,
    Illegal,
    Failure,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Win(Color),
    Draw,
}

impl Outcome {
    fn pgn(self) -> &'static str {
        match self {
            Outcome::Win(Color::White) => "1-0",
            Outcome::Win(Color::Black) => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }
}

/// A move as played, for the PGN comment.
#[derive(Debug, Clone)]
struct Played {
    report: Report,
    elapsed: Duration,
}

/// A finished game.
#[derive(Debug)]
struct Record {
    /// 0-based game number.
    index: usize,
    opening: usize,
    /// Engine index (0 = engine1) playing white.
    white: usize,
    outcome: Outcome,
    /// Why it ended, for people: `white is checkmated`.
    reason: String,
    /// PGN `Termination`: normal, time forfeit, rules infraction, adjudication.
    termination: &'static str,
    /// The kind of ending, for the summary: `checkmate`, `time forfeit`, ….
    ending: &'static str,
    /// An engine's fault that decided the game: (engine index, fault).
    fault: Option<(usize, Fault)>,
    game: Game,
    played: Vec<Played>,
    /// Thinking time and moves per engine index.
    think: [(Duration, u32); 2],
}

impl Record {
    /// Engine1's result: 0 win, 1 draw, 2 loss.
    fn wdl1(&self) -> usize {
        match self.outcome {
            Outcome::Draw => 1,
            Outcome::Win(Color::White) if self.white == 0 => 0,
            Outcome::Win(Color::Black) if self.white == 1 => 0,
            Outcome::Win(_) => 2,
        }
    }
}

fn colour_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

struct Setup {
    engines: [Player; 2],
    openings: Vec<Opening>,
    limit: Limit,
    max_plies: usize,
}

/// The game when the engine playing `loser` did not start: it loses.
async fn no_start(mut record: Record, loser: Color, e: ChildError, other: Client) -> Record {
    other.quit(QUIT_TIMEOUT).await;
    let engine = if loser == Color::White {
        record.white
    } else {
        1 - record.white
    };
    record.outcome = Outcome::Win(!loser);
    record.reason = format!(
        "{} loses, its engine did not start: {e}",
        colour_name(loser)
    );
    record.termination = "abandoned";
    record.ending = "engine failure";
    record.fault = Some((engine, Fault::Failure));
    record
}

/// Plays game `index`. Fails only when neither engine starts.
async fn play_game(setup: &Setup, index: usize) -> anyhow::Result<Record> {
    let opening = (index / 2) % setup.openings.len();
    let white = index % 2; // engine index playing white
    let by_colour = [white, 1 - white];
    let start = &setup.openings[opening];
    let mut game = Game::new(
        Some(start.fen.clone()),
        start.pos.clone(),
        CastlingMode::Standard,
    );
    let mut record = Record {
        index,
        opening,
        white,
        outcome: Outcome::Draw,
        reason: String::new(),
        termination: "normal",
        ending: "",
        fault: None,
        game: game.clone(),
        played: Vec::new(),
        think: [(Duration::ZERO, 0); 2],
    };
    let spawn = |colour: usize| {
        let engine = by_colour[colour];
        Client::spawn(
            &setup.engines[engine].config,
            format!("engine{} game {}", engine + 1, index + 1),
        )
    };
    let (w, b) = tokio::join!(spawn(0), spawn(1));
    let mut clients = match (w, b) {
        (Ok(w), Ok(b)) => [w, b],
        (Err(e), Err(_)) => bail!("game {}: neither engine started: {e}", index + 1),
        (Err(e), Ok(other)) => return Ok(no_start(record, Color::White, e, other).await),
        (Ok(other), Err(e)) => return Ok(no_start(record, Color::Black, e, other).await),
    };
    let mut clock = match setup.limit {
        Limit::Clock(tc) => [tc.base; 2],
        _ => [Duration::ZERO; 2],
    };
    loop {
        if let Some(terminal) = game.terminal_now() {
            let mover = game.position().expect("a board game").turn();
            (record.outcome, record.ending) = match terminal {
                Terminal::Checkmate => (Outcome::Win(!mover), "checkmate"),
                Terminal::Stalemate => (Outcome::Draw, "stalemate"),
                Terminal::InsufficientMaterial => (Outcome::Draw, "insufficient material"),
                Terminal::FiftyMoves => (Outcome::Draw, "fifty-move rule"),
                Terminal::Threefold => (Outcome::Draw, "threefold repetition"),
                Terminal::Variant(VariantEnd::Won) => (Outcome::Win(mover), "variant win"),
                Terminal::Variant(VariantEnd::Lost) => (Outcome::Win(!mover), "variant loss"),
                Terminal::Variant(VariantEnd::Drawn) => (Outcome::Draw, "variant draw"),
            };
            record.reason = match terminal {
                Terminal::Checkmate => format!("{} is checkmated", colour_name(mover)),
                _ => record.ending.to_owned(),
            };
            break;
        }
        if game.moves().len() >= setup.max_plies {
            record.outcome = Outcome::Draw;
            record.reason = format!("adjudicated draw at {} plies", setup.max_plies);
            record.termination = "adjudication";
            record.ending = "move limit";
            break;
        }
        let mover = game.position().expect("a board game").turn();
        let side = if mover == Color::White { 0 } else { 1 };
        let engine = by_colour[side];
        let limit = match setup.limit {
            Limit::Nodes(n) => ChildLimit::Nodes(n),
            Limit::MoveTime(t) => ChildLimit::MoveTime(t),
            Limit::Clock(tc) => ChildLimit::Clock {
                wtime: clock[0],
                btime: clock[1],
                winc: tc.inc,
                binc: tc.inc,
                movestogo: None,
            },
        };
        let query = Query::root(Arc::new(game.clone()), limit);
        let cancel = CancellationToken::new();
        // On a clock, stop the search when the flag falls: the game is lost
        // then, however long the engine would go on.
        let timer = matches!(setup.limit, Limit::Clock(_)).then(|| {
            let cancel = cancel.clone();
            let remaining = clock[side];
            tokio::spawn(async move {
                tokio::time::sleep(remaining + Duration::from_millis(1)).await;
                cancel.cancel();
            })
        });
        let started = Instant::now();
        let answer = clients[side].search(&query, &cancel).await;
        let elapsed = started.elapsed();
        if let Some(timer) = timer {
            timer.abort();
        }
        record.think[engine].0 += elapsed;
        record.think[engine].1 += 1;
        let fault = if let Limit::Clock(tc) = setup.limit {
            if elapsed > clock[side] {
                Some((Fault::Time, format!("{} loses on time", colour_name(mover))))
            } else {
                clock[side] = clock[side] - elapsed + tc.inc;
                None
            }
        } else {
            None
        };
        let fault = fault.or_else(|| match &answer {
            Ok(_) => None,
            Err(e @ SearchError::Child(ChildError::BadAnswer { .. })) => Some((
                Fault::Illegal,
                format!("{} loses by an illegal move: {e}", colour_name(mover)),
            )),
            Err(e) => Some((
                Fault::Failure,
                format!("{} loses, its engine failed: {e}", colour_name(mover)),
            )),
        });
        if let Some((fault, reason)) = fault {
            record.fault = Some((engine, fault));
            (record.termination, record.ending) = match fault {
                Fault::Time => ("time forfeit", "time forfeit"),
                Fault::Illegal => ("rules infraction", "illegal move"),
                Fault::Failure => ("abandoned", "engine failure"),
            };
            // A flag fall against a side that cannot mate by any sequence of
            // legal moves is a draw.
            if fault == Fault::Time
                && game
                    .position()
                    .expect("a board game")
                    .has_insufficient_material(!mover)
            {
                record.outcome = Outcome::Draw;
                record.ending = "time forfeit, no mating material";
                record.reason = format!("{reason}, but {} cannot mate", colour_name(!mover));
            } else {
                record.outcome = Outcome::Win(!mover);
                record.reason = reason;
            }
            break;
        }
        let Ok(report) = answer else { break };
        let Some(best) = report.best else { break };
        game.push(best);
        record.played.push(Played { report, elapsed });
    }
    record.game = game;
    let [a, b] = clients;
    tokio::join!(a.quit(QUIT_TIMEOUT), b.quit(QUIT_TIMEOUT));
    Ok(record)
}

/// Today as `YYYY.MM.DD` (UTC).
fn pgn_date() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0) as i64;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

/// `{+0.35/12 0.123s}` from the mover's side, cutechess style.
fn move_comment(played: &Played) -> String {
    let score = match played.report.score.map(|v| v.to_uci().kind) {
        Some(ScoreKind::Cp(cp)) => format!("{:+.2}", f64::from(cp) / 100.0),
        Some(ScoreKind::Mate(n)) if n > 0 => format!("+M{n}"),
        Some(ScoreKind::Mate(n)) => format!("-M{}", -n),
        None => "?".to_owned(),
    };
    format!(
        "{{{score}/{} {:.3}s}}",
        played.report.depth,
        played.elapsed.as_secs_f64()
    )
}

fn pgn(setup: &Setup, record: &Record, event: &str, date: &str) -> String {
    let white = &setup.engines[record.white].name;
    let black = &setup.engines[1 - record.white].name;
    let result = record.outcome.pgn();
    let start = record.game.start().expect("a chess game");
    let mut out = String::new();
    let mut tag = |name: &str, value: &str| {
        let value = value.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(out, "[{name} \"{value}\"]");
    };
    tag("Event", event);
    tag("Site", "?");
    tag("Date", date);
    tag("Round", &(record.index + 1).to_string());
    tag("White", white);
    tag("Black", black);
    tag("Result", result);
    let fen = Fen::from_position(start, shakmaty::EnPassantMode::Legal).to_string();
    tag("FEN", &fen);
    tag("SetUp", "1");
    tag("PlyCount", &record.game.moves().len().to_string());
    tag("Termination", record.termination);
    if let Limit::Clock(tc) = setup.limit {
        tag("TimeControl", &tc.tag());
    }
    tag("Opening", &format!("#{}", record.opening + 1));
    out.push('\n');

    // Movetext, wrapped below 80 columns.
    let mut tokens: Vec<String> = Vec::new();
    let mut pos = start.clone();
    for (i, m) in record.game.moves().iter().enumerate() {
        let number = pos.fullmoves().get();
        if pos.turn() == Color::White {
            tokens.push(format!("{number}."));
        } else if i == 0 {
            tokens.push(format!("{number}..."));
        }
        let Some(m) = m.board() else { break };
        tokens.push(SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
        if let Some(played) = record.played.get(i) {
            tokens.push(move_comment(played));
        }
    }
    tokens.push(format!("{{{}}}", record.reason.replace('}', ")")));
    tokens.push(result.to_owned());
    let mut line = String::new();
    for token in tokens {
        if !line.is_empty() && line.len() + 1 + token.len() > 79 {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&token);
    }
    out.push_str(&line);
    out.push_str("\n\n");
    out
}

/// Elo difference for a score fraction `p` (0 < p < 1).
fn elo(p: f64) -> f64 {
    -400.0 * (1.0 / p - 1.0).log10()
}

fn fmt_elo(e: f64) -> String {
    if e.is_infinite() {
        if e > 0.0 { "+inf" } else { "-inf" }.to_owned()
    } else {
        // `+ 0.0` turns -0.0 into 0.0.
        format!("{:+.1}", e + 0.0)
    }
}

/// The Elo line: estimate and 95 % interval from the per-game scores. A
/// perfect (or null) score has no finite estimate; its bound then comes from
/// the exact binomial (Clopper-Pearson) bound for `n` wins out of `n`.
fn elo_summary(scores: &[f64]) -> String {
    let n = scores.len() as f64;
    if scores.is_empty() {
        return "no games".to_owned();
    }
    let p = scores.iter().sum::<f64>() / n;
    if p >= 1.0 || p <= 0.0 {
        let bound = elo(0.025f64.powf(1.0 / n));
        return if p >= 1.0 {
            format!("+inf (95 %: > {})", fmt_elo(bound))
        } else {
            format!("-inf (95 %: < {})", fmt_elo(-bound))
        };
    }
    let variance = scores.iter().map(|s| (s - p) * (s - p)).sum::<f64>() / n;
    let se = (variance / n).sqrt();
    let at = |q: f64| {
        if q <= 0.0 {
            f64::NEG_INFINITY
        } else if q >= 1.0 {
            f64::INFINITY
        } else {
            elo(q)
        }
    };
    let (lo, hi) = (at(p - 1.96 * se), at(p + 1.96 * se));
    let half = (hi - lo) / 2.0;
    let plus_minus = if half.is_finite() {
        format!(" ± {half:.1}")
    } else {
        String::new()
    };
    format!(
        "{}{plus_minus} (95 %: [{}, {}])",
        fmt_elo(elo(p)),
        fmt_elo(lo),
        fmt_elo(hi)
    )
}

/// Running totals, from engine1's point of view.
#[derive(Default)]
struct Tally {
    /// (wins, draws, losses) for engine1: all games, as white, as black.
    all: [u32; 3],
    as_white: [u32; 3],
    as_black: [u32; 3],
    scores: Vec<f64>,
    faults: [BTreeMap<&'static str, u32>; 2],
    endings: BTreeMap<&'static str, u32>,
    think: [(Duration, u32); 2],
}

impl Tally {
    fn add(&mut self, record: &Record) {
        let k = record.wdl1();
        self.all[k] += 1;
        if record.white == 0 {
            self.as_white[k] += 1;
        } else {
            self.as_black[k] += 1;
        }
        self.scores.push([1.0, 0.5, 0.0][k]);
        if let Some((engine, fault)) = record.fault {
            let name = match fault {
                Fault::Time => "time forfeits",
                Fault::Illegal => "illegal moves",
                Fault::Failure => "engine failures",
            };
            *self.faults[engine].entry(name).or_default() += 1;
        }
        *self.endings.entry(record.ending).or_default() += 1;
        for e in 0..2 {
            self.think[e].0 += record.think[e].0;
            self.think[e].1 += record.think[e].1;
        }
    }

    fn wdl(t: [u32; 3]) -> String {
        format!("+{} ={} -{}", t[0], t[1], t[2])
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(args.log)
        .init();
    let limit = match (args.nodes, args.movetime, args.tc) {
        (Some(n), _, _) => Limit::Nodes(n),
        (_, Some(ms), _) => Limit::MoveTime(Duration::from_millis(ms)),
        (_, _, Some(tc)) => Limit::Clock(tc),
        _ => bail!("give one of --nodes, --movetime, --tc"),
    };
    let openings = load_openings(&args.openings)?;
    let games = args.games.unwrap_or(2 * openings.len());
    let (mut e1, mut e2) = tokio::try_join!(
        probe(&args.engine1, &args.options1, args.hash, 1),
        probe(&args.engine2, &args.options2, args.hash, 2)
    )?;
    if let Some(n) = args.name1 {
        e1.name = n;
    }
    if let Some(n) = args.name2 {
        e2.name = n;
    }
    if e1.name == e2.name {
        e1.name.push_str(" #1");
        e2.name.push_str(" #2");
    }
    let setup = Arc::new(Setup {
        engines: [e1, e2],
        openings,
        limit,
        max_plies: args.max_plies,
    });
    let [n1, n2] = [&setup.engines[0].name, &setup.engines[1].name];
    println!(
        "{n1} vs {n2}: {games} games, {}, {} openings from {}, {} at once",
        limit.describe(),
        setup.openings.len(),
        args.openings.display(),
        args.concurrency.max(1)
    );
    for (i, e) in setup.engines.iter().enumerate() {
        let options: Vec<String> = e
            .config
            .options
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        println!(
            "  engine{}: {} = '{}' [{}]",
            i + 1,
            e.name,
            e.config.command,
            options.join(";")
        );
    }

    let mut pgn_file = match &args.pgn {
        Some(path) => {
            Some(File::create(path).with_context(|| format!("creating {}", path.display()))?)
        }
        None => None,
    };
    let date = pgn_date();
    let started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..args.concurrency.clamp(1, games.max(1)) {
        let (setup, next, tx) = (setup.clone(), next.clone(), tx.clone());
        tokio::spawn(async move {
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= games {
                    break;
                }
                let record = play_game(&setup, index).await;
                let failed = record.is_err();
                if tx.send(record).is_err() || failed {
                    break;
                }
            }
        });
    }
    drop(tx);

    let mut tally = Tally::default();
    while let Some(record) = rx.recv().await {
        let record = record?;
        tally.add(&record);
        let white = &setup.engines[record.white].name;
        let black = &setup.engines[1 - record.white].name;
        println!(
            "game {:>w$}/{games} opening {:>3}  {white} - {black}  {:<7} {:>3} plies  [{n1}: {}]  {}",
            record.index + 1,
            record.opening + 1,
            record.outcome.pgn(),
            record.game.moves().len(),
            Tally::wdl(tally.all),
            record.reason,
            w = games.to_string().len(),
        );
        if let Some(file) = &mut pgn_file {
            file.write_all(pgn(&setup, &record, &args.event, &date).as_bytes())
                .context("writing the PGN")?;
            file.flush().context("writing the PGN")?;
        }
    }

    let played = tally.scores.len();
    let points: f64 = tally.scores.iter().sum();
    println!();
    println!(
        "Score of {n1} vs {n2}: {} - {} - {} [W-L-D] {:.1}/{played} = {:.1} %",
        tally.all[0],
        tally.all[2],
        tally.all[1],
        points,
        if played > 0 {
            100.0 * points / played as f64
        } else {
            0.0
        }
    );
    println!(
        "{n1} as white {}, as black {}",
        Tally::wdl(tally.as_white),
        Tally::wdl(tally.as_black)
    );
    println!("Elo difference: {}", elo_summary(&tally.scores));
    for (i, name) in [n1, n2].into_iter().enumerate() {
        let get = |k: &str| tally.faults[i].get(k).copied().unwrap_or(0);
        let (think, moves) = tally.think[i];
        println!(
            "{name}: time forfeits {}, illegal moves {}, engine failures {}, {:.1} ms/move over {moves} moves",
            get("time forfeits"),
            get("illegal moves"),
            get("engine failures"),
            if moves > 0 {
                think.as_secs_f64() * 1000.0 / f64::from(moves)
            } else {
                0.0
            }
        );
    }
    let endings: Vec<String> = tally
        .endings
        .iter()
        .map(|(r, n)| format!("{r} {n}"))
        .collect();
    println!("Endings: {}", endings.join(", "));
    println!("{played} games in {:.1} s", started.elapsed().as_secs_f64());
    if let Some(path) = &args.pgn {
        println!("PGN: {}", path.display());
    }
    Ok(())
}
