#!/usr/bin/env python3
"""What the way to a child costs a call, from mpcmc's LogFile (issue 61,
point 4): for every search of every child, when its lines arrived against
the time the child itself reports in them. Through a pipe a line arrives
as the child writes it; through `srun` or `ssh` the way can hold lines
back (Nagle's algorithm on a socket: a small write waits for the far end
to acknowledge the one before, which it may delay 40 ms).
Printed for each child (medians and means over its calls, ms): `ucinewgame` to `readyok`;
`go` to the first line the child answers; each `info depth` line's arrival
less the child's own `time` in it (at depths 1-5 and beyond); `go` to
`bestmove` less the child's last reported time.
usage: child_lag.py LOGFILE..."""
import datetime
import re
import statistics
import sys

LINE = re.compile(r"^(\S+)Z TRACE .*client: (child \d+ \([^)]*\)) ([<>]) (.*)$")


def measure(path):
    """{child's label: {what: [ms]}}"""
    rows, state = {}, {}

    def add(child, what, seconds):
        rows.setdefault(child, {}).setdefault(what, []).append(1000 * seconds)

    for line in open(path, errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        t = datetime.datetime.fromisoformat(m.group(1)).timestamp()
        child = m.group(2)
        s = state.setdefault(child, {})
        sent, text = m.group(3) == "<", m.group(4)
        if sent:
            if text == "ucinewgame":
                s["new"] = t
            elif text.startswith("go"):
                s.update(go=t, first=None, own=None)
            continue
        if text == "readyok" and "new" in s:
            add(child, "ucinewgame to readyok", t - s.pop("new"))
        if s.get("go") is None:
            continue
        if s["first"] is None:
            s["first"] = t
            add(child, "go to the first line", t - s["go"])
        words = text.split()
        if words[:2] == ["info", "depth"] and "time" in words:
            own = int(words[words.index("time") + 1]) / 1000
            s["own"] = own
            deep = "1-5" if int(words[2]) <= 5 else "6+"
            add(child, f"info at depth {deep}: late by", t - s["go"] - own)
        if words[:1] == ["bestmove"]:
            if s["own"] is not None:
                add(child, "bestmove: late by", t - s["go"] - s["own"])
            s["go"] = None
    return rows


for path in sys.argv[1:]:
    print(path)
    for child, rows in measure(path).items():
        print(f" {child}")
        for what, v in rows.items():
            print(f"  {what:28} n={len(v):5}  median {statistics.median(v):6.2f}  "
                  f"mean {statistics.mean(v):6.2f}  max {max(v):6.2f} ms")
