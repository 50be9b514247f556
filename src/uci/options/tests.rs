//! The options against their table, `uci-options.md` and the pool they ask for.

use super::{flags::documented_rows, *};
use crate::children::ChildConfig;

/// The last value `c` sets for option `name`.
fn option(c: &ChildConfig, name: &str) -> Option<String> {
    c.options
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
}

#[test]
fn set_is_case_insensitive_and_validates() {
    let mut o = Options::default();
    o.set("childnodes", Some("2000")).expect("spin");
    o.set("FORTIFY", Some("false")).expect("check");
    o.set("lookahead", Some("Half")).expect("combo");
    o.set("Evaluator", Some("/usr/games/stockfish --x"))
        .expect("string");
    o.set("LogFile", None).expect("empty string");
    assert_eq!(o.child_nodes, 2000);
    assert!(!o.fortify);
    assert_eq!(o.lookahead, Lookahead::Half);
    o.set("Lookahead", Some("three")).expect("combo");
    o.set("prunewidth", Some("5")).expect("spin");
    assert_eq!(
        (o.settings().lookahead, o.settings().prune_width),
        (Lookahead::Three, 5)
    );
    assert_eq!(o.evaluator, "/usr/games/stockfish --x");
    let errors = [
        ("Threads", Some("0"), "from 1 to 256"),
        ("Threads", Some("two"), "'two'"),
        ("Fortify", Some("yes"), "true or false"),
        ("Lookahead", Some("four"), "half, one, two or three"),
        ("PruneWidth", Some("0"), "from 1 to 256"),
        ("Hash", None, "needs a value"),
        (
            "No Such Option",
            Some("1"),
            "unknown option 'No Such Option'",
        ),
    ];
    for (name, value, want) in errors {
        let e = o.set(name, value).expect_err(name).to_string();
        assert!(e.contains(want), "{e}");
    }
    assert_eq!(o.threads, 1, "a rejected value leaves the option alone");
}

/// uci-options.md, written by hand, is the independent record: its
/// table has a row for every option with the declared type, default
/// and range, and nothing else; its `mpcmc engine` section names the
/// options the built-in engine alone declares.
#[test]
fn the_table_matches_uci_options_md() {
    // The first table: the options (later tables compare others).
    let rows = documented_rows();
    let documented: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(documented, names().collect::<Vec<_>>());
    for row in rows {
        let spec = Options::spec(&row[1]).expect("declared");
        let (kind, default, range) = match spec.kind {
            OptionType::Check { default } => ("check", default.to_string(), String::new()),
            OptionType::Spin { default, min, max } => (
                "spin",
                default.to_string(),
                format!("{min}–{max}").replace('-', "−"),
            ),
            OptionType::Combo { default, vars } => ("combo", default, vars.join(", ")),
            OptionType::String { default } if default.is_empty() => {
                ("string", "empty".to_owned(), row[4].clone())
            }
            OptionType::String { default } => ("string", default, row[4].clone()),
            OptionType::Button => ("button", String::new(), String::new()),
        };
        assert_eq!(
            [row[2].as_str(), row[3].as_str(), row[4].as_str()],
            [kind, default.as_str(), range.as_str()],
            "{}",
            row[1]
        );
    }
    let standalone = include_str!("../../../uci-options.md")
        .split("## `mpcmc engine`")
        .nth(1)
        .and_then(|s| s.split("declares").nth(1))
        .and_then(|s| s.split("(as above)").next())
        .expect("the mpcmc engine section");
    let named: Vec<String> = standalone
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    let declared: Vec<String> = Options::specs(true).into_iter().map(|s| s.name).collect();
    assert_eq!(named, declared);
    assert_eq!(flag_name("ChildNodes"), "child-nodes");
    assert_eq!(flag_name("UCI_Chess960"), "uci-chess960");
    assert_eq!(flag_name("MoveOverhead"), "move-overhead");
}

/// Each option's declared default is the value `Options::default`
/// holds (the two are written apart): setting every option to the
/// default it declares changes nothing. Two are unset until sent:
/// `ReplyWeight` (its default follows `Memoryless`) and
/// `UCI_RatingAdv` (only a GUI that knows the ratings sends it).
#[test]
fn the_declared_defaults_are_the_defaults() {
    let unset = ["ReplyWeight", "UCI_RatingAdv"];
    for def in TABLE.iter().filter(|d| !unset.contains(&d.name)) {
        let value = match (def.kind)() {
            OptionType::Check { default } => default.to_string(),
            OptionType::Spin { default, .. } => default.to_string(),
            OptionType::Combo { default, .. } | OptionType::String { default } => default,
            OptionType::Button => continue,
        };
        let mut o = Options::default();
        o.set(def.name, Some(&value)).expect(def.name);
        assert_eq!(o, Options::default(), "{} {value}", def.name);
    }
}

/// `ReplyWeight` mixes by default with warm children; `Memoryless` alone
/// is the paper's rule (no mix), and a value set wins either way.
#[test]
fn reply_weight_defaults_by_memoryless_unless_set() {
    let weight = |sets: &[(&str, &str)]| {
        let mut o = Options::default();
        for (name, value) in sets {
            o.set(name, Some(value)).expect("valid");
        }
        o.settings().reply_weight
    };
    assert_eq!(weight(&[]), 50);
    assert_eq!(weight(&[("Memoryless", "true")]), 0);
    assert_eq!(weight(&[("ReplyWeight", "0")]), 0);
    assert_eq!(weight(&[("Memoryless", "true"), ("ReplyWeight", "30")]), 30);
    assert_eq!(weight(&[("ReplyWeight", "30"), ("Memoryless", "true")]), 30);
    assert_eq!(
        weight(&[("Memoryless", "true"), ("Memoryless", "false")]),
        50
    );
}

/// The person the nominal opponent models: a rated human; an unrated
/// one at our level less `UCI_RatingAdv` when both are known; never a
/// computer. A value that does not parse leaves the model alone.
#[test]
fn the_person_is_a_rated_human() {
    let elo = |sets: &[(&str, &str)]| {
        let mut o = Options::default();
        o.set("PersonModel", Some("true")).expect("valid");
        for (name, value) in sets {
            o.set(name, Some(value)).expect("valid");
        }
        o.person().map(Level::elo)
    };
    assert_eq!(elo(&[]), None);
    assert_eq!(
        elo(&[("UCI_Opponent", "IM 2000 human Some Player")]),
        Some(2000)
    );
    // Off by default: the child itself.
    let mut off = Options::default();
    off.set("UCI_Opponent", Some("IM 2000 human Some Player"))
        .expect("valid");
    assert_eq!(off.person(), None);
    // Above the built-in engine's full strength it plays unlimited;
    // Stockfish models such a person at their rating.
    let gm = ("UCI_Opponent", "GM 2500 human Garry Kasparov");
    assert_eq!(elo(&[gm]), None);
    assert_eq!(elo(&[("Opponent", "/usr/games/stockfish"), gm]), Some(2500));
    assert_eq!(elo(&[("UCI_Opponent", "BOT 2650 computer some-bot")]), None);
    assert_eq!(elo(&[("UCI_Opponent", "none none human Name")]), None);
    let unrated = ("UCI_Opponent", "none none human Name");
    let at_level = [("UCI_LimitStrength", "true"), ("UCI_Elo", "1500")];
    assert_eq!(elo(&[unrated, ("UCI_RatingAdv", "300")]), None);
    assert_eq!(
        elo(&[unrated, at_level[0], at_level[1], ("UCI_RatingAdv", "300")]),
        Some(1200)
    );
    // Our level as asked, though we play it at full strength.
    let capped = [("UCI_LimitStrength", "true"), ("UCI_Elo", "2400")];
    assert_eq!(
        elo(&[unrated, capped[0], capped[1], ("UCI_RatingAdv", "500")]),
        Some(1900)
    );
    // A person below the lowest level is modelled at the lowest.
    assert_eq!(elo(&[("UCI_Opponent", "none 200 human Kid")]), Some(600));
    let mut o = Options::default();
    o.set("PersonModel", Some("true")).expect("valid");
    o.set("UCI_Opponent", Some("none 1300 human test"))
        .expect("valid");
    let e = o
        .set("UCI_Opponent", Some("GM strong human X"))
        .expect_err("no rating");
    assert!(e.to_string().contains("'GM strong human X'"), "{e}");
    assert_eq!(o.person().map(Level::elo), Some(1300));
    assert_eq!(o.settings().person, o.person());
    o.set("UCI_Opponent", Some("")).expect("empty");
    assert_eq!(o.person(), None);
}

/// A level counts the nodes of the engine it runs over: the
/// evaluator's for our own moves, the opponent role's for the person.
#[test]
fn the_levels_calibration_follows_the_engine() {
    use Calibration::{Builtin, Stockfish};
    for (command, want) in [
        ("builtin", Some(Builtin)),
        (" BuiltIn ", Some(Builtin)),
        ("/usr/games/stockfish", Some(Stockfish)),
        ("stockfish_16_x86-64-avx2", Some(Stockfish)),
        ("ssh -p 2222 host /opt/Stockfish/stockfish", Some(Stockfish)),
        ("slurm /usr/games/stockfish", Some(Stockfish)),
        ("ssh host /opt/bin/mpcmc engine", Some(Builtin)),
        ("'/tmp/a b/mpcmc' engine", Some(Builtin)),
        ("/opt/mpcmc", None),
        ("/usr/games/lc0", None),
        ("/tmp/stockfish-dir/other-engine", None),
        ("'unclosed", None),
    ] {
        assert_eq!(calibration_of(command), want, "{command}");
    }
    let mut o = Options::default();
    for (name, value) in [
        ("UCI_LimitStrength", "true"),
        ("UCI_Elo", "1500"),
        ("UCI_Opponent", "none 1300 human test"),
        ("PersonModel", "true"),
    ] {
        o.set(name, Some(value)).expect("valid");
    }
    let over = |o: &Options| {
        (
            o.level().map(Level::calibration),
            o.person().map(Level::calibration),
        )
    };
    assert_eq!(over(&o), (Some(Builtin), Some(Builtin)));
    o.set("Evaluator", Some("/usr/games/stockfish"))
        .expect("set");
    assert_eq!(over(&o), (Some(Stockfish), Some(Stockfish)));
    o.set("Opponent", Some("builtin")).expect("set");
    assert_eq!(over(&o), (Some(Stockfish), Some(Builtin)));
    o.set("Evaluator", Some("/usr/games/lc0")).expect("set");
    assert_eq!(over(&o), (Some(Builtin), Some(Builtin)));
    assert_eq!(o.level().map(Level::elo), Some(1500));
    // From the evaluator's engine's full strength up, no level: the
    // engine unlimited (the built-in engine's budgets here).
    o.set("UCI_Elo", Some("2600")).expect("set");
    assert_eq!(o.level(), None);
    assert_eq!(
        o.asked_level_in(o.pool_config().ok().as_ref())
            .map(Level::elo),
        Some(2600)
    );
    o.set("Evaluator", Some("/usr/games/stockfish"))
        .expect("set");
    assert_eq!(o.level().map(Level::elo), Some(2600));
}

/// With a fixed `Seed`, children clear their hash at a level (each call
/// a function of its position and budget) but not at a level the engine
/// plays at full strength, nor without a level; `Memoryless` always.
#[test]
fn children_clear_their_hash_at_a_seeded_level_below_full_strength() {
    let clears = |o: &Options| {
        let c = o.pool_config().expect("config");
        let all: Vec<bool> = c
            .groups
            .iter()
            .flat_map(|g| [&g.evaluator, &g.opponent])
            .flatten()
            .map(|c| c.clear_hash)
            .collect();
        assert!(all.iter().all(|&x| x == all[0]), "{all:?}");
        all[0]
    };
    let mut o = Options::default();
    o.set("Seed", Some("7")).expect("set");
    assert!(!clears(&o));
    o.set("UCI_LimitStrength", Some("true")).expect("set");
    o.set("UCI_Elo", Some("1800")).expect("set");
    assert!(clears(&o));
    o.set("UCI_Elo", Some("2600")).expect("set");
    assert_eq!(o.level(), None);
    assert!(!clears(&o));
    o.set("Evaluator", Some("/usr/games/stockfish"))
        .expect("set");
    assert!(clears(&o));
    o.set("Seed", Some("0")).expect("set");
    assert!(!clears(&o));
    o.set("Memoryless", Some("true")).expect("set");
    assert!(clears(&o));
}

#[test]
fn roles_share_children_unless_configured_apart() {
    let mut o = Options {
        evaluator: "/usr/games/stockfish".into(),
        ..Options::default()
    };
    assert!(o.pool_config().expect("config").shared_roles());
    o.set("OpponentOptions", Some("Skill Level=3"))
        .expect("set");
    let c = o.pool_config().expect("config");
    assert!(!c.shared_roles());
    assert_eq!(
        c.first(Role::Opponent).expect("opponent").command,
        "/usr/games/stockfish"
    );
    assert_eq!(
        c.first(Role::Opponent).expect("opponent").options.last(),
        Some(&("Skill Level".into(), "3".into()))
    );
    let e = o.set("EvaluatorOptions", Some("Hash")).expect_err("no '='");
    assert!(e.to_string().contains("Name=Value"), "{e}");
}

#[test]
fn empty_as_uci_shows_it_is_the_empty_string() {
    let mut o = Options {
        opponent: "/usr/games/stockfish".into(),
        log_file: "mpcmc.log".into(),
        ..Options::default()
    };
    for name in ["Opponent", "LogFile", "EvaluatorOptions", "OpponentOptions"] {
        o.set(name, Some(EMPTY)).expect(name);
        o.set(name, Some(" <empty> ")).expect(name);
    }
    assert_eq!(o.opponent, "");
    assert_eq!(o.log_file, "");
    assert_eq!(o.evaluator_options, "");
    assert!(o.pool_config().expect("config").shared_roles());
    // `uci` prints exactly what is read back.
    let spec = Options::spec("LogFile").expect("LogFile").to_string();
    assert!(spec.ends_with(&format!("default {EMPTY}")), "{spec}");
}

#[test]
fn syzygy_path_goes_to_every_child() {
    let mut o = Options::default();
    o.set("SyzygyPath", Some("/tb/345:/tb/6")).expect("path");
    o.set("Workers", Some("builtin; /usr/games/stockfish"))
        .expect("workers");
    let c = o.pool_config().expect("config");
    let path = |g: usize| {
        let child = c.groups[g].evaluator.as_ref().expect("evaluator");
        option(child, "SyzygyPath")
    };
    assert_eq!(path(0).as_deref(), Some("/tb/345:/tb/6"), "built-in");
    assert_eq!(path(1).as_deref(), Some("/tb/345:/tb/6"));
    o.set("Syzygy50MoveRule", Some("false")).expect("rule");
    let c = o.pool_config().expect("config");
    let stockfish = c.groups[1].evaluator.as_ref().expect("evaluator");
    assert_eq!(
        option(stockfish, "Syzygy50MoveRule").as_deref(),
        Some("false")
    );
}

#[test]
fn the_root_search_keeps_a_worker_from_the_lookahead_lanes() {
    let lanes = |workers: &str| {
        let mut o = Options::default();
        o.set("Workers", Some(workers)).expect("workers");
        o.pool_config().expect("config").lookahead_lanes()
    };
    assert_eq!(lanes("builtin *4"), 3);
    assert_eq!(lanes("root: builtin; builtin *4"), 4);
    assert_eq!(lanes("opponent: builtin *6; evaluator: builtin *3"), 2);
    assert_eq!(
        lanes("root: builtin; opponent: builtin *6; evaluator: builtin *3"),
        3
    );
}

#[test]
fn workers_make_a_group_an_entry() {
    let mut o = Options::default();
    o.set("Hash", Some("64")).expect("hash");
    o.set("Threads", Some("8")).expect("ignored with Workers");
    o.set(
        "Workers",
        Some("builtin *2; opponent: /usr/games/stockfish *3; evaluator: /usr/games/stockfish"),
    )
    .expect("workers");
    let c = o.pool_config().expect("config");
    let shape: Vec<_> = c
        .groups
        .iter()
        .map(|g| {
            let command = |c: &Option<ChildConfig>| c.as_ref().map(|c| c.command.clone());
            (command(&g.evaluator), command(&g.opponent), g.slots)
        })
        .collect();
    let (b, sf) = (
        Some("builtin".to_owned()),
        Some("/usr/games/stockfish".to_owned()),
    );
    assert_eq!(
        shape,
        [(b.clone(), b, 2), (None, sf.clone(), 3), (sf, None, 1)]
    );
    // Both roles share one child; every slot one search of one thread;
    // Hash split over the six children.
    assert!(c.groups[0].shared_roles());
    assert_eq!((c.threads(), c.processes()), (6, 6));
    for g in &c.groups {
        for child in [&g.evaluator, &g.opponent].into_iter().flatten() {
            assert_eq!(option(child, "Threads").as_deref(), Some("1"));
            assert_eq!(option(child, "Hash").as_deref(), Some("10"));
        }
    }
    // OpponentOptions give a both-roles entry a child a role.
    o.set("OpponentOptions", Some("Skill Level=3"))
        .expect("set");
    let c = o.pool_config().expect("config");
    assert!(!c.groups[0].shared_roles());
    assert_eq!(c.processes(), 8);
    let bad = o
        .set("Workers", Some("opponent: builtin"))
        .expect_err("unserved");
    assert!(
        bad.to_string()
            .contains("is not usable: no entry serves the evaluator role"),
        "{bad}"
    );
    assert!(
        o.workers.contains("evaluator: /usr/games/stockfish"),
        "left alone"
    );
    // The reason first, the entry once.
    let e = o
        .set("Workers", Some("builtin *0"))
        .expect_err("*0")
        .to_string();
    assert_eq!(
        e,
        "option 'Workers': 'builtin *0' is not usable: '*0' is not *1 to *1024 (in 'builtin *0')"
    );
    // The default sent back, as GUIs send every stored value: the
    // pool is Evaluator, Opponent and Threads again.
    for empty in ["", "  ", "<empty>"] {
        o.set("Workers", Some(empty))
            .expect("the default is a value");
        assert!(o.workers.trim().is_empty(), "{:?}", o.workers);
        assert_eq!(o.pool_config().expect("config").groups.len(), 1);
    }
}

#[test]
fn hash_is_the_whole_memory_split_over_the_processes() {
    let hash_of = |c: &ChildConfig| option(c, "Hash");
    let evaluator_hash = |o: &Options| {
        let c = o.pool_config().expect("config");
        hash_of(c.first(Role::Evaluator).expect("evaluator"))
    };
    // `Threads` is held to the machine's cores: four where there are
    // four, else as many as there are.
    let n = mpcmc_builtin::machine_cores().min(4) as u32;
    let mut o = Options::default();
    o.set("Threads", Some("4")).expect("threads");
    o.set("ChildThreads", Some("1")).expect("child threads");
    o.set("Hash", Some("256")).expect("hash");
    let c = o.pool_config().expect("config");
    assert_eq!(c.processes(), n as usize);
    let share = |processes: u32| Some((256 / processes).to_string());
    assert_eq!(
        hash_of(c.first(Role::Evaluator).expect("evaluator")),
        share(n)
    );
    // Roles apart: twice the processes.
    o.set("OpponentOptions", Some("Skill Level=3"))
        .expect("set");
    let c = o.pool_config().expect("config");
    assert_eq!(c.processes(), 2 * n as usize);
    assert_eq!(
        hash_of(c.first(Role::Evaluator).expect("evaluator")),
        share(2 * n)
    );
    assert_eq!(
        hash_of(c.first(Role::Opponent).expect("opponent")),
        share(2 * n)
    );
    // Two threads a child: half the searches, twice the hash each.
    o.set("OpponentOptions", Some("")).expect("set");
    o.set("ChildThreads", Some("2")).expect("child threads");
    let c = o.pool_config().expect("config");
    let searches = (n / 2).max(1);
    assert_eq!(c.threads(), searches as usize);
    assert_eq!(
        hash_of(c.first(Role::Evaluator).expect("evaluator")),
        share(searches)
    );
    assert!(
        c.first(Role::Evaluator)
            .expect("evaluator")
            .options
            .contains(&("Threads".into(), "2".into()))
    );
    o.set("ChildThreads", Some("8")).expect("child threads");
    assert_eq!(o.pool_config().expect("config").threads(), 1);
    // Auto (0, the default): every core to one child, built-in or
    // external; one thread a child when every call has its own budget.
    o.set("ChildThreads", Some("0")).expect("child threads");
    for evaluator in ["builtin", "/usr/games/stockfish"] {
        o.set("Evaluator", Some(evaluator)).expect("evaluator");
        let c = o.pool_config().expect("config");
        assert_eq!(c.threads(), 1, "{evaluator}");
        assert!(
            c.first(Role::Evaluator)
                .expect("evaluator")
                .options
                .contains(&("Threads".into(), n.to_string()))
        );
        o.set("ChildNodes", Some("2000")).expect("child nodes");
        assert_eq!(o.pool_config().expect("config").threads(), n as usize);
        o.set("ChildNodes", Some("0")).expect("child nodes");
        o.set("ChildMoveTime", Some("20")).expect("child movetime");
        assert_eq!(o.pool_config().expect("config").threads(), n as usize);
        o.set("ChildMoveTime", Some("0")).expect("child movetime");
    }
    o.set("Evaluator", Some("builtin")).expect("evaluator");
    // Never below 1 MB; the user's own child Hash still wins.
    o.set("Hash", Some("1")).expect("hash");
    assert_eq!(evaluator_hash(&o).as_deref(), Some("1"));
    o.set("EvaluatorOptions", Some("Hash=128")).expect("set");
    assert_eq!(evaluator_hash(&o).as_deref(), Some("128"));
}
