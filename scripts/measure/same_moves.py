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
import subprocess
import sys

OPENINGS = pathlib.Path(__file__).resolve().parents[2] / "tests/data/openings.epd"
SETTINGS = (
    [("Threads", 1)],
    [("Threads", 1), ("Lookahead", "one")],
    [("Threads", 1), ("Lookahead", "two")],
    [("Threads", 1), ("UCI_LimitStrength", "true"), ("UCI_Elo", "1500"), ("Seed", 5)],
)


def moves(binary, opts, fens):
    """The binary's `bestmove` for each position, each `go` answered before
    the next command is sent (a `quit` read at once ends a search early)."""
    p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(line):
        p.stdin.write(line + "\n")
        p.stdin.flush()

    def until(prefix):
        for line in p.stdout:
            if line.startswith(prefix):
                return line.split()
        raise RuntimeError(f"{binary} ended before '{prefix}'")

    send("uci")
    until("uciok")
    for k, v in opts:
        send(f"setoption name {k} value {v}")
    best = []
    for fen in fens:
        parts = fen.split()
        full = " ".join(parts[:4]) + " 0 1" if len(parts) == 4 else fen
        send("ucinewgame")
        send("isready")
        until("readyok")
        send(f"position fen {full}")
        send("go nodes 30000")
        best.append(until("bestmove")[1])
    send("quit")
    p.wait(timeout=60)
    return best


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
