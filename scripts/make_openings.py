#!/usr/bin/env python3
"""Builds data/openings.bin, the human openings a level plays from
(`LevelBook`), out of Debian's gnuchess-book (public domain: built by Stuart
Cracraft and Simon Waters from the free game collections of the University
of Pittsburgh chess server; see /usr/share/doc/gnuchess-book/copyright).

Walks the book from the start position to PLIES plies, keeping at each
position the moves that hold at least SHARE of its weight (the lines people
play, not every game's one-off), and writes those entries, sorted by key, as
a Polyglot book. Reproducible: the same input gives the same bytes.

    python3 scripts/make_openings.py [/usr/share/games/gnuchess/book.bin] [data/openings.bin]
"""
import struct
import sys

import chess
import chess.polyglot

PLIES = 12
SHARE = 0.05


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/games/gnuchess/book.bin"
    target = sys.argv[2] if len(sys.argv) > 2 else "data/openings.bin"
    kept = {}
    # The fewest plies each position was reached in: a transposition met
    # again nearer the start is walked again, deeper.
    reached = {}
    with chess.polyglot.open_reader(source) as book:

        def walk(board, ply):
            if ply >= PLIES:
                return
            key = chess.polyglot.zobrist_hash(board)
            if reached.get(key, PLIES) <= ply:
                return
            reached[key] = ply
            entries = list(book.find_all(board))
            total = sum(e.weight for e in entries)
            for e in entries:
                if total == 0 or e.weight < SHARE * total:
                    continue
                kept[(key, e.raw_move)] = e.weight
                board.push(e.move)
                walk(board, ply + 1)
                board.pop()

        walk(chess.Board(), 0)
    with open(target, "wb") as out:
        for (key, raw), weight in sorted(kept.items()):
            out.write(struct.pack(">QHHI", key, raw, weight, 0))
    print(f"{target}: {len(kept)} entries from {source}, {PLIES} plies, moves of {SHARE:.0%} or more")


if __name__ == "__main__":
    main()
