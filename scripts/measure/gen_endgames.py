#!/usr/bin/env python3
"""Endgame openings (issue 37, point 5): 100 five- and six-piece positions,
each a capture or two from the test tables (<= 4 pieces), placed at random
(seed 3737), none in check or with a capture at once, balanced by Stockfish
15.1 at depth 12 (within 150 cp). The EPD goes to OUT.
usage: gen_endgames.py OUT.epd"""
import random, sys, chess, chess.engine
rng = random.Random(3737)
MATS = ["KRPvKR", "KBPvKB", "KNPvKN", "KBPvKN", "KQPvKQ", "KRPvKB", "KRvKNP", "KPPvKP", "KRPPvKR", "KBPPvKB"]
P = {"K": chess.KING, "Q": chess.QUEEN, "R": chess.ROOK, "B": chess.BISHOP, "N": chess.KNIGHT, "P": chess.PAWN}
sf = chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish")
out = []
while len(out) < 100:
    w, b = rng.choice(MATS).split("v")
    if rng.random() < 0.5: w, b = b, w
    board = chess.Board(None)
    sq = rng.sample([s for s in range(64)], len(w) + len(b))
    ok = True
    for color, side in ((chess.WHITE, w), (chess.BLACK, b)):
        for l in side:
            s = sq.pop()
            if l == "P" and chess.square_rank(s) in (0, 7): ok = False
            board.set_piece_at(s, chess.Piece(P[l], color))
    board.turn = rng.choice([chess.WHITE, chess.BLACK])
    if not ok or not board.is_valid() or board.is_game_over() or board.is_check(): continue
    if any(board.is_capture(m) for m in board.legal_moves): continue
    info = sf.analyse(board, chess.engine.Limit(depth=12))
    cp = info["score"].pov(board.turn).score(mate_score=10000)
    if abs(cp) > 150: continue
    out.append(board.epd())
sf.quit()
open(sys.argv[1], "w").write("\n".join(out) + "\n")
print(len(out))
