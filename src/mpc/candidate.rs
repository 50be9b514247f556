//! What the lookahead learned of one root move ([`Candidate`]) and why a
//! candidate may have no value ([`Failure`]): the record every pass, the
//! rounds and a level's draw read and write.

use mpcmc_protocol::GameMove;

use crate::mpc::{ChildFault, Extra, Report, Role, Terminal, Value};

/// One root move and what the lookahead learned about it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub mv: GameMove,
    /// The nominal opponent's predicted reply (one-step).
    pub reply: Option<GameMove>,
    /// The nominal opponent's own value of the position after the move,
    /// for us at the root: a second estimate of `V(u)` beside the
    /// evaluator's after the reply, blended into `value` by
    /// [`Settings::reply_weight`].
    pub reply_value: Option<Value>,
    /// The evaluator's own value of the evaluated line, for us at the root,
    /// before [`Settings::reply_weight`] mixed `reply_value` in; `None`
    /// when its call did not finish or gave no score, or the game ended on
    /// the line.
    pub evaluated: Option<Value>,
    /// `V(u)`: the value for us at the root; `None` when unfinished.
    pub value: Option<Value>,
    /// The game ended on the line (decided here, no child asked).
    pub terminal: Option<Terminal>,
    /// The evaluator's report at the evaluated position.
    pub leaf: Option<Report>,
    /// Reports of the calls made for this candidate: for a root move,
    /// every call of its lookahead, deeper steps' included (a step
    /// dropped when cut short too: they were spent); for a move of a
    /// deeper step, its own.
    pub calls: Vec<Report>,
    /// Why the candidate has no value.
    pub failure: Option<Failure>,
    /// The next step, when a multistep lookahead expanded this candidate:
    /// every legal move at the position after `mv` and `reply`, with its
    /// own lookahead from there. `value` is then their best, backed up.
    pub next: Vec<Candidate>,
    /// Its value at its own step, when a deeper step or a level's
    /// second look ([`Look`](crate::mpc::level::Look)) replaced it.
    pub shallow: Option<Value>,
    /// The position after the move stood on the board before in the game
    /// (a repetition, not yet a draw): a won game is not converted by it.
    pub repeats: bool,
}

/// Why a candidate has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The pass ended (stop, a deadline, a stalled child) before the
    /// candidate's calls did.
    Unfinished,
    /// A child's search was stopped before it finished.
    Stopped(Role),
    /// The evaluator finished without a score.
    NoScore,
    /// A child call failed; `stalled` when the child missed its deadline.
    Child {
        role: Role,
        stalled: bool,
        message: String,
    },
}

impl Failure {
    /// A fault of a child (worth telling the user), not the pass being cut.
    pub fn is_fault(&self) -> bool {
        matches!(self, Failure::NoScore | Failure::Child { .. })
    }

    pub(crate) fn of<E: ChildFault>(role: Role, e: &E) -> Failure {
        if e.is_cancelled() {
            Failure::Unfinished
        } else {
            Failure::Child {
                role,
                stalled: e.is_stall(),
                message: e.to_string(),
            }
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Unfinished => f.write_str("cancelled before it finished"),
            Failure::Stopped(role) => write!(f, "{role} stopped before it finished"),
            Failure::NoScore => f.write_str("evaluator gave no score"),
            Failure::Child { role, message, .. } => write!(f, "{role} failed: {message}"),
        }
    }
}

/// The index of the best valued candidate (the argmax); on equal values
/// the first in order wins.
pub(crate) fn best_valued(candidates: &[Candidate]) -> Option<usize> {
    let mut best: Option<(usize, Value)> = None;
    for (i, c) in candidates.iter().enumerate() {
        if let Some(v) = c.value
            && best.is_none_or(|(_, b)| v > b)
        {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

impl Candidate {
    /// The evaluated line from the root: the move, the predicted reply,
    /// then the best line of the next step when it was expanded, else
    /// the evaluator's line.
    pub fn line(&self) -> Vec<GameMove> {
        let mut line = vec![self.mv];
        line.extend(self.reply);
        match self.best_next() {
            Some(next) => line.extend(next.line()),
            None => line.extend(self.leaf.iter().flat_map(|l| l.pv.iter().copied())),
        }
        line
    }

    /// The depth its value stands for: the evaluator's at the leaf plus
    /// the lookahead's `plies` (and two a deeper step).
    pub fn depth(&self, plies: u32) -> Option<u32> {
        match self.best_next() {
            Some(next) => next.depth(2).map(|d| d + plies),
            None => self.leaf.as_ref().map(|leaf| leaf.depth + plies),
        }
    }

    /// What the search behind its value said besides depth and score,
    /// seen from the root: the leaf's, `plies` (two a deeper step) on.
    pub fn extra(&self, plies: u32) -> Extra {
        match self.best_next() {
            Some(next) => next.extra(2).after(plies),
            None => self
                .leaf
                .as_ref()
                .map_or(Extra::default(), |leaf| leaf.extra.after(plies)),
        }
    }

    /// The best valued move of the next step (the first on ties), when
    /// this candidate was expanded.
    pub fn best_next(&self) -> Option<&Candidate> {
        best_valued(&self.next).map(|i| &self.next[i])
    }

    pub(crate) fn new(mv: GameMove) -> Candidate {
        Candidate {
            mv,
            reply: None,
            reply_value: None,
            evaluated: None,
            value: None,
            terminal: None,
            leaf: None,
            calls: Vec::new(),
            failure: None,
            next: Vec::new(),
            shallow: None,
            repeats: false,
        }
    }
}

/// The best valued candidate and its value; ties go to the first in order.
pub(crate) fn best_of(candidates: &[Candidate]) -> Option<(GameMove, Value)> {
    let c = &candidates[best_valued(candidates)?];
    Some((c.mv, c.value?))
}
