#!/bin/sh
# Issue 61, point 2: the match behind a point of the worker curve
# (worker_curve.sh) — mpcmc with a worker for every root move on the
# virtual clock (VirtualWorkers 1024, `Workers=root: CHILD; CHILD`: the
# root search B nodes on a child of its own, each root move's line B/2 a
# call) against CHILD alone at `go nodes B`, 200 games (both colours of 100
# openings of tests/data/openings.epd, -srand 2711 as the matches at B = 10
# 000 and 20 000), fastchess at concurrency 2 with its resign and draw
# adjudication. Fixed nodes: a busy machine changes the time, not the games.
# Runs in DIR (made if missing; the binary is copied there first, so a
# rebuild does not change a running match) and resumes from DIR's
# config.json when there is one (fastchess saves it every 2 games here:
# a session's end costs a few games, not up to twenty).
# usage: scripts/measure/worker_match.sh DIR B [builtin|stockfish]
#        (the result: python3
#        scripts/measure/penta.py mpc DIR/games.pgn, or fastchess's summary
#        in DIR/out.txt)
set -eu
dir=$1 b=$2 child=${3:-builtin}
root=$(cd "$(dirname "$0")/../.." && pwd)
fc=$root/../shared/tools/fastchess
mkdir -p "$dir"
cd "$dir"
if [ -f config.json ]; then
  # fastchess counts finished pairs (rounds) in its save and plays the
  # rounds after them again: the PGN keeps only the rounds counted, so that
  # a round is one pair of games there.
  python3 - <<'PY'
import json, os, re
stats = json.load(open("config.json"))["stats"]
rounds = sum(s["wins"] + s["losses"] + s["draws"] for s in stats.values()) // 2
if os.path.exists("games.pgn"):
    games = re.split(r"\n(?=\[Event )", open("games.pgn").read().strip())
    kept = [g for g in games if int(re.search(r'\[Round "(\d+)', g).group(1)) <= rounds]
    open("games.pgn", "w").write("\n\n".join(g.strip() for g in kept) + "\n\n")
PY
  exec "$fc" -config file=config.json >> out.txt 2>&1
fi
cp "$root/target/release/mpcmc" ./mpcmc
case $child in
  builtin) c=builtin alone="cmd=$PWD/mpcmc args=engine" ;;
  stockfish) c=/usr/games/stockfish
    alone="cmd=$c option.Threads=1 option.Hash=16" ;;
  *) echo "child: builtin or stockfish" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086 # $alone is a list of fastchess words
exec "$fc" -engine cmd="$PWD/mpcmc" name=mpc nodes="$b" st=600 \
  "option.Workers=root: $c; $c" option.VirtualWorkers=1024 \
  -engine $alone name=alone nodes="$b" st=600 \
  -openings file="$root/tests/data/openings.epd" format=epd order=random \
  -srand 2711 -rounds 100 -repeat -concurrency 2 -autosaveinterval 2 \
  -resign movecount=4 score=1000 twosided=true \
  -draw movenumber=50 movecount=10 score=5 \
  -pgnout file=games.pgn > out.txt 2>&1
