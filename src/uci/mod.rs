//! The GUI side: what mpcmc reads on stdin and writes on stdout.

pub mod codec;
