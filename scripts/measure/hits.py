#!/usr/bin/env python3
"""Nominal opponent's hit rate from a TraceFile: for every decision whose
next decision in the same game is in the trace, whether the reply the
lookahead predicted for the played move is the move the opponent played.
usage: hits.py trace.jsonl"""
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in recs:
    by[(r['fen'], tuple(r['moves']))] = r
nexts = {}
for (fen, moves) in by:
    if moves:
        nexts[(fen, moves[:-1])] = moves[-1]
n = hit = 0
for r in recs:
    chosen = r['chosen']
    cand = next((c for c in r['candidates'] if c['move'] == chosen), None)
    if cand is None or not cand.get('reply'):
        continue
    # the next decision: moves + [chosen, actual]
    prefix = tuple(r['moves']) + (chosen,)
    found = nexts.get((r['fen'], prefix))
    if not found:
        continue
    actual = found
    n += 1
    hit += actual == cand['reply']
print(f"{sys.argv[1]}: {hit}/{n} predicted replies played ({100*hit/max(n,1):.1f}%)")
