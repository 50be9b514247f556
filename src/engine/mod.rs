//! The child side: starting child engine processes, talking UCI to them, and
//! pooling them for the decision core.

pub mod client;
pub mod command;
pub mod pool;

pub use client::{ChildConfig, ChildError, Client};
pub use command::{EngineCommand, find_stockfish};
pub use pool::{Pool, PoolConfig};
