//! `herd host`: herd's helper on a lab host, started by herd over SSH (`ssh HOST herd host`),
//! not by hand. It serves herd-host's protocol on stdin and stdout until the channel closes,
//! a signal comes or herd says bye, then stops everything it started; see herd-host's
//! `serve.rs`. Its version in the hello is `herd --version`'s, so herd can tell another build.
//! Exits 0 after its channel closed or `bye`, 130 after SIGTERM, SIGHUP or SIGINT (in every
//! case with everything it started stopped), 1 when it cannot start or cannot remove its run
//! directory. Hidden from `herd --help`: a user has no use for it.

use std::io::Write;
use std::process::ExitCode;

use herd_host::{Options, Why};

pub(crate) fn main(idle_timeout: std::time::Duration) -> ExitCode {
    // The disclosure as JSON (herd.doctor.v1: the checks and the machine's record), so that
    // the lab stores each host's as it stores this machine's.
    let doctor = std::env::current_exe()
        .ok()
        .map(|exe| vec![exe.into_os_string(), "doctor".into(), "--json".into()]);
    let options = Options {
        herd: format!("herd {}", env!("HERD_VERSION")),
        doctor,
        parent: std::env::temp_dir(),
        idle: (!idle_timeout.is_zero()).then_some(idle_timeout),
    };
    match herd_host::run_stdio(options) {
        Ok((why, ended)) => {
            let removed = match &ended.removed {
                Ok(()) => "removed".to_owned(),
                Err(e) => format!("not removed ({e})"),
            };
            // Not eprintln!: stderr may have closed with the channel, and a panic here
            // would say nothing useful.
            let _ = writeln!(
                std::io::stderr(),
                "herd host: {}: stopped {} program(s), run directory {} {removed}",
                why.says(),
                ended.stopped,
                ended.run_dir.display()
            );
            match (why, ended.removed) {
                (Why::Signal, _) => ExitCode::from(crate::INTERRUPTED),
                (_, Err(_)) => ExitCode::FAILURE,
                _ => ExitCode::SUCCESS,
            }
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "herd host: cannot start: {e}");
            ExitCode::FAILURE
        }
    }
}
