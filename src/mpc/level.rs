//! Playing at a level (`UCI_LimitStrength`, `UCI_Elo`): the move drawn from
//! every root move's value, not from noise on one score.
//!
//! A decision already holds an honest value for every legal root move (its
//! one-step lookahead). At a level each move's *loss* is how much win
//! probability it gives up against the best valued move (lichess's curve,
//! so a 300 cp slip in a level position weighs more than in a won one),
//! and the move is drawn with weight `exp(-(loss / spread)²)`: small slips
//! are common, large ones rare, and the spread narrows as the rating
//! rises. The search budget shrinks with the level too ([`Level::call_nodes`]),
//! so the values themselves are a weaker player's: the errors that come
//! from them are the natural ones (a trap that looks good at a shallow
//! depth).
//!
//! Two guards keep it a good sparring partner:
//! - when behind, a slip is weighed as if from a level position (the
//!   curve is flat there, and pieces given away when losing are what
//!   players complain about in engines' levels);
//! - once the game is decisively won (or a mate is found, for either
//!   side), the best valued move is played: a won game is converted
//!   (where the level takes a second look, below, a win the pass found
//!   at the level's small budget is looked at first).
//!
//! A small search is tactically blind: most of a level's gross blunders
//! are moves whose shallow value hides a refutation, not slips the draw
//! chose knowingly. So where an anchor says so ([`Anchor::look`]) the
//! drawn move gets a *second look* before it is played: its one-step line
//! searched again at [`LOOK_NODES`] times the call's nodes. When that
//! drops its value by the anchor's threshold or more (in win
//! probability), the deeper value replaces the shallow one and the move
//! is drawn again, at most [`MAX_LOOKS`] times ([`Level::looks`]). Where
//! an anchor says so ([`Anchor::compare`]) the look also searches the
//! best valued move as deep and refutes a drawn move that falls short of
//! it by that threshold ([`Level::compares`]): a slip the pass saw as
//! small, whose own value holds deeper, is refuted so.
//!
//! The draw is the caller's random number ([`Level::choose`]), so the
//! core stays deterministic and a session with a fixed seed ([`Rng`])
//! repeats its games.

pub(crate) mod look;

use crate::mpc::{
    ChildLimit, Value,
    calibration::{Anchor, Calibration, MAX_ELO, MIN_ELO, NO_LOOK},
    candidate::Candidate,
    plausible::Plausibility,
};

/// Lichess's winning-chances slope (`2/(1+exp(-k·cp)) - 1`).
const WIN_SLOPE: f64 = 0.003_682_08;

/// The best move's win probability from which the game counts as
/// decisively won (about +4.7 pawns: a rook and no compensation, which the
/// built-in engine values at +5.9 in K+R v K): the level then plays the
/// best move.
pub const DECISIVE: f64 = 0.85;

/// Nodes a call at least, at any level, once the game is decided: mating
/// with a rook takes a search that sees a few moves ahead (the built-in
/// engine at 128 nodes a call lost the rook or drew by the fifty-move rule
/// in 5 of 10 K+R v K positions).
pub const DECIDED_NODES: u64 = 8192;

/// A second look searches the drawn move's line with this many times the
/// call's nodes (at 1800 over Stockfish, 5760 nodes a call against the
/// pass's 360).
pub const LOOK_NODES: u64 = 16;

/// Second looks a decision at most: a move drawn after as many were
/// refuted is played as drawn.
pub const MAX_LOOKS: usize = 3;

/// The loss in win probability every natural move gives up against the
/// best, when that is a dismissed move ([`Plausibility::dismissed`]),
/// from which the position asks for it (about 80 cp from level).
pub const ASKS: f64 = 0.07;

/// A rating to play at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    elo: u32,
    calibration: Calibration,
}

/// What a level's draw chose, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    /// Index of the chosen candidate.
    pub index: usize,
    /// Index of the best valued candidate.
    pub best: usize,
    /// Win probability the chosen move gives up against the best (0 for
    /// the best itself), as the draw weighed it.
    pub loss: f64,
    /// The game was decided (a decisive win or a mate): the best move, no
    /// draw.
    pub decided: bool,
}

impl Level {
    /// A level at `elo`, kept within [`MIN_ELO`]..=[`MAX_ELO`], over the
    /// built-in engine.
    pub fn new(elo: u32) -> Level {
        Level {
            elo: elo.clamp(MIN_ELO, MAX_ELO),
            calibration: Calibration::Builtin,
        }
    }

    /// The same rating over the engine `calibration` counts the nodes of.
    pub fn over(self, calibration: Calibration) -> Level {
        Level {
            calibration,
            ..self
        }
    }

    pub fn elo(self) -> u32 {
        self.elo
    }

    pub fn calibration(self) -> Calibration {
        self.calibration
    }

    /// At or above its engine's full strength: no budget or draw plays
    /// stronger than the engine unlimited, so it plays unlimited.
    pub fn at_full_strength(self) -> bool {
        self.calibration
            .full_strength()
            .is_some_and(|full| self.elo >= full)
    }

    /// Nodes for each child call at this level, between its calibration's
    /// anchors (1700 at 1400 over the built-in engine). A clock may cut it
    /// further.
    pub fn call_nodes(self) -> u64 {
        self.between(|a| a.nodes as f64).round() as u64
    }

    /// Nodes for each child call when the last decision found the game
    /// decided (see [`Choice::decided`]): at least [`DECIDED_NODES`].
    pub fn decided_call_nodes(self) -> u64 {
        self.call_nodes().max(DECIDED_NODES)
    }

    /// The loss (in win probability) at which a move's weight falls to
    /// `1/e`, between its calibration's anchors (0.058 at 1400).
    pub fn spread(self) -> f64 {
        self.between(|a| a.spread)
    }

    /// The drop in win probability (as [`loss`] counts it, from the
    /// drawn move's shallow value to its deeper one) at which a second
    /// look refutes the drawn move, between its calibration's anchors (so
    /// that the look phases in between an anchor without one and one
    /// with). `None`: no second look at this level.
    pub fn looks(self) -> Option<f64> {
        Some(self.between(|a| a.look)).filter(|&t| t < NO_LOOK)
    }

    /// Whether a second look that found `deeper` for a move drawn at
    /// `shallow` refutes it: a drop of the level's threshold or more.
    pub fn refutes(self, shallow: Value, deeper: Value) -> bool {
        self.looks()
            .is_some_and(|threshold| loss(shallow, deeper) >= threshold)
    }

    /// The loss (in win probability) against the best valued move, both
    /// searched again at the look's depth, at which a second look refutes
    /// the drawn move, between its calibration's anchors; `None`: the look
    /// does not compare (then it searches the drawn move alone). A drawn
    /// move whose own value holds but was already low is refuted so: at
    /// 1400 over Stockfish most gross blunders were drawn at a loss the
    /// pass had seen as small, and were not refuted by their own drop.
    pub fn compares(self) -> Option<f64> {
        Some(self.between(|a| a.compare))
            .filter(|&t| t < NO_LOOK)
            .filter(|_| self.looks().is_some())
    }

    /// One-step lines a second look searches: none without a look, the
    /// drawn move's, and the best move's too where the level compares.
    pub fn look_lines(self) -> u64 {
        u64::from(self.looks().is_some()) + u64::from(self.compares().is_some())
    }

    /// Whether a drawn move that a second look found at `deeper` gives up
    /// the level's comparison threshold or more against the best move,
    /// found at `best` by a look as deep.
    pub fn falls_short(self, best: Value, deeper: Value) -> bool {
        self.compares()
            .is_some_and(|threshold| loss(best, deeper) >= threshold)
    }

    /// What `of` says at this rating: geometric between the two anchors
    /// around it.
    fn between(self, of: impl Fn(&Anchor) -> f64) -> f64 {
        let elo = f64::from(self.elo);
        let anchors = self.calibration.anchors();
        let above = anchors
            .iter()
            .position(|a| f64::from(a.elo) >= elo)
            .unwrap_or(anchors.len() - 1)
            .max(1);
        let (lo, hi) = (&anchors[above - 1], &anchors[above]);
        let t = (elo - f64::from(lo.elo)) / f64::from(hi.elo - lo.elo);
        of(lo) * (of(hi) / of(lo)).powf(t)
    }

    /// The draw's weight of a move that loses `loss`.
    pub fn weight(self, loss: f64) -> f64 {
        let x = loss / self.spread();
        (-x * x).exp()
    }

    /// How many moves a player of this rating looks at: the draw is among
    /// the [`Level::considered`] heaviest, 8 at [`MIN_ELO`] narrowing to 4
    /// at [`MAX_ELO`].
    pub fn considered(self) -> usize {
        let t = f64::from(self.elo - MIN_ELO) / f64::from(MAX_ELO - MIN_ELO);
        (8.0 - 4.0 * t).round() as usize
    }

    /// Draws the move to play among the valued `candidates` with `random`
    /// (uniform over `u64`); `None` when none has a value. Each move's
    /// weight is its loss's ([`Level::weight`]) times its plausibility's
    /// factor (`priors`, in candidate order; missing ones neutral), a move
    /// dismissed ([`Plausibility::dismissed`]) none unless the
    /// position asks for it, and only the [`Level::considered`] heaviest
    /// are drawn among.
    pub fn choose(
        self,
        candidates: &[Candidate],
        priors: &[Plausibility],
        random: u64,
    ) -> Option<Choice> {
        let valued: Vec<(usize, Value)> = candidates
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((i, c.value?)))
            .collect();
        let &(best, top) = valued
            .iter()
            .max_by_key(|(i, v)| (*v, std::cmp::Reverse(*i)))?;
        if top.is_mate() || decides(top) {
            // A won game is converted: the best move that does not repeat
            // a position, while one keeps the win (shuffling between
            // equally valued moves ends in a repetition draw).
            // A found mate is played as it is.
            let index = valued
                .iter()
                .filter(|(i, v)| !top.is_mate() && !candidates[*i].repeats && decides(*v))
                .max_by_key(|(i, v)| (*v, std::cmp::Reverse(*i)))
                .map_or(best, |(i, _)| *i);
            return Some(Choice {
                index,
                best,
                loss: 0.0,
                decided: true,
            });
        }
        let losses: Vec<(usize, f64)> = valued.iter().map(|&(i, v)| (i, loss(top, v))).collect();
        let prior = |i: usize| priors.get(i).copied().unwrap_or_default();
        // A move nobody considers is drawn only where the position asks for
        // it: it is the best, and every natural move gives up `ASKS`.
        let asked =
            prior(best).dismissed && losses.iter().all(|&(i, l)| prior(i).dismissed || l >= ASKS);
        let mut weighted: Vec<(usize, f64, f64)> = losses
            .iter()
            .map(|&(i, l)| {
                let p = prior(i);
                let w = if p.dismissed && !asked {
                    0.0
                } else {
                    self.weight(l) * p.factor()
                };
                (i, l, w)
            })
            .collect();
        // The few moves a player of this rating looks at.
        weighted.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
        weighted.truncate(self.considered());
        let total: f64 = weighted.iter().map(|w| w.2).sum();
        if total <= 0.0 {
            // Nothing looked at has weight (every move far worse than the
            // best, which no glance ranks): the best.
            return Some(Choice {
                index: best,
                best,
                loss: 0.0,
                decided: false,
            });
        }
        // A uniform draw in [0, total).
        let mut left = (random >> 11) as f64 / (1u64 << 53) as f64 * total;
        let mut chosen = weighted.len() - 1;
        for (k, w) in weighted.iter().enumerate() {
            if left < w.2 {
                chosen = k;
                break;
            }
            left -= w.2;
        }
        let (index, loss, _) = weighted[chosen];
        Some(Choice {
            index,
            best,
            loss,
            decided: false,
        })
    }
}

/// A book move's share of the move's time, for `HumanTime`: played from
/// memory.
pub const BOOK_EFFORT: f64 = 0.15;

/// How long a person would think over this choice, as a share of the
/// move's time (`HumanTime`): a quarter for an obvious move (a won game
/// converted, a mate, or one move that every other falls [`ASKS`] short
/// of: the recapture, the only move), else more the more moves are close
/// to the best (within 0.03 of win probability), from 0.75
/// for one to 2 for six or more.
pub fn effort(candidates: &[Candidate], choice: &Choice) -> f64 {
    /// Moves within this loss of the best are a close call.
    const CLOSE: f64 = 0.03;
    if choice.decided {
        return 0.25;
    }
    let top = candidates.get(choice.best).and_then(|c| c.value);
    let Some(top) = top else {
        return 1.0;
    };
    let losses: Vec<f64> = candidates
        .iter()
        .filter_map(|c| c.value)
        .map(|v| loss(top, v))
        .collect();
    let close = losses.iter().filter(|&&l| l < CLOSE).count();
    let second = losses
        .iter()
        .filter(|&&l| l > 0.0)
        .fold(1.0f64, |a, &l| a.min(l));
    if close <= 1 && second >= ASKS {
        return 0.25;
    }
    0.5 + 0.25 * close.min(6) as f64
}

/// A second look at a drawn move ([`Level::looks`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// Index of the candidate looked at.
    pub index: usize,
    /// Its value from the pass, which the draw weighed.
    pub shallow: Value,
    /// Its value at [`LOOK_NODES`] times the nodes; `None` when the look
    /// did not finish (the clock, a failed child): the move is played.
    pub deeper: Option<Value>,
    /// The best valued move at the draw and its value searched as deep,
    /// which the drawn move was measured against ([`Level::compares`]);
    /// `None`: not compared (the level does not, the drawn move was the
    /// best, or a look did not finish).
    pub against: Option<(usize, Value)>,
    /// The deeper value dropped by the level's threshold or more: it
    /// replaced the shallow one and the move was drawn again.
    pub refuted: bool,
    /// Each of the look's calls searched under this limit ([`LOOK_NODES`]
    /// times the pass's nodes), the best's as deep.
    pub limit: ChildLimit,
}

/// Whether a position of value `v` (for us) is decided in our favour: a
/// decisive win or a mate for us.
fn decides(v: Value) -> bool {
    win_probability(v) >= DECISIVE
}

/// The probability of winning a position of value `v` (for the side the
/// value is from): lichess's curve for centipawns, 1 or 0 for a mate.
pub fn win_probability(v: Value) -> f64 {
    match v.centipawns() {
        Some(cp) => 1.0 / (1.0 + (-WIN_SLOPE * f64::from(cp)).exp()),
        // A mate: for the side the value is from, or against it.
        _ if v > Value::DRAW => 1.0,
        _ => 0.0,
    }
}

/// What a move valued `v` gives up against the best, valued `top` (not a
/// mate): win probability lost, measured from a level position when
/// behind (the curve flattens there, and a slip of the same size would
/// count for nothing).
pub fn loss(top: Value, v: Value) -> f64 {
    let top_cp = top.centipawns().unwrap_or(0);
    let shift = top_cp.min(0);
    let at = |v: Value| match v.centipawns() {
        Some(cp) => win_probability(Value::cp(cp - shift)),
        None => win_probability(v),
    };
    (at(top) - at(v)).max(0.0)
}

/// A small, fast pseudo-random generator (SplitMix64): the level's draws
/// and the book's, reproducible from a seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator seeded from the process's random hash keys and the time:
    /// a different sequence each time.
    pub fn from_entropy() -> Rng {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        h.write_u128(now);
        h.write_u32(std::process::id());
        Rng(h.finish())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Chess, Move, Position};

    use super::*;

    /// Candidates for the start position's first moves with these values
    /// (centipawns, for us).
    fn valued(values: &[i32]) -> Vec<Candidate> {
        let moves: Vec<Move> = Chess::default().legal_moves().into_iter().collect();
        values
            .iter()
            .zip(moves)
            .map(|(&cp, mv)| Candidate {
                value: Some(Value::cp(cp)),
                ..Candidate::new(mv.into())
            })
            .collect()
    }

    /// How often each candidate is drawn over `n` draws, without priors.
    fn shares(level: Level, candidates: &[Candidate], n: u32) -> Vec<f64> {
        shares_with(level, candidates, &[], n)
    }

    /// How often each candidate is drawn over `n` draws with these
    /// plausibilities.
    fn shares_with(
        level: Level,
        candidates: &[Candidate],
        priors: &[Plausibility],
        n: u32,
    ) -> Vec<f64> {
        let mut rng = Rng::new(7);
        let mut counts = vec![0u32; candidates.len()];
        for _ in 0..n {
            let c = level
                .choose(candidates, priors, rng.next_u64())
                .expect("valued");
            counts[c.index] += 1;
        }
        counts
            .into_iter()
            .map(|k| f64::from(k) / f64::from(n))
            .collect()
    }

    #[test]
    fn the_budget_and_the_spread_follow_the_rating() {
        for calibration in [Calibration::Builtin, Calibration::Stockfish] {
            let levels: Vec<Level> = (MIN_ELO..=MAX_ELO)
                .step_by(100)
                .map(|elo| Level::new(elo).over(calibration))
                .collect();
            // Where the look phases in (over Stockfish from 1000 to 1400)
            // the level above draws wider to give back what its look adds;
            // the draw narrows everywhere else.
            let look_phases_in = calibration
                .anchors()
                .windows(2)
                .find(|p| p[0].look >= NO_LOOK && p[1].look < NO_LOOK)
                .map(|p| p[0].elo..p[1].elo);
            for pair in levels.windows(2) {
                assert!(pair[0].call_nodes() <= pair[1].call_nodes());
                let phasing = look_phases_in
                    .as_ref()
                    .is_some_and(|span| span.contains(&pair[0].elo()));
                assert!(phasing || pair[0].spread() > pair[1].spread());
            }
            assert!(levels[0].call_nodes() < levels[levels.len() - 1].call_nodes());
            // At the anchors exactly, between them geometrically.
            for a in calibration.anchors() {
                let level = Level::new(a.elo).over(calibration);
                assert_eq!(level.call_nodes(), a.nodes);
                assert!((level.spread() - a.spread).abs() < 1e-12);
            }
            let anchors = calibration.anchors();
            assert_eq!(anchors[0].elo, MIN_ELO);
            assert_eq!(anchors[anchors.len() - 1].elo, MAX_ELO);
        }
        assert_eq!(Level::new(0).elo(), MIN_ELO);
        assert_eq!(Level::new(9999).elo(), MAX_ELO);
        assert_eq!(Level::new(MIN_ELO).call_nodes(), 400);
        let mid = Level::new(1200);
        assert_eq!(mid.call_nodes(), (1030.0f64 * 1700.0).sqrt().round() as u64);
        // A node of Stockfish is worth more: fewer of them at a level.
        let sf = Level::new(1800).over(Calibration::Stockfish);
        assert!(sf.call_nodes() < Level::new(1800).call_nodes());
        assert_eq!(sf.elo(), 1800);
    }

    /// Over the built-in engine the range tops out at its full strength;
    /// over Stockfish every level is below it.
    #[test]
    fn a_level_from_the_engines_full_strength_up_plays_at_full_strength() {
        let full = Calibration::Builtin
            .full_strength()
            .expect("within the range");
        assert!(!Level::new(full - 1).at_full_strength());
        assert!(Level::new(full).at_full_strength());
        assert!(Level::new(MAX_ELO).at_full_strength());
        for elo in (MIN_ELO..=MAX_ELO).step_by(100) {
            assert!(
                !Level::new(elo)
                    .over(Calibration::Stockfish)
                    .at_full_strength()
            );
        }
    }

    /// A second look where an anchor has one, phasing in between an anchor
    /// without one and one with; a drop of the threshold or more refutes.
    #[test]
    fn the_second_look_follows_the_anchors() {
        for calibration in [Calibration::Builtin, Calibration::Stockfish] {
            for a in calibration.anchors() {
                let level = Level::new(a.elo).over(calibration);
                assert_eq!(level.looks(), Some(a.look).filter(|&t| t < NO_LOOK));
                let compare = Some(a.compare).filter(|&t| t < NO_LOOK && a.look < NO_LOOK);
                assert_eq!(level.compares(), compare);
                let lines = u64::from(a.look < NO_LOOK) + u64::from(compare.is_some());
                assert_eq!(level.look_lines(), lines);
            }
        }
        // Between an anchor without a look and one with, the look phases
        // in: its threshold between the anchor's and none.
        let sf = |elo| Level::new(elo).over(Calibration::Stockfish);
        let pair = Calibration::Stockfish
            .anchors()
            .windows(2)
            .find(|p| p[0].look >= NO_LOOK && p[1].look < NO_LOOK)
            .expect("looks from some anchor up over Stockfish");
        let between = sf((pair[0].elo + pair[1].elo) / 2).looks();
        assert!(
            between.is_some_and(|t| pair[1].look < t && t < NO_LOOK),
            "{between:?}"
        );
        assert!(sf(pair[0].elo).looks().is_none());
        assert!(sf(1800).looks().is_some());
        // A drop from level to a piece down refutes; a small one does not;
        // a rise never does.
        assert!(sf(1800).refutes(Value::cp(30), Value::cp(-300)));
        assert!(!sf(1800).refutes(Value::cp(30), Value::cp(-30)));
        assert!(!sf(1800).refutes(Value::cp(-300), Value::cp(30)));
        assert!(!sf(pair[0].elo).refutes(Value::cp(30), Value::MATED));
        assert!(!Level::new(1800).refutes(Value::cp(30), Value::MATED));
        // At 1400 and 1800 the look compares with the best as deep: a
        // move that falls a piece short of it from level is refuted, 190
        // cp or 20 cp are not; from 2200 up nothing is compared.
        for elo in [1400, 1800] {
            assert!(sf(elo).falls_short(Value::cp(40), Value::cp(-300)));
            assert!(!sf(elo).falls_short(Value::cp(40), Value::cp(-150)));
            assert!(!sf(elo).falls_short(Value::cp(40), Value::cp(20)));
            assert!(!sf(elo).falls_short(Value::cp(-150), Value::cp(40)));
        }
        assert!(!sf(2200).falls_short(Value::cp(40), Value::MATED));
        assert!(!Level::new(1400).falls_short(Value::cp(40), Value::MATED));
    }

    #[test]
    fn win_probability_is_lichess_curve() {
        assert!((win_probability(Value::DRAW) - 0.5).abs() < 1e-12);
        // Lichess's blunder (a 0.3 drop of 2w-1 from 0) is about 168 cp.
        let w = win_probability(Value::cp(-168));
        assert!((2.0 * w - 1.0 + 0.3).abs() < 0.01, "{w}");
        assert_eq!(win_probability(-Value::MATED), 1.0);
        assert_eq!(win_probability(Value::MATED), 0.0);
    }

    #[test]
    fn a_slip_weighs_more_in_a_level_position_than_in_a_won_one_and_as_much_when_behind() {
        let slip = |from: i32| loss(Value::cp(from), Value::cp(from - 300));
        assert!(slip(0) > 2.0 * slip(700), "{} {}", slip(0), slip(700));
        assert!((slip(-500) - slip(0)).abs() < 1e-12);
        assert_eq!(loss(Value::cp(40), Value::cp(40)), 0.0);
    }

    #[test]
    fn levels_change_the_distribution_of_moves() {
        // The best, two slips of 40 and 120 cp, a piece given away.
        let candidates = valued(&[30, -10, -90, -300]);
        let low = shares(Level::new(600), &candidates, 20_000);
        let high = shares(Level::new(2400), &candidates, 20_000);
        assert!(low[0] < 0.6, "{low:?}");
        assert!(high[0] > 0.95, "{high:?}");
        for k in 1..3 {
            assert!(low[k] > high[k], "move {k}: {low:?} {high:?}");
        }
        // Smaller slips are drawn more often than larger ones.
        for shares in [&low, &high] {
            assert!(shares.windows(2).all(|p| p[0] >= p[1]), "{shares:?}");
        }
    }

    #[test]
    fn gross_blunders_become_rarer_as_the_level_rises() {
        // One good move, many that give a piece away (a loss of 3 pawns
        // in a level position).
        let mut values = vec![20];
        values.extend(std::iter::repeat_n(-280, 15));
        let candidates = valued(&values);
        let rates: Vec<f64> = [600, 700, 800, 1400, 2200]
            .into_iter()
            .map(|elo| 1.0 - shares(Level::new(elo), &candidates, 20_000)[0])
            .collect();
        assert!(rates.windows(2).all(|p| p[0] >= p[1]), "{rates:?}");
        assert!(rates[0] > rates[1] && rates[1] > rates[2], "{rates:?}");
        assert!(rates[0] > 0.05, "a beginner gives pieces away: {rates:?}");
        assert!(rates[3] < 0.001, "1400 next to never: {rates:?}");
    }

    #[test]
    fn the_draw_follows_a_glance_and_never_plays_a_move_nobody_considers_unasked() {
        let plain = Plausibility::default();
        let rim = Plausibility {
            dismissed: true,
            ..plain
        };
        let natural = Plausibility {
            score: 1.5,
            ..plain
        };
        for elo in [600, 1000, 1400, 1800] {
            let level = Level::new(elo);
            // A rim move valued best by a little: never drawn.
            let candidates = valued(&[30, 20, 10]);
            let shares = shares_with(level, &candidates, &[rim, plain, plain], 20_000);
            assert_eq!(shares[0], 0.0, "{elo}: {shares:?}");
            // Best by more than every natural move gives up: the position
            // asks for it, and it is drawn as any move.
            let candidates = valued(&[200, -20, -40]);
            let shares = shares_with(level, &candidates, &[rim, plain, plain], 20_000);
            assert!(shares[0] > 0.5, "{elo}: {shares:?}");
            // Of two moves of one value, the plausible one is drawn more.
            let candidates = valued(&[10, 10]);
            let shares = shares_with(level, &candidates, &[plain, natural], 20_000);
            assert!(shares[1] > 2.0 * shares[0], "{elo}: {shares:?}");
        }
        // The moves looked at narrow as the rating rises.
        let looked: Vec<usize> = [MIN_ELO, 1400, 2200, MAX_ELO]
            .into_iter()
            .map(|elo| Level::new(elo).considered())
            .collect();
        assert_eq!(looked, [8, 7, 5, 4]);
        let many = valued(&[0; 12]);
        let shares = shares(Level::new(MAX_ELO), &many, 20_000);
        assert_eq!(shares.iter().filter(|&&s| s > 0.0).count(), 4, "{shares:?}");
    }

    #[test]
    fn a_decided_game_plays_the_best_move() {
        let won = valued(&[300, 900, 700, 650]);
        let mut mate = valued(&[0, 50, -20]);
        mate[2].value = Some((-Value::MATED).from_child(5));
        let mut mated = valued(&[-100, -200]);
        mated
            .iter_mut()
            .for_each(|c| c.value = Some(Value::MATED.from_child(4)));
        mated[1].value = Some(Value::MATED.from_child(6));
        // Won, the best move that does not repeat a position while one
        // keeps the win; a mate is played even if it repeats.
        let mut shuffling = won.clone();
        shuffling[1].repeats = true;
        shuffling[2].repeats = true;
        let mut mating = mate.clone();
        mating[2].repeats = true;
        mating[1].value = Some(Value::cp(900));
        let mut rng = Rng::new(3);
        for _ in 0..1000 {
            let r = rng.next_u64();
            let level = Level::new(MIN_ELO);
            assert_eq!(
                level.choose(&shuffling, &[], r).map(|c| (c.index, c.best)),
                Some((3, 1))
            );
            assert_eq!(level.choose(&mating, &[], r).map(|c| c.index), Some(2));
        }
        for _ in 0..1000 {
            let level = Level::new(MIN_ELO);
            let r = rng.next_u64();
            assert_eq!(level.choose(&won, &[], r).map(|c| c.index), Some(1));
            assert_eq!(level.choose(&mate, &[], r).map(|c| c.index), Some(2));
            assert_eq!(level.choose(&mated, &[], r).map(|c| c.index), Some(1));
            assert!(level.choose(&won, &[], r).is_some_and(|c| c.decided));
        }
    }

    #[test]
    fn only_valued_moves_are_drawn_and_the_draw_is_the_random_numbers() {
        let mut candidates = valued(&[0, 0, 0]);
        candidates[1].value = None;
        let level = Level::new(MIN_ELO);
        let mut rng = Rng::new(11);
        for _ in 0..1000 {
            let r = rng.next_u64();
            let c = level.choose(&candidates, &[], r).expect("valued");
            assert_ne!(c.index, 1);
            assert_eq!(level.choose(&candidates, &[], r), Some(c));
        }
        assert_eq!(level.choose(&valued(&[])[..], &[], 5), None);
        assert_eq!(
            level.choose(&[Candidate::new(candidates[0].mv)], &[], 5),
            None
        );
        // Both ends of the random range stay inside.
        assert!(level.choose(&candidates, &[], u64::MAX).is_some());
        assert!(level.choose(&candidates, &[], 0).is_some());
    }

    #[test]
    fn a_seed_repeats_its_sequence() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        let xs: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(Rng::new(43).next_u64(), xs[0]);
        assert_ne!(Rng::from_entropy(), Rng::from_entropy());
    }
}
