#!/usr/bin/env python3
"""Middlegame positions from real games (issue 61): one position from each
game of a PGN (a fastchess match's: its comments carry the engine's score),
drawn at random (seed 6161) among the game's positions 16 to 60 plies from
its start that are middlegames (each side has a queen or at least three
pieces besides pawns and the king, at least ten such pieces in all), not in
check, with at least two legal moves, and balanced by the score of the move
that led there (within SCORE cp, default 250). FENs to stdout, one a line.
usage: middlegames.py GAMES.pgn [SCORE]"""
import random
import re
import sys

import chess
import chess.pgn

rng = random.Random(6161)
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 250
SCORE = re.compile(r"^([+-]?\d+\.\d+)/")


def middlegame(board):
    def pieces(color):
        return sum(len(board.pieces(p, color)) for p in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN))
    mine, theirs = pieces(chess.WHITE), pieces(chess.BLACK)
    queens = all(board.pieces(chess.QUEEN, c) for c in chess.COLORS)
    return (queens or min(mine, theirs) >= 3) and mine + theirs >= 10


with open(sys.argv[1]) as pgn:
    while (game := chess.pgn.read_game(pgn)) is not None:
        board = game.board()
        choices = []
        for ply, node in enumerate(game.mainline(), start=1):
            board.push(node.move)
            m = SCORE.match(node.comment.strip())
            if not (16 <= ply <= 60) or not m or abs(float(m.group(1))) * 100 > limit:
                continue
            if board.is_check() or board.legal_moves.count() < 2 or not middlegame(board):
                continue
            choices.append(board.fen())
        if choices:
            print(rng.choice(choices))
