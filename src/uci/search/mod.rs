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
//!
//! Where things are: this file runs the `go` ([`run`]: the book, the
//! decision, the one `bestmove`) and holds what every strategy shares
//! (`Search`); `plan.rs` turns the limits into a plan; one file a
//! strategy — `pass.rs` (a pass or rounds under a fixed budget, and the
//! loop every lookahead runs in), `timed.rs` (the clock, a move time),
//! `deepen.rs` (until `stop`), `level.rs` (`UCI_LimitStrength`),
//! `evaluator_only.rs` (the root search alone), `fallback.rs` (the
//! built-in engine); `report.rs` what the GUI and the trace are shown.
//! The move's clock is [`crate::mpc::time::MoveClock`], resolved once a
//! `go`; what decisions carry to the next is [`crate::uci::carry`].

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use mpcmc_protocol::{GameMove, MoveText};
use mpcmc_protocol::{Go, output::Output};
use tokio_util::sync::CancellationToken;

use crate::{
    book::{self, Book},
    children::Pool,
    mpc::{
        ChildLimit, Decision, Extra, Game, Rule, Settings,
        level::{BOOK_EFFORT, effort},
        noise::Noise,
        rounds::{ClockCell, branching},
        tablebase::Tables,
        time::{CANCEL_GRACE, MoveClock, MoveTime},
    },
    uci::{
        carry::CarryCell,
        lateness::{Lateness, watch_scheduling},
        options::Options,
        pane::{Pane, PvLine},
        trace,
    },
};

mod deepen;
mod evaluator_only;
mod fallback;
mod level;
mod pass;
mod plan;
mod report;
mod timed;

pub use fallback::Fallback;
pub use plan::BARE_GO_CALL_NODES;
use plan::{Due, Plan, plan};
use report::lines_of;

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
    /// The tablebases (`SyzygyPath`), when open.
    pub tables: Option<Arc<Tables>>,
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

async fn decide_and_answer(mut req: GoRequest) {
    if let Ok(mut lateness) = req.lateness.lock() {
        lateness.on_go(&req.game, &req.go);
    }
    if req.game.position().is_none() {
        // A game by a child's rules: its moves, from the child (a second
        // child when the first failed: `list` quit it).
        let listed = match req.pool.list(&req.game).await {
            Ok(listed) => Ok(listed),
            Err(_) => req.pool.list(&req.game).await,
        };
        match listed {
            Ok(listed) => {
                for note in listed.notes {
                    req.out.info_string(note);
                }
                req.game = Arc::new(listed.game);
            }
            Err(e) => req.out.info_string(format!(
                "the legal moves of this {} position could not be listed: {e}",
                req.game.rules()
            )),
        }
    }
    let mut search = Search::new(req);
    if search.candidates.is_empty() && search.req.game.position().is_none() {
        // A game by a child's rules that ended here (or whose moves could
        // not be listed): no move, when the GUI wants the answer.
        search.wait_for_release().await;
        search.req.out.bestmove(&search.req.game, None, None);
        return;
    }
    // Pondering, the last move is our guess: counted once it is played.
    let pondering = search.req.go.ponder;
    if !pondering {
        search.count_reply();
    }
    if let Some((mv, effort)) = search
        .book_move()
        .map(|mv| (mv, BOOK_EFFORT))
        .or_else(|| search.tablebase_move().map(|mv| (mv, 0.0)))
    {
        let ponder = search.ponder_on(mv, None).await;
        search.think_like_a_person(effort).await;
        search.wait_for_release().await;
        let game = &search.req.game;
        search.req.out.bestmove(game, Some(mv), ponder);
        return;
    }
    let decision = search.decide().await;
    // A worker down or up again (`Workers` over other machines).
    for line in search.req.pool.news() {
        search.pane.notice(line);
    }
    if let Some(d) = &decision
        && let Some(drawn) = &d.drawn
    {
        search
            .think_like_a_person(effort(&d.candidates, drawn))
            .await;
    }
    let best = match &decision {
        Some(d) => Some(d.best),
        None => search.candidates.first().copied(),
    };
    let predicted = decision.as_ref().and_then(|d| d.ponder);
    let ponder = match best {
        Some(best) => search.ponder_on(best, predicted).await,
        None => None,
    };
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
    let game = &search.req.game;
    search.req.out.bestmove(game, best, ponder);
    // How late, for the next moves' margin: a pondered move is not
    // measured (the GUI's clock ran from `ponderhit`).
    if !pondering
        && let Some(mv) = best
        && let Ok(mut lateness) = search.req.lateness.lock()
    {
        let now = Instant::now();
        let late = search
            .clock
            .deadline
            .map(|d| now.saturating_duration_since(d));
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
    /// This move's clock, resolved once when the `go` arrives (its
    /// overhead read then: [`Search::overhead_now`]).
    clock: MoveClock,
    candidates: Vec<GameMove>,
    /// Nodes over all passes of this `go`.
    nodes: u64,
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
        let legal = req.game.legal_moves();
        let mut candidates: Vec<GameMove> = Vec::new();
        for uci in &req.go.searchmoves {
            match req.game.read_after(&[], uci) {
                Some(m) if !candidates.contains(&m) => candidates.push(m),
                Some(_) => {}
                None => pane.notice(format!("searchmoves: '{uci}' is not legal here; ignored")),
            }
        }
        if candidates.is_empty() {
            candidates = legal;
        }
        let overhead = Search::overhead_now(&req);
        let clock = MoveClock::new(&req.go, req.game.turn(), overhead);
        Search {
            req,
            pane,
            clock,
            candidates,
            nodes: 0,
            rounds: Vec::new(),
            trace: None,
        }
    }

    fn uci(&self, m: GameMove) -> MoveText {
        m.text(self.req.game.castling_mode())
    }

    /// How wide a deeper step is ([`branching`]).
    fn branching(&self) -> usize {
        branching(&self.req.game, self.candidates.len())
    }

    /// The decision, or `None` at a finished root or when not even the
    /// built-in engine answered.
    async fn decide(&mut self) -> Option<Decision> {
        if self.candidates.is_empty() {
            return None;
        }
        let config = Some(self.req.pool.config());
        let settings = self.req.options.settings_in(config);
        let breadth = (self.candidates.len(), self.branching());
        let (go, options) = (&self.req.go, &self.req.options);
        let result = match plan(go, options, config, settings, self.clock.time, breadth) {
            Plan::Level(level) => self.at_level(level, settings).await,
            Plan::Fixed(work) => {
                // Pondering, the clock is not ours until `ponderhit`.
                let ends = if self.req.go.ponder {
                    Ends {
                        deadline: None,
                        on_ponderhit: OnPonderHit::StartClock(self.clock.guard),
                    }
                } else {
                    Ends {
                        deadline: self
                            .clock
                            .guard
                            .map(|g| self.clock.guarded_from(self.req.received, g)),
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
                None => self.deepen(settings).await.ok_or_else(no_candidates),
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

    /// The move to ponder on after `best`: `predicted` when the decision
    /// made one, else the built-in engine's quick reply
    /// ([`Fallback::reply`]), so that a GUI that ponders (lichess-bot,
    /// python-chess) has a move to ponder on while the game goes on.
    async fn ponder_on(&self, best: GameMove, predicted: Option<GameMove>) -> Option<GameMove> {
        match predicted {
            Some(reply) => Some(reply),
            None => self.req.fallback.reply(&self.req.game, best).await,
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
    fn anchor_hint(&self) -> Option<GameMove> {
        let carry = self.req.carry.lock().ok()?;
        carry.anchor_hint(&self.req.game, &self.candidates)
    }

    /// A move drawn from the opening book, weighted as it says, when one
    /// is open and has a move here that `go` allows (analysis, `go
    /// infinite`, searches instead). An `info string` names it.
    fn book_move(&self) -> Option<GameMove> {
        let book = self.req.book.as_ref().filter(|_| !self.req.go.infinite)?;
        // Books are of chess games.
        let pos = self.req.game.chess()?;
        let moves: Vec<_> = book
            .moves(pos)
            .into_iter()
            .filter(|b| self.candidates.contains(&GameMove::Board(b.mv)))
            .collect();
        let chosen = book::draw(&moves, self.random())?;
        let total: u32 = moves.iter().map(|b| b.weight).sum();
        self.pane.notice(format!(
            "book move {} (weight {} of {total}, {} book moves here)",
            self.uci(GameMove::Board(chosen.mv)),
            chosen.weight,
            moves.len()
        ));
        Some(GameMove::Board(chosen.mv))
    }

    /// The tables' move when they hold the root (few pieces, no castling
    /// rights) and `go` allows it: exact, so no search. Its line shows the
    /// tables' value (a `cp` above 20000 for a win) and `tbhits`.
    fn tablebase_move(&self) -> Option<GameMove> {
        let tables = self.req.tables.as_ref()?;
        // Syzygy tables are chess's.
        let (mv, value) = tables.best_move(self.req.game.chess()?)?;
        let mv = GameMove::Board(mv);
        if !self.candidates.contains(&mv) {
            return None;
        }
        let line = PvLine {
            depth: 1,
            value: Some(value),
            pv: vec![mv],
            extra: Extra {
                tbhits: Some(1),
                ..Extra::default()
            },
        };
        self.pane.set(line, &[], 0);
        self.pane
            .detail(format!("tablebase move {} ({value})", self.uci(mv)));
        Some(mv)
    }

    /// The next random number of the game's draws.
    fn random(&self) -> u64 {
        let mut carry = self.req.carry.lock().unwrap_or_else(|e| e.into_inner());
        carry.random(self.req.options.seed)
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

    /// When a search cut short now (a deadline, `stop`) is given up if it
    /// has not ended: [`CANCEL_GRACE`] from now, but never past the latest
    /// the move may be made (at `go movetime 500` the cap is 450 ms, and
    /// 50 ms more lost on time by a few milliseconds).
    fn grace_end(&self) -> Instant {
        let now = Instant::now();
        let end = now + CANCEL_GRACE;
        self.clock
            .latest
            .map_or(end, |latest| end.min(latest).max(now))
    }

    /// With `HumanTime`, at a level on a game clock (not `movetime`,
    /// pondering or analysis), holds the move until `effort` times the
    /// move's time ([`MoveTime::soft`]) has passed since the `go`, as a
    /// person would think over it ([`effort`]), never past the move's hard
    /// limit; `stop` ends the hold at once. A move with nothing to choose
    /// (one legal move) is not held.
    async fn think_like_a_person(&self, effort: f64) {
        let (go, options) = (&self.req.go, &self.req.options);
        let asked = options.human_time && options.limit_strength;
        let Some(time) = self.clock.time.filter(|_| asked) else {
            return;
        };
        if go.ponder || go.infinite || go.movetime.is_some() || self.candidates.len() < 2 {
            return;
        }
        let hold = time.soft.mul_f64(effort.max(0.0)).min(time.hard);
        let until = tokio::time::Instant::from_std(self.req.received + hold);
        tokio::select! {
            () = self.req.stop.cancelled() => {}
            () = tokio::time::sleep_until(until) => {}
        }
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
