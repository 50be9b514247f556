//! A fake UCI engine for fault injection in the child-side tests.
//!
//! It speaks just enough UCI to be driven by `engine::Client` and answers every
//! `go` with one fixed move; it never plays chess. Flags make it misbehave the
//! way real children do:
//!
//! - `--crash-on-go`: exit with status 3 on `go`, printing nothing;
//! - `--stall-after-go`: never answer `go`; with `--answer-stop`, a `stop`
//!   then gets the `bestmove`;
//! - `--stall-on-uci`: never send `uciok`;
//! - `--garbage`: print a non-UCI line and an `info` of unknown tokens before
//!   every real line;
//! - `--illegal-bestmove`: answer `bestmove a1a1`;
//! - `--none-bestmove`: answer `bestmove (none)`;
//! - `--deaf-after-go`: on `go`, ignore SIGTERM and never read stdin again
//!   (a hung child that only SIGKILL ends);
//! - `--slow-start=<ms>`: wait that long before `uciok`;
//! - `--move=<uci>`: the move to answer (default `e2e4`);
//! - `--echo-to=<path>`: append every line received to that file.
//!
//! Only std (and libc on Linux, to ignore SIGTERM): it is built as a `[[bin]]`
//! of the crate for the tests.

use std::{
    fs::{File, OpenOptions},
    io::{self, BufRead, Write},
    process::ExitCode,
};

#[derive(Default)]
struct Flags {
    crash_on_go: bool,
    stall_after_go: bool,
    answer_stop: bool,
    stall_on_uci: bool,
    garbage: bool,
    illegal_bestmove: bool,
    none_bestmove: bool,
    deaf_after_go: bool,
    slow_start: Option<u64>,
    best: Option<String>,
    echo_to: Option<String>,
}

impl Flags {
    fn parse() -> Result<Flags, String> {
        let mut flags = Flags::default();
        for arg in std::env::args().skip(1) {
            match arg.as_str() {
                "--crash-on-go" => flags.crash_on_go = true,
                "--stall-after-go" => flags.stall_after_go = true,
                "--answer-stop" => flags.answer_stop = true,
                "--stall-on-uci" => flags.stall_on_uci = true,
                "--garbage" => flags.garbage = true,
                "--illegal-bestmove" => flags.illegal_bestmove = true,
                "--none-bestmove" => flags.none_bestmove = true,
                "--deaf-after-go" => flags.deaf_after_go = true,
                _ => {
                    if let Some(ms) = arg.strip_prefix("--slow-start=") {
                        flags.slow_start = Some(ms.parse().map_err(|_| format!("bad '{arg}'"))?);
                    } else if let Some(m) = arg.strip_prefix("--move=") {
                        flags.best = Some(m.to_owned());
                    } else if let Some(path) = arg.strip_prefix("--echo-to=") {
                        flags.echo_to = Some(path.to_owned());
                    } else {
                        return Err(format!("unknown argument '{arg}'"));
                    }
                }
            }
        }
        Ok(flags)
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
}

/// The engine's side of stdout: every real line, garbage first when asked.
struct Out {
    stdout: io::Stdout,
    garbage: bool,
}

impl Out {
    fn line(&mut self, line: &str) -> io::Result<()> {
        let mut out = self.stdout.lock();
        if self.garbage {
            writeln!(out, "%%% not uci %%%")?;
            writeln!(out, "info frobnicate 7 wibble wobble-wobble")?;
        }
        writeln!(out, "{line}")?;
        out.flush()
    }

    fn search_result(&mut self, best: &str) -> io::Result<()> {
        if best != "(none)" {
            self.line(&format!("info depth 1 score cp 10 nodes 1 pv {best}"))?;
        }
        self.line(&format!("bestmove {best}"))
    }
}

fn main() -> ExitCode {
    let flags = match Flags::parse() {
        Ok(flags) => flags,
        Err(e) => {
            eprintln!("mpcmc-fake-engine: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&flags) {
        Ok(code) => code,
        // The reader closed the pipe: nothing left to talk to.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpcmc-fake-engine: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(flags: &Flags) -> io::Result<ExitCode> {
    let mut echo: Option<File> = match &flags.echo_to {
        Some(path) => Some(OpenOptions::new().create(true).append(true).open(path)?),
        None => None,
    };
    let mut out = Out {
        stdout: io::stdout(),
        garbage: flags.garbage,
    };
    // A `go` left unanswered (stall mode), waiting for `stop`.
    let mut pending = false;
    for line in io::stdin().lock().lines() {
        let line = line?;
        if let Some(file) = echo.as_mut() {
            // One write per line, so lines from several processes appending to
            // the same file do not interleave.
            file.write_all(format!("{line}\n").as_bytes())?;
            file.flush()?;
        }
        let verb = line.split_whitespace().next().unwrap_or("");
        match verb {
            "uci" => {
                out.line("id name fake-engine")?;
                out.line("id author mpcmc tests")?;
                out.line("option name Hash type spin default 16 min 1 max 1024")?;
                out.line("option name Threads type spin default 1 min 1 max 1")?;
                if let Some(ms) = flags.slow_start {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                }
                if !flags.stall_on_uci {
                    out.line("uciok")?;
                }
            }
            "isready" => out.line("readyok")?,
            "ucinewgame" | "setoption" | "position" | "debug" => {}
            "go" => {
                if flags.crash_on_go {
                    return Ok(ExitCode::from(3));
                }
                if flags.deaf_after_go {
                    ignore_sigterm();
                    loop {
                        std::thread::sleep(std::time::Duration::from_secs(3600));
                    }
                }
                if flags.stall_after_go {
                    pending = true;
                } else {
                    out.search_result(flags.answer())?;
                }
            }
            "stop" if pending && flags.answer_stop => {
                pending = false;
                out.search_result(flags.answer())?;
            }
            "quit" => return Ok(ExitCode::SUCCESS),
            _ => {}
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(target_os = "linux")]
fn ignore_sigterm() {
    // SAFETY: installs the "ignore" disposition; no handler code runs.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
    }
}

#[cfg(not(target_os = "linux"))]
fn ignore_sigterm() {}
