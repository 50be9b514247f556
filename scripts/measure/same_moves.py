#!/usr/bin/env python3
"""Whether two mpcmc binaries play the same moves: `go nodes 30000` from the
first N openings of tests/data/openings.epd (a new game each), under four
settings (the defaults, `Lookahead one`, `Lookahead two`, `UCI_LimitStrength`
1500 with `Seed` 5), `Threads` 1. For a change meant to be a pure move (issue 35).
usage: same_moves.py OLD NEW [N] [--memoryless]   (N: 12 by default)

Warm children make a decision depend on the order its calls reach a child
(the root search runs beside the lookahead's calls), and the machine's load
changes that order: on a busy machine the same binary can differ from itself
(2 of 12 moves were seen to). `--memoryless` adds `Memoryless true` to every
setting (each call on a cleared hash, as a level with a `Seed` does), so the
moves depend on the code alone."""
import pathlib
import sys

import chess
import chess.engine

OPENINGS = pathlib.Path(__file__).resolve().parents[2] / "tests/data/openings.epd"
SETTINGS = (
    [("Threads", 1)],
    [("Threads", 1), ("Lookahead", "one")],
    [("Threads", 1), ("Lookahead", "two")],
    [("Threads", 1), ("UCI_LimitStrength", "true"), ("UCI_Elo", "1500"), ("Seed", 5)],
)


def moves(binary, opts, fens):
    """The binary's move for each position, a new game each (python-chess
    sends `ucinewgame` and waits for `readyok`, then each `go` is answered
    before the next command)."""
    engine = chess.engine.SimpleEngine.popen_uci(binary)
    try:
        engine.configure(dict(opts))
        return [
            engine.play(chess.Board(fen), chess.engine.Limit(nodes=30000), game=object()).move.uci()
            for fen in fens
        ]
    finally:
        engine.quit()


def main():
    old, new = sys.argv[1], sys.argv[2]
    args = [a for a in sys.argv[3:] if a != "--memoryless"]
    n = int(args[0]) if args else 12
    extra = [("Memoryless", "true")] if "--memoryless" in sys.argv else []
    fens = [line.split(";")[0].strip() for line in OPENINGS.open()][:n]
    for opts in SETTINGS:
        opts = opts + extra
        a, b = moves(old, opts, fens), moves(new, opts, fens)
        same = sum(x == y for x, y in zip(a, b))
        print(opts, "same" if a == b else "DIFFERENT", f"{same}/{len(a)}")


if __name__ == "__main__":
    main()
