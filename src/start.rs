//! The whole command line, over a registry of locks: what the `lockbench` binary runs with
//! the built-in locks, and what a program of its own runs with its locks added.

use clap::Parser as _;

use crate::cli::{Cli, Command};
use crate::error::UsageError;
use crate::registry::{install, Registry};

/// Runs the `lockbench` command line (`std::env::args`) with the locks of `registry`, then
/// exits: 0 on success, 1 when a check fails, 2 on bad input (one line saying what to do).
///
/// `registry` becomes the one every command resolves `--lock` through (`list`, `run`,
/// `verify --mutants`, `rmr`, `fidelity`, `sweep`, ...): a program brings its own locks
/// without a fork of lockbench.
///
/// ```no_run
/// use lockbench::locks::{LockInfo, Problem};
/// use lockbench::registry::{LockEntry, Registry};
///
/// const FAIR: LockInfo =
///     LockInfo::baseline("fair-mutex", Problem::Mutex, true, "parking_lot::RawFairMutex");
///
/// fn main() {
///     lockbench::main_with(
///         Registry::builtin().with(LockEntry::raw_mutex::<parking_lot::RawFairMutex>(FAIR)),
///     )
/// }
/// ```
pub fn main_with(registry: Registry) -> ! {
    // Behave like a Unix tool when the reader goes away (`lockbench list | head`): die quietly
    // on SIGPIPE instead of panicking on a failed print.
    // SAFETY: restoring SIGPIPE's default disposition touches no memory of ours; it is done
    // once, before any command starts a thread of its own.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    if let Err(e) = install(registry) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // No subcommand: one line naming them (bad input, exit 2).
        Err(e)
            if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                && std::env::args_os().len() == 1 =>
        {
            let names: Vec<String> = <Cli as clap::CommandFactory>::command()
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            eprintln!(
                "error: give a command: {} (`lockbench --help` says what each does)",
                names.join(", ")
            );
            std::process::exit(2);
        }
        // --help, --version, and the help shown for a missing subcommand.
        Err(e)
            if !e.use_stderr()
                || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            e.exit()
        }
        Err(e) => {
            // One line: clap's message and its tip, without the usage block.
            let text = e.render().to_string();
            let line: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| {
                    !l.is_empty()
                        && !l.starts_with("Usage:")
                        && !l.starts_with("For more information")
                })
                .collect();
            eprintln!("{} (see --help)", line.join("; "));
            std::process::exit(2);
        }
    };
    let code = match dispatch(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                2
            } else {
                1
            }
        }
    };
    std::process::exit(code);
}

fn dispatch(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::List(args) => crate::cmd::list::exec(&args),
        Command::Run(args) => crate::cmd::run::exec(&args),
        Command::Verify(args) => crate::cmd::verify::exec(&args),
        Command::Fidelity(args) => crate::cmd::fidelity::exec(&args),
        Command::Calibrate(args) => crate::cmd::calibrate::exec(&args),
        Command::Correlate(args) => crate::cmd::correlate::exec(&args),
        Command::Predict(args) => crate::cmd::predict::exec(&args),
        Command::Rmr(args) => crate::cmd::rmr::exec(&args),
        Command::Claims(args) => crate::cmd::claims::exec(&args),
        Command::Sim(args) => crate::cmd::sim::exec(&args),
        Command::MpRun(args) => crate::cmd::mp_run::exec(&args),
        Command::Report(args) => crate::cmd::report::exec(&args),
        Command::Compare(args) => crate::cmd::compare::exec(&args),
        Command::Sweep(args) => crate::cmd::sweep::exec(&args),
    }
}
