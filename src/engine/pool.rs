//! A pool of child engine processes serving both roles.
//!
//! `threads` workers, each an actor task owning its child processes: one
//! evaluator and one opponent, or a single process for both roles when their
//! command and options are the same. Searches queue on one channel, so at most
//! `threads` run at once. A child that died, stalled or answered nonsense is
//! replaced before its worker takes the next search, and the failed search is
//! tried once more on the fresh child. Shutting the pool down quits every
//! child, kills the ones that do not exit, and leaves no process behind.

use std::{sync::Arc, time::Duration};

use tokio::{
    sync::{Mutex, mpsc, oneshot},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

use crate::{
    engine::client::{ChildConfig, ChildError, Client, QUIT_TIMEOUT},
    mpc::{Children, Query, Report, Role},
};

/// What the pool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    pub evaluator: ChildConfig,
    pub opponent: ChildConfig,
    /// Concurrent child searches (workers).
    pub threads: usize,
}

impl PoolConfig {
    /// One set of processes serves both roles when they are configured alike.
    pub fn shared_roles(&self) -> bool {
        self.evaluator == self.opponent
    }
}

struct Job {
    query: Query,
    cancel: CancellationToken,
    reply: oneshot::Sender<Result<Report, ChildError>>,
}

/// The running pool; see the module docs.
pub struct Pool {
    config: PoolConfig,
    jobs: mpsc::UnboundedSender<Job>,
    workers: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Starts the workers; each spawns its children at once, so they are ready
    /// (or known broken) by the first search.
    pub fn start(config: PoolConfig) -> Pool {
        let (jobs, queue) = mpsc::unbounded_channel();
        let queue = Arc::new(Mutex::new(queue));
        let workers = (1..=config.threads.max(1))
            .map(|n| {
                let worker = Worker {
                    n,
                    config: config.clone(),
                    evaluator: None,
                    opponent: None,
                };
                tokio::spawn(worker.run(queue.clone()))
            })
            .collect();
        Pool {
            config,
            jobs,
            workers,
        }
    }

    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    /// Quits every child and waits for the workers (killing what outlives the
    /// deadline). A search still running is stopped first.
    pub async fn shutdown(self) {
        let Pool { jobs, workers, .. } = self;
        drop(jobs);
        // A worker may be draining a stopped search (STOP_TIMEOUT) before it
        // quits its children (QUIT_TIMEOUT each).
        let deadline = super::client::STOP_TIMEOUT + 2 * QUIT_TIMEOUT + Duration::from_millis(500);
        for mut worker in workers {
            if tokio::time::timeout(deadline, &mut worker).await.is_err() {
                tracing::warn!("a pool worker did not finish within {deadline:?}; aborting it");
                worker.abort();
                // Dropping its clients kills their processes (kill_on_drop).
                let _ = worker.await;
            }
        }
    }
}

impl Children for Pool {
    type Error = ChildError;

    async fn search(&self, query: Query, cancel: CancellationToken) -> Result<Report, ChildError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job {
                query,
                cancel,
                reply,
            })
            .map_err(|_| ChildError::PoolClosed)?;
        answer.await.unwrap_or(Err(ChildError::PoolClosed))
    }
}

struct Worker {
    n: usize,
    config: PoolConfig,
    evaluator: Option<Client>,
    opponent: Option<Client>,
}

impl Worker {
    async fn run(mut self, queue: Arc<Mutex<mpsc::UnboundedReceiver<Job>>>) {
        // Start the children now; a failure here shows again on first use.
        for role in [Role::Evaluator, Role::Opponent] {
            if let Err(e) = self.client(role).await {
                tracing::warn!("worker {}: {e}", self.n);
            }
        }
        loop {
            let job = { queue.lock().await.recv().await };
            let Some(job) = job else { break };
            if job.cancel.is_cancelled() || job.reply.is_closed() {
                let _ = job.reply.send(Err(ChildError::Cancelled));
                continue;
            }
            let mut result = self.search(&job).await;
            if let Err(e) = &result
                && e.needs_restart()
                && !job.cancel.is_cancelled()
            {
                tracing::warn!("worker {}: {e}; restarting the child and trying again", self.n);
                result = self.search(&job).await;
            }
            let _ = job.reply.send(result);
        }
        for client in [self.evaluator.take(), self.opponent.take()].into_iter().flatten() {
            client.quit(QUIT_TIMEOUT).await;
        }
    }

    async fn search(&mut self, job: &Job) -> Result<Report, ChildError> {
        let client = self.client(job.query.role).await?;
        let result = client.search(&job.query, &job.cancel).await;
        if let Err(e) = &result
            && e.needs_restart()
        {
            // Drop the broken child (killing it) so the next use starts afresh.
            let slot = self.slot(job.query.role);
            if let Some(client) = slot.take() {
                client.quit(Duration::from_millis(100)).await;
            }
        }
        result
    }

    fn slot(&mut self, role: Role) -> &mut Option<Client> {
        match role {
            Role::Opponent if !self.config.shared_roles() => &mut self.opponent,
            _ => &mut self.evaluator,
        }
    }

    /// The child for `role`, started if there is none.
    async fn client(&mut self, role: Role) -> Result<&mut Client, ChildError> {
        let shared = self.config.shared_roles();
        let (config, label) = match role {
            Role::Opponent if !shared => (self.config.opponent.clone(), "opponent"),
            _ if shared => (self.config.evaluator.clone(), "child"),
            _ => (self.config.evaluator.clone(), "evaluator"),
        };
        let label = format!("{label} {}", self.n);
        let slot = self.slot(role);
        if slot.is_none() {
            *slot = Some(Client::spawn(&config, label).await?);
        }
        match slot {
            Some(client) => Ok(client),
            None => Err(ChildError::PoolClosed),
        }
    }
}
