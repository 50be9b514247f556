"""mpcmc through python-chess, the client under lichess-bot and many GUIs'
scripting. Usage: client.py <mpcmc> <stockfish>. Exits non-zero on failure."""

import json
import os
import sys
import tempfile
import time

import collections
import logging

import chess
import chess.engine

mpcmc, stockfish = sys.argv[1], sys.argv[2]

# The last lines between python-chess and mpcmc, shown when a check fails.
exchange = collections.deque(maxlen=120)


class Recent(logging.Handler):
    def emit(self, record):
        exchange.append(f"{record.relativeCreated:8.0f} ms {record.getMessage()}")


logging.getLogger("chess.engine").addHandler(Recent())
logging.getLogger("chess.engine").setLevel(logging.DEBUG)

engine = chess.engine.SimpleEngine.popen_uci(
    [mpcmc, f"--evaluator={stockfish}"], timeout=30
)
try:
    assert engine.id["name"].startswith("mpcmc"), engine.id
    assert "ChildNodes" in engine.options, list(engine.options)
    engine.configure({"ChildNodes": 500, "Threads": 2, "Fortify": True})

    # A few moves of a game, each checked legal by python-chess.
    board = chess.Board()
    for _ in range(6):
        result = engine.play(board, chess.engine.Limit(time=0.3))
        assert result.move in board.legal_moves, (result.move, board.fen())
        board.push(result.move)

    # Analysis: infinite until python-chess stops it.
    engine.configure({"ChildNodes": 0})
    with engine.analysis(board) as analysis:
        seen = 0
        for info in analysis:
            if "score" in info and "pv" in info:
                seen += 1
                assert info["pv"][0] in board.legal_moves
            if seen >= 1:
                break
    assert engine.ping() is None  # isready after a stopped analysis
    # Clock play with pondering info available.
    result = engine.play(
        board, chess.engine.Limit(white_clock=5, black_clock=5, white_inc=0.05, black_inc=0.05)
    )
    assert result.move in board.legal_moves
    if result.ponder is not None:
        after = board.copy()
        after.push(result.move)
        assert result.ponder in after.legal_moves, result.ponder

    # MultiPV: the three best root moves, each with a score and a line
    # from its own move.
    engine.configure({"ChildNodes": 500})
    infos = engine.analyse(board, chess.engine.Limit(time=2), multipv=3)
    assert len(infos) == 3, infos
    firsts = [info["pv"][0] for info in infos]
    assert len(set(firsts)) == 3 and all(m in board.legal_moves for m in firsts), firsts
    assert all("score" in info and info.get("multipv") == k + 1 for k, info in enumerate(infos)), infos
    # One set: one depth, best first (issue 33).
    assert len({info["depth"] for info in infos}) == 1, infos
    scores = [info["score"].relative.score(mate_score=100000) for info in infos]
    assert scores == sorted(scores, reverse=True), infos
    # A later play is back to one line (python-chess resets MultiPV). What
    # a GUI records with the move (a PGN comment's score/depth) is the last
    # line before bestmove: the move played, with the deciding search's
    # depth and score.
    played = engine.play(board, chess.engine.Limit(time=2), info=chess.engine.INFO_ALL)
    assert played.move in board.legal_moves
    assert played.info["pv"][0] == played.move, played.info
    assert "score" in played.info and played.info.get("depth", 0) >= 1, played.info

    # Mate in one is found.
    mate = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    engine.configure({"ChildNodes": 1000})
    result = engine.play(mate, chess.engine.Limit(time=2), info=chess.engine.INFO_SCORE)
    assert result.move == chess.Move.from_uci("d1d8"), result.move

    # A level, as lichess-bot plays a person: python-chess sends the
    # person's UCI_Opponent with the game; each move is drawn at the level
    # and, with PersonModel on, the nominal opponent models a human of
    # that rating (the trace says so). The level's own openings are off:
    # every move here is a decision.
    trace = os.path.join(tempfile.mkdtemp(), "level.jsonl")
    engine.configure({"ChildNodes": 0, "UCI_LimitStrength": True, "UCI_Elo": 1200, "TraceFile": trace,
                      "PersonModel": True, "LevelBook": False})
    person = chess.engine.Opponent(name="test", title=None, rating=1500, is_engine=False)
    game = chess.Board()
    for _ in range(3):
        result = engine.play(
            game, chess.engine.Limit(white_clock=3, black_clock=3), opponent=person, game="level"
        )
        assert result.move in game.legal_moves, (result.move, game.fen())
        game.push(result.move)
        game.push(next(iter(game.legal_moves)))
    # The trace is written just after `bestmove` (the move goes first):
    # the last line may come a moment after python-chess returned.
    for _ in range(100):
        with open(trace) as f:
            traces = [json.loads(line) for line in f if line.endswith("\n")]
        if len(traces) == 3:
            break
        time.sleep(0.1)
    assert len(traces) == 3, traces
    # A pass the clock cut short before every move was valued (a busy
    # machine) plays the root search's move at the level's budget.
    def at_the_level(t):
        cut = t["rule"] == "evaluator_fallback" and not t["rounds"][-1]["complete"]
        return t["rule"] == "level" or cut

    assert all(at_the_level(t) and t["person"]["elo"] == 1500 for t in traces), traces
    engine.configure({"UCI_LimitStrength": False, "TraceFile": ""})

    # Pondering as lichess-bot asks for it: after each move python-chess
    # sends `go ponder` on the predicted reply, then `ponderhit` when the
    # game goes on with it (here it does), else `stop`; every move stays
    # legal and in time.
    engine.configure({"ChildNodes": 0})
    game = board.copy()
    for _ in range(3):
        sent = time.monotonic()
        result = engine.play(game, chess.engine.Limit(white_clock=3, black_clock=3), ponder=True)
        assert time.monotonic() - sent < 2, "a move took the clock's two thirds"
        assert result.move in game.legal_moves, (result.move, game.fen())
        game.push(result.move)
        reply = result.ponder if result.ponder in game.legal_moves else next(iter(game.legal_moves))
        game.push(reply)
        time.sleep(0.3)
    assert engine.ping() is None

    # After a play without pondering, python-chess counts the next command
    # after a pondering play as a ponder hit once the board it was given is
    # played on, and sends no `stop`: here the analysis's `go` comes with the
    # ponder running. The ponder ends with no line more (no `bestmove` the
    # analysis would take for its own); the analysis gets its three lines.
    result = engine.play(game, chess.engine.Limit(white_clock=3, black_clock=3))
    game.push(result.move)
    game.push(next(iter(game.legal_moves)))
    result = engine.play(game, chess.engine.Limit(white_clock=3, black_clock=3), ponder=True)
    assert result.ponder is not None, "no move to ponder on"
    game.push(result.move)
    game.push(result.ponder)
    infos = engine.analyse(board, chess.engine.Limit(time=4), multipv=3)
    assert len(infos) == 3 and all(info["pv"][0] in board.legal_moves for info in infos), infos
    assert engine.ping() is None

    print("python-chess client: ok")
except BaseException:
    print("the last lines of the exchange:", *exchange, sep="\n", file=sys.stderr)
    raise
finally:
    engine.quit()
