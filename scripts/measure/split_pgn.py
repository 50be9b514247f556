#!/usr/bin/env python3
"""The finished games [START, END) of a PGN (one a running match is still
writing, say) to another file, to judge a match in parts in parallel.
usage: split_pgn.py in.pgn out.pgn START END   (prints: games, finished, written)"""
import sys
src, out, a, b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
games, cur = [], []
for line in open(src):
    if line.startswith('[Event ') and cur:
        games.append(''.join(cur)); cur = []
    cur.append(line)
if cur: games.append(''.join(cur))
done = [g for g in games if '\n1-0' in g or '\n0-1' in g or '\n1/2-1/2' in g or ' 1-0\n' in g or ' 0-1\n' in g or ' 1/2-1/2\n' in g]
open(out, 'w').write('\n'.join(done[a:b]))
print(len(games), len(done), len(done[a:b]))
