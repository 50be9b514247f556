//! The search: iterative deepening over a principal-variation alpha-beta
//! (negamax) with aspiration windows, a quiescence search over captures and
//! promotions, and the usual pruning (null move, reverse futility, futility,
//! late-move pruning and reductions).
//!
//! Positions are copy-make (`Chess::clone` + `play_unchecked`); the hash of
//! each node is shakmaty's `Zobrist64` with `EnPassantMode::Legal`, updated
//! incrementally where shakmaty can, so it matches the game's `history`.

use std::{
    sync::{
        OnceLock,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Instant,
};

use shakmaty::{
    Color, Move, MoveList, Position, Role,
    zobrist::{Zobrist64, ZobristValue},
};

use mpcmc_protocol::game::{self, hash_after};

use super::{
    eval::see_value,
    ordering::{advanced_pawn_push, capture_order, generate_captures, pick_best},
    rules::Rules,
    score::{DECIDED, INF, MATE, MAX_DEPTH, MAX_PLY},
    syzygy::{self, Syzygy},
    time::Budget,
    tt::{TranspositionTable, TtBound, TtMove},
};

/// Stop and clock checks happen every this many nodes (a power of two).
const POLL_INTERVAL: u64 = 256;

/// A helper's nodes reach [`Search::shared_nodes`] every this many (a
/// multiple of [`POLL_INTERVAL`]).
pub(crate) const PUBLISH_INTERVAL: u64 = 16 * POLL_INTERVAL;

/// History scores stay within ±this.
const HISTORY_MAX: i32 = 16_384;

/// Late-move reductions by depth and move number.
fn lmr_table() -> &'static [[u8; 64]; 64] {
    static TABLE: OnceLock<[[u8; 64]; 64]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [[0u8; 64]; 64];
        for (d, row) in t.iter_mut().enumerate().skip(1) {
            for (m, r) in row.iter_mut().enumerate().skip(1) {
                let v = 0.75 + (d as f64).ln() * (m as f64).ln() / 2.25;
                *r = v.clamp(0.0, 63.0) as u8;
            }
        }
        t
    })
}

/// Decided scores (mates, tablebase results) count plies from the node
/// in the table, from the root in the search.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= DECIDED {
        score + ply as i32
    } else if score <= -DECIDED {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= DECIDED {
        score - ply as i32
    } else if score <= -DECIDED {
        score + ply as i32
    } else {
        score
    }
}

/// Move-ordering history, kept between searches and aged at each.
pub struct History {
    quiet: Box<[[[i32; 64]; 64]; 2]>,
}

impl History {
    pub fn new() -> History {
        History {
            quiet: Box::new([[[0; 64]; 64]; 2]),
        }
    }

    pub fn clear(&mut self) {
        *self.quiet = [[[0; 64]; 64]; 2];
    }

    pub fn age(&mut self) {
        for v in self.quiet.iter_mut().flatten().flatten() {
            *v /= 2;
        }
    }

    fn get(&self, color: Color, m: Move) -> i32 {
        let Some(from) = m.from() else { return 0 };
        self.quiet[color as usize][from.to_usize()][m.to().to_usize()]
    }

    fn update(&mut self, color: Color, m: Move, bonus: i32) {
        let Some(from) = m.from() else { return };
        let v = &mut self.quiet[color as usize][from.to_usize()][m.to().to_usize()];
        // Gravity: bounded, recent results weigh more.
        *v += bonus - *v * bonus.abs() / HISTORY_MAX;
    }
}

impl Default for History {
    fn default() -> History {
        History::new()
    }
}

/// The best root move found so far, with its line.
#[derive(Clone)]
pub struct RootBest {
    pub pv: Vec<Move>,
}

/// A PV table for [`Search::new`]: allocated once by its engine and reused
/// by every search, so that a search allocates (and frees) nothing this
/// large. Freeing it after every search made the allocator hand memory
/// back to the system each time, and two searches in one process (two
/// workers of in-process children) slowed each other by 45 % on calls of
/// 20000 nodes (`mpcmc bench --nodes 20000 --threads 1,2`).
pub fn pv_table() -> Vec<Vec<Move>> {
    (0..MAX_PLY + 2)
        .map(|_| Vec::with_capacity(MAX_PLY))
        .collect()
}

/// One search in progress.
pub struct Search<'a> {
    tt: &'a TranspositionTable,
    history: &'a mut History,
    stop: &'a AtomicBool,
    budget: Budget,
    pub nodes: u64,
    pub seldepth: usize,
    pub stopped: bool,
    /// Hashes of the game before the root, the root, then the search path.
    hashes: Vec<u64>,
    root_index: usize,
    /// Repetition scans do not look below this index (set by null moves).
    rep_floor: usize,
    killers: [[Option<Move>; 2]; MAX_PLY + 2],
    /// The triangular PV table, one line a ply ([`pv_table`]).
    pv: &'a mut [Vec<Move>],
    /// The best root move of the iteration in flight.
    pub root_best: Option<RootBest>,
    /// The root moves to search, when not all of them (`go searchmoves`).
    pub root_moves: Option<MoveList>,
    /// Node and time limits apply (set once the first iteration is done:
    /// a move and a score always come from a complete depth-1 search; `stop`
    /// applies from the start).
    pub limits_armed: bool,
    /// Tablebases probed in the search (none when the root is in them:
    /// its moves are ranked instead, [`Syzygy::rank_root`]).
    pub tables: Option<&'a Syzygy>,
    /// `Syzygy50MoveRule`: cursed wins and blessed losses are draws.
    pub fifty_move_rule: bool,
    /// Positions the tables valued.
    pub tbhits: u64,
    /// Where a helper thread's nodes are counted as it searches, for the
    /// main thread's `info nodes` (every [`PUBLISH_INTERVAL`] nodes and at
    /// [`Search::publish`]).
    pub shared_nodes: Option<&'a AtomicU64>,
    /// Nodes already added to `shared_nodes`.
    published: u64,
}

impl<'a> Search<'a> {
    pub fn new(
        tt: &'a TranspositionTable,
        history: &'a mut History,
        pv: &'a mut [Vec<Move>],
        stop: &'a AtomicBool,
        budget: Budget,
        game: &[u64],
        root_hash: u64,
    ) -> Search<'a> {
        pv.iter_mut().for_each(Vec::clear);
        let mut hashes = Vec::with_capacity(game.len() + MAX_PLY + 2);
        hashes.extend_from_slice(game);
        hashes.push(root_hash);
        Search {
            tt,
            history,
            stop,
            budget,
            nodes: 0,
            seldepth: 0,
            stopped: false,
            root_index: game.len(),
            rep_floor: 0,
            hashes,
            killers: [[None; 2]; MAX_PLY + 2],
            pv,
            root_best: None,
            root_moves: None,
            limits_armed: false,
            tables: None,
            fifty_move_rule: true,
            tbhits: 0,
            shared_nodes: None,
            published: 0,
        }
    }

    /// Adds the nodes searched since the last time to `shared_nodes`.
    pub fn publish(&mut self) {
        if let Some(shared) = self.shared_nodes {
            shared.fetch_add(self.nodes - self.published, Ordering::Relaxed);
            self.published = self.nodes;
        }
    }

    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Checks the stop flag, the clock and the node limit.
    #[inline]
    fn poll(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        if let Some(n) = self.budget.nodes
            && self.limits_armed
            && self.nodes >= n
        {
            self.stopped = true;
        } else if self.nodes.is_multiple_of(POLL_INTERVAL) {
            if self.nodes.is_multiple_of(PUBLISH_INTERVAL) {
                self.publish();
            }
            if self.stop.load(Ordering::Relaxed) {
                self.stopped = true;
            } else if let Some(hard) = self.budget.hard
                && self.limits_armed
                && Instant::now() >= hard
            {
                self.stopped = true;
            }
        }
        self.stopped
    }

    /// Is the node on top of the hash stack a draw by repetition? Inside the
    /// search a twofold repetition counts; against the game before the root
    /// a threefold one.
    fn is_repetition(&self, halfmoves: u32) -> bool {
        let cur = self.hashes.len() - 1;
        let hash = self.hashes[cur];
        let lowest = cur.saturating_sub(halfmoves as usize).max(self.rep_floor);
        let mut seen_before_root = false;
        let mut i = cur;
        while i >= lowest + 2 {
            i -= 2;
            if self.hashes[i] == hash {
                if i > self.root_index || seen_before_root {
                    return true;
                }
                seen_before_root = true;
            }
        }
        false
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let line = &mut head[ply];
        line.clear();
        line.push(m);
        if let Some(child) = tail.first() {
            line.extend_from_slice(child);
        }
    }

    /// The principal variation of the last completed root search.
    pub fn root_pv(&self) -> Vec<Move> {
        self.pv.first().cloned().unwrap_or_default()
    }

    /// The hash move for the root, if the table knows one.
    pub fn root_tt_move(&self) -> Option<TtMove> {
        self.hashes
            .get(self.root_index)
            .and_then(|h| self.tt.probe(*h))
            .and_then(|e| e.mv)
    }

    /// One iteration at `depth` with the aspiration window around `prev`.
    /// `None` when stopped.
    /// The best lines of the root moves after `best` (the iteration's
    /// line, just searched to `depth` with `score`), up to `multipv` lines
    /// in all: each the best of the moves no line before it starts with,
    /// searched to the same depth. Fewer when the root has fewer moves or
    /// the search is stopped (a line cut short is left out). After, the
    /// root's moves to search are as before, and the table's root entry is
    /// `best`'s again: the other lines' searches stored theirs there, and
    /// the next iteration, searching that move first, played it when
    /// stopped early (Rd1 for Rxd5 winning the queen, at 694 nodes).
    pub fn other_lines<P: Rules>(
        &mut self,
        root: &P,
        root_moves: &MoveList,
        (best, score): (&[Move], i32),
        depth: u32,
        multipv: usize,
    ) -> Vec<(i32, Vec<Move>)> {
        let mut lines = Vec::new();
        let Some(&first) = best.first() else {
            return lines;
        };
        let asked = self.root_moves.take();
        let mut taken = vec![first];
        while lines.len() + 1 < multipv {
            let rest: MoveList = root_moves
                .iter()
                .filter(|m| !taken.contains(m))
                .copied()
                .collect();
            let Some(&fallback) = rest.first() else {
                break;
            };
            self.root_moves = Some(rest);
            self.root_best = None;
            let Some(score) = self.iterate(root, depth, None) else {
                break;
            };
            let best_of_rest = self.root_best.as_ref().map(|b| b.pv.clone());
            let pv = [Some(self.root_pv()), best_of_rest]
                .into_iter()
                .flatten()
                .find(|pv| pv.first().is_some_and(|m| !taken.contains(m)))
                .unwrap_or_else(|| vec![fallback]);
            taken.push(pv[0]);
            lines.push((score, pv));
        }
        self.root_moves = asked;
        if lines.is_empty() {
            return lines;
        }
        let root_hash = self.hashes[self.root_index];
        self.tt.store(
            root_hash,
            Some(TtMove::of(&first)),
            depth as i32,
            score_to_tt(score, 0),
            TtBound::Exact,
        );
        lines
    }

    pub fn iterate<P: Rules>(&mut self, root: &P, depth: u32, prev: Option<i32>) -> Option<i32> {
        let root_hash = self.hashes[self.root_index];
        let in_check = root.is_check();
        let depth = depth as i32;
        let mut delta = 25;
        let (mut alpha, mut beta) = match prev {
            Some(p) if depth >= 5 && p.abs() < DECIDED => (p - delta, p + delta),
            _ => (-INF, INF),
        };
        loop {
            let score = self.negamax(root, root_hash, in_check, depth, alpha, beta, 0, true);
            if self.stopped {
                return None;
            }
            if score <= alpha && alpha > -INF {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INF);
            } else if score >= beta && beta < INF {
                beta = (score + delta).min(INF);
            } else {
                return Some(score);
            }
            delta *= 2;
            if delta > 1000 {
                alpha = -INF;
                beta = INF;
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn negamax<P: Rules>(
        &mut self,
        pos: &P,
        hash: u64,
        in_check: bool,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        allow_null: bool,
    ) -> i32 {
        let pv_node = beta - alpha > 1;
        if let Some(line) = self.pv.get_mut(ply) {
            line.clear();
        }

        if ply > 0 {
            if let Some(score) = pos.variant_end(ply) {
                return score;
            }
            let halfmoves = pos.halfmoves();
            if self.is_repetition(halfmoves) || insufficient_material(pos) {
                return 0;
            }
            if halfmoves >= 100 && !(in_check && pos.legal_moves().is_empty()) {
                return 0;
            }
            // Mate-distance pruning.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
            if ply >= MAX_PLY - 1 {
                return pos.evaluate();
            }
        }

        if in_check {
            depth += 1;
        }
        if depth <= 0 {
            return self.qsearch(pos, alpha, beta, ply);
        }

        self.nodes += 1;
        if self.poll() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);

        let entry = self.tt.probe(hash);
        let tt_move = entry.and_then(|e| e.mv);
        if let Some(e) = entry
            && ply > 0
            && !pv_node
            && e.depth >= depth
        {
            let s = score_from_tt(e.score, ply);
            match e.bound {
                TtBound::Exact => return s,
                TtBound::Lower if s >= beta => return s,
                TtBound::Upper if s <= alpha => return s,
                _ => {}
            }
        }

        // A capture or pawn move into the tables: the game's result is
        // known (Stockfish's probe). A win or loss bounds the score (a win
        // may be a mate); a bound that decides the window, or a draw, is
        // the answer.
        let mut tb_floor = -INF;
        let mut tb_ceiling = INF;
        if ply > 0
            && pos.halfmoves() == 0
            && let Some(chess) = pos.chess()
            && let Some(wdl) = self.tables.and_then(|t| t.wdl_after_zeroing(chess))
        {
            self.tbhits += 1;
            let (value, bound) = syzygy::value_after_zeroing(wdl, self.fifty_move_rule, ply);
            let (decides, tt_bound) = match bound {
                syzygy::Bound::Exactly => (true, TtBound::Exact),
                syzygy::Bound::AtLeast => (value >= beta, TtBound::Lower),
                syzygy::Bound::AtMost => (value <= alpha, TtBound::Upper),
            };
            if decides {
                self.tt.store(
                    hash,
                    None,
                    (depth + 6).min(MAX_DEPTH as i32),
                    score_to_tt(value, ply),
                    tt_bound,
                );
                return value;
            }
            if pv_node {
                match bound {
                    syzygy::Bound::AtLeast => {
                        tb_floor = value;
                        alpha = alpha.max(value);
                    }
                    _ => tb_ceiling = value,
                }
            }
        }

        let static_eval = if in_check { -INF } else { pos.evaluate() };
        let mate_window = beta.abs() >= DECIDED || alpha.abs() >= DECIDED;

        // Reverse futility: far above beta at low depth, assume a cut.
        if !pv_node && !in_check && !mate_window && depth <= 6 && static_eval - 80 * depth >= beta {
            return static_eval;
        }

        // Null move: if passing still beats beta, a real move will too. Not
        // in pawn endings, where zugzwang is the rule.
        if !pv_node
            && !in_check
            && allow_null
            && !mate_window
            && depth >= 3
            && static_eval >= beta
            && has_pieces(pos)
            && pos.null_move_ok()
            && let Some(null) = pos.passed()
        {
            let r = 3 + depth / 6 + ((static_eval - beta) / 200).min(2);
            let null_hash = if pos.maybe_ep_square().is_some() {
                game::hash(&null)
            } else {
                hash ^ Zobrist64::zobrist_for_white_turn().0
            };
            self.hashes.push(null_hash);
            let floor = std::mem::replace(&mut self.rep_floor, self.hashes.len() - 1);
            let score = -self.negamax(
                &null,
                null_hash,
                false,
                depth - 1 - r,
                -beta,
                -beta + 1,
                ply + 1,
                false,
            );
            self.rep_floor = floor;
            self.hashes.pop();
            if self.stopped {
                return 0;
            }
            if score >= beta {
                return if score >= DECIDED { beta } else { score };
            }
        }

        // Internal iterative reduction: no hash move, probably not worth the
        // full depth yet.
        if ply > 0 && tt_move.is_none() && depth >= 4 {
            depth -= 1;
        }

        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        if ply == 0
            && let Some(root_moves) = &self.root_moves
        {
            moves.clone_from(root_moves);
        }
        let us = pos.turn();
        let mut scores = [0i32; 256];
        let killers = self.killers[ply];
        for (m, s) in moves.iter().zip(scores.iter_mut()) {
            *s = if tt_move.is_some_and(|t| t.matches(m)) {
                10_000_000
            } else if m.is_capture() || m.is_promotion() {
                capture_order(pos, *m)
            } else if Some(*m) == killers[0] {
                900_000
            } else if Some(*m) == killers[1] {
                800_000
            } else {
                self.history.get(us, *m)
            };
        }

        let futility = !pv_node
            && !in_check
            && !mate_window
            && depth <= 3
            && static_eval + 120 * depth <= alpha;
        let lmr = lmr_table();
        let original_alpha = alpha;
        let mut best_score = -INF;
        let mut best_move = None;
        let mut searched = 0usize;
        // Quiet moves searched without a cut-off (the first 64), for the
        // history malus; a fixed array keeps the frame small.
        let mut quiets_tried = [moves[0]; 64];
        let mut quiet_count = 0usize;

        for i in 0..moves.len() {
            pick_best(&mut moves, &mut scores, i);
            let m = moves[i];
            let quiet = !m.is_capture() && !m.is_promotion();
            // Quiet, and not a pawn run to the 6th/7th rank either: safe to
            // prune or reduce.
            let mut child = pos.clone();
            child.play_unchecked(m);
            let gives_check = child.is_check();
            // Nor one that ends a variant's game (the king onto the hill).
            let calm = quiet && !advanced_pawn_push(m, us) && !child.is_variant_end();

            if ply > 0 && calm && !gives_check && searched > 0 && best_score > -DECIDED {
                if futility {
                    continue;
                }
                // Late-move pruning: quiet moves late in the list at low depth.
                if !pv_node && !in_check && depth <= 3 && quiet_count >= 4 + 4 * depth as usize {
                    continue;
                }
            }

            let child_hash = hash_after(pos, hash, m, &child);
            self.hashes.push(child_hash);
            let new_depth = depth - 1;
            let score = if searched == 0 {
                -self.negamax(
                    &child,
                    child_hash,
                    gives_check,
                    new_depth,
                    -beta,
                    -alpha,
                    ply + 1,
                    true,
                )
            } else {
                let mut r = 0;
                if depth >= 3 && calm && !in_check && !gives_check && searched >= 3 {
                    r = i32::from(lmr[(depth as usize).min(63)][searched.min(63)]);
                    if pv_node {
                        r -= 1;
                    }
                    if Some(m) == killers[0] || Some(m) == killers[1] {
                        r -= 1;
                    }
                    r = r.clamp(0, new_depth - 1);
                }
                let mut s = -self.negamax(
                    &child,
                    child_hash,
                    gives_check,
                    new_depth - r,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    true,
                );
                if s > alpha && r > 0 && !self.stopped {
                    s = -self.negamax(
                        &child,
                        child_hash,
                        gives_check,
                        new_depth,
                        -alpha - 1,
                        -alpha,
                        ply + 1,
                        true,
                    );
                }
                if s > alpha && s < beta && !self.stopped {
                    s = -self.negamax(
                        &child,
                        child_hash,
                        gives_check,
                        new_depth,
                        -beta,
                        -alpha,
                        ply + 1,
                        true,
                    );
                }
                s
            };
            self.hashes.pop();
            if self.stopped {
                return 0;
            }
            searched += 1;

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(m);
                    alpha = score;
                    self.update_pv(ply, m);
                    if ply == 0 {
                        self.root_best = Some(RootBest {
                            pv: self.pv[0].clone(),
                        });
                    }
                    if score >= beta {
                        if quiet {
                            self.reward_quiet(
                                us,
                                m,
                                ply,
                                depth,
                                &quiets_tried[..quiet_count.min(64)],
                            );
                        }
                        break;
                    }
                }
            }
            if quiet {
                if let Some(slot) = quiets_tried.get_mut(quiet_count) {
                    *slot = m;
                }
                quiet_count += 1;
            }
        }

        // The tables' bound on a PV node holds whatever the moves found;
        // when it is the score, it is a bound (a win may be a mate).
        let best_score = best_score.clamp(tb_floor, tb_ceiling);
        let bound = if best_score >= beta || (best_move.is_none() && best_score == tb_floor) {
            TtBound::Lower
        } else if best_score == tb_ceiling {
            TtBound::Upper
        } else if alpha > original_alpha {
            TtBound::Exact
        } else {
            TtBound::Upper
        };
        self.tt.store(
            hash,
            best_move.as_ref().map(TtMove::of).or(tt_move),
            depth,
            score_to_tt(best_score, ply),
            bound,
        );
        best_score
    }

    fn reward_quiet(&mut self, us: Color, m: Move, ply: usize, depth: i32, tried: &[Move]) {
        let killers = &mut self.killers[ply];
        if killers[0] != Some(m) {
            killers[1] = killers[0];
            killers[0] = Some(m);
        }
        let bonus = (depth * depth).min(400) * 16;
        self.history.update(us, m, bonus);
        for q in tried {
            self.history.update(us, *q, -bonus);
        }
    }

    fn qsearch<P: Rules>(&mut self, pos: &P, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.nodes += 1;
        if self.poll() {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if let Some(score) = pos.variant_end(ply) {
            return score;
        }
        if ply >= MAX_PLY - 1 {
            return pos.evaluate();
        }

        // In check: every evasion (legal), no stand-pat. Otherwise: stand
        // pat, then the captures and promotions (pseudo-legal), the losing
        // ones and those that cannot reach alpha skipped. A variant's
        // captures are its legal ones (no exchange evaluation there).
        let mut scores = [0i32; 256];
        let pseudo_legal = pos.chess().is_some();
        let (mut moves, stand_pat) = if pos.checkers().any() {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                return -MATE + ply as i32;
            }
            for (m, s) in moves.iter().zip(scores.iter_mut()) {
                *s = if m.is_capture() || m.is_promotion() {
                    capture_order(pos, *m)
                } else {
                    0
                };
            }
            (moves, None)
        } else {
            let stand_pat = pos.evaluate();
            if stand_pat >= beta {
                return stand_pat;
            }
            alpha = alpha.max(stand_pat);
            let mut moves = MoveList::new();
            match pos.chess() {
                Some(chess) => generate_captures(chess, &mut moves),
                None => {
                    moves = pos.legal_moves();
                    moves.retain(|m| m.is_capture() || m.is_promotion());
                }
            }
            for (m, s) in moves.iter().zip(scores.iter_mut()) {
                *s = capture_order(pos, *m);
            }
            (moves, Some(stand_pat))
        };
        let mut best = stand_pat.unwrap_or(-INF);
        let us = pos.turn();
        let king = pos.board().king_of(us);
        for i in 0..moves.len() {
            pick_best(&mut moves, &mut scores, i);
            let m = moves[i];
            if let Some(stand_pat) = stand_pat {
                let gain = m.capture().map_or(0, see_value)
                    + m.promotion()
                        .map_or(0, |p| see_value(p) - see_value(Role::Pawn));
                // Delta pruning: even winning the piece cannot reach alpha.
                if stand_pat + gain + 200 <= alpha {
                    continue;
                }
                if scores[i] < 0 {
                    // Losing captures (SEE < 0) are ordered last: done.
                    break;
                }
            }
            let mut child = pos.clone();
            child.play_unchecked(m);
            // Captures are generated pseudo-legal (evasions are legal): reject
            // those that leave our king attacked.
            if stand_pat.is_some()
                && pseudo_legal
                && let Some(k) = if m.role() == Role::King {
                    Some(m.to())
                } else {
                    king
                }
                && child
                    .board()
                    .attacks_to(k, !us, child.board().occupied())
                    .any()
            {
                continue;
            }
            let score = -self.qsearch(&child, -beta, -alpha, ply + 1);
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

/// Does the side to move have a piece besides pawns and king?
fn has_pieces(pos: &impl Position) -> bool {
    let board = pos.board();
    (board.by_color(pos.turn()) & !board.pawns() & !board.kings()).any()
}

fn insufficient_material(pos: &impl Position) -> bool {
    let board = pos.board();
    (board.pawns() | board.rooks_and_queens()).is_empty() && pos.is_insufficient_material()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tt_mate_scores_are_ply_relative() {
        let s = MATE - 5;
        assert_eq!(score_from_tt(score_to_tt(s, 3), 3), s);
        assert_eq!(score_to_tt(s, 3), MATE - 2);
        assert_eq!(score_from_tt(score_to_tt(-s, 7), 7), -s);
    }
}
