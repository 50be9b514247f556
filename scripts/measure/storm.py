#!/usr/bin/env python3
"""Issue 32 storm benchmark: N unpaced lines (the storm of tests/uci_session.rs,
same generator), then `quit`; how long mpcmc takes to exit after the last byte.
usage: storm.py MPCMC [LINES] [SEEDS] [-- mpcmc args...]"""
import subprocess, sys, time

COMMANDS = ["position startpos moves e2e4", "go movetime 1000", "isready", "go nodes 100000",
            "stop", "position startpos", "go depth 20", "go wtime 5000 btime 5000", "ucinewgame"]
M = (1 << 64) - 1


def storm(seed, lines):
    x, out = seed, []
    for _ in range(lines):
        x = (x * 6364136223846793005 + 1442695040888963407) & M
        out.append(COMMANDS[(x >> 33) % len(COMMANDS)])
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    exe, lines, seeds = args[0], int(args[1]) if len(args) > 1 else 20000, int(args[2]) if len(args) > 2 else 5
    for seed in range(1, seeds + 1):
        p = subprocess.Popen([exe] + extra, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        p.stdin.write("uci\nisready\n"); p.stdin.flush()
        while p.stdout.readline().strip() != "readyok":
            pass
        p.stdin.write(storm(seed, lines) + "quit\n"); p.stdin.flush()
        sent = time.monotonic()
        out = p.stdout.read()  # to EOF: the process ended (or closed stdout)
        p.wait(timeout=60)
        took = time.monotonic() - sent
        gos = sum(1 for l in storm(seed, lines).splitlines() if l.startswith("go"))
        best = sum(1 for l in out.splitlines() if l.startswith("bestmove"))
        print(f"seed {seed}: {lines} lines, {gos} go, {best} bestmove, exit {p.returncode} "
              f"{took:.2f} s after the last byte", flush=True)


main()
