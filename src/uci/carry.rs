//! What a game's decisions carry from one `go` to the next: what the move
//! played predicted ([`Seed`]), how often the nominal opponent's predicted
//! reply came ([`HitRate`]), the game's random numbers and whether the last
//! decision at a level found the game decided. A new game starts afresh.

use std::sync::{Arc, Mutex};

use mpcmc_protocol::GameMove;

use crate::mpc::{Decision, Game, level::Rng};

/// What the move played predicted: the position after it, the one the game
/// reaches if the opponent replies as the nominal opponent said, and the
/// evaluator's move there (its leaf search after our move and the reply).
#[derive(Debug, Clone, Copy)]
pub struct Seed {
    /// [`crate::mpc::game::hash`] of the position after our move.
    after_ours: u64,
    /// The same of the position after the predicted reply.
    position: u64,
    best: Option<GameMove>,
    /// The reply to it was counted (a `go` that ends without a decision
    /// leaves the seed for the next one, which must not count it again).
    counted: bool,
}

impl Seed {
    /// What `d`, decided at `game`'s position, predicted with its move:
    /// `None` when the nominal opponent made no prediction for it.
    fn of(game: &Game, d: &Decision) -> Option<Seed> {
        let c = d.candidates.iter().find(|c| c.mv == d.best)?;
        let reply = c.reply?;
        Some(Seed {
            after_ours: game.hash_after(&[c.mv]),
            position: game.hash_after(&[c.mv, reply]),
            best: c.leaf.as_ref().and_then(|leaf| leaf.best),
            counted: false,
        })
    }
}

/// How often the nominal opponent's predicted reply to the move played was
/// the reply the game went on with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HitRate {
    pub predicted: u32,
    pub hits: u32,
}

impl std::fmt::Display for HitRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the nominal opponent predicted {} of {} replies this game ({:.0} %)",
            self.hits,
            self.predicted,
            100.0 * f64::from(self.hits) / f64::from(self.predicted.max(1))
        )
    }
}

/// What a game's decisions carry to the next: the latest played move's
/// [`Seed`] and the opponent's [`HitRate`] so far. A new game starts it
/// afresh.
#[derive(Debug, Clone, Copy, Default)]
pub struct Carry {
    seed: Option<Seed>,
    pub replies: HitRate,
    /// The game's draws (a level's, the book's): from `Seed` at the
    /// game's first draw, or a fresh seed when it is 0.
    rng: Option<Rng>,
    /// The last decision at a level that drew found the game decided:
    /// the next searches at
    /// [`crate::mpc::level::Level::decided_call_nodes`]. A pass cut short
    /// that played the root search's move leaves it as it was.
    pub decided: bool,
}

/// The session's [`Carry`], read and written by each `go`.
pub type CarryCell = Arc<Mutex<Carry>>;

impl Carry {
    /// Keeps what `d`, whose move is played at `game`'s position,
    /// predicted about the position after its move and the reply, for the
    /// next decision.
    pub fn keep_seed(&mut self, game: &Game, d: &Decision) {
        self.seed = Seed::of(game, d);
    }

    /// When `game`'s position is our move played and one reply after the
    /// last seed's, counts whether the reply was the predicted one: the
    /// game's hit rate so far, once a reply was counted.
    pub fn count_reply(&mut self, game: &Game) -> Option<HitRate> {
        let hashes = game.hashes();
        let &[after_ours, now] = hashes.get(hashes.len().saturating_sub(2)..)? else {
            return None;
        };
        let seed = self
            .seed
            .as_mut()
            .filter(|s| s.after_ours == after_ours && !s.counted)?;
        seed.counted = true;
        self.replies.predicted += 1;
        self.replies.hits += u32::from(seed.position == now);
        Some(self.replies)
    }

    /// The evaluator's move at `game`'s position as the previous decision
    /// found it, if the game went as it predicted and the move is among
    /// `candidates`.
    pub fn anchor_hint(&self, game: &Game, candidates: &[GameMove]) -> Option<GameMove> {
        let seed = self.seed?;
        let best = seed.best?;
        (seed.position == game.hash_after(&[]) && candidates.contains(&best)).then_some(best)
    }

    /// The next random number of the game's draws: from `seed` (the option)
    /// at the game's first draw, a fresh seed when it is 0.
    pub fn random(&mut self, seed: u64) -> u64 {
        self.rng
            .get_or_insert_with(|| match seed {
                0 => Rng::from_entropy(),
                seed => Rng::new(seed),
            })
            .next_u64()
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, uci::UciMove};

    use super::*;

    fn game(moves: &[&str]) -> Game {
        let mut g = Game::from_fen(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            CastlingMode::Standard,
        )
        .expect("start position");
        for m in moves {
            g.push_uci(&m.parse::<UciMove>().expect("uci"))
                .expect("legal");
        }
        g
    }

    /// The seed a decision at `at` playing `ours`, with `reply` predicted
    /// and `best` the evaluator's move after it, leaves.
    fn seed(at: &[&str], ours: &str, reply: &str, best: Option<GameMove>) -> Seed {
        let after = |moves: &[&str]| {
            let line: Vec<&str> = at.iter().copied().chain(moves.iter().copied()).collect();
            game(&line).hash_after(&[])
        };
        Seed {
            after_ours: after(&[ours]),
            position: after(&[ours, reply]),
            best,
            counted: false,
        }
    }

    #[test]
    fn a_reply_is_counted_once_hit_or_miss() {
        let mut carry = Carry {
            seed: Some(seed(&[], "e2e4", "e7e5", None)),
            ..Carry::default()
        };
        // Not yet our move and a reply after the seed's position.
        assert_eq!(carry.count_reply(&game(&["e2e4"])), None);
        let hit = carry.count_reply(&game(&["e2e4", "e7e5"]));
        assert_eq!(
            hit,
            Some(HitRate {
                predicted: 1,
                hits: 1
            })
        );
        // The next `go` at the same position does not count it again.
        assert_eq!(carry.count_reply(&game(&["e2e4", "e7e5"])), None);
        carry.seed = Some(seed(&["e2e4", "e7e5"], "g1f3", "b8c6", None));
        let miss = carry.count_reply(&game(&["e2e4", "e7e5", "g1f3", "d7d6"]));
        assert_eq!(
            miss,
            Some(HitRate {
                predicted: 2,
                hits: 1
            })
        );
        // Another move of ours than the seed's: nothing to count.
        carry.seed = Some(seed(&[], "d2d4", "d7d5", None));
        assert_eq!(carry.count_reply(&game(&["e2e4", "d7d5"])), None);
    }

    #[test]
    fn the_anchor_hint_holds_only_where_the_prediction_came_true() {
        let g = game(&["e2e4", "e7e5"]);
        let best = g.legal_moves()[0];
        let carry = Carry {
            seed: Some(seed(&[], "e2e4", "e7e5", Some(best))),
            ..Carry::default()
        };
        assert_eq!(carry.anchor_hint(&g, &[best]), Some(best));
        // Not among the moves weighed (`go searchmoves`).
        assert_eq!(carry.anchor_hint(&g, &[]), None);
        // The game went another way.
        let other = game(&["e2e4", "c7c5"]);
        assert_eq!(carry.anchor_hint(&other, &[best]), None);
    }

    #[test]
    fn a_seed_repeats_the_draws_and_zero_does_not() {
        let draws = |seed| {
            let mut carry = Carry::default();
            [carry.random(seed), carry.random(seed), carry.random(seed)]
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        assert_ne!(draws(0), draws(0));
    }
}
