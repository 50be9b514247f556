//! The `mpcmc` binary: with no subcommand, a UCI engine on stdin/stdout;
//! `mpcmc bench` measures decisions on fixed positions; `mpcmc explain`
//! tells one decision.

use std::io::{self, Write};

use anyhow::Context;
use clap::{Arg, ArgAction, ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use mpcmc::{
    bench, explain,
    protocol::{
        OptionType,
        output::Output,
        session::{Input, Searcher, Session, spawn_reader},
    },
    uci::{
        meta::Meta,
        options::{EngineAlone, Options, flag_help, flag_name, flag_names},
    },
};
use mpcmc_builtin::uci::Standalone;

/// A chess meta-engine: MPC-MC lookahead over child UCI engines.
#[derive(Parser, Debug)]
#[command(
    name = "mpcmc",
    version,
    about,
    after_help = "With no command, mpcmc runs as a UCI engine on stdin/stdout. Every option \
                  flag sets that UCI option before the GUI's setoption; uci-options.md \
                  describes each in full."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Time decisions on fixed positions at Threads 1 and 2; print wall time,
    /// summed child time, meta overhead and parallel efficiency.
    Bench(bench::BenchArgs),
    /// One decision, told: every root move with its predicted reply, value,
    /// rank and budget, then the move chosen and the rule that chose it
    /// (`--json`: the decision's trace object, as `TraceFile` writes it).
    Explain(explain::ExplainArgs),
    /// The built-in engine alone, as a UCI engine on stdin/stdout.
    Engine {
        #[command(subcommand)]
        action: Option<EngineAction>,
    },
}

#[derive(Subcommand, Debug)]
enum EngineAction {
    /// Search fixed positions to a fixed depth; print nodes, time and nodes
    /// per second.
    Bench {
        #[arg(long, default_value_t = 12)]
        depth: u32,
    },
}

/// Every UCI option as a flag: `ChildNodes` is `--child-nodes=2000`.
fn with_option_flags(mut cmd: clap::Command) -> clap::Command {
    for name in flag_names() {
        let Some(spec) = Options::spec(name) else {
            continue;
        };
        let mut arg = Arg::new(name)
            .long(flag_name(name))
            .global(true)
            .action(ArgAction::Set)
            .value_name("VALUE")
            .help(flag_help(name));
        if let OptionType::Check { .. } = spec.kind {
            arg = arg
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("true");
        }
        cmd = cmd.arg(arg);
    }
    cmd
}

fn options_from(matches: &ArgMatches) -> anyhow::Result<Options> {
    let mut options = Options::default();
    for name in flag_names() {
        if let Some(value) = matches.get_one::<String>(name) {
            options
                .set(name, Some(value))
                .with_context(|| format!("--{}={value}", flag_name(name)))?;
        }
    }
    Ok(options)
}

fn main() -> anyhow::Result<()> {
    // A child's supervisor: nothing of the engine runs in it.
    if let Some(code) = mpcmc::children::supervisor::run_if_asked() {
        std::process::exit(code);
    }
    mpcmc::children::supervisor::enable();
    mpcmc::log::init();
    let matches = with_option_flags(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches)?;
    // `--log-file` takes effect here, as it is set.
    let options = options_from(&matches)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("mpcmc")
        .build()
        .context("cannot start the async runtime")?;
    match cli.command {
        Some(Cmd::Bench(args)) => {
            runtime.block_on(bench::run(options, args, &mut io::stdout().lock()))
        }
        Some(Cmd::Explain(args)) => {
            let told = runtime.block_on(explain::run(options, args, &mut io::stdout().lock()));
            runtime.shutdown_timeout(std::time::Duration::from_millis(100));
            told
        }
        Some(Cmd::Engine {
            action: Some(EngineAction::Bench { depth }),
        }) => {
            let mut out = io::stdout().lock();
            for (i, fen) in mpcmc_builtin::BENCH_FENS.iter().enumerate() {
                let (nodes, time) =
                    mpcmc_builtin::bench_position(fen, depth).map_err(anyhow::Error::msg)?;
                writeln!(
                    out,
                    "{:>2} depth {depth} nodes {nodes:>9} time {:>7.1} ms nps {:>9.0}  {fen}",
                    i + 1,
                    time.as_secs_f64() * 1e3,
                    nodes as f64 / time.as_secs_f64().max(1e-9)
                )?;
            }
            let (nodes, time) = mpcmc_builtin::bench(depth);
            writeln!(
                out,
                "all depth {depth} nodes {nodes} time {:.1} ms nps {:.0}",
                time.as_secs_f64() * 1e3,
                nodes as f64 / time.as_secs_f64().max(1e-9)
            )?;
            Ok(())
        }
        Some(Cmd::Engine { action: None }) => {
            // The meta-engine's flags mean nothing to the engine alone.
            if let Some(name) = flag_names()
                .filter(|n| !Options::standalone_declares(n))
                .find(|n| matches.get_one::<String>(n).is_some())
            {
                anyhow::bail!(
                    "--{} is an option of the meta-engine, not of the built-in engine alone \
                     (mpcmc engine)",
                    flag_name(name)
                );
            }
            if options.variant.board().is_none() {
                anyhow::bail!(
                    "--uci-variant={}: the built-in engine alone plays chess and the lichess variants",
                    options.variant
                );
            }
            serve(runtime, Standalone::new(EngineAlone(options)))
        }
        None => serve(runtime, Meta::new(options)),
    }
}

/// Told to stop by a signal (a GUI or a tournament runner ending the
/// engine with SIGTERM, Ctrl-C, a closed terminal): every child's process
/// group ends with mpcmc, grandchildren under wrappers included.
async fn end_children_on_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::warn!("cannot watch for signals: children end only with quit");
        return;
    };
    let code = tokio::select! {
        _ = term.recv() => 128 + libc::SIGTERM,
        _ = int.recv() => 128 + libc::SIGINT,
        _ = hup.recv() => 128 + libc::SIGHUP,
    };
    mpcmc::children::group::end_all();
    std::process::exit(code);
}

/// Answers a GUI on stdin/stdout with `searcher` until `quit` or end of
/// input.
fn serve<S: Searcher>(runtime: tokio::runtime::Runtime, searcher: S) -> anyhow::Result<()> {
    let (out, writer) = Output::start(io::stdout()).context("cannot start stdout writer")?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Input>();
    spawn_reader(io::BufReader::new(io::stdin()), tx).context("cannot start stdin reader")?;
    runtime.spawn(end_children_on_signal());
    runtime.block_on(Session::new(searcher, out).run(rx));
    // Tasks still alive go with the runtime (their searches are told to stop
    // when dropped); the stdin reader may still block on a read: it is not
    // waited for.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    // The writer drains and ends with the last Output handle; a search
    // thread that never ends must not keep mpcmc alive.
    if !writer.wait(std::time::Duration::from_secs(2)) {
        tracing::warn!("output still held 2 s after quit; exiting anyway");
    }
    Ok(())
}
