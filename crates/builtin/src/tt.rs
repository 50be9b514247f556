//! The transposition table: buckets of four slots, keyed by the full 64-bit
//! Zobrist hash; a store replaces the least valuable slot of its bucket
//! (shallowest, earlier searches' entries first). Clearing is O(1): slots written before the last clear belong to
//! an older epoch and count as empty (a memory-less child clears before every
//! call, dozens of times a move).
//!
//! Several searches may use one table at once (in-process children share
//! one, see [`super::Engine::sharing`]): a slot is two atomic words, the
//! entry packed into one and the key stored XOR-ed with it in the other, so
//! a slot torn by two writers reads as empty instead of as a wrong entry
//! (Hyatt and Mann's lockless hashing, as Crafty and Stockfish do it).

use std::{
    mem::size_of,
    sync::atomic::{AtomicU8, AtomicU16, AtomicU64, Ordering},
};

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

/// A move as the table keeps it: from, to and promotion in 16 bits (a
/// drop: its role, to, and 7). It names a move only among the legal moves
/// of its position, so the search compares it with the moves it generates
/// ([`TtMove::matches`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtMove(u16);

impl TtMove {
    pub fn of(m: &Move) -> TtMove {
        let to = m.to() as u16;
        match m {
            // A drop (crazyhouse): its role where a move's origin goes,
            // and 7 (no role) where its promotion does.
            Move::Put { role, .. } => TtMove(*role as u16 | to << 6 | 7 << 12 | 1 << 15),
            _ => {
                let from = m.from().map_or(0, |s| s as u16);
                let promotion = m.promotion().map_or(0, |r| r as u16);
                TtMove(from | to << 6 | promotion << 12 | 1 << 15)
            }
        }
    }

    /// Whether `m` is the move stored.
    pub fn matches(self, m: &Move) -> bool {
        TtMove::of(m) == self
    }

    /// The stored move among `moves`, if it is there.
    pub fn find(self, moves: &[Move]) -> Option<Move> {
        moves.iter().copied().find(|m| self.matches(m))
    }
}

/// One slot: the entry ([`Packed`]) and its key XOR the entry.
#[derive(Default)]
struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

/// A hit: the score is as stored (mate scores relative to the stored node).
#[derive(Debug, Clone, Copy)]
pub struct TtEntry {
    pub mv: Option<TtMove>,
    pub score: i32,
    pub depth: i32,
    pub bound: TtBound,
}

/// An entry in 64 bits: move (16), score (16), depth (8), bound (2),
/// generation (8), epoch (14). Epoch 0 is never current, so an all-zero
/// slot is empty.
#[derive(Clone, Copy)]
struct Packed(u64);

const EPOCH_BITS: u32 = 14;
const EPOCH_MASK: u16 = (1 << EPOCH_BITS) - 1;

impl Packed {
    fn new(entry: &TtEntry, generation: u8, epoch: u16) -> Packed {
        let mv = entry.mv.map_or(0, |m| m.0);
        let score = entry.score.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16;
        let depth = entry.depth.clamp(-1, i32::from(i8::MAX)) as i8;
        let bound = match entry.bound {
            TtBound::Exact => 0u64,
            TtBound::Lower => 1,
            TtBound::Upper => 2,
        };
        Packed(
            u64::from(mv)
                | u64::from(score as u16) << 16
                | u64::from(depth as u8) << 32
                | bound << 40
                | u64::from(generation) << 42
                | u64::from(epoch & EPOCH_MASK) << 50,
        )
    }

    fn entry(self) -> TtEntry {
        let mv = self.0 as u16;
        TtEntry {
            mv: (mv != 0).then_some(TtMove(mv)),
            score: i32::from((self.0 >> 16) as u16 as i16),
            depth: i32::from((self.0 >> 32) as u8 as i8),
            bound: match (self.0 >> 40) & 3 {
                1 => TtBound::Lower,
                2 => TtBound::Upper,
                _ => TtBound::Exact,
            },
        }
    }

    fn generation(self) -> u8 {
        (self.0 >> 42) as u8
    }

    fn epoch(self) -> u16 {
        (self.0 >> 50) as u16 & EPOCH_MASK
    }
}

/// Four slots in one cache line: a probe reads one line, and a store keeps
/// the more valuable entries of the four (two searches sharing a table
/// would otherwise push each other's entries out of a single slot).
#[derive(Default)]
#[repr(align(64))]
struct Bucket([Slot; 4]);

pub struct TranspositionTable {
    buckets: Buckets,
    generation: AtomicU8,
    /// 1 ..= `EPOCH_MASK`.
    epoch: AtomicU16,
    /// The position the current generation began for ([`Self::new_search_at`]).
    aged_for: AtomicU64,
}

/// Empty buckets in memory allocated zeroed (all-zero slots are empty, as
/// [`Bucket::default`]). The allocation is asked with the system
/// allocator's own alignment, which it serves with `calloc`: pages the
/// kernel zeroes on first touch. (Asked aligned to a cache line, Rust's
/// allocator writes every byte itself; a 4 GB table was then resident at
/// once.) The buckets start at the first cache line inside it.
struct Buckets {
    start: std::ptr::NonNull<Bucket>,
    len: usize,
    /// The allocation: `start` rounded down, with a line to spare.
    base: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: the buckets are atomics, shared as `&[Bucket]` only; the
// allocation is owned and freed once.
unsafe impl Send for Buckets {}
unsafe impl Sync for Buckets {}

impl Buckets {
    /// `len` empty buckets; `None` when that much cannot be allocated.
    fn zeroed(len: usize) -> Option<Buckets> {
        let line = align_of::<Bucket>();
        let size = len.checked_mul(size_of::<Bucket>())?.checked_add(line)?;
        let layout = std::alloc::Layout::from_size_align(size, 16).ok()?;
        // SAFETY: the layout's size is non-zero (at least a line).
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        if base.is_null() {
            return None;
        }
        let offset = base.align_offset(line);
        if offset >= line {
            // SAFETY: allocated just now with this layout.
            unsafe { std::alloc::dealloc(base, layout) };
            return None;
        }
        // SAFETY: `offset < line`, so `len` buckets from there lie inside
        // the allocation of `len` buckets and a line.
        let start = unsafe { base.add(offset) }.cast::<Bucket>();
        Some(Buckets {
            start: std::ptr::NonNull::new(start)?,
            len,
            base,
            layout,
        })
    }
}

impl std::ops::Deref for Buckets {
    type Target = [Bucket];

    fn deref(&self) -> &[Bucket] {
        // SAFETY: `len` aligned buckets, zeroed (a valid value of atomics)
        // at allocation and changed only through their atomics since.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl Drop for Buckets {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.base, self.layout) };
    }
}

/// Fewest buckets, whatever the size asked.
const MIN_BUCKETS: usize = 256;

impl TranspositionTable {
    /// A table of `mb` megabytes, or the largest half, quarter, … of it that
    /// can be allocated. Its memory is asked for zeroed, which the system
    /// gives as pages it fills on first touch: a large table costs nothing
    /// until the search writes to it (writing every bucket first made the
    /// first `go` of a 12 GB `Hash` wait 15 s).
    pub fn new(mb: usize) -> TranspositionTable {
        let mut len = (mb.saturating_mul(1024 * 1024) / size_of::<Bucket>()).max(MIN_BUCKETS);
        let buckets = loop {
            match Buckets::zeroed(len) {
                Some(buckets) => break buckets,
                None if len > MIN_BUCKETS => len /= 2,
                // Not even the least: out of memory, as a `Vec` would be.
                None => std::alloc::handle_alloc_error(std::alloc::Layout::new::<
                    [Bucket; MIN_BUCKETS],
                >()),
            }
        };
        TranspositionTable {
            buckets,
            generation: AtomicU8::new(0),
            epoch: AtomicU16::new(1),
            aged_for: AtomicU64::new(0),
        }
    }

    /// The size in MB (rounded down).
    pub fn mb(&self) -> usize {
        self.buckets.len() * size_of::<Bucket>() / (1024 * 1024)
    }

    pub fn clear(&self) {
        self.generation.store(0, Ordering::Relaxed);
        self.aged_for.store(0, Ordering::Relaxed);
        let epoch = self.epoch.load(Ordering::Relaxed) % EPOCH_MASK + 1;
        self.epoch.store(epoch, Ordering::Relaxed);
        if epoch == 1 {
            // Every 16383 clears the old epochs could look current again.
            for slot in self.buckets.iter().flat_map(|b| &b.0) {
                slot.check.store(0, Ordering::Relaxed);
                slot.data.store(0, Ordering::Relaxed);
            }
        }
    }

    /// Marks the start of a new search: older entries become replaceable.
    pub fn new_search(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    /// Marks the start of a new search for searches on behalf of `root`
    /// (the game's position, by its key), once per root: the searches of
    /// one decision, whichever position each starts from, share one
    /// generation, and the next decision's begin the next.
    pub fn new_search_at(&self, root: u64) {
        if self.aged_for.swap(root, Ordering::Relaxed) != root {
            self.new_search();
        }
    }

    fn bucket(&self, key: u64) -> Option<&Bucket> {
        let i = ((u128::from(key) * self.buckets.len() as u128) >> 64) as usize;
        self.buckets.get(i)
    }

    /// The slot's entry if it holds one of the current epoch for `key`.
    fn read(&self, slot: &Slot, key: u64) -> Option<Packed> {
        let data = slot.data.load(Ordering::Relaxed);
        let check = slot.check.load(Ordering::Relaxed);
        let packed = Packed(data);
        (check ^ data == key && packed.epoch() == self.epoch.load(Ordering::Relaxed))
            .then_some(packed)
    }

    pub fn probe(&self, key: u64) -> Option<TtEntry> {
        let bucket = self.bucket(key)?;
        bucket
            .0
            .iter()
            .find_map(|slot| self.read(slot, key))
            .map(Packed::entry)
    }

    /// Stores an entry for `key`. The key's own slot is overwritten unless
    /// it holds a much deeper result of this generation; otherwise the least
    /// valuable slot of the bucket goes: an empty one, else the shallowest,
    /// an entry of an earlier search counting as 8 plies shallower.
    pub fn store(&self, key: u64, mv: Option<TtMove>, depth: i32, score: i32, bound: TtBound) {
        let generation = self.generation.load(Ordering::Relaxed);
        let epoch = self.epoch.load(Ordering::Relaxed);
        let Some(bucket) = self.bucket(key) else {
            return;
        };
        let mut target = None;
        let mut same = None;
        for slot in &bucket.0 {
            if let Some(entry) = self.read(slot, key) {
                (target, same) = (Some(slot), Some(entry));
                break;
            }
        }
        // A much deeper result of this search stays, whatever the bound: a
        // shallow search sharing the table (a lookahead call from a
        // position of the root search's tree) must not replace it.
        if let Some(old) = same
            && old.generation() == generation
            && depth + 3 < old.entry().depth
        {
            return;
        }
        let value = |slot: &Slot| {
            let old = Packed(slot.data.load(Ordering::Relaxed));
            if old.epoch() != epoch {
                i32::MIN
            } else {
                old.entry().depth - if old.generation() == generation { 0 } else { 8 }
            }
        };
        let Some(slot) = target.or_else(|| bucket.0.iter().min_by_key(|s| value(s))) else {
            return;
        };
        let mv = mv.or_else(|| same.and_then(|s| s.entry().mv));
        let entry = TtEntry {
            mv,
            score,
            depth,
            bound,
        };
        let data = Packed::new(&entry, generation, epoch).0;
        slot.data.store(data, Ordering::Relaxed);
        slot.check.store(key ^ data, Ordering::Relaxed);
    }

    /// Permille of slots written in this search (for `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sample = self.buckets.len().min(250);
        let (generation, epoch) = (
            self.generation.load(Ordering::Relaxed),
            self.epoch.load(Ordering::Relaxed),
        );
        let used = self.buckets[..sample]
            .iter()
            .flat_map(|b| &b.0)
            .map(|s| Packed(s.data.load(Ordering::Relaxed)))
            .filter(|p| p.epoch() == epoch && p.generation() == generation)
            .count();
        (used * 1000 / (4 * sample).max(1)) as u32
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Role, Square};

    use super::*;

    /// This process's resident memory, in MB (Linux).
    fn resident_mb() -> Option<usize> {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
        Some(pages * 4096 / (1024 * 1024))
    }

    #[test]
    fn a_large_table_costs_no_memory_until_written() {
        let Some(before) = resident_mb() else {
            return;
        };
        let tt = TranspositionTable::new(4096);
        assert_eq!(tt.mb(), 4096);
        let after = resident_mb().expect("statm");
        // Writing every bucket at creation made it all resident (and the
        // first `go` of a 12 GB table wait 15 s). Other tests of this
        // binary allocate beside it: a margin far below the table.
        assert!(
            after < before + 1024,
            "{before} MB resident before, {after} MB after"
        );
        assert!(tt.probe(1).is_none());
    }

    #[test]
    fn stores_and_probes() {
        let tt = TranspositionTable::new(1);
        let mv = Move::Normal {
            role: Role::Pawn,
            from: Square::E2,
            capture: None,
            to: Square::E4,
            promotion: None,
        };
        assert!(tt.probe(42).is_none());
        tt.store(42, Some(TtMove::of(&mv)), 5, -31_000, TtBound::Lower);
        let e = tt.probe(42).unwrap();
        assert_eq!(
            (e.mv.map(|m| m.matches(&mv)), e.score, e.depth, e.bound),
            (Some(true), -31_000, 5, TtBound::Lower)
        );
        // A shallower result without a move keeps the move.
        tt.store(42, None, 4, 10, TtBound::Upper);
        assert_eq!(tt.probe(42).unwrap().mv, Some(TtMove::of(&mv)));
        assert_eq!(tt.probe(42).unwrap().depth, 4);
        tt.clear();
        assert!(tt.probe(42).is_none());
    }

    #[test]
    fn every_field_survives_packing() {
        let promotion = Move::Normal {
            role: Role::Pawn,
            from: Square::B7,
            capture: Some(Role::Rook),
            to: Square::A8,
            promotion: Some(Role::Knight),
        };
        let castle = Move::Castle {
            king: Square::E1,
            rook: Square::H1,
        };
        for (mv, depth, score, bound) in [
            (Some(&promotion), -1, i32::from(i16::MIN), TtBound::Upper),
            (Some(&castle), 127, i32::from(i16::MAX), TtBound::Exact),
            (None, 0, 0, TtBound::Lower),
        ] {
            let entry = TtEntry {
                mv: mv.map(TtMove::of),
                score,
                depth,
                bound,
            };
            let packed = Packed::new(&entry, 0xA5, 0x2AAA);
            let back = packed.entry();
            assert_eq!(
                (back.mv, back.score, back.depth, back.bound),
                (entry.mv, score, depth, bound)
            );
            assert_eq!((packed.generation(), packed.epoch()), (0xA5, 0x2AAA));
        }
        let queen = Move::Normal {
            role: Role::Pawn,
            from: Square::B7,
            capture: Some(Role::Rook),
            to: Square::A8,
            promotion: Some(Role::Queen),
        };
        assert!(!TtMove::of(&promotion).matches(&queen));
        assert!(TtMove::of(&castle).matches(&castle));
        // A drop is none of the board's moves to its square, and each
        // role's drop is its own.
        let drop = |role| Move::Put {
            role,
            to: Square::A8,
        };
        assert!(!TtMove::of(&drop(Role::Pawn)).matches(&queen));
        assert!(!TtMove::of(&drop(Role::Queen)).matches(&queen));
        assert!(!TtMove::of(&drop(Role::Knight)).matches(&drop(Role::Bishop)));
        assert!(TtMove::of(&drop(Role::Rook)).matches(&drop(Role::Rook)));
        let a1a8 = Move::Normal {
            role: Role::Rook,
            from: Square::A1,
            capture: None,
            to: Square::A8,
            promotion: None,
        };
        assert!(!TtMove::of(&drop(Role::Rook)).matches(&a1a8));
    }

    #[test]
    fn a_torn_slot_reads_as_empty() {
        let tt = TranspositionTable::new(1);
        tt.store(42, None, 5, 7, TtBound::Exact);
        let slot = tt
            .bucket(42)
            .unwrap()
            .0
            .iter()
            .find(|s| tt.read(s, 42).is_some())
            .unwrap();
        // Another writer's entry with this key's check word: not a hit.
        let other = Packed::new(
            &TtEntry {
                mv: None,
                score: 99,
                depth: 9,
                bound: TtBound::Exact,
            },
            0,
            1,
        );
        slot.data.store(other.0, Ordering::Relaxed);
        assert!(tt.probe(42).is_none());
    }

    /// Keys with the same high bits share a bucket: the fifth entry pushes
    /// out the shallowest, an earlier search's entries counting as 8 plies
    /// shallower.
    #[test]
    fn a_bucket_keeps_its_most_valuable_entries() {
        let tt = TranspositionTable::new(1);
        let key = |i: u64| 0x5555_0000_0000_0000 + i;
        let kept = |i| tt.probe(key(i)).is_some();
        for (i, depth) in [(0, 9), (1, 2), (2, 7), (3, 5)] {
            tt.store(key(i), None, depth, 0, TtBound::Lower);
        }
        tt.store(key(4), None, 3, 0, TtBound::Lower);
        assert_eq!(
            (0..5).map(kept).collect::<Vec<_>>(),
            [true, false, true, true, true]
        );
        // In the next search old entries are worth 8 plies less: the old
        // 5 (-3) goes, then the old 7 (-1), then the old 9 (1) before a new 2.
        tt.new_search();
        tt.store(key(4), None, 2, 0, TtBound::Lower);
        tt.store(key(5), None, 6, 0, TtBound::Lower);
        tt.store(key(6), None, 6, 0, TtBound::Lower);
        assert_eq!(
            (0..7).map(kept).collect::<Vec<_>>(),
            [true, false, false, false, true, true, true]
        );
        tt.store(key(7), None, 6, 0, TtBound::Lower);
        assert_eq!(
            (0..8).map(kept).collect::<Vec<_>>(),
            [false, false, false, false, true, true, true, true]
        );
        // Its own slot keeps a much deeper result of this search, exact or not.
        tt.store(key(5), None, 2, 0, TtBound::Exact);
        assert_eq!(tt.probe(key(5)).map(|e| e.depth), Some(6));
    }

    #[test]
    fn a_root_ages_the_table_once() {
        let tt = TranspositionTable::new(1);
        tt.new_search_at(7);
        let generation = tt.generation.load(Ordering::Relaxed);
        tt.new_search_at(7);
        assert_eq!(tt.generation.load(Ordering::Relaxed), generation);
        tt.new_search_at(8);
        assert_eq!(
            tt.generation.load(Ordering::Relaxed),
            generation.wrapping_add(1)
        );
    }

    #[test]
    fn clears_wrap_around_the_epochs() {
        let tt = TranspositionTable::new(1);
        tt.store(42, None, 5, 7, TtBound::Exact);
        for _ in 0..EPOCH_MASK {
            tt.clear();
            assert!(tt.probe(42).is_none());
        }
        tt.store(43, None, 5, 7, TtBound::Exact);
        assert!(tt.probe(43).is_some());
    }
}
