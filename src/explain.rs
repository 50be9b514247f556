//! `mpcmc explain`: one decision, told to a person.
//!
//! It runs the decision through the very session a GUI talks to (`position`,
//! `go`, then end of input), with `TraceFile` pointed at a file of its own,
//! and prints the trace ([`crate::uci::trace`]): a table of every root move —
//! SAN, the predicted reply, value (and the two scores it mixes), rank and
//! the budget it got — then the
//! chosen move and the rule that chose it; or, with `--json`, the trace
//! object itself.

use std::{
    io::{Cursor, Write},
    sync::{Arc, Mutex},
    time::{SystemTime, UNIX_EPOCH},
};

use anyhow::{Context as _, bail};
use shakmaty::{CastlingMode, Position, san::SanPlus, uci::UciMove, variant::VariantPosition};

use crate::{
    mpc::Game,
    mpc::Rule,
    protocol::{
        MoveText, StartPosition,
        game::Rules,
        output::Output,
        session::{Input, Session, spawn_reader},
    },
    uci::{
        meta::Meta,
        options::Options,
        trace::{CandidateTrace, Score, Trace, draw_text, look_text},
    },
};

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    /// The position, as FEN (default: the start position).
    #[arg(long)]
    fen: Option<String>,
    /// Moves played from it, in UCI notation.
    #[arg(long, num_args = 1.., value_delimiter = ' ')]
    moves: Vec<String>,
    /// The `go` limits, as a GUI sends them after `go` ("nodes 200000",
    /// "movetime 1000"). Empty: a bare `go`, one pass at `ChildNodes` a
    /// call when set, else 10000.
    #[arg(long, default_value = "")]
    go: String,
    /// Print the trace object (JSON) instead of the table.
    #[arg(long)]
    json: bool,
}

/// Lines written to a buffer (the session's stdout).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut v) = self.0.lock() {
            v.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs one decision with `options` and writes what it was to `out`.
pub async fn run(
    mut options: Options,
    args: ExplainArgs,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path = std::env::temp_dir().join(format!(
        "mpcmc-explain-{}-{stamp}.jsonl",
        std::process::id()
    ));
    options.trace_file = path.to_string_lossy().into_owned();
    // A decision to explain, not a move from a book: the level's own
    // openings are off (a `BookFile` the user names still plays, and is
    // said).
    options.level_book = false;
    // The position and the `go` are checked here: the session would say
    // what is wrong in an `info string` and search what it had.
    let game = game_of(
        args.fen.as_deref(),
        &args.moves,
        options.castling_mode(),
        options.variant,
    )?;
    if let Some(end) = game.terminal_now() {
        bail!("the game is over in this position ({end:?}): there is no move to explain");
    }
    let go = format!("go {}", args.go.trim());
    match crate::protocol::parse_gui_line(&go) {
        Ok(parsed) if parsed.problems.is_empty() => {}
        Ok(parsed) => bail!("--go '{}': {}", args.go, parsed.problems[0]),
        Err(e) => bail!("--go '{}': {e}", args.go),
    }
    let position = match &args.fen {
        Some(fen) => format!("position fen {fen}"),
        None => "position startpos".to_owned(),
    };
    let moves = if args.moves.is_empty() {
        String::new()
    } else {
        format!(" moves {}", args.moves.join(" "))
    };
    let script = format!("isready\n{position}{moves}\n{go}\n");
    let captured = Captured::default();
    let (uci_out, writer) =
        Output::start(captured.clone()).context("cannot start the session's output")?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Input>();
    // End of input after the `go`: the session lets the search finish, then
    // ends (and stops its children).
    spawn_reader(Cursor::new(script.into_bytes()), tx).context("cannot start the input reader")?;
    Session::new(Meta::new(options), uci_out).run(rx).await;
    writer.wait(std::time::Duration::from_secs(2));
    let text = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    let session =
        String::from_utf8_lossy(&captured.0.lock().map(|v| v.clone()).unwrap_or_default())
            .into_owned();
    let Some(line) = text.ok().and_then(|t| t.lines().last().map(str::to_owned)) else {
        let said: Vec<&str> = session
            .lines()
            .filter(|l| l.starts_with("info string"))
            .collect();
        bail!(
            "no decision was made; the engine said:\n{}",
            said.join("\n")
        );
    };
    if args.json {
        writeln!(out, "{line}")?;
        return Ok(());
    }
    let trace: Trace = serde_json::from_str(&line).context("the trace line")?;
    table(&trace, out)
}

/// A score as a person reads it: +0.35, -1.20, #3, #-2.
fn show(score: Option<Score>) -> String {
    match score {
        Some(Score::Cp(cp)) => format!("{:+.2}", f64::from(cp) / 100.0),
        Some(Score::Mate(n)) => format!("#{n}"),
        None => "-".to_owned(),
    }
}

/// `uci` as SAN in `pos`, or as it is when it is not legal there or the
/// game is played by a child's rules (`pos` is `None`: its moves are the
/// child's tokens).
fn san(pos: Option<&VariantPosition>, uci: &str) -> (String, Option<VariantPosition>) {
    let Some((pos, m)) = pos.and_then(|pos| {
        let m = uci.parse::<UciMove>().ok()?.to_move(pos).ok()?;
        Some((pos, m))
    }) else {
        return (uci.to_owned(), None);
    };
    let text = SanPlus::from_move(pos.clone(), m).to_string();
    let mut after = pos.clone();
    after.play_unchecked(m);
    (text, Some(after))
}

/// The game of `fen` (the start position when `None`) and `moves`, read as
/// the session reads a `position` command; what it would only note (an
/// illegal move, castling rights dropped) is an error here.
fn game_of(
    fen: Option<&str>,
    moves: &[String],
    castling: CastlingMode,
    variant: Rules,
) -> anyhow::Result<Game> {
    let start = match fen {
        Some(text) => StartPosition::Fen(text.to_owned()),
        None => StartPosition::Startpos,
    };
    let moves = moves
        .iter()
        .map(|m| {
            m.parse::<MoveText>()
                .map_err(|e| anyhow::anyhow!("the move '{m}': {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (game, notes) = Game::from_position_command(start, &moves, castling, variant)
        .map_err(anyhow::Error::msg)?;
    if !notes.is_empty() {
        bail!("{}", notes.join("; "));
    }
    Ok(game)
}

/// The trace as a table of root moves, best first.
fn table(t: &Trace, out: &mut impl Write) -> anyhow::Result<()> {
    let castling = if t.chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    let variant = Rules::from_uci(&t.variant)
        .ok_or_else(|| anyhow::anyhow!("the trace's variant '{}'", t.variant))?;
    let game = game_of(Some(&t.fen), &t.moves, castling, variant)?;
    // A game by a child's rules: its position as the GUI sent it, its
    // moves as the child's tokens.
    let pos = game.position().cloned();
    match &pos {
        Some(pos) => {
            let fen = shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal);
            writeln!(out, "position {fen}")?;
        }
        None if t.moves.is_empty() => writeln!(out, "position {} ({variant})", t.fen)?,
        None => writeln!(
            out,
            "position {} moves {} ({variant})",
            t.fen,
            t.moves.join(" ")
        )?,
    }
    writeln!(
        out,
        "go {}  ({} lookahead, {} step{} complete)",
        t.go.trim_start_matches("go").trim(),
        t.lookahead,
        t.steps,
        if t.steps == 1 { "" } else { "s" }
    )?;
    // The trace's weight is 0 whenever no value was mixed.
    if t.reply_weight > 0 {
        writeln!(
            out,
            "value: {}% the nominal opponent's own score after the move (opp), \
             the rest the evaluator's after the reply (eval); an expanded \
             move's is its deeper step's, eval and opp its first step's",
            t.reply_weight
        )?;
    }
    let model = match &t.person {
        Some(p) => format!(
            "a person rated {} (UCI_Opponent: nodes {} a reply)",
            p.elo, p.nodes
        ),
        None => "the child engine at the calls' budget".to_owned(),
    };
    writeln!(out, "replies predicted by: {model}")?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>4}  {:<8} {:<8} {:>7} {:>7} {:>7}  {:<14} line",
        "rank", "move", "reply", "value", "eval", "opp", "budget"
    )?;
    let mut rows: Vec<&CandidateTrace> = t.candidates.iter().collect();
    rows.sort_by_key(|c| c.rank.unwrap_or(usize::MAX));
    for c in rows {
        let (mv, after) = san(pos.as_ref(), &c.mv);
        let reply = match (&c.reply, &after, &pos) {
            (Some(r), Some(after), _) => san(Some(after), r).0,
            (Some(r), None, None) => r.clone(),
            _ => "-".to_owned(),
        };
        writeln!(
            out,
            "{:>4}  {:<8} {:<8} {:>7} {:>7} {:>7}  {:<14} {}{}{}",
            c.rank.map_or("-".to_owned(), |r| r.to_string()),
            mv,
            reply,
            show(c.value),
            show(c.evaluator_value),
            show(c.reply_value),
            c.budget.as_deref().unwrap_or("-"),
            c.line.join(" "),
            c.one_step_value.map_or(String::new(), |v| format!(
                "  ({} {})",
                // A level's pass is one-step: its values are replaced
                // only by a second look.
                if t.level.is_some() {
                    "a second look's; the pass's"
                } else {
                    "a deeper step: one-step"
                },
                show(Some(v))
            )),
            c.failure
                .as_ref()
                .map_or(String::new(), |f| format!("  ({f})")),
        )?;
    }
    writeln!(out)?;
    if let Some(e) = &t.evaluator {
        writeln!(
            out,
            "evaluator's own search: {} {} (depth {}, {} nodes)",
            san(pos.as_ref(), &e.mv).0,
            show(e.value),
            e.depth,
            e.nodes
        )?;
    }
    if let Some(l) = &t.lookahead_choice {
        writeln!(
            out,
            "lookahead's best: {} {}",
            san(pos.as_ref(), &l.mv).0,
            show(Some(l.value))
        )?;
    }
    writeln!(
        out,
        "chosen: {} ({}), {}: {}",
        san(pos.as_ref(), &t.chosen).0,
        t.chosen,
        t.rule,
        t.rule
            .parse::<Rule>()
            .map_or("a rule this mpcmc does not know", Rule::meaning)
    )?;
    if let Some(l) = &t.level {
        let how = draw_text(l.decided, l.loss, &san(pos.as_ref(), &l.best).0);
        writeln!(out, "level: {} ({how})", l.elo)?;
        for look in &l.looks {
            let deeper = look.deeper.map(|v| show(Some(v)));
            let mv = san(pos.as_ref(), &look.mv).0;
            let value = show(Some(look.value));
            let against = look
                .against
                .as_ref()
                .map(|b| (san(pos.as_ref(), &b.mv).0, show(Some(b.value))));
            let text = look_text(&mv, &value, deeper.as_deref(), against, look.refuted);
            writeln!(out, "  {text}")?;
        }
    }
    writeln!(
        out,
        "cost: {} calls, {} nodes, {} ms",
        t.calls, t.nodes, t.time_ms
    )?;
    Ok(())
}
