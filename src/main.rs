//! The `lockbench` binary: parse, dispatch, map errors to exit codes (2: bad input).

use clap::Parser as _;
use lockbench::cli::{Cli, Command};
use lockbench::config::UsageError;

fn main() {
    // Behave like a Unix tool when the reader goes away (`lockbench list | head`): die quietly
    // on SIGPIPE instead of panicking on a failed print.
    // SAFETY: setting a signal disposition to the default at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
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
        Command::List { format } => {
            print!("{}", lockbench::app::list(format)?);
            Ok(0)
        }
        Command::Run(args) => lockbench::app::run(&args),
        Command::Verify(args) => lockbench::app::verify(&args),
        Command::Fidelity(args) => lockbench::app::fidelity(&args),
        Command::Calibrate(args) => lockbench::hw::calibrate(&args),
        Command::Correlate(args) => lockbench::hw::correlate(&args),
        Command::Predict(args) => lockbench::hw::predict(&args),
        Command::Rmr(args) => lockbench::app::rmr(&args),
        Command::Sim(args) => lockbench::mp::cli::sim(&args),
        Command::MpRun(args) => lockbench::mp::cli::mp_run(&args),
        Command::Report(args) => lockbench::report::render::report(&args),
        Command::Compare(args) => lockbench::compare::run(&args),
        Command::Sweep(args) => lockbench::sweep::run(&args),
    }
}
