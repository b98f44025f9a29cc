//! The whole command line, over a registry of locks: what the `lockbench` binary runs with
//! the built-in locks, and what a program of its own runs with its locks added.

use std::io::Write as _;

use clap::Parser as _;

use crate::cli::{Cli, Command};
use crate::error::UsageError;
use crate::opts::io::{one_line, WriteError, EXIT_WRITE};
use crate::registry::{install, Registry};

/// One line on stderr; a stderr that cannot take it is not a reason to panic.
fn say(line: &str) {
    let _ = writeln!(crate::opts::io::stderr(), "{}", one_line(line));
}

/// A failed print (`println!` onto a full disk, a closed stream) panics in the standard
/// library; this turns it into one line on stderr (where stderr still works) and exit
/// [`EXIT_WRITE`]. Results already saved were written through the atomic writer and stay.
fn on_failed_print() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = crate::error::panic_message(payload).unwrap_or("");
        if let Some(rest) = msg.strip_prefix("failed printing to ") {
            let (stream, why) = rest.split_once(": ").unwrap_or((rest, "failed"));
            say(&format!(
                "error: cannot write to {stream}: {why}; results already saved are kept"
            ));
            std::process::exit(EXIT_WRITE);
        }
        default(info)
    }));
}

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
    on_failed_print();
    if let Err(e) = install(registry) {
        say(&format!("error: {e}"));
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
            say(&format!(
                "error: give a command: {} (`lockbench --help` says what each does)",
                names.join(", ")
            ));
            std::process::exit(2);
        }
        // --help, --version, and the help shown for a missing subcommand.
        Err(e)
            if !e.use_stderr()
                || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            let printed = e.print().and_then(|()| std::io::stdout().flush());
            if let Err(why) = printed {
                say(&format!("error: cannot write to stdout: {why}"));
                std::process::exit(EXIT_WRITE);
            }
            std::process::exit(e.exit_code())
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
            say(&format!("{} (see --help)", line.join("; ")));
            std::process::exit(2);
        }
    };
    let code = match dispatch(cli.command) {
        Ok(code) => code,
        Err(e) => {
            say(&format!("error: {e:#}"));
            if e.downcast_ref::<UsageError>().is_some() {
                2
            } else if e.downcast_ref::<WriteError>().is_some() {
                EXIT_WRITE
            } else {
                1
            }
        }
    };
    if let Err(e) = std::io::stdout().flush() {
        say(&format!(
            "error: cannot write to stdout: {e}; results already saved are kept"
        ));
        std::process::exit(EXIT_WRITE);
    }
    // A stderr that failed along the way (its warnings lost) is said by the exit code of a
    // command that otherwise succeeded; what it measured is saved.
    if code == 0 && crate::opts::io::stderr_failed() {
        std::process::exit(EXIT_WRITE);
    }
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
        Command::App(args) => crate::cmd::app::exec(&args),
    }
}
