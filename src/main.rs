//! The `lockbench` binary: parse, dispatch, map errors to exit codes (2: bad input).

use clap::Parser as _;
use lockbench::cli::{Cli, Command};
use lockbench::error::UsageError;

fn main() {
    // Behave like a Unix tool when the reader goes away (`lockbench list | head`): die quietly
    // on SIGPIPE instead of panicking on a failed print.
    // SAFETY: setting a signal disposition to the default at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
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
        Command::App(args) => cmd::app::exec(&args),
    }
}
