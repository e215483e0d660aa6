//! The `herd` binary: command-line parsing, dispatch, terminal output and exit codes.
//!
//! Only this crate prints or decides exit codes; the libraries return values and typed
//! errors (see ARCHITECTURE.md).

mod ab_cmd;
mod run;
mod run_cmd;
mod serve_cmd;
mod serve_generate;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// herd: the web-server benchmark lab.
#[derive(Debug, Parser)]
#[command(name = "herd", version, about, long_about = None, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXIT_CODES: &str = "\
Exit codes:
  herd ab     ab's own: 0 done, 1 interrupted or bad input, 22 bad usage, or the OS error
              number of a fatal network error modulo 256 (111 connection refused, ...)
  herd run    0 done, 1 cannot start or interrupted (the partial summary is printed), 2 bad
              usage, 3 a --fail-if condition did not hold
  herd serve  0 after a clean stop (Ctrl-C or SIGTERM) or a finished --generate, 1 when it
              cannot start or generate, 2 bad usage";

#[derive(Debug, Subcommand)]
enum Command {
    /// ApacheBench-compatible load: ab's flags, ab's report (`herd ab -h` for the flags).
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Ab {
        #[arg(allow_hyphen_values = true, trailing_var_arg = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// Modern load: closed or open loop (--rate), latency corrected for coordinated omission.
    Run(Box<run_cmd::RunArgs>),
    /// The built-in reference server: static files and generated pages.
    Serve(serve_cmd::ServeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Ab { args } => ab_cmd::main(&args),
        Command::Run(args) => match run_cmd::run(*args) {
            Ok(run_cmd::Outcome::Done) => ExitCode::SUCCESS,
            Ok(run_cmd::Outcome::Interrupted) => ExitCode::FAILURE,
            Ok(run_cmd::Outcome::ThresholdFailed) => ExitCode::from(3),
            Err(e) => {
                eprintln!("herd run: {e:#}");
                ExitCode::FAILURE
            }
        },
        Command::Serve(args) => match serve_cmd::run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("herd serve: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
}
