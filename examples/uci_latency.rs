//! Measures how fast mpcmc answers `isready` mid-search and `stop` during
//! `go infinite`, as a GUI sees it (pipes included).
//!
//! cargo build --release && cargo run --release --example uci_latency -- \
//!     [path/to/mpcmc] [rounds] [-- extra mpcmc flags]

use std::{
    io::{BufRead, BufReader, Write},
    process::{Command, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let binary = args
        .first()
        .cloned()
        .unwrap_or_else(|| "target/release/mpcmc".into());
    let rounds: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(20);
    let flags: Vec<&String> = args.iter().skip(2).filter(|a| *a != "--").collect();
    let mut child = Command::new(&binary)
        .args(&flags)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel::<(Instant, String)>();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let wait_for = |prefix: &str| -> Result<Instant, Box<dyn std::error::Error>> {
        loop {
            let (at, line) = rx.recv_timeout(Duration::from_secs(30))?;
            if line.starts_with(prefix) {
                return Ok(at);
            }
        }
    };
    writeln!(stdin, "uci")?;
    wait_for("uciok")?;
    writeln!(stdin, "isready")?;
    wait_for("readyok")?;
    let (mut ready, mut stop) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        writeln!(stdin, "position startpos")?;
        writeln!(stdin, "go infinite")?;
        thread::sleep(Duration::from_millis(100 + 37 * (round as u64 % 7)));
        let asked = Instant::now();
        writeln!(stdin, "isready")?;
        stdin.flush()?;
        ready.push(wait_for("readyok")? - asked);
        let asked = Instant::now();
        writeln!(stdin, "stop")?;
        stdin.flush()?;
        stop.push(wait_for("bestmove")? - asked);
    }
    writeln!(stdin, "quit")?;
    child.wait()?;
    for (name, mut v) in [
        ("isready mid-search -> readyok", ready),
        ("stop -> bestmove", stop),
    ] {
        v.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{name}: median {:.2} ms, max {:.2} ms over {} rounds",
            ms(v[v.len() / 2]),
            ms(v[v.len() - 1]),
            v.len()
        );
    }
    Ok(())
}
