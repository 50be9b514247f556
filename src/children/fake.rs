//! A fake UCI engine in this process, for the child-side fault tests.
//!
//! It speaks just enough UCI to be driven by [`Client`] and answers every
//! `go` with one fixed move; it never plays chess. Its command line is a
//! list of flags that make it misbehave the way real children do:
//!
//! - `--crash-on-go`: on `go`, close its end of the pipe, printing nothing;
//! - `--stall-after-go`: never answer `go`; with `--answer-stop`, a `stop`
//!   then gets the `bestmove`;
//! - `--stall-on-uci`: never send `uciok`;
//! - `--garbage`: print a non-UCI line and an `info` of unknown tokens before
//!   every real line;
//! - `--illegal-bestmove`: answer `bestmove a1a1`;
//! - `--none-bestmove`: answer `bestmove (none)`;
//! - `--move=<uci>`: the move to answer (default `e2e4`);
//! - `--ponder=<uci>`: answer `bestmove <move> ponder <uci>` (the `pv`
//!   stays the move alone);
//! - `--mate=<n>`: report `score mate <n>` (default `score cp 10`);
//! - `--endless-line-on-go`: on `go`, print bytes with no newline, for
//!   ever (`cat /dev/zero`);
//! - `--deaf-after-ucinewgame`: once sent `ucinewgame`, never answer
//!   `isready` again;
//! - `--latin1`: print `info string caf\xe9` (Latin-1, not UTF-8) before
//!   every real line;
//! - `--perft=m1,m2[/n]`: answer `go perft 1` with `m1: 1` … and `Nodes
//!   searched: n` (the count of moves unless given).
//!
//! As any UCI engine, it answers `go ponder` only after `ponderhit` or
//! `stop`.
//!
//! Every line it receives is kept in a [`Heard`] the test reads, and each
//! write the client made (what one write carried). It talks
//! over an in-memory pipe, so tests run with time paused: a stall costs its
//! deadline in virtual time only. What only a process can do (exit with a
//! status, outlive its parent) is tested over real processes in
//! `tests/child_faults.rs`.

use std::{
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
};

use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};

use crate::children::{
    client::{ChildConfig, Client, Connect, Connecting},
    error::ChildError,
};

/// The fake's behaviour, from its flags.
#[derive(Debug, Clone, Default)]
pub struct Fake {
    crash_on_go: bool,
    stall_after_go: bool,
    answer_stop: bool,
    stall_on_uci: bool,
    garbage: bool,
    illegal_bestmove: bool,
    none_bestmove: bool,
    best: Option<String>,
    ponder: Option<String>,
    mate: Option<i32>,
    endless_line_on_go: bool,
    latin1: bool,
    deaf_after_ucinewgame: bool,
    /// `go perft 1`'s moves and the count it claims.
    perft: Option<(Vec<String>, usize)>,
}

/// Every line the fakes of a test received, and what each of the
/// clients' writes carried, in order.
#[derive(Debug, Clone, Default)]
pub struct Heard {
    lines: Arc<Mutex<Vec<String>>>,
    writes: Arc<Mutex<Vec<String>>>,
}

impl Heard {
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// What each of the client's writes carried, in order.
    pub fn writes(&self) -> Vec<String> {
        self.writes.lock().map(|w| w.clone()).unwrap_or_default()
    }

    /// How many lines start with `verb`.
    pub fn count(&self, verb: &str) -> usize {
        self.lines()
            .iter()
            .filter(|l| l.split_whitespace().next() == Some(verb))
            .count()
    }

    fn push(&self, line: &str) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(line.to_owned());
        }
    }
}

impl Fake {
    /// The fake a command line of flags describes.
    ///
    /// # Panics
    /// On an unknown flag: a test's typo.
    pub fn parse(command: &str) -> Fake {
        let mut fake = Fake::default();
        for arg in command.split_whitespace() {
            match arg {
                "--crash-on-go" => fake.crash_on_go = true,
                "--stall-after-go" => fake.stall_after_go = true,
                "--answer-stop" => fake.answer_stop = true,
                "--stall-on-uci" => fake.stall_on_uci = true,
                "--garbage" => fake.garbage = true,
                "--illegal-bestmove" => fake.illegal_bestmove = true,
                "--none-bestmove" => fake.none_bestmove = true,
                "--endless-line-on-go" => fake.endless_line_on_go = true,
                "--latin1" => fake.latin1 = true,
                "--deaf-after-ucinewgame" => fake.deaf_after_ucinewgame = true,
                _ => {
                    if let Some(m) = arg.strip_prefix("--move=") {
                        fake.best = Some(m.to_owned());
                    } else if let Some(m) = arg.strip_prefix("--ponder=") {
                        fake.ponder = Some(m.to_owned());
                    } else if let Some(list) = arg.strip_prefix("--perft=") {
                        let (moves, count) = list.split_once('/').unwrap_or((list, ""));
                        let moves: Vec<String> = moves.split(',').map(str::to_owned).collect();
                        let count = count.parse().unwrap_or(moves.len());
                        fake.perft = Some((moves, count));
                    } else if let Some(n) = arg.strip_prefix("--mate=") {
                        fake.mate = Some(n.parse().expect("fake engine: --mate=<n>"));
                    } else {
                        panic!("fake engine: unknown flag '{arg}'");
                    }
                }
            }
        }
        fake
    }

    /// The move written after `bestmove` (and in the `info … pv`).
    fn answer(&self) -> &str {
        if self.none_bestmove {
            "(none)"
        } else if self.illegal_bestmove {
            "a1a1"
        } else {
            self.best.as_deref().unwrap_or("e2e4")
        }
    }

    fn search_result(&self) -> Vec<String> {
        let best = self.answer();
        let mut lines = Vec::new();
        if best != "(none)" {
            let score = self
                .mate
                .map_or_else(|| "cp 10".to_owned(), |n| format!("mate {n}"));
            lines.push(format!("info depth 1 score {score} nodes 1 pv {best}"));
        }
        match &self.ponder {
            Some(ponder) => lines.push(format!("bestmove {best} ponder {ponder}")),
            None => lines.push(format!("bestmove {best}")),
        }
        lines
    }

    /// Runs the fake on a task; the client's end of the pipe.
    fn start(self, heard: Heard) -> DuplexStream {
        let (client_end, fake_end) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            // A closed pipe ends the fake, as it ends a process.
            let _ = self.serve(fake_end, heard).await;
        });
        client_end
    }

    async fn serve(self, pipe: DuplexStream, heard: Heard) -> std::io::Result<()> {
        let (reader, mut writer) = tokio::io::split(pipe);
        let mut lines = BufReader::new(reader).lines();
        // A `go` left unanswered (stall mode), waiting for `stop`.
        let mut pending = false;
        // A `go ponder` waiting for `ponderhit` or `stop`.
        let mut pondering = false;
        // Sent `ucinewgame` (deaf mode: `isready` goes unanswered from then).
        let mut new_game = false;
        while let Some(line) = lines.next_line().await? {
            heard.push(&line);
            let mut out: Vec<String> = Vec::new();
            match line.split_whitespace().next().unwrap_or("") {
                "uci" => {
                    out.push("id name fake-engine".to_owned());
                    out.push("id author mpcmc tests".to_owned());
                    out.push("option name Hash type spin default 16 min 1 max 1024".to_owned());
                    out.push("option name Threads type spin default 1 min 1 max 1".to_owned());
                    if !self.stall_on_uci {
                        out.push("uciok".to_owned());
                    }
                }
                "ucinewgame" => new_game = true,
                "isready" if new_game && self.deaf_after_ucinewgame => {}
                "isready" => out.push("readyok".to_owned()),
                "go" if self.crash_on_go => return Ok(()),
                "go" if line.contains("perft") => {
                    let (moves, count) = self.perft.clone().unwrap_or_default();
                    out.extend(moves.iter().map(|m| format!("{m}: 1")));
                    out.push(String::new());
                    out.push(format!("Nodes searched: {count}"));
                }
                "go" if self.endless_line_on_go => loop {
                    // Ends when the client closes the pipe.
                    writer.write_all(&[b'0'; 4096]).await?;
                },
                "go" if self.stall_after_go => pending = true,
                "go" if line.split_whitespace().any(|w| w == "ponder") => pondering = true,
                "go" => out = self.search_result(),
                "stop" if pending && self.answer_stop => {
                    pending = false;
                    out = self.search_result();
                }
                "ponderhit" | "stop" if pondering => {
                    pondering = false;
                    out = self.search_result();
                }
                "quit" => return Ok(()),
                _ => {}
            }
            for line in out {
                if self.garbage {
                    writer.write_all(b"%%% not uci %%%\n").await?;
                    writer
                        .write_all(b"info frobnicate 7 wibble wobble-wobble\n")
                        .await?;
                }
                if self.latin1 {
                    writer.write_all(b"info string caf\xe9\n").await?;
                }
                writer.write_all(format!("{line}\n").as_bytes()).await?;
            }
            writer.flush().await?;
        }
        Ok(())
    }
}

/// Connects a client to a fake: the fake is `config.command`'s flags.
pub async fn connect(
    config: &ChildConfig,
    label: &str,
    heard: &Heard,
) -> Result<Client, ChildError> {
    let pipe = Fake::parse(&config.command).start(heard.clone());
    let (reader, writer) = tokio::io::split(pipe);
    let writer = Recorder {
        inner: writer,
        heard: heard.clone(),
    };
    Client::over(config, label.to_owned(), Box::new(reader), Box::new(writer)).await
}

/// The client's end of the pipe, keeping what each write carried.
struct Recorder<W> {
    inner: W,
    heard: Heard,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Recorder<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = written
            && let Ok(mut writes) = self.heard.writes.lock()
        {
            writes.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// For a pool: every child not built in is a fake, heard by `heard`.
pub fn fakes(heard: &Heard) -> Connect {
    let heard = heard.clone();
    Arc::new(move |config: ChildConfig, label: String| -> Connecting {
        let heard = heard.clone();
        Box::pin(async move { connect(&config, &label, &heard).await })
    })
}
