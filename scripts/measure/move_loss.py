#!/usr/bin/env python3
"""Move quality of engine settings on the same positions, judged by Stockfish
(a paired proxy for a match, for choosing what a match then measures).

Each variant plays `go nodes B` in every position (a new game each, so nothing
carries over); Stockfish 15.1 (1 thread) searches each distinct position after
a chosen move at JUDGE nodes, and its own best at the root. A move's loss is
the root value minus the value after the move, in win probability (the
logistic of judge.py), so a slip in a balanced position weighs more than one
in a decided game. Printed per variant: mean loss, the positions where it
played another move than the first variant, and the paired difference of
loss against the first variant with its standard error.

A level's draws: SEEDS=k plays each position k times, game j with `Seed`
j+1 (the same seeds for every variant), and GO replaces `go nodes B` (e.g.
GO="go wtime 600000 btime 600000 winc 5000 binc 5000", a level's
calibration clock). Also printed: blunders (a drop of 0.3 of 2w-1) and gross
blunders (>= 300 cp lost from a best value within +-300, as judge.py counts
them) a hundred moves. JUDGE_AT=root judges a move by Stockfish's search of
the root restricted to it (`searchmoves`) instead of a search of the
position after it.

usage: move_loss.py POSITIONS.epd B JUDGE VARIANT...
  VARIANT: name=BINARY[,Option=Value...]   (the binary gets `--` flags in
           Option only when it begins with -, e.g. engine for `mpcmc engine`)
Positions: a FEN per line (an EPD's first four fields are enough)."""
import math
import os
import subprocess
import sys

import chess
import chess.engine


def wp(cp):
    return 1 / (1 + math.exp(-0.00368208 * cp))


def parse(spec):
    name, rest = spec.split("=", 1)
    parts = rest.split(",")
    binary, args, opts = parts[0], [], {}
    for p in parts[1:]:
        if p.startswith("-") or "=" not in p:
            args.append(p)
        else:
            k, v = p.split("=", 1)
            opts[k] = v
    return name, binary, args, opts


def play(binary, args, opts, fens, nodes, seeded):
    p = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def send(line):
        p.stdin.write(line + "\n")
        p.stdin.flush()

    def until(prefix):
        while True:
            line = p.stdout.readline()
            assert line, "the engine quit"
            if line.startswith(prefix):
                return line

    send("uci")
    until("uciok")
    for k, v in opts.items():
        send(f"setoption name {k} value {v}")
    moves = []
    for j, fen in enumerate(fens):
        if seeded:
            send(f"setoption name Seed value {j + 1}")
        send("ucinewgame")
        send("isready")
        until("readyok")
        send(f"position fen {fen}")
        send(os.environ.get("GO", f"go nodes {nodes}"))
        moves.append(until("bestmove").split()[1])
    send("quit")
    p.wait()
    return moves


def main():
    path, nodes, judge = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    variants = [parse(s) for s in sys.argv[4:]]
    fens = []
    for line in open(path):
        f = line.split()
        if len(f) >= 4:
            fens.append(" ".join(f[:4]) + (" " + " ".join(f[4:6]) if len(f) >= 6 and f[4].isdigit() else " 0 1"))
    seeds = int(os.environ.get("SEEDS", "1"))
    fens = [f for f in fens for _ in range(seeds)]
    chosen = {}
    for name, binary, args, opts in variants:
        chosen[name] = play(binary, args, opts, fens, nodes, "SEEDS" in os.environ)
        print(f"{name}: played", file=sys.stderr)
    sf = chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish")
    sf.configure({"Threads": 1, "Hash": 64})
    limit = chess.engine.Limit(nodes=judge)
    loss = {name: [] for name, *_ in variants}
    errors = {name: [0, 0] for name, *_ in variants}
    roots, afters = {}, {}
    for i, fen in enumerate(fens):
        board = chess.Board(fen)
        side = board.turn
        if fen not in roots:
            sf.configure({"Clear Hash": None})
            roots[fen] = sf.analyse(board, limit)["score"].pov(side).score(mate_score=10000)
        root = roots[fen]
        after = afters.setdefault(fen, {})
        for name, *_ in variants:
            mv = chosen[name][i]
            if mv not in after:
                b = board.copy()
                b.push_uci(mv)
                if os.environ.get("JUDGE_AT") == "root":
                    sf.configure({"Clear Hash": None})
                    info = sf.analyse(board, limit, root_moves=[chess.Move.from_uci(mv)])
                    after[mv] = info["score"].pov(side).score(mate_score=10000)
                elif b.is_game_over():
                    r = b.result()
                    after[mv] = 0 if r == "1/2-1/2" else 10000
                else:
                    sf.configure({"Clear Hash": None})
                    after[mv] = sf.analyse(b, limit)["score"].pov(side).score(mate_score=10000)
            loss[name].append((mv, after[mv]))
        # the root value: the best of Stockfish's own and every move judged
        best = max(root, *after.values())
        for name in loss:
            mv, v = loss[name][-1]
            loss[name][-1] = (mv, max(0.0, wp(best) - wp(v)))
            errors[name][0] += 2 * (wp(best) - wp(v)) >= 0.3
            errors[name][1] += best - v >= 300 and abs(best) <= 300
    sf.quit()
    first = variants[0][0]
    base = [l for _, l in loss[first]]
    go = os.environ.get("GO", f"go nodes {nodes}")
    print(f"{len(fens)} moves ({seeds} a position), {go}, judged at {judge} nodes")
    for name, *_ in variants:
        ls = [l for _, l in loss[name]]
        diff = [a - b for a, b in zip(ls, base)]
        n = len(diff)
        mean = sum(diff) / n
        sd = math.sqrt(sum((d - mean) ** 2 for d in diff) / max(1, n - 1))
        other = sum(a[0] != b[0] for a, b in zip(loss[name], loss[first]))
        print(f"{name:>14}: mean loss {100 * sum(ls) / n:.2f}%  other move {other:3d}  "
              f"vs {first}: {100 * mean:+.2f}% +/- {100 * sd / math.sqrt(n):.2f}%  "
              f"blunders {100 * errors[name][0] / n:.2f}  gross {100 * errors[name][1] / n:.2f} a hundred moves")


main()
