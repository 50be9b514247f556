#!/usr/bin/env python3
"""Positions of the tables in DIR, placed at random (seeded), each probed
with python-chess's own Syzygy reader: one line per position,
`FEN;WDL;DTZ` (from the side to move; WDL -2..2).
usage: syzygy_probe.py DIR COUNT SEED"""
import pathlib
import random
import sys

import chess
import chess.syzygy

directory, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
materials = sorted(p.stem for p in pathlib.Path(directory).glob("*.rtbw"))
pieces = {"K": chess.KING, "Q": chess.QUEEN, "R": chess.ROOK, "B": chess.BISHOP,
          "N": chess.KNIGHT, "P": chess.PAWN}
with chess.syzygy.open_tablebase(directory) as tables:
    found = 0
    while found < count:
        white, black = rng.choice(materials).split("v")
        if rng.random() < 0.5:
            white, black = black, white
        board = chess.Board(None)
        squares = rng.sample(range(64), len(white) + len(black))
        for color, side in ((chess.WHITE, white), (chess.BLACK, black)):
            for letter in side:
                board.set_piece_at(squares.pop(), chess.Piece(pieces[letter], color))
        board.turn = rng.choice([chess.WHITE, chess.BLACK])
        if not board.is_valid() or board.is_game_over():
            continue
        try:
            wdl = tables.probe_wdl(board)
            dtz = tables.probe_dtz(board)
        except (KeyError, chess.syzygy.MissingTableError):
            continue
        print(f"{board.fen()};{wdl};{dtz}")
        found += 1
