//! Simulated child engines, for `mpcmc bench --simulate`: the pool's
//! scheduling at a scale this machine does not have.
//!
//! Each speaks UCI over an in-memory pipe, as a process does over its
//! pipes, through the real [`Client`]. It plays legal chess of no strength:
//! `go nodes N` takes `N / speed` seconds plus one network round trip
//! (`go movetime T`: `T` plus the round trip), then
//! names a legal move of the position it was given (picked by the
//! position's hash) with a score made from the same hash; `stop` answers at
//! once. `isready` costs a round trip too. Its search is a timer, not work:
//! hundreds of them run on two cores, and what the wall clock then shows
//! beyond the timers is the scheduler's own cost. Nothing here plays a game.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use mpcmc_protocol::{GuiCommand, game, parse_gui_line};
use shakmaty::{CastlingMode, Position, uci::UciMove, variant::Variant};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream},
    time::Instant,
};

use crate::{
    children::client::{ChildConfig, Client, Connect, Connecting},
    mpc::Game,
};

/// How fast the simulated children search and how far away they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    /// Nodes a second of one search.
    pub speed: u64,
    /// One round trip to a child (a request and its answer).
    pub latency: Duration,
}

impl Network {
    /// The time a search of `nodes` takes, seen from mpcmc.
    pub fn call(&self, nodes: u64) -> Duration {
        self.latency + Duration::from_secs_f64(nodes as f64 / self.speed.max(1) as f64)
    }
}

/// When each simulated search began (its `go` read) and ended (its
/// `bestmove` written), over every child of a pool.
#[derive(Debug, Clone, Default)]
pub struct Searches(Arc<Mutex<Vec<(std::time::Instant, std::time::Instant)>>>);

impl Searches {
    /// The searches logged since the last call.
    pub fn take(&self) -> Vec<(std::time::Instant, std::time::Instant)> {
        self.0
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
    }

    fn add(&self, began: std::time::Instant) {
        if let Ok(mut s) = self.0.lock() {
            s.push((began, std::time::Instant::now()));
        }
    }
}

/// For a pool: every child that is not built in is simulated on `network`,
/// its searches logged in `searches`.
pub fn simulated(network: Network, searches: Searches) -> Connect {
    Arc::new(move |config: ChildConfig, label: String| -> Connecting {
        let searches = searches.clone();
        Box::pin(async move {
            let (client_end, engine_end) = tokio::io::duplex(1 << 16);
            let castling = config.castling;
            tokio::spawn(async move {
                // A closed pipe ends the engine, as it ends a process.
                let _ = serve(engine_end, network, castling, searches).await;
            });
            let (reader, writer) = tokio::io::split(client_end);
            Client::over(&config, label, Box::new(reader), Box::new(writer)).await
        })
    })
}

/// The answer to a search of `game`'s position: its `info` and `bestmove`.
fn answer(game: Option<&Game>, nodes: u64, castling: CastlingMode) -> String {
    let Some(pos) = game.and_then(Game::position) else {
        return "bestmove (none)\n".to_owned();
    };
    let moves = pos.legal_moves();
    let hash = game::hash(pos);
    let Some(&best) = moves.get((hash % moves.len().max(1) as u64) as usize) else {
        return "info depth 1 score cp 0\nbestmove (none)\n".to_owned();
    };
    let best = UciMove::from_move(best, castling);
    let score = ((hash >> 16) % 101) as i64 - 50;
    format!("info depth 1 score cp {score} nodes {nodes} pv {best}\nbestmove {best}\n")
}

async fn serve(
    pipe: DuplexStream,
    network: Network,
    castling: CastlingMode,
    searches: Searches,
) -> std::io::Result<()> {
    let (reader, mut writer) = tokio::io::split(pipe);
    let mut lines = BufReader::new(reader).lines();
    let mut game: Option<Game> = None;
    // The search under way: when it began and ends, and what it answers.
    let mut searching: Option<(std::time::Instant, Instant, String)> = None;
    loop {
        let line = match &searching {
            Some((_, done, _)) => {
                let done = *done;
                tokio::select! {
                    line = lines.next_line() => line?,
                    () = tokio::time::sleep_until(done) => {
                        if let Some((began, _, text)) = searching.take() {
                            writer.write_all(text.as_bytes()).await?;
                            writer.flush().await?;
                            searches.add(began);
                        }
                        continue;
                    }
                }
            }
            None => lines.next_line().await?,
        };
        let Some(line) = line else { return Ok(()) };
        let Ok(parsed) = parse_gui_line(&line) else {
            continue;
        };
        let out = match parsed.command {
            GuiCommand::Uci => "id name simulated\nid author mpcmc bench\nuciok\n".to_owned(),
            GuiCommand::IsReady => {
                tokio::time::sleep(network.latency).await;
                "readyok\n".to_owned()
            }
            GuiCommand::Position { start, moves } => {
                game = Game::from_position_command(start, &moves, castling, Variant::Chess)
                    .ok()
                    .map(|(g, _)| g);
                continue;
            }
            GuiCommand::Go(go) => {
                // A node limit takes its nodes' time; a move time its time;
                // anything else (depth, a clock) a thousand nodes' time.
                let nodes = go.nodes.unwrap_or(1000);
                let took = match (go.nodes, go.movetime) {
                    (None, Some(ms)) => network.latency + Duration::from_millis(ms),
                    _ => network.call(nodes),
                };
                let text = answer(game.as_ref(), nodes, castling);
                let done = Instant::now() + took;
                searching = Some((std::time::Instant::now(), done, text));
                continue;
            }
            GuiCommand::Stop => match searching.take() {
                Some((began, _, text)) => {
                    writer.write_all(text.as_bytes()).await?;
                    writer.flush().await?;
                    searches.add(began);
                    continue;
                }
                None => continue,
            },
            GuiCommand::Quit => return Ok(()),
            _ => continue,
        };
        writer.write_all(out.as_bytes()).await?;
        writer.flush().await?;
    }
}

#[cfg(test)]
mod tests {
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::mpc::{ChildLimit, Query, Role};

    #[tokio::test]
    async fn a_simulated_search_takes_its_time_and_answers_a_legal_move() {
        let network = Network {
            speed: 1_000_000,
            latency: Duration::from_millis(5),
        };
        let searches = Searches::default();
        let connect = simulated(network, searches.clone());
        let mut child = connect(ChildConfig::new("simulated"), "sim 1".into())
            .await
            .expect("the handshake");
        let game = Arc::new(Game::new(
            None,
            shakmaty::Chess::default(),
            CastlingMode::Standard,
        ));
        let query = Query {
            role: Role::Evaluator,
            game,
            line: Vec::new(),
            limit: ChildLimit::Nodes(20_000),
            progress: None,
            ponderhit: None,
        };
        let start = std::time::Instant::now();
        let report = child
            .search(&query, &CancellationToken::new())
            .await
            .expect("an answer");
        let took = start.elapsed();
        // 20 ms of search and 5 of network, not much more.
        assert!(took >= network.call(20_000), "{took:?}");
        assert!(took < network.call(20_000) * 3, "{took:?}");
        assert!(
            report
                .best
                .and_then(|b| b.board())
                .is_some_and(|m| shakmaty::Chess::default().is_legal(m))
        );
        assert_eq!(report.nodes, 20_000);
        assert!(report.score.is_some());
        let logged = searches.take();
        assert_eq!(logged.len(), 1);
        assert!(logged[0].1 - logged[0].0 >= network.call(20_000));
    }

    #[tokio::test]
    async fn the_pool_knows_its_slowest_round_trip() {
        let network = Network {
            speed: 1_000_000,
            latency: Duration::from_millis(30),
        };
        let child = ChildConfig::new("simulated");
        let config = crate::children::PoolConfig::new(child.clone(), child, 2);
        let pool =
            crate::children::Pool::start_with(config, simulated(network, Searches::default()));
        pool.ready().await;
        let rtt = pool.round_trip();
        assert!(rtt >= network.latency, "{rtt:?}");
        assert!(rtt < network.latency * 4, "{rtt:?}");
        pool.shutdown().await;
    }
}
