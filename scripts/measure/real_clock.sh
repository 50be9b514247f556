#!/usr/bin/env bash
# Issue 36, point 5: the lookahead on many real cores at a real clock.
#   A: mpcmc, Stockfish with ROOT threads as the root search and WORKERS
#      one-thread Stockfish lookahead workers, against Stockfish ROOT threads;
#   B: Stockfish with BIG threads (the same cores as A's mpcmc) against the same.
# One game at a time (each side has every core while it thinks), each match
# stopped after its seconds; the results are read from the PGNs.
# usage: real_clock.sh OUT SECS_A SECS_B [ROOT WORKERS BIG TC SRAND]
# SF, MPCMC, FASTCHESS name the programs (defaults: Debian's Stockfish, the
# release build, ../shared/tools/fastchess).
set -u
out=$1 secs_a=$2 secs_b=$3
root=${4:-4} workers=${5:-12} big=${6:-16} tc=${7:-5+0.05} srand=${8:-3601}
here=$(dirname "$0")
. "$here/programs.sh"
mkdir -p "$out"
echo "cores $(nproc); root $root, workers $workers, big $big, tc $tc, srand $srand"
common=(-openings file=tests/data/openings.epd format=epd order=random -srand "$srand"
    -rounds 100000 -repeat -concurrency 1 -recover
    -resign movecount=4 score=1000 twosided=true -draw movenumber=50 movecount=10 score=5)
opponent=(-engine "cmd=$sf" "name=sf$root" "option.Threads=$root" option.Hash=64 "tc=$tc")

timeout -s INT "$secs_a" "$fc" \
    -engine "cmd=$mpcmc" name=mpcmc "option.Workers=root: $sf; $sf *$workers" \
    "option.Threads=$root" option.ChildThreads=1 option.Hash=64 option.ShowDecisions=true "tc=$tc" \
    "${opponent[@]}" "${common[@]}" -pgnout "file=$out/a.pgn" \
    -log "file=$out/a.log" level=info engine=true >"$out/a.out" 2>&1
timeout -s INT "$secs_b" "$fc" \
    -engine "cmd=$sf" "name=sf$big" "option.Threads=$big" option.Hash=64 "tc=$tc" \
    "${opponent[@]}" "${common[@]}" -pgnout "file=$out/b.pgn" >"$out/b.out" 2>&1
# Counted before anything is ended (run with a Stockfish of its own, SF, so
# that others on the machine are not counted), then ended.
sleep 1
echo "$sf processes left after both matches: $(pgrep -fc "$sf")"
pkill -f "$sf" 2>/dev/null

python3 "$here/penta.py" mpcmc "$out/a.pgn"
python3 "$here/penta.py" "sf$big" "$out/b.pgn"
for m in a b; do
    echo "$m: time forfeits $(grep -c 'time forfeit\|loses on time' "$out/$m.pgn"), illegal $(grep -ci 'illegal' "$out/$m.pgn")"
done
# The decisions' rules, from mpcmc's `info string`s in fastchess's log.
if [ -f "$out/a.log" ]; then
    python3 - "$out/a.log" <<'PY'
import re, sys, collections
rules = collections.Counter(); moved = 0
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"rule (\w+):.*?lookahead (\S+) \S+ vs evaluator (\S+)", line)
    if not m: continue
    rules[m.group(1)] += 1
    moved += m.group(1) == "lookahead" and m.group(2) != m.group(3)
print(f"decisions {sum(rules.values())}, rules {dict(rules)}, "
      f"the lookahead's move over the root search's {moved}")
PY
    gzip -f "$out/a.log"
fi
