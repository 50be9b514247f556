#!/usr/bin/env python3
"""How late an engine answers on a short clock: GAMES self-play games of
1000+10 ms from the start (40 plies at most), and for each `bestmove` the
time from the `go` less the last `info`'s `time` (the answer's delay past
the search's last report, which also holds the unfinished iteration).

Usage: late_answers.py GAMES ENGINE [ARGS...]; THREADS (default 2) is sent
as `Threads`. Prints the percentiles and how many answers came over 100 and
200 ms after the last report; a game lost on time is printed as LOST.
Measures the machine as it is: run beside the load the question is about
(on 2 cores: beside a fixed-node match), alternating the builds compared.
"""

import os
import subprocess
import sys
import time

import chess

games, exe, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
delays = []
for game in range(games):
    p = subprocess.Popen([exe, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(line):
        p.stdin.write(line + "\n")
        p.stdin.flush()

    def until(prefix):
        lines = []
        while True:
            line = p.stdout.readline()
            if not line:
                sys.exit(f"{exe} ended before '{prefix}'")
            lines.append(line)
            if line.startswith(prefix):
                return lines

    send("uci")
    until("uciok")
    send("setoption name Threads value " + os.environ.get("THREADS", "2"))
    send("isready")
    until("readyok")
    board, clock, moves = chess.Board(), [1000.0, 1000.0], []
    for ply in range(40):
        if board.is_game_over():
            break
        side = 0 if board.turn else 1
        send("position startpos moves " + " ".join(moves))
        sent = time.monotonic()
        send(f"go wtime {int(clock[0])} btime {int(clock[1])} winc 10 binc 10")
        lines = until("bestmove")
        took = (time.monotonic() - sent) * 1000
        reported = [int(l.split()[l.split().index("time") + 1]) for l in lines if " time " in l]
        delays.append(took - max(reported, default=0))
        clock[side] -= took
        if clock[side] <= 0:
            print("LOST", game, ply, clock, flush=True)
            break
        clock[side] += 10
        move = lines[-1].split()[1]
        moves.append(move)
        board.push_uci(move)
    send("quit")
    p.wait()

delays.sort()
n = len(delays)
print(
    f"{exe}: {n} moves; after the last info: p50 {delays[n // 2]:.0f} p99 {delays[int(n * 0.99)]:.0f}"
    f" max {delays[-1]:.0f} ms; over 100 ms: {sum(d > 100 for d in delays)};"
    f" over 200 ms: {sum(d > 200 for d in delays)}"
)
