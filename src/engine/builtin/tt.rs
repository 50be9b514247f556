//! The transposition table: one slot per index, keyed by the full 64-bit
//! Zobrist hash, depth-preferred within a search and always replaced across
//! searches. Clearing is O(1): slots written before the last clear belong to
//! an older epoch and count as empty (a memory-less child clears before every
//! call, dozens of times a move).

use std::mem::size_of;

use shakmaty::Move;

/// What a stored score means relative to the true value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TtBound {
    #[default]
    Exact,
    /// The true score is at least this (a beta cut-off).
    Lower,
    /// The true score is at most this (every move failed low).
    Upper,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    key: u64,
    mv: Option<Move>,
    score: i16,
    depth: i8,
    bound: TtBound,
    generation: u8,
    epoch: u16,
    used: bool,
}

/// A hit: the score is as stored (mate scores relative to the stored node).
#[derive(Debug, Clone, Copy)]
pub struct TtEntry {
    pub mv: Option<Move>,
    pub score: i32,
    pub depth: i32,
    pub bound: TtBound,
}

pub struct TranspositionTable {
    slots: Vec<Slot>,
    generation: u8,
    epoch: u16,
}

/// Fewest slots, whatever the size asked.
const MIN_SLOTS: usize = 1024;

impl TranspositionTable {
    /// A table of `mb` megabytes, or the largest half, quarter, … of it that
    /// can be allocated.
    pub fn new(mb: usize) -> TranspositionTable {
        let mut len = (mb.saturating_mul(1024 * 1024) / size_of::<Slot>()).max(MIN_SLOTS);
        let mut slots = Vec::new();
        while slots.try_reserve_exact(len).is_err() && len > MIN_SLOTS {
            len /= 2;
        }
        slots.resize(len, Slot::default());
        TranspositionTable {
            slots,
            generation: 0,
            epoch: 0,
        }
    }

    pub fn clear(&mut self) {
        self.generation = 0;
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Every 65536 clears the old epochs could look current again.
            self.slots.fill(Slot::default());
        }
    }

    /// Whether a slot holds an entry of the current epoch.
    fn live(&self, slot: &Slot) -> bool {
        slot.used && slot.epoch == self.epoch
    }

    /// Marks the start of a new search: older entries become replaceable.
    pub fn new_search(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    fn index(&self, key: u64) -> usize {
        ((u128::from(key) * self.slots.len() as u128) >> 64) as usize
    }

    pub fn probe(&self, key: u64) -> Option<TtEntry> {
        let slot = self.slots.get(self.index(key))?;
        (self.live(slot) && slot.key == key).then_some(TtEntry {
            mv: slot.mv,
            score: i32::from(slot.score),
            depth: i32::from(slot.depth),
            bound: slot.bound,
        })
    }

    pub fn store(&mut self, key: u64, mv: Option<Move>, depth: i32, score: i32, bound: TtBound) {
        let (generation, epoch) = (self.generation, self.epoch);
        let i = self.index(key);
        let Some(slot) = self.slots.get(i) else {
            return;
        };
        let live = self.live(slot);
        let Some(slot) = self.slots.get_mut(i) else {
            return;
        };
        let same = live && slot.key == key;
        let replace = !live
            || same
            || slot.generation != generation
            || depth + 3 >= i32::from(slot.depth)
            || bound == TtBound::Exact;
        if !replace {
            return;
        }
        let mv = if mv.is_none() && same { slot.mv } else { mv };
        *slot = Slot {
            key,
            mv,
            score: score.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16,
            depth: depth.clamp(-1, i32::from(i8::MAX)) as i8,
            bound,
            generation,
            epoch,
            used: true,
        };
    }

    /// Permille of slots written in this search (for `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sample = self.slots.len().min(1000);
        let used = self.slots[..sample]
            .iter()
            .filter(|s| self.live(s) && s.generation == self.generation)
            .count();
        (used * 1000 / sample.max(1)) as u32
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Role, Square};

    use super::*;

    #[test]
    fn stores_and_probes() {
        let mut tt = TranspositionTable::new(1);
        let mv = Move::Normal {
            role: Role::Pawn,
            from: Square::E2,
            capture: None,
            to: Square::E4,
            promotion: None,
        };
        assert!(tt.probe(42).is_none());
        tt.store(42, Some(mv), 5, -31_000, TtBound::Lower);
        let e = tt.probe(42).unwrap();
        assert_eq!(
            (e.mv, e.score, e.depth, e.bound),
            (Some(mv), -31_000, 5, TtBound::Lower)
        );
        // A shallower result without a move keeps the move.
        tt.store(42, None, 4, 10, TtBound::Upper);
        assert_eq!(tt.probe(42).unwrap().mv, Some(mv));
        tt.clear();
        assert!(tt.probe(42).is_none());
    }
}
