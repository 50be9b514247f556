//! The games mpcmc knows by their `UCI_Variant` name only (xiangqi, shogi,
//! makruk and the other [`Rules::NAMED`]): the child lists the legal moves
//! and ends the game, the lookahead runs over its move tokens, and pyffish
//! (Fairy-Stockfish's rules as a Python package, apart from the child
//! mpcmc asks) referees whole games. CI installs Fairy-Stockfish and
//! pyffish (`scripts/test`); without them these tests fail.

mod common;

use std::{collections::BTreeSet, process::Command};

use common::{Mpcmc, SECOND, children_of, fairy_stockfish, referee};
use mpcmc::protocol::game::Rules;

/// mpcmc over Fairy-Stockfish, as one command line.
fn over_fairy_stockfish() -> String {
    format!(
        "{} --evaluator={fsf} --opponent={fsf}",
        env!("CARGO_BIN_EXE_mpcmc"),
        fsf = fairy_stockfish()
    )
}

/// Plays a game of each of `variants` through `tests/python/named_games.py`
/// (mpcmc over Fairy-Stockfish against Fairy-Stockfish, up to `plies`);
/// returns its report.
fn play(plies: usize, variants: &[&str]) -> String {
    let mut args = vec![
        over_fairy_stockfish(),
        fairy_stockfish().to_owned(),
        plies.to_string(),
    ];
    args.extend(variants.iter().map(|v| v.to_string()));
    referee("named_games.py", &args, "named games: ok", variants)
}

/// Every game offered, 40 plies each: every move of mpcmc's on pyffish's
/// list.
#[test]
fn every_named_game_is_played_legally() {
    let report = play(40, &Rules::NAMED);
    eprintln!("{report}");
}

/// Xiangqi and minishogi, long games: every move legal for up to 300
/// plies (the referee stops a game where pyffish ends it; whether one ends
/// is not asserted: the end itself is pinned down by
/// `a_stalemate_in_xiangqi_is_a_win`).
#[test]
fn xiangqi_and_minishogi_long_games_are_legal() {
    let report = play(300, &["xiangqi", "minishogi"]);
    eprintln!("{report}");
}

/// mpcmc over Fairy-Stockfish, set to play `variant`.
fn playing(variant: &str) -> Mpcmc {
    let fsf = format!("--evaluator={}", fairy_stockfish());
    let opponent = format!("--opponent={}", fairy_stockfish());
    let mut e = Mpcmc::start(&[&fsf, &opponent]);
    e.handshake();
    e.send(&format!("setoption name UCI_Variant value {variant}"));
    e
}

/// In xiangqi a side without a move has lost, in check or not: red wins by
/// stalemating (`g2f2`, `a9f9`) as by mating (`g2g10`) — a chess engine's
/// rules would call two of them draws. The child's `bestmove (none)`
/// after each says so, and mpcmc plays one and calls it a mate.
#[test]
fn a_stalemate_in_xiangqi_is_a_win() {
    let mut e = playing("xiangqi");
    e.send("position fen 4k4/R8/9/9/9/9/9/9/6R2/3K5 w - - 0 1");
    e.send("go nodes 20000");
    let (mv, lines) = e.bestmove(60 * SECOND);
    assert!(
        ["g2f2", "a9f9", "g2g10"].contains(&mv.as_str()),
        "{mv}: {lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info") && l.contains("score mate 1")),
        "{lines:#?}"
    );
    // The position after it has no move: no move, and the game lost.
    let over = "position fen 4k4/R8/9/9/9/9/9/9/6R2/3K5 w - - 0 1 moves g2f2";
    e.assert_lost_at(over);
    // Pondering there, the answer still waits for `ponderhit`.
    e.send(over);
    e.send("go ponder nodes 1000");
    e.silent("bestmove", 2 * SECOND);
    e.send("ponderhit");
    let (mv, lines) = e.bestmove(30 * SECOND);
    assert_eq!(mv, "(none)", "{lines:#?}");
    e.quit();
}

/// The Fairy-Stockfish processes under `pid` (through supervisors).
fn engines_under(pid: u32) -> BTreeSet<u32> {
    let mut found = BTreeSet::new();
    let mut todo = children_of(pid);
    while let Some(p) = todo.pop() {
        let name = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
        if name.trim() == "fairy-stockfish" {
            found.insert(p);
        }
        todo.extend(children_of(p));
    }
    found
}

/// The child that lists a named game's moves starts with the pool at
/// `isready`, so the first move's clock pays nothing for it: the first
/// `go` starts no engine.
#[test]
fn the_rules_child_starts_at_isready() {
    let mut e = playing("xiangqi");
    e.send("isready");
    e.until("readyok", 30 * SECOND);
    let ready = engines_under(e.pid());
    // The pool's child (both roles: one command) and the rules child.
    assert_eq!(ready.len(), 2, "{ready:?}");
    e.send("position startpos moves h3h10");
    e.send("go nodes 2000");
    let (mv, lines) = e.bestmove(60 * SECOND);
    assert_ne!(mv, "(none)", "{lines:#?}");
    assert_eq!(
        engines_under(e.pid()),
        ready,
        "the first go started an engine"
    );
    e.quit();
}

/// A move the child does not list is said, and the position stops before
/// it; the next position is searched as the GUI sends it.
#[test]
fn a_move_the_child_does_not_list_is_refused() {
    let mut e = playing("shogi");
    e.send("position startpos moves c3c4 z9z9 e7e6");
    e.send("go nodes 3000");
    let (mv, lines) = e.bestmove(60 * SECOND);
    assert!(
        lines.iter().any(|l| l.starts_with("info string")
            && l.contains("'z9z9' (move 2)")
            && l.contains("position set to the moves before it")),
        "{lines:#?}"
    );
    // Black to move after c3c4: a black move (ranks 7 to 9, or a drop).
    let legal = pyffish_legal_moves("shogi", &["c3c4"]);
    assert!(legal.contains(&mv), "{mv} not in {legal:?}");
    e.quit();
}

/// Without a child that plays it, a named game is refused once and every
/// `go` is answered with no move: the built-in engine knows only chess and
/// shakmaty's variants (and `mpcmc engine` does not offer the others).
#[test]
fn a_named_game_without_its_child_is_refused() {
    let mut e = Mpcmc::start(&[]);
    e.handshake();
    e.send("setoption name UCI_Variant value xiangqi");
    e.send("isready");
    let lines = e.until("readyok", 15 * SECOND);
    assert!(
        lines.iter().any(|l| l.starts_with("info string")
            && l.contains("UCI_Variant xiangqi refused")
            && l.contains("no engine here plays it")),
        "{lines:#?}"
    );
    e.send("position startpos moves h3e3");
    e.send("go nodes 1000");
    let (mv, lines) = e.bestmove(30 * SECOND);
    assert_eq!(mv, "(none)", "{lines:#?}");
    // `go infinite` answers only at `stop`, with no move either.
    e.send("go infinite");
    e.silent("bestmove", 2 * SECOND);
    e.send("stop");
    let (mv, lines) = e.bestmove(30 * SECOND);
    assert_eq!(mv, "(none)", "{lines:#?}");
    e.quit();

    let mut alone = Mpcmc::start(&["engine"]);
    alone.send("uci");
    let lines = alone.until("uciok", 5 * SECOND);
    let combo = lines
        .iter()
        .find(|l| l.contains("name UCI_Variant "))
        .expect("UCI_Variant");
    assert!(
        combo.contains("var atomic") && !combo.contains("xiangqi"),
        "{combo}"
    );
    alone.send("setoption name UCI_Variant value xiangqi");
    alone.send("isready");
    let lines = alone.until("readyok", 5 * SECOND);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("UCI_Variant") && l.contains("xiangqi")),
        "{lines:#?}"
    );
    // Still chess: 1. e4 is legal.
    alone.send("position startpos moves e2e4");
    alone.send("go nodes 1000");
    let (mv, lines) = alone.bestmove(30 * SECOND);
    common::assert_legal(&common::position(None, &["e2e4"]), &mv);
    assert!(!lines.is_empty());
    alone.quit();
    // Nor can a flag make it play one.
    let out = Command::new(env!("CARGO_BIN_EXE_mpcmc"))
        .args(["engine", "--uci-variant=xiangqi"])
        .output()
        .expect("mpcmc runs");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--uci-variant=xiangqi"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `mpcmc explain` tells a decision in a game by the child's rules: every
/// legal move (pyffish's list) a row in the child's tokens, and the move
/// chosen one of them.
#[test]
fn explain_tells_a_shogi_decision() {
    let out = common::output_ok(
        Command::new(env!("CARGO_BIN_EXE_mpcmc"))
            .args(["explain", "--uci-variant=shogi", "--moves", "c3c4"])
            .arg(format!("--evaluator={}", fairy_stockfish()))
            .args(["--child-nodes=300"]),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.starts_with("position startpos moves c3c4 (shogi)\n"),
        "{text}"
    );
    let legal = pyffish_legal_moves("shogi", &["c3c4"]);
    assert!(legal.len() > 20, "{legal:?}");
    // The table's rows: rank, move, reply, … until the blank line.
    let rows: BTreeSet<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("rank"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
        .collect();
    assert_eq!(rows, legal, "{text}");
    let chosen = text
        .lines()
        .find_map(|l| l.strip_prefix("chosen: "))
        .and_then(|l| l.split_whitespace().next())
        .expect("a chosen line");
    assert!(legal.contains(chosen), "{chosen}: {text}");
}

/// The legal moves after `moves` from `variant`'s start, as pyffish lists
/// them (the referee, apart from the child mpcmc asks).
fn pyffish_legal_moves(variant: &str, moves: &[&str]) -> BTreeSet<String> {
    let script = format!(
        "import pyffish as sf; print(' '.join(sf.legal_moves('{variant}', sf.start_fen('{variant}'), {moves:?})))"
    );
    let out = common::output_ok(Command::new("python3").args(["-c", &script]));
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}
