//! How far apart two candidates' values must be before the larger is
//! believed ([`Noise`]), learned round after round over a session, and the
//! margin a deviation from the anchor must clear ([`margin`]).

use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
};

use mpcmc_protocol::GameMove;

use crate::mpc::{
    ChildLimit, Settings,
    candidate::{Candidate, best_of},
};

/// How far apart two candidates' values must be before the larger is
/// believed, learned over a session's decisions per call budget (by powers
/// of two of its nodes): how the difference between a move and its round's
/// best changes from one round to the next, at twice the budget. The margin
/// at a budget is twice their root mean square, from a prior worth
/// [`Noise::PRIOR_WEIGHT`] samples. `examples/noise.rs` measured the
/// spread of such paired differences against a reference search (64000
/// nodes a call for the built-in engine, 32000 for Stockfish), before
/// `ReplyWeight` mixed (0): 34, 29, 23 cp for the built-in engine at 250,
/// 1000, 4000 nodes a call; 89, 39, 21 cp for Stockfish at 500, 2000,
/// 8000. With the default mix (50), 25, 24, 20 cp for the built-in engine
/// (30 positions, 772 moves). Small searches are noisy, and
/// each engine differently: hence learned, not fixed.
#[derive(Debug, Clone, Default)]
pub struct Noise {
    /// By `ilog2` of the later round's nodes per call (0 for other limits).
    buckets: HashMap<u32, VecDeque<i32>>,
}

impl Noise {
    const SAMPLES: usize = 256;
    /// The prior spread, in centipawns, worth this many samples.
    const PRIOR_SPREAD: f64 = 30.0;
    const PRIOR_WEIGHT: f64 = 16.0;
    const MIN_MARGIN: i32 = 20;
    const MAX_MARGIN: i32 = 300;

    fn bucket(limit: ChildLimit) -> u32 {
        match limit {
            ChildLimit::Nodes(n) => n.max(1).ilog2(),
            _ => 0,
        }
    }

    fn add(&mut self, limit: ChildLimit, change: i32) {
        let samples = self.buckets.entry(Self::bucket(limit)).or_default();
        if samples.len() == Self::SAMPLES {
            samples.pop_front();
        }
        samples.push_back(change);
    }

    /// Centipawns a value from searches under `limit` must lead another by
    /// to be believed.
    pub fn margin(&self, limit: ChildLimit) -> i32 {
        let samples = self.buckets.get(&Self::bucket(limit));
        let sum: f64 = samples
            .iter()
            .flat_map(|s| s.iter())
            .map(|&d| f64::from(d).powi(2))
            .sum();
        let n = samples.map_or(0, VecDeque::len) as f64;
        let spread = ((sum + Self::PRIOR_WEIGHT * Self::PRIOR_SPREAD.powi(2))
            / (n + Self::PRIOR_WEIGHT))
            .sqrt();
        ((2.0 * spread).round() as i32).clamp(Self::MIN_MARGIN, Self::MAX_MARGIN)
    }

    /// Learns from two consecutive complete rounds, the later under
    /// `limit`: for every move of the later round besides its best `t`, how
    /// `V(u) - V(t)` changed. Values at the first step (a move a deeper
    /// step expanded in one round and not in the other would otherwise
    /// count its change of depth as noise).
    pub(crate) fn learn(&mut self, earlier: &[Candidate], later: &[Candidate], limit: ChildLimit) {
        let value = |cs: &[Candidate], m: GameMove| {
            cs.iter()
                .find(|c| c.mv == m)
                .and_then(|c| c.shallow.or(c.value)?.centipawns())
        };
        let Some(top) = best_of(later).map(|(m, _)| m) else {
            return;
        };
        let (Some(t1), Some(t2)) = (value(earlier, top), value(later, top)) else {
            return;
        };
        for c in later.iter().filter(|c| c.mv != top) {
            if let (Some(u1), Some(u2)) = (value(earlier, c.mv), value(later, c.mv)) {
                self.add(limit, (u2 - t2) - (u1 - t1));
            }
        }
    }
}

/// The margin a deviation from the anchor must clear, on values from
/// searches under `limit`: the measured noise plus the user's
/// `FortifyMargin`.
pub(crate) fn margin(noise: &Mutex<Noise>, limit: ChildLimit, settings: Settings) -> i32 {
    let measured = noise
        .lock()
        .map_or(2 * Noise::PRIOR_SPREAD as i32, |n| n.margin(limit));
    measured + settings.fortify_margin
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpc::{Game, Value};

    #[test]
    fn noise_is_learned_per_budget() {
        let mut noise = Noise::default();
        let small = ChildLimit::Nodes(500);
        let large = ChildLimit::Nodes(8000);
        assert_eq!(noise.margin(small), 60, "the prior: twice 30 cp");
        for i in 0..256 {
            noise.add(small, if i % 2 == 0 { 90 } else { -90 });
            noise.add(large, if i % 2 == 0 { 20 } else { -20 });
        }
        assert!(
            (170..=180).contains(&noise.margin(small)),
            "{}",
            noise.margin(small)
        );
        assert!(
            (40..=45).contains(&noise.margin(large)),
            "{}",
            noise.margin(large)
        );
    }

    /// A move a deeper step expanded in the later round only: its rise
    /// is a change of depth, not noise; the first-step values are compared.
    #[test]
    fn noise_compares_first_step_values() {
        let game = Game::default();
        let moves: Vec<GameMove> = game.legal_moves().into_iter().take(2).collect();
        let valued = |mv, cp, shallow: Option<i32>| Candidate {
            value: Some(Value::cp(cp)),
            shallow: shallow.map(Value::cp),
            ..Candidate::new(mv)
        };
        let earlier = [valued(moves[0], 0, None), valued(moves[1], -50, None)];
        let later = [valued(moves[0], 100, Some(0)), valued(moves[1], -50, None)];
        let limit = ChildLimit::Nodes(1000);
        let mut noise = Noise::default();
        noise.learn(&earlier, &later, limit);
        let samples: Vec<i32> = noise.buckets[&Noise::bucket(limit)]
            .iter()
            .copied()
            .collect();
        assert_eq!(samples, [0]);
    }
}
