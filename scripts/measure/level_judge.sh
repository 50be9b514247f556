#!/usr/bin/env bash
# Issue 31, items 5 and 6 in one run: a level's calibration match where no
# clock cuts it (the second command of uci-options.md's *Calibration*: mpcmc
# at UCI_Elo X on tc=600+5 against Stockfish 15.1's UCI_Elo Y at
# nodes=100000), then its games judged for gross blunders (judge.py, in
# CONC parts at once). Each phase stops after its seconds; what finished
# is scored (penta.py) and judged whole games at a time.
# usage: level_judge.sh OUT X Y ROUNDS CONC MATCH_SECS JUDGE_SECS SRAND
# SF, MPCMC, FASTCHESS name the programs (defaults: Debian's Stockfish, the
# release build, ../shared/tools/fastchess); MPCMC_ARGS adds mpcmc flags
# (e.g. --evaluator=/usr/games/stockfish for the levels over Stockfish).
set -u
out=$1 x=$2 y=$3 rounds=$4 conc=$5 match_secs=$6 judge_secs=$7 srand=$8
here=$(dirname "$0")
. "$here/programs.sh"
mkdir -p "$out"
echo "cores $(nproc); mpcmc $x (${MPCMC_ARGS:-}) vs sf $y, $rounds rounds, concurrency $conc, srand $srand"
start=$(date +%s)
timeout -s INT "$match_secs" "$fc" \
    -engine "cmd=$mpcmc" "name=lvl$x" "args=--uci-limit-strength=true --uci-elo=$x ${MPCMC_ARGS:-}" tc=600+5 \
    -engine "cmd=$sf" "name=sf$y" option.UCI_LimitStrength=true "option.UCI_Elo=$y" \
        option.Threads=1 option.Hash=16 nodes=100000 st=600 \
    -openings file=tests/data/openings.epd format=epd order=random -srand "$srand" \
    -rounds "$rounds" -repeat -concurrency "$conc" -recover \
    -resign movecount=4 score=1000 twosided=true -draw movenumber=50 movecount=10 score=5 \
    -pgnout "file=$out/games.pgn" >"$out/match.out" 2>&1
echo "match: $(( $(date +%s) - start )) s"
python3 "$here/penta.py" "lvl$x" "$out/games.pgn"
echo "time forfeits $(grep -c 'loses on time' "$out/games.pgn"), illegal $(grep -ci 'illegal' "$out/games.pgn")"
finished=$(python3 "$here/split_pgn.py" "$out/games.pgn" /dev/null 0 0 | cut -d' ' -f2)
per=$(( (finished + conc - 1) / conc ))
for i in $(seq 0 $(( conc - 1 ))); do
    python3 "$here/split_pgn.py" "$out/games.pgn" "$out/part$i.pgn" $(( i * per )) $(( (i + 1) * per )) >/dev/null
    SF=$sf timeout -s TERM "$judge_secs" python3 "$here/judge.py" "$out/part$i.pgn" 50000 1000000 \
        "$out/gross$i.tsv" >"$out/judged$i.txt" 2>&1 &
done
wait
cat "$out"/gross[0-9]*.tsv >"$out/gross.tsv" 2>/dev/null
cat "$out"/judged[0-9]*.txt >"$out/judged.txt"
python3 "$here/judge_sum.py" "lvl$x" "sf$y" "$out/judged.txt"
rm -f "$out"/part[0-9]*.pgn "$out"/gross[0-9]*.tsv "$out"/judged[0-9]*.txt
echo "all: $(( $(date +%s) - start )) s"
