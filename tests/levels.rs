//! Playing at a level (`UCI_LimitStrength`, `UCI_Elo`, `Seed`), modelling
//! the person (`UCI_Opponent`) and the opening book (`OwnBook`,
//! `BookFile`), through the binary over the built-in engine: behaviour,
//! not strength (the calibration is a match: `docs/measurements.md`).

mod common;

use std::{path::PathBuf, time::Duration};

use common::{Mpcmc, SECOND, assert_legal, position};
use mpcmc::mpc::{
    calibration::Calibration,
    level::{LOOK_NODES, Level},
};
use serde_json::Value as Json;
use shakmaty::{Chess, Position, fen::Fen};

/// Debian's `gnuchess-book` (installed by `scripts/test`): a real Polyglot
/// book.
const BOOK: &str = "/usr/share/games/gnuchess/book.bin";

/// Middlegame and opening positions where many moves are playable.
const POSITIONS: [&str; 4] = [
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r2q1rk1/pp2bppp/2n1bn2/3p4/3P4/2NBBN2/PP3PPP/R2QK2R w KQ - 4 10",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "2r2rk1/pp1q1ppp/2n1pn2/3p4/3P4/2PBPN2/P2Q1PPP/R4RK1 w - - 0 14",
];

/// The levels' own book off: [`POSITIONS`] and the start are in it, and
/// these tests are about the draw.
const NO_BOOK: &str = "--level-book=false";

/// A scratch directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpcmc-levels-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The traces `path` holds, one a decision.
fn traces(path: &std::path::Path) -> Vec<Json> {
    std::fs::read_to_string(path)
        .expect("trace file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Plays the game from `fen` to its end or `plies`: `attacker` (mpcmc,
/// white) under `go`, and the built-in engine alone defending at 20 000
/// nodes a move. Returns the final position.
fn play_out(attacker: &mut Mpcmc, fen: &str, go: &str, plies: usize) -> Chess {
    let mut defender = Mpcmc::builtin(&[]);
    defender.handshake();
    attacker.send("ucinewgame");
    defender.send("ucinewgame");
    let mut moves: Vec<String> = Vec::new();
    let mut pos = position(Some(fen), &[]);
    for _ in 0..plies {
        if pos.is_game_over() {
            break;
        }
        let (engine, limit) = if pos.turn().is_white() {
            (&mut *attacker, go)
        } else {
            (&mut defender, "go nodes 20000")
        };
        engine.send(&format!("position fen {fen} moves {}", moves.join(" ")));
        engine.send(limit);
        let (mv, _) = engine.bestmove(60 * SECOND);
        let m = assert_legal(&pos, &mv);
        pos.play_unchecked(m);
        moves.push(mv);
    }
    assert!(defender.quit().success());
    pos
}

/// At its lowest level a limited mpcmc still mates with K+Q v K and K+R v
/// K within the fifty-move rule: a decided game plays its best move, never
/// one that repeats a position, at a budget that sees the mate.
#[test]
fn the_lowest_level_mates_with_a_queen_and_with_a_rook() {
    for (fen, seed) in [
        ("8/8/8/4k3/8/8/8/3QK3 w - - 0 1", "1"),
        // Drawn by repetition before the rule against repeating, and by
        // the fifty-move rule or a lost rook before decided games searched
        // deeper.
        ("8/8/8/4k3/8/8/8/R3K3 w - - 0 1", "2"),
        ("7K/8/4R3/8/5k2/8/8/8 w - - 0 1", "3"),
    ] {
        let seed = format!("--seed={seed}");
        let mut e = Mpcmc::start(&["--uci-limit-strength=true", "--uci-elo=600", &seed]);
        e.handshake();
        let end = play_out(&mut e, fen, "go wtime 60000 btime 60000", 100);
        assert!(e.quit().success());
        assert!(
            end.is_checkmate(),
            "{fen}: no mate, ended at {}",
            Fen::from_position(&end, shakmaty::EnPassantMode::Legal)
        );
        assert!(end.halfmoves() < 100, "{fen}: past the fifty-move rule");
    }
}

/// Each level draws from the same kind of values (a node total caps both
/// levels' budgets alike here): the low level gives up more and plays the
/// best valued move less often. With a fixed seed the draws are the same
/// on every run, so this cannot flake.
#[test]
fn levels_change_the_distribution_of_moves() {
    let dir = scratch("distribution");
    let summary = |elo: &str| {
        let path = dir.join(format!("{elo}.jsonl"));
        let _ = std::fs::remove_file(&path);
        let trace = format!("--trace-file={}", path.display());
        let elo_flag = format!("--uci-elo={elo}");
        let mut e = Mpcmc::start(&[
            "--uci-limit-strength=true",
            &elo_flag,
            "--seed=5",
            &trace,
            NO_BOOK,
        ]);
        e.handshake();
        for fen in POSITIONS {
            for _ in 0..4 {
                e.send(&format!("position fen {fen}"));
                e.send("go nodes 25000");
                let (mv, lines) = e.bestmove(60 * SECOND);
                assert_legal(&position(Some(fen), &[]), &mv);
                assert!(
                    lines
                        .iter()
                        .any(|l| l.starts_with("info string rule level")),
                    "{lines:?}"
                );
            }
        }
        assert!(e.quit().success());
        let traces = traces(&path);
        assert_eq!(traces.len(), 16);
        let losses: Vec<f64> = traces
            .iter()
            .map(|t| {
                assert_eq!(t["rule"], "level", "{t}");
                assert_eq!(t["level"]["elo"].as_u64(), elo.parse().ok());
                t["level"]["loss"].as_f64().expect("loss")
            })
            .collect();
        let best = traces
            .iter()
            .filter(|t| t["level"]["best"] == t["chosen"])
            .count();
        (losses.iter().sum::<f64>() / losses.len() as f64, best)
    };
    let (low_loss, low_best) = summary("600");
    // 2000: below the built-in engine's full strength (from there up no
    // level draws).
    let (high_loss, high_best) = summary("2000");
    assert!(
        low_loss > 2.0 * high_loss,
        "mean loss {low_loss} at 600, {high_loss} at 2000"
    );
    assert!(
        low_best < high_best,
        "best move {low_best}/16 at 600, {high_best}/16 at 2000"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The move mpcmc with `flags` (at a level) plays at `go depth 5` in each
/// of [`POSITIONS`], in one process, each checked legal, with the level's
/// `info string` that tells how it was drawn.
fn level_moves(flags: &[&str]) -> Vec<(String, String)> {
    let mut e = Mpcmc::start(&[flags, &[NO_BOOK]].concat());
    e.handshake();
    let moves = POSITIONS
        .iter()
        .map(|fen| {
            e.send(&format!("position fen {fen}"));
            e.send("go depth 5");
            let (mv, lines) = e.bestmove(60 * SECOND);
            assert_legal(&position(Some(fen), &[]), &mv);
            let how = lines
                .iter()
                .find(|l| l.starts_with("info string rule level"))
                .unwrap_or_else(|| panic!("{lines:?}"))
                .clone();
            (mv, how)
        })
        .collect();
    assert!(e.quit().success());
    moves
}

/// The candidate `mv` of the decision traced as `t`.
fn candidate<'a>(t: &'a Json, mv: &Json) -> &'a Json {
    t["candidates"]
        .as_array()
        .and_then(|c| c.iter().find(|c| &c["move"] == mv))
        .unwrap_or_else(|| panic!("{mv} not a candidate of {t}"))
}

/// The nodes the calls for candidate `mv` searched, its second look's
/// included.
fn looked_nodes(t: &Json, mv: &Json) -> u64 {
    candidate(t, mv)["nodes"].as_u64().unwrap_or(0)
}

/// Over Stockfish at 1800 every drawn move gets a second look before it is
/// played (a search at 16 times the call's nodes); the trace and the
/// `info string` name each look, the last one the move played, refuted
/// ones drawn again. Over the built-in engine no level looks.
#[test]
fn a_level_over_stockfish_looks_again_at_the_drawn_move() {
    let dir = scratch("looks");
    let path = dir.join("1800.jsonl");
    let trace = format!("--trace-file={}", path.display());
    let evaluator = format!("--evaluator={}", common::stockfish());
    let args = ["--uci-limit-strength=true", "--uci-elo=1800", "--seed=3"];
    for (mv, how) in level_moves(&[&args[..], &[&evaluator, &trace]].concat()) {
        assert!(how.contains(&format!("second look at {mv}: ")), "{how}");
    }
    let traces = traces(&path);
    assert_eq!(traces.len(), POSITIONS.len());
    for t in &traces {
        let looks = t["level"]["looks"].as_array().expect("looks");
        let (last, before) = looks.split_last().expect("a look");
        assert_eq!(last["move"], t["chosen"], "{t}");
        assert_eq!(last["refuted"], false, "{t}");
        assert!(last["deeper"].is_object(), "{t}");
        assert!(before.iter().all(|l| l["refuted"] == true), "{t}");
        // The look's two calls, at 16 times the nodes a call, join the
        // move's.
        let nodes = Level::new(1800).over(Calibration::Stockfish).call_nodes();
        assert!(
            looked_nodes(t, &last["move"]) >= 2 * LOOK_NODES * nodes,
            "{t}"
        );
    }
    let plain = two_decisions_at(1800, None);
    assert!(
        plain.iter().all(|l| !l.contains("second look")),
        "{plain:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Over Stockfish at 1400 a second look at a drawn move that is not the
/// best also searches the best as deep and measures the drawn move against
/// it: the trace names the best and its deeper value (`against`), the
/// `info string` says so, and the decision's nodes count both lines.
#[test]
fn a_level_over_stockfish_at_1400_measures_the_drawn_move_against_the_best() {
    let dir = scratch("against");
    let path = dir.join("1400.jsonl");
    let trace = format!("--trace-file={}", path.display());
    let evaluator = format!("--evaluator={}", common::stockfish());
    let level = Level::new(1400).over(Calibration::Stockfish);
    assert_eq!(level.look_lines(), 2);
    let mut infos = Vec::new();
    for seed in 1..=4 {
        let seed = format!("--seed={seed}");
        let args = ["--uci-limit-strength=true", "--uci-elo=1400", &seed];
        let moves = level_moves(&[&args[..], &[&evaluator, &trace]].concat());
        infos.extend(moves.into_iter().map(|(_, how)| how));
    }
    let traces = traces(&path);
    assert_eq!(traces.len(), 4 * POSITIONS.len());
    let mut compared = 0;
    for t in &traces {
        let looks = t["level"]["looks"].as_array().expect("looks");
        assert_eq!(looks.last().map(|l| &l["move"]), Some(&t["chosen"]), "{t}");
        for l in looks.iter().filter(|l| l["against"].is_object()) {
            compared += 1;
            assert_ne!(l["against"]["move"], l["move"], "{t}");
            assert!(l["against"]["value"].is_object(), "{t}");
            // The drawn move's line and the best's were each searched
            // again, two calls at 16 times the nodes; the best's value is
            // the look's, the pass's kept beside it.
            let look = 2 * LOOK_NODES * level.call_nodes();
            assert!(looked_nodes(t, &l["move"]) >= look, "{t}");
            assert!(looked_nodes(t, &l["against"]["move"]) >= look, "{t}");
            let best = candidate(t, &l["against"]["move"]);
            assert_eq!(best["value"], l["against"]["value"], "{t}");
            assert!(best["one_step_value"].is_object(), "{t}");
            // Its budget is the look's, not the pass's.
            let look_budget = format!("nodes {}", LOOK_NODES * level.call_nodes());
            assert_eq!(best["budget"], look_budget.as_str(), "{t}");
        }
    }
    assert!(compared > 0, "no look compared with the best: {traces:?}");
    assert!(
        infos
            .iter()
            .any(|l| l.contains("'s ") && l.contains(" against ")),
        "{infos:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The moves of a game mpcmc plays with itself from the start position at
/// `elo`, `plies` long, in a new process with `flags`: twice in a row,
/// `ucinewgame` between.
fn self_play(flags: &[&str], plies: usize) -> [Vec<String>; 2] {
    let mut e = Mpcmc::start(&[&["--uci-limit-strength=true", "--uci-elo=1000"], flags].concat());
    e.handshake();
    let mut games: [Vec<String>; 2] = Default::default();
    for game in &mut games {
        e.send("ucinewgame");
        for _ in 0..plies {
            e.send(&format!("position startpos moves {}", game.join(" ")));
            e.send("go nodes 20000");
            let (mv, _) = e.bestmove(60 * SECOND);
            game.push(mv);
        }
    }
    assert!(e.quit().success());
    games
}

/// With `Seed` a game repeats: after `ucinewgame` and in a new process.
/// Without, two games from the same position differ.
#[test]
fn a_seed_repeats_a_game_and_without_one_games_differ() {
    let [a, b] = self_play(&["--seed=7"], 10);
    let [c, _] = self_play(&["--seed=7"], 10);
    assert_eq!(a, b, "after ucinewgame");
    assert_eq!(a, c, "in a new process");
    let [d, e] = self_play(&[], 10);
    let [f, _] = self_play(&[], 10);
    assert!(d != e || d != f, "{d:?} {e:?} {f:?}");
}

/// Every timed or budgeted `go` at a level draws its move (or, its pass
/// cut short by the clock on a busy machine before every move was valued,
/// plays the root search's at the level's budget); pondering, the move
/// waits for `ponderhit`; analysis (`go infinite`) is at full strength.
#[test]
fn every_go_at_a_level_draws_and_analysis_is_full_strength() {
    let mut e = Mpcmc::start(&["--uci-limit-strength=true", "--uci-elo=1200"]);
    e.handshake();
    let fen = POSITIONS[1];
    for go in [
        "go wtime 10000 btime 10000 winc 100 binc 100",
        "go wtime 5000 btime 5000 movestogo 10",
        "go movetime 500",
        "go nodes 30000",
        "go depth 5",
        "go",
    ] {
        e.send(&format!("position fen {fen}"));
        e.send(go);
        let (mv, lines) = e.bestmove(30 * SECOND);
        assert_legal(&position(Some(fen), &[]), &mv);
        let at_the_level = |l: &String| {
            l.contains(": level 1200 over ")
                && (l.starts_with("info string rule level: ")
                    || l.starts_with("info string rule evaluator_fallback: ")
                        && l.ends_with(", cut short"))
        };
        assert!(lines.iter().any(at_the_level), "{go}: {lines:?}");
    }
    e.send(&format!("position fen {fen}"));
    let from = e.transcript.len();
    e.send("go ponder wtime 10000 btime 10000");
    e.silent("bestmove", Duration::from_millis(700));
    e.send("ponderhit");
    let (mv, _) = e.bestmove(10 * SECOND);
    assert_legal(&position(Some(fen), &[]), &mv);
    let lines = &e.transcript[from..];
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string rule level")),
        "{lines:?}"
    );
    e.send("go infinite");
    e.silent("bestmove", Duration::from_millis(500));
    e.send("stop");
    let (_, lines) = e.bestmove(10 * SECOND);
    assert!(
        lines.iter().all(|l| !l.contains("rule level")),
        "analysis is not drawn: {lines:?}"
    );
    assert!(e.quit().success());
}

/// `UCI_Opponent` as real GUIs send it, with `PersonModel` on (it is off
/// by default): a rated human is modelled at that rating (the trace and `explain` say so); a computer, or no rating, is
/// the child itself; a value that does not parse is said and leaves the
/// model as it was.
#[test]
fn the_nominal_opponent_models_a_rated_person() {
    let dir = scratch("opponent");
    let path = dir.join("trace.jsonl");
    let _ = std::fs::remove_file(&path);
    let trace = format!("--trace-file={}", path.display());
    let mut e = Mpcmc::start(&["--child-nodes=2000", "--person-model=true", &trace]);
    e.handshake();
    let fen = POSITIONS[0];
    let decide = |e: &mut Mpcmc, opponent: Option<&str>| -> Vec<String> {
        let mut said = Vec::new();
        if let Some(value) = opponent {
            e.send(&format!("setoption name UCI_Opponent value {value}"));
            e.send("isready");
            said = e.until("readyok", 10 * SECOND);
        }
        e.send(&format!("position fen {fen}"));
        e.send("go");
        e.bestmove(30 * SECOND);
        said
    };
    // Arena's human, lichess-bot's bot, cutechess's unrated human; a bad
    // value after a rated human.
    // (Arena's own example, `GM 2500 human Garry Kasparov`, is above the
    // built-in engine's full strength: the child itself, unit-tested.)
    decide(&mut e, Some("IM 2050 human Jane Doe"));
    decide(&mut e, Some("BOT 2650 computer some-bot"));
    decide(&mut e, Some("none none human Name"));
    decide(&mut e, Some("none 900 human test"));
    let said = decide(&mut e, Some("GM strong human X"));
    assert!(
        said.iter().any(|l| l.starts_with("info string")
            && l.contains("UCI_Opponent")
            && l.contains("GM strong human X")),
        "{said:?}"
    );
    decide(&mut e, Some("<empty>"));
    assert!(e.quit().success());
    let people: Vec<Json> = traces(&path).iter().map(|t| t["person"].clone()).collect();
    let rated = |elo: u64| -> Json {
        let nodes = people
            .iter()
            .find(|p| p["elo"] == elo)
            .map(|p| p["nodes"].clone());
        serde_json::json!({ "elo": elo, "nodes": nodes })
    };
    assert_eq!(
        people,
        [
            rated(2050),
            Json::Null,
            Json::Null,
            rated(900),
            rated(900),
            Json::Null
        ]
    );
    // The person's budget: below the calls' 2000 at 900, above at 2050
    // (the calls' own limit then stands).
    assert!(people[3]["nodes"].as_u64() < Some(2000), "{people:?}");
    assert!(people[0]["nodes"].as_u64() > Some(2000), "{people:?}");
    let _ = std::fs::remove_dir_all(&dir);

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mpcmc"))
        .args([
            "explain",
            "--child-nodes=1000",
            "--uci-opponent=none 1300 human test",
            "--person-model=true",
            "--fen",
            fen,
        ])
        .output()
        .expect("explain");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("replies predicted by: a person rated 1300"),
        "{text}"
    );
}

/// The book's move is played while it has one (weighted, as the book
/// says; `Seed` makes the choice repeat), with a move to ponder on, then
/// the engine searches; a book that cannot be read is said, and the
/// engine plays without it.
#[test]
fn the_book_is_used_and_left() {
    assert!(
        std::path::Path::new(BOOK).is_file(),
        "this test needs {BOOK}: apt-get install -y gnuchess-book"
    );
    let book = format!("--book-file={BOOK}");
    let opening = |seed: &str| {
        let seed = format!("--seed={seed}");
        let mut e = Mpcmc::start(&["--own-book=true", &book, &seed]);
        e.handshake();
        let mut moves: Vec<String> = Vec::new();
        let mut from_book = 0;
        for _ in 0..4 {
            e.send(&format!("position startpos moves {}", moves.join(" ")));
            e.send("go movetime 200");
            let (mv, lines) = e.bestmove(10 * SECOND);
            let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
            assert_legal(&position(None, &refs), &mv);
            // A book move predicts no reply: the built-in engine's is the
            // move to ponder on.
            let answer: Vec<&str> = lines.last().unwrap().split_whitespace().collect();
            assert!(answer.len() == 4 && answer[2] == "ponder", "{answer:?}");
            let after: Vec<&str> = refs.iter().copied().chain([mv.as_str()]).collect();
            assert_legal(&position(None, &after), answer[3]);
            if lines
                .iter()
                .any(|l| l.starts_with(&format!("info string book move {mv} (weight ")))
            {
                from_book += 1;
            }
            moves.push(mv);
        }
        // Out of the book: a search.
        e.send("position fen 8/8/8/4k3/8/8/8/R3K3 w - - 0 1");
        e.send("go movetime 200");
        let (_, lines) = e.bestmove(10 * SECOND);
        assert!(lines.iter().all(|l| !l.contains("book move")), "{lines:?}");
        assert!(lines.iter().any(|l| l.starts_with("info string rule")));
        assert!(e.quit().success());
        (moves, from_book)
    };
    let (a, from_book) = opening("3");
    assert_eq!(from_book, 4, "the whole opening from the book: {a:?}");
    assert_eq!(opening("3").0, a, "a seed repeats the book's choices");
    let others: Vec<Vec<String>> = ["4", "5", "6"].map(|s| opening(s).0).into();
    assert!(others.iter().any(|o| *o != a), "{a:?} {others:?}");

    let mut e = Mpcmc::start(&["--own-book=true", "--book-file=/nonexistent/book.bin"]);
    e.handshake();
    e.send("position startpos");
    e.send("go movetime 200");
    let (mv, lines) = e.bestmove(10 * SECOND);
    assert_legal(&Chess::default(), &mv);
    assert!(
        lines.iter().any(|l| l
            .starts_with("info string OwnBook: cannot read opening book '/nonexistent/book.bin'")),
        "{lines:?}"
    );
    assert!(e.quit().success());
}

/// The lines of two `go depth 5` from the start at level `elo` over
/// `evaluator` (the built-in engine when `None`), each move checked legal.
fn two_decisions_at(elo: u32, evaluator: Option<&str>) -> Vec<String> {
    let mut all = vec![
        "--uci-limit-strength=true".to_owned(),
        format!("--uci-elo={elo}"),
        NO_BOOK.to_owned(),
    ];
    all.extend(evaluator.map(|e| format!("--evaluator={e}")));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let mut e = Mpcmc::start(&all);
    e.handshake();
    let mut lines = Vec::new();
    for _ in 0..2 {
        e.send("position startpos");
        e.send("go depth 5");
        let (mv, more) = e.bestmove(30 * SECOND);
        assert_legal(&position(None, &[]), &mv);
        lines.extend(more);
    }
    assert!(e.quit().success());
    lines
}

/// From its engine's full strength up a level plays the engine unlimited,
/// and says so once: over the built-in engine (about 2100 on the scale)
/// 2600 draws no move; over Stockfish it is a level.
#[test]
fn a_level_from_the_engines_full_strength_up_plays_unlimited_and_says_so() {
    let count =
        |lines: &[String], start: &str| lines.iter().filter(|l| l.starts_with(start)).count();
    let said = "info string UCI_Elo 2600 is at or above the full strength of the built-in engine";
    let level = "info string rule level: ";
    let builtin = two_decisions_at(2600, None);
    assert_eq!(count(&builtin, said), 1, "{builtin:?}");
    assert_eq!(count(&builtin, level), 0, "{builtin:?}");
    let below = two_decisions_at(2000, None);
    assert_eq!(count(&below, "info string UCI_Elo"), 0, "{below:?}");
    assert_eq!(count(&below, level), 2, "{below:?}");
    let stockfish = two_decisions_at(2600, Some(common::stockfish()));
    assert_eq!(count(&stockfish, "info string UCI_Elo"), 0, "{stockfish:?}");
    assert_eq!(count(&stockfish, level), 2, "{stockfish:?}");
}

/// The levels count the nodes of the engine they run over: over Stockfish
/// its own calibration (fewer nodes a call than the built-in engine's at
/// the same level); over an engine mpcmc knows nothing of, the built-in
/// engine's budgets, said once.
#[test]
fn a_level_counts_the_nodes_of_its_engine_and_says_when_it_is_uncalibrated() {
    let dir = scratch("uncalibrated");
    // Stockfish under another name: an engine mpcmc has no calibration for.
    let other = dir.join("other-engine");
    std::fs::write(
        &other,
        format!("#!/bin/sh\nexec {} \"$@\"\n", common::stockfish()),
    )
    .expect("a wrapper");
    std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("executable");
    // Two decisions over `evaluator` (the built-in engine when `None`):
    // each line carries `calibration`'s budget, and the levels are said to
    // be uncalibrated `said` times.
    let play = |evaluator: Option<&str>, calibration: Calibration, said: usize| {
        let lines = two_decisions_at(1500, evaluator);
        let told = lines
            .iter()
            .filter(|l| l.starts_with("info string UCI_Elo is calibrated over"))
            .count();
        assert_eq!(told, said, "{evaluator:?}: {lines:?}");
        let decided: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with("info string rule level: "))
            .collect();
        assert_eq!(decided.len(), 2, "{decided:?}");
        // An `info string` writes a UCI keyword with a colon (`nodes:`).
        let under = format!(
            "level 1500 over {} under nodes: {}:",
            calibration.engine(),
            Level::new(1500).over(calibration).call_nodes()
        );
        assert!(
            decided.iter().all(|l| l.contains(&under)),
            "{evaluator:?}: {decided:?}, not {under}"
        );
    };
    // Stockfish is calibrated, and so is the built-in engine.
    play(Some(common::stockfish()), Calibration::Stockfish, 0);
    play(None, Calibration::Builtin, 0);
    // Said once, over an engine mpcmc does not know: the built-in
    // engine's budgets.
    play(other.to_str(), Calibration::Builtin, 1);
    assert!(
        Level::new(1500).over(Calibration::Stockfish).call_nodes() < Level::new(1500).call_nodes()
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The moves of a game mpcmc at `elo` plays with itself from the start,
/// `plies` long, with `Seed` `seed` and `flags`, each checked legal; with
/// whether each came from a book (`info string book move`).
fn opening_at(elo: u32, seed: u32, plies: usize, flags: &[&str]) -> Vec<(String, bool)> {
    let (elo, seed) = (format!("--uci-elo={elo}"), format!("--seed={seed}"));
    let mut e = Mpcmc::start(&[&["--uci-limit-strength=true", &elo, &seed], flags].concat());
    e.handshake();
    let mut moves: Vec<(String, bool)> = Vec::new();
    for _ in 0..plies {
        let played: Vec<&str> = moves.iter().map(|(m, _)| m.as_str()).collect();
        e.send(&format!("position startpos moves {}", played.join(" ")));
        e.send("go nodes 100000");
        let (mv, lines) = e.bestmove(60 * SECOND);
        assert_legal(&position(None, &played), &mv);
        let booked = lines
            .iter()
            .any(|l| l.starts_with("info string book move "));
        moves.push((mv, booked));
    }
    assert!(e.quit().success());
    moves
}

/// A rook-pawn or knight-to-the-rim move that is not a capture, played at
/// `pos` as `uci`.
fn to_the_rim(pos: &Chess, uci: &str) -> bool {
    let mv = uci
        .parse::<shakmaty::uci::UciMove>()
        .expect("uci")
        .to_move(pos)
        .expect("legal");
    let rim = matches!(mv.to().file(), shakmaty::File::A | shakmaty::File::H);
    rim && !mv.is_capture() && matches!(mv.role(), shakmaty::Role::Pawn | shakmaty::Role::Knight)
}

/// With the defaults a level opens as people do, from the built-in human
/// openings: every seed's first move is 1.e4, 1.d4, 1.Nf3 or 1.c4, from
/// the book, and the first plies are the moves of Debian's gnuchess-book
/// (the book the built-in one was cut from). Without it (`LevelBook`
/// off) the level searches from the first move, and its draw still plays
/// no rook-pawn or knight-to-the-rim move in the first ten plies (a glance
/// does not consider them, `mpc::plausible`).
#[test]
fn a_level_opens_as_people_do() {
    let book = mpcmc::book::Book::open(std::path::Path::new(BOOK))
        .unwrap_or_else(|e| panic!("{e}: apt-get install -y gnuchess-book"));
    let mut firsts = std::collections::BTreeSet::new();
    for seed in 1..=6 {
        let moves = opening_at(1000, seed, 6, &[]);
        let mut pos = Chess::default();
        for (ply, (mv, booked)) in moves.iter().enumerate() {
            assert!(*booked, "seed {seed}, ply {ply}: {moves:?}");
            let known: Vec<String> = book
                .moves(&pos)
                .iter()
                .map(|b| b.mv.to_uci(shakmaty::CastlingMode::Standard).to_string())
                .collect();
            assert!(
                known.contains(mv),
                "seed {seed}, ply {ply}: {mv} not in {known:?}"
            );
            let m = mv.parse::<shakmaty::uci::UciMove>().expect("uci");
            pos.play_unchecked(m.to_move(&pos).expect("legal"));
        }
        assert!(
            ["e2e4", "d2d4", "g1f3", "c2c4"].contains(&moves[0].0.as_str()),
            "{moves:?}"
        );
        firsts.insert(moves[0].0.clone());
    }
    assert!(
        firsts.len() >= 2,
        "the seeds draw different openings: {firsts:?}"
    );
    for seed in 1..=4 {
        let moves = opening_at(1200, seed, 10, &[NO_BOOK]);
        let mut pos = Chess::default();
        for (ply, (mv, booked)) in moves.iter().enumerate() {
            assert!(!booked, "LevelBook off: {moves:?}");
            assert!(!to_the_rim(&pos, mv), "seed {seed}, ply {ply}: {moves:?}");
            let m = mv.parse::<shakmaty::uci::UciMove>().expect("uci");
            pos.play_unchecked(m.to_move(&pos).expect("legal"));
        }
    }
}

/// `HumanTime` holds a level's move as a person would think over it: at
/// least a quarter of the move's share of the clock, never past its hard
/// limit (a third of what is left); `stop` ends the hold at once; and off
/// (the default) the move is not held to it.
#[test]
fn human_time_thinks_like_a_person_within_the_clock() {
    // Out of every book: a middlegame.
    let fen = POSITIONS[3];
    let timed = |flags: &[&str], go: &str, stop_after: Option<Duration>| {
        let mut e =
            Mpcmc::start(&[&["--uci-limit-strength=true", "--uci-elo=1400"], flags].concat());
        e.handshake();
        e.send(&format!("position fen {fen}"));
        let start = std::time::Instant::now();
        e.send(go);
        if let Some(after) = stop_after {
            std::thread::sleep(after);
            e.send("stop");
        }
        let (mv, _) = e.bestmove(30 * SECOND);
        let took = start.elapsed();
        assert_legal(&position(Some(fen), &[]), &mv);
        assert!(e.quit().success());
        took
    };
    // 60 s for the game: a move's share is about 2.4 s (60 s over 25
    // moves), its hard limit 7 s, a third of the clock 20 s.
    let go = "go wtime 60000 btime 60000";
    let held = timed(&["--human-time=true"], go, None);
    assert!(held >= Duration::from_millis(500), "{held:?}");
    assert!(held <= Duration::from_millis(8000), "{held:?}");
    let stopped = timed(&["--human-time=true"], go, Some(Duration::from_millis(100)));
    assert!(
        stopped < Duration::from_millis(1500).min(held),
        "{stopped:?}"
    );
    // Under `movetime` the GUI sets the time: not held.
    let fixed = timed(&["--human-time=true"], "go movetime 5000", None);
    assert!(fixed < Duration::from_millis(4000), "{fixed:?}");
}

/// One position of `tests/data/error-profile.epd`: its FEN, the moves
/// within a mistake of the best (judged by Stockfish at 200 000 nodes),
/// and its kind (`mate1`, `recapture`, `gap`: easy; `hard`).
struct Judged {
    fen: String,
    ok: Vec<String>,
    kind: String,
}

/// The positions of `tests/data/error-profile.epd`, made by
/// `scripts/measure/error_profile.py make` from games of the levels
/// against Stockfish's.
fn error_profile() -> Vec<Judged> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/error-profile.epd"
    ))
    .expect("tests/data/error-profile.epd");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.splitn(5, ' ').collect();
            let ops = fields[4];
            let op = |name: &str| -> String {
                let start = ops.find(&format!("{name} ")).expect(name) + name.len() + 1;
                let rest = &ops[start..];
                rest[..rest.find(';').expect("';'")]
                    .trim_matches('"')
                    .to_owned()
            };
            Judged {
                fen: format!("{} {} {}", fields[..4].join(" "), op("hmvc"), op("fmvn")),
                ok: op("ok").split(' ').map(str::to_owned).collect(),
                kind: op("c0"),
            }
        })
        .collect()
}

/// A level errs where a position is hard, rarely where it is easy: at
/// 1400 over the built-in engine, on a fixed set of positions from real
/// games (each played once, `Seed` fixed, so the count repeats), it never
/// misses a mate in one, and its error rate on easy positions (a mate in
/// one, a recapture that restores material, one move far better than
/// every other at a shallow search) is at most a third of its rate on
/// hard ones (the move a shallow search ranks first is refuted deep).
#[test]
fn a_level_errs_where_positions_are_hard() {
    let positions = error_profile();
    let mut e = Mpcmc::start(&["--uci-limit-strength=true", "--uci-elo=1400", "--seed=3"]);
    e.handshake();
    let (mut easy, mut hard, mut mates) = ([0usize; 2], [0usize; 2], 0);
    for p in &positions {
        e.send(&format!("position fen {}", p.fen));
        e.send("go nodes 10000000");
        let (mv, _) = e.bestmove(60 * SECOND);
        assert_legal(&position(Some(&p.fen), &[]), &mv);
        let erred = usize::from(!p.ok.contains(&mv));
        let count = if p.kind == "hard" {
            &mut hard
        } else {
            &mut easy
        };
        count[0] += erred;
        count[1] += 1;
        if p.kind == "mate1" {
            mates += erred;
        }
    }
    assert!(e.quit().success());
    assert!(easy[1] >= 60 && hard[1] >= 30, "{easy:?} {hard:?}");
    assert_eq!(mates, 0, "a mate in one missed");
    let rate = |c: [usize; 2]| c[0] as f64 / c[1] as f64;
    assert!(
        3.0 * rate(easy) <= rate(hard),
        "easy {easy:?} against hard {hard:?}"
    );
}
