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
            ("src/mpc/lookahead", &["mpc::rounds"]),
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

    /// No circle of imports between files, in this crate or the crates
    /// under `crates/`: a file's code (its tests aside) names items of
    /// other files by `crate::` and `super::` paths, an item re-exported by
    /// a `mod.rs` standing for the file that defines it; the files so
    /// linked must form no loop, so each can be read knowing only those
    /// below it. A folder's `mod.rs` (and a crate's root) is read first:
    /// the files in its folder may use what it defines.
    #[test]
    fn no_import_circle() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let circles: Vec<_> = ["src", "crates/protocol/src", "crates/builtin/src"]
            .into_iter()
            .flat_map(|src| {
                let graph = import_graph(&root.join(src));
                circles(&graph).into_iter().map(move |c| (src, c))
            })
            .collect();
        assert!(circles.is_empty(), "import circles: {circles:?}");
    }

    /// The module path of a source file under `src` (`mpc::budget` for
    /// `src/mpc/budget.rs`, `mpc` for `src/mpc/mod.rs`, `` for `lib.rs`).
    fn module_of(src: &std::path::Path, file: &std::path::Path) -> String {
        let rel = file
            .strip_prefix(src)
            .expect("under src")
            .with_extension("");
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        parts.join("::")
    }

    /// Whether module `m` is inside module `parent`.
    fn below(m: &str, parent: &str) -> bool {
        parent.is_empty() || m.starts_with(&format!("{parent}::"))
    }

    /// Every file's module and the modules its code uses, but for the
    /// modules below it.
    fn import_graph(
        src: &std::path::Path,
    ) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
        let files: Vec<_> = rust_files(src)
            .into_iter()
            .filter(|f| !f.ends_with("main.rs"))
            .map(|f| {
                let text = std::fs::read_to_string(&f).expect("source");
                let code = text
                    .split("\n#[cfg(test)]\nmod ")
                    .next()
                    .unwrap_or_default()
                    .lines()
                    .map(|l| l.split("//").next().unwrap_or(""))
                    .collect::<Vec<_>>()
                    .join(" ");
                (module_of(src, &f), code)
            })
            .collect();
        let modules: std::collections::BTreeSet<&str> =
            files.iter().map(|(m, _)| m.as_str()).collect();
        let join = |a: &str, b: &str| match a.is_empty() {
            true => b.to_string(),
            false => format!("{a}::{b}"),
        };
        // Items a `mod.rs` re-exports from a file below it.
        let mut reexports = std::collections::BTreeMap::new();
        for (module, code) in &files {
            for statement in code.split("pub use ").skip(1) {
                let statement = statement.split(';').next().unwrap_or_default();
                let mut leaves_of = Vec::new();
                leaves("", &format!("{statement}}}"), &mut leaves_of);
                for leaf in leaves_of {
                    let Some((child, _)) = leaf.split_once("::") else {
                        continue;
                    };
                    let target = join(module, child);
                    if modules.contains(target.as_str()) {
                        let name = leaf.rsplit("::").next().unwrap_or_default();
                        reexports.insert(join(module, name), target);
                    }
                }
            }
        }
        let resolve = |path: &str| -> Option<String> {
            if let Some(target) = reexports.get(path) {
                return Some(target.clone());
            }
            let mut prefix = path;
            loop {
                if modules.contains(prefix) {
                    return Some(prefix.to_string());
                }
                match prefix.rsplit_once("::") {
                    Some((head, _)) => prefix = head,
                    // An item of the crate's root file.
                    None => return modules.contains("").then(String::new),
                }
            }
        };
        let mut graph = std::collections::BTreeMap::new();
        for (module, code) in &files {
            let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
            let supers = code.split("super::").skip(1).map(|after| {
                let path: String = after.chars().take(200).collect();
                format!("crate::{}", join(parent, &path))
            });
            let text = format!("{code} {}", supers.collect::<Vec<_>>().join(" "));
            let used: std::collections::BTreeSet<String> = crate_paths(&text)
                .iter()
                .filter_map(|p| resolve(p))
                // A folder's `mod.rs` (or the crate's root) declares the
                // files below it and dispatches to them; they may use what
                // it defines, the folder's common vocabulary.
                .filter(|m| m != module && !below(m, module))
                .collect();
            graph.insert(module.clone(), used);
        }
        graph
    }

    /// The loops in `graph`: each strongly connected set of more than one
    /// module (Tarjan's algorithm).
    fn circles(
        graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    ) -> Vec<Vec<String>> {
        struct Walk<'a> {
            graph: &'a std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
            index: std::collections::BTreeMap<&'a str, (usize, usize)>,
            stack: Vec<&'a str>,
            on_stack: std::collections::BTreeSet<&'a str>,
            found: Vec<Vec<String>>,
        }
        impl<'a> Walk<'a> {
            fn visit(&mut self, v: &'a str) -> usize {
                let n = self.index.len();
                self.index.insert(v, (n, n));
                self.stack.push(v);
                self.on_stack.insert(v);
                let mut low = n;
                for w in self.graph.get(v).into_iter().flatten() {
                    let w = w.as_str();
                    match self.index.get(w) {
                        None if self.graph.contains_key(w) => low = low.min(self.visit(w)),
                        Some(&(i, _)) if self.on_stack.contains(w) => low = low.min(i),
                        _ => {}
                    }
                }
                if low == n {
                    let mut set = Vec::new();
                    while let Some(w) = self.stack.pop() {
                        self.on_stack.remove(w);
                        set.push(w.to_string());
                        if w == v {
                            break;
                        }
                    }
                    if set.len() > 1 {
                        set.sort();
                        self.found.push(set);
                    }
                }
                self.index.insert(v, (n, low));
                low
            }
        }
        let mut walk = Walk {
            graph,
            index: Default::default(),
            stack: Vec::new(),
            on_stack: Default::default(),
            found: Vec::new(),
        };
        for v in graph.keys() {
            if !walk.index.contains_key(v.as_str()) {
                walk.visit(v);
            }
        }
        walk.found
    }

    #[test]
    fn a_circle_is_found() {
        let graph = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
            .into_iter()
            .fold(std::collections::BTreeMap::new(), |mut g, (from, to)| {
                g.entry(from.to_string())
                    .or_insert_with(std::collections::BTreeSet::new)
                    .insert(to.to_string());
                g.entry(to.to_string()).or_default();
                g
            });
        assert_eq!(circles(&graph), [["a", "b", "c"]]);
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
                let end = after
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(after.len());
                let (head, rest) = after.split_at(end);
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
        let text = "use crate::{\n    children::{Pool, pool::WorkerGroup},\n    mpc::{self as m, lookahead::{CANCEL_GRACE}},\n};\n// crate::uci::x\nlet x = crate::mpc::rounds::Spread::default();\nuse crate::uci::{time::MoveClock, trace};";
        assert_eq!(
            crate_paths(text),
            [
                "children::Pool",
                "children::pool::WorkerGroup",
                "mpc::self",
                "mpc::lookahead::CANCEL_GRACE",
                "mpc::rounds::Spread::default",
                "uci::time::MoveClock",
                "uci::trace",
            ]
        );
    }
}
