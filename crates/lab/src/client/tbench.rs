//! dbench's `tbench` (Debian's `dbench` 4.0) as the client of a NetBench calibration cell:
//! the same NetBench trace (client.txt) smbtorture replays over SMB, sent over plain TCP to
//! `tbench_srv` (herd_drivers' `tbench` driver), which answers without a file system. Its
//! throughput is the path's ceiling for that trace. [`TbenchJob`] makes the command line,
//! [`parse`] reads what it printed into the same [`NbenchOutcome`] an NBENCH run gives, so
//! [`super::smbtorture::to_measurement`] stores both alike.
//!
//! What it prints on stdout (captured runs: tests/data/clients/tbench-*):
//!
//! ```text
//! Running for 3 seconds with load '/usr/share/dbench/client.txt' and minimum warmup 0 secs
//! 2 of 2 processes prepared for launch   0 sec
//! releasing clients
//!    2     58996   666.32 MB/sec  execute   1 sec  latency 7.032 ms
//!    2  cleanup   3 sec
//! Throughput 655.5 MB/sec  2 clients  2 procs  max_latency=7.032 ms
//! ```
//!
//! The per-second lines read as smbtorture's (clients, load-file line per client, MB/s
//! averaged since the start of the phase, the phase, the second); its cleanup lines carry no
//! figures. Its warm-up is limit / 5, after which the clock restarts for the limit.
//!
//! For whoever runs it: tbench connects to port 7003 (built in: [`herd_drivers::TBENCH_PORT`]),
//! and when nothing answers there it prints `failed to connect` and then *waits forever*:
//! give it [`kill_timeout`], and read its cause from what it printed ([`parse`] does).

use std::ffi::OsString;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::argv;
use super::error::excerpt;
use super::nbench_output::{lines, read_running, read_second, NbenchExit, NbenchOutcome, Phase};
use super::smbtorture::CLEANUP_ALLOWANCE;

/// Where Debian's `dbench` package puts it.
const CANDIDATES: [&str; 2] = ["/usr/bin/tbench", "/usr/local/bin/tbench"];

/// tbench's executable, if installed.
pub fn locate() -> Option<PathBuf> {
    CANDIDATES.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// One tbench run: `clients` processes replaying `loadfile` for `duration` against the
/// tbench_srv on `server` (port 7003).
#[derive(Debug, Clone, Copy)]
pub struct TbenchJob<'a> {
    pub program: &'a Path,
    pub server: IpAddr,
    pub clients: u32,
    /// The time limit (`-t`): whole seconds, at least 1 (a run of under 2 s prints no
    /// execute line and measures nothing).
    pub duration: Duration,
    pub loadfile: &'a Path,
}

/// Why a tbench run could not be started, or what went wrong in it, named for its cause.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TbenchError {
    #[error(
        "refusing to send tbench load to {server}: herd loads only 127.0.0.0/8, ::1 and \
         198.18.0.0/15; give an address in one of them"
    )]
    NotAllowed { server: IpAddr },
    #[error("tbench needs at least 1 client; give 1 or more")]
    NoClients,
    #[error(
        "tbench cannot run for {duration:?}: its -t takes whole seconds, at least 1; give a \
         whole number of seconds"
    )]
    BadDuration { duration: Duration },
    #[error("{}", super::nbench_error::loadfile_missing(path))]
    LoadfileMissing { path: PathBuf },
    /// `failed to connect to ADDR - REASON`, after which tbench waits forever.
    #[error(
        "tbench could not connect to tbench_srv at {server} ({reason}): start tbench_srv \
         there, or check the path"
    )]
    NoServer { server: SocketAddr, reason: String },
    #[error(
        "tbench was killed by signal {signal} before it finished, so its figures are \
         incomplete; let it run until it exits"
    )]
    Killed { signal: i32 },
    #[error(
        "tbench had not finished after {after:?} and was stopped; give it at least its time \
         limit, its warm-up (limit / 5) and 60 s"
    )]
    TimedOut { after: Duration },
    #[error("tbench failed (exit status {status}): {report}")]
    Failed { status: i32, report: String },
    #[error("tbench {problem}")]
    Output { problem: String },
}

impl TbenchJob<'_> {
    /// `PROGRAM -t SECS -c LOADFILE CLIENTS SERVER`, or why the job cannot run. Checks the
    /// load file exists (the only thing looked at on disk).
    pub fn argv(&self) -> Result<Vec<OsString>, TbenchError> {
        herd_engine::check_allowed(self.server)
            .map_err(|_| TbenchError::NotAllowed { server: self.server })?;
        if self.clients == 0 {
            return Err(TbenchError::NoClients);
        }
        let d = self.duration;
        if d.subsec_nanos() != 0 || d.as_secs() == 0 {
            return Err(TbenchError::BadDuration { duration: d });
        }
        if !self.loadfile.is_file() {
            return Err(TbenchError::LoadfileMissing { path: self.loadfile.to_path_buf() });
        }
        let mut a = argv([self.program.as_os_str().to_owned()]);
        a.extend(argv(["-t".to_owned(), d.as_secs().to_string(), "-c".to_owned()]));
        a.push(self.loadfile.as_os_str().to_owned());
        a.extend(argv([self.clients.to_string(), self.server.to_string()]));
        Ok(a)
    }

    fn target(&self) -> SocketAddr {
        SocketAddr::new(self.server, herd_drivers::TBENCH_PORT)
    }
}

/// How long a runner lets a tbench run of time limit `duration` go before killing it: the
/// limit, its warm-up (limit / 5) and [`CLEANUP_ALLOWANCE`].
pub fn kill_timeout(duration: Duration) -> Duration {
    duration + duration / 5 + CLEANUP_ALLOWANCE
}

/// What the run of `job` measured, or the cause of its failure. Success needs exit status
/// 0, a `Throughput` line, and an execute line (a run too short for one measured nothing).
pub fn parse(
    job: &TbenchJob,
    stdout: &str,
    stderr: &str,
    exit: NbenchExit,
) -> Result<NbenchOutcome, TbenchError> {
    // It waits forever after a failed connect: the cause is that, however it was stopped.
    if let Some(reason) = lines(stderr).find_map(connect_failure) {
        return Err(TbenchError::NoServer { server: job.target(), reason: reason.to_owned() });
    }
    match exit {
        NbenchExit::Code(0) => {}
        NbenchExit::Signal(signal) => return Err(TbenchError::Killed { signal }),
        NbenchExit::TimedOut { after } => return Err(TbenchError::TimedOut { after }),
        NbenchExit::Code(status) => {
            // `dbench: error opening '/x/client.txt': No such file or directory`
            if lines(stderr).any(|l| l.starts_with("dbench: error opening '")) {
                return Err(TbenchError::LoadfileMissing { path: job.loadfile.to_path_buf() });
            }
            return Err(TbenchError::Failed { status, report: excerpt(stdout, stderr) });
        }
    }
    let outcome = read_success(stdout, stderr)?;
    if outcome.clients != job.clients {
        return Err(output(format!(
            "ran {} clients where the job asked for {}",
            outcome.clients, job.clients
        )));
    }
    if outcome.duration != job.duration {
        return Err(output(format!(
            "ran for {:?} where the job asked for {:?}",
            outcome.duration, job.duration
        )));
    }
    Ok(outcome)
}

/// `failed to connect to 127.0.0.1 - Connection refused` → `Connection refused`.
fn connect_failure(line: &str) -> Option<&str> {
    line.strip_prefix("failed to connect to ")?.split_once(" - ").map(|(_, why)| why)
}

fn read_success(stdout: &str, stderr: &str) -> Result<NbenchOutcome, TbenchError> {
    let missing = |what: &str| output(format!("printed no {what}; {}", excerpt(stdout, stderr)));
    // `Running for 3 seconds with load '/usr/share/dbench/client.txt' and minimum warmup 0 secs`
    let running = lines(stdout)
        .find_map(|l| l.strip_prefix("Running for "))
        .ok_or_else(|| missing("'Running for' line"))?;
    let (duration, loadfile, warmup) = read_running(running, "' and minimum warmup ")
        .ok_or_else(|| unreadable("Running for", running))?;
    // `Throughput 655.5 MB/sec  2 clients  2 procs  max_latency=7.032 ms`
    let throughput = lines(stdout)
        .find_map(|l| l.strip_prefix("Throughput "))
        .ok_or_else(|| missing("'Throughput' line"))?;
    let words: Vec<&str> = throughput.split_whitespace().collect();
    let (mb_s, clients) = match words.as_slice() {
        [mb, "MB/sec", n, "clients", ..] => {
            (mb.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0), n.parse::<u32>().ok())
        }
        _ => (None, None),
    };
    let (Some(throughput_mb_s), Some(clients)) = (mb_s, clients) else {
        return Err(unreadable("Throughput", throughput));
    };
    let mut seconds = Vec::new();
    for line in lines(stdout) {
        match read_second(line) {
            Ok(Some(s)) => seconds.push(s),
            Ok(None) => {}
            Err(_) => return Err(unreadable("per-second", line)),
        }
    }
    let last = seconds.iter().rev().find(|s| s.phase == Phase::Execute).ok_or_else(|| {
        output(format!(
            "printed no per-second 'execute' line: a run of {}s measured nothing (tbench \
             needs 2 s or more)",
            duration.as_secs()
        ))
    })?;
    Ok(NbenchOutcome {
        clients,
        duration,
        warmup,
        loadfile,
        throughput_mb_s,
        lines_per_client: last.lines_per_client,
        seconds,
    })
}

fn output(problem: String) -> TbenchError {
    TbenchError::Output { problem }
}

fn unreadable(label: &str, line: &str) -> TbenchError {
    output(format!("printed a '{label}' line herd cannot read: {line:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::smbtorture::DBENCH_CLIENT_TXT;

    fn job(server: &str) -> TbenchJob<'static> {
        TbenchJob {
            program: Path::new("/usr/bin/tbench"),
            server: server.parse().unwrap(),
            clients: 2,
            duration: Duration::from_secs(3),
            // A file that exists everywhere the tests run.
            loadfile: Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")),
        }
    }

    #[test]
    fn argv_as_tbench_takes_it() {
        let j = job("198.18.3.2");
        let lf = j.loadfile.to_str().unwrap();
        assert_eq!(
            j.argv().unwrap(),
            ["/usr/bin/tbench", "-t", "3", "-c", lf, "2", "198.18.3.2"].map(OsString::from)
        );
    }

    #[test]
    fn refusals_name_what_to_do() {
        for addr in ["10.0.0.1", "198.20.0.1", "0.0.0.0"] {
            let e = job(addr).argv().unwrap_err();
            assert!(e.to_string().contains("127.0.0.0/8, ::1 and 198.18.0.0/15"), "{e}");
        }
        let e = TbenchJob { clients: 0, ..job("127.0.0.1") }.argv().unwrap_err();
        assert_eq!(e, TbenchError::NoClients);
        let half = Duration::from_millis(1500);
        let e = TbenchJob { duration: half, ..job("127.0.0.1") }.argv().unwrap_err();
        assert_eq!(e, TbenchError::BadDuration { duration: half });
        let missing = Path::new("/nonexistent/client.txt");
        let e = TbenchJob { loadfile: missing, ..job("127.0.0.1") }.argv().unwrap_err();
        assert_eq!(e, TbenchError::LoadfileMissing { path: missing.to_path_buf() });
        let e = TbenchError::LoadfileMissing { path: DBENCH_CLIENT_TXT.into() }.to_string();
        assert!(e.contains("install the `dbench` package"), "{e}");
    }

    #[test]
    fn kill_timeout_covers_warmup_and_cleanup() {
        assert_eq!(kill_timeout(Duration::from_secs(60)), Duration::from_secs(132));
    }

    #[test]
    fn each_message_says_its_cause_once() {
        let server: SocketAddr = "198.18.3.2:7003".parse().unwrap();
        let all = [
            TbenchError::NoServer { server, reason: "Connection refused".into() },
            TbenchError::Killed { signal: 15 },
            TbenchError::TimedOut { after: Duration::from_secs(64) },
            TbenchError::LoadfileMissing { path: DBENCH_CLIENT_TXT.into() },
            TbenchError::Failed { status: 1, report: "x".into() },
        ];
        for e in all {
            let text = e.to_string();
            herd_testutil::causes::assert_no_repeated_cause(&text);
            assert!(text.matches(DBENCH_CLIENT_TXT).count() <= 1, "{text}");
        }
    }
}
