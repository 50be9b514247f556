//! The lichess variants (`UCI_Variant`): mpcmc over Fairy-Stockfish and over
//! the built-in engine, refereed by python-chess's variant boards (a real
//! client with rules of its own); what a child does not play is refused;
//! an end a chess board would not see is decided by the variant's rule.
//! CI installs Fairy-Stockfish (`apt-get install -y fairy-stockfish`) and
//! python-chess; without them these tests fail.

mod common;

use std::process::Command;

use common::{Mpcmc, SECOND, fairy_stockfish, referee};

/// mpcmc with `flags`, after `uci`, set to play `variant`.
fn playing(variant: &str, flags: &[&str]) -> Mpcmc {
    let mut e = Mpcmc::start(flags);
    e.send("uci");
    e.until("uciok", 5 * SECOND);
    e.send(&format!("setoption name UCI_Variant value {variant}"));
    e
}

/// The `variant` position of `fen`.
fn variant_position(
    variant: shakmaty::variant::Variant,
    fen: &str,
) -> shakmaty::variant::VariantPosition {
    let setup = fen.parse::<shakmaty::fen::Fen>().expect("fen").into_setup();
    shakmaty::variant::VariantPosition::from_setup(variant, setup, shakmaty::CastlingMode::Standard)
        .expect("a position of the variant")
}

/// Plays one game of each of `variants` through `tests/python/variants.py`
/// between `ours` (mpcmc's command line) and `theirs`; returns its report.
fn play(ours: &str, theirs: &str, variants: &[&str]) -> String {
    let mut args = vec![ours.to_owned(), theirs.to_owned()];
    args.extend(variants.iter().map(|v| v.to_string()));
    referee("variants.py", &args, "variants: ok", variants)
}

/// Over Fairy-Stockfish, against Fairy-Stockfish, one game of each variant
/// it plays (all but atomic): every move legal on python-chess's board.
#[test]
fn over_fairy_stockfish_every_lichess_variant_it_plays() {
    let ours = format!(
        "{} --evaluator={}",
        env!("CARGO_BIN_EXE_mpcmc"),
        fairy_stockfish()
    );
    let report = play(
        &ours,
        fairy_stockfish(),
        &[
            "crazyhouse",
            "3check",
            "kingofthehill",
            "antichess",
            "horde",
            "racingkings",
        ],
    );
    println!("{report}");
}

/// Over the built-in engine (nothing else installed), against the
/// built-in engine alone: atomic, which Debian's Fairy-Stockfish lacks,
/// and the rest.
#[test]
fn over_the_builtin_engine_every_lichess_variant() {
    let mpcmc = env!("CARGO_BIN_EXE_mpcmc");
    let report = play(
        mpcmc,
        &format!("{mpcmc} engine"),
        &[
            "atomic",
            "antichess",
            "crazyhouse",
            "3check",
            "kingofthehill",
            "racingkings",
            "horde",
        ],
    );
    println!("{report}");
}

/// A variant a child does not offer is refused, naming the child; the
/// variant is kept (the GUI plays it) and the built-in engine answers
/// alone: in the order cutechess and python-chess send it (the variant,
/// the position, `go`, with no `isready` after the option) and after an
/// `isready`.
#[test]
fn a_variant_no_child_plays_is_refused_and_the_builtin_engine_plays_it() {
    let evaluator = format!("--evaluator={}", fairy_stockfish());
    let atomic_win = "position fen rnbqkbnr/pppppppp/8/6N1/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 1";
    for isready in [false, true] {
        let mut e = Mpcmc::start(&[&evaluator, "--child-nodes=300"]);
        e.handshake();
        e.send("setoption name UCI_Variant value atomic");
        if isready {
            e.send("isready");
            let lines = e.until("readyok", 15 * SECOND);
            assert!(
                lines.iter().any(|l| l.starts_with("info string")
                    && l.contains("UCI_Variant atomic refused")
                    && l.contains("fairy-stockfish")
                    && l.contains("the built-in engine plays it alone")),
                "{lines:#?}"
            );
        }
        // Read as atomic: Nxf7 explodes the king.
        e.send(atomic_win);
        e.send("go nodes 3000");
        let (mv, lines) = e.bestmove(30 * SECOND);
        assert_eq!(mv, "g5f7", "the atomic win (isready {isready}): {lines:#?}");
        // And the next move too, of the same game.
        e.send("position startpos moves e2e4");
        e.send("go nodes 3000");
        let (mv, lines) = e.bestmove(30 * SECOND);
        let pos = variant_position(
            shakmaty::variant::Variant::Atomic,
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        );
        let legal = mv
            .parse::<shakmaty::uci::UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok());
        assert!(legal.is_some(), "{mv}: {lines:#?}");
        e.quit();
    }
    // A name outside the combo is refused at once.
    let mut e = Mpcmc::start(&[]);
    e.handshake();
    e.send("setoption name UCI_Variant value bughouse");
    let said = e.until("info string", 5 * SECOND);
    assert!(
        said.last().is_some_and(|l| l.contains("UCI_Variant")),
        "{said:?}"
    );
    e.quit();
}

/// Atomic over the built-in engine: capturing next to the enemy king wins
/// at once (the king explodes), where in chess the same capture takes a
/// pawn; and a finished atomic game has no move.
#[test]
fn an_atomic_win_by_explosion_is_seen_and_played() {
    let mut e = playing("atomic", &["--child-nodes=300"]);
    e.send("isready");
    let lines = e.until("readyok", 15 * SECOND);
    assert!(
        !lines.iter().any(|l| l.contains("refused")),
        "the built-in engine plays atomic: {lines:#?}"
    );
    // Nxf7 explodes f7's neighbours, e8's king among them: the only win in
    // one, worth more than any material.
    e.send("position fen rnbqkbnr/pppppppp/8/6N1/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 1");
    e.send("go nodes 3000");
    let (mv, lines) = e.bestmove(30 * SECOND);
    assert_eq!(mv, "g5f7", "{lines:#?}");
    // After it the game is over: no move, the root's score first.
    e.assert_lost_at(
        "position fen rnbqkbnr/pppppppp/8/6N1/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 1 moves g5f7",
    );
    e.quit();
}

/// `explain` decides a variant position by the variant's rules: in king of
/// the hill the king steps onto the hill, a win in one.
#[test]
fn explain_reads_a_variant_position() {
    let output = Command::new(env!("CARGO_BIN_EXE_mpcmc"))
        .args([
            "explain",
            "--uci-variant=kingofthehill",
            "--fen",
            "4k3/8/8/8/8/8/4K3/8 w - - 0 1",
            "--moves",
            "e2e3",
            "e8e7",
            "--go",
            "nodes 5000",
        ])
        .output()
        .expect("mpcmc explain runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains("chosen: Kd4#") || text.contains("chosen: Ke4#"),
        "{text}"
    );
}

/// MultiPV in crazyhouse: distinct lines, drops among the moves, every
/// line legal by the variant's rules.
#[test]
fn multipv_lines_in_crazyhouse_are_legal_drops_and_moves() {
    use shakmaty::{Position, uci::UciMove, variant::Variant};
    let fen = "r1bqkb1r/ppp2ppp/2n2n2/4p3/4P3/2N2N2/PPP2PPP/R1BQKB1R[Pp] w KQkq - 0 5";
    let mut e = playing("crazyhouse", &["--child-nodes=400", "--multi-pv=3"]);
    e.send("isready");
    e.until("readyok", 15 * SECOND);
    e.send(&format!("position fen {fen}"));
    e.send("go nodes 20000");
    let (best, lines) = e.bestmove(60 * SECOND);
    let root = variant_position(Variant::Crazyhouse, fen);
    let last = |k: u32| {
        lines
            .iter()
            .rev()
            .find(|l| l.contains(&format!(" multipv {k} ")))
            .unwrap_or_else(|| panic!("no line {k}: {lines:#?}"))
    };
    let mut firsts = Vec::new();
    for k in 1..=3 {
        let line = last(k);
        let pv = line.split(" pv ").nth(1).expect("a pv");
        let mut pos = root.clone();
        for text in pv.split_whitespace() {
            let m = text
                .parse::<UciMove>()
                .expect("uci")
                .to_move(&pos)
                .unwrap_or_else(|_| panic!("{text} illegal in {line}"));
            pos.play_unchecked(m);
        }
        firsts.push(pv.split_whitespace().next().expect("a move").to_owned());
    }
    firsts.sort();
    firsts.dedup();
    assert_eq!(firsts.len(), 3, "{lines:#?}");
    assert!(
        root.legal_moves()
            .iter()
            .any(|m| UciMove::from_standard(*m).to_string() == best),
        "{best}"
    );
    e.quit();
}

/// A drop that mates: the queen in hand onto the back rank.
#[test]
fn the_builtin_engine_mates_with_a_drop() {
    let mut e = playing("crazyhouse", &["--child-nodes=400"]);
    e.send("position fen 7k/6pp/8/8/8/8/8/K7[Q] w - - 0 1");
    e.send("go nodes 5000");
    let (mv, lines) = e.bestmove(30 * SECOND);
    assert!(
        mv.starts_with("Q@") && mv.ends_with('8') && mv != "Q@g8",
        "{mv}: {lines:#?}"
    );
    e.quit();
}
