#!/usr/bin/env python3
"""Balanced random openings for a variant match: `plies` random legal moves
from the variant's start (no check given, so three-check counters stay at
their start), kept when a judge engine's score at `nodes` is within
`margin` centipawns. One EPD a line (python-chess's, pockets included), for
cutechess-cli's `-openings file=… format=epd`.

Usage: variant_openings.py VARIANT COUNT OUT [--judge CMD] [--plies 4]
       [--nodes 20000] [--margin 120] [--seed 1]"""

import argparse
import random

import chess
import chess.engine
import chess.variant

p = argparse.ArgumentParser()
p.add_argument("variant")
p.add_argument("count", type=int)
p.add_argument("out")
p.add_argument("--judge", default="/usr/games/fairy-stockfish")
p.add_argument("--plies", type=int, default=4)
p.add_argument("--nodes", type=int, default=20000)
p.add_argument("--margin", type=int, default=120)
p.add_argument("--seed", type=int, default=1)
a = p.parse_args()

rng = random.Random(a.seed)
Board = chess.variant.find_variant(a.variant)
judge = chess.engine.SimpleEngine.popen_uci(a.judge.split())
seen, kept, tried = set(), [], 0
try:
    while len(kept) < a.count and tried < 100 * a.count:
        tried += 1
        board = Board()
        ok = True
        for _ in range(a.plies):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                ok = False
                break
            board.push(rng.choice(moves))
            if board.is_check() or board.is_game_over():
                ok = False
                break
        epd = board.epd()
        if not ok or epd in seen:
            continue
        info = judge.analyse(board, chess.engine.Limit(nodes=a.nodes))
        score = info["score"].white()
        if score.is_mate() or abs(score.score()) > a.margin:
            continue
        seen.add(epd)
        kept.append(epd)
finally:
    judge.quit()
with open(a.out, "w") as f:
    f.write("".join(e + "\n" for e in kept))
print(f"{a.variant}: {len(kept)} openings of {tried} tried -> {a.out}")
