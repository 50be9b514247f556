#!/usr/bin/env python3
"""The virtual clock against a real run of two workers (issue 36, point 3):
from each of the first N openings, a real decision with the root search on
a child of its own and the lookahead on another (`Workers=root: builtin;
builtin`, `go movetime T`), then the same position with `VirtualWorkers=2`
at `go nodes R`, R the nodes the real root search reported. Prints the
median rounds and lookahead nodes of each, and how often they chose the
same move. Run it on a quiet machine with two free cores. (With a worker
for every root move the virtual clock runs one even pass instead of rounds,
a plan the real pool does not run yet: not compared here.)
usage: real_virtual.py MPCMC [T_MS] [N]   (T 300, N 16 by default)"""
import pathlib
import re
import statistics
import subprocess
import sys

OPENINGS = pathlib.Path(__file__).resolve().parents[2] / "tests/data/openings.epd"
ROOTED = ("Workers", "root: builtin; builtin")


def decide(binary, options, fen, go):
    """One decision: (rounds, all nodes, root nodes, move), or None."""
    p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    script = "uci\n" + "".join(f"setoption name {k} value {v}\n" for k, v in options)
    script += f"setoption name ShowDecisions value true\nisready\nposition fen {fen}\n{go}\n"
    p.stdin.write(script)
    p.stdin.flush()
    lines = []
    for line in p.stdout:
        lines.append(line.strip())
        if line.startswith("bestmove"):
            break
    p.stdin.write("quit\n")
    p.stdin.close()
    p.wait(timeout=10)
    said = [l for l in lines if l.startswith("info string") and "rounds," in l]
    if not said:
        return None
    m = re.search(r"(\d+) rounds, (\d+) calls, (\d+) nodes", said[-1])
    r = re.search(r"root search depth: (\d+), (\d+) nodes", said[-1])
    return int(m.group(1)), int(m.group(3)), int(r.group(2)) if r else 0, lines[-1].split()[1]


def main():
    binary = sys.argv[1]
    t = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    rows = []
    for line in list(OPENINGS.open())[:n]:
        parts = line.split(";")[0].split()
        fen = " ".join(parts[:4]) + " 0 1"
        real = decide(binary, [ROOTED], fen, f"go movetime {t}")
        if real is None or real[2] == 0:
            continue
        virt = decide(binary, [ROOTED, ("VirtualWorkers", 2)], fen, f"go nodes {real[2]}")
        if virt is None:
            continue
        rows.append((real[0], real[1] - real[2], virt[0], virt[1] - virt[2], real[3] == virt[3]))
    med = lambda i: statistics.median(r[i] for r in rows)
    print(f"positions {len(rows)}")
    print(f"real:    rounds {med(0)}, lookahead nodes {med(1)}")
    print(f"virtual: rounds {med(2)}, lookahead nodes {med(3)}")
    print(f"real/virtual lookahead nodes (median) {statistics.median(r[1] / max(1, r[3]) for r in rows):.2f}")
    print(f"same move {sum(r[4] for r in rows)} of {len(rows)}")


if __name__ == "__main__":
    main()
