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
    /// side nor the GUI side, and the child side not the GUI side. Within
    /// them, files that one algorithm builds on do not reach back into it:
    /// a decision's vocabulary and the one-pass lookahead know nothing of
    /// the rounds built over them, and the trace nothing of the search
    /// that writes it.
    #[test]
    fn modules_depend_one_way() {
        let rules: [(&str, &[&str]); 6] = [
            ("src/mpc", &["children", "uci", "bench"]),
            ("src/children", &["uci", "bench", "mpc::lookahead"]),
            ("src/mpc/decision.rs", &["mpc::rounds", "mpc::lookahead"]),
            ("src/mpc/lookahead.rs", &["mpc::rounds"]),
            ("src/uci/trace.rs", &["uci::search"]),
            ("src/uci/carry.rs", &["uci::search", "uci::trace"]),
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for (place, forbidden) in rules {
            for path in rust_files(&root.join(place)) {
                let text = std::fs::read_to_string(&path).expect("source");
                for used in crate_paths(&text) {
                    for f in forbidden {
                        assert!(
                            !used.starts_with(&format!("{f}::")) && used != *f,
                            "{} uses crate::{used}",
                            path.display()
                        );
                    }
                }
            }
        }
    }

    /// The `.rs` files at `place` (a file, or a folder and its folders).
    fn rust_files(place: &std::path::Path) -> Vec<std::path::PathBuf> {
        if place.is_file() {
            return vec![place.to_path_buf()];
        }
        let mut files = Vec::new();
        for entry in std::fs::read_dir(place).expect("source dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                files.extend(rust_files(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
        files
    }

    /// Every path into this crate a file's code names, in full: `crate::a::b`
    /// as written, and each leaf of a `use crate::{a::{b, c::d}}` tree as
    /// `a::b`, `a::c::d` (comments are not code).
    fn crate_paths(text: &str) -> Vec<String> {
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join(" ");
        let mut paths = Vec::new();
        for after in code.split("crate::").skip(1) {
            if let Some(tree) = after.strip_prefix('{') {
                leaves("", tree, &mut paths);
            } else {
                let (head, rest) = after
                    .split_once(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or((after, ""));
                match (head.strip_suffix("::"), rest.starts_with('{')) {
                    (Some(prefix), true) => {
                        leaves(&format!("{prefix}::"), &rest[1..], &mut paths);
                    }
                    _ => paths.push(head.trim_end_matches(':').to_string()),
                }
            }
        }
        paths
    }

    /// The leaves of the use tree `tree` (after its `{`), each after
    /// `prefix`; returns what follows the tree's `}`.
    fn leaves<'a>(prefix: &str, mut tree: &'a str, out: &mut Vec<String>) -> &'a str {
        loop {
            tree = tree.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
            if let Some(rest) = tree.strip_prefix('}') {
                return rest;
            }
            let end = tree
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tree.len());
            let (item, rest) = tree.split_at(end);
            // `a as b` names `a`.
            let rest = match rest.trim_start().strip_prefix("as ") {
                Some(alias) => alias
                    .trim_start()
                    .trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'),
                None => rest,
            };
            match (item.strip_suffix("::"), rest.strip_prefix('{')) {
                (Some(head), Some(inner)) => {
                    tree = leaves(&format!("{prefix}{head}::"), inner, out);
                }
                _ => {
                    if !item.is_empty() {
                        out.push(format!("{prefix}{item}"));
                    }
                    tree = if item.is_empty() && !rest.is_empty() {
                        &rest[1..]
                    } else {
                        rest
                    };
                }
            }
            if tree.is_empty() {
                return tree;
            }
        }
    }

    #[test]
    fn use_trees_are_read_in_full() {
        let text = "use crate::{\n    children::{Pool, pool::WorkerGroup},\n    mpc::{self as m, lookahead::{CANCEL_GRACE}},\n};\n// crate::uci::x\nlet x = crate::mpc::rounds::Spread::default();";
        assert_eq!(
            crate_paths(text),
            [
                "children::Pool",
                "children::pool::WorkerGroup",
                "mpc::self",
                "mpc::lookahead::CANCEL_GRACE",
                "mpc::rounds::Spread::default",
            ]
        );
    }
}
