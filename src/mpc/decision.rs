//! The vocabulary of a decision: how deep the lookahead goes and its
//! settings ([`Lookahead`], [`Settings`]), which rule chose the move
//! ([`Rule`]) among the candidates (`candidate`), and
//! the outcome ([`Decision`], [`Stats`], and how rounds spread their budget,
//! [`Spread`]). The algorithms that fill these in are `lookahead` (one
//! pass) and `rounds`; the GUI side reads them.

use std::{fmt, str::FromStr, time::Duration};

use mpcmc_protocol::GameMove;

use crate::mpc::{
    ChildLimit, Extra, Report, Value,
    candidate::{Candidate, Failure},
    level::{self, Level},
};

/// How deep the lookahead goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookahead {
    /// Evaluate `x·u` (no opponent).
    Half,
    /// Predict the reply, evaluate `x·u·w`.
    One,
    /// One-step, then one-step again from the most promising `x·u·w`
    /// (the paper's multistep lookahead, its deeper step pruned).
    Two,
    /// Two-step, then one-step again from the most promising positions
    /// of the second step.
    Three,
}

impl Lookahead {
    /// Every lookahead, the cheapest first: the option's values.
    pub const ALL: [Lookahead; 4] = [
        Lookahead::Half,
        Lookahead::One,
        Lookahead::Two,
        Lookahead::Three,
    ];

    /// Plies from the root to a position evaluated at the first step.
    pub fn plies(self) -> u32 {
        match self {
            Lookahead::Half => 1,
            _ => 2,
        }
    }

    /// Steps of lookahead (a step: our move and the predicted reply):
    /// the first is never pruned, the others expand only the most
    /// promising positions of the step above.
    pub fn steps(self) -> u32 {
        match self {
            Lookahead::Half | Lookahead::One => 1,
            Lookahead::Two => 2,
            Lookahead::Three => 3,
        }
    }

    /// Its name: the `Lookahead` option's value, and the trace's.
    pub fn name(self) -> &'static str {
        match self {
            Lookahead::Half => "half",
            Lookahead::One => "one",
            Lookahead::Two => "two",
            Lookahead::Three => "three",
        }
    }

    /// This lookahead, then each cheaper one: what a short clock falls
    /// back to.
    pub fn and_cheaper(self) -> impl Iterator<Item = Lookahead> {
        Lookahead::ALL
            .into_iter()
            .rev()
            .skip_while(move |&l| l != self)
    }

    /// The child calls of a pass over `candidates` root moves when every
    /// expanded position has `moves` legal moves (an estimate: the root's
    /// count) and each deeper step expands `width` positions.
    pub fn calls(self, candidates: usize, moves: usize, width: usize) -> u64 {
        let first = u64::from(self.plies()) * candidates as u64;
        // Step 2 expands root moves; step 3 positions of step 2.
        let expanded = (2..=self.steps())
            .map(|step| {
                if step == 2 {
                    width.min(candidates)
                } else {
                    width
                }
            })
            .sum::<usize>() as u64;
        first + expanded * 2 * moves as u64
    }
}

/// Its name: the `Lookahead` option's value, and the trace's.
impl fmt::Display for Lookahead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`Lookahead`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is none of half, one, two or three")]
pub struct UnknownLookahead(pub String);

impl FromStr for Lookahead {
    type Err = UnknownLookahead;

    /// A lookahead by its name, in any case.
    fn from_str(name: &str) -> Result<Lookahead, UnknownLookahead> {
        let lower = name.to_ascii_lowercase();
        Lookahead::ALL
            .into_iter()
            .find(|l| l.name() == lower)
            .ok_or_else(|| UnknownLookahead(name.to_owned()))
    }
}

/// The decision rule's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub lookahead: Lookahead,
    pub fortify: bool,
    /// Centipawns the lookahead must gain over the evaluator's root value.
    pub fortify_margin: i32,
    /// Positions each step below the first expands (multistep lookahead).
    pub prune_width: usize,
    /// One pass is the paper's even pass: the evaluator's root search
    /// under the calls' limit too (see [`Settings::root_limit`]).
    pub even_root: bool,
    /// Percent of a move's value taken from the nominal opponent's own
    /// score of the position after it (`ReplyWeight`; see
    /// [`Candidate::reply_value`]), the rest from the evaluator's after
    /// the reply.
    pub reply_weight: u32,
    /// Playing at a level: the move is drawn from the valued root moves
    /// ([`Level::choose`]) with this decision's random number, in place of
    /// the argmax and fortification; a pass cut short before every move
    /// was valued plays the root search's move instead. One pass only
    /// (the rounds do not draw).
    pub level: Option<Draw>,
    /// The person the nominal opponent models, at their rating
    /// (`UCI_Opponent`): its calls search at most that level's budget
    /// ([`Level::call_nodes`]), its move the mode of the level's draw.
    /// `None`: the child at the calls' own limit.
    pub person: Option<Level>,
}

/// A level and the random number of one decision's draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Draw {
    pub level: Level,
    pub random: u64,
    /// The last decision found the game decided, so this pass's calls
    /// search a decided game's budget ([`Level::decided_call_nodes`], the
    /// deep search such a game gets), and no move is given a second look
    /// (the level's budget then counts none). Otherwise
    /// a decided choice (a decisive win or a mate the pass found at the
    /// level's small budget) is looked at like a drawn move.
    pub decided: bool,
}

/// `PruneWidth`'s default: positions each deeper step expands.
pub const PRUNE_WIDTH: usize = 3;

/// `ReplyWeight`'s default with warm children (`Memoryless=false`); the
/// paper's memoryless setting keeps 0.
pub const REPLY_WEIGHT: u32 = 50;

impl Settings {
    /// `lookahead` fortified, with no extra margin, [`PRUNE_WIDTH`], a root
    /// search as long as the first step's line, and the evaluator's values
    /// unmixed (`ReplyWeight` 0, the paper's rule).
    pub const fn new(lookahead: Lookahead) -> Settings {
        Settings {
            lookahead,
            fortify: true,
            fortify_margin: 0,
            prune_width: PRUNE_WIDTH,
            even_root: false,
            reply_weight: 0,
            level: None,
            person: None,
        }
    }

    /// The nominal opponent's limit in a pass whose calls are under
    /// `limit`: when a person is modelled, no more than their level's
    /// budget (any limit but a node budget becomes that budget: a
    /// person's strength is not our clock's).
    pub fn opponent_limit(&self, limit: ChildLimit) -> ChildLimit {
        match (self.person.map(Level::call_nodes), limit) {
            (None, limit) => limit,
            (Some(cap), ChildLimit::Nodes(n)) => ChildLimit::Nodes(n.min(cap)),
            (Some(cap), _) => ChildLimit::Nodes(cap),
        }
    }

    /// The evaluator's root search in a pass whose calls are under `limit`.
    /// As the fortification reference it runs beside the first step for
    /// as long as that step's line of calls takes, one after the other (ν
    /// then E: twice the limit; E alone in half-step: once), so it costs
    /// the pass no wall time when every call has a worker and the move the
    /// lookahead must beat is the base engine's at that time. Under the
    /// calls' limit in the paper's even pass, and without fortification
    /// (its move is then only the fallback).
    pub fn root_limit(&self, limit: ChildLimit) -> ChildLimit {
        if self.even_root || !self.fortify {
            limit
        } else {
            limit.scaled(self.lookahead.plies())
        }
    }
}

/// Which rule chose the move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The lookahead's argmax (fortification off, or passed).
    Lookahead,
    /// Fortification kept the evaluator's move.
    Fortified,
    /// The lookahead's best beat the evaluator's move by the margin, but
    /// the evaluator's deep check of it did not confirm it: the
    /// evaluator's move.
    Refuted,
    /// The lookahead's best beat the evaluator's move by the margin, but
    /// could not be checked (stopped, out of time): the evaluator's move.
    Unchecked,
    /// No candidate finished, or at a level the pass was cut short before
    /// every root move was valued: the evaluator's own move.
    EvaluatorFallback,
    /// Too little time for a lookahead: the evaluator's own move, by plan.
    EvaluatorOnly,
    /// One worker on a game clock or a move time: the evaluator's own
    /// move, its search keeping the time, by plan (rounds would take their
    /// time from it).
    OneWorker,
    /// Playing at a level: drawn from the valued root moves by the
    /// level's distribution over their loss ([`Level::choose`]).
    Level,
    /// No child answered at all: the first candidate, so a legal move is played.
    /// The GUI side never plays it: it asks the built-in engine instead.
    NoAnswer,
    /// The children could not answer in time: the built-in engine searched
    /// the root in process (decided by the GUI side, not by this module).
    BuiltinFallback,
}

impl Rule {
    /// Every rule.
    pub const ALL: [Rule; 10] = [
        Rule::Lookahead,
        Rule::Fortified,
        Rule::Refuted,
        Rule::Unchecked,
        Rule::EvaluatorFallback,
        Rule::EvaluatorOnly,
        Rule::OneWorker,
        Rule::Level,
        Rule::NoAnswer,
        Rule::BuiltinFallback,
    ];

    /// Its name in the trace and the `info string`.
    pub fn key(self) -> &'static str {
        match self {
            Rule::Lookahead => "lookahead",
            Rule::Fortified => "fortified",
            Rule::Refuted => "refuted",
            Rule::Unchecked => "unchecked",
            Rule::EvaluatorFallback => "evaluator_fallback",
            Rule::EvaluatorOnly => "evaluator_only",
            Rule::OneWorker => "one_worker",
            Rule::Level => "level",
            Rule::NoAnswer => "no_answer",
            Rule::BuiltinFallback => "builtin_fallback",
        }
    }

    /// What it means, for a person (the trace's and the `info string`'s
    /// words).
    pub fn meaning(self) -> &'static str {
        match self {
            Rule::Lookahead => "the lookahead's best move",
            Rule::Fortified => {
                "the evaluator's own move, kept: the lookahead did not beat it by the margin"
            }
            Rule::Refuted => {
                "the evaluator's own move: the lookahead's best beat it by the margin, but the deep check refuted it"
            }
            Rule::Unchecked => {
                "the evaluator's own move: the lookahead's best beat it by the margin, but there was no time or nodes to check it"
            }
            Rule::EvaluatorFallback => {
                "the evaluator's own move: the lookahead did not finish (no candidate did; at a level, not every root move was valued in time)"
            }
            Rule::EvaluatorOnly => "the evaluator's own move: too little time for a lookahead",
            Rule::OneWorker => {
                "the evaluator's own move on the game's time: with one worker, rounds would take their time from it (the lookahead on a clock or a move time needs Threads / ChildThreads of 2 or more)"
            }
            Rule::Level => {
                "drawn at the level (UCI_LimitStrength) from every valued root move, by how much each gives up against the best"
            }
            Rule::NoAnswer => "no child answered: the first legal move",
            Rule::BuiltinFallback => {
                "the built-in engine's move: the children did not answer in time"
            }
        }
    }

    /// The evaluator's own root search chose the move, over (or without)
    /// the lookahead.
    pub fn keeps_root(self) -> bool {
        matches!(
            self,
            Rule::Fortified | Rule::Refuted | Rule::Unchecked | Rule::EvaluatorFallback
        )
    }
}

/// Its [`Rule::key`].
impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A name that is no [`Rule`]'s key (a trace of another version).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is no rule's name")]
pub struct UnknownRule(pub String);

impl FromStr for Rule {
    type Err = UnknownRule;

    fn from_str(key: &str) -> Result<Rule, UnknownRule> {
        Rule::ALL
            .into_iter()
            .find(|r| r.key() == key)
            .ok_or_else(|| UnknownRule(key.to_owned()))
    }
}

/// The outcome of one pass.
#[derive(Debug, Clone)]
pub struct Decision {
    pub best: GameMove,
    /// What the search that decided said besides depth and score: the
    /// root search's when it chose the move, else the played line's.
    pub extra: Extra,
    /// The expected reply to `best`.
    pub ponder: Option<GameMove>,
    /// Value for us at the root of the chosen move.
    pub value: Option<Value>,
    /// Our move, the predicted reply, then the evaluator's line.
    pub pv: Vec<GameMove>,
    pub rule: Rule,
    /// The lookahead's own choice and value, and the evaluator's, for the trace.
    pub lookahead_choice: Option<(GameMove, Value)>,
    pub evaluator_choice: Option<(GameMove, Value)>,
    /// In candidate order.
    pub candidates: Vec<Candidate>,
    pub root: Option<Report>,
    /// Why the evaluator's root search gave nothing, if it did not.
    pub root_failure: Option<Failure>,
    pub stats: Stats,
    /// The pass was cut short, at any of its steps: by cancellation, or
    /// because a child stalled.
    pub cancelled: bool,
    /// How a decision in rounds spread its budget.
    pub spread: Option<Spread>,
    /// Steps of lookahead that completed (a deeper step cut short
    /// leaves the values of the step above).
    pub steps: u32,
    /// The level's draw, when one chose the move.
    pub drawn: Option<level::Choice>,
    /// The level's second looks at drawn moves, in order: the last one
    /// not refuted looked at the move played.
    pub looks: Vec<level::Look>,
}

/// Sums over every child report of a pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub calls: u64,
    pub nodes: u64,
    pub busy_time: Duration,
    pub search_time: Duration,
    /// Deepest evaluator search at a chosen leaf, plus the lookahead plies.
    pub depth: u32,
}

impl Stats {
    /// Adds the calls of another pass (its `depth` is not summed).
    pub fn merge(&mut self, other: &Stats) {
        self.calls += other.calls;
        self.nodes += other.nodes;
        self.busy_time += other.busy_time;
        self.search_time += other.search_time;
    }

    pub(crate) fn add(&mut self, r: &Report) {
        self.calls += 1;
        self.nodes += r.nodes;
        self.busy_time += r.busy_time;
        self.search_time += r.search_time;
    }
}

impl Decision {
    /// The root search's own move as the decision (`rule`), with its line,
    /// score and cost; no candidate valued. `None` when it had no move
    /// (a finished game).
    pub fn of_root(report: Report, rule: Rule) -> Option<Decision> {
        let pv = report.line();
        let best = report.best?;
        Some(Decision {
            best,
            extra: report.extra,
            ponder: pv.get(1).copied(),
            value: report.score,
            pv,
            rule,
            lookahead_choice: None,
            evaluator_choice: report.score.map(|s| (best, s)),
            candidates: Vec::new(),
            steps: 0,
            stats: Stats {
                calls: 1,
                nodes: report.nodes,
                busy_time: report.busy_time,
                search_time: report.search_time,
                depth: report.depth,
            },
            root: Some(report),
            root_failure: None,
            cancelled: false,
            spread: None,
            drawn: None,
            looks: Vec::new(),
        })
    }

    /// Every value exact: the decision asked no child (each move ends the
    /// game by rule). A later pass or round would find the same, at once.
    pub fn exact(&self) -> bool {
        self.stats.calls == 0
    }

    /// The root search's move, when it completed an iteration (it has a
    /// score) and names a candidate.
    pub fn root_move(&self) -> Option<GameMove> {
        self.root
            .as_ref()
            .filter(|r| r.score.is_some())
            .and_then(|r| r.best)
            .filter(|b| self.candidates.iter().any(|c| c.mv == *b))
    }

    /// Plays `mv` by `rule`, with the line and value of what chose it: the
    /// root search's when the rule kept the evaluator's own move over the
    /// lookahead (its deeper line is what decided), else the move's
    /// candidate's when the lookahead valued it (`plies` deep), else the
    /// root search's.
    pub fn play(&mut self, mv: GameMove, rule: Rule, plies: u32) {
        let root_score = self.evaluator_choice.map(|(_, s)| s);
        let root = self.root.as_ref().filter(|r| r.best == Some(mv));
        let by_root = rule.keeps_root() && root.is_some_and(|r| r.score.is_some());
        let candidate = self
            .candidates
            .iter()
            .find(|c| c.mv == mv && c.value.is_some());
        // The predicted reply is the nominal opponent's whenever it made
        // one: the seed of the next decision and the hit rate count it.
        let reply = candidate.and_then(|c| {
            c.reply
                .or_else(|| c.leaf.as_ref().and_then(|l| l.pv.first().copied()))
        });
        match (candidate, root) {
            (Some(c), _) if !by_root => {
                if let Some(depth) = c.depth(plies) {
                    self.stats.depth = depth;
                }
                self.extra = c.extra(plies);
                self.ponder = reply;
                self.value = c.value.or(root_score);
                self.pv = c.line();
            }
            (_, Some(r)) => {
                self.stats.depth = r.depth;
                self.extra = r.extra;
                self.pv = r.line();
                self.ponder = reply.or_else(|| self.pv.get(1).copied());
                self.value = r.score;
            }
            _ => {
                self.pv = vec![mv];
                self.ponder = None;
                self.value = None;
            }
        }
        self.best = mv;
        self.rule = rule;
    }
}

/// What the deep check of a deviation decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckVerdict {
    /// Within [`CHECK_TOLERANCE`](crate::mpc::rounds::CHECK_TOLERANCE) of
    /// the root search's value: played.
    Passed,
    /// Further below: the root search's move is played.
    Refuted,
    /// No value in time (`stop`, the move's hard limit) or the child
    /// failed: the root search's move is played.
    Unchecked,
}

/// Its name in the trace: `passed`, `refuted` or `unchecked`.
impl fmt::Display for CheckVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CheckVerdict::Passed => "passed",
            CheckVerdict::Refuted => "refuted",
            CheckVerdict::Unchecked => "unchecked",
        })
    }
}

/// What the deep check of a deviation found (for the `info string`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeepCheck {
    /// The deviation's value for us by the check.
    pub value: Option<Value>,
    pub depth: u32,
    pub nodes: u64,
    pub verdict: CheckVerdict,
}

/// How a decision in rounds spread its budget (for the `info string`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spread {
    /// Complete rounds.
    pub rounds: u32,
    /// Centipawns a deviation from the anchor had to clear.
    pub margin: i32,
    /// Lookahead nodes spent on the three moves that got the most.
    pub top3_nodes: u64,
    /// All lookahead nodes (the root search's not included).
    pub lookahead_nodes: u64,
    /// The deep check of a deviation, when the lookahead's best beat the
    /// anchor by the margin.
    pub check: Option<DeepCheck>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for rule in Rule::ALL {
            assert_eq!(rule.to_string().parse::<Rule>(), Ok(rule));
            assert!(!rule.meaning().is_empty());
        }
        // Every key once: no two rules read back as one.
        let mut keys: Vec<_> = Rule::ALL.map(Rule::key).to_vec();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Rule::ALL.len());
        assert_eq!(
            "chosen".parse::<Rule>(),
            Err(UnknownRule("chosen".to_owned()))
        );
        for lookahead in Lookahead::ALL {
            assert_eq!(lookahead.to_string().parse(), Ok(lookahead));
        }
        assert_eq!("Two".parse(), Ok(Lookahead::Two));
        assert!("four".parse::<Lookahead>().is_err());
    }
}
