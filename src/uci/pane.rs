//! What a GUI sees of one `go`: its thinking lines as one story, and the
//! few `info string`s a user must read.
//!
//! The strategies of [`crate::uci::search`] feed it (a round's values, a
//! child's iteration, the decision) and it keeps the story consistent,
//! whatever the lookahead, `MultiPV` or the number of workers:
//!
//! - `depth` is the depth behind the value shown: the evaluator's depth at
//!   the end of the line plus the lookahead's plies on it, or the depth of
//!   the root search when that search decided alone. Within one `go` it
//!   never goes down (a later line shallower than one shown is shown at the
//!   depth already reached).
//! - `nodes` and `time` count every child's work since the `go` arrived,
//!   and never go down.
//! - A `MultiPV` report is one set: every line at the set's depth,
//!   `multipv 1` the move that would be played, the others best first,
//!   none above the first (a line the decision valued above the move it
//!   plays, within the fortification margin or at a level, is shown at the
//!   played move's value).
//! - Before `bestmove`, the last line is the move played, with its value
//!   ([`Pane::finish`]).
//! - A decision's rule and rounds are detail: `info string` only with
//!   `ShowDecisions` (else the log); what a user must know (a failed
//!   child, a book move, a refused input) is always said.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use mpcmc_protocol::{GameMove, MoveText};
use mpcmc_protocol::{Info, output::Output};

use crate::{
    mpc::{Extra, Game, Progress, Value},
    uci::options::Options,
};

/// The shortest time between two of a child's iterations relayed to the
/// GUI: 50 lines a second. A child printing 200 000 `info` lines a search
/// turned python-chess's `Limit(time=0.5)` into 0.87 s, and a slower
/// reader's `go movetime 500` into 22 s.
const RELAY_EVERY: Duration = Duration::from_millis(20);

/// The longest a search goes without a line that counts its work
/// ([`Pane::pulse`]): GUIs show time and nodes from these lines.
pub const PULSE_EVERY: Duration = Duration::from_secs(1);

/// One line of a set: a root move, its value and the line after it.
#[derive(Debug, Clone, PartialEq)]
pub struct PvLine {
    /// The depth behind its value (see the module's documentation).
    pub depth: u32,
    pub value: Option<Value>,
    /// Starts with the root move.
    pub pv: Vec<GameMove>,
    /// The rest its search said (`seldepth`, `hashfull`, `tbhits`, `wdl`).
    pub extra: Extra,
}

/// What one `go` has shown so far.
#[derive(Debug, Default)]
struct Shown {
    depth: u32,
    nodes: u64,
    /// When a child's iteration was last relayed.
    relayed: Option<Instant>,
    /// When a line with counts (a set, a relayed iteration, a pulse) was
    /// last written.
    counted: Option<Instant>,
    /// The first line of the last set shown: its move and value.
    last: Option<(Option<GameMove>, Option<Value>)>,
}

struct Inner {
    out: Output,
    /// When the `go` arrived: `time` counts from here.
    received: Instant,
    game: Arc<Game>,
    multi_pv: u32,
    /// `ShowDecisions`: the decision's detail as `info string`s.
    details: bool,
    /// `UCI_ShowWDL`: `wdl` on the lines whose search gave one.
    show_wdl: bool,
    shown: Mutex<Shown>,
}

/// The thinking pane of one `go` (cheap to clone: a child's progress sink
/// holds one).
#[derive(Clone)]
pub struct Pane(Arc<Inner>);

impl Pane {
    /// The pane of a `go` that arrived at `received`, in `game`, as the
    /// `options` ask (`MultiPV`, `ShowDecisions`, `UCI_ShowWDL`).
    pub fn new(out: Output, received: Instant, game: Arc<Game>, options: &Options) -> Pane {
        Pane(Arc::new(Inner {
            out,
            received,
            game,
            multi_pv: options.multi_pv.max(1),
            details: options.show_decisions,
            show_wdl: options.show_wdl,
            shown: Mutex::new(Shown::default()),
        }))
    }

    /// Whether a report shows more than the move played (`MultiPV`): the
    /// other lines need not be built otherwise.
    pub fn shows_others(&self) -> bool {
        self.0.multi_pv > 1
    }

    fn shown(&self) -> std::sync::MutexGuard<'_, Shown> {
        self.0.shown.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The counts of a line: at least the nodes shown before, the time
    /// since the `go`.
    fn counts(&self, shown: &mut Shown, nodes: u64) -> Info {
        shown.nodes = shown.nodes.max(nodes);
        shown.counted = Some(Instant::now());
        Info::counts(shown.nodes, self.0.received.elapsed())
    }

    /// `info nodes … nps … time …` (no depth, no line: a GUI's adapter
    /// makes no thinking line of it), when no line has said them for
    /// [`PULSE_EVERY`]: a long round in analysis showed nothing for over a
    /// minute, and XBoard's clock looked frozen. `nodes`: the `go`'s work
    /// counted so far (never shown below a count shown before).
    pub fn pulse(&self, nodes: u64) {
        let mut shown = self.shown();
        if shown.counted.is_some_and(|t| t.elapsed() < PULSE_EVERY) {
            return;
        }
        let counts = self.counts(&mut shown, nodes);
        self.0.out.info(counts);
    }

    /// One report: `first`, the move that would be played, then with
    /// `MultiPV` above 1 the best of `others` (the other root moves with a
    /// value, any order), `nodes` the work of the whole `go` so far.
    pub fn set(&self, first: PvLine, others: &[PvLine], nodes: u64) {
        let mut shown = self.shown();
        self.write_set(&mut shown, first, others, nodes);
    }

    fn write_set(&self, shown: &mut Shown, first: PvLine, others: &[PvLine], nodes: u64) {
        shown.depth = shown.depth.max(first.depth).max(1);
        let base = Info {
            depth: Some(shown.depth),
            ..self.counts(shown, nodes)
        };
        let multi = self.0.multi_pv > 1;
        let top = first.value;
        let played = first.pv.first().copied();
        let mut rest: Vec<&PvLine> = others.iter().collect();
        rest.sort_by_key(|l| std::cmp::Reverse(l.value));
        rest.truncate(self.0.multi_pv as usize - 1);
        shown.last = Some((played, top));
        let line = |k: u32, value: Option<Value>, l: &PvLine| Info {
            multipv: multi.then_some(k),
            score: value.map(Value::to_uci),
            pv: uci_line(&self.0.game, &l.pv),
            ..self.with_extra(base.clone(), l.extra)
        };
        self.0.out.info(line(1, top, &first));
        for (l, k) in rest.into_iter().zip(2..) {
            let value = match (l.value, top) {
                (Some(v), Some(top)) => Some(v.min(top)),
                (v, _) => v,
            };
            self.0.out.info(line(k, value, l));
        }
    }

    /// `info` with what a search said besides depth and score: its
    /// `seldepth` (never below the depth shown), `hashfull`, `tbhits`,
    /// and with `UCI_ShowWDL` its `wdl`.
    fn with_extra(&self, info: Info, extra: Extra) -> Info {
        let depth = info.depth.unwrap_or(0);
        Info {
            seldepth: extra.seldepth.map(|s| s.max(depth)),
            hashfull: extra.hashfull,
            tbhits: extra.tbhits,
            wdl: extra.wdl.filter(|_| self.0.show_wdl),
            ..info
        }
    }

    /// The decision's set before its `bestmove`, unless it is what the
    /// pane shows last already: the last line is then the move played.
    pub fn finish(&self, first: PvLine, others: &[PvLine], nodes: u64) {
        let mut shown = self.shown();
        if shown.last == Some((first.pv.first().copied(), first.value)) {
            return;
        }
        self.write_set(&mut shown, first, others, nodes);
    }

    /// A child's iteration, when the child's search is the decision:
    /// at most one each [`RELAY_EVERY`]; `before` the nodes of this `go`
    /// before that search. With `MultiPV`, the child's own lines of the
    /// iteration make the set.
    pub fn relay(&self, p: &Progress, before: u64) {
        let mut shown = self.shown();
        if shown.relayed.is_some_and(|t| t.elapsed() < RELAY_EVERY) {
            return;
        }
        shown.relayed = Some(Instant::now());
        let line = |value, pv: &[GameMove], extra| PvLine {
            depth: p.depth,
            value,
            pv: pv.to_vec(),
            extra,
        };
        let others: Vec<PvLine> = p
            .others
            .iter()
            .map(|o| line(o.score, &o.pv, Extra::default()))
            .collect();
        self.write_set(
            &mut shown,
            line(p.score, &p.pv, p.extra),
            &others,
            before + p.nodes,
        );
    }

    /// `currmove`: the lookahead has valued its `done`-th root move.
    pub fn currmove(&self, mv: GameMove, done: usize) {
        self.0.out.info(Info {
            currmove: Some(mv.text(self.0.game.castling_mode())),
            currmovenumber: u32::try_from(done).ok(),
            ..Info::default()
        });
    }

    /// How the decision was reached: an `info string` with
    /// `ShowDecisions`, else the log.
    pub fn detail(&self, text: impl std::fmt::Display) {
        if self.0.details {
            self.0.out.info_string(text);
        } else {
            tracing::info!("{text}");
        }
    }

    /// What the user must know (a child that failed, a book move, input
    /// refused): always an `info string`.
    pub fn notice(&self, text: impl std::fmt::Display) {
        self.0.out.info_string(text);
    }
}

/// A line of moves from the `game`'s position as the GUI reads it: up to
/// the move that ends the game ([`Game::until_end`]).
pub fn uci_line(game: &Game, line: &[GameMove]) -> Vec<MoveText> {
    let castling = game.castling_mode();
    game.until_end(line)
        .iter()
        .map(|m| m.text(castling))
        .collect()
}
