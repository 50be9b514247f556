//! The rules of a game mpcmc knows by its `UCI_Variant` name only
//! (xiangqi, shogi, makruk…), from a child: the evaluator's engine lists
//! each position's legal moves (`go perft 1`), every move the GUI sent is
//! checked against those lists, and a position with none is scored by a
//! short search of the child (how the game ended for the side to move).
//!
//! One child of the evaluator's configuration does this, started when a
//! game first needs it, beside the pool's workers: a list is one quick
//! call, and the lists of the game's positions are kept, so a `go` asks
//! for the two positions that are new since the last one.

use std::{collections::HashMap, sync::Arc, time::Duration};

use mpcmc_protocol::{
    GameMove, MoveText,
    game::{Rules, VariantEnd},
};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::{
    children::client::{ChildConfig, Client, Connect},
    children::error::{ChildError, SearchError},
    mpc::{ChildLimit, Game, Query, Value},
};

/// The nodes of the search that scores a position without moves: the
/// child answers `bestmove (none)` with the game's result at once.
const END_NODES: u64 = 1;

/// How many positions' lists are kept before they are forgotten.
const KEPT_LISTS: usize = 4096;

/// The child that knows the rules; see the module docs.
pub struct RulesChild {
    config: Option<ChildConfig>,
    connect: Connect,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    client: Option<Client>,
    /// Lists by position key ([`Game::hash_after`]).
    lists: HashMap<u64, Vec<MoveText>>,
}

/// A game whose moves a child checked: the game (up to the first move not
/// on a list), with its current position's moves and end.
pub struct Listed {
    pub game: Game,
    /// One sentence for a move not on its position's list.
    pub notes: Vec<String>,
}

impl RulesChild {
    /// A rules child of `config` (the evaluator's; `None`: the pool has no
    /// evaluator), started through `connect` when first needed.
    pub fn new(config: Option<ChildConfig>, connect: Connect) -> RulesChild {
        RulesChild {
            config,
            connect,
            state: Mutex::new(State::default()),
        }
    }

    /// `game` with its current position's legal moves, each move the GUI
    /// sent checked against its position's list (the game stops before
    /// the first that is not on it, said in a note), and, where there is
    /// no move, how the game ended. A game whose rules mpcmc knows is
    /// returned as it is.
    pub async fn list(&self, game: &Game) -> Result<Listed, ChildError> {
        let listed = Listed {
            game: game.clone(),
            notes: Vec::new(),
        };
        if game.position().is_some() {
            return Ok(listed);
        }
        let mut state = self.state.lock().await;
        if state.lists.len() > KEPT_LISTS {
            state.lists.clear();
        }
        // A child that failed was dropped (its process ended): the next
        // list starts a new one.
        self.check(&mut state, game, listed).await
    }

    async fn check(
        &self,
        state: &mut State,
        game: &Game,
        mut listed: Listed,
    ) -> Result<Listed, ChildError> {
        let moves = game.moves();
        for plies in 0..=moves.len() {
            // A position listed before whose move is on its list needs
            // nothing built (its key: the hash the game kept for it).
            let kept = game
                .hashes()
                .get(plies)
                .and_then(|key| state.lists.get(key));
            if let (Some(list), Some(GameMove::Named(m))) = (kept, moves.get(plies))
                && list.contains(m)
            {
                continue;
            }
            let before = Arc::new(game.truncated(plies));
            let legal = self.legal(state, &before).await?;
            match moves.get(plies) {
                Some(GameMove::Named(m)) if !legal.contains(m) => {
                    listed.notes.push(format!(
                        "illegal move '{m}' (move {}) in {}; position set to the moves before it",
                        plies + 1,
                        before.describe_after(&[])
                    ));
                    listed.game = self.ended(state, before, legal).await?;
                    return Ok(listed);
                }
                Some(_) => {}
                None => listed.game = self.ended(state, before, legal).await?,
            }
        }
        Ok(listed)
    }

    /// The game with its position's `legal` moves, and when there are
    /// none, the end the child's score of the position says.
    async fn ended(
        &self,
        state: &mut State,
        game: Arc<Game>,
        legal: Vec<MoveText>,
    ) -> Result<Game, ChildError> {
        let end = match legal.is_empty() {
            true => Some(self.end(state, &game).await?),
            false => None,
        };
        Ok(Game::clone(&game).with_legal(legal, end))
    }

    /// The legal moves of `game`'s position: kept, or listed by the child.
    async fn legal(
        &self,
        state: &mut State,
        game: &Arc<Game>,
    ) -> Result<Vec<MoveText>, ChildError> {
        let key = game.hash_after(&[]);
        if let Some(list) = state.lists.get(&key) {
            return Ok(list.clone());
        }
        let mut client = self.client(state, game.rules()).await?;
        let list = client.perft(game).await?;
        state.client = Some(client);
        state.lists.insert(key, list.clone());
        Ok(list)
    }

    /// How the game ended at `game`'s position (which has no move), as a
    /// minimal search of the child scores it.
    async fn end(&self, state: &mut State, game: &Arc<Game>) -> Result<VariantEnd, ChildError> {
        let query = Query::root(game.clone(), ChildLimit::Nodes(END_NODES));
        let mut client = self.client(state, game.rules()).await?;
        let report = match client.search(&query, &CancellationToken::new()).await {
            Ok(report) => report,
            Err(SearchError::Child(e)) => return Err(e),
            Err(e) => {
                return Err(ChildError::BadAnswer {
                    engine: client.label().to_owned(),
                    line: String::new(),
                    fen: game.describe_after(&[]),
                    reason: format!("scoring a position without moves: {e}"),
                });
            }
        };
        state.client = Some(client);
        Ok(Value::end_of(report.score))
    }

    /// The child, started when first needed (and again after it failed),
    /// taken out for a call: a call that fails or is dropped half-way
    /// drops it (its process ends), so no later call reads its answers.
    async fn client(&self, state: &mut State, rules: Rules) -> Result<Client, ChildError> {
        if let Some(client) = state.client.take() {
            return Ok(client);
        }
        let Some(mut config) = self.config.clone() else {
            return Err(ChildError::NoVariant {
                engine: "the pool".to_owned(),
                variant: rules,
                offered: "no evaluator to list the moves".to_owned(),
            });
        };
        // It lists moves: no hash share, one thread.
        for (name, value) in [("Hash", "1"), ("Threads", "1")] {
            config.options.push((name.to_owned(), value.to_owned()));
        }
        let label = format!("rules ({})", config.command);
        (self.connect)(config, label).await
    }

    /// Starts the child now when its pool plays a game mpcmc knows by
    /// name only and none runs (`isready`, with the pool's workers), so
    /// that its start-up is not charged to the first move's clock. A child
    /// that fails to start is left to the first listing, which tries again
    /// and says why.
    pub async fn warm(&self) {
        let Some(rules) = self.config.as_ref().map(|c| c.variant) else {
            return;
        };
        if rules.board().is_some() {
            return;
        }
        let mut state = self.state.lock().await;
        if state.client.is_none()
            && let Ok(client) = self.client(&mut state, rules).await
        {
            state.client = Some(client);
        }
    }

    /// Quits the child, if one was started.
    pub async fn shutdown(&self, timeout: Duration) {
        if let Some(client) = self.state.lock().await.client.take() {
            client.quit(timeout).await;
        }
    }
}
