#!/usr/bin/env python3
"""How far mpcmc's root search gets, beside the lookahead, against the engine alone.

For each position, one clock search (`go wtime T btime T winc 100 binc 100`,
`ucinewgame` before each) by `mpcmc engine` alone, then by mpcmc with its
options: the engine's last `info` line gives its depth and nodes; mpcmc's
final `info string … root search depth D, N nodes, T ms` gives its root
search's. Both run the same built-in engine under the same clock rule, so the
difference is what the lookahead beside it costs the root search.

    cargo build --release
    python3 examples/root_speed.py --mpcmc target/release/mpcmc \
        --positions tests/data/openings.epd --count 24 --ms 9000 -- --threads=2 --child-threads=1

With Stockfish children, compare with Stockfish alone:

    python3 examples/root_speed.py --engine /usr/games/stockfish \
        -- --threads=2 --child-threads=1 --evaluator=/usr/games/stockfish

Positions: an EPD or FEN file, one per line (only the first four fields are
used; the move counters are reset). Machine-dependent: run it on a quiet
machine and compare runs made one after the other.

Warm, as in a game: `--games games.pgn --count 4` replays the first games of
a match (python-chess reads the PGN) and searches every position where
`--side` (a player's name in the PGN) was to move, in order, with the game's
moves and no `ucinewgame` within a game: each search finds the table the
previous one left, as in play.
"""

import argparse
import re
import statistics
import subprocess
import time

ROOT = re.compile(r"root search depth (\d+), (\d+) nodes, (\d+) ms")


def fens(path, count):
    out = []
    for line in open(path):
        fields = line.split(";")[0].split()
        if len(fields) >= 4:
            out.append(" ".join(fields[:4]) + " 0 1")
        if len(out) == count:
            break
    return out


def game_positions(path, count, side):
    """The `position` arguments of every position `side` was to move in, in
    the first `count` games; a `None` starts a new game."""
    import chess.pgn

    out = []
    with open(path) as f:
        for _ in range(count):
            game = chess.pgn.read_game(f)
            if game is None:
                break
            players = (game.headers.get("White"), game.headers.get("Black"))
            if side not in players:
                raise SystemExit(f"--side {side!r} is neither player of a game: {players}")
            color = chess.WHITE if players[0] == side else chess.BLACK
            fen = game.headers.get("FEN")
            start = f"fen {fen}" if fen else "startpos"
            board = game.board()
            moves = []
            out.append(None)
            for move in game.mainline_moves():
                if board.turn == color:
                    tail = f" moves {' '.join(moves)}" if moves else ""
                    out.append(start + tail)
                moves.append(move.uci())
                board.push(move)
    return out


def searches(argv, positions, ms):
    """(depth, nodes, wall seconds) of each position's search. A position is
    a FEN, cold (`ucinewgame` first), or the arguments of `position` in a
    game, warm; `None` starts a new game."""
    p = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )

    def send(s):
        p.stdin.write(s + "\n")
        p.stdin.flush()

    def read_until(prefix):
        for line in p.stdout:
            if line.startswith(prefix):
                return line
        raise SystemExit(f"{argv}: ended before '{prefix}'")

    send("uci")
    read_until("uciok")
    out = []
    for position in positions:
        if position is None:
            send("ucinewgame")
            continue
        if position.startswith(("fen ", "startpos")):
            send("position " + position)
        else:
            send("ucinewgame")
            send("position fen " + position)
        send("isready")
        read_until("readyok")
        started = time.monotonic()
        send(f"go wtime {ms} btime {ms} winc 100 binc 100")
        last = root = None
        for line in p.stdout:
            if line.startswith("info depth") and " nodes " in line:
                last = line
            if ROOT.search(line):
                root = ROOT.search(line)
            if line.startswith("bestmove"):
                break
        wall = time.monotonic() - started
        if root:
            out.append((int(root[1]), int(root[2]), wall))
        elif last:
            depth = int(re.search(r"depth (\d+)", last)[1])
            nodes = int(re.search(r" nodes (\d+)", last)[1])
            out.append((depth, nodes, wall))
    send("quit")
    p.wait(timeout=10)
    return out


def summary(name, rows):
    depth = statistics.mean(r[0] for r in rows)
    nodes = statistics.mean(r[1] for r in rows)
    wall = statistics.mean(r[2] for r in rows)
    print(f"{name:>12}: depth {depth:5.2f}  nodes {nodes / 1e3:7.1f} k  wall {wall * 1e3:6.1f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpcmc", default="target/release/mpcmc")
    ap.add_argument(
        "--engine", help="the engine alone (a command line); default: MPCMC engine"
    )
    ap.add_argument("--positions", default="tests/data/openings.epd")
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--ms", type=int, default=9000, help="each side's clock, ms")
    ap.add_argument("--runs", type=int, default=2, help="alternating runs of each")
    ap.add_argument("--games", help="a match's PGN: search its games' positions warm")
    ap.add_argument("--side", default="mpcmc", help="with --games: whose moves")
    ap.add_argument("options", nargs="*", help="mpcmc's flags, after --")
    args = ap.parse_args()
    if args.games:
        positions = game_positions(args.games, args.count, args.side)
    else:
        positions = fens(args.positions, args.count)
    engine = args.engine.split() if args.engine else [args.mpcmc, "engine"]
    for _ in range(args.runs):
        summary("engine alone", searches(engine, positions, args.ms))
        summary("mpcmc root", searches([args.mpcmc] + args.options, positions, args.ms))


if __name__ == "__main__":
    main()
