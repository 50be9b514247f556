#!/usr/bin/env python3
"""Where a level errs: easy positions against hard ones (issue 58, point 3).

make GAMES.pgn OUT.epd [MAX]
    Walks every position of the games (EPD lines, counters as `hmvc` and
    `fmvn`) and keeps, judged by Debian's
    Stockfish (1 thread): *easy* ones, where a person of 1000-1800 rarely
    errs -- a mate in one (`mate1`); a recapture that restores material and
    every other move falls short (`recapture`); one move more than 300 cp
    better than every other at a shallow search (depth 2) and still best
    deep (`gap`) -- and *hard* ones, where the move a shallow search (depth
    2) ranks first is refuted deep (`hard`). Each line: the FEN, `ok` the
    moves within a mistake of the best deep (a drop of less than 0.2 in
    lichess's winning chances, 2w-1), `c0` the kind.
rate FILE.epd ELO [ELO...]
    mpcmc at each level (UCI_LimitStrength, Seed 1..: one draw a position,
    MPCMC names the binary, OPTS more options "Name=value,...") plays every
    position once; an error is a move outside `ok`. Prints the error rate on
    easy and on hard positions per level, with their 95 % Wilson intervals.
env: DEEP (nodes, default 400000) the judge's deep search."""
import math, os, sys
import chess, chess.engine, chess.pgn

DEEP = int(os.environ.get("DEEP", 400000))
SHALLOW = chess.engine.Limit(depth=2)


def wc(cp):
    return 2 / (1 + math.exp(-0.00368208 * cp)) - 1


def judge():
    sf = chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish")
    sf.configure({"Threads": 1, "Hash": 64})
    return sf


def values(sf, board, limit):
    """Every legal move's value for the side to move (cp, mates as 10000)."""
    n = board.legal_moves.count()
    infos = sf.analyse(board, limit, multipv=n)
    return {i["pv"][0]: i["score"].pov(board.turn).score(mate_score=10000) for i in infos if "pv" in i}


def classify(sf, board, last):
    """The kind of the position and every move's deep value, or None. One
    deep search a position, a second for the shallow choice where it is not
    the deep one; every move's value only for a position kept."""
    legal = list(board.legal_moves)
    if len(legal) < 2:
        return None
    deep = lambda: values(sf, board, chess.engine.Limit(nodes=DEEP))
    for m in legal:
        board.push(m)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return "mate1", deep()
    shallow = values(sf, board, SHALLOW)
    if len(shallow) < len(legal):
        return None
    info = sf.analyse(board, chess.engine.Limit(nodes=DEEP))
    best, top = info["pv"][0], info["score"].pov(board.turn).score(mate_score=10000)
    if abs(top) > 600:
        return None  # decided already: not a test of judgment
    ranked = sorted(shallow, key=shallow.get, reverse=True)
    kind = None
    recaptures = []
    if last is not None:
        recaptures = [m for m in legal if m.to_square == last.to_square and board.is_capture(m)]
    if best in recaptures:
        kind = "recapture"
    elif shallow[ranked[0]] - shallow[ranked[1]] > 300 and best == ranked[0]:
        kind = "gap"
    elif ranked[0] != best:
        board.push(ranked[0])
        after = sf.analyse(board, chess.engine.Limit(nodes=DEEP))
        board.pop()
        tempting = -after["score"].pov(board.turn).score(mate_score=10000)
        if wc(top) - wc(tempting) >= 0.2:
            kind = "hard"
    if kind is None:
        return None
    every = deep()
    if len(every) < len(legal):
        return None
    top = max(every.values())
    ok = {m for m, v in every.items() if wc(top) - wc(v) < 0.2}
    if kind == "recapture" and not (ok <= set(recaptures) and len(ok) < len(legal)):
        return None
    if kind == "gap" and len(ok) != 1:
        return None
    if kind == "hard" and ranked[0] in ok:
        return None
    return kind, every


def make(pgn_path, out_path, limit):
    sf = judge()
    kinds = {}
    with open(pgn_path) as pgn, open(out_path, "w") as out:
        while (game := chess.pgn.read_game(pgn)) is not None:
            board = game.board()
            last_was_capture = False
            last = None
            for mv in game.mainline_moves():
                kind = classify(sf, board, last if last_was_capture else None)
                if kind:
                    name, deep = kind
                    best = max(deep, key=deep.get)
                    ok = sorted(m.uci() for m, v in deep.items() if wc(deep[best]) - wc(v) < 0.2)
                    out.write(board.epd(hmvc=board.halfmove_clock, fmvn=board.fullmove_number,
                                        ok=" ".join(ok), c0=name) + "\n")
                    out.flush()
                    kinds[name] = kinds.get(name, 0) + 1
                    if sum(kinds.values()) >= limit:
                        sf.quit()
                        print(kinds)
                        return
                last_was_capture = board.is_capture(mv)
                last = mv
                board.push(mv)
    sf.quit()
    print(kinds)


def wilson(k, n):
    if n == 0:
        return (0.0, 1.0)
    z, p = 1.96, k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, c - h), min(1.0, c + h))


def rate(epd_path, elos):
    lines = [l.strip() for l in open(epd_path) if l.strip()]
    extra = dict(kv.split("=", 1) for kv in os.environ.get("OPTS", "").split(",") if kv)
    eng = chess.engine.SimpleEngine.popen_uci(os.environ.get("MPCMC", "target/release/mpcmc"))
    for elo in elos:
        counts = {"easy": [0, 0], "hard": [0, 0]}
        kinds = {}
        for i, line in enumerate(lines):
            board, ops = chess.Board.from_epd(line)
            kind = "hard" if ops["c0"] == "hard" else "easy"
            ok = set(ops["ok"].split())
            eng.configure({"UCI_LimitStrength": True, "UCI_Elo": elo, "Seed": i + 1, **extra})
            mv = eng.play(board, chess.engine.Limit(time=5), game=(elo, i)).move
            counts[kind][1] += 1
            counts[kind][0] += mv.uci() not in ok
            k = kinds.setdefault(ops["c0"], [0, 0])
            k[0] += mv.uci() not in ok
            k[1] += 1
            if os.environ.get("VERBOSE") and mv.uci() not in ok:
                print(f"  {elo} {ops['c0']}: {board.epd()} played {mv.uci()}, ok {ops['ok']}")
        parts = []
        for kind, (k, n) in counts.items():
            lo, hi = wilson(k, n)
            parts.append(f"{kind} {k}/{n} = {100 * k / max(n, 1):.0f} % [{100 * lo:.0f}, {100 * hi:.0f}]")
        e, h = counts["easy"], counts["hard"]
        ratio = (e[0] / max(e[1], 1)) / max(h[0] / max(h[1], 1), 1e-9)
        by_kind = ", ".join(f"{c0} {k}/{n}" for c0, (k, n) in sorted(kinds.items()))
        print(f"elo {elo}: errors " + ", ".join(parts) + f"; easy/hard {ratio:.2f} ({by_kind})", flush=True)
    eng.quit()


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 10 ** 9)
    elif sys.argv[1] == "rate":
        rate(sys.argv[2], [int(e) for e in sys.argv[3:]])
    else:
        sys.exit(__doc__)
