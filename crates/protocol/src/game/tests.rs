//! A game: positions, moves read and written, repetitions and the end.

use super::*;

fn game(fen: &str, moves: &str) -> Game {
    let mut g = Game::from_fen(fen, CastlingMode::Standard).expect("test fen");
    for m in moves.split_whitespace() {
        g.push_uci(&m.parse().expect("uci")).expect("legal");
    }
    g
}

fn mv(g: &Game, line: &[GameMove], uci: &str) -> GameMove {
    g.read_after(line, &uci.parse().expect("uci"))
        .expect("legal")
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[test]
fn rules_that_end_a_game() {
    let cases = [
        // Fool's mate: white to move is mated.
        (
            "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
            Some(Terminal::Checkmate),
        ),
        ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", Some(Terminal::Stalemate)),
        (
            "8/8/4k3/8/8/3BK3/8/8 w - - 0 1",
            Some(Terminal::InsufficientMaterial),
        ),
        (
            "8/8/4k3/8/8/3RK3/8/8 w - - 100 80",
            Some(Terminal::FiftyMoves),
        ),
        ("8/8/4k3/8/8/3RK3/8/8 w - - 99 80", None),
        (START, None),
    ];
    for (fen, want) in cases {
        assert_eq!(game(fen, "").terminal_now(), want, "{fen}");
    }
}

#[test]
fn threefold_counts_the_game_history() {
    // The start position occurs twice in the history (after 4 knight moves).
    let g = game(START, "g1f3 g8f6 f3g1 f6g8");
    assert_eq!(g.terminal_now(), None);
    let a = mv(&g, &[], "g1f3");
    let b = mv(&g, &[a], "g8f6");
    let c = mv(&g, &[a, b], "f3g1");
    let d = mv(&g, &[a, b, c], "f6g8");
    assert_eq!(g.terminal_after(&[a]), None);
    assert_eq!(g.terminal_after(&[a, b]), None, "second occurrence only");
    // Third occurrence of the position after 1. Nf3 Nf6 2. Ng1: ply 3 of the game.
    assert_eq!(
        g.terminal_after(&[a, b, c]),
        None,
        "second occurrence of this one"
    );
    assert_eq!(g.terminal_after(&[a, b, c, d]), Some(Terminal::Threefold));
    // A repetition short of a draw: after 1. Nf3 the position stood on
    // the board at ply 1 of the game; 1. Nc3 is new, and returning to it
    // on the line repeats it.
    assert!(g.repeats_after(&[a]));
    let n = mv(&g, &[], "b1c3");
    assert!(!g.repeats_after(&[n]));
    let back = [
        n,
        b,
        mv(&g, &[n, b], "c3b1"),
        mv(&g, &[n, b, mv(&g, &[n, b], "c3b1")], "f6g8"),
    ];
    assert!(g.repeats_after(&back));
    assert!(!g.repeats_after(&[]));
    // Mate beats the fifty-move rule.
    let g = game("7k/8/6K1/8/8/8/8/R7 w - - 99 80", "");
    let m = mv(&g, &[], "a1a8");
    assert_eq!(g.terminal_after(&[m]), Some(Terminal::Checkmate));
}

fn variant_game(variant: Variant, fen: &str, moves: &str) -> Game {
    let moves: Vec<MoveText> = moves
        .split_whitespace()
        .map(|m| m.parse().expect("uci"))
        .collect();
    let start = StartPosition::Fen(fen.parse().expect("test fen"));
    let (g, notes) = Game::from_position_command(start, &moves, CastlingMode::Standard, variant)
        .expect("a position of the variant");
    assert!(notes.is_empty(), "{notes:?}");
    g
}

#[test]
fn each_variant_ends_by_its_own_rules() {
    use VariantEnd::*;
    let cases = [
        // Atomic: Nxf7 takes a pawn in chess; here the capture
        // explodes f7's neighbours, e8's king among them.
        (
            Variant::Atomic,
            "rnbqkbnr/pppppppp/8/6N1/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 1",
            "g5f7",
            Some(Terminal::Variant(Lost)),
        ),
        // Antichess: stalemated, the side to move wins.
        (
            Variant::Antichess,
            "8/8/8/8/8/p7/P7/8 w - - 0 1",
            "",
            Some(Terminal::Variant(Won)),
        ),
        // Antichess: no piece left wins.
        (
            Variant::Antichess,
            "8/8/8/8/8/8/1p6/R7 b - - 0 1",
            "b2a1q",
            Some(Terminal::Variant(Won)),
        ),
        // King of the hill: the king on e4.
        (
            Variant::KingOfTheHill,
            "4k3/8/8/8/8/4K3/8/8 w - - 0 1",
            "e3e4",
            Some(Terminal::Variant(Lost)),
        ),
        // Three-check: the third check ends it, mate or not.
        (
            Variant::ThreeCheck,
            "4k3/8/8/8/8/8/8/4K2R w K - 1+3 0 1",
            "h1h8",
            Some(Terminal::Variant(Lost)),
        ),
        // Racing kings: white reaches the eighth rank, black cannot.
        (
            Variant::RacingKings,
            "8/6K1/8/8/8/8/k7/8 w - - 0 1",
            "g7g8",
            Some(Terminal::Variant(Lost)),
        ),
        // Horde: black takes white's last piece.
        (
            Variant::Horde,
            "4k3/8/8/8/8/8/3r4/3P4 b - - 0 1",
            "d2d1",
            Some(Terminal::Variant(Lost)),
        ),
        // Crazyhouse: a mate a chess board would call one is one here
        // only when no drop blocks it; a knight in hand blocks the rook.
        (
            Variant::Crazyhouse,
            "6k1/5ppp/8/8/8/8/8/R5K1[n] w - - 0 1",
            "a1a8",
            None,
        ),
        (
            Variant::Crazyhouse,
            "6k1/5ppp/8/8/8/8/8/R5K1[] w - - 0 1",
            "a1a8",
            Some(Terminal::Checkmate),
        ),
        (Variant::Atomic, START, "e2e4", None),
    ];
    for (variant, fen, moves, want) in cases {
        let g = variant_game(variant, fen, moves);
        assert_eq!(g.terminal_now(), want, "{variant} {fen} {moves}");
        assert_eq!(g.rules(), Rules::Board(variant));
    }
    // The same capture in chess takes a pawn, and the game goes on.
    let g = game(
        "rnbqkbnr/pppppppp/8/6N1/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 1",
        "g5f7",
    );
    assert_eq!(g.terminal_now(), None);
    assert!(g.chess().is_some());
    // A line ends where the variant's game does, and leaves no move.
    let g = variant_game(Variant::KingOfTheHill, "4k3/8/8/8/8/8/4K3/8 w - - 0 1", "");
    let a = mv(&g, &[], "e2e3");
    let b = mv(&g, &[a], "e8e7");
    let up = mv(&g, &[a, b], "e3e4");
    assert_eq!(
        g.terminal_after(&[a, b, up]),
        Some(Terminal::Variant(VariantEnd::Lost))
    );
    assert_eq!(g.terminal_after(&[a, b]), None);
    let end = g.after(&[a, b, up]).expect("board moves");
    assert!(end.legal_moves().is_empty(), "no move after the end");
    assert!(g.chess().is_none());
}

#[test]
fn a_position_command_reads_its_fen_by_the_variant() {
    let read = |fen: &str, variant: Variant| {
        Game::from_position_command(
            StartPosition::Fen(fen.to_owned()),
            &[],
            CastlingMode::Standard,
            variant,
        )
    };
    // cutechess's empty crazyhouse pocket `[-]`.
    let (g, _) = read(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[-] w KQkq - 0 1",
        Variant::Crazyhouse,
    )
    .expect("an empty pocket");
    assert_eq!(g.rules(), Rules::Board(Variant::Crazyhouse));
    let e = read("not/a/fen w - - 0 1", Variant::Chess).expect_err("bad fen");
    assert!(e.contains("invalid fen 'not/a/fen w - - 0 1'"), "{e}");
}

#[test]
fn a_variant_position_command_reads_pockets_checks_and_drops() {
    let start = StartPosition::Fen(
        "r1bqkbnr/ppp2ppp/2n5/4p3/4P3/5N2/PPP2PPP/RNBQKB1R[Pp] w KQkq - 0 5"
            .parse()
            .expect("fen"),
    );
    let moves: Vec<MoveText> = ["P@d5", "N@d4"]
        .iter()
        .map(|m| m.parse().expect("uci"))
        .collect();
    let (g, notes) =
        Game::from_position_command(start, &moves, CastlingMode::Standard, Variant::Crazyhouse)
            .expect("a crazyhouse position");
    // Black has no knight in hand: its drop is refused, noted.
    assert_eq!(g.moves().len(), 1, "{notes:?}");
    assert_eq!(notes.len(), 1);
    // The variant's own start position, for `startpos`.
    let (g, _) = Game::from_position_command(
        StartPosition::Startpos,
        &[],
        CastlingMode::Standard,
        Variant::RacingKings,
    )
    .expect("racing kings");
    assert_eq!(
        Fen::from_position(g.position().expect("a board"), EnPassantMode::Legal).to_string(),
        "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - - 0 1"
    );
    // Three-check's counters: one check left for white to give.
    let (g, _) = Game::from_position_command(
        StartPosition::Fen("4k3/8/8/8/8/8/8/4K2R w K - 1+3 0 1".parse().expect("fen")),
        &[],
        CastlingMode::Standard,
        Variant::ThreeCheck,
    )
    .expect("three-check");
    assert!(
        Fen::from_position(g.position().expect("a board"), EnPassantMode::Legal)
            .to_string()
            .contains(" 1+3 "),
    );
    // A FEN no variant rule allows is refused, naming the variant.
    let e = Game::from_position_command(
        StartPosition::Fen("8/8/8/8/8/8/8/8 w - - 0 1".parse().expect("fen")),
        &[],
        CastlingMode::Standard,
        Variant::Atomic,
    )
    .expect_err("no kings");
    assert!(e.contains("atomic"), "{e}");
}

#[test]
fn incremental_hash_matches_full() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let (_, mut p) = position_from_fen(fen, CastlingMode::Standard).expect("test fen");
    let mut h = hash(&p);
    // A few plies through every kind of move the position has.
    for _ in 0..6 {
        for m in p.legal_moves() {
            let mut c = p.clone();
            c.play_unchecked(m);
            assert_eq!(hash_after(&p, h, m, &c), hash(&c), "{m:?}");
        }
        let m = p.legal_moves()[3];
        let mut c = p.clone();
        c.play_unchecked(m);
        h = hash_after(&p, h, m, &c);
        p = c;
    }
}

#[test]
fn a_line_ends_where_the_game_does() {
    // Knights out and back twice: the start position a third time
    // after the eighth move.
    let g = game(START, "");
    let shuffle = [
        "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8", "e2e4", "e7e5",
    ];
    let mut line = Vec::new();
    for uci in shuffle {
        let m = mv(&g, &line, uci);
        line.push(m);
    }
    assert_eq!(g.until_end(&line).len(), 8);
    assert_eq!(g.until_end(&line[..5]).len(), 5);
    // Fool's mate: nothing after the mate.
    let g = game(START, "f2f3 e7e5 g2g4");
    let mate = mv(&g, &[], "d8h4");
    assert_eq!(g.until_end(&[mate]).len(), 1);
}

#[test]
fn a_game_by_a_childs_rules_keeps_its_tokens_and_asks_for_its_moves() {
    let text = |t: &str| t.parse::<MoveText>().expect("a move");
    let moves = [text("h3e3"), text("h10g8")];
    let (g, notes) = Game::from_position_command(
        StartPosition::Startpos,
        &moves,
        CastlingMode::Standard,
        Rules::Named("xiangqi"),
    )
    .expect("a xiangqi game");
    assert!(notes.is_empty());
    assert_eq!(g.rules(), Rules::from_uci("xiangqi").expect("offered"));
    assert_eq!(g.moves().len(), 2);
    assert_eq!(g.turn(), Color::White);
    assert!(g.position().is_none());
    assert!(g.legal_moves().is_empty() && g.terminal_now().is_none());
    // Before a child listed the moves any token is read; after, only
    // a listed one, at the current position (later ones are the
    // child's to judge).
    assert!(g.read_after(&[], &text("a1a2")).is_some());
    let listed = g
        .clone()
        .with_legal(vec![text("h1g3"), text("b3b10")], None);
    assert_eq!(listed.legal_moves().len(), 2);
    assert_eq!(listed.read_after(&[], &text("a1a2")), None);
    let b10 = listed.read_after(&[], &text("b3b10")).expect("listed");
    assert!(listed.read_after(&[b10], &text("a10a9")).is_some());
    // Keys follow the moves, not the board: a different order is a
    // different key; the same line the same.
    assert_ne!(listed.hash_after(&[b10]), listed.hash_after(&[]));
    assert_eq!(listed.hash_after(&[b10]), listed.hash_after(&[b10]));
    assert!(listed.terminal_after(&[b10]).is_none() && !listed.repeats_after(&[b10]));
    assert_eq!(
        listed.describe_after(&[b10]),
        "xiangqi startpos moves h3e3 h10g8 b3b10"
    );
    // No move: the child's end.
    let over = g.clone().with_legal(Vec::new(), Some(VariantEnd::Lost));
    assert_eq!(
        over.terminal_now(),
        Some(Terminal::Variant(VariantEnd::Lost))
    );
    // Back to the start: nothing listed.
    let start = listed.truncated(0);
    assert_eq!((start.moves().len(), start.legal_moves().len()), (0, 0));
    // Black to move first from a FEN that says so.
    let black = Game::named(
        "shogi",
        StartPosition::Fen(
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL[-] b 0 1".to_owned(),
        ),
        &[],
    );
    assert_eq!(black.turn(), Color::Black);
    assert!(black.start_fen().is_some_and(|f| f.contains("[-] b")));
}

#[test]
fn rules_by_name() {
    assert_eq!(Rules::from_uci("chess"), Some(Rules::default()));
    assert_eq!(
        Rules::from_uci("atomic"),
        Some(Rules::Board(Variant::Atomic))
    );
    assert_eq!(Rules::from_uci("shogi"), Some(Rules::Named("shogi")));
    assert_eq!(Rules::from_uci("bughouse"), None);
    assert_eq!(
        Rules::all().count(),
        Variant::ALL.len() + Rules::NAMED.len()
    );
}
