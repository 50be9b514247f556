//! What the pool runs: its groups of alike workers.

use crate::{children::client::ChildConfig, mpc::Role};

/// What the pool runs: groups of alike workers (`Workers`; by default one
/// group serving both roles).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    pub groups: Vec<WorkerGroup>,
}

/// `slots` workers, each with one child for every role the group serves
/// (a single child for both when their configurations are the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerGroup {
    /// The child of each role (`None`: the group does not serve it).
    pub evaluator: Option<ChildConfig>,
    pub opponent: Option<ChildConfig>,
    /// Workers, each searching one call at a time.
    pub slots: usize,
    /// The root group (`root:`): its one worker runs the evaluator's
    /// searches of the decision's root, and no lookahead call.
    pub root: bool,
}

impl WorkerGroup {
    /// A group serving both roles.
    pub fn both(evaluator: ChildConfig, opponent: ChildConfig, slots: usize) -> WorkerGroup {
        WorkerGroup {
            evaluator: Some(evaluator),
            opponent: Some(opponent),
            slots,
            root: false,
        }
    }

    /// The child configuration of `role`, if the group serves it.
    pub fn config(&self, role: Role) -> Option<&ChildConfig> {
        match role {
            Role::Evaluator => self.evaluator.as_ref(),
            Role::Opponent => self.opponent.as_ref(),
        }
    }

    pub fn serves(&self, role: Role) -> bool {
        self.config(role).is_some()
    }

    /// One child serves both roles when they are configured alike.
    pub fn shared_roles(&self) -> bool {
        self.evaluator.is_some() && self.evaluator == self.opponent
    }

    /// Children (processes or in-process engines) of all its workers.
    pub fn processes(&self) -> usize {
        self.slots * self.children()
    }

    /// Children (processes or in-process engines) of one worker.
    fn children(&self) -> usize {
        if self.shared_roles() {
            1
        } else {
            usize::from(self.evaluator.is_some()) + usize::from(self.opponent.is_some())
        }
    }
}

impl PoolConfig {
    /// `threads` workers serving both roles.
    pub fn new(evaluator: ChildConfig, opponent: ChildConfig, threads: usize) -> PoolConfig {
        PoolConfig {
            groups: vec![WorkerGroup::both(evaluator, opponent, threads.max(1))],
        }
    }

    /// Every worker's children serve both roles with one child.
    pub fn shared_roles(&self) -> bool {
        self.groups.iter().all(WorkerGroup::shared_roles)
    }

    /// Concurrent child searches (workers), at least one.
    pub fn threads(&self) -> usize {
        self.groups.iter().map(|g| g.slots).sum::<usize>().max(1)
    }

    /// Lookahead calls of each role that can run at once beside the root
    /// search: the fewer of the workers serving each role, less the worker
    /// the root search holds when no `root:` entry has it.
    pub fn lookahead_lanes(&self) -> usize {
        let serving = |role| -> usize {
            self.groups
                .iter()
                .filter(|g| !g.root && g.serves(role))
                .map(|g| g.slots)
                .sum()
        };
        let root_apart = self.groups.iter().any(|g| g.root);
        serving(Role::Opponent)
            .min(serving(Role::Evaluator).saturating_sub(usize::from(!root_apart)))
    }

    /// How many child processes (or in-process engines) the pool runs.
    pub fn processes(&self) -> usize {
        self.groups.iter().map(WorkerGroup::processes).sum()
    }

    /// The group of each worker, in worker order.
    pub(super) fn worker_groups(&self) -> Vec<usize> {
        self.groups
            .iter()
            .enumerate()
            .flat_map(|(i, g)| std::iter::repeat_n(i, g.slots))
            .collect()
    }

    /// Sets whether every child clears its hash before each call.
    pub fn set_clear_hash(&mut self, clear: bool) {
        for group in &mut self.groups {
            for child in [&mut group.evaluator, &mut group.opponent]
                .into_iter()
                .flatten()
            {
                child.clear_hash = clear;
            }
        }
    }

    /// The configuration of the first group serving `role`.
    pub fn first(&self, role: Role) -> Option<&ChildConfig> {
        self.groups.iter().find_map(|g| g.config(role))
    }
}
