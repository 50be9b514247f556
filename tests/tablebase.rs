//! Syzygy tablebases (`SyzygyPath`): mpcmc's prober against python-chess's
//! on the same real tables, and the root's tablebase move in a session.

mod common;

use std::{
    path::Path,
    process::Command,
    sync::{Arc, Mutex},
};

use common::{Mpcmc, SECOND, assert_legal, position};
use mpcmc::{
    children::{Pool, SearchError},
    mpc::{
        ChildLimit, Children, Game, Lookahead, Query, Report, Settings, Value, decide,
        tablebase::{Tabled, Tables},
    },
    uci::options::Options,
};
use shakmaty::{CastlingMode, Chess, Position, fen::Fen, variant::VariantPosition};
use tokio_util::sync::CancellationToken;

/// The python-chess source distribution's tables (every 3-piece table and
/// some 4-piece ones), unpacked here by `scripts/test`.
const TABLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-data/syzygy");

fn tables() -> Tables {
    assert!(
        Path::new(TABLES).join("KQvK.rtbw").is_file(),
        "the Syzygy test tables are missing in {TABLES}: run scripts/test, which fetches them"
    );
    Tables::open(TABLES, true).expect("the test tables open")
}

fn chess(fen: &str) -> Chess {
    let fen: Fen = fen.parse().expect("fen");
    fen.into_position(CastlingMode::Standard).expect("position")
}

/// Our values of 300 random positions of the tables equal python-chess's
/// WDL and DTZ of them (`chess.syzygy` reads the same files).
#[test]
fn probes_agree_with_python_chess() {
    let tables = tables();
    assert_eq!(tables.max_pieces(), 4);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/syzygy_probe.py");
    let out = common::output_ok(Command::new("python3").args([script, TABLES, "300", "37"]));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut seen = [0; 3];
    for line in text.lines() {
        let f: Vec<&str> = line.split(';').collect();
        let (wdl, dtz): (i32, i32) = (f[1].parse().expect("wdl"), f[2].parse().expect("dtz"));
        let want = match wdl {
            2 => Value::tablebase_win(dtz.unsigned_abs()),
            -2 => -Value::tablebase_win(dtz.unsigned_abs()),
            _ => Value::DRAW,
        };
        seen[(wdl.signum() + 1) as usize] += 1;
        assert_eq!(tables.value(&chess(f[0])), Some(want), "{line}");
    }
    assert_eq!(seen.iter().sum::<usize>(), 300);
    assert!(
        seen.iter().all(|&n| n > 20),
        "wins, draws and losses: {seen:?}"
    );
}

/// Positions the tables do not hold: too many pieces, castling rights.
#[test]
fn the_tables_hold_no_position_beyond_them() {
    let tables = tables();
    assert_eq!(tables.value(&Chess::default()), None);
    let castling = chess("4k3/8/8/8/8/8/8/4K2R w K - 0 1");
    assert!(!tables.covers(&castling));
    assert_eq!(tables.value(&castling), None);
    assert!(
        tables
            .value(&chess("4k3/8/8/8/8/8/8/4K2R w - - 0 1"))
            .is_some()
    );
}

/// With `SyzygyPath`, a root the tables hold is played from them: a win is
/// kept (the position after the move is lost for the other side), a draw
/// is held, and the line shows the tables' value and `tbhits`.
#[test]
fn the_root_move_in_a_tablebase_position_keeps_its_value() {
    let tables = tables();
    let mut e = Mpcmc::start(&[&format!("--syzygy-path={TABLES}")]);
    e.handshake();
    let cases = [
        // KQvK, KRvK, KBNvK: won; KRvKR, KBvKN: drawn.
        ("8/8/8/8/8/2k5/8/4K2Q w - - 0 1", 1),
        ("8/8/3k4/8/8/8/8/R3K3 b - - 0 1", -1),
        ("8/8/8/4k3/8/8/8/KBN5 w - - 0 1", 1),
        ("8/8/3k4/3r4/8/8/3R4/3K4 w - - 0 1", 0),
        ("8/8/3k4/3n4/8/8/3B4/3K4 b - - 0 1", 0),
    ];
    for (fen, sign) in cases {
        let root = position(Some(fen), &[]);
        let before = tables.value(&root).expect("in the tables");
        assert_eq!(before.cmp(&Value::DRAW) as i32, sign, "{fen}");
        e.send(&format!("position fen {fen}"));
        e.send("go movetime 1000");
        let (mv, lines) = e.bestmove(10 * SECOND);
        let mv = assert_legal(&root, &mv);
        let mut after = root.clone();
        after.play_unchecked(mv);
        let kept = -tables.value(&after).expect("after, in the tables");
        assert_eq!(kept.cmp(&Value::DRAW) as i32, sign, "{fen}: {mv}");
        let line = last_line(&lines);
        assert!(line.contains(" tbhits "), "{line}");
        let cp = cp_of(&line);
        match sign {
            1 => assert!(cp > 20_000, "{line}"),
            -1 => assert!(cp < -20_000, "{line}"),
            _ => assert_eq!(cp, 0, "{line}"),
        }
    }
    assert!(e.quit().success());
}

/// A path that cannot be read is said in an `info string` once, when it
/// is set (or at the first `isready`, from a flag), as Stockfish says
/// `Found 0 tablebases`, never in a search; in words of our own, not the
/// system's (`No such file or directory` made XBoard report that its
/// engine failed to start); and the engine plays on without tables.
#[test]
fn a_missing_tablebase_path_is_said_when_set_and_play_goes_on() {
    let said =
        "info string SyzygyPath: found 0 tablebases (there is no directory '/nonexistent/syzygy')";
    // The meta-engine and the engine alone, the path from a flag (said at
    // `isready`) and from `setoption` (said then), as Polyglot passes
    // XBoard's `egtpath`.
    for flags in [&[][..], &["engine"][..]] {
        for by_setoption in [false, true] {
            let mut all = flags.to_vec();
            if !by_setoption {
                all.push("--syzygy-path=/nonexistent/syzygy");
            }
            let mut e = Mpcmc::start(&all);
            e.send("uci");
            e.until("uciok", 5 * SECOND);
            if by_setoption {
                e.send("setoption name SyzygyPath value /nonexistent/syzygy");
            }
            e.send("isready");
            let mut before = e.until("readyok", 10 * SECOND);
            let fen = "8/8/8/8/8/2k5/8/4K2Q w - - 0 1";
            let mut searches = Vec::new();
            for _ in 0..2 {
                e.send(&format!("position fen {fen}"));
                e.send("go movetime 300");
                let (mv, more) = e.bestmove(10 * SECOND);
                assert_legal(&position(Some(fen), &[]), &mv);
                searches.extend(more);
            }
            let case = format!("{flags:?}, setoption {by_setoption}");
            before.retain(|l| l.starts_with(said));
            assert_eq!(before.len(), 1, "{case}: {:#?}", e.transcript);
            assert!(
                !searches.iter().any(|l| l.contains("SyzygyPath")),
                "{case}: {searches:?}"
            );
            assert!(
                !searches.iter().any(|l| l.contains(" tbhits ")),
                "{case}: {searches:?}"
            );
            assert!(
                !e.transcript
                    .iter()
                    .any(|l| l.contains("os error") || l.contains("No such")),
                "{case}: {:#?}",
                e.transcript
            );
            assert!(e.quit().success());
        }
    }
}

/// The real pool, noting the position of every search that reaches it.
struct Noting {
    pool: Pool,
    seen: Mutex<Vec<Chess>>,
}

impl Children for Noting {
    type Error = SearchError;

    async fn search(&self, query: Query, cancel: CancellationToken) -> Result<Report, SearchError> {
        let pos = query.position().expect("a board game");
        let VariantPosition::Chess(pos) = pos else {
            panic!("a chess game");
        };
        self.seen.lock().expect("lock").push(pos);
        self.pool.search(query, cancel).await
    }
}

/// Behind the tables, the lookahead never asks a child about a position
/// they hold: a capture into four pieces is valued exactly, the
/// opponent's reply there is the tables' move, and only the lines that
/// stay at five pieces reach the built-in children.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lookahead_never_asks_a_child_about_a_tablebase_position() {
    let tables = Arc::new(tables());
    let options = Options::default();
    let noting = Arc::new(Noting {
        pool: Pool::start(options.pool_config().expect("config")),
        seen: Mutex::default(),
    });
    noting.pool.ready().await;
    let tabled = Arc::new(Tabled::new(noting.clone(), Some(tables.clone())));
    // KRP v KR: Rxd5+ takes the rook into KRP v K.
    let fen = "8/8/3k4/3r4/8/8/1P1R4/3K4 w - - 0 1";
    let game = Arc::new(Game::from_fen(fen, CastlingMode::Standard).expect("fen"));
    let moves = game.legal_moves();
    let d = decide(
        &tabled,
        &game,
        &moves,
        ChildLimit::Nodes(2000),
        Settings::new(Lookahead::One),
        &CancellationToken::new(),
        &mut |_, _| {},
    )
    .await
    .expect("a decision");
    let seen = noting.seen.lock().expect("lock").clone();
    assert!(!seen.is_empty(), "the other lines reach the children");
    for pos in &seen {
        assert!(
            tables.value(pos).is_none(),
            "a child was asked about {pos:?}"
        );
    }
    let capture = d
        .candidates
        .iter()
        .find(|c| c.mv.to_string() == "d2d5")
        .expect("Rxd5 is a candidate");
    let reply = capture.reply.expect("the tables' reply");
    let mut after = position(Some(fen), &[]);
    after.play_unchecked(board(capture.mv));
    let tables_reply = tables.best_move(&after).expect("in the tables").0;
    assert_eq!(reply, tables_reply.into());
    after.play_unchecked(board(reply));
    assert_eq!(capture.value, tables.value(&after), "exact, for White");
    // Every line that ends where the tables reach (our capture, or a reply
    // that captures after a child predicted it) has the tables' value,
    // unmixed with the opponent's estimate.
    let mut exact = 0;
    for c in &d.candidates {
        let mut end = position(Some(fen), &[]);
        end.play_unchecked(board(c.mv));
        let Some(reply) = c.reply else { continue };
        end.play_unchecked(board(reply));
        if let Some(v) = tables.value(&end) {
            assert_eq!(c.value, Some(v), "{:?}", c.mv);
            exact += 1;
        }
    }
    assert!(exact >= 2, "{exact} lines end in the tables");
    drop(d);
    drop(tabled);
    if let Ok(noting) = Arc::try_unwrap(noting) {
        noting.pool.shutdown().await;
    }
}

/// A win that the fifty-move counter leaves no time to convert is a draw
/// under `Syzygy50MoveRule` (the default), a win without it.
#[test]
fn a_cursed_win_is_a_draw_under_the_fifty_move_rule() {
    let won = chess("8/8/8/8/8/2k5/8/4K2Q w - - 0 1");
    let late = chess("8/8/8/8/8/2k5/8/4K2Q w - - 95 60");
    let rule = tables();
    assert!(rule.value(&won).is_some_and(|v| v > Value::cp(20_000)));
    assert_eq!(rule.value(&late), Some(Value::DRAW));
    let no_rule = Tables::open(TABLES, false).expect("tables");
    assert!(no_rule.value(&late).is_some_and(|v| v > Value::cp(20_000)));
}

/// K+Q+P v K+R (five pieces, beyond the test tables), where Qxd4+ takes
/// the rook into K+Q+P v K, a tablebase win.
const CAPTURE_INTO_A_WIN: &str = "3k4/8/8/8/3r4/8/1P1Q4/3K4 w - - 0 1";

/// The built-in engine alone (`mpcmc engine`), as a GUI loads it, with the
/// tables: the value after a capture into them is theirs (`tbhits`, the
/// tablebase band), and without them it is an evaluation.
#[test]
fn the_engine_alone_probes_captures_into_the_tables() {
    // KQP v KR: Qxd4+ takes the rook into KQP v K, a tablebase win.
    let fen = CAPTURE_INTO_A_WIN;
    let score = |flags: &[&str]| {
        let mut e = Mpcmc::builtin(flags);
        e.handshake();
        e.send(&format!("position fen {fen}"));
        e.send("go depth 6");
        let (mv, lines) = e.bestmove(30 * SECOND);
        assert_eq!(mv, "d2d4", "{lines:?}");
        assert!(e.quit().success());
        let line = last_line(&lines);
        (cp_of(&line), line)
    };
    let (with, line) = score(&[&format!("--syzygy-path={TABLES}")]);
    assert!((19_000..20_000).contains(&with), "{line}");
    assert!(line.contains(" tbhits "), "{line}");
    let (without, line) = score(&[]);
    assert!(without < 5_000, "{line}");
    assert!(!line.contains(" tbhits "), "{line}");
}

/// The last `info depth` line.
fn last_line(lines: &[String]) -> String {
    lines
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .expect("a line")
        .clone()
}

/// The `cp` of an `info` line.
fn cp_of(line: &str) -> i32 {
    line.split_whitespace()
        .skip_while(|w| *w != "cp")
        .nth(1)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no cp in {line}"))
}

/// At a root the tables hold, the engine alone searches only the moves
/// that keep the result, counted with the fifty-move counter: a win with
/// time left on the counter shows as a tablebase win, the same win with
/// five plies left is a draw under `Syzygy50MoveRule` and a win without it.
#[test]
fn the_engine_alone_values_its_root_by_the_tables_and_the_counter() {
    let shown = |fen: &str, rule: bool| {
        let mut e = Mpcmc::builtin(&[
            &format!("--syzygy-path={TABLES}"),
            &format!("--syzygy50-move-rule={rule}"),
        ]);
        e.handshake();
        e.send(&format!("position fen {fen}"));
        e.send("go nodes 5000");
        let (mv, lines) = e.bestmove(30 * SECOND);
        assert_legal(&chess(fen), &mv);
        assert!(e.quit().success());
        let line = last_line(&lines);
        assert!(line.contains(" tbhits "), "{line}");
        cp_of(&line)
    };
    let krk = "8/8/8/4k3/8/8/8/KR6 w - - 0 1";
    assert!(shown(krk, true) > 19_000);
    let late = "8/8/8/4k3/8/8/8/KR6 w - - 95 60";
    assert_eq!(shown(late, true), 0, "five plies left: a draw");
    assert!(shown(late, false) > 19_000, "no fifty-move rule: a win");
    // The side that loses sees the loss.
    assert!(shown("8/8/8/4k3/8/8/8/KR6 b - - 0 1", true) < -19_000);
}

/// The engine alone with the tables converts wins that need technique
/// within the fifty-move rule, playing both sides at a small budget:
/// K+B+N v K and K+R v K end in mate before the counter reaches 100.
#[test]
fn the_engine_alone_converts_tablebase_wins_within_the_fifty_move_rule() {
    let mut e = Mpcmc::builtin(&[&format!("--syzygy-path={TABLES}")]);
    e.handshake();
    for fen in [
        "8/8/8/4k3/8/8/8/KBN5 w - - 0 1",
        "8/8/8/3k4/8/8/8/R3K3 w - - 0 1",
    ] {
        e.send("ucinewgame");
        let mut pos = chess(fen);
        let mut moves: Vec<String> = Vec::new();
        while !pos.is_game_over() {
            assert!(
                pos.halfmoves() < 100,
                "{fen}: not converted by the fifty-move rule: {moves:?}"
            );
            e.send(&format!("position fen {fen} moves {}", moves.join(" ")));
            e.send("go nodes 2000");
            let (mv, _) = e.bestmove(30 * SECOND);
            pos.play_unchecked(assert_legal(&pos, &mv));
            moves.push(mv);
        }
        assert!(pos.is_checkmate(), "{fen}: {moves:?}");
    }
    assert!(e.quit().success());
}

/// The built-in children probe the tables in their own searches: a search
/// of a position the tables do not hold reaches one, and the captures in
/// its tree into the tables are theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_builtin_children_probe_the_tables_in_their_searches() {
    tables();
    let mut options = Options::default();
    options.set("SyzygyPath", Some(TABLES)).expect("path");
    let pool = Pool::start(options.pool_config().expect("config"));
    pool.ready().await;
    let game = Arc::new(Game::from_fen(CAPTURE_INTO_A_WIN, CastlingMode::Standard).expect("fen"));
    let report = pool
        .search(
            Query::root(game, ChildLimit::Nodes(5000)),
            CancellationToken::new(),
        )
        .await
        .expect("a report");
    assert!(
        report.extra.tbhits.is_some_and(|n| n > 0),
        "{:?}",
        report.extra
    );
    assert!(
        report.score.is_some_and(|v| v >= Value::cp(19_000)),
        "{:?}",
        report.score
    );
    pool.shutdown().await;
}

/// The engine alone's root ranking (as Stockfish ranks root moves): every
/// move that still wins within the fifty-move rule alike; once a position
/// has repeated, only the fastest conversions; a move into a third
/// repetition is a draw; with the counter too far gone, a draw under the
/// rule and a win without it.
#[test]
fn the_root_ranking_keeps_the_win_and_makes_progress() {
    use mpcmc_builtin::syzygy::Syzygy;
    let tables = tables();
    let syzygy = Syzygy::shared(TABLES).expect("tables");
    // Rb3 and Rb4+ give the rook away.
    let root = chess("8/8/8/8/2k5/8/8/KR6 w - - 0 1");
    let key = mpcmc::mpc::game::hash(&root);
    let moves: Vec<_> = root.legal_moves().into_iter().collect();
    let after_value = |m: &shakmaty::Move| {
        let mut after = root.clone();
        after.play_unchecked(*m);
        -tables.value(&after).expect("in the tables")
    };
    let fresh = syzygy
        .rank_root(&root, &moves, &[key], true)
        .expect("ranked");
    assert_eq!(fresh.probed, moves.len());
    assert!(fresh.score > 20_000, "a win: {}", fresh.score);
    assert!(fresh.moves.len() > 1, "every winning move alike");
    for m in &fresh.moves {
        assert!(after_value(m) > Value::cp(20_000), "{m:?} keeps the win");
    }
    let hanging: Vec<_> = moves
        .iter()
        .filter(|m| after_value(m) <= Value::DRAW)
        .collect();
    assert!(!hanging.is_empty(), "some move gives the rook away");
    assert!(hanging.iter().all(|m| !fresh.moves.contains(m)));
    // Repeated since the last zeroing move: only the fastest conversions.
    let repeated = syzygy
        .rank_root(&root, &moves, &[key, 1, key], true)
        .expect("ranked");
    let fastest = moves.iter().map(after_value).max().expect("moves");
    assert!(!repeated.moves.is_empty());
    for m in &repeated.moves {
        assert_eq!(after_value(m), fastest, "{m:?}");
    }
    // A move into a position seen twice already is a draw: never kept.
    let m = repeated.moves[0];
    let mut after = root.clone();
    after.play_unchecked(m);
    let twice = mpcmc::mpc::game::hash(&after);
    let again = syzygy
        .rank_root(&root, &moves, &[twice, 1, twice, key], true)
        .expect("ranked");
    assert!(!again.moves.contains(&m), "{m:?} repeats a third time");
    // Five plies left on the counter: a draw under the rule only.
    let late = chess("8/8/8/8/2k5/8/8/KR6 w - - 95 60");
    let late_key = mpcmc::mpc::game::hash(&late);
    let rule = syzygy
        .rank_root(&late, &moves, &[late_key], true)
        .expect("ranked");
    assert_eq!(rule.score, 0);
    let no_rule = syzygy
        .rank_root(&late, &moves, &[late_key], false)
        .expect("ranked");
    assert!(no_rule.score > 20_000);
}

fn board(m: mpcmc::protocol::GameMove) -> shakmaty::Move {
    m.board().expect("a chess move")
}
