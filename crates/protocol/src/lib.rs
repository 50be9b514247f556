//! The UCI protocol for mpcmc: every line a GUI or an engine sends, parsed
//! and written back, over shakmaty types. It depends on nothing else of
//! mpcmc's: the built-in engine and the meta-engine both build on it.
// What faces the wire never panics on what comes over it.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod codec;
pub mod game;

pub use codec::*;
