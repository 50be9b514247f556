//! The decision trace (`TraceFile`): one JSON object a decision, one line
//! each (JSON Lines), appended as each `go` is answered. It says what a GUI
//! never sees: every root move's predicted reply, evaluated line and value
//! at each budget, the evaluator's own choice, which rule chose the move,
//! and what it all cost. `uci-options.md` has the schema; `mpcmc explain`
//! prints one for a person.
//!
//! The keys `chosen`, `rule` and `candidates` (each with `move`, `reply`,
//! `line`, `value`) are stable: scripts read them.

use std::{io::Write, path::Path};

use serde::{Deserialize, Serialize};

use mpcmc_protocol::GameMove;
use shakmaty::CastlingMode;

use crate::{
    mpc::{Candidate, ChildLimit, Decision, Game, Settings, Value, rounds::Round},
    uci::carry::HitRate,
};

/// A value for the side to move at the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Moves to mate, negative when mated (as UCI's `score mate`).
    Mate(i32),
}

impl From<Value> for Score {
    fn from(v: Value) -> Score {
        match v.to_uci().kind {
            mpcmc_protocol::ScoreKind::Cp(cp) => Score::Cp(cp),
            mpcmc_protocol::ScoreKind::Mate(n) => Score::Mate(n),
        }
    }
}

fn chess() -> String {
    "chess".to_owned()
}

fn is_chess(variant: &str) -> bool {
    variant == "chess"
}

/// One decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The game's start position (`startpos` as its FEN) and the moves from
    /// it: the decision's position is the last.
    pub fen: String,
    pub moves: Vec<String>,
    /// Castling moves are written king-takes-rook (`UCI_Chess960`).
    pub chess960: bool,
    /// The game's `UCI_Variant` (absent: chess).
    #[serde(default = "chess", skip_serializing_if = "is_chess")]
    pub variant: String,
    /// The `go` as received.
    pub go: String,
    /// `half`, `one`, `two` or `three`.
    pub lookahead: String,
    /// `ReplyWeight` as the decision applied it: the percent of each
    /// evaluated line's value taken from the nominal opponent's own score
    /// (0 when no one-step or deeper lookahead ran: half-step, or none).
    pub reply_weight: u32,
    /// Steps of lookahead that completed (a deeper step cut short is
    /// dropped whole; 0: no lookahead ran).
    /// (`levels` in traces before 2026-11-28, read as this.)
    #[serde(alias = "levels")]
    pub steps: u32,
    /// The move played (UCI).
    pub chosen: String,
    /// Which rule chose it ([`Rule::key`](crate::mpc::Rule::key)).
    pub rule: String,
    /// Its value, as the decision used it.
    pub value: Option<Score>,
    /// Every root move with its latest estimate, in UCI order.
    pub candidates: Vec<CandidateTrace>,
    /// Every round whose values were used, the last one cut short too (a
    /// one-pass decision is one round), in order.
    pub rounds: Vec<RoundTrace>,
    /// The evaluator's own root search (the fortification reference).
    pub evaluator: Option<RootTrace>,
    /// The lookahead's own best move and value.
    pub lookahead_choice: Option<Choice>,
    /// Centipawns a deviation from the evaluator's move had to clear.
    pub margin: Option<i32>,
    /// The deep check of a deviation, when one was checked.
    pub check: Option<CheckTrace>,
    /// The decision's child calls and nodes (its rounds or pass, the root
    /// search and the deep check included).
    pub calls: u64,
    pub nodes: u64,
    /// From the `go` read to the decision made.
    pub time_ms: u64,
    /// `false` only for a `go ponder` whose move was not played (`stop`
    /// without `ponderhit`).
    pub played: bool,
    /// The nominal opponent's predictions this game so far, this
    /// decision's reply counted.
    pub replies: HitRate,
    /// Whom the nominal opponent modelled: a person at a rating
    /// (`UCI_Opponent`), or `null`: the child engine at the calls' limit.
    #[serde(default)]
    pub person: Option<LevelTrace>,
    /// The level played at (`UCI_LimitStrength`) and its draw; `null` at
    /// full strength.
    #[serde(default)]
    pub level: Option<DrawTrace>,
}

/// A rating and the per-call budget it searches with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelTrace {
    pub elo: u32,
    pub nodes: u64,
}

/// A level's draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawTrace {
    pub elo: u32,
    /// The best valued move, against which the loss is counted.
    pub best: String,
    /// Win probability (0 to 1) the move played gives up against `best`.
    pub loss: f64,
    /// The game was decided (a decisive win, a mate): the best move, no
    /// draw.
    pub decided: bool,
    /// Second looks at drawn moves, in order (the level's
    /// `mpc::level::Look`): each drawn move searched again deeper before
    /// it is played; a refuted one was drawn again.
    #[serde(default)]
    pub looks: Vec<LookTrace>,
}

/// A second look at a drawn move.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookTrace {
    #[serde(rename = "move")]
    pub mv: String,
    /// Its value from the pass, which the draw weighed.
    pub value: Score,
    /// Its value searched again deeper; `null`: the look did not finish.
    pub deeper: Option<Score>,
    /// The best valued move, searched as deep, which `deeper` was
    /// measured against (`null`: not compared).
    #[serde(default)]
    pub against: Option<Choice>,
    pub refuted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateTrace {
    #[serde(rename = "move")]
    pub mv: String,
    /// The nominal opponent's predicted reply (`null`: none, e.g. half-step
    /// or a game over after the move).
    pub reply: Option<String>,
    /// The nominal opponent's own value of the position after the move,
    /// for us (`null`: no reply searched, or no score).
    pub reply_value: Option<Score>,
    /// The evaluator's own value of the evaluated line, for us, before
    /// `reply_weight` mixed `reply_value` in (`null`: its call did not
    /// finish or gave no score, or the game ended on the line). For an
    /// expanded move it is the first step's, as `one_step_value` is.
    pub evaluator_value: Option<Score>,
    /// The evaluated line from the root: `u w` and then the evaluator's
    /// line from there (`u w u' w'` and on when a deeper step expanded
    /// the move).
    pub line: Vec<String>,
    /// The value the decision used (`null`: the move got none); with
    /// `ReplyWeight` above 0, mixed with the nominal opponent's scores.
    pub value: Option<Score>,
    /// Its one-step value, when a deeper step expanded it and `value` is
    /// that step's, backed up; at a level, the pass's value when a second
    /// look replaced it (`value` is then the look's).
    pub one_step_value: Option<Score>,
    /// 1 for the best value; `null` without a value.
    pub rank: Option<usize>,
    /// The budget of the call that valued it last ("nodes 2000").
    pub budget: Option<String>,
    /// Its calls' nodes and time in the round that valued it last.
    pub nodes: u64,
    pub time_ms: u64,
    /// Why it has no value.
    pub failure: Option<String>,
}

/// One round: its per-call budget and each searched move's value there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundTrace {
    pub budget: String,
    /// `false`: cut short (the last round), only finished moves have values.
    pub complete: bool,
    pub values: Vec<RoundValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundValue {
    #[serde(rename = "move")]
    pub mv: String,
    pub reply: Option<String>,
    pub value: Option<Score>,
    pub nodes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RootTrace {
    #[serde(rename = "move")]
    pub mv: String,
    pub value: Option<Score>,
    pub depth: u32,
    pub nodes: u64,
    pub time_ms: u64,
    pub pv: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    #[serde(rename = "move")]
    pub mv: String,
    pub value: Score,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckTrace {
    pub value: Option<Score>,
    pub depth: u32,
    pub nodes: u64,
    /// `passed`, `refuted` or `unchecked`.
    pub verdict: String,
}

/// How a level's draw chose, for a person: `best` names the best valued
/// move.
pub fn draw_text(decided: bool, loss: f64, best: &str) -> String {
    if decided {
        "the game is decided: the best move".to_owned()
    } else {
        format!("{loss:.3} of win probability given up against {best}")
    }
}

/// A level's second look at `mv`, for a person: the move's `value` from
/// the pass, its `deeper` one (`None`: the look did not finish), the best
/// move and its value as deep that it was measured against, if it was,
/// and whether that refuted the move.
pub fn look_text(
    mv: &str,
    value: &str,
    deeper: Option<&str>,
    against: Option<(String, String)>,
    refuted: bool,
) -> String {
    let deeper = deeper.unwrap_or("unfinished");
    let against = against.map_or(String::new(), |(best, value)| {
        format!(" against {best}'s {value}")
    });
    let verdict = if refuted {
        ", refuted: drawn again"
    } else {
        ""
    };
    format!("second look at {mv}: {value} then {deeper}{against}{verdict}")
}

/// Writes moves as a GUI reads them.
struct Notation(CastlingMode);

impl Notation {
    fn one(&self, m: GameMove) -> String {
        m.text(self.0).to_string()
    }

    fn all(&self, line: &[GameMove]) -> Vec<String> {
        line.iter().map(|&m| self.one(m)).collect()
    }
}

/// A round, as `on_round` sees it.
pub fn round(r: &Round<'_>, castling: CastlingMode) -> RoundTrace {
    pass(r.limit, r.decision, r.complete, castling)
}

/// A pass of calls under one `limit` (a round, or a one-pass decision).
pub fn pass(
    limit: ChildLimit,
    decision: &Decision,
    complete: bool,
    castling: CastlingMode,
) -> RoundTrace {
    let n = Notation(castling);
    RoundTrace {
        budget: limit.to_string(),
        complete,
        values: decision
            .candidates
            .iter()
            .map(|c| RoundValue {
                mv: n.one(c.mv),
                reply: c.reply.map(|r| n.one(r)),
                value: c.value.map(Score::from),
                nodes: c.calls.iter().map(|r| r.nodes).sum(),
            })
            .collect(),
    }
}

/// What [`Trace::of`] needs besides the decision.
pub struct Context<'a> {
    pub game: &'a Game,
    pub go: String,
    pub settings: Settings,
    pub rounds: Vec<RoundTrace>,
    pub time_ms: u64,
}

impl Trace {
    /// The trace of decision `d`, made in `cx`.
    pub fn of(d: &Decision, cx: Context<'_>) -> Trace {
        let castling = cx.game.castling_mode();
        let n = Notation(castling);
        let fen = match (cx.game.start_fen(), cx.game.start()) {
            (Some(fen), _) => fen,
            (None, Some(start)) => {
                shakmaty::fen::Fen::from_position(start, shakmaty::EnPassantMode::Legal).to_string()
            }
            // A game by a child's rules, from its variant's start.
            (None, None) => "startpos".to_owned(),
        };
        let rounds = cx.rounds;
        let mut values: Vec<Value> = d.candidates.iter().filter_map(|c| c.value).collect();
        values.sort_unstable_by(|a, b| b.cmp(a));
        let rank = |v: Option<Value>| {
            v.and_then(|v| values.iter().position(|&w| w == v))
                .map(|i| i + 1)
        };
        // A level's pass is one-step: a value it holds beside a shallow
        // one is a second look's (the drawn move refuted, or the best it
        // was measured against), searched under the looks' limit.
        let looked = d.looks.first().map(|l| l.limit.to_string());
        let candidate = |c: &Candidate| {
            let mv = n.one(c.mv);
            // The round that gave its value (none when it has none).
            let budget = c
                .value
                .and_then(|_| {
                    rounds
                        .iter()
                        .rev()
                        .find(|r| r.values.iter().any(|v| v.mv == mv && v.value.is_some()))
                })
                .map(|r| r.budget.clone());
            let budget = looked
                .as_ref()
                .filter(|_| c.shallow.is_some())
                .cloned()
                .or(budget);
            CandidateTrace {
                reply: c.reply.map(|r| n.one(r)),
                reply_value: c.reply_value.map(Score::from),
                evaluator_value: c.evaluated.map(Score::from),
                line: n.all(&c.line()),
                value: c.value.map(Score::from),
                one_step_value: c.shallow.map(Score::from),
                rank: rank(c.value),
                budget,
                nodes: c.calls.iter().map(|r| r.nodes).sum(),
                time_ms: c
                    .calls
                    .iter()
                    .map(|r| r.search_time.as_millis() as u64)
                    .sum(),
                failure: c.failure.as_ref().map(ToString::to_string),
                mv,
            }
        };
        let choice = |c: Option<(GameMove, Value)>| {
            c.map(|(m, v)| Choice {
                mv: n.one(m),
                value: v.into(),
            })
        };
        let spread = d.spread;
        Trace {
            fen,
            moves: n.all(cx.game.moves()),
            chess960: castling == CastlingMode::Chess960,
            variant: cx.game.rules().uci().to_owned(),
            go: cx.go,
            lookahead: cx.settings.lookahead.to_string(),
            reply_weight: if cx.settings.lookahead.plies() == 2 && d.steps > 0 {
                cx.settings.reply_weight
            } else {
                0
            },
            steps: d.steps,
            chosen: n.one(d.best),
            rule: d.rule.to_string(),
            value: d.value.map(Score::from),
            candidates: d.candidates.iter().map(candidate).collect(),
            rounds,
            evaluator: d.root.as_ref().map(|r| RootTrace {
                mv: r.best.map_or_else(|| "(none)".to_owned(), |b| n.one(b)),
                value: r.score.map(Score::from),
                depth: r.depth,
                nodes: r.nodes,
                time_ms: r.search_time.as_millis() as u64,
                pv: n.all(&r.pv),
            }),
            lookahead_choice: choice(d.lookahead_choice),
            margin: spread.map(|s| s.margin),
            check: spread.and_then(|s| s.check).map(|c| CheckTrace {
                value: c.value.map(Score::from),
                depth: c.depth,
                nodes: c.nodes,
                verdict: c.verdict.to_string(),
            }),
            calls: d.stats.calls,
            nodes: d.stats.nodes,
            time_ms: cx.time_ms,
            played: true,
            replies: HitRate::default(),
            person: cx.settings.person.map(|p| LevelTrace {
                elo: p.elo(),
                nodes: p.call_nodes(),
            }),
            level: cx.settings.level.zip(d.drawn).map(|(draw, c)| DrawTrace {
                elo: draw.level.elo(),
                best: n.one(d.candidates[c.best].mv),
                loss: c.loss,
                decided: c.decided,
                looks: d
                    .looks
                    .iter()
                    .map(|l| LookTrace {
                        mv: n.one(d.candidates[l.index].mv),
                        value: l.shallow.into(),
                        deeper: l.deeper.map(Score::from),
                        against: l.against.map(|(best, value)| Choice {
                            mv: n.one(d.candidates[best].mv),
                            value: value.into(),
                        }),
                        refuted: l.refuted,
                    })
                    .collect(),
            }),
        }
    }

    /// Appends the trace as one line to `path`.
    pub fn append(&self, path: &Path) -> std::io::Result<()> {
        let mut line = serde_json::to_string(self).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        // One write a line: concurrent decisions never interleave inside it.
        file.write_all(line.as_bytes())
    }
}
