//! One `go`, from the GUI's limits to exactly one `bestmove`.
//!
//! The limits choose a plan: a single pass with a fixed per-call budget
//! (`ChildNodes`, `ChildMoveTime`, `go depth|nodes|mate`, bare `go`), a timed
//! pass whose per-call time is the move's time split over the calls and whose
//! end is a hard deadline (`movetime`, clocks), or passes of doubling size until
//! `stop` (`infinite`, and `ponder` until `ponderhit`); at a level
//! (`UCI_LimitStrength`) one pass at the level's budget, the move drawn from
//! the values, unless the GUI analyses (`infinite`). An open book's move
//! comes before any of them (`OwnBook`). Whatever happens, the
//! task ends by writing one `bestmove` with a legal move, or `(none)` at a
//! finished root; under `infinite` and `ponder` only after `stop`/`ponderhit`.
//!
//! The move played is always searched. When the children cannot answer in
//! time (too little time for a child round trip, a stalled or broken child,
//! a `stop` before anything finished), the built-in engine searches the root
//! in this process — it starts in microseconds and always completes its first
//! iteration — for the time that is left, and its move is played.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use mpcmc_builtin::{
    self as builtin,
    go::{self as builtin_go, BuiltinGo},
};
use mpcmc_protocol::{Go, output::Output};
use shakmaty::{Color, Move, Position, uci::UciMove};
use tokio_util::sync::CancellationToken;

use crate::{
    book::{self, Book},
    children::Pool,
    mpc::{
        Candidate, ChildFault, ChildLimit, Children, Decision, Game, Progress, ProgressSink, Query,
        Report, Rule, Settings, Value,
        budget::{
            EvaluatorOnly, INITIAL_SPEED, MIN_CALL, TimedBudget, TimedPlan, level_call_nodes,
            node_rounds, open_rounds, plan_timed, round_clock,
        },
        decide,
        decision::{Draw, Lookahead, Stats},
        level::Level,
        lookahead::CANCEL_GRACE,
        rounds::{ClockCell, Noise, Round, RoundPlan, branching, decide_in_rounds},
    },
    uci::{
        carry::CarryCell,
        options::Options,
        pane::{Pane, PvLine},
        time::{Lateness, MoveTime, child_clock, flag_guard, move_time, watch_scheduling},
        trace,
    },
};

/// Per-call nodes for a bare `go` (no limit at all).
pub const BARE_GO_CALL_NODES: u64 = 10_000;
/// Per-call nodes of the first pass under `go infinite`; each pass doubles it.
const FIRST_PASS_NODES: u64 = 1_000;
/// How long the built-in fallback searches when the GUI wants the move now
/// (`stop`, or a new `go`) and no child had answered.
const FALLBACK_AFTER_STOP: Duration = Duration::from_millis(10);
/// The fallback engine's hash table, MB (besides `Hash`, which the children
/// share).
const FALLBACK_HASH_MB: usize = 1;

/// The built-in engine a session keeps for moves its children cannot make
/// (or when no children can be configured): its own small table, never
/// cleared.
#[derive(Clone)]
pub struct Fallback(Arc<Mutex<builtin::Engine>>);

impl Default for Fallback {
    fn default() -> Fallback {
        Fallback(Arc::new(Mutex::new(builtin::Engine::new(FALLBACK_HASH_MB))))
    }
}

impl Fallback {
    /// One `go` of it.
    pub fn go(
        &self,
        go: Go,
        game: Arc<Game>,
        out: Output,
        overhead: Duration,
        stop: CancellationToken,
        ponderhit: CancellationToken,
    ) -> BuiltinGo {
        BuiltinGo {
            go,
            game,
            engine: self.0.clone(),
            hash_mb: FALLBACK_HASH_MB,
            threads: 1,
            clear: Arc::default(),
            out,
            overhead,
            stop,
            ponderhit,
        }
    }
}

/// Everything one `go` needs.
pub struct GoRequest {
    pub go: Go,
    pub game: Arc<Game>,
    pub options: Options,
    pub pool: Arc<Pool>,
    pub out: Output,
    /// When the `go` line arrived: the clock runs from here.
    pub received: Instant,
    pub stop: CancellationToken,
    pub ponderhit: CancellationToken,
    pub debug: bool,
    /// The built-in engine that answers when the children cannot
    pub fallback: Fallback,
    /// The session's measure of how noisy the children's values are.
    pub noise: Arc<Mutex<Noise>>,
    /// The session's measure of how late its answers come.
    pub lateness: Arc<Mutex<Lateness>>,
    /// Read for this decision's anchor hint and the reply it was waiting
    /// for, written with its own seed once its move is played.
    pub carry: CarryCell,
    /// The opening book (`OwnBook`), when one is open.
    pub book: Option<Arc<Book>>,
}

/// How the decision is budgeted.
#[derive(Debug, Clone)]
enum Plan {
    /// A fixed amount of work: one pass, every call under one limit, or
    /// rounds over a node total.
    Fixed(Work),
    /// Rounds on a clock: a target and a hard limit.
    Timed(MoveTime),
    /// Passes of doubling size until stopped.
    Deepening,
    /// One pass at a level's budget, the move drawn ([`Search::at_level`]).
    Level(Level),
}

/// When a root search that is the whole decision must answer.
#[derive(Debug, Clone, Copy)]
enum Due {
    At(Instant),
    /// The move's cap after `ponderhit` (pondering, the clock is not
    /// ours before).
    AfterPonderhit(MoveTime),
}

/// What one pass of [`Search::pass`] runs.
#[derive(Debug, Clone)]
enum Work {
    /// Every candidate once, under this limit.
    Pass(ChildLimit),
    /// A root search and rounds ([`decide_in_rounds`]).
    Rounds(Box<RoundPlan>),
}

/// How `go` is budgeted; `overhead` is what the clock keeps in reserve
/// ([`Search::overhead_now`]).
/// `moves` root moves are weighed, `branching` the legal ones ([`node_rounds`]).
fn plan(
    go: &Go,
    options: &Options,
    us: Color,
    (moves, branching): (usize, usize),
    overhead: Duration,
) -> Plan {
    let pass = |limit| Plan::Fixed(Work::Pass(limit));
    // At a level every `go` but analysis (`go infinite`, full strength).
    if let Some(level) = options.level().filter(|_| !go.infinite) {
        return Plan::Level(level);
    }
    if options.child_nodes > 0 {
        return pass(ChildLimit::Nodes(options.child_nodes));
    }
    if options.child_movetime > 0 {
        return pass(ChildLimit::MoveTime(Duration::from_millis(
            options.child_movetime,
        )));
    }
    if let Some(depth) = go.depth {
        return pass(ChildLimit::Depth(depth.max(1)));
    }
    if let Some(depth) = go.mate_depth() {
        return pass(ChildLimit::Depth(depth));
    }
    if let Some(nodes) = go.nodes {
        // A total for the decision: rounds that follow the contenders.
        return Plan::Fixed(Work::Rounds(Box::new(node_rounds(
            nodes,
            options.settings(),
            moves,
            branching,
        ))));
    }
    if go.ends_when_told() {
        return Plan::Deepening;
    }
    match move_time(go, us, overhead) {
        Some(time) => Plan::Timed(time),
        None => pass(ChildLimit::Nodes(BARE_GO_CALL_NODES)),
    }
}

/// Runs the `go` to its one `bestmove`, measuring meanwhile how late the
/// machine wakes this process ([`watch_scheduling`]).
pub async fn run(req: GoRequest) {
    let lateness = req.lateness.clone();
    tokio::select! {
        biased;
        () = decide_and_answer(req) => {}
        () = watch_scheduling(lateness) => {}
    }
}

async fn decide_and_answer(req: GoRequest) {
    if let Ok(mut lateness) = req.lateness.lock() {
        lateness.on_go(&req.game, &req.go);
    }
    let mut search = Search::new(req);
    // Pondering, the last move is our guess: counted once it is played.
    let pondering = search.req.go.ponder;
    if !pondering {
        search.count_reply();
    }
    if let Some(mv) = search.book_move() {
        search.wait_for_release().await;
        let game = &search.req.game;
        search
            .req
            .out
            .bestmove(game.position(), Some(mv), None, game.castling_mode());
        return;
    }
    let decision = search.decide().await;
    // A worker down or up again (`Workers` over other machines).
    for line in search.req.pool.news() {
        search.pane.notice(line);
    }
    search.wait_for_release().await;
    // A pondering decision's move is played only at `ponderhit`; else the
    // previous decision's seed stands.
    let played = !pondering || search.req.ponderhit.is_cancelled();
    if pondering && played {
        search.count_reply();
    }
    if played && let Some(d) = &decision {
        search.keep_seed(d);
    }
    let (best, ponder) = match decision {
        Some(d) => (Some(d.best), d.ponder),
        None => (search.candidates.first().copied(), None),
    };
    let game = &search.req.game;
    search
        .req
        .out
        .bestmove(game.position(), best, ponder, game.castling_mode());
    // How late, for the next moves' margin: a pondered move is not
    // measured (the GUI's clock ran from `ponderhit`).
    if !pondering
        && let Some(mv) = best
        && let Ok(mut lateness) = search.req.lateness.lock()
    {
        let now = Instant::now();
        let late = search.deadline.map(|d| now.saturating_duration_since(d));
        let took = now.saturating_duration_since(search.req.received);
        lateness.on_answer(game, &search.req.go, mv, took, late.unwrap_or_default());
    }
    search.write_trace(played);
}

/// What ends a pass besides `stop`.
#[derive(Debug, Clone)]
struct Ends {
    deadline: Option<Instant>,
    on_ponderhit: OnPonderHit,
}

#[derive(Debug, Clone)]
enum OnPonderHit {
    Ignore,
    /// End the pass (pondering passes of `go ponder` without a fixed budget).
    Cancel,
    /// Keep the rounds going, from now on on this clock (`go ponder` with
    /// two or more workers: the decision continues where pondering got).
    StartRounds(ClockCell, MoveTime),
    /// Keep going, but from now on within this much (a fixed budget under
    /// `go ponder`: the flag guard of the clock that now runs).
    StartClock(Option<Duration>),
}

/// A decision with how it was reached, for its `info` lines.
struct Outcome {
    decision: Decision,
    limit: ChildLimit,
    settings: Settings,
    /// Its `info` line went out already.
    reported: bool,
    /// Why the built-in engine had to answer (with [`Rule::BuiltinFallback`]).
    why: Option<String>,
    /// Where its rounds start in the trace's (`Search::rounds`).
    first_round: usize,
}

struct Search {
    req: GoRequest,
    /// What the GUI sees of this `go`.
    pane: Pane,
    /// What the clock keeps in reserve beyond the children's searches,
    /// read once when the `go` arrives ([`Search::overhead_now`]).
    overhead: Duration,
    candidates: Vec<Move>,
    /// Nodes over all passes of this `go`.
    nodes: u64,
    /// When the move must be made, once known.
    deadline: Option<Instant>,
    /// The move's hard limit, once known: the built-in engine answering
    /// for a failed child keeps to it (the deadline may be the later cap).
    hard: Option<Instant>,
    /// The latest the move may be made, once known (the move's cap, or
    /// the guard before the flag): a search cut short gets no grace past
    /// it (see [`Search::grace_end`]).
    latest: Option<Instant>,
    /// Every round of this `go`, for the trace (kept only when
    /// `TraceFile` is set).
    rounds: Vec<trace::RoundTrace>,
    /// The decision's trace, written once its `bestmove` is out.
    trace: Option<trace::Trace>,
}

impl Search {
    fn new(req: GoRequest) -> Search {
        let pane = Pane::new(
            req.out.clone(),
            req.received,
            req.game.clone(),
            &req.options,
        );
        let pos = req.game.position();
        let legal: Vec<Move> = pos.legal_moves().into_iter().collect();
        let mut candidates: Vec<Move> = Vec::new();
        for uci in &req.go.searchmoves {
            match uci.to_move(pos) {
                Ok(m) if !candidates.contains(&m) => candidates.push(m),
                Ok(_) => {}
                Err(_) => pane.notice(format!("searchmoves: '{uci}' is not legal here; ignored")),
            }
        }
        if candidates.is_empty() {
            candidates = legal;
        }
        let overhead = Search::overhead_now(&req);
        Search {
            req,
            pane,
            overhead,
            candidates,
            nodes: 0,
            deadline: None,
            hard: None,
            latest: None,
            rounds: Vec::new(),
            trace: None,
        }
    }

    fn uci(&self, m: Move) -> UciMove {
        UciMove::from_move(m, self.req.game.castling_mode())
    }

    /// How wide a deeper level is ([`branching`]).
    fn branching(&self) -> usize {
        branching(&self.req.game, self.candidates.len())
    }

    /// The decision, or `None` at a finished root or when not even the
    /// built-in engine answered.
    async fn decide(&mut self) -> Option<Decision> {
        if self.candidates.is_empty() {
            return None;
        }
        let us = self.req.game.position().turn();
        let overhead = self.overhead;
        let settings = self.req.options.settings();
        let breadth = (self.candidates.len(), self.branching());
        let result = match plan(&self.req.go, &self.req.options, us, breadth, overhead) {
            Plan::Level(level) => self.at_level(level, settings, us).await,
            Plan::Fixed(work) => {
                // Pondering, the clock is not ours until `ponderhit`.
                let ends = if self.req.go.ponder {
                    Ends {
                        deadline: None,
                        on_ponderhit: OnPonderHit::StartClock(flag_guard(
                            &self.req.go,
                            us,
                            overhead,
                        )),
                    }
                } else {
                    let guard =
                        flag_guard(&self.req.go, us, overhead).map(|g| self.req.received + g);
                    self.latest = guard;
                    Ends {
                        deadline: guard,
                        on_ponderhit: OnPonderHit::Ignore,
                    }
                };
                self.pass(work, settings, ends)
                    .await
                    .ok_or_else(no_candidates)
            }
            Plan::Timed(time) => self.timed(self.req.received, time, settings).await,
            Plan::Deepening => match self.ponders_alone(settings) {
                Some((limit, time)) => {
                    let due = Due::AfterPonderhit(time);
                    self.evaluator_only(limit, Rule::OneWorker, due, settings)
                        .await
                }
                None => self.deepen(settings, us).await.ok_or_else(no_candidates),
            },
        };
        let outcome = match result {
            Ok(o) if o.decision.rule != Rule::NoAnswer => Some(o),
            Ok(o) => self.fallback(unanswered(&o.decision), settings).await,
            Err(why) => self.fallback(why, settings).await,
        };
        let o = outcome?;
        if o.reported {
            // The last line before `bestmove` is the move played (a
            // deepening search may play an earlier pass's move than its
            // last lines').
            let plies = o.settings.lookahead.plies();
            let (first, others) = lines_of(&self.pane, &o.decision, &o.decision.candidates, plies);
            self.pane.finish(first, &others, self.nodes);
        } else {
            self.report(&o);
        }
        self.trace(&o);
        Some(o.decision)
    }

    /// What the clock keeps in reserve beyond the children's searches:
    /// `MoveOverhead` (the GUI's and the pipes' delay), the slowest child's
    /// round trip (a child on another machine answers `stop` that much
    /// later) and how late this session's recent answers came
    /// ([`Lateness`]: a busy machine). Read once a `go`: the measure moves
    /// while the search runs, and every limit of one move keeps one value.
    fn overhead_now(req: &GoRequest) -> Duration {
        let late = req.lateness.lock().map(|l| l.margin()).unwrap_or_default();
        let round_trip = req.pool.round_trip();
        let overhead = Duration::from_millis(req.options.move_overhead) + round_trip + late;
        tracing::debug!("overhead {overhead:?}: round trip {round_trip:?}, measured {late:?}");
        overhead
    }

    /// The decision's trace, kept until its `bestmove` is out, when
    /// `TraceFile` is set.
    fn trace(&mut self, o: &Outcome) {
        if self.req.options.trace_file.is_empty() {
            return;
        }
        self.trace = Some(trace::Trace::of(
            &o.decision,
            trace::Context {
                game: &self.req.game,
                go: self.req.go.to_string(),
                settings: o.settings,
                rounds: std::mem::take(&mut self.rounds),
                time_ms: self.req.received.elapsed().as_millis() as u64,
            },
        ));
    }

    /// Appends the trace to `TraceFile`, with whether its move was `played`
    /// and the hit rate as it now stands; a file that cannot be written is
    /// said in an `info string`, and play goes on.
    fn write_trace(&mut self, played: bool) {
        let Some(mut record) = self.trace.take() else {
            return;
        };
        record.played = played;
        if let Ok(carry) = self.req.carry.lock() {
            record.replies = carry.replies;
        }
        let path = &self.req.options.trace_file;
        if let Err(e) = record.append(std::path::Path::new(path)) {
            self.pane
                .notice(format!("TraceFile: cannot write '{path}': {e}"));
        }
    }

    /// Keeps what `d`, whose move is played, predicted about the position
    /// after its move and the reply, for the next decision.
    fn keep_seed(&self, d: &Decision) {
        if let Ok(mut carry) = self.req.carry.lock() {
            carry.keep_seed(&self.req.game, d);
        }
    }

    /// When this position is our move played and one reply after the last
    /// seed's, counts whether the reply was the predicted one, and says the
    /// game's hit rate so far.
    fn count_reply(&self) {
        let replies = self
            .req
            .carry
            .lock()
            .ok()
            .and_then(|mut carry| carry.count_reply(&self.req.game));
        if let Some(replies) = replies {
            self.pane.detail(replies);
        }
    }

    /// The evaluator's move here as the previous decision found it, if the
    /// game went as it predicted.
    fn anchor_hint(&self) -> Option<Move> {
        let carry = self.req.carry.lock().ok()?;
        carry.anchor_hint(&self.req.game, &self.candidates)
    }

    /// Until `stop`, or `ponderhit` while pondering. With two or more
    /// workers: rounds with the root search on a worker of its own, which
    /// at `ponderhit` go on under the clock that starts then. With one:
    /// passes of doubling size, and at `ponderhit` a fresh timed decision
    /// (on warm children). (With one worker on the game's clock, pondering is
    /// the evaluator's own instead: [`Search::ponders_alone`].)
    async fn deepen(&mut self, settings: Settings, us: Color) -> Option<Outcome> {
        let overhead = self.overhead;
        if self.req.pool.config().threads() >= 2 {
            let clock = ClockCell::default();
            let time = move_time(&self.req.go, us, overhead);
            let on_ponderhit = match time {
                Some(time) if self.req.go.ponder => OnPonderHit::StartRounds(clock.clone(), time),
                _ => OnPonderHit::Ignore,
            };
            let ends = Ends {
                deadline: None,
                on_ponderhit,
            };
            let (moves, branching) = (self.candidates.len(), self.branching());
            let plan = open_rounds(FIRST_PASS_NODES, settings, moves, branching, clock);
            return self
                .pass(Work::Rounds(Box::new(plan)), settings, ends)
                .await;
        }
        let mut last: Option<Outcome> = None;
        let mut nodes = FIRST_PASS_NODES;
        let pondering = self.req.go.ponder;
        let ends = Ends {
            deadline: None,
            on_ponderhit: if pondering {
                OnPonderHit::Cancel
            } else {
                OnPonderHit::Ignore
            },
        };
        loop {
            let outcome = self
                .pass(Work::Pass(ChildLimit::Nodes(nodes)), settings, ends.clone())
                .await;
            // No child answered (the pass may have been cut by its own
            // rule for broken children: `stop` and `ponderhit` are
            // checked first).
            let broken = outcome
                .as_ref()
                .is_some_and(|o| o.decision.rule == Rule::NoAnswer);
            // The analysis is complete: more passes would only print it
            // again, thousands of times a second.
            let exact = outcome
                .as_ref()
                .is_some_and(|o| !o.decision.cancelled && o.decision.exact());
            last = self.keep_better(last, outcome);
            if self.req.stop.is_cancelled() {
                return last;
            }
            if pondering && self.req.ponderhit.is_cancelled() {
                // The clock is ours now: a fresh, timed decision.
                let hit = Instant::now();
                return match move_time(&self.req.go, us, overhead) {
                    Some(time) => {
                        let timed = self.timed(hit, time, settings).await;
                        self.keep_better(last, timed.ok())
                    }
                    None => last,
                };
            }
            if broken || exact {
                // No child answers: more passes would only spin; the
                // built-in engine takes over until `stop`.
                return last;
            }
            nodes = nodes.saturating_mul(2).min(1 << 30);
        }
    }

    /// Of the last outcome and a newer one, a complete one beats a cut one;
    /// otherwise the newer wins. A cut one that is not used leaves the
    /// trace with its rounds.
    fn keep_better(&mut self, old: Option<Outcome>, new: Option<Outcome>) -> Option<Outcome> {
        match (old, new) {
            (Some(old), Some(new)) if new.decision.cancelled && !old.decision.cancelled => {
                self.rounds.truncate(new.first_round);
                Some(old)
            }
            (Some(old), Some(mut new)) if old.decision.cancelled => {
                let end = new.first_round.min(self.rounds.len());
                let unused = old.first_round.min(end)..end;
                new.first_round -= unused.len();
                self.rounds.drain(unused);
                Some(new)
            }
            (old, None) => old,
            (_, new) => new,
        }
    }

    /// What the move's `time` from `start` has to work with.
    fn timed_budget(&self, start: Instant, time: MoveTime) -> TimedBudget {
        let us = self.req.game.position().turn();
        let pool = &self.req.pool;
        TimedBudget {
            start,
            soft: time.soft,
            hard: time.hard,
            threads: pool.config().threads(),
            speed: pool.speed().unwrap_or(INITIAL_SPEED),
            call_cost: pool.call_cost(),
            clock: child_clock(&self.req.go, us, self.overhead),
            lines: self.req.options.multi_pv,
        }
    }

    /// How the move's `time` from `start` is spent ([`plan_timed`]).
    fn timed_plan(&self, start: Instant, time: MoveTime, settings: Settings) -> TimedPlan {
        let budget = self.timed_budget(start, time);
        plan_timed(budget, self.candidates.len(), self.branching(), settings)
    }

    /// A move drawn from the opening book, weighted as it says, when one
    /// is open and has a move here that `go` allows (analysis, `go
    /// infinite`, searches instead). An `info string` names it.
    fn book_move(&self) -> Option<Move> {
        let book = self.req.book.as_ref().filter(|_| !self.req.go.infinite)?;
        let pos = self.req.game.position();
        let moves: Vec<_> = book
            .moves(pos)
            .into_iter()
            .filter(|b| self.candidates.contains(&b.mv))
            .collect();
        let chosen = book::draw(&moves, self.random())?;
        let total: u32 = moves.iter().map(|b| b.weight).sum();
        self.pane.notice(format!(
            "book move {} (weight {} of {total}, {} book moves here)",
            self.uci(chosen.mv),
            chosen.weight,
            moves.len()
        ));
        Some(chosen.mv)
    }

    /// The next random number of the game's draws.
    fn random(&self) -> u64 {
        let mut carry = self.req.carry.lock().unwrap_or_else(|e| e.into_inner());
        carry.random(self.req.options.seed)
    }

    /// A decision at a level: one pass of one-step lookahead over every
    /// root move, each call at the level's budget or less when the GUI's
    /// limits leave less ([`level_call_nodes`]), and the move drawn from
    /// the values. A clock or a move time also ends the pass at the
    /// move's hard limit; pondering, the pass runs at once and its move
    /// waits for `ponderhit`.
    async fn at_level(
        &mut self,
        level: Level,
        settings: Settings,
        us: Color,
    ) -> Result<Outcome, String> {
        let go = &self.req.go;
        let time = move_time(go, us, self.overhead);
        let budget = time.map(|t| self.timed_budget(self.req.received, t));
        let decided = self.req.carry.lock().is_ok_and(|c| c.decided);
        let nodes = level_call_nodes(
            if decided {
                level.decided_call_nodes()
            } else {
                level.call_nodes()
            },
            self.candidates.len(),
            go.nodes,
            budget.as_ref(),
        );
        let settings = Settings {
            lookahead: Lookahead::One,
            fortify: false,
            level: Some(Draw {
                level,
                random: self.random(),
            }),
            ..settings
        };
        let ends = if go.ponder {
            Ends {
                deadline: None,
                on_ponderhit: OnPonderHit::StartClock(time.map(|t| t.hard)),
            }
        } else {
            Ends {
                deadline: time.map(|t| self.req.received + t.hard),
                on_ponderhit: OnPonderHit::Ignore,
            }
        };
        self.hard = ends.deadline;
        if !go.ponder {
            self.latest = time.map(|t| self.req.received + t.cap);
        }
        let outcome = self
            .pass(Work::Pass(ChildLimit::Nodes(nodes)), settings, ends)
            .await
            .ok_or_else(no_candidates)?;
        if let Some(drawn) = outcome.decision.drawn
            && let Ok(mut carry) = self.req.carry.lock()
        {
            carry.decided = drawn.decided;
        }
        Ok(outcome)
    }

    /// Rounds on the clock from `start`, ended by the hard limit. `Err` says
    /// why no child could answer in time.
    async fn timed(
        &mut self,
        start: Instant,
        time: MoveTime,
        settings: Settings,
    ) -> Result<Outcome, String> {
        let plan = self.timed_plan(start, time, settings);
        // A root search sent the game's clock decides its own time, as the
        // child playing alone: the move's deadline is then the cap, which
        // the children's own time rules stay under (the rounds keep to the
        // hard limit).
        let root_keeps_clock = match &plan {
            // `Fortify` off: no root search runs.
            TimedPlan::Rounds(_, plan) => {
                settings.fortify && matches!(plan.root, ChildLimit::Clock { .. })
            }
            TimedPlan::EvaluatorOnly(limit, _) => matches!(limit, ChildLimit::Clock { .. }),
        };
        let deadline = start
            + if root_keeps_clock {
                time.cap
            } else {
                time.hard
            };
        self.deadline = Some(deadline);
        self.hard = Some(start + time.hard);
        self.latest = Some(start + time.cap);
        match plan {
            TimedPlan::Rounds(lookahead, plan) => {
                if lookahead != settings.lookahead {
                    self.pane.detail(format!(
                        "time is short ({:?}): {} lookahead this move",
                        time.soft,
                        lookahead.name()
                    ));
                }
                let settings = Settings {
                    lookahead,
                    ..settings
                };
                let ends = Ends {
                    deadline: Some(deadline),
                    on_ponderhit: OnPonderHit::Ignore,
                };
                self.pass(Work::Rounds(plan), settings, ends)
                    .await
                    .ok_or_else(no_candidates)
            }
            // Not even one child call fits.
            TimedPlan::EvaluatorOnly(ChildLimit::MoveTime(t), _) if t < MIN_CALL => Err(format!(
                "{:?} for this move leaves no time for a child round trip",
                time.soft
            )),
            TimedPlan::EvaluatorOnly(limit, why) => {
                let rule = match why {
                    EvaluatorOnly::ShortOfTime => Rule::EvaluatorOnly,
                    EvaluatorOnly::OneWorker => Rule::OneWorker,
                };
                self.evaluator_only(limit, rule, Due::At(deadline), settings)
                    .await
            }
        }
    }

    /// Pondering, when the decision on the clock would be the evaluator
    /// alone ([`EvaluatorOnly::OneWorker`]): its search under the game's
    /// clock (to be sent `go ponder`, as to the child playing alone) and
    /// the move's time, whose cap then runs from `ponderhit`.
    fn ponders_alone(&self, settings: Settings) -> Option<(ChildLimit, MoveTime)> {
        if !self.req.go.ponder {
            return None;
        }
        let us = self.req.game.position().turn();
        let time = move_time(&self.req.go, us, self.overhead)?;
        match self.timed_plan(Instant::now(), time, settings) {
            TimedPlan::EvaluatorOnly(
                limit @ ChildLimit::Clock { .. },
                EvaluatorOnly::OneWorker,
            ) => Some((limit, time)),
            _ => None,
        }
    }

    /// The evaluator's own move at the root, by plan (`rule`): under severe
    /// time pressure, or with one worker on a game clock or a move time
    /// (also pondering on a clock:
    /// the child ponders, and is told `ponderhit` when the GUI says it).
    async fn evaluator_only(
        &mut self,
        limit: ChildLimit,
        rule: Rule,
        due: Due,
        settings: Settings,
    ) -> Result<Outcome, String> {
        let limit = match limit {
            ChildLimit::MoveTime(t) => ChildLimit::MoveTime(t.max(Duration::from_millis(1))),
            other => other,
        };
        // The search is the decision: the GUI sees its iterations as they
        // complete (as from the child alone), until it ends.
        let showing = Arc::new(Mutex::new(true));
        let last: Arc<Mutex<Option<Progress>>> = Arc::default();
        let started = Instant::now();
        let (mut deadline, after_ponderhit) = match due {
            Due::At(t) => (Some(t), None),
            Due::AfterPonderhit(time) => (None, Some(time)),
        };
        let query = Query {
            progress: Some(self.relayed(showing.clone(), last.clone())),
            ponderhit: after_ponderhit.map(|_| self.req.ponderhit.clone()),
            ..Query::root(self.req.game.clone(), limit)
        };
        let cancel = CancellationToken::new();
        let search = self.req.pool.search(query, cancel.clone());
        tokio::pin!(search);
        // After the deadline or `stop`, the child gets a moment to answer.
        let mut grace: Option<Instant> = None;
        let result = loop {
            let wake = grace.or(deadline);
            tokio::select! {
                r = &mut search => break r,
                _ = tokio::time::sleep_until(wake.unwrap_or(self.req.received).into()), if wake.is_some() => {
                    if grace.is_some() {
                        break Err(crate::children::SearchError::Cancelled);
                    }
                    cancel.cancel();
                    grace = Some(self.grace_end());
                }
                _ = self.req.stop.cancelled(), if grace.is_none() => {
                    cancel.cancel();
                    grace = Some(self.grace_end());
                }
                // The clock is ours from now: the child was told (the pool
                // relays the token); the move is due at the cap.
                _ = self.req.ponderhit.cancelled(), if deadline.is_none() && grace.is_none() => {
                    if let Some(time) = after_ponderhit {
                        let hit = Instant::now();
                        deadline = Some(hit + time.cap);
                        self.deadline = deadline;
                        self.hard = Some(hit + time.hard);
                        self.latest = deadline;
                    }
                }
            }
        };
        // Under the lock: no line of this search after it (nor after the
        // `bestmove`).
        *showing.lock().unwrap_or_else(|e| e.into_inner()) = false;
        let report = match result {
            Ok(r) if r.score.is_none() => {
                return Err("the evaluator was stopped before its first iteration".to_owned());
            }
            Ok(r) if self.candidates.contains(&r.best) => r,
            Ok(r) => {
                return Err(format!(
                    "the evaluator's move {} is not among the searchmoves",
                    self.uci(r.best)
                ));
            }
            // Given up at the move's cap (a loaded machine, a child slow
            // to answer `stop`): its latest iteration is a searched move,
            // deeper than what the built-in engine finds in what is left.
            Err(e) if e.is_cancelled() => {
                let latest = last.lock().unwrap_or_else(|e| e.into_inner()).take();
                match latest.filter(|p| p.pv.first().is_some_and(|m| self.candidates.contains(m))) {
                    Some(p) => Report {
                        best: p.pv[0],
                        extra: p.extra,
                        score: p.score,
                        pv: p.pv,
                        depth: p.depth,
                        nodes: p.nodes,
                        search_time: started.elapsed(),
                        busy_time: started.elapsed(),
                        stopped: true,
                        slot: None,
                    },
                    None => return Err("the evaluator did not answer in time".to_owned()),
                }
            }
            Err(e) => return Err(format!("evaluator failed: {e}")),
        };
        let pv = report.line();
        let decision = Decision {
            best: report.best,
            extra: report.extra,
            ponder: pv.get(1).copied(),
            value: report.score,
            pv,
            rule,
            lookahead_choice: None,
            evaluator_choice: report.score.map(|s| (report.best, s)),
            candidates: Vec::new(),
            levels: 0,
            stats: Stats {
                calls: 1,
                nodes: report.nodes,
                busy_time: report.busy_time,
                search_time: report.search_time,
                depth: report.depth,
            },
            root: Some(report),
            root_failure: None,
            cancelled: grace.is_some(),
            spread: None,
            drawn: None,
        };
        self.nodes += decision.stats.nodes;
        Ok(Outcome {
            decision,
            limit,
            settings,
            reported: false,
            why: None,
            first_round: self.rounds.len(),
        })
    }

    /// The built-in engine's own search of the root, in this process, when
    /// the children cannot answer (`why`): until the move's hard limit (or
    /// its deadline when that is earlier); after a
    /// `stop` (the GUI wants the move now) for [`FALLBACK_AFTER_STOP`];
    /// without a deadline, as the `go` line asks (until `stop` under
    /// `infinite`). Its first iteration always completes.
    async fn fallback(&mut self, why: String, settings: Settings) -> Option<Outcome> {
        let mut go = Go::default();
        let mut overhead = Duration::ZERO;
        let mut stop = self.req.stop.clone();
        if self.req.stop.is_cancelled() {
            go.movetime = Some(FALLBACK_AFTER_STOP.as_millis() as u64);
            // Already stopped: only the move time may end this search.
            stop = CancellationToken::new();
        } else if let Some(deadline) = self.deadline {
            let by = self.hard.map_or(deadline, |hard| hard.min(deadline));
            let left = by.saturating_duration_since(Instant::now());
            go.movetime = Some(left.as_millis().max(1) as u64);
        } else {
            go = self.req.go.clone();
            overhead = Duration::from_millis(self.req.options.move_overhead);
        }
        go.searchmoves = self.candidates.iter().map(|m| self.uci(*m)).collect();
        // Its own lines would count its own nodes from zero: the pane
        // shows its result with the rest of the `go`.
        let (muted, gate) = self.req.out.gated();
        gate.shut();
        let request = self.req.fallback.go(
            go,
            self.req.game.clone(),
            muted,
            overhead,
            stop,
            self.req.ponderhit.clone(),
        );
        let started = Instant::now();
        let outcome = builtin_go::search(&request).await?;
        let elapsed = started.elapsed();
        let best = outcome.best?;
        self.nodes += outcome.nodes;
        let decision = Decision {
            best,
            extra: Default::default(),
            ponder: outcome.ponder,
            value: outcome.score.map(Value::from_uci),
            pv: outcome.pv,
            rule: Rule::BuiltinFallback,
            lookahead_choice: None,
            evaluator_choice: None,
            candidates: Vec::new(),
            levels: 0,
            root: None,
            root_failure: None,
            stats: Stats {
                calls: 1,
                nodes: outcome.nodes,
                busy_time: elapsed,
                search_time: elapsed,
                depth: outcome.depth,
            },
            cancelled: false,
            spread: None,
            drawn: None,
        };
        Some(Outcome {
            decision,
            limit: ChildLimit::MoveTime(elapsed),
            settings,
            reported: false,
            why: Some(why),
            first_round: self.rounds.len(),
        })
    }

    /// One lookahead pass, ended early by `stop` and as `ends` says. A complete
    /// pass is reported at once; a cut one only if it is the one played.
    async fn pass(&mut self, mut work: Work, settings: Settings, ends: Ends) -> Option<Outcome> {
        if let Work::Rounds(plan) = &mut work {
            plan.anchor_hint = self.anchor_hint();
        }
        let one_pass = matches!(work, Work::Pass(_));
        let limit = match &work {
            Work::Pass(limit) => *limit,
            Work::Rounds(plan) => plan.first,
        };
        let cancel = CancellationToken::new();
        let out = self.req.out.clone();
        let castling = self.req.game.castling_mode();
        let debug = self.req.debug;
        let pane = self.pane.clone();
        let mut on_candidate = |c: &crate::mpc::Candidate, done: usize| {
            pane.currmove(c.mv, done);
            let mv = UciMove::from_move(c.mv, castling);
            if debug {
                let reply = c.reply.map(|r| UciMove::from_move(r, castling).to_string());
                let what = match (c.value, &c.failure) {
                    (Some(v), _) => format!("value {v}"),
                    (None, Some(f)) => f.to_string(),
                    (None, None) => "no value".to_owned(),
                };
                out.info_string(format!(
                    "candidate {mv} reply {} {what}",
                    reply.as_deref().unwrap_or("-")
                ));
            }
        };
        // Each complete round: its `info` lines; every round, for the trace.
        let base = self.nodes;
        let multi_pv = self.req.options.multi_pv;
        let tracing_rounds = !self.req.options.trace_file.is_empty();
        let mut traced = Vec::new();
        let mut spent = 0;
        // With `MultiPV` above 1, each move's latest value: a later round
        // re-searches only the contenders, and the lines show the best of
        // every move valued so far.
        let mut latest: Vec<Candidate> = Vec::new();
        // The last complete round's decision: the move when the pass, cut
        // short, does not end in time (a child that answers no `stop`).
        let mut last_complete: Option<Decision> = None;
        let mut on_round = |r: &Round<'_>| {
            if tracing_rounds {
                traced.push(trace::round(r, castling));
            }
            if !r.complete {
                return;
            }
            last_complete = Some(r.decision.clone());
            spent += r.decision.stats.nodes;
            if multi_pv > 1 {
                for c in r.decision.candidates.iter().filter(|c| c.value.is_some()) {
                    match latest.iter().position(|l| l.mv == c.mv) {
                        Some(i) => latest[i] = c.clone(),
                        None => latest.push(c.clone()),
                    }
                }
            }
            let (first, others) = lines_of(&pane, r.decision, &latest, settings.lookahead.plies());
            pane.set(first, &others, base + spent);
        };
        let pool = self.req.pool.clone();
        let noise = self.req.noise.clone();
        let game = self.req.game.clone();
        let candidates = self.candidates.clone();
        let far = Instant::now() + Duration::from_secs(365 * 24 * 3600);
        let mut deadline = ends.deadline;
        if deadline.is_some() {
            self.deadline = deadline;
        }
        let watch_ponderhit = !matches!(ends.on_ponderhit, OnPonderHit::Ignore);
        let mut gave_up = false;
        let decision = {
            let work: std::pin::Pin<Box<dyn Future<Output = Option<Decision>> + Send + '_>> =
                match work {
                    Work::Pass(limit) => Box::pin(decide(
                        &pool,
                        &game,
                        &candidates,
                        limit,
                        settings,
                        &cancel,
                        &mut on_candidate,
                    )),
                    Work::Rounds(plan) => Box::pin(decide_in_rounds(
                        &pool,
                        &game,
                        &candidates,
                        *plan,
                        settings,
                        &noise,
                        &cancel,
                        &mut on_candidate,
                        &mut on_round,
                    )),
                };
            tokio::pin!(work);
            let mut hit = false;
            // Once cut short (the deadline, `stop`), the pass has a moment
            // to gather its searches; a child that stays silent (hung,
            // frozen, a partitioned host) is then left behind, and the move
            // comes from the rounds complete by then (or the fallback), in
            // time, not after the child's stall deadline.
            let mut give_up: Option<Instant> = None;
            loop {
                if cancel.is_cancelled() && give_up.is_none() {
                    give_up = Some(self.grace_end());
                }
                tokio::select! {
                    d = &mut work => break d,
                    _ = tokio::time::sleep_until(give_up.unwrap_or(far).into()), if give_up.is_some() => {
                        tracing::warn!("a search did not end {CANCEL_GRACE:?} after it was cut short; deciding without it");
                        gave_up = true;
                        break None;
                    }
                    _ = self.req.stop.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
                    _ = self.req.ponderhit.cancelled(), if watch_ponderhit && !hit && !cancel.is_cancelled() => {
                        hit = true;
                        match &ends.on_ponderhit {
                            OnPonderHit::Cancel => cancel.cancel(),
                            OnPonderHit::StartRounds(clock, time) => {
                                let now = Instant::now();
                                clock.set(round_clock(now, time.soft, time.hard));
                                deadline = Some(now + time.hard);
                                self.deadline = deadline;
                                self.latest = Some(now + time.cap);
                            }
                            // Our clock starts now; a fixed budget keeps off the flag.
                            OnPonderHit::StartClock(Some(guard)) => {
                                deadline = Some(Instant::now() + *guard);
                                self.deadline = deadline;
                                self.latest = deadline;
                            }
                            OnPonderHit::StartClock(None) | OnPonderHit::Ignore => {}
                        }
                    }
                    _ = tokio::time::sleep_until(deadline.unwrap_or(far).into()), if deadline.is_some() && !cancel.is_cancelled() => cancel.cancel(),
                }
            }
        };
        // Left behind (see `give_up`): the last complete round decides.
        let decision = if gave_up {
            last_complete.map(|d| Decision {
                cancelled: true,
                ..d
            })
        } else {
            decision
        };
        let first_round = self.rounds.len();
        self.rounds.append(&mut traced);
        let decision = decision?;
        if tracing_rounds && one_pass {
            // A pass is one round (`deepen` runs several).
            self.rounds
                .push(trace::pass(limit, &decision, !decision.cancelled, castling));
        }
        self.nodes += decision.stats.nodes;
        let mut outcome = Outcome {
            decision,
            limit,
            settings,
            reported: false,
            why: None,
            first_round,
        };
        // A decision no child answered is not the move: the caller falls
        // back, and says what was played.
        if !outcome.decision.cancelled && outcome.decision.rule != Rule::NoAnswer {
            self.report(&outcome);
            outcome.reported = true;
        }
        Some(outcome)
    }

    /// When a search cut short now (a deadline, `stop`) is given up if it
    /// has not ended: [`CANCEL_GRACE`] from now, but never past the latest
    /// the move may be made (at `go movetime 500` the cap is 450 ms, and
    /// 50 ms more lost on time by a few milliseconds).
    fn grace_end(&self) -> Instant {
        let now = Instant::now();
        let end = now + CANCEL_GRACE;
        self.latest.map_or(end, |latest| end.min(latest).max(now))
    }

    /// A sink that shows a child search's iterations in the pane, the
    /// nodes counted for this `go`, while `showing`.
    /// The latest iteration is kept in `last`.
    fn relayed(
        &self,
        showing: Arc<Mutex<bool>>,
        last: Arc<Mutex<Option<Progress>>>,
    ) -> ProgressSink {
        let (pane, before) = (self.pane.clone(), self.nodes);
        ProgressSink::new(move |p: Progress| {
            let showing = showing.lock().unwrap_or_else(|e| e.into_inner());
            if *showing {
                pane.relay(&p, before);
                *last.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
            }
        })
    }

    /// A decision's lines in the pane, and how it was reached: detail
    /// (the rule, the rounds), and a notice for each kind of child fault.
    fn report(&self, o: &Outcome) {
        let d = &o.decision;
        let (first, others) = lines_of(&self.pane, d, &d.candidates, o.settings.lookahead.plies());
        self.pane.set(first, &others, self.nodes);
        self.pane.detail(self.how(o));
        // Child failures other than being cut short are worth a line each kind.
        let mut failures: Vec<String> = d
            .root_failure
            .iter()
            .chain(d.candidates.iter().filter_map(|c| c.failure.as_ref()))
            .filter(|f| f.is_fault())
            .map(ToString::to_string)
            .collect();
        failures.sort_unstable();
        failures.dedup();
        for f in failures.iter().take(3) {
            self.pane.notice(format!("child failure: {f}"));
        }
    }

    /// How a decision was reached, in one line: its rule, and the
    /// lookahead's and the evaluator's choices, the level's draw or the
    /// rounds.
    fn how(&self, o: &Outcome) -> String {
        let d = &o.decision;
        let show = |c: Option<(Move, Value)>| match c {
            Some((m, v)) => format!("{} {v}", self.uci(m)),
            None => "-".to_owned(),
        };
        let finished = d.candidates.iter().filter(|c| c.value.is_some()).count();
        let rule = format!(
            "rule {}: {}",
            trace::rule_key(d.rule),
            trace::rule_text(d.rule)
        );
        if let Some(why) = &o.why {
            return format!("{rule} ({why})");
        }
        if let (Some(c), Some(draw)) = (d.drawn, o.settings.level) {
            let show_candidate = |i: usize| {
                let c = &d.candidates[i];
                show(c.value.map(|v| (c.mv, v)))
            };
            let how = trace::draw_text(c.decided, c.loss, &show_candidate(c.best));
            return format!(
                "{rule}: level {} under {}: {} ({how}); {finished}/{} candidates{}",
                draw.level.elo(),
                o.limit,
                show_candidate(c.index),
                d.candidates.len(),
                if d.cancelled { ", cut short" } else { "" },
            );
        }
        if matches!(d.rule, Rule::EvaluatorOnly | Rule::OneWorker) {
            return format!("{rule}: {} under {}", show(d.evaluator_choice), o.limit);
        }
        let lookahead = format!("{}-step", o.settings.lookahead.name());
        let (margin, spread) = match d.spread {
            // Rounds: the measured margin; how the lookahead's nodes were spread.
            Some(s) => (
                s.margin,
                format!(
                    "; {} rounds, {} calls, {} nodes, {:.0}% of the lookahead's on its top 3 moves{}",
                    s.rounds,
                    d.stats.calls,
                    d.stats.nodes,
                    100.0 * s.top3_nodes as f64 / s.lookahead_nodes.max(1) as f64,
                    d.root.as_ref().map_or(String::new(), |r| format!(
                        "; root search depth {}, {} nodes, {} ms",
                        r.depth,
                        r.nodes,
                        r.search_time.as_millis()
                    )),
                ) + &s.check.map_or(String::new(), |c| {
                    format!(
                        "; deep check: depth {}, {} nodes, {} ({:?})",
                        c.depth,
                        c.nodes,
                        c.value.map_or("no value".to_owned(), |v| v.to_string()),
                        c.verdict
                    )
                }),
            ),
            None => (o.settings.fortify_margin, String::new()),
        };
        let wanted = o.settings.lookahead.levels();
        let levels = if d.levels < wanted {
            format!(" ({} of {wanted} levels)", d.levels)
        } else {
            String::new()
        };
        format!(
            "{lookahead}{levels}, {}: {rule}; lookahead {} vs evaluator {} (margin {margin}); {finished}/{} candidates{}{spread}",
            o.limit,
            show(d.lookahead_choice),
            show(d.evaluator_choice),
            d.candidates.len(),
            if d.cancelled { ", cut short" } else { "" },
        )
    }

    /// Under `go infinite` and `go ponder`, the answer waits for `stop` or
    /// `ponderhit`.
    async fn wait_for_release(&self) {
        if self.req.go.infinite {
            self.req.stop.cancelled().await;
        } else if self.req.go.ponder {
            tokio::select! {
                _ = self.req.stop.cancelled() => {}
                _ = self.req.ponderhit.cancelled() => {}
            }
        }
    }
}

/// Why a pass gave no decision: the candidates are never empty there
/// (a finished root is answered before), so nothing finished in time.
fn no_candidates() -> String {
    "no lookahead round finished in time".to_owned()
}

/// Why a pass that ended with [`Rule::NoAnswer`] has nothing: the first
/// child fault, else that it was cut short.
fn unanswered(d: &Decision) -> String {
    let fault = d
        .root_failure
        .iter()
        .chain(d.candidates.iter().filter_map(|c| c.failure.as_ref()))
        .find(|f| f.is_fault());
    match fault {
        Some(f) => f.to_string(),
        None if d.cancelled => "cut short before any child answered".to_owned(),
        None => "no child answered".to_owned(),
    }
}

/// A decision's lines for the pane: its own move's first, then (when the
/// pane shows more than one) every other root move of `candidates` with a
/// value, all at the decision's depth (the pane shows one set at one
/// depth).
fn lines_of(
    pane: &Pane,
    d: &Decision,
    candidates: &[Candidate],
    plies: u32,
) -> (PvLine, Vec<PvLine>) {
    let depth = d.stats.depth;
    let pv = if d.pv.first() == Some(&d.best) {
        d.pv.clone()
    } else {
        vec![d.best]
    };
    let first = PvLine {
        depth,
        value: d.value,
        pv,
        extra: d.extra,
    };
    let others = candidates
        .iter()
        .filter(|_| pane.shows_others())
        .filter(|c| c.mv != d.best && c.value.is_some())
        .map(|c| PvLine {
            depth,
            value: c.value,
            pv: c.line(),
            extra: c.extra(plies),
        })
        .collect();
    (first, others)
}
