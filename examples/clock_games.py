"""Plays mpcmc against another UCI engine on a real clock through python-chess
and reports results, time forfeits and illegal moves.

python3 examples/clock_games.py --games 4 --tc 10+0.1 \
    --mpcmc target/release/mpcmc --opponent /usr/games/stockfish \
    --opponent-option UCI_LimitStrength=true --opponent-option UCI_Elo=1800
"""

import argparse
import time

import chess
import chess.engine

p = argparse.ArgumentParser()
p.add_argument("--games", type=int, default=2)
p.add_argument("--tc", default="10+0.1", help="seconds+increment")
p.add_argument("--mpcmc", default="target/release/mpcmc")
p.add_argument("--mpcmc-flag", action="append", default=[])
p.add_argument("--opponent", default="/usr/games/stockfish")
p.add_argument("--opponent-option", action="append", default=[])
args = p.parse_args()

base, inc = (float(x) for x in args.tc.split("+"))
opp_options = dict(o.split("=", 1) for o in args.opponent_option)
score, forfeits, illegal = 0.0, 0, 0
slowest = 0.0
for game in range(args.games):
    engines = {
        "mpcmc": chess.engine.SimpleEngine.popen_uci([args.mpcmc, *args.mpcmc_flag]),
        "opponent": chess.engine.SimpleEngine.popen_uci(args.opponent),
    }
    if opp_options:
        engines["opponent"].configure(opp_options)
    white = "mpcmc" if game % 2 == 0 else "opponent"
    board = chess.Board()
    clock = {chess.WHITE: base, chess.BLACK: base}
    result = None
    while not board.is_game_over(claim_draw=True):
        side = board.turn
        name = white if side == chess.WHITE else ("opponent" if white == "mpcmc" else "mpcmc")
        limit = chess.engine.Limit(
            white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
            white_inc=inc, black_inc=inc,
        )
        started = time.monotonic()
        played = engines[name].play(board, limit)
        used = time.monotonic() - started
        clock[side] -= used
        if name == "mpcmc":
            slowest = max(slowest, used)
        if clock[side] < 0:
            forfeits += name == "mpcmc"
            result = "0-1" if side == chess.WHITE else "1-0"
            print(f"game {game + 1}: {name} lost on time at move {board.fullmove_number}")
            break
        clock[side] += inc
        if played.move not in board.legal_moves:
            illegal += name == "mpcmc"
            result = "0-1" if side == chess.WHITE else "1-0"
            break
        board.push(played.move)
    result = result or board.result(claim_draw=True)
    points = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
    score += points if white == "mpcmc" else 1.0 - points
    print(f"game {game + 1}: mpcmc {'white' if white == 'mpcmc' else 'black'}, {result}, "
          f"{board.fullmove_number} moves, mpcmc clock left {clock[chess.WHITE if white == 'mpcmc' else chess.BLACK]:.2f}s")
    for e in engines.values():
        e.quit()
print(f"mpcmc score {score}/{args.games}; time forfeits {forfeits}; illegal moves {illegal}; "
      f"slowest mpcmc move {slowest:.3f}s")
