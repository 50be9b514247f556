//! The GUI side: what mpcmc reads on stdin and writes on stdout.
// What faces the wire never panics on what comes over it.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod builtin_go;
pub mod options;
pub mod search;
pub mod session;
pub mod time;
