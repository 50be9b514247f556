#!/usr/bin/env python3
"""Move by move: does mpcmc choose as well as the engine it is built from?

A clock match needs hundreds of games to see 30 Elo. This looks at single
moves instead: positions where mpcmc was to move in a match's PGN (fastchess
with `timeleft=true`), each searched cold (`ucinewgame`) on the clock mpcmc
had there, by `mpcmc engine` twice and by mpcmc once. Stockfish at a fixed
depth then scores every move played (`searchmoves`), and the report gives
how often the three agree and how many centipawns mpcmc's move is worth
against the engine's, with its standard error, split by how mpcmc chose
(from its `info string`: the lookahead agreed with the evaluator's own
move, deviated from it, or was kept from deviating by the margin).

    python3 examples/move_quality.py play moves.json games.pgn --count 150 \\
        --mpcmc target/release/mpcmc -- --threads=2 --child-threads=1
    python3 examples/move_quality.py judge moves.json --depth 16

`play` is timed: run it on a quiet machine. `judge` is fixed-depth and
tolerates load. `--scale 0.5` replaces mpcmc by the engine on half the clock:
a calibration (what a halving of time looks like in this measure).
"""

import argparse
import json
import random
import re
import statistics
import sys

import chess
import chess.engine
import chess.pgn


def positions(pgns, name, count, seed):
    """(fen, white clock, black clock) where `name` was to move, plies 16-140."""
    out = []
    for path in pgns:
        with open(path) as f:
            while (game := chess.pgn.read_game(f)) is not None:
                side = chess.WHITE if game.headers["White"] == name else chess.BLACK
                board = game.board()
                left = {chess.WHITE: 10.0, chess.BLACK: 10.0}
                for node in game.mainline():
                    if board.turn == side and 16 <= board.ply() <= 140:
                        out.append((board.fen(), left[chess.WHITE], left[chess.BLACK]))
                    mover = board.turn
                    board.push(node.move)
                    if m := re.search(r"tl=([\d.]+)s", node.comment or ""):
                        left[mover] = float(m.group(1))
    random.Random(seed).shuffle(out)
    return out[:count]


def rule_of(strings):
    """How mpcmc chose: `agreed` (the lookahead's best is the evaluator's
    own move), `deviated` (the lookahead overruled it), `fortified` (the
    lookahead's best did not clear the margin), `refuted` (it cleared the
    margin but failed the deep check), else `other`."""
    text = " ".join(strings)
    # Values are one token (`+17cp`) or two (`mate -3`).
    pair = re.search(r"; lookahead (\S+) (?:mate )?\S+ vs evaluator (\S+)", text)
    if "rule lookahead:" in text and pair:
        return "agreed" if pair[1] == pair[2] else "deviated"
    if "rule fortified:" in text:
        return "fortified"
    if "rule refuted:" in text:
        return "refuted"
    return "other"


def play(args):
    engine = chess.engine.SimpleEngine.popen_uci([args.mpcmc, "engine"])
    other = chess.engine.SimpleEngine.popen_uci(
        [args.mpcmc, "engine"] if args.scale else [args.mpcmc] + args.options
    )
    rows = []
    for fen, white, black in positions(args.pgn, args.name, args.count, args.seed):
        board = chess.Board(fen)
        row = {"fen": fen}
        for key, e, scale in [("e1", engine, 1), ("m", other, args.scale or 1), ("e2", engine, 1)]:
            limit = chess.engine.Limit(
                white_clock=white * scale,
                black_clock=black * scale,
                white_inc=args.inc * scale,
                black_inc=args.inc * scale,
            )
            strings = []
            with e.analysis(board, limit, game=object()) as search:
                for info in search:
                    if "string" in info:
                        strings.append(info["string"])
                row[key] = search.wait().move.uci()
            if key == "m":
                row["rule"] = rule_of(strings)
        rows.append(row)
    engine.quit()
    other.quit()
    with open(args.out, "w") as f:
        json.dump(rows, f)
    print(f"{len(rows)} positions written to {args.out}")


def judge(args):
    rows = json.load(open(args.out))
    sf = chess.engine.SimpleEngine.popen_uci(args.stockfish)
    sf.configure({"Threads": 1, "Hash": 64})
    cache = {}

    def score(fen, move):
        if (fen, move) not in cache:
            board = chess.Board(fen)
            info = sf.analyse(
                board,
                chess.engine.Limit(depth=args.depth),
                root_moves=[chess.Move.from_uci(move)],
            )
            cp = info["score"].pov(board.turn).score(mate_score=3000)
            cache[(fen, move)] = max(-1000, min(1000, cp))
        return cache[(fen, move)]

    by_rule = {}
    for r in rows:
        s = {k: score(r["fen"], r[k]) for k in ("e1", "m", "e2")}
        r["scores"] = s
        by_rule.setdefault(r["rule"], []).append(s["m"] - (s["e1"] + s["e2"]) / 2)
    sf.quit()
    with open(args.out, "w") as f:
        json.dump(rows, f)  # with each move's score, for a closer look
    n = len(rows)
    agree = lambda a, b: sum(r[a] == r[b] for r in rows) / n
    print(f"{n} positions, Stockfish depth {args.depth}")
    print(
        f"agreement: engine with itself {agree('e1', 'e2'):.0%}, "
        f"mpcmc with the engine {(agree('e1', 'm') + agree('e2', 'm')) / 2:.0%}"
    )
    diffs = [d for ds in by_rule.values() for d in ds]
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0.0
    print(f"mpcmc's move minus the engine's: {statistics.mean(diffs):+.2f} cp (SE {se:.2f})")
    for rule, ds in sorted(by_rule.items()):
        print(f"  {rule}: {len(ds)} moves, {statistics.mean(ds):+.2f} cp")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("phase", choices=["play", "judge"])
    ap.add_argument("out", help="the JSON file of positions and moves")
    ap.add_argument("pgn", nargs="*", help="play: the match's PGN files")
    ap.add_argument("--mpcmc", default="target/release/mpcmc")
    ap.add_argument("--name", default="mpcmc", help="mpcmc's name in the PGN")
    ap.add_argument("--count", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inc", type=float, default=0.1, help="increment, seconds")
    ap.add_argument("--scale", type=float, help="calibrate: the engine on this share of the clock")
    ap.add_argument("--stockfish", default="/usr/games/stockfish")
    ap.add_argument("--depth", type=int, default=16)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    args.options = argv[cut + 1 :]  # mpcmc's flags, after --
    play(args) if args.phase == "play" else judge(args)


if __name__ == "__main__":
    main()
