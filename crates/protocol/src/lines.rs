//! Reading UCI lines off a byte stream, both directions: bounded, and
//! lenient about encoding.
//!
//! A UCI line is short: the longest a real engine prints is an `info` with
//! a long `pv` or an `option` with many `var`s, a few kilobytes. A peer
//! that prints more than [`MAX_LINE`] bytes without a newline is not
//! speaking UCI (`cat /dev/zero` as a child engine would otherwise grow
//! one buffer until the allocator aborts), so a reader hands back
//! [`Split::Overlong`] once and skips the rest of that line. Bytes that are
//! not UTF-8 (a Latin-1 path in an engine's `info string`) are replaced,
//! never an error. A trailing `\r` is dropped (Windows engines).
//!
//! [`Splitter`] holds the line being read between reads, so
//! [`next_line_async`] is cancel-safe: a read cut short by a deadline loses
//! nothing, and the next call goes on where it stopped.

use std::io::BufRead;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line read, in bytes, without its newline: 64 KiB.
pub const MAX_LINE: usize = 64 * 1024;

/// What one read of a line gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split {
    /// A whole line, without its `\n` (and `\r`), invalid UTF-8 replaced.
    Line(String),
    /// A line passed [`MAX_LINE`] bytes; the rest of it, up to its newline,
    /// is skipped.
    Overlong,
}

/// The line being read, kept between reads.
#[derive(Debug, Default)]
pub struct Splitter {
    partial: Vec<u8>,
    /// Within an overlong line already reported: bytes are dropped up to
    /// the next newline.
    skipping: bool,
}

impl Splitter {
    pub fn new() -> Splitter {
        Splitter::default()
    }

    /// Takes bytes from the front of `buf`: how many it consumed, and what
    /// it finished (a line, or the news that the line is overlong).
    pub fn feed(&mut self, buf: &[u8]) -> (usize, Option<Split>) {
        let newline = buf.iter().position(|&b| b == b'\n');
        let end = newline.unwrap_or(buf.len());
        if self.skipping {
            let consumed = newline.map_or(buf.len(), |n| n + 1);
            self.skipping = newline.is_none();
            return (consumed, None);
        }
        if self.partial.len() + end > MAX_LINE {
            // Report it now, without waiting for a newline that may never come.
            self.partial.clear();
            self.skipping = newline.is_none();
            return (newline.map_or(buf.len(), |n| n + 1), Some(Split::Overlong));
        }
        self.partial.extend_from_slice(&buf[..end]);
        match newline {
            Some(n) => (n + 1, Some(self.take())),
            None => (buf.len(), None),
        }
    }

    /// One read's bytes, `buf` (empty: the end of the stream): how many it
    /// consumed, and `Some` when the read is done — with what it finished,
    /// or `None` at the end of the stream.
    fn step(&mut self, buf: &[u8]) -> (usize, Option<Option<Split>>) {
        if buf.is_empty() {
            return (0, Some(self.finish()));
        }
        let (consumed, split) = self.feed(buf);
        (consumed, split.map(Some))
    }

    /// At the end of the stream: the last line when it had no newline.
    pub fn finish(&mut self) -> Option<Split> {
        self.skipping = false;
        (!self.partial.is_empty()).then(|| self.take())
    }

    fn take(&mut self) -> Split {
        let mut bytes = std::mem::take(&mut self.partial);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        Split::Line(match String::from_utf8(bytes) {
            Ok(line) => line,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }
}

/// The next line of `input`; `None` at the end of the stream. Cancel-safe
/// (what was read is kept in `splitter`).
pub async fn next_line_async<R: AsyncBufRead + Unpin>(
    input: &mut R,
    splitter: &mut Splitter,
) -> std::io::Result<Option<Split>> {
    loop {
        let (consumed, done) = splitter.step(input.fill_buf().await?);
        input.consume(consumed);
        if let Some(line) = done {
            return Ok(line);
        }
    }
}

/// [`next_line_async`] for a blocking reader (the GUI's stdin thread).
pub fn next_line<R: BufRead>(
    input: &mut R,
    splitter: &mut Splitter,
) -> std::io::Result<Option<Split>> {
    loop {
        let (consumed, done) = splitter.step(input.fill_buf()?);
        input.consume(consumed);
        if let Some(line) = done {
            return Ok(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(bytes: &[u8], chunk: usize) -> Vec<Split> {
        let mut input = std::io::BufReader::with_capacity(chunk, bytes);
        let mut splitter = Splitter::new();
        let mut out = Vec::new();
        while let Some(split) = next_line(&mut input, &mut splitter).expect("in memory") {
            out.push(split);
        }
        out
    }

    fn line(s: &str) -> Split {
        Split::Line(s.to_owned())
    }

    #[test]
    fn lines_are_split_at_newlines_whatever_the_reads() {
        let bytes = b"uciok\r\nreadyok\n\nbestmove e2e4";
        for chunk in [1, 2, 3, 7, 64] {
            assert_eq!(
                all(bytes, chunk),
                vec![
                    line("uciok"),
                    line("readyok"),
                    line(""),
                    line("bestmove e2e4")
                ],
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn latin1_is_replaced_not_an_error() {
        let out = all(b"info string caf\xe9\nreadyok\n", 8);
        assert_eq!(out, vec![line("info string caf\u{fffd}"), line("readyok")]);
    }

    #[test]
    fn an_overlong_line_is_reported_once_and_skipped() {
        let mut bytes = vec![b'x'; 3 * MAX_LINE];
        bytes.extend_from_slice(b"\nreadyok\n");
        for chunk in [1000, MAX_LINE, 4 * MAX_LINE] {
            assert_eq!(
                all(&bytes, chunk),
                vec![Split::Overlong, line("readyok")],
                "chunk {chunk}"
            );
        }
        // A line of exactly the bound is a line.
        let mut bytes = vec![b'y'; MAX_LINE];
        bytes.push(b'\n');
        assert_eq!(all(&bytes, 4096), vec![line(&"y".repeat(MAX_LINE))]);
    }

    #[test]
    fn an_endless_line_is_reported_without_reading_to_its_end() {
        // `cat /dev/zero`: no newline ever. The report comes after about
        // the bound, not at the end of the stream.
        let mut zeros = std::io::BufReader::with_capacity(4096, std::io::repeat(0));
        let mut splitter = Splitter::new();
        assert_eq!(
            next_line(&mut zeros, &mut splitter).expect("in memory"),
            Some(Split::Overlong)
        );
    }

    #[tokio::test]
    async fn a_cancelled_read_loses_nothing() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut input = tokio::io::BufReader::new(rx);
        let mut splitter = Splitter::new();
        use tokio::io::AsyncWriteExt;
        tx.write_all(b"info depth ").await.expect("pipe");
        let cut = tokio::time::timeout(
            std::time::Duration::from_millis(20),
            next_line_async(&mut input, &mut splitter),
        )
        .await;
        assert!(cut.is_err(), "no newline yet");
        tx.write_all(b"3\n").await.expect("pipe");
        let read = next_line_async(&mut input, &mut splitter)
            .await
            .expect("pipe");
        assert_eq!(read, Some(line("info depth 3")));
    }
}
