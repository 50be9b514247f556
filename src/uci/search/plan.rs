//! How a `go` is budgeted: the plan its limits choose.

use std::time::{Duration, Instant};

use mpcmc_protocol::Go;

use crate::{
    children::pool::PoolConfig,
    mpc::time::MoveTime,
    mpc::{
        ChildLimit, Settings,
        budget::{node_rounds, virtual_pass, virtual_rounds},
        level::Level,
        rounds::RoundPlan,
    },
    uci::options::Options,
};

/// Per-call nodes for a bare `go` (no limit at all).
pub const BARE_GO_CALL_NODES: u64 = 10_000;

/// How the decision is budgeted.
#[derive(Debug, Clone)]
pub(super) enum Plan {
    /// A fixed amount of work: one pass, every call under one limit, or
    /// rounds over a node total.
    Fixed(Work),
    /// Rounds on a clock: a target and a hard limit.
    Timed(MoveTime),
    /// Passes of doubling size until stopped.
    Deepening,
    /// One pass at a level's budget, the move drawn ([`Search::at_level`](super::Search::at_level)).
    Level(Level),
}

/// When a root search that is the whole decision must answer.
#[derive(Debug, Clone, Copy)]
pub(super) enum Due {
    At(Instant),
    /// The move's cap after `ponderhit` (pondering, the clock is not
    /// ours before).
    AfterPonderhit(MoveTime),
}

/// What one pass of [`Search::pass`](super::Search::pass) runs.
#[derive(Debug, Clone)]
pub(super) enum Work {
    /// Every candidate once, its calls under `calls`; the root search
    /// under `root`, or as the settings size it beside such calls
    /// ([`Settings::root_limit`](crate::mpc::Settings::root_limit)) when
    /// `None` (virtual workers set it: [`virtual_pass`]).
    Pass {
        calls: ChildLimit,
        root: Option<ChildLimit>,
    },
    /// A root search and rounds ([`Rounds`](crate::mpc::rounds::Rounds)).
    Rounds(Box<RoundPlan>),
}

impl Work {
    /// One pass, every call under `calls`, the root search as the settings
    /// size it.
    pub(super) fn pass(calls: ChildLimit) -> Work {
        Work::Pass { calls, root: None }
    }
}

/// How `go` is budgeted; `time` is the move's on a clock or a move time
/// ([`MoveClock::time`](crate::mpc::time::MoveClock::time)). `moves` root moves are weighed, `branching` the
/// legal ones ([`node_rounds`]). `config` is the running pool's: the
/// level is over its children, as `settings` are
/// ([`Options::settings_in`]).
pub(super) fn plan(
    go: &Go,
    options: &Options,
    config: Option<&PoolConfig>,
    settings: Settings,
    time: Option<MoveTime>,
    (moves, branching): (usize, usize),
) -> Plan {
    let pass = |limit| Plan::Fixed(Work::pass(limit));
    // At a level every `go` but analysis (`go infinite`, full strength).
    if let Some(level) = options.level_in(config).filter(|_| !go.infinite) {
        return Plan::Level(level);
    }
    if options.child_nodes > 0 {
        return pass(ChildLimit::Nodes(options.child_nodes));
    }
    if options.child_movetime > 0 {
        return pass(ChildLimit::MoveTime(Duration::from_millis(
            options.child_movetime,
        )));
    }
    if let Some(depth) = go.depth {
        return pass(ChildLimit::Depth(depth.max(1)));
    }
    if let Some(depth) = go.mate_depth() {
        return pass(ChildLimit::Depth(depth));
    }
    if let Some(nodes) = go.nodes {
        // A total for the decision: rounds that follow the contenders. On
        // virtual workers, each worker's: with a worker for every root move
        // one even pass (the paper's setting); with fewer, rounds (an even
        // pass then gives each call a sliver, and lost: see VirtualWorkers).
        let plan = match options.virtual_workers {
            w if w > moves => {
                let (calls, root) = virtual_pass(nodes, settings, moves, branching);
                let root = Some(root);
                return Plan::Fixed(Work::Pass { calls, root });
            }
            w if w >= 2 => virtual_rounds(nodes, settings, moves, branching, w),
            _ => node_rounds(nodes, settings, moves, branching),
        };
        return Plan::Fixed(Work::Rounds(Box::new(plan)));
    }
    if go.ends_when_told() {
        return Plan::Deepening;
    }
    match time {
        Some(time) => Plan::Timed(time),
        None => pass(ChildLimit::Nodes(BARE_GO_CALL_NODES)),
    }
}

#[cfg(test)]
mod tests {
    use mpcmc_protocol::{GuiCommand, parse_gui_line};
    use shakmaty::Color;

    use super::*;
    use crate::mpc::time::MoveClock;

    /// The plan of the `go` line `line` under the options `set`, at the
    /// start position (20 moves), told in a few words.
    fn planned(line: &str, set: &Set) -> String {
        let Ok(parsed) = parse_gui_line(line) else {
            panic!("{line}");
        };
        let GuiCommand::Go(go) = parsed.command else {
            panic!("{line}");
        };
        let mut options = Options::default();
        for (name, value) in set {
            options.set(name, Some(value)).expect("option");
        }
        let overhead = Duration::from_millis(10);
        let clock = MoveClock::new(&go, Color::White, overhead);
        let config = options.pool_config().ok();
        match plan(
            &go,
            &options,
            config.as_ref(),
            options.settings_in(config.as_ref()),
            clock.time,
            (20, 20),
        ) {
            Plan::Fixed(Work::Pass { calls, root: None }) => format!("pass {calls}"),
            Plan::Fixed(Work::Pass {
                calls,
                root: Some(root),
            }) => format!("pass {calls}, root {root}"),
            Plan::Fixed(Work::Rounds(r)) => match r.lanes {
                Some(lanes) => format!("rounds on {lanes} lanes from {}", r.first),
                None => format!("rounds from {}", r.first),
            },
            Plan::Timed(t) => format!("timed {} {}", t.soft.as_millis(), t.hard.as_millis()),
            Plan::Deepening => "deepening".to_owned(),
            Plan::Level(level) => format!("level {}", level.elo()),
        }
    }

    /// Options set by name and value.
    type Set = [(&'static str, &'static str)];

    #[test]
    fn the_limits_choose_the_plan() {
        let level = [("UCI_LimitStrength", "true"), ("UCI_Elo", "1500")];
        let child_nodes = [("ChildNodes", "800")];
        let cases: [(&str, &Set, &str); 18] = [
            // The GUI's own limits.
            ("go movetime 1000", &[], "timed 990 990"),
            ("go wtime 60000 btime 60000", &[], "timed 2390 7170"),
            (
                "go wtime 60000 btime 60000 winc 1000 binc 1000",
                &[],
                "timed 3149 9447",
            ),
            ("go depth 7", &[], "pass depth 7"),
            ("go depth 0", &[], "pass depth 1"),
            ("go mate 2", &[], "pass depth 4"),
            ("go nodes 50000", &[], "rounds from nodes 17"),
            (
                "go nodes 50000",
                &[("VirtualWorkers", "8")],
                "rounds on 7 lanes from nodes 714",
            ),
            (
                "go nodes 50000",
                &[("VirtualWorkers", "21")],
                "pass nodes 25000, root nodes 50000",
            ),
            ("go infinite", &[], "deepening"),
            ("go ponder wtime 60000 btime 60000", &[], "deepening"),
            ("go", &[], "pass nodes 10000"),
            // A fixed per-call budget wins over the GUI's limits.
            ("go wtime 60000 btime 60000", &child_nodes, "pass nodes 800"),
            ("go depth 7", &[("ChildMoveTime", "30")], "pass movetime 30"),
            // At a level every `go` but analysis.
            ("go wtime 60000 btime 60000", &level, "level 1500"),
            ("go nodes 50000", &level, "level 1500"),
            ("go ponder wtime 60000 btime 60000", &level, "level 1500"),
            ("go infinite", &level, "deepening"),
        ];
        for (line, set, expected) in cases {
            assert_eq!(planned(line, set), expected, "{line} {set:?}");
        }
    }
}
