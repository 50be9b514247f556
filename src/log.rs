//! Diagnostics: tracing to stderr (warnings only) or to the `LogFile` (all of
//! it, with every line exchanged with the children). Never to stdout, which
//! carries UCI alone.

use std::{
    fs::{File, OpenOptions},
    io::{self, Write},
    sync::{Mutex, OnceLock},
};

use tracing::level_filters::LevelFilter;
use tracing_subscriber::{Registry, fmt::MakeWriter, layer::SubscriberExt, reload};

static FILE: Mutex<Option<File>> = Mutex::new(None);
static LEVEL: OnceLock<reload::Handle<LevelFilter, Registry>> = OnceLock::new();

/// Installs the subscriber once; later calls do nothing.
pub fn init() {
    let (filter, handle) = reload::Layer::new(LevelFilter::WARN);
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(Sink)
        .with_ansi(false)
        .with_thread_names(true);
    let subscriber = tracing_subscriber::registry().with(filter).with(fmt);
    if tracing::subscriber::set_global_default(subscriber).is_ok() {
        let _ = LEVEL.set(handle);
    }
}

/// Sends diagnostics to `path` (appending), or back to stderr when empty.
pub fn set_file(path: &str) -> io::Result<()> {
    let file = if path.trim().is_empty() {
        None
    } else {
        Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path.trim())?,
        )
    };
    let level = if file.is_some() {
        LevelFilter::TRACE
    } else {
        LevelFilter::WARN
    };
    if let Ok(mut slot) = FILE.lock() {
        *slot = file;
    }
    if let Some(handle) = LEVEL.get() {
        let _ = handle.modify(|f| *f = level);
    }
    Ok(())
}

struct Sink;

/// Writes one event to the log file if there is one, else to stderr.
struct SinkWriter;

impl Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match FILE.lock() {
            Ok(mut slot) => match slot.as_mut() {
                Some(file) => file.write(buf),
                None => io::stderr().write(buf),
            },
            Err(_) => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match FILE.lock() {
            Ok(mut slot) => match slot.as_mut() {
                Some(file) => file.flush(),
                None => io::stderr().flush(),
            },
            Err(_) => Ok(()),
        }
    }
}

impl<'a> MakeWriter<'a> for Sink {
    type Writer = SinkWriter;
    fn make_writer(&'a self) -> SinkWriter {
        SinkWriter
    }
}
