#!/usr/bin/env python3
"""Tablebase endgames played out to the end by mpcmc against itself, with
and without `SyzygyPath` (issue 37, point 5): wins that need technique
(KBNvK, KQvKR, KRvK) and draws to hold (KRvKR, KQvKQ, each with a
losing move at the start), positions drawn at
random (seeded) from the tables' own values; both sides the same mpcmc at
`go nodes N`, a new game each. Printed per material and setting: wins
converted (checkmate) before the fifty-move rule or a repetition draws, and
draws held.
usage: tb_playout.py MPCMC TABLES [N] [GAMES_PER_MATERIAL] [SEED]"""
import random
import subprocess
import sys

import chess
import chess.syzygy

mpcmc, tables_dir = sys.argv[1], sys.argv[2]
nodes = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
per = int(sys.argv[4]) if len(sys.argv) > 4 else 10
seed = int(sys.argv[5]) if len(sys.argv) > 5 else 37
MATERIALS = [("KBNvK", 2, 40), ("KQvKR", 2, 20), ("KRvK", 2, 20), ("KRvKR", 0, 0), ("KQvKQ", 0, 0)]
PIECES = {"K": chess.KING, "Q": chess.QUEEN, "R": chess.ROOK, "B": chess.BISHOP,
          "N": chess.KNIGHT, "P": chess.PAWN}


def positions(tables, material, wdl, min_dtz, count, rng):
    white, black = material.split("v")
    found = []
    while len(found) < count:
        board = chess.Board(None)
        squares = rng.sample(range(64), len(white) + len(black))
        for color, side in ((chess.WHITE, white), (chess.BLACK, black)):
            for letter in side:
                board.set_piece_at(squares.pop(), chess.Piece(PIECES[letter], color))
        board.turn = chess.WHITE
        if not board.is_valid() or board.is_game_over():
            continue
        if tables.probe_wdl(board) != wdl or abs(tables.probe_dtz(board)) < min_dtz:
            continue
        # A draw to hold: the side to move has a losing move to avoid
        # (one after which the other side, to move, wins).
        if wdl == 0 and all(tables.probe_wdl(_after(board, m)) != 2 for m in board.legal_moves):
            continue
        found.append(board.fen())
    return found


def _after(board, move):
    b = board.copy()
    b.push(move)
    return b


class Engine:
    def __init__(self, options):
        self.p = subprocess.Popen([mpcmc], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.send("uci")
        self.until("uciok")
        for k, v in options.items():
            self.send(f"setoption name {k} value {v}")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def until(self, prefix):
        while True:
            line = self.p.stdout.readline()
            assert line, "mpcmc quit"
            if line.startswith(prefix):
                return line

    def move(self, fen, moves):
        self.send(f"position fen {fen}" + (" moves " + " ".join(moves) if moves else ""))
        self.send(f"go nodes {nodes}")
        return self.until("bestmove").split()[1]

    def quit(self):
        self.send("quit")
        self.p.wait()


def play(engine, fen):
    engine.send("ucinewgame")
    engine.send("isready")
    engine.until("readyok")
    board = chess.Board(fen)
    moves = []
    while not board.is_game_over(claim_draw=True):
        mv = engine.move(fen, moves)
        board.push_uci(mv)
        moves.append(mv)
    return board.result(claim_draw=True), len(moves)


def main():
    rng = random.Random(seed)
    with chess.syzygy.open_tablebase(tables_dir) as tables:
        sets = [(m, w, positions(tables, m, w, d, per, rng)) for m, w, d in MATERIALS]
    print(f"go nodes {nodes}, {per} positions each (seed {seed}), white to move")
    for label, options in (("without", {}), ("with", {"SyzygyPath": tables_dir})):
        engine = Engine(options)
        for material, wdl, fens in sets:
            kept, plies = 0, 0
            for fen in fens:
                result, n = play(engine, fen)
                plies += n
                kept += result == ("1-0" if wdl == 2 else "1/2-1/2")
            what = "wins converted" if wdl == 2 else "draws held"
            print(f"{label:>8} SyzygyPath {material:>6}: {what} {kept}/{len(fens)}"
                  f" (mean {plies / len(fens):.0f} plies)", flush=True)
        engine.quit()


main()
