//! Children on a Slurm allocation: the `Workers` entry `slurm COMMAND` is
//! one child for every `ChildThreads` CPUs of the allocation mpcmc runs
//! in, each its own job step (`srun`) pinned to its node, started, limited
//! and cleaned up by the cluster's own software.
//!
//! The allocation is read from the environment Slurm sets (`salloc`,
//! `sbatch`): `SLURM_JOB_ID`, `SLURM_JOB_NODELIST` (a hostlist such as
//! `node[01-04,07]`) and `SLURM_JOB_CPUS_PER_NODE` (such as `32(x3),16`).
//!
//! The steps are started `--overlap`: measured on Slurm 22.05 with memory
//! accounting (`CR_CPU_Memory`), steps started plainly or `--exact` ran one
//! at a time (the first took the job's memory), `--overlap` side by side.
//! mpcmc itself keeps to the allocation's CPUs: one child per
//! `ChildThreads` CPUs, less the root search's `Threads` on the node mpcmc
//! runs on.

use std::{fmt::Write as _, sync::OnceLock};

/// The word that starts a `slurm` entry's command.
pub const WORD: &str = "slurm";

/// Why a `slurm` entry cannot start children.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlurmError {
    #[error(
        "a slurm entry needs a Slurm allocation and {0} is not set: run mpcmc inside salloc or sbatch"
    )]
    NoAllocation(&'static str),
    #[error("cannot read Slurm's {name}='{value}': {reason}")]
    Unreadable {
        name: &'static str,
        value: String,
        reason: String,
    },
    #[error(
        "the allocation has no {threads} CPUs for a child on any node (besides the root search's {reserved} on {here})"
    )]
    NoRoom {
        threads: usize,
        reserved: usize,
        here: String,
    },
}

/// One node of the allocation and the CPUs it has there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub cpus: usize,
}

/// The allocation mpcmc runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub job: String,
    pub nodes: Vec<Node>,
}

impl Allocation {
    /// The allocation of this process's environment, read once (the pool's
    /// configuration is made at every `go`; the environment does not
    /// change).
    pub fn from_env() -> Result<Allocation, SlurmError> {
        static HERE: OnceLock<Result<Allocation, SlurmError>> = OnceLock::new();
        HERE.get_or_init(|| Allocation::from_vars(|name| std::env::var(name).ok()))
            .clone()
    }

    /// The allocation `var` describes (an environment variable's value by
    /// its name).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Allocation, SlurmError> {
        let either = |name: &'static str, old: &str| {
            var(name)
                .or_else(|| var(old))
                .filter(|v| !v.trim().is_empty())
                .ok_or(SlurmError::NoAllocation(name))
        };
        let job = either("SLURM_JOB_ID", "SLURM_JOBID")?;
        let list = either("SLURM_JOB_NODELIST", "SLURM_NODELIST")?;
        let cpus = var("SLURM_JOB_CPUS_PER_NODE")
            .filter(|v| !v.trim().is_empty())
            .ok_or(SlurmError::NoAllocation("SLURM_JOB_CPUS_PER_NODE"))?;
        let names = expand_hostlist(&list).map_err(|reason| SlurmError::Unreadable {
            name: "SLURM_JOB_NODELIST",
            value: list.clone(),
            reason,
        })?;
        let counts = expand_counts(&cpus).map_err(|reason| SlurmError::Unreadable {
            name: "SLURM_JOB_CPUS_PER_NODE",
            value: cpus.clone(),
            reason,
        })?;
        if names.len() != counts.len() {
            return Err(SlurmError::Unreadable {
                name: "SLURM_JOB_CPUS_PER_NODE",
                value: cpus,
                reason: format!("{} counts for {} nodes ({list})", counts.len(), names.len()),
            });
        }
        Ok(Allocation {
            job: job.trim().to_owned(),
            nodes: names
                .into_iter()
                .zip(counts)
                .map(|(name, cpus)| Node { name, cpus })
                .collect(),
        })
    }

    /// The children of a `slurm` entry running `command` (a command line),
    /// each searching with `threads` threads: for every node with room, a
    /// job step's command line and how many of them run there. On the
    /// node named `here` (this machine), `reserved` CPUs stay with the
    /// root search.
    pub fn steps(
        &self,
        command: &str,
        threads: usize,
        (here, reserved): (&str, usize),
    ) -> Result<Vec<(String, usize)>, SlurmError> {
        let threads = threads.max(1);
        let steps: Vec<(String, usize)> = self
            .nodes
            .iter()
            .filter_map(|node| {
                let taken = if short(&node.name) == short(here) {
                    reserved
                } else {
                    0
                };
                let slots = node.cpus.saturating_sub(taken) / threads;
                (slots > 0).then(|| (step_command(&node.name, threads, command), slots))
            })
            .collect();
        if steps.is_empty() {
            return Err(SlurmError::NoRoom {
                threads,
                reserved,
                here: here.to_owned(),
            });
        }
        Ok(steps)
    }
}

/// A job step of `threads` CPUs on `node` running `command`. `--verbose`:
/// srun names the step it launches and says how its task ended, on its
/// stderr, which the child's log keeps (a step Slurm ended is named there).
fn step_command(node: &str, threads: usize, command: &str) -> String {
    let mut line = String::from("srun --verbose --nodes=1 --ntasks=1");
    let _ = write!(
        line,
        " --cpus-per-task={threads} --overlap --nodelist={node} --job-name=mpcmc-child {command}"
    );
    line
}

/// A host name without its domain.
fn short(host: &str) -> &str {
    host.split('.').next().unwrap_or(host)
}

/// The built-in engine alone (`mpcmc engine`) as a step's command line:
/// this program, where it is (a cluster's nodes share the file system).
pub fn builtin_command() -> String {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "mpcmc".to_owned());
    format!("'{}' engine", exe.replace('\'', r"'\''"))
}

/// This machine's host name (Linux), else empty; read once.
pub fn this_host() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_default()
    })
}

/// The most hosts a hostlist may name.
const MAX_HOSTS: usize = 100_000;

/// Expands a Slurm hostlist, as `scontrol show hostnames` does:
/// `node[01-03,07],gpu5` is `node01 node02 node03 node07 gpu5`; several
/// bracket groups in one name (`r[1-2]n[1-2]`) multiply.
pub fn expand_hostlist(list: &str) -> Result<Vec<String>, String> {
    let mut hosts = Vec::new();
    for item in split_outside_brackets(list.trim())? {
        if item.is_empty() {
            return Err("an empty host name".to_owned());
        }
        let mut names = vec![String::new()];
        let mut rest = item;
        while let Some(open) = rest.find('[') {
            let close = rest[open..]
                .find(']')
                .map(|i| open + i)
                .ok_or_else(|| format!("an unclosed '[' in '{item}'"))?;
            let prefix = &rest[..open];
            let choices = expand_ranges(&rest[open + 1..close])?;
            if names.len().saturating_mul(choices.len()) > MAX_HOSTS {
                return Err(format!("more than {MAX_HOSTS} hosts"));
            }
            names = names
                .iter()
                .flat_map(|n| choices.iter().map(move |c| format!("{n}{prefix}{c}")))
                .collect();
            rest = &rest[close + 1..];
        }
        if rest.contains(']') {
            return Err(format!("a ']' without its '[' in '{item}'"));
        }
        hosts.extend(names.into_iter().map(|n| n + rest));
        if hosts.len() > MAX_HOSTS {
            return Err(format!("more than {MAX_HOSTS} hosts"));
        }
    }
    if hosts.is_empty() {
        return Err("no host".to_owned());
    }
    Ok(hosts)
}

/// `01-03,07` as `01 02 03 07` (the width of a zero-padded start kept).
fn expand_ranges(ranges: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for range in ranges.split(',') {
        let (from, to) = range.split_once('-').unwrap_or((range, range));
        let bad = || format!("'{range}' is not a number or a range of numbers");
        let (a, b) = (
            from.trim().parse::<u64>().map_err(|_| bad())?,
            to.trim().parse::<u64>().map_err(|_| bad())?,
        );
        if b < a || b - a >= 100_000 {
            return Err(bad());
        }
        let width = if from.trim().starts_with('0') {
            from.trim().len()
        } else {
            0
        };
        out.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Ok(out)
}

/// `list` split at the commas outside brackets.
fn split_outside_brackets(list: &str) -> Result<Vec<&str>, String> {
    let (mut parts, mut start, mut depth) = (Vec::new(), 0, 0usize);
    for (i, c) in list.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.checked_sub(1).ok_or("a ']' without its '['")?,
            ',' if depth == 0 => {
                parts.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(list[start..].trim());
    Ok(parts)
}

/// Slurm's CPU counts per node: `32(x3),16` is `32 32 32 16`.
pub fn expand_counts(counts: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in counts.trim().split(',') {
        let part = part.trim();
        let bad = || format!("'{part}' is not N or N(xM)");
        let (n, times) = match part.split_once("(x") {
            Some((n, times)) => (
                n,
                times
                    .strip_suffix(')')
                    .and_then(|t| t.parse::<usize>().ok())
                    .filter(|&t| t <= 100_000)
                    .ok_or_else(bad)?,
            ),
            None => (part, 1),
        };
        let n = n.parse::<usize>().map_err(|_| bad())?;
        out.extend(std::iter::repeat_n(n, times));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostlists_expand_as_slurm_expands_them() {
        let cases: [(&str, &[&str]); 6] = [
            ("vm", &["vm"]),
            ("node[01-03,07]", &["node01", "node02", "node03", "node07"]),
            ("node[1-2],gpu5", &["node1", "node2", "gpu5"]),
            ("a[8-10]", &["a8", "a9", "a10"]),
            ("r[1-2]n[01-02]", &["r1n01", "r1n02", "r2n01", "r2n02"]),
            ("node[1,3]-ib", &["node1-ib", "node3-ib"]),
        ];
        for (list, hosts) in cases {
            let hosts: Vec<String> = hosts.iter().map(|h| (*h).to_owned()).collect();
            assert_eq!(expand_hostlist(list), Ok(hosts), "{list}");
        }
        for bad in [
            "node[1-",
            "node[a-b]",
            "node]1",
            "",
            "node[3-1]",
            "a,,b",
            "r[0-99999]n[0-99999]",
        ] {
            assert!(expand_hostlist(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpu_counts_expand_as_slurm_writes_them() {
        assert_eq!(expand_counts("2"), Ok(vec![2]));
        assert_eq!(expand_counts("32(x3),16"), Ok(vec![32, 32, 32, 16]));
        for bad in ["", "x", "4(x", "4(xy)", "4(x2"] {
            assert!(expand_counts(bad).is_err(), "{bad}");
        }
    }

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn the_allocation_is_read_from_slurms_environment() {
        let allocation = Allocation::from_vars(vars(&[
            ("SLURM_JOB_ID", "42"),
            ("SLURM_JOB_NODELIST", "node[01-03]"),
            ("SLURM_JOB_CPUS_PER_NODE", "8(x2),4"),
        ]))
        .expect("an allocation");
        assert_eq!(allocation.job, "42");
        let cpus: Vec<usize> = allocation.nodes.iter().map(|n| n.cpus).collect();
        assert_eq!(cpus, [8, 8, 4]);
        // Two threads a child; the root search keeps 2 CPUs of node01,
        // where mpcmc runs.
        let steps = allocation
            .steps("/usr/games/stockfish", 2, ("node01.cluster", 2))
            .expect("steps");
        let slots: Vec<usize> = steps.iter().map(|s| s.1).collect();
        assert_eq!(slots, [3, 4, 2]);
        assert_eq!(
            steps[1].0,
            "srun --verbose --nodes=1 --ntasks=1 --cpus-per-task=2 --overlap \
             --nodelist=node02 --job-name=mpcmc-child /usr/games/stockfish"
        );
        // No room for a child of 16 threads.
        assert!(matches!(
            allocation.steps("x", 16, ("elsewhere", 1)),
            Err(SlurmError::NoRoom { .. })
        ));
        // Outside an allocation, or with what Slurm would not write.
        assert_eq!(
            Allocation::from_vars(vars(&[])),
            Err(SlurmError::NoAllocation("SLURM_JOB_ID"))
        );
        assert!(matches!(
            Allocation::from_vars(vars(&[
                ("SLURM_JOB_ID", "42"),
                ("SLURM_JOB_NODELIST", "node[01-03]"),
                ("SLURM_JOB_CPUS_PER_NODE", "8"),
            ])),
            Err(SlurmError::Unreadable { .. })
        ));
    }
}
