//! The `lockbench` binary: parse, dispatch, map errors to exit codes (2: bad input).

use std::io::Write as _;

use clap::Parser as _;
use lockbench::cli::{Cli, Command};
use lockbench::error::UsageError;
use lockbench::opts::io::{one_line, WriteError, EXIT_WRITE};

/// One line on stderr; a stderr that cannot take it is not a reason to panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{}", one_line(line));
}

/// A failed print (`println!` onto a full disk, a closed stream) panics in the standard
/// library; this turns it into one line on stderr (where stderr still works) and exit
/// [`EXIT_WRITE`]. Results already saved were written through the atomic writer and stay.
fn on_failed_print() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
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

fn main() {
    // Behave like a Unix tool when the reader goes away (`lockbench list | head`): die quietly
    // on SIGPIPE instead of panicking on a failed print.
    // SAFETY: setting a signal disposition to the default at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    on_failed_print();
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
    std::process::exit(code);
}

fn dispatch(command: Command) -> anyhow::Result<i32> {
    use lockbench::cmd;
    match command {
        Command::List(args) => cmd::list::exec(&args),
        Command::Run(args) => cmd::run::exec(&args),
        Command::Verify(args) => cmd::verify::exec(&args),
        Command::Fidelity(args) => cmd::fidelity::exec(&args),
        Command::Calibrate(args) => cmd::calibrate::exec(&args),
        Command::Correlate(args) => cmd::correlate::exec(&args),
        Command::Predict(args) => cmd::predict::exec(&args),
        Command::Rmr(args) => cmd::rmr::exec(&args),
        Command::Claims(args) => cmd::claims::exec(&args),
        Command::Sim(args) => cmd::sim::exec(&args),
        Command::MpRun(args) => cmd::mp_run::exec(&args),
        Command::Report(args) => cmd::report::exec(&args),
        Command::Compare(args) => cmd::compare::exec(&args),
        Command::Sweep(args) => cmd::sweep::exec(&args),
    }
}
