//! The built-in engine alone as a UCI engine (`mpcmc engine`): the
//! protocol's session ([`mpcmc_protocol::session`]) with this engine
//! answering `go`.
//!
//! Which options it declares, and how they are set, is the caller's one
//! option table ([`Settings`]): the same table declares the meta-engine's,
//! and its command-line flags set both.

use std::{
    fmt,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use mpcmc_protocol::{
    OptionSpec,
    game::Rules,
    output::Output,
    session::{GoRequest, Opened, Searcher},
};
use shakmaty::{CastlingMode, variant::Variant};
use tokio::task::JoinHandle;

use crate::{
    Engine,
    go::{self, BuiltinGo},
    syzygy::Syzygy,
};

/// The options of the engine alone, as the caller's option table holds
/// them.
pub trait Settings {
    /// Why a `setoption` was refused.
    type Error: fmt::Display;
    /// The options it declares, in the order `uci` lists them.
    fn declared(&self) -> Vec<OptionSpec>;
    /// `setoption`; options it does not declare are refused.
    fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), Self::Error>;
    /// `Hash`, in megabytes.
    fn hash_mb(&self) -> usize;
    /// `Threads`: search threads ([`Engine::set_threads`]).
    fn threads(&self) -> usize;
    /// `MoveOverhead`: kept back from the clock and from `movetime`.
    fn move_overhead(&self) -> Duration;
    /// `UCI_Chess960`.
    fn castling_mode(&self) -> CastlingMode;
    /// `UCI_Variant`: chess or one of the lichess variants.
    fn variant(&self) -> Variant;
    /// `SyzygyPath` (trimmed; empty: no tables) and `Syzygy50MoveRule`.
    fn syzygy(&self) -> (String, bool);
}

/// The engine alone, answering a session's `go`.
pub struct Standalone<S> {
    settings: S,
    engine: Arc<Mutex<Engine>>,
    /// `ucinewgame` came: the next search clears first (the engine may still
    /// be busy with a stopped search now).
    clear: Arc<AtomicBool>,
    /// The tablebases of `SyzygyPath`, opened when it is set.
    tables: Opened<String, Syzygy>,
}

impl<S: Settings> Standalone<S> {
    pub fn new(settings: S) -> Standalone<S> {
        Standalone {
            engine: Arc::new(Mutex::new(Engine::new(
                crate::usable_hash_mb(settings.hash_mb()).value,
            ))),
            settings,
            clear: Arc::default(),
            tables: Opened::default(),
        }
    }
}

impl<S: Settings> Standalone<S> {
    /// The tablebases `SyzygyPath` names, opened once a path
    /// ([`Syzygy::opened`]).
    fn tables(&mut self, out: &Output) -> Option<Arc<Syzygy>> {
        Syzygy::opened(&mut self.tables, &self.settings.syzygy().0, out)
    }
}

impl<S: Settings> Searcher for Standalone<S> {
    type OptionError = S::Error;

    fn name(&self) -> String {
        format!("mpcmc-builtin {}", env!("CARGO_PKG_VERSION"))
    }

    fn options(&self) -> Vec<OptionSpec> {
        self.settings.declared()
    }

    /// A `SyzygyPath` is opened when set: what it holds is said then.
    fn set_option(
        &mut self,
        name: &str,
        value: Option<&str>,
        out: &Output,
    ) -> Result<(), S::Error> {
        self.settings.set(name, value)?;
        if name.trim().eq_ignore_ascii_case("SyzygyPath") {
            self.tables(out);
        }
        // The same board has one key in every variant: a new game's table.
        if name.trim().eq_ignore_ascii_case("UCI_Variant") {
            self.clear.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    fn castling_mode(&self) -> CastlingMode {
        self.settings.castling_mode()
    }

    fn rules(&self) -> Rules {
        Rules::Board(self.settings.variant())
    }

    /// The tablebases are opened (said once a path, as when it is set).
    async fn ready(&mut self, out: &Output) {
        self.tables(out);
    }

    fn new_game(&mut self) {
        self.clear.store(true, Ordering::Relaxed);
    }

    fn go(&mut self, request: GoRequest) -> JoinHandle<()> {
        let threads = crate::usable_threads(self.settings.threads());
        let hash = crate::usable_hash_mb(self.settings.hash_mb());
        for note in [&threads.note, &hash.note].into_iter().flatten() {
            request.out.info_string(note);
        }
        let tables = self.tables(&request.out);
        let fifty_move_rule = self.settings.syzygy().1;
        tokio::spawn(go::run(BuiltinGo {
            go: request.go,
            game: request.game,
            engine: self.engine.clone(),
            hash_mb: hash.value,
            threads: threads.value,
            clear: self.clear.clone(),
            out: request.out,
            overhead: self.settings.move_overhead(),
            tables,
            fifty_move_rule,
            stop: request.stop,
            ponderhit: request.ponderhit,
        }))
    }

    async fn shutdown(self) {}
}
