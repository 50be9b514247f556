#!/usr/bin/env python3
"""A match in a game mpcmc knows by name only (xiangqi, shogi…), refereed
by pyffish: the harness for what cutechess-cli does not play (xiangqi) and
one referee for all of them.

mpcmc (`--ours`, with `setoption name ChildNodes value N` and a safety
`go movetime`) against an engine at a fixed node count (`--theirs`,
`go nodes M`), over random openings of `--plies` plies (seeded), each
played with both colours. A game ends where pyffish ends it (no legal
move, or a rule's immediate or optional end: repetition, counting), else
a draw at `--max-plies`. Every move is checked against pyffish's list.
Prints each game, then W-L-D and the pentanomial counts for
`scripts/measure/penta.py`.

Example:
  scripts/measure/named_match.py --variant xiangqi --pairs 100 --seed 59201 \\
    --ours "target/release/mpcmc --evaluator=/usr/games/fairy-stockfish --opponent=/usr/games/fairy-stockfish" \\
    --child-nodes 1000 --theirs /usr/games/fairy-stockfish --nodes 2000
"""

import argparse
import math
import os
import random
import sys

import pyffish as sf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "python"))
from named_games import Engine  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--variant", required=True)
ap.add_argument("--pairs", type=int, default=100)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--plies", type=int, default=4)
ap.add_argument("--max-plies", type=int, default=400)
ap.add_argument("--ours", required=True)
ap.add_argument("--child-nodes", type=int, default=1000)
ap.add_argument("--ours-movetime", type=int, default=600000)
ap.add_argument("--theirs", required=True)
ap.add_argument("--nodes", type=int, default=2000)
args = ap.parse_args()

variant, rng = args.variant, random.Random(args.seed)
fen = sf.start_fen(variant)


def opening():
    while True:
        moves = []
        for _ in range(args.plies):
            legal = sf.legal_moves(variant, fen, moves)
            if not legal:
                break
            moves.append(rng.choice(legal))
        if len(moves) == args.plies and sf.legal_moves(variant, fen, moves):
            return moves


def end(moves):
    """The result for the side to move (+1 win, 0 draw, -1 loss), or None."""
    if not sf.legal_moves(variant, fen, moves):
        r = sf.game_result(variant, fen, moves)
    else:
        over, r = sf.is_immediate_game_end(variant, fen, moves)
        if not over:
            over, r = sf.is_optional_game_end(variant, fen, moves)
        if not over:
            return None
    return (r > 0) - (r < 0)


ours, theirs = Engine(args.ours.split()), Engine(args.theirs.split())
ours.send(f"setoption name ChildNodes value {args.child_nodes}")
for e in (ours, theirs):
    e.send("setoption name Threads value 1")
    e.send("setoption name Hash value 16")
score = {"w": 0, "l": 0, "d": 0}
pentanomial = [0, 0, 0, 0, 0]
try:
    for pair in range(args.pairs):
        start = opening()
        pair_points = 0.0
        for ours_first in (True, False):
            ours.variant(variant)
            theirs.variant(variant)
            moves = list(start)
            result = None
            while len(moves) < args.max_plies:
                r = end(moves)
                if r is not None:
                    # r is for the side to move; ours moves at even plies
                    # when it moves first.
                    ours_to_move = (len(moves) % 2 == 0) == ours_first
                    result = r if ours_to_move else -r
                    break
                ours_turn = (len(moves) % 2 == 0) == ours_first
                if ours_turn:
                    move, _ = ours.go_with(moves, f"go movetime {args.ours_movetime}")
                else:
                    move, _ = theirs.go(moves, args.nodes)
                legal = sf.legal_moves(variant, fen, moves)
                assert move in legal, (variant, "ours" if ours_turn else "theirs", move, moves)
                moves.append(move)
            result = 0 if result is None else result
            key = {1: "w", 0: "d", -1: "l"}[result]
            score[key] += 1
            pair_points += (result + 1) / 2
            print(
                f"pair {pair + 1} mpcmc {'first' if ours_first else 'second'}: "
                f"{key} after {len(moves)} plies ({' '.join(start)})",
                flush=True,
            )
        pentanomial[int(pair_points * 2)] += 1
        print(f"after {pair + 1} pairs: W-L-D {score['w']}-{score['l']}-{score['d']} "
              f"ptnml {pentanomial}", flush=True)
    # Elo from the pairs' scores, as scripts/measure/penta.py reads PGNs.
    n = sum(pentanomial)
    scores = [k / 4 for k, c in enumerate(pentanomial) for _ in range(c)]
    m = sum(scores) / n
    se = math.sqrt(sum((x - m) ** 2 for x in scores) / n / n)

    def elo(p):
        # A score of 0 or 1 has no finite Elo: give a binomial bound then.
        if p <= 0:
            return float("-inf")
        return -400 * math.log10(1 / p - 1) if p < 1 else float("inf")

    lo, hi = elo(m - 1.96 * se), elo(m + 1.96 * se)
    print(f"{variant}: {2 * n} games, score {m * 100:.1f}%, Elo {elo(m):+.1f} +- {(hi - lo) / 2:.1f}, "
          f"W-L-D {score['w']}-{score['l']}-{score['d']}, ptnml {pentanomial}")
finally:
    ours.quit()
    theirs.quit()
