//! The `lockbench` binary: parse, dispatch, map errors to exit codes (2: bad input).

use clap::Parser;
use lockbench::cli::{Cli, Command};
use lockbench::config::UsageError;

fn main() {
    // Behave like a Unix tool when the reader goes away (`lockbench list | head`): die quietly
    // on SIGPIPE instead of panicking on a failed print.
    // SAFETY: setting a signal disposition to the default at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
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
