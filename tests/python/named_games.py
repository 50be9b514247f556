"""mpcmc plays the games it knows by name only (xiangqi, shogi, makruk…)
against an engine, refereed by pyffish: Fairy-Stockfish's rules as a
Python package, a second opinion apart from the child mpcmc asks. Every
move mpcmc plays must be on pyffish's list of legal moves, a game ends
where pyffish ends it, and at a position without moves mpcmc answers
`bestmove (none)`.

Usage: named_games.py <mpcmc> <opponent engine> <plies> <variant>...,
each engine one command line (split on spaces). Prints one line a game
and `named games: ok`; exits non-zero on any illegal move or engine
failure. The engines speak plain UCI over pipes: no client library
plays these games."""

import subprocess
import sys
import time

import pyffish as sf

class Engine:
    def __init__(self, command):
        self.command = command
        self.p = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.send("uci")
        self.options = [l for l in self.until("uciok", 30) if l.startswith("option")]

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def until(self, first_word, timeout):
        """Lines up to the one starting with `first_word` (included)."""
        deadline, lines = time.time() + timeout, []
        while True:
            assert time.time() < deadline, (self.command, first_word, lines[-5:])
            line = self.p.stdout.readline()
            assert line, (self.command, "closed its stdout", lines[-5:])
            line = line.strip()
            lines.append(line)
            if line.split(" ", 1)[0] == first_word:
                return lines

    def variant(self, name):
        self.send(f"setoption name UCI_Variant value {name}")
        self.send("ucinewgame")
        self.send("isready")
        self.until("readyok", 30)

    def go(self, moves, nodes):
        """The engine's move at the start position plus `moves` in
        `nodes`, and the `info string` lines it wrote."""
        return self.go_with(moves, f"go nodes {nodes}")

    def go_with(self, moves, go):
        """The engine's move at the start position plus `moves`, searched
        by the `go` command `go`, and the `info string` lines it wrote."""
        self.send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
        self.send(go)
        lines = self.until("bestmove", 120)
        words = lines[-1].split()
        strings = [l for l in lines if l.startswith("info string")]
        return (words[1] if len(words) > 1 else None), strings

    def quit(self):
        try:
            self.send("quit")
            self.p.wait(10)
        except Exception:
            self.p.kill()


def main():
    mpcmc, opponent = sys.argv[1].split(), sys.argv[2].split()
    max_plies, variants = int(sys.argv[3]), sys.argv[4:]
    started = []
    try:
        ours = Engine(mpcmc)
        started.append(ours)
        theirs = Engine(opponent)
        started.append(theirs)
        combo = next(o for o in ours.options if "name UCI_Variant " in o).split()
        for i, name in enumerate(variants):
            assert name in combo, (name, combo)
            ours.variant(name)
            theirs.variant(name)
            fen = sf.start_fen(name)
            moves = []
            # Colours alternate from one game to the next.
            white, black = (ours, theirs) if i % 2 == 0 else (theirs, ours)
            end = None
            while len(moves) < max_plies:
                legal = sf.legal_moves(name, fen, moves)
                over, result = sf.is_immediate_game_end(name, fen, moves)
                if not legal or over:
                    end = result if over else sf.game_result(name, fen, moves)
                    break
                engine = white if len(moves) % 2 == 0 else black
                nodes = 3000 if engine is ours else 1000
                move, strings = engine.go(moves, nodes)
                assert move in legal, (name, engine.command, move, moves, legal)
                if engine is ours:
                    assert not any("refused" in s or "could not" in s for s in strings), strings
                moves.append(move)
            side = "first" if white is ours else "second"
            if end is None:
                how = f"unfinished at {max_plies} plies"
            else:
                how = f"result {end} for the side to move"
                # No move at a finished position without legal moves.
                if not sf.legal_moves(name, fen, moves):
                    move, _ = ours.go(moves, 1000)
                    assert move == "(none)", (name, move, moves)
            print(f"{name}: mpcmc {side}, {how} after {len(moves)} plies")
        print("named games: ok")
    finally:
        for engine in started:
            engine.quit()


if __name__ == "__main__":
    main()
