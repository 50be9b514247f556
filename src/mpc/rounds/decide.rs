//! One decision in rounds, step by step ([`Rounds`]): the root search
//! started apart, each round's pass, what a complete round teaches and
//! whether another fits, the root search's time to its target, and the
//! move against its anchor.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Instant,
};

use mpcmc_protocol::GameMove;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::mpc::{
    ChildLimit, Children, Game, Query, Report, Role, Value,
    candidate::{Candidate, Failure, best_of},
    decision::{CheckVerdict, Decision, Rule, Settings, Spread, Stats},
    fortify::{Verdict, fortify},
    lookahead::{pass, sort_candidates},
    noise::{Noise, margin},
    rounds::{
        RootCell, Round, RoundPlan, branching, busiest_lane, check::check_deviation,
        first_round_nodes, survivors,
    },
    time::rounds::{ROOT_TO_TARGET, RootState, RootTime, Standing},
};

/// The value of `m` among `candidates`, when it has one.
fn value_of(candidates: &[Candidate], m: GameMove) -> Option<Value> {
    candidates.iter().find(|c| c.mv == m).and_then(|c| c.value)
}

fn judge(
    candidates: &[Candidate],
    anchor: Option<GameMove>,
    margin: i32,
    changed: bool,
) -> Standing {
    let (Some(a), Some((b, vb))) = (anchor, best_of(candidates)) else {
        return Standing::Open;
    };
    let runner_up = candidates
        .iter()
        .filter(|c| c.mv != b)
        .filter_map(|c| c.value)
        .max();
    let lead = if a == b {
        runner_up
    } else {
        value_of(candidates, a)
    };
    match lead {
        Some(other) if fortify(vb, other, margin) == Verdict::Lookahead && !changed => {
            Standing::Settled
        }
        Some(_) if a != b => Standing::Close,
        _ => Standing::Open,
    }
}

/// Whether the best of `candidates` is not `anchor` and beats it by
/// `margin` (a deviation, which the deep check must confirm).
fn deviates(candidates: &[Candidate], anchor: Option<GameMove>, margin: i32) -> bool {
    match (anchor, best_of(candidates)) {
        (Some(a), Some((b, vb))) if a != b => {
            value_of(candidates, a).is_some_and(|va| fortify(vb, va, margin) == Verdict::Lookahead)
        }
        _ => false,
    }
}

/// One decision in rounds ([`Rounds::decide`]): the root search and rounds
/// until `plan.max_rounds` are done, two candidates are left, the clock
/// says so, or `cancel` fires; round 1's per-call limit is `plan.first`,
/// doubled each round. The decision is made on the last complete round (a
/// round cut short stands in only when none completed) against the root
/// search's move, as the module says; its `candidates` hold every root
/// move with its latest estimate, its `stats` every call.
pub struct Rounds<'a, C> {
    children: &'a Arc<C>,
    game: &'a Arc<Game>,
    candidates: &'a [GameMove],
    plan: RoundPlan,
    settings: Settings,
    noise: &'a Mutex<Noise>,
    cancel: &'a CancellationToken,
    /// How wide a deeper step is ([`branching`]).
    branching: usize,
    /// The moves the next round searches, in candidate order.
    alive: Vec<GameMove>,
    /// The latest estimate of every root move.
    latest: HashMap<GameMove, Candidate>,
    /// The nodes spent on every root move.
    spent: HashMap<GameMove, u64>,
    /// What the lookahead used of its node total: every call's nodes, or
    /// on virtual lanes the busiest lane's of each round.
    used: u64,
    /// The decision the move is made on, and its rounds' per-call limit.
    kept: Option<Decision>,
    kept_limit: ChildLimit,
    /// Every call of the rounds and the root search.
    stats: Stats,
    /// The next round's limit over `plan.first` (without a node total).
    factor: u32,
    /// Rounds complete.
    rounds: u32,
    /// The last complete round's best move.
    last_best: Option<GameMove>,
    standing: Standing,
}

/// The evaluator's root searches, running apart from the rounds.
struct RootSearch {
    task: Option<JoinHandle<(Vec<Report>, Option<Failure>)>>,
    /// Stops them.
    cancel: CancellationToken,
    /// Cancelled when they are over.
    done: CancellationToken,
}

impl RootSearch {
    fn state(&self) -> RootState {
        match (&self.task, self.done.is_cancelled()) {
            (None, _) => RootState::Absent,
            (Some(_), false) => RootState::Running,
            (Some(_), true) => RootState::Ended,
        }
    }

    /// Their reports and why they gave nothing, if they did not: an
    /// `open` search is stopped now; else it runs to its limit (or to
    /// the decision's `cancel`).
    async fn finish(self, open: bool) -> (Vec<Report>, Option<Failure>) {
        if open {
            self.cancel.cancel();
        }
        match self.task {
            Some(task) => task.await.unwrap_or_default(),
            None => (Vec::new(), None),
        }
    }
}

impl<'a, C: Children> Rounds<'a, C> {
    pub fn new(
        children: &'a Arc<C>,
        game: &'a Arc<Game>,
        candidates: &'a [GameMove],
        plan: RoundPlan,
        settings: Settings,
        noise: &'a Mutex<Noise>,
        cancel: &'a CancellationToken,
    ) -> Self {
        let mut alive = candidates.to_vec();
        sort_candidates(&mut alive);
        Rounds {
            children,
            game,
            candidates,
            branching: branching(game, candidates.len()),
            kept_limit: plan.first,
            plan,
            settings,
            noise,
            cancel,
            alive,
            latest: HashMap::new(),
            spent: HashMap::new(),
            used: 0,
            kept: None,
            stats: Stats::default(),
            factor: 1,
            rounds: 0,
            last_best: None,
            standing: Standing::Open,
        }
    }

    /// Runs the decision: `on_candidate` sees every candidate as it
    /// finishes, in every round; `on_round` every round, the one cut short
    /// too. `None` only for an empty candidate list.
    pub async fn decide(
        mut self,
        on_candidate: &mut (dyn FnMut(&Candidate, usize) + Send),
        on_round: &mut (dyn FnMut(&Round<'_>) + Send),
    ) -> Option<Decision> {
        let root = self.start_root();
        let until_root = root.task.is_some()
            && self
                .plan
                .clock
                .get()
                .is_some_and(|c| c.root == RootTime::Until);
        for number in 1..=self.plan.max_rounds.max(1) {
            if number > 1 {
                self.take_in_the_anchor();
            }
            let Some(limit) = self.limit(number) else {
                break;
            };
            let started = Instant::now();
            // Ended by the root search's answer (see `RootTime::Until`).
            let with_root = until_root && self.standing != Standing::Close;
            let decision = self
                .round(limit, with_root.then_some(&root.done), on_candidate)
                .await?;
            self.record(&decision);
            let complete = !decision.cancelled;
            on_round(&Round {
                number,
                limit,
                decision: &decision,
                complete,
            });
            if !complete {
                if self.kept.is_none() {
                    self.kept = Some(decision);
                    self.kept_limit = limit;
                }
                break;
            }
            let exact = decision.exact();
            let next = self.learn(number, decision, limit);
            if self.alive.len() <= 1
                || number == self.plan.max_rounds
                || exact
                || !self.another_fits(&root, started, next.len())
            {
                break;
            }
            self.alive = next;
            self.factor = self.factor.saturating_mul(2);
        }
        self.root_to_target(&root).await;
        let (reports, root_failure) = root.finish(self.plan.root_open).await;
        reports.iter().for_each(|r| self.stats.add(r));
        let root = reports.into_iter().rev().find(|r| r.score.is_some());
        self.choose(root, root_failure).await
    }

    /// The root searches, started apart (with fortification, in a game
    /// that goes on).
    fn start_root(&self) -> RootSearch {
        let cancel = self.cancel.child_token();
        let done = CancellationToken::new();
        let task = (self.game.terminal_now().is_none() && self.settings.fortify).then(|| {
            let searches = root_searches(
                self.children.clone(),
                self.game.clone(),
                [Some(self.plan.root), self.plan.root_then],
                cancel.clone(),
                self.plan.root_seen.clone(),
            );
            // Cancels `done` however the searches end (a panic included).
            let end = done.clone().drop_guard();
            tokio::spawn(async move {
                let result = searches.await;
                drop(end);
                result
            })
        });
        RootSearch { task, cancel, done }
    }

    /// The root search's move as soon as it has one (else the plan's
    /// hint), when it is a candidate.
    fn anchor(&self) -> Option<GameMove> {
        self.plan
            .root_seen
            .get()
            .and_then(|r| r.best)
            .or(self.plan.anchor_hint)
            .filter(|m| self.candidates.contains(m))
    }

    /// From round 2 the anchor is searched with the survivors.
    fn take_in_the_anchor(&mut self) {
        if let Some(a) = self.anchor()
            && !self.alive.contains(&a)
        {
            self.alive.push(a);
            sort_candidates(&mut self.alive);
        }
    }

    /// Round `number`'s per-call limit: twice the last round's, or under
    /// a node total its share of what is left (`None`: nothing is).
    fn limit(&self, number: u32) -> Option<ChildLimit> {
        match self.plan.lookahead_nodes {
            Some(total) if number > 1 => {
                let left = total.saturating_sub(self.used);
                if left == 0 {
                    return None;
                }
                let rounds_left = self.plan.max_rounds - number + 1;
                let (moves, lanes) = (self.alive.len(), self.plan.lanes);
                let nodes = first_round_nodes(
                    left,
                    self.settings,
                    moves,
                    self.branching,
                    rounds_left,
                    lanes,
                );
                Some(ChildLimit::Nodes(nodes))
            }
            _ => Some(self.plan.first.scaled(self.factor)),
        }
    }

    /// One round's pass over the moves alive, cut short when `root_done`
    /// (the root search answered) is given and fires.
    async fn round(
        &self,
        limit: ChildLimit,
        root_done: Option<&CancellationToken>,
        on_candidate: &mut (dyn FnMut(&Candidate, usize) + Send),
    ) -> Option<Decision> {
        let round_cancel = self.cancel.child_token();
        let round = pass(
            self.children,
            self.game,
            &self.alive,
            limit,
            None,
            self.settings,
            &round_cancel,
            on_candidate,
        );
        tokio::pin!(round);
        let root_done = async {
            match root_done {
                Some(done) => done.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            d = &mut round => d,
            _ = root_done => {
                round_cancel.cancel();
                round.await
            }
        }
    }

    /// A round's calls and the latest estimate of each of its moves.
    fn record(&mut self, decision: &Decision) {
        self.stats.merge(&decision.stats);
        let cost = |c: &Candidate| c.calls.iter().map(|r| r.nodes).sum::<u64>();
        self.used += match self.plan.lanes {
            Some(lanes) => busiest_lane(decision.candidates.iter().map(cost), lanes),
            None => decision.stats.nodes,
        };
        for c in &decision.candidates {
            *self.spent.entry(c.mv).or_default() += cost(c);
            // A cut round's unfinished candidates keep their earlier value.
            if c.value.is_some() || !self.latest.contains_key(&c.mv) {
                self.latest.insert(c.mv, c.clone());
            }
        }
    }

    /// What complete round `number` teaches (the noise of searches of its
    /// size, how the choice stands), kept as the decision to make the move
    /// on; its survivors.
    fn learn(&mut self, number: u32, decision: Decision, limit: ChildLimit) -> Vec<GameMove> {
        self.rounds = number;
        if let (Some(earlier), Ok(mut noise)) = (&self.kept, self.noise.lock()) {
            noise.learn(&earlier.candidates, &decision.candidates, limit);
        }
        let best = best_of(&decision.candidates).map(|(m, _)| m);
        let changed = best != self.last_best;
        self.last_best = best;
        let next = survivors(&decision.candidates);
        self.standing = judge(
            &decision.candidates,
            self.anchor(),
            margin(self.noise, limit, self.settings),
            changed,
        );
        self.kept = Some(decision);
        self.kept_limit = limit;
        next
    }

    /// Whether the clock (if any) leaves time for a round over `next`
    /// moves, the last one having started at `started`.
    fn another_fits(&self, root: &RootSearch, started: Instant, next: usize) -> bool {
        let Some(clock) = self.plan.clock.get() else {
            return true;
        };
        let target = clock.target(self.standing, root.state());
        // The next round costs as much again, twice as much once it
        // no longer halves (a multistep lookahead's deeper steps do
        // not halve).
        let calls = |n: usize| {
            let l = self.settings.lookahead;
            l.calls(n, self.branching, self.settings.prune_width) as f64
        };
        let growth = 2.0 * calls(next) / calls(self.alive.len());
        let cost = started.elapsed().mul_f64(growth);
        let elapsed = clock.start.elapsed();
        elapsed < target && elapsed + cost <= clock.hard
    }

    /// Under a move time the open root search deepens the anchor until the
    /// target, unless a deviation needs the time for its deep check.
    async fn root_to_target(&self, root: &RootSearch) {
        if self.plan.root_open
            && root.state() == RootState::Running
            && let Some(clock) = self.plan.clock.get()
            && clock.root == RootTime::ToTarget
            && !self.kept.as_ref().is_some_and(|d| {
                deviates(
                    &d.candidates,
                    self.anchor(),
                    margin(self.noise, self.kept_limit, self.settings),
                )
            })
        {
            let until = clock.start + clock.soft.mul_f64(ROOT_TO_TARGET);
            tokio::select! {
                _ = tokio::time::sleep_until(until.into()) => {}
                _ = root.done.cancelled() => {}
                _ = self.cancel.cancelled() => {}
            }
        }
    }

    /// The move, from the kept decision against the root search's `root`
    /// report: the lookahead's best where both agree or it beats the
    /// anchor by the margin and passes the deep check, else the anchor.
    async fn choose(
        mut self,
        root: Option<Report>,
        root_failure: Option<Failure>,
    ) -> Option<Decision> {
        let mut decision = self.kept.take()?;
        decision.root = root;
        decision.root_failure = root_failure;
        decision.evaluator_choice = decision
            .root
            .as_ref()
            .and_then(|r| Some((r.best?, r.score?)))
            .filter(|(m, _)| self.candidates.contains(m));
        let margin = margin(self.noise, self.kept_limit, self.settings);
        let plies = self.settings.lookahead.plies();
        // Chosen on the last round's values (one budget), before the latest
        // estimates of every move replace its candidates.
        let anchor = decision
            .evaluator_choice
            .map(|(m, _)| m)
            .filter(|_| self.settings.fortify);
        let mut check = None;
        let choice = match (anchor, decision.lookahead_choice) {
            (Some(a), Some((b, _))) if a == b => Some((a, Rule::Lookahead)),
            (Some(a), Some((b, vb))) => match (value_of(&decision.candidates, a), &decision.root) {
                (Some(va), Some(root)) if fortify(vb, va, margin) == Verdict::Lookahead => {
                    // Under a node total the check spends what the rounds left
                    // (on virtual lanes, what the busiest left: the check is
                    // one search, on one lane).
                    let left = self
                        .plan
                        .lookahead_nodes
                        .map(|total| total.saturating_sub(self.used));
                    let c = check_deviation(
                        self.children.as_ref(),
                        self.game,
                        (b, vb),
                        root,
                        left,
                        self.cancel,
                    )
                    .await;
                    if let Some(r) = &c.report {
                        self.stats.add(r);
                    }
                    let verdict = c.verdict;
                    check = Some(c.summary());
                    Some(match verdict {
                        CheckVerdict::Passed => (b, Rule::Lookahead),
                        CheckVerdict::Refuted => (a, Rule::Refuted),
                        CheckVerdict::Unchecked => (a, Rule::Unchecked),
                    })
                }
                _ => Some((a, Rule::Fortified)),
            },
            (Some(a), None) => Some((a, Rule::EvaluatorFallback)),
            (None, _) => None,
        };
        let top3: u64 = {
            let mut per_move: Vec<u64> = self.spent.values().copied().collect();
            per_move.sort_unstable_by(|a, b| b.cmp(a));
            per_move.iter().take(3).sum()
        };
        let mut all: Vec<Candidate> = self.latest.into_values().collect();
        all.sort_by_cached_key(|c| c.mv.to_string());
        decision.candidates = all;
        if let Some((mv, rule)) = choice {
            decision.play(mv, rule, plies);
        }
        let depth = decision.stats.depth;
        decision.stats = Stats {
            depth,
            ..self.stats
        };
        decision.spread = Some(Spread {
            rounds: self.rounds,
            margin,
            top3_nodes: top3,
            lookahead_nodes: self.spent.values().sum(),
            check,
        });
        Some(decision)
    }
}

/// The evaluator's searches of the root, one after the other: each report
/// with a score names the anchor at once (`seen`).
async fn root_searches<C: Children>(
    children: Arc<C>,
    game: Arc<Game>,
    limits: [Option<ChildLimit>; 2],
    cancel: CancellationToken,
    seen: RootCell,
) -> (Vec<Report>, Option<Failure>) {
    let mut reports = Vec::new();
    for limit in limits.into_iter().flatten() {
        if cancel.is_cancelled() {
            break;
        }
        let query = Query::root(game.clone(), limit);
        match children.search(query, cancel.clone()).await {
            Ok(report) => {
                let stopped = report.stopped;
                if report.score.is_some() {
                    seen.set(report.clone());
                }
                reports.push(report);
                if stopped {
                    break;
                }
            }
            Err(e) => {
                tracing::warn!("evaluator at the root failed: {e}");
                return (reports, Some(Failure::of(Role::Evaluator, &e)));
            }
        }
    }
    (reports, None)
}
