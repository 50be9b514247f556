#!/usr/bin/env python3
"""Pentanomial Elo +- 95% from fastchess PGNs (pairs = same Round number). usage: penta.py NAME pgn..."""
import re, sys, math
name = sys.argv[1]; pairs = {}; games = 0
for f in sys.argv[2:]:
    t = open(f).read()
    for g in re.split(r'\n(?=\[Event )', t):
        w = re.search(r'\[White "([^"]+)"', g); b = re.search(r'\[Black "([^"]+)"', g)
        r = re.search(r'\[Result "([^"]+)"', g); rd = re.search(r'\[Round "(\d+)', g)
        if not (w and r and rd) or r.group(1) == '*': continue
        s = {'1-0': 1, '0-1': 0, '1/2-1/2': .5}[r.group(1)]
        if b.group(1) == name: s = 1 - s
        elif w.group(1) != name: continue
        pairs.setdefault((f, rd.group(1)), []).append(s); games += 1
pt = [0]*5; sc = []
for v in pairs.values():
    if len(v) == 2: pt[int(round(2*sum(v)))] += 1; sc.append(sum(v)/2)
n = len(sc)
if n == 0: sys.exit(f"{name}: {games} games, no complete pair")
m = sum(sc)/n; var = sum((x-m)**2 for x in sc)/n
se = math.sqrt(var/n)
elo = lambda p: -400*math.log10(1/p-1) if 0 < p < 1 else float('inf')
lo, hi = elo(m-1.96*se), elo(m+1.96*se)
print(f"{name}: {games} games, {n} pairs, score {m*100:.1f}%, Elo {elo(m):+.1f} +- {(hi-lo)/2:.1f}, ptnml {pt}")
