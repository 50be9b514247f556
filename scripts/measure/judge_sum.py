#!/usr/bin/env python3
"""Totals over judge.py outputs (a match judged in parts): per player named,
moves, gross blunders, blunders and inaccuracies a hundred moves, ACPL, and
the first player's gross-blunder rate over the second's.
usage: judge_sum.py PLAYER OTHER judged.txt..."""
import re, sys, collections
me, other = sys.argv[1], sys.argv[2]
T = collections.defaultdict(collections.Counter); games = 0
for f in sys.argv[3:]:
    for line in open(f):
        g = re.match(r"(\d+) games judged", line)
        games += int(g.group(1)) if g else 0
        m = re.match(r"(\S+): moves (\d+) acpl ([\d.]+) \| per 100 moves: inaccuracies ([\d.]+) "
                     r"mistakes ([\d.]+) blunders ([\d.]+) gross ([\d.]+) \((\d+) gross", line)
        if not m or m.group(1) not in (me, other): continue
        t = T[m.group(1)]; mv = int(m.group(2))
        t['moves'] += mv; t['loss'] += float(m.group(3)) * mv
        t['inacc'] += float(m.group(4)) * mv / 100; t['blund'] += float(m.group(6)) * mv / 100
        t['gross'] += int(m.group(8))
print(f"{games} games judged")
for n in (me, other):
    t = T[n]; mv = max(1, t['moves'])
    print(f"{n}: moves {t['moves']} gross {t['gross']} ({100*t['gross']/mv:.2f}/100) "
          f"blunders {100*t['blund']/mv:.2f}/100 inaccuracies {100*t['inacc']/mv:.2f}/100 acpl {t['loss']/mv:.1f}")
a, b = T[me], T[other]
if a['moves'] and b['moves'] and b['gross']:
    print(f"gross ratio {me}/{other}: {a['gross']/a['moves'] / (b['gross']/b['moves']):.2f}")
