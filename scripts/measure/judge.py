#!/usr/bin/env python3
"""Per-player move quality in a PGN, judged by Stockfish 15.1 (1 thread).
Every move is screened at SCREEN nodes; a move that loses >= 200 cp there from a
position within +-400 is judged again at CONFIRM nodes (default 1M), where a gross
blunder is a loss of >= 300 cp from a position within +-300 (not already decided).
With GROSS_OUT, every gross blunder is also written there, a line each:
player, the FEN before the move, the move (UCI), and the values before and after
(centipawns at CONFIRM nodes, the mover's view), tab-separated.
Stopped (SIGINT or SIGTERM, e.g. by `timeout`), it prints the totals of the
games it finished. SF names the judge (default: Debian's Stockfish).
usage: judge.py games.pgn [SCREEN] [CONFIRM] [GROSS_OUT]"""
import os, sys, math, signal, collections, chess, chess.pgn, chess.engine
path = sys.argv[1]; screen = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
confirm = int(sys.argv[3]) if len(sys.argv) > 3 else 1000000
gross_out = open(sys.argv[4], "w") if len(sys.argv) > 4 else None
eng = chess.engine.SimpleEngine.popen_uci(os.environ.get("SF", "/usr/games/stockfish"))
eng.configure({"Threads": 1, "Hash": 64})
def cp(score, side): return score.pov(side).score(mate_score=10000)
def wp(c): return 1/(1+math.exp(-0.00368208*c))
S = collections.defaultdict(lambda: collections.Counter())

def judge(game):
    """One game's counts per player, and its gross blunders' lines."""
    G = collections.defaultdict(lambda: collections.Counter()); gross = []
    names = {chess.WHITE: game.headers["White"], chess.BLACK: game.headers["Black"]}
    board = game.board()
    prev = eng.analyse(board, chess.engine.Limit(nodes=screen))["score"]
    for mv in game.mainline_moves():
        side = board.turn
        before_board = board.copy()
        board.push(mv)
        if board.is_game_over():
            break
        now = eng.analyse(board, chess.engine.Limit(nodes=screen))["score"]
        b, a = cp(prev, side), cp(now, side)
        prev = now
        s = G[names[side]]
        s["moves"] += 1
        s["loss"] += max(0, max(-1000, min(b, 1000)) - max(-1000, min(a, 1000)))
        drop = 2 * (wp(b) - wp(a))
        s["inaccuracy"] += 0.1 <= drop < 0.2
        s["mistake"] += 0.2 <= drop < 0.3
        s["blunder"] += drop >= 0.3
        if abs(b) < 400 and b - a >= 200:
            s["screened"] += 1
            b1 = cp(eng.analyse(before_board, chess.engine.Limit(nodes=confirm))["score"], side)
            a1 = cp(eng.analyse(board, chess.engine.Limit(nodes=confirm))["score"], side)
            if abs(b1) < 300 and b1 - a1 >= 300:
                s["gross"] += 1
                gross.append((names[side], before_board.fen(), mv.uci(), b1, a1))
    return G, gross

class Stop(Exception): pass
def stop(*_): raise Stop()
signal.signal(signal.SIGINT, stop); signal.signal(signal.SIGTERM, stop)
pgn = open(path); games = 0; stopped = False
try:
    while True:
        game = chess.pgn.read_game(pgn)
        if game is None: break
        G, gross = judge(game)
        # Counted when the game is judged whole: a stop leaves whole games.
        for n, c in G.items(): S[n].update(c)
        games += 1
        for line in gross if gross_out else []:
            print(*line, sep="\t", file=gross_out, flush=True)
except Stop:
    stopped = True
print(f"{games} games judged" + (" (stopped)" if stopped else ""))
for n, s in sorted(S.items()):
    m = max(1, s["moves"])
    print(f"{n}: moves {s['moves']} acpl {s['loss']/m:.1f} | per 100 moves: inaccuracies {100*s['inaccuracy']/m:.2f} mistakes {100*s['mistake']/m:.2f} blunders {100*s['blunder']/m:.2f} gross {100*s['gross']/m:.2f} ({s['gross']} gross of {s['screened']} screened)", flush=True)
try:
    eng.quit()
except Exception:
    eng.close()
