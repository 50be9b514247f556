"""mpcmc plays the lichess variants through python-chess, whose variant
boards referee every move and decide each game's end by the variant's own
rules. Usage: variants.py <mpcmc> <opponent engine> <variant>... with each
engine given as one command line (split on spaces). Prints one
line a game and `variants: ok`; exits non-zero on any illegal move, engine
error or a game that ends in no way python-chess knows."""

import sys

import chess
import chess.engine
import chess.variant

mpcmc, opponent, variants = sys.argv[1].split(), sys.argv[2].split(), sys.argv[3:]
MAX_PLIES = 120

started = []
try:
    ours = chess.engine.SimpleEngine.popen_uci(mpcmc, timeout=30)
    started.append(ours)
    theirs = chess.engine.SimpleEngine.popen_uci(opponent, timeout=30)
    started.append(theirs)
    assert "UCI_Variant" in ours.options, list(ours.options)
    offered = set(ours.options["UCI_Variant"].var)
    for i, name in enumerate(variants):
        assert name in offered, (name, offered)
        board = chess.variant.find_variant(name)()
        # Colours alternate from one variant to the next.
        white, black = (ours, theirs) if i % 2 == 0 else (theirs, ours)
        while not board.is_game_over() and board.ply() < MAX_PLIES:
            engine = white if board.turn == chess.WHITE else black
            limit = (
                chess.engine.Limit(nodes=6000)
                if engine is ours
                else chess.engine.Limit(nodes=3000)
            )
            result = engine.play(board, limit)
            assert result.move is not None, (name, board.fen())
            assert result.move in board.legal_moves, (name, result.move, board.fen())
            board.push(result.move)
        outcome = board.outcome()
        side = "white" if white is ours else "black"
        how = outcome.termination.name if outcome else f"unfinished at {MAX_PLIES} plies"
        result = board.result(claim_draw=True) if outcome else "*"
        print(f"{name}: mpcmc {side}, {result} ({how}) after {board.ply()} plies")
        # The finished position: mpcmc answers a `go` there as Stockfish
        # does: with no move where the board has none (mate, stalemate, a
        # variant's end), with a move where a rule the GUI applies drew the
        # game (fivefold repetition, 75 moves, material).
        if outcome is not None:
            info = ours.analyse(board, chess.engine.Limit(nodes=1000))
            if any(board.legal_moves):
                assert info.get("pv") and info["pv"][0] in board.legal_moves, (name, how, info)
            else:
                assert "pv" not in info or not info["pv"], (name, info)
    print("variants: ok")
finally:
    for engine in started:
        engine.quit()
