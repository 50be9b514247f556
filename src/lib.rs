//! mpcmc: a chess meta-engine that plays by model predictive control over
//! other UCI engines (MPC-MC).
//!
//! - [`protocol`] is the UCI codec (the `mpcmc-protocol` crate).
//! - [`uci`] faces the GUI: the meta-engine's answers to a session, options,
//!   time.
//! - [`children`] faces the child engines: processes, the UCI client, the
//!   built-in engine in process, the pool.
//! - [`mpc`] is the decision logic, knowing children only through a trait.
//! - [`book`] reads Polyglot opening books.

pub mod bench;
pub mod book;
pub mod children;
pub mod explain;
pub mod log;
pub mod mpc;
pub mod uci;

/// The UCI codec ([`mpcmc_protocol`]), for examples and tests.
pub use mpcmc_protocol as protocol;

#[cfg(test)]
mod tests {
    /// Inside this crate the arrows run one way (the crates under `crates/`
    /// are kept apart by cargo): the decision core knows neither the child
    /// side nor the GUI side, and the child side not the GUI side.
    #[test]
    fn modules_depend_one_way() {
        let rules = [
            ("src/mpc", ["children", "uci", "bench"]),
            ("src/children", ["uci", "bench", "mpc::lookahead"]),
        ];
        for (dir, forbidden) in rules {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            for entry in std::fs::read_dir(&dir).expect("source dir") {
                let path = entry.expect("entry").path();
                let text = std::fs::read_to_string(&path).expect("source");
                // Paths into this crate: `crate::x…`, and the insides of
                // `use crate::{…};` groups.
                let mut paths: Vec<&str> = text.split("crate::").skip(1).collect();
                for group in text.split("use crate::{").skip(1) {
                    paths.extend(group.split("};").next().unwrap_or("").split([',', '{']));
                }
                for path_text in paths {
                    let path_text = path_text.trim_start();
                    for f in forbidden {
                        assert!(
                            !path_text.starts_with(&format!("{f}::")),
                            "{} uses crate::{f}",
                            path.display()
                        );
                    }
                }
            }
        }
    }
}
