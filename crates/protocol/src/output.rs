//! The one writer of a UCI engine's stdout.
//!
//! A thread owns stdout and writes whole lines in the order they were sent,
//! flushing each (`writeln!`, never `println!`, which panics when the GUI has
//! closed the pipe). Everything else holds a cheap [`Output`] handle.

use std::{
    io::Write,
    sync::{Arc, Mutex, mpsc},
    thread,
};

use crate::{
    Bound, EngineLine, GameMove, Info, ScoreKind, UciScore,
    game::{Game, Terminal, VariantEnd},
};

/// The end of the writer thread.
pub struct Writer {
    finished: mpsc::Receiver<()>,
}

impl Writer {
    /// Waits until every line is written and every handle dropped, at most
    /// `timeout`; `false` if some handle still lives (a search thread that
    /// did not end must not keep mpcmc from exiting).
    pub fn wait(&self, timeout: std::time::Duration) -> bool {
        matches!(
            self.finished.recv_timeout(timeout),
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected)
        )
    }
}

/// A handle to send UCI lines to the GUI.
#[derive(Clone)]
pub struct Output {
    lines: mpsc::Sender<String>,
    /// Set on a handle from [`Output::gated`]: once its gate is shut, the
    /// handle's lines are dropped.
    gate: Option<Gate>,
}

/// Shuts the lines of the handles an [`Output::gated`] made.
#[derive(Clone, Default)]
pub struct Gate(Arc<Mutex<bool>>);

impl Gate {
    /// From now on, the gated handles send nothing: a line being sent
    /// goes out before this returns, none after.
    pub fn shut(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }

    pub fn is_shut(&self) -> bool {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Output {
    /// Starts the writer thread over `sink` (stdout in the binary). The thread
    /// ends when every handle is dropped, after writing every line sent.
    pub fn start<W: Write + Send + 'static>(mut sink: W) -> std::io::Result<(Output, Writer)> {
        let (lines, rx) = mpsc::channel::<String>();
        let (done, finished) = mpsc::channel::<()>();
        thread::Builder::new()
            .name("stdout-writer".into())
            .spawn(move || {
                // Dropped when the thread ends, however it ends.
                let _done = done;
                for line in rx {
                    if writeln!(sink, "{line}")
                        .and_then(|()| sink.flush())
                        .is_err()
                    {
                        // The GUI is gone; later sends fail quietly.
                        tracing::warn!("stdout closed; dropping output");
                        break;
                    }
                }
            })?;
        Ok((Output { lines, gate: None }, Writer { finished }))
    }

    /// A handle to the same writer whose lines stop when the returned gate
    /// is shut (a search the GUI replaced without ending it).
    pub fn gated(&self) -> (Output, Gate) {
        let gate = Gate::default();
        let out = Output {
            lines: self.lines.clone(),
            gate: Some(gate.clone()),
        };
        (out, gate)
    }

    /// Sends one line. Control characters in it (a NUL or an ESC echoed from
    /// bad input, a stray newline) are escaped, so a GUI always reads exactly
    /// one printable line. Nothing, through a handle whose gate is shut.
    pub fn send(&self, line: &EngineLine) {
        let line = printable(line.to_string());
        match &self.gate {
            None => {
                let _ = self.lines.send(line);
            }
            // Under the gate's lock, so that no line follows its shutting.
            Some(Gate(shut)) => {
                let shut = shut.lock().unwrap_or_else(|e| e.into_inner());
                if !*shut {
                    let _ = self.lines.send(line);
                }
            }
        }
    }

    /// Sends an `info` line.
    pub fn info(&self, info: Info) {
        self.send(&EngineLine::Info(info));
    }

    /// The one `bestmove` of a `go`, in the game's castling notation. At a
    /// finished root (`best` is `None`) the root's score goes first, as
    /// Stockfish does: `info depth 0 score mate 0` (lost: mated, or by a
    /// variant's own rule, an exploded king) or `cp 0`.
    pub fn bestmove(&self, game: &Game, best: Option<GameMove>, ponder: Option<GameMove>) {
        let castling = game.castling_mode();
        if best.is_none() {
            let lost = matches!(
                game.terminal_now(),
                Some(Terminal::Checkmate | Terminal::Variant(VariantEnd::Lost))
            );
            let kind = if lost {
                ScoreKind::Mate(0)
            } else {
                ScoreKind::Cp(0)
            };
            let info = Info {
                depth: Some(0),
                score: Some(UciScore {
                    kind,
                    bound: Bound::Exact,
                }),
                ..Info::default()
            };
            self.info(info);
        }
        let uci = |m: GameMove| m.text(castling);
        self.send(&EngineLine::BestMove {
            best: best.map(uci),
            ponder: ponder.map(uci),
        });
    }

    /// `info string …`: diagnostics a GUI shows and logs. A word of the
    /// text that is an `info` keyword gets a `:` ([`unparsable`]), and a
    /// phrase a GUI reads as its engine failing is put in other words
    /// ([`harmless`]).
    pub fn info_string(&self, text: impl std::fmt::Display) {
        self.info(Info {
            string: Some(unparsable(&harmless(&text.to_string()))),
            ..Info::default()
        });
    }
}

/// The `info` keywords that adapters read anywhere in the line, even
/// after `string`: Polyglot (the UCI-to-xboard adapter of XBoard and many
/// Arena setups) ends the string at the next of these words and reads
/// what follows as a count (`info string two-step, nodes 8000` showed
/// 8000 nodes).
const INFO_KEYWORDS: [&str; 16] = [
    "cpuload",
    "currline",
    "currmove",
    "currmovenumber",
    "depth",
    "hashfull",
    "multipv",
    "nodes",
    "nps",
    "pv",
    "refutation",
    "score",
    "seldepth",
    "string",
    "tbhits",
    "time",
];

/// `text` with every space-separated word that is an `info` keyword
/// followed by `:` (`go nodes 100` → `go nodes: 100`), so that no adapter
/// reads a diagnostic as search data.
pub fn unparsable(text: &str) -> String {
    if !text.split(' ').any(|w| INFO_KEYWORDS.contains(&w)) {
        return text.to_owned();
    }
    text.split(' ')
        .map(|w| {
            if INFO_KEYWORDS.contains(&w) {
                format!("{w}:")
            } else {
                w.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Phrases a GUI reads in any engine line as a failure, each with words of
/// the same meaning that no GUI reads so; matched ignoring case (the GUIs
/// below match them as written; other cases are too close to risk).
///
/// Polyglot (the UCI-to-xboard adapter of XBoard and of many Arena set-ups)
/// passes every `info string` of a search to XBoard as a thinking line
/// (`7 +0 0 0 <text>`, `send_info` in its `xboard2uci.c`), and XBoard's
/// `HandleMachineMove` (`backend.c`) searches every line an engine writes:
/// - `unknown host`, `No remote directory`, `not found`, `No such file`,
///   `can't alloc`, `Permission denied`: "Failed to start … chess
///   program"; XBoard stops reading the engine, and its clock runs out
///   (Debian's XBoard sends `egtpath syzygy /EGT/Syzygy`, a directory that
///   is not there, and mpcmc said so in the system's words);
/// - `Draw`, `game is a draw`: the engine claims a draw (a false claim
///   loses the game in engine matches), and `offer` with `draw`: it offers
///   one.
///
/// Polyglot itself, before `uciok`, reads a line holding `uci` and `error`
/// or `illegal` (in any case) as "not a UCI engine", and cutechess's and
/// XBoard's xboard readers end a game on a line that starts `Illegal move`
/// or `Error`: those words are put otherwise too.
const FAILURE_PHRASES: [(&str, &str); 10] = [
    ("no such file", "no file"),
    ("not found", "missing"),
    ("permission denied", "not permitted"),
    ("can't alloc", "cannot get memory"),
    ("unknown host", "host unknown"),
    ("no remote directory", "remote directory missing"),
    ("game is a draw", "game is drawn"),
    ("illegal", "not legal"),
    ("error", "fault"),
    ("resign", "give up"),
];

/// `text` with every phrase of [`FAILURE_PHRASES`] in other words, `Draw`
/// written `draw`, and `offer` beside a `draw` written `bid`; nor is it
/// ever `DrawOffer` or `Resign` alone, nor starts `xboard ` (Polyglot reads
/// those as a draw offer, a resignation, and a line to pass to XBoard as
/// it is).
pub fn harmless(text: &str) -> String {
    let mut text = text.to_owned();
    // Until nothing changes: a replacement may join words into a phrase
    // ("unknown unknown host" → "unknown host unknown"). Each pass that
    // changes shortens the phrases' count, so a few suffice.
    for _ in 0..8 {
        let before = text.clone();
        for (phrase, instead) in FAILURE_PHRASES {
            text = replace_ignoring_case(&text, phrase, instead);
        }
        if text == before {
            break;
        }
    }
    text = text.replace("Draw", "draw");
    if text.to_ascii_lowercase().contains("draw") {
        text = replace_ignoring_case(&text, "offer", "bid");
    }
    if text.trim_start().to_ascii_lowercase().starts_with("xboard") {
        text = format!("mpcmc: {text}");
    }
    text
}

/// `text` with every `phrase` (lowercase ASCII), in whatever case, replaced
/// by `instead`.
fn replace_ignoring_case(text: &str, phrase: &str, instead: &str) -> String {
    // ASCII lowercasing keeps every byte offset.
    let lower = text.to_ascii_lowercase();
    if !lower.contains(phrase) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (at, _) in lower.match_indices(phrase) {
        out.push_str(&text[from..at]);
        out.push_str(instead);
        from = at + phrase.len();
    }
    out.push_str(&text[from..]);
    out
}

/// `line` with every control character written as a Rust escape (`\0` →
/// `\u{0}`, ESC → `\u{1b}`, tab → `\t`).
fn printable(line: String) -> String {
    if !line.chars().any(char::is_control) {
        return line;
    }
    line.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A sink the test can read after the writer is done.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("sink").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn control_characters_never_reach_the_gui() {
        let sink = Shared::default();
        let (out, writer) = Output::start(sink.clone()).expect("writer");
        out.info_string("bad \0 \x1b[31m red\r\nbestmove a2a3 \t é");
        out.send(&EngineLine::BestMove {
            best: Some("e2e4".parse().expect("move")),
            ponder: None,
        });
        drop(out);
        assert!(writer.wait(std::time::Duration::from_secs(5)));
        let text = String::from_utf8(sink.0.lock().expect("sink").clone()).expect("utf-8");
        assert_eq!(
            text,
            "info string bad \\u{0} \\u{1b}[31m red\\r\\nbestmove a2a3 \\t é\nbestmove e2e4\n"
        );
    }

    #[test]
    fn a_shut_gate_stops_its_handles_lines_only() {
        let sink = Shared::default();
        let (out, writer) = Output::start(sink.clone()).expect("writer");
        let (gated, gate) = out.gated();
        let copy = gated.clone();
        gated.info_string("one");
        gate.shut();
        assert!(gate.is_shut());
        gated.info_string("two");
        copy.info_string("three");
        out.info_string("four");
        drop((out, gated, copy));
        assert!(writer.wait(std::time::Duration::from_secs(5)));
        let text = String::from_utf8(sink.0.lock().expect("sink").clone()).expect("utf-8");
        assert_eq!(text, "info string one\ninfo string four\n");
    }

    /// What XBoard (through Polyglot) and Polyglot read as a failure never
    /// reaches them (the texts as mpcmc wrote them before, and the
    /// system's own), and the meaning survives.
    #[test]
    fn an_info_string_holds_no_phrase_a_gui_reads_as_failure() {
        let cases = [
            (
                "SyzygyPath: cannot read tablebase directory '/EGT/Syzygy': No such file or \
                 directory (os error 2); playing without tablebases",
                "SyzygyPath: cannot read tablebase directory '/EGT/Syzygy': no file or \
                 directory (os fault 2); playing without tablebases",
            ),
            ("BookFile: Permission denied", "BookFile: not permitted"),
            ("engine not found", "engine missing"),
            ("ssh: Unknown host 'x'", "ssh: host unknown 'x'"),
            (
                "illegal move 'e1e3' (move 3): Illegal",
                "not legal move 'e1e3' (move 3): not legal",
            ),
            ("Error in uci handshake", "fault in uci handshake"),
            ("Draw by repetition", "draw by repetition"),
            ("the game is a draw", "the game is drawn"),
            ("a level offers a draw", "a level bids a draw"),
            ("Resign", "give up"),
            ("xboard usermove", "mpcmc: xboard usermove"),
            ("an offer", "an offer"),
            ("unknown unknown host", "host unknown unknown"),
        ];
        for (text, said) in cases {
            assert_eq!(harmless(text), said, "{text}");
        }
        let sink = Shared::default();
        let (out, writer) = Output::start(sink.clone()).expect("writer");
        out.info_string("No such file, nodes 3");
        drop(out);
        assert!(writer.wait(std::time::Duration::from_secs(5)));
        let text = String::from_utf8(sink.0.lock().expect("sink").clone()).expect("utf-8");
        assert_eq!(text, "info string no file, nodes: 3\n");
    }

    /// Polyglot ends an `info string` at the next `info` keyword and reads
    /// what follows: no keyword is left a word of its own.
    #[test]
    fn an_info_string_holds_no_info_keyword() {
        assert_eq!(
            unparsable("two-step, nodes 8000: rule one_worker (after 'go nodes 100')"),
            "two-step, nodes: 8000: rule one_worker (after 'go nodes: 100')"
        );
        assert_eq!(
            unparsable("stalled: no bestmove within 2 s, depth 3 score cp 10 pv e2e4"),
            "stalled: no bestmove within 2 s, depth: 3 score: cp 10 pv: e2e4"
        );
        // Words that only contain a keyword are left alone.
        let plain = "nodes, depth-first, timeout, pvs";
        assert_eq!(unparsable(plain), plain);
    }
}
