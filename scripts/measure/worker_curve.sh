#!/bin/sh
# Issue 61's curve: at each root budget B, mpcmc with a worker for every root
# move (VirtualWorkers 1024: the root search B nodes, each move's line B/2 a
# call) against the engine it is built from alone at `go nodes B`, by the move
# proxy (scripts/measure/move_loss.py) on the middlegame positions of
# scripts/measure/positions-middlegame.fen, every move judged by Stockfish
# 15.1 at JUDGE nodes (default 2 000 000) searching the root restricted to it.
# Over the built-in engine and over Stockfish, B ascending; JOBS processes at
# once (default 2). The cache (default target/worker-curve.json) lets a
# stopped run go on; delete it when target/release/mpcmc changes.
# usage: scripts/measure/worker_curve.sh [B...]   (from the repository root)
set -eu
: "${JUDGE:=2000000}" "${JOBS:=2}" "${CACHE:=target/worker-curve.json}"
export JOBS CACHE JUDGE_AT=root
mpcmc=target/release/mpcmc
positions=scripts/measure/positions-middlegame.fen
for b in ${*:-10000 20000 50000 100000 200000 400000}; do
  echo "== over the built-in engine, B = $b"
  python3 scripts/measure/move_loss.py $positions "$b" "$JUDGE" \
    "alone=$mpcmc,engine" \
    "mpc=$mpcmc,Workers=root: builtin; builtin,VirtualWorkers=1024"
  echo "== over Stockfish, B = $b"
  python3 scripts/measure/move_loss.py $positions "$b" "$JUDGE" \
    "alone=/usr/games/stockfish,Threads=1,Hash=16" \
    "mpc=$mpcmc,Workers=root: /usr/games/stockfish; /usr/games/stockfish,VirtualWorkers=1024"
done
