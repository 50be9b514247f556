//! The GUI side: what mpcmc reads on stdin and writes on stdout.

pub mod codec;
pub mod options;
pub mod output;
pub mod search;
pub mod session;
pub mod time;
