//! The GUI side: the meta-engine's answers to a GUI's session ([`meta`]),
//! one `go` of it ([`search`]), its options and its clock.
// What faces the wire never panics on what comes over it.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod carry;
pub mod lateness;
pub mod meta;
pub mod options;
pub mod pane;
pub mod search;
pub mod trace;
