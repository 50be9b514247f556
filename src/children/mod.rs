//! The child side: starting child engine processes, talking UCI to them, and
//! pooling them for the decision core.
// What faces the wire never panics on what comes over it.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod assembly;
pub mod client;
pub mod command;
pub mod error;
#[cfg(test)]
mod fake;
pub mod group;
pub mod inprocess;
pub mod pool;
pub mod process;
pub mod rules;
pub mod simulated;
pub mod slurm;
pub mod supervisor;
#[cfg(test)]
mod tests;

pub use client::{ChildConfig, Client};
pub use command::EngineCommand;
pub use error::{ChildError, SearchError};
pub use pool::{Pool, PoolConfig};
