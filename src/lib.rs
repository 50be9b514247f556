//! mpcmc: a chess meta-engine that plays by model predictive control over
//! other UCI engines (MPC-MC).
//!
//! - [`protocol`] is the UCI codec (the `mpcmc-protocol` crate).
//! - [`uci`] faces the GUI: options, time, the session.
//! - [`engine`] faces the children: processes, the UCI client, the pool.
//! - [`mpc`] is the decision logic, knowing children only through a trait.

pub mod bench;
pub mod engine;
pub mod log;
pub mod mpc;
pub mod uci;

/// The UCI codec ([`mpcmc_protocol`]), for examples and tests.
pub use mpcmc_protocol as protocol;
