//! The one writer of stdout.
//!
//! A thread owns stdout and writes whole lines in the order they were sent,
//! flushing each (`writeln!`, never `println!`, which panics when the GUI has
//! closed the pipe). Everything else holds a cheap [`Output`] handle.

use std::{
    io::Write,
    sync::mpsc,
    thread::{self, JoinHandle},
};

/// A handle to send UCI lines to the GUI.
#[derive(Clone)]
pub struct Output {
    lines: mpsc::Sender<String>,
}

impl Output {
    /// Starts the writer thread over `sink` (stdout in the binary). The thread
    /// ends when every handle is dropped.
    pub fn start<W: Write + Send + 'static>(
        mut sink: W,
    ) -> std::io::Result<(Output, JoinHandle<()>)> {
        let (lines, rx) = mpsc::channel::<String>();
        let writer = thread::Builder::new()
            .name("stdout-writer".into())
            .spawn(move || {
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
        Ok((Output { lines }, writer))
    }

    pub fn line(&self, line: impl Into<String>) {
        let _ = self.lines.send(line.into());
    }

    /// `info string …`: diagnostics a GUI shows and logs.
    pub fn info_string(&self, text: impl std::fmt::Display) {
        self.line(format!("info string {text}"));
    }
}
