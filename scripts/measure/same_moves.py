#!/usr/bin/env python3
"""Whether two mpcmc binaries play the same moves: `go nodes 30000` from the
first N openings of tests/data/openings.epd (a new game each), under three
settings (the defaults, `Lookahead one`, `UCI_LimitStrength` 1500 with
`Seed` 5), `Threads` 1. For a change meant to be a pure move (issue 35).
usage: same_moves.py OLD NEW [N]   (N: 12 by default)"""
import pathlib
import subprocess
import sys

OPENINGS = pathlib.Path(__file__).resolve().parents[2] / "tests/data/openings.epd"
SETTINGS = (
    [("Threads", 1)],
    [("Threads", 1), ("Lookahead", "one")],
    [("Threads", 1), ("UCI_LimitStrength", "true"), ("UCI_Elo", "1500"), ("Seed", 5)],
)


def moves(binary, opts, fens):
    script = "uci\n" + "".join(f"setoption name {k} value {v}\n" for k, v in opts) + "isready\n"
    for fen in fens:
        parts = fen.split()
        full = " ".join(parts[:4]) + " 0 1" if len(parts) == 4 else fen
        script += f"ucinewgame\nposition fen {full}\ngo nodes 30000\nisready\n"
    script += "quit\n"
    out = subprocess.run([binary], input=script, capture_output=True, text=True, timeout=600).stdout
    return [line.split()[1] for line in out.splitlines() if line.startswith("bestmove")]


def main():
    old, new = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    fens = [line.split(";")[0].strip() for line in OPENINGS.open()][:n]
    for opts in SETTINGS:
        a, b = moves(old, opts, fens), moves(new, opts, fens)
        same = sum(x == y for x, y in zip(a, b))
        print(opts, "same" if a == b else "DIFFERENT", f"{same}/{len(a)}")


if __name__ == "__main__":
    main()
