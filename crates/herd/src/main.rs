//! The `herd` binary: command-line parsing, dispatch, terminal output and exit codes.
//!
//! Only this crate prints or decides exit codes; the libraries return values and typed
//! errors (see ARCHITECTURE.md).

mod ab_cmd;
mod cluster_args;
mod cluster_cmd;
mod cluster_files;
mod cluster_k8s;
mod cluster_report;
mod cluster_ssh;
mod doctor_cmd;
mod host_cmd;
mod install_files;
mod lab_cmd;
mod lab_hosts;
mod live;
mod parent_watch;
mod report_cmd;
mod report_compare;
mod run_args;
mod run_cmd;
mod run_metrics;
mod run_outputs;
mod serve_cmd;
mod serve_generate;
mod single_run;
mod tui;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// herd: the web-server benchmark lab.
#[derive(Debug, Parser)]
#[command(name = "herd", version = env!("HERD_VERSION"), about, long_about = None, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXIT_CODES: &str = "\
Exit codes:
  herd ab     ab's own: 0 done, 1 interrupted or bad input, 22 bad usage, or the OS error
              number of a fatal network error modulo 256 (111 connection refused, ...)
  herd run    0 done, 1 cannot start, 2 bad usage, 3 a --fail-if condition did not hold,
              4 no request got a response (the summary and --json are written, without a
              client verdict), 130 interrupted by Ctrl-C (the summary of what was measured is
              printed, --json and the other outputs written); herd cluster run the same
  herd lab    0 done, 1 cannot start (bad experiment file, missing program, nothing to
              --resume), 2 bad usage, 3 done but some runs failed (kept with their reasons),
              130 interrupted (finished runs kept, everything herd started stopped; `herd lab
              run --resume` runs the rest); `herd lab hosts check|install`: 0 every host
              reachable with this herd build, 1 not (one line per host says why)
  herd report 0 done, 1 no such store or experiment, or what was asked cannot be done
              (a --compare that pairs nothing, an --html path that cannot be written), 2 bad
              usage
  herd doctor 0 nothing missing, 1 something the lab needs is missing (one line says what)
  herd serve  0 after a clean stop (Ctrl-C or SIGTERM) or a finished --generate, 1 when it
              cannot start or generate, 2 bad usage";

/// The exit code of a run or a lab stopped by Ctrl-C (SIGINT), as shells report a process
/// killed by it (128 + 2), although herd stopped cleanly and kept what it measured.
const INTERRUPTED: u8 = 130;

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
    /// Experiments: matrices of real servers x workloads x loads, every result stored.
    Lab {
        #[command(subcommand)]
        command: lab_cmd::LabCommand,
    },
    /// The result tables of stored experiments.
    Report(report_cmd::ReportArgs),
    /// Checks this machine for the lab: limits, sysctls, servers, kernel features.
    Doctor {
        /// Print the checks and the machine's disclosure (what the lab records with every
        /// result) as one JSON object, format herd.doctor.v1: what a lab host's helper sends
        #[arg(long)]
        json: bool,
    },
    /// One herd run spread over several agents started together, merged exactly.
    Cluster {
        #[command(subcommand)]
        command: cluster_args::ClusterCommand,
    },
    /// One agent of a spread run (`herd cluster`): herd run's flags; who it is comes from
    /// JOB_COMPLETION_INDEX, HERD_AGENTS and HERD_COORDINATOR.
    Agent(Box<cluster_args::AgentArgs>),
    /// Prints a shell completion script for herd: `herd completions bash >
    /// /etc/bash_completion.d/herd` (zsh: a file `_herd` in a directory of $fpath; fish:
    /// ~/.config/fish/completions/herd.fish). The packages install them already.
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Writes herd's man pages (herd.1, herd-run.1, herd-lab-run.1, …, one for each command)
    /// into DIR, which must exist, and prints their paths. The packages install them already.
    Man {
        /// Where to write them (e.g. ~/.local/share/man/man1, then `man herd-run`)
        dir: std::path::PathBuf,
    },
    /// herd's helper on a lab host: started by herd over SSH (`ssh HOST herd host`), not for
    /// use by hand. Serves requests on stdin, one JSON line each, until stdin closes, then
    /// stops everything it started.
    #[command(hide = true)]
    Host {
        /// End, stopping everything, when no request comes within this (herd pings while it
        /// holds the link, so silence means the link is lost: a host's network down); 0: never
        #[arg(long, default_value = "30s", value_parser = idle_time)]
        idle_timeout: std::time::Duration,
    },
}

/// `--idle-timeout`: a duration, or 0 for none.
fn idle_time(text: &str) -> Result<std::time::Duration, String> {
    if text.trim() == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    herd_stats::units::parse_duration(text).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    parent_watch::follow_parent();
    match cli.command {
        Command::Ab { args } => ab_cmd::main(&args),
        Command::Run(args) => exit_code("herd run", run_cmd::run(*args).map(run_exit)),
        Command::Lab { command } => lab_cmd::main(command),
        Command::Cluster { command } => {
            let name = command.name();
            exit_code(name, cluster_cmd::main(command).map(run_exit))
        }
        Command::Agent(args) => {
            exit_code("herd agent", cluster_cmd::agent(*args).map(|()| ExitCode::SUCCESS))
        }
        Command::Report(args) => exit_code("herd report", report_cmd::run(args).map(report_exit)),
        Command::Doctor { json } => doctor_cmd::main(json),
        Command::Host { idle_timeout } => host_cmd::main(idle_timeout),
        Command::Completions { shell } => exit_code(
            "herd completions",
            install_files::completions(shell).map(|()| ExitCode::SUCCESS),
        ),
        Command::Man { dir } => {
            exit_code("herd man", install_files::man_pages(&dir).map(|()| ExitCode::SUCCESS))
        }
        Command::Serve(args) => {
            exit_code("herd serve", serve_cmd::run(args).map(|()| ExitCode::SUCCESS))
        }
    }
}

/// The exit code of a command that ended as `result` says: its own when it ended, and 1
/// after its error, said on stderr behind the command's name (`herd run: …`).
fn exit_code(command: &str, result: anyhow::Result<ExitCode>) -> ExitCode {
    result.unwrap_or_else(|e| {
        eprintln!("{command}: {e:#}");
        ExitCode::FAILURE
    })
}

/// How `herd report` exits: 3 when `--history … --fail-on-change` found a change point.
fn report_exit(outcome: report_cmd::Outcome) -> ExitCode {
    match outcome {
        report_cmd::Outcome::Shown => ExitCode::SUCCESS,
        report_cmd::Outcome::ChangeFound => ExitCode::from(3),
    }
}

/// How `herd run` and `herd cluster run` exit after a run that produced a result.
fn run_exit(outcome: run_cmd::Outcome) -> ExitCode {
    match outcome {
        run_cmd::Outcome::Done => ExitCode::SUCCESS,
        run_cmd::Outcome::Interrupted => ExitCode::from(INTERRUPTED),
        run_cmd::Outcome::ThresholdFailed => ExitCode::from(3),
        run_cmd::Outcome::NoResponse => ExitCode::from(4),
    }
}
