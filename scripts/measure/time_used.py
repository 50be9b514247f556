#!/usr/bin/env python3
"""Time used against time given: `go movetime T` (100, 1000, 2000 ms) from
the position after 1.e4 e5, three tries each, from writing `go` to reading
`bestmove`, with one worker (the defaults) and with two (`Threads=2
ChildThreads=1`). usage: time_used.py MPCMC [FLAG ...] (flags for every run,
e.g. --evaluator=/usr/games/stockfish). Needs a quiet machine."""
import subprocess, sys, time

exe, common = sys.argv[1], sys.argv[2:]
for workers in [[], ["--threads=2", "--child-threads=1"]]:
    flags = common + workers
    p = subprocess.Popen([exe] + flags, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, bufsize=1)
    p.stdin.write("uci\nisready\n")
    p.stdin.flush()
    while p.stdout.readline().strip() != "readyok":
        pass
    for movetime in [100, 1000, 2000]:
        took = []
        for _ in range(3):
            p.stdin.write("position startpos moves e2e4 e7e5\n")
            start = time.monotonic()
            p.stdin.write(f"go movetime {movetime}\n")
            p.stdin.flush()
            while not p.stdout.readline().startswith("bestmove"):
                pass
            took.append(round((time.monotonic() - start) * 1000))
        print(" ".join(flags) or "defaults", f"movetime {movetime}: {took} ms", flush=True)
    p.stdin.write("quit\n")
    p.stdin.flush()
    p.wait()
