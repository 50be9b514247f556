//! The child pool the options ask for, assembled ([`PoolRequest::config`]):
//! the evaluator's and the opponent's processes (one set for both roles
//! when they are the same), the `Workers` groups with their Slurm steps and
//! remote entries, each child's options (its share of `Hash`, its threads,
//! `UCI_Chess960`, `UCI_ShowWDL`, the tablebases, the user's own options
//! last). The GUI side fills a [`PoolRequest`] from its options and names
//! the option a [`BadPoolValue`] came from.

use mpcmc_protocol::game::Rules;
use shakmaty::CastlingMode;

use crate::{
    children::{
        ChildConfig, PoolConfig,
        command::{WorkerEntry, parse_workers},
        inprocess::is_builtin,
        pool::WorkerGroup,
        slurm::{self, Allocation},
    },
    mpc::Role,
};

/// What the pool is assembled from: the options that shape it, with the
/// machine's limits already applied.
#[derive(Debug, Clone, Copy)]
pub struct PoolRequest<'a> {
    /// `Evaluator`, `EvaluatorOptions`, `Opponent`, `OpponentOptions`,
    /// `Workers`, as the user gave them.
    pub evaluator: &'a str,
    pub evaluator_options: &'a str,
    pub opponent: &'a str,
    pub opponent_options: &'a str,
    pub workers: &'a str,
    /// `Hash` as this machine can hold it, MB: all of it for the root
    /// child, split over the others.
    pub hash_mb: u32,
    /// `Threads` as this machine's cores allow: the root child's threads.
    pub cores: u32,
    /// Every other child's threads (`ChildThreads`, resolved).
    pub threads_per_child: u32,
    /// How many child searches run at once.
    pub search_slots: usize,
    pub castling: CastlingMode,
    pub variant: Rules,
    /// `UCI_Chess960`, `UCI_ShowWDL`, `SyzygyPath`, `Syzygy50MoveRule`,
    /// passed on to every child.
    pub chess960: bool,
    pub show_wdl: bool,
    pub syzygy_path: &'a str,
    pub syzygy_50_move_rule: bool,
}

/// An option's value the pool cannot be assembled from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPoolValue {
    /// The option it came from (`Workers`, `EvaluatorOptions`, …).
    pub option: &'static str,
    pub value: String,
    /// What would have been usable.
    pub expected: String,
}

impl PoolRequest<'_> {
    /// The pool asked for. An empty `Opponent` means
    /// the evaluator's command; an empty `OpponentOptions` then means the
    /// evaluator's options too, so one set of processes serves both roles.
    ///
    /// `Hash` is the whole hash memory, as GUIs and tournament rules mean it:
    /// it is split evenly over the child processes (`Threads` of them when
    /// the roles share processes, twice that when they do not), at least
    /// 1 MB each.
    pub fn config(&self) -> Result<PoolConfig, BadPoolValue> {
        let config = |hash| -> Result<PoolConfig, BadPoolValue> {
            if !self.workers.trim().is_empty() {
                return self.worker_groups(hash);
            }
            let evaluator = self.child_config(
                self.evaluator,
                self.evaluator_options,
                "EvaluatorOptions",
                (hash, self.threads_per_child),
            )?;
            let opponent =
                if self.opponent.trim().is_empty() && self.opponent_options.trim().is_empty() {
                    evaluator.clone()
                } else {
                    let command = if self.opponent.trim().is_empty() {
                        self.evaluator
                    } else {
                        self.opponent
                    };
                    self.child_config(
                        command,
                        self.opponent_options,
                        "OpponentOptions",
                        (hash, self.threads_per_child),
                    )?
                };
            Ok(PoolConfig::new(evaluator, opponent, self.search_slots))
        };
        let hash = self.hash_mb;
        let whole = config(hash)?;
        // The root child has the machine's `Hash` to itself; the others
        // share it.
        let processes = whole
            .groups
            .iter()
            .filter(|g| !g.root)
            .map(WorkerGroup::processes)
            .sum::<usize>()
            .max(1) as u32;
        config((hash / processes).max(1))
    }

    /// The pool `Workers` describes: a group an entry, its children
    /// configured as `Evaluator`'s and `Opponent`'s would be (an entry for
    /// both roles has one child for both unless `OpponentOptions` is set).
    /// The root entry's child gets `Threads` threads and the whole `Hash`
    /// (the main machine); the others `ChildThreads` and `hash` each. When
    /// an entry runs on another machine (`ssh`) and none is `root:`,
    /// `Evaluator` on this machine is the root entry.
    fn worker_groups(&self, hash: u32) -> Result<PoolConfig, BadPoolValue> {
        let mut entries = parse_workers(self.workers).map_err(|e| BadPoolValue {
            option: "Workers",
            value: self.workers.to_owned(),
            expected: format!("usable: {e}"),
        })?;
        if !entries.iter().any(|e| e.root) && entries.iter().any(WorkerEntry::is_remote) {
            entries.insert(
                0,
                WorkerEntry {
                    role: Some(Role::Evaluator),
                    root: true,
                    command: self.evaluator.to_owned(),
                    slots: 1,
                },
            );
        }
        let entries = self.slurm_steps(entries)?;
        let groups = entries
            .iter()
            .map(|e| {
                let (hash, threads) = if e.root {
                    (self.hash_mb, self.cores)
                } else {
                    (hash, self.threads_per_child)
                };
                let evaluator = (e.role != Some(Role::Opponent))
                    .then(|| {
                        self.child_config(
                            &e.command,
                            self.evaluator_options,
                            "EvaluatorOptions",
                            (hash, threads),
                        )
                    })
                    .transpose()?;
                let opponent = match (e.role, &evaluator) {
                    (Some(Role::Evaluator), _) => None,
                    (None, Some(shared)) if self.opponent_options.trim().is_empty() => {
                        Some(shared.clone())
                    }
                    _ => Some(self.child_config(
                        &e.command,
                        self.opponent_options,
                        "OpponentOptions",
                        (hash, threads),
                    )?),
                };
                Ok(WorkerGroup {
                    evaluator,
                    opponent,
                    slots: e.slots,
                    root: e.root,
                })
            })
            .collect::<Result<_, BadPoolValue>>()?;
        Ok(PoolConfig { groups })
    }

    /// Each `slurm` entry as the job steps its allocation has room for
    /// ([`Allocation::steps`]): a child per `ChildThreads` CPUs, less the
    /// root search's `Threads` on this machine's node. Outside an
    /// allocation the value is not usable.
    fn slurm_steps(&self, entries: Vec<WorkerEntry>) -> Result<Vec<WorkerEntry>, BadPoolValue> {
        let mut steps = Vec::with_capacity(entries.len());
        let threads = self.threads_per_child as usize;
        let here = (slurm::this_host(), self.cores as usize);
        for e in entries {
            let Some(command) = e.slurm_command() else {
                steps.push(e);
                continue;
            };
            let command = if is_builtin(command) {
                slurm::builtin_command()
            } else {
                command.to_owned()
            };
            let planned = Allocation::from_env()
                .and_then(|a| a.steps(&command, threads, here))
                .map_err(|why| BadPoolValue {
                    option: "Workers",
                    value: self.workers.to_owned(),
                    expected: format!("usable here: {why}"),
                })?;
            steps.extend(planned.into_iter().map(|(command, slots)| WorkerEntry {
                role: e.role,
                root: false,
                command,
                slots,
            }));
        }
        Ok(steps)
    }

    /// One child's options: `hash_mb` is its share of `Hash`, `threads`
    /// its search threads (`ChildThreads`, or the root child's `Threads`).
    fn child_config(
        &self,
        command: &str,
        extra: &str,
        option: &'static str,
        (hash_mb, threads): (u32, u32),
    ) -> Result<ChildConfig, BadPoolValue> {
        // The user's own options come last and win.
        let mut options = vec![
            ("Threads".to_owned(), threads.to_string()),
            ("Hash".to_owned(), hash_mb.to_string()),
        ];
        if self.chess960 {
            options.push(("UCI_Chess960".to_owned(), "true".to_owned()));
        }
        if self.show_wdl {
            options.push(("UCI_ShowWDL".to_owned(), "true".to_owned()));
        }
        // Children probe the tables in their own searches (the built-in
        // one too); mpcmc answers the positions they hold itself.
        if !self.syzygy_path.trim().is_empty() {
            options.push(("SyzygyPath".to_owned(), self.syzygy_path.trim().to_owned()));
            let rule = if self.syzygy_50_move_rule {
                "true"
            } else {
                "false"
            };
            options.push(("Syzygy50MoveRule".to_owned(), rule.to_owned()));
        }
        options.extend(parse_child_options(extra).map_err(|reason| BadPoolValue {
            option,
            value: extra.to_owned(),
            expected: reason,
        })?);
        Ok(ChildConfig {
            command: command.trim().to_owned(),
            options,
            castling: self.castling,
            variant: self.variant,
            // Set by `pool_config` once the whole configuration is known.
            clear_hash: false,
        })
    }
}

/// Parses `Name=Value;Name=Value` (spaces around names and values ignored).
pub fn parse_child_options(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(';')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| match part.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => {
                Ok((name.trim().to_owned(), value.trim().to_owned()))
            }
            _ => Err(format!(
                "a list of Name=Value separated by ';' (at '{part}')"
            )),
        })
        .collect()
}
