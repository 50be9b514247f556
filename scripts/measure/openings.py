#!/usr/bin/env python3
"""How a level opens, judged against a Polyglot book of human games (issue 58).

For each seed, a short game from the start position: mpcmc at UCI_Elo=ELO
(UCI_LimitStrength, Seed=seed, the defaults otherwise, so the built-in child
and the built-in openings unless OPTS say otherwise) plays PLIES plies, in
self-play or against OPPONENT (then only mpcmc's moves count). Every counted
move is checked against BOOK (default Debian's gnuchess-book) where the book
knows the position; the first move, and rook-pawn and knight-to-the-rim moves
that are not captures in the first ten plies (and how many of those the book
does not have), are tallied too.

usage: openings.py ELO [SEEDS=20] [PLIES=10] [MOVETIME=0.3]
env:   MPCMC (default target/release/mpcmc), BOOK, OPTS ("Name=value,..."),
       OPPONENT ("stockfish:1350": Debian's Stockfish at that UCI_Elo)
prints one summary line and, with VERBOSE=1, each game's moves."""
import collections, os, sys
import chess, chess.engine, chess.polyglot

elo = int(sys.argv[1])
seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
plies = int(sys.argv[3]) if len(sys.argv) > 3 else 10
movetime = float(sys.argv[4]) if len(sys.argv) > 4 else 0.3
book = chess.polyglot.open_reader(os.environ.get("BOOK", "/usr/share/games/gnuchess/book.bin"))
extra = dict(kv.split("=", 1) for kv in os.environ.get("OPTS", "").split(",") if kv)
mpcmc = chess.engine.SimpleEngine.popen_uci(os.environ.get("MPCMC", "target/release/mpcmc"))
opponent = None
if os.environ.get("OPPONENT"):
    name, level = os.environ["OPPONENT"].split(":")
    assert name == "stockfish", name
    opponent = chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish")
    opponent.configure({"UCI_LimitStrength": True, "UCI_Elo": int(level), "Threads": 1})

def rim(board, mv):
    """A rook-pawn or knight-to-the-rim move that is not a capture."""
    if board.is_capture(mv):
        return False
    piece = board.piece_type_at(mv.from_square)
    edge = chess.square_file(mv.to_square) in (0, 7)
    return edge and piece in (chess.PAWN, chess.KNIGHT)

known = in_book = rims = rims_out = 0
first = collections.Counter()
for seed in range(1, seeds + 1):
    mpcmc.configure({"UCI_LimitStrength": True, "UCI_Elo": elo, "Seed": seed, **extra})
    board = chess.Board()
    ours = chess.WHITE if opponent is None or seed % 2 else chess.BLACK
    line = []
    for ply in range(plies):
        if board.is_game_over():
            break
        counted = opponent is None or board.turn == ours
        engine = mpcmc if counted else opponent
        mv = engine.play(board, chess.engine.Limit(time=movetime), game=seed).move
        if counted:
            book_moves = {e.move for e in book.find_all(board)}
            if book_moves:
                known += 1
                in_book += mv in book_moves
            if ply < 10 and rim(board, mv):
                rims += 1
                rims_out += mv not in book_moves
            if ply == 0:
                first[board.san(mv)] += 1
        line.append(board.san(mv))
        board.push(mv)
    if os.environ.get("VERBOSE"):
        print(seed, " ".join(line))
mpcmc.quit()
if opponent:
    opponent.quit()
games_white = sum(first.values())
main4 = sum(first[m] for m in ("e4", "d4", "Nf3", "c4"))
print(f"elo {elo}: book moves {in_book} of {known} ({100 * in_book / max(known, 1):.0f} %), "
      f"first move e4/d4/Nf3/c4 in {main4} of {games_white} games, "
      f"rim moves in the first ten plies {rims} ({rims_out} not the book's); first moves {dict(first.most_common())}"
      + (f"; against {os.environ['OPPONENT']}" if opponent else " (self-play)"))
