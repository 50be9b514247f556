//! How late this session's answers reach the GUI ([`Lateness`]): what the
//! machine's load and the pipes add to every deadline, measured while the
//! session runs and kept back beyond `MoveOverhead`.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use mpcmc_protocol::{GameMove, Go, game::Game};

use crate::children::pool::Recent;

/// How late this session's recent answers were, as the GUI saw them:
/// what this machine needs kept back now beyond `MoveOverhead`. Three
/// measures, each the most of its latest samples: how far past its
/// deadline an answer came (a busy machine wakes a timer late, a loaded
/// child answers `stop` late) and, on a clock, how much more the GUI
/// charged for a move than it took here from `go` to `bestmove` (the pipes
/// and the scheduling on both sides, read from the clock the next `go`
/// sends), each over the last [`Lateness::KEPT`] answers; and how late a
/// timer fired while searching, over the last [`Lateness::TICKS`]. The
/// margin follows the load up at once and back down as samples age.
#[derive(Debug, Default)]
pub struct Lateness {
    past_deadline: Recent<Duration, { Lateness::KEPT }>,
    outside: Recent<Duration, { Lateness::KEPT }>,
    /// How late this process's timers fired while it searched
    /// ([`watch_scheduling`]), the last [`Lateness::TICKS`].
    ticks: Recent<Duration, { Lateness::TICKS }>,
    /// Our last answer on a clock, until the next `go` tells its cost.
    answered: Option<Answered>,
}

/// An answer on our clock, for what the GUI charged for it.
#[derive(Debug, Clone, Copy)]
struct Answered {
    /// Plies in the game after our move, and the position's hash then.
    plies: usize,
    hash: u64,
    /// Our clock and increment as that `go` gave them, in ms.
    left: i64,
    inc: i64,
    /// From the `go` to the `bestmove`, here.
    took: Duration,
}

impl Lateness {
    /// The answers remembered.
    pub const KEPT: usize = 32;
    /// The timer ticks remembered: about three seconds of searching.
    pub const TICKS: usize = 300;

    /// A timer tick that fired `late`.
    pub fn on_tick(&mut self, late: Duration) {
        self.ticks.add(late);
    }

    /// The `go` for a move of ours in `game`: when it follows our last
    /// answer and the opponent's reply on the same clock, what the GUI
    /// charged for that answer beyond what it took here.
    pub fn on_go(&mut self, game: &Game, go: &Go) {
        let Some(last) = self.answered.take() else {
            return;
        };
        let us = game.turn();
        let follows = game.moves().len() == last.plies + 1
            && game.hashes().get(last.plies) == Some(&last.hash);
        if let (true, Some(now)) = (follows, go.clock_of(us).0) {
            // A time control reached in between adds to the clock: the
            // charge is then unknown (negative here), and not counted.
            let charged = last.left + last.inc - now;
            if let Ok(charged) = u64::try_from(charged) {
                let outside = Duration::from_millis(charged).saturating_sub(last.took);
                self.outside.add(outside);
            }
        }
    }

    /// Our answer `mv` in `game` to `go`, `took` after it arrived, `late`
    /// past its deadline (zero when in time, or without one).
    pub fn on_answer(
        &mut self,
        game: &Game,
        go: &Go,
        mv: GameMove,
        took: Duration,
        late: Duration,
    ) {
        self.past_deadline.add(late);
        let us = game.turn();
        let (left, inc) = go.clock_of(us);
        self.answered = left
            .filter(|_| go.movestogo != Some(1))
            .map(|left| Answered {
                plies: game.moves().len() + 1,
                hash: game.hash_after(&[mv]),
                left,
                inc: inc.unwrap_or(0).max(0),
                took,
            });
    }

    /// What to keep back for it: the most a recent answer came past its
    /// deadline, the most the GUI charged beyond a move's time here, and
    /// the most a recent timer tick fired late.
    pub fn margin(&self) -> Duration {
        [
            self.past_deadline.most(),
            self.outside.most(),
            self.ticks.most(),
        ]
        .into_iter()
        .map(Option::unwrap_or_default)
        .sum()
    }
}

/// The timer tick of [`watch_scheduling`].
const TICK: Duration = Duration::from_millis(10);

/// Measures, for as long as it runs (a search), how late this process's
/// timers fire — the machine's scheduling delay, which a busy machine adds
/// to every deadline — into `lateness`. Never ends.
pub async fn watch_scheduling(lateness: Arc<Mutex<Lateness>>) {
    loop {
        let due = Instant::now() + TICK;
        tokio::time::sleep_until(due.into()).await;
        let late = Instant::now().saturating_duration_since(due);
        if let Ok(mut l) = lateness.lock() {
            l.on_tick(late);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_follows_the_latest_answers() {
        let ms = Duration::from_millis;
        let mut late = Lateness::default();
        let game = Game::from_fen(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            shakmaty::CastlingMode::Standard,
        )
        .unwrap();
        let e4 = "e2e4".parse::<shakmaty::uci::UciMove>().unwrap();
        let e4 = e4
            .to_move(game.position().expect("a board game"))
            .unwrap()
            .into();
        let movetime = Go {
            movetime: Some(100),
            ..Go::default()
        };
        assert_eq!(late.margin(), ms(0));
        late.on_answer(&game, &movetime, e4, ms(90), ms(3));
        late.on_answer(&game, &movetime, e4, ms(90), ms(40));
        late.on_answer(&game, &movetime, e4, ms(90), ms(0));
        assert_eq!(late.margin(), ms(40));
        // Forgotten once as many answers in time have come after it.
        for _ in 0..Lateness::KEPT - 1 {
            late.on_answer(&game, &movetime, e4, ms(90), ms(2));
        }
        assert_eq!(late.margin(), ms(2));

        // On a clock: 1000 ms left, answered in 300 ms here; after the
        // reply the GUI says 750 left with 100 ms a move added: it charged
        // 350, 50 more than the move took here.
        let clock = |w: i64| Go {
            wtime: Some(w),
            btime: Some(1000),
            winc: Some(100),
            binc: Some(100),
            ..Go::default()
        };
        late.on_answer(&game, &clock(1000), e4, ms(300), ms(0));
        let mut next = game.clone();
        next.push(e4);
        let e5 = "e7e5".parse::<shakmaty::uci::UciMove>().unwrap();
        next.push(e5.to_move(next.position().expect("a board game")).unwrap());
        late.on_go(&next, &clock(750));
        assert_eq!(late.margin(), ms(2 + 50));
        // Only for the answer that led here: another game, or the same
        // `go` again, says nothing.
        late.on_answer(&game, &clock(1000), e4, ms(300), ms(0));
        late.on_go(&game, &clock(500));
        late.on_go(&next, &clock(100));
        assert_eq!(late.margin(), ms(2 + 50));
        // A time control reached in between: not counted.
        late.on_answer(&game, &clock(100), e4, ms(90), ms(0));
        late.on_go(&next, &clock(1050));
        assert_eq!(late.margin(), ms(2 + 50));
        // A timer that fired late while searching (a busy machine), until
        // enough ticks on time come after it.
        late.on_tick(ms(30));
        assert_eq!(late.margin(), ms(2 + 50 + 30));
        for _ in 0..Lateness::TICKS {
            late.on_tick(ms(1));
        }
        assert_eq!(late.margin(), ms(2 + 50 + 1));
    }
}
