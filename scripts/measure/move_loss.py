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

Long measurements (issue 61's curve: many budgets, two children, hours):
JOBS=n plays and judges on n processes at once (the positions split among
them), and CACHE=FILE.json keeps every move played (by variant, GO and
position) and every judged value (by position, move, JUDGE and JUDGE_AT), so
that a run stopped part-way resumes and runs at other budgets judge a root or
a move once. A cache belongs to one build: delete it when a binary changes.

usage: move_loss.py POSITIONS.epd B JUDGE VARIANT...
  VARIANT: name=BINARY[,Option=Value...]   (the binary gets `--` flags in
           Option only when it begins with -, e.g. engine for `mpcmc engine`)
Positions: a FEN per line (an EPD's first four fields are enough)."""
import json
import math
import os
import subprocess
import sys
import threading
import time

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


def play(binary, args, opts, fens, nodes, seeded, seeds):
    """Yields the engine's move at each of fens as it comes (a stopped run
    keeps in the cache the moves played up to its last save, at most 30 s
    before it stopped)."""
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
    for fen, seed in zip(fens, seeds):
        if seeded:
            send(f"setoption name Seed value {seed}")
        send("ucinewgame")
        send("isready")
        until("readyok")
        send(f"position fen {fen}")
        send(os.environ.get("GO", f"go nodes {nodes}"))
        yield until("bestmove").split()[1]
    send("quit")
    p.wait()


CACHE = os.environ.get("CACHE")
JOBS = int(os.environ.get("JOBS", "1"))
cache = json.load(open(CACHE)) if CACHE and os.path.exists(CACHE) else {}
lock = threading.Lock()
saved_at = time.monotonic()


def save():
    """The cache to its file (the whole of it: called at most every 30 s)."""
    global saved_at
    if CACHE:
        json.dump(cache, open(CACHE + ".tmp", "w"))
        os.replace(CACHE + ".tmp", CACHE)
    saved_at = time.monotonic()


def remember(key, value):
    with lock:
        cache[key] = value
        if time.monotonic() - saved_at > 30:
            save()


def in_parallel(items, work):
    """work(chunk) on JOBS contiguous chunks of items at once."""
    n = max(1, min(JOBS, len(items)))
    chunks = [items[i * len(items) // n:(i + 1) * len(items) // n] for i in range(n)]
    threads = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    save()


def play_all(spec, binary, args, opts, fens, nodes, seeded):
    """The moves of one variant, from the cache where it has them."""
    go = os.environ.get("GO", f"go nodes {nodes}")
    keys = [f"play|{spec}|{go}|{j if seeded else 0}|{fen}" for j, fen in enumerate(fens)]
    todo = [j for j, k in enumerate(keys) if k not in cache]

    def work(chunk):
        if chunk:
            moves = play(binary, args, opts, [fens[j] for j in chunk], nodes, seeded, [j + 1 for j in chunk])
            for j, mv in zip(chunk, moves, strict=True):
                remember(keys[j], mv)
    in_parallel(todo, work)
    return [cache[k] for k in keys]


def judge_all(fens, chosen, judge):
    """Stockfish's value (cp, the mover's view) of each root and each chosen
    move, searched on JOBS processes, from the cache where it has them."""
    at = os.environ.get("JUDGE_AT", "after")
    tasks = {(fen, None) for fen in fens}
    tasks |= {(fen, moves[i]) for moves in chosen.values() for i, fen in enumerate(fens)}
    tasks = sorted(tasks, key=lambda t: (t[0], t[1] or ""))
    key = lambda fen, mv: f"judge|{judge}|{at if mv else 'root'}|{fen}|{mv or ''}"
    todo = [t for t in tasks if key(*t) not in cache]

    def work(chunk):
        if not chunk:
            return
        sf = chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish")
        sf.configure({"Threads": 1, "Hash": 64})
        limit = chess.engine.Limit(nodes=judge)
        for fen, mv in chunk:
            board = chess.Board(fen)
            side = board.turn
            sf.configure({"Clear Hash": None})
            if mv is None:
                v = sf.analyse(board, limit)["score"].pov(side).score(mate_score=10000)
            elif at == "root":
                info = sf.analyse(board, limit, root_moves=[chess.Move.from_uci(mv)])
                v = info["score"].pov(side).score(mate_score=10000)
            else:
                board.push_uci(mv)
                if board.is_game_over():
                    v = 0 if board.result() == "1/2-1/2" else 10000
                else:
                    v = sf.analyse(board, limit)["score"].pov(side).score(mate_score=10000)
            remember(key(fen, mv), v)
        sf.quit()
    in_parallel(todo, work)
    return lambda fen, mv: cache[key(fen, mv)]


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
    for spec, (name, binary, args, opts) in zip(sys.argv[4:], variants):
        chosen[name] = play_all(spec, binary, args, opts, fens, nodes, "SEEDS" in os.environ)
        print(f"{name}: played", file=sys.stderr)
    value = judge_all(fens, chosen, judge)
    loss = {name: [] for name, *_ in variants}
    errors = {name: [0, 0] for name, *_ in variants}
    for i, fen in enumerate(fens):
        # the root value: the best of Stockfish's own and every move judged
        best = max(value(fen, None), *(value(fen, chosen[name][i]) for name in chosen))
        for name in chosen:
            mv = chosen[name][i]
            v = value(fen, mv)
            loss[name].append((mv, max(0.0, wp(best) - wp(v))))
            errors[name][0] += 2 * (wp(best) - wp(v)) >= 0.3
            errors[name][1] += best - v >= 300 and abs(best) <= 300
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
