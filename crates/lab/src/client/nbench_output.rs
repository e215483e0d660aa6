//! What `smbtorture … bench.nbench` (Samba 4.17) printed, read into an [`NbenchOutcome`], or
//! the real cause of its failure as an [`NbenchError`]. Pure: text in, figures out; it never
//! panics, whatever the text (tested on every prefix of real outputs and on random bytes).
//!
//! What it prints on stdout (Samba's `torture/nbench/nbio.c`, `nb_alarm`), and what each
//! figure means:
//!
//! ```text
//! Running for 4 seconds with load '/usr/share/dbench/client.txt' and warmup 0 secs
//! 2 clients started
//!    2      4531  82.59 MB/sec  execute 1 sec  latency 0.00 msec
//!    2     17240  55.01 MB/sec  cleanup 4 sec
//! Throughput 55.0129 MB/sec
//! success: nbench
//! ```
//!
//! Once a second: the clients connected, the load-file line the clients are at (the average
//! of their current 1-based line numbers, integer-divided), the MB/s *averaged since the
//! start* (or since the end of the warm-up, when smbtorture restarts its clock; not that
//! second's rate), the phase (`warmup` while a client has moved no byte yet or the warm-up
//! runs, `execute`, then `cleanup` from the time limit on) and the seconds. `Throughput` is
//! every client's ReadX and WriteX bytes over the time limit, MB = 10^6 bytes. The latency
//! is always 0.00 (client.txt has no timestamps) and is not read.
//!
//! Not here: the command line and the lab's measurement (`smbtorture.rs`).

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use super::error::excerpt;
use super::nbench_error::NbenchError;
use super::smbtorture::NbenchJob;

/// How smbtorture ended, as the runner saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NbenchExit {
    /// It exited with this status (0: success; it gave 1 for every failure seen).
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// The runner killed it when [`super::smbtorture::kill_timeout`] ran out.
    TimedOut { after: Duration },
}

/// One of the lines smbtorture prints once a second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NbenchSecond {
    /// Clients connected (all of them once started).
    pub clients: u32,
    /// The load-file line the clients are at, on average (1-based).
    pub lines_per_client: u64,
    /// MB/s (10^6 bytes) averaged from the start of the measured time to this second:
    /// cumulative, not this second's rate.
    pub mb_per_s: f64,
    pub phase: Phase,
    /// Seconds since the start (since the end of the warm-up, once it is over).
    pub second: u32,
}

/// The phase a per-second line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The warm-up, or a client has not moved a byte yet.
    Warmup,
    /// The measured time.
    Execute,
    /// After the time limit: the clients delete their files; not measured.
    Cleanup,
}

/// What a run that succeeded measured.
#[derive(Debug, Clone, PartialEq)]
pub struct NbenchOutcome {
    /// Client processes started (`N clients started`).
    pub clients: u32,
    /// The time limit, the measured time (`Running for T seconds`).
    pub duration: Duration,
    /// The warm-up before it (`and warmup W secs`: the limit / 20, whole seconds).
    pub warmup: Duration,
    /// The load file smbtorture replayed.
    pub loadfile: PathBuf,
    /// `Throughput X MB/sec`, MB = 10^6 bytes: ReadX and WriteX bytes of every client over
    /// the time limit.
    pub throughput_mb_s: f64,
    /// Every per-second line, in order.
    pub seconds: Vec<NbenchSecond>,
    /// Load-file lines per client: the second column of the last `execute` line, or of the
    /// first `cleanup` line when there is none (a 1 s run prints only cleanup lines).
    pub lines_per_client: u64,
}

/// The line of client.txt (1-based) with its first ReadX: `ReadX 10003 0 4096 4096
/// NT_STATUS_OK`, checked in dbench 4.0-2.1's /usr/share/dbench/client.txt. Lines 1–609 open
/// and close files and write (391 WriteX, 273 of them 64 KiB: a 14 MB fill) and read nothing,
/// so a step whose clients stay below this line measured writes only, not the trace's mix.
pub const FIRST_READX_LINE: u64 = 610;

impl NbenchOutcome {
    /// The throughput in Mbit/s: 8 × MB/s (MB = 10^6 bytes), NetBench's published unit.
    pub fn throughput_mbit_s(&self) -> f64 {
        self.throughput_mb_s * 8.0
    }

    /// Runs of the same time limit made side by side (one per client host on `four-links`)
    /// as one: their clients and throughputs summed (each is bytes over the same time
    /// limit), lines per client averaged over all clients, each second's lines combined
    /// where every run printed that second. None for no runs.
    pub fn merged(parts: &[NbenchOutcome]) -> Option<NbenchOutcome> {
        let (first, rest) = parts.split_first()?;
        if rest.is_empty() {
            return Some(first.clone());
        }
        let clients: u32 = parts.iter().map(|p| p.clients).sum();
        // Weighted by clients: the average line over every client of every run.
        let weighted = |f: &dyn Fn(&NbenchOutcome) -> Option<(u32, u64)>| -> Option<u64> {
            let mut sum = 0u128;
            let mut n = 0u128;
            for p in parts {
                let (c, lines) = f(p)?;
                sum += u128::from(c) * u128::from(lines);
                n += u128::from(c);
            }
            u64::try_from(sum.checked_div(n)?).ok()
        };
        let lines_per_client = weighted(&|p| Some((p.clients, p.lines_per_client)))?;
        let seconds = first
            .seconds
            .iter()
            .filter_map(|s| {
                let same = |p: &NbenchOutcome| {
                    p.seconds.iter().find(|o| o.phase == s.phase && o.second == s.second).copied()
                };
                let all: Vec<NbenchSecond> = parts.iter().map(same).collect::<Option<_>>()?;
                Some(NbenchSecond {
                    clients: all.iter().map(|o| o.clients).sum(),
                    lines_per_client: weighted(&|p| {
                        same(p).map(|o| (o.clients, o.lines_per_client))
                    })?,
                    mb_per_s: all.iter().map(|o| o.mb_per_s).sum(),
                    phase: s.phase,
                    second: s.second,
                })
            })
            .collect();
        Some(NbenchOutcome {
            clients,
            duration: first.duration,
            warmup: first.warmup,
            loadfile: first.loadfile.clone(),
            throughput_mb_s: parts.iter().map(|p| p.throughput_mb_s).sum(),
            seconds,
            lines_per_client,
        })
    }

    /// True when the clients were still in the trace's write-only opening at the end
    /// (lines per client below [`FIRST_READX_LINE`]): the step measured a write-only
    /// preamble, too short (or too many clients) to say anything about the NetBench mix.
    /// The lines are an average, so a few clients may have gone further.
    pub fn write_only_opening(&self) -> bool {
        self.lines_per_client < FIRST_READX_LINE
    }
}

impl From<ExitStatus> for NbenchExit {
    fn from(status: ExitStatus) -> NbenchExit {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => NbenchExit::Code(code),
            (None, Some(signal)) => NbenchExit::Signal(signal),
            // Neither: a stopped process, which `wait` does not report; say so plainly.
            (None, None) => NbenchExit::Code(-1),
        }
    }
}

/// What the run of `job` (its [`NbenchJob::argv`]) measured, from its stdout, stderr and how
/// it ended; or the cause of its failure, in the job's terms (its address, its share).
/// Success needs exit status 0 *and* `success: nbench`.
pub fn parse(
    job: &NbenchJob,
    stdout: &str,
    stderr: &str,
    exit: NbenchExit,
) -> Result<NbenchOutcome, NbenchError> {
    let succeeded = exit == NbenchExit::Code(0) && lines(stdout).any(|l| l == "success: nbench");
    if !succeeded {
        return Err(failure(job, stdout, stderr, exit));
    }
    let outcome = read_success(stdout, stderr)?;
    if outcome.clients != job.clients {
        return Err(output(format!(
            "started {} clients where the job asked for {}",
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

/// The figures of an output that ends in `success: nbench`.
fn read_success(stdout: &str, stderr: &str) -> Result<NbenchOutcome, NbenchError> {
    let missing = |what: &str| output(format!("printed no {what}; {}", excerpt(stdout, stderr)));
    // `Running for 4 seconds with load '/usr/share/dbench/client.txt' and warmup 0 secs`
    let running = lines(stdout)
        .find_map(|l| l.strip_prefix("Running for "))
        .ok_or_else(|| missing("'Running for' line"))?;
    let (duration, loadfile, warmup) =
        read_running(running, AND_WARMUP).ok_or_else(|| unreadable("Running for", running))?;
    let started = lines(stdout)
        .find(|l| l.ends_with(" clients started"))
        .ok_or_else(|| missing("'clients started' line"))?;
    let clients = started
        .strip_suffix(" clients started")
        .and_then(|n| n.parse::<u32>().ok())
        .ok_or_else(|| unreadable("clients started", started))?;
    let mut seconds = Vec::new();
    for line in lines(stdout) {
        if let Some(second) = read_second(line)? {
            seconds.push(second);
        }
    }
    let throughput_line = lines(stdout)
        .find_map(|l| l.strip_prefix("Throughput "))
        .ok_or_else(|| missing("'Throughput' line"))?;
    let throughput_mb_s = throughput_line
        .strip_suffix(" MB/sec")
        .and_then(|n| n.trim().parse::<f64>().ok())
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| unreadable("Throughput", throughput_line))?;
    let progress = seconds
        .iter()
        .rev()
        .find(|s| s.phase == Phase::Execute)
        .or_else(|| seconds.iter().find(|s| s.phase == Phase::Cleanup))
        .ok_or_else(|| missing("per-second 'execute' or 'cleanup' line"))?;
    Ok(NbenchOutcome {
        clients,
        duration,
        warmup,
        loadfile,
        throughput_mb_s,
        lines_per_client: progress.lines_per_client,
        seconds,
    })
}

/// What comes between smbtorture's load file and its warm-up on its `Running for` line.
const AND_WARMUP: &str = "' and warmup ";

/// `4 seconds with load '/usr/share/dbench/client.txt' and warmup 0 secs` (smbtorture;
/// tbench says `' and minimum warmup `, the `before_warmup` given).
pub(super) fn read_running(
    rest: &str,
    before_warmup: &str,
) -> Option<(Duration, PathBuf, Duration)> {
    let (secs, rest) = rest.split_once(" seconds with load '")?;
    let (loadfile, rest) = rest.rsplit_once(before_warmup)?;
    let warmup = rest.strip_suffix(" secs")?;
    Some((
        Duration::from_secs(secs.parse().ok()?),
        PathBuf::from(loadfile),
        Duration::from_secs(warmup.parse().ok()?),
    ))
}

/// A per-second line (`^\s*(\d+)\s+(\d+)\s+([0-9.]+) MB/sec\s+(warmup|execute|cleanup)
/// (\d+) sec`), None for any other line; an error for a line that has the shape (digits, then
/// `MB/sec` as its fourth word) but numbers that do not fit.
pub(super) fn read_second(line: &str) -> Result<Option<NbenchSecond>, NbenchError> {
    let w: Vec<&str> = line.split_whitespace().take(7).collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let [c, n, mb, "MB/sec", phase, at, "sec", ..] = w.as_slice() else { return Ok(None) };
    if !(digits(c) && digits(n)) {
        return Ok(None);
    }
    let phase = match *phase {
        "warmup" => Phase::Warmup,
        "execute" => Phase::Execute,
        "cleanup" => Phase::Cleanup,
        _ => return Ok(None),
    };
    let number = mb.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let second = (|| {
        Some(NbenchSecond {
            clients: c.parse().ok()?,
            lines_per_client: n.parse().ok()?,
            mb_per_s: mb.parse::<f64>().ok().filter(|x| number && x.is_finite())?,
            phase,
            second: digits(at).then(|| at.parse().ok()).flatten()?,
        })
    })();
    second.map(Some).ok_or_else(|| unreadable("per-second", line))
}

/// The real cause of a run that did not succeed, most specific first.
fn failure(job: &NbenchJob, stdout: &str, stderr: &str, exit: NbenchExit) -> NbenchError {
    // A run that was cut short printed only part of its output: nothing in it is the cause.
    match exit {
        NbenchExit::Signal(signal) => return NbenchError::Killed { signal },
        NbenchExit::TimedOut { after } => return NbenchError::TimedOut { after },
        NbenchExit::Code(_) => {}
    }
    let server = job.server;
    // `/tmp/x/client.txt: No such file or directory`, once per client, on stderr.
    let missing = lines(stderr).find_map(|l| l.strip_suffix(": No such file or directory"));
    if missing.is_some_and(|path| Path::new(path) == job.loadfile) {
        return NbenchError::LoadfileMissing { path: job.loadfile.to_path_buf() };
    }
    // `Failed to open connection - NT_STATUS_NO_MEMORY`, on stdout.
    let connect = lines(stdout)
        .chain(lines(stderr))
        .find_map(|l| l.strip_prefix("Failed to open connection - "));
    let smb1_refused = lines(stderr)
        .chain(lines(stdout))
        .any(|l| l.contains("No compatible protocol selected by server"));
    match connect {
        _ if smb1_refused => return NbenchError::Smb1Refused { server },
        Some("NT_STATUS_NO_MEMORY") => return NbenchError::NoServer { server },
        Some("NT_STATUS_BAD_NETWORK_NAME") => {
            return NbenchError::NoSuchShare { server, share: job.share.to_owned() }
        }
        Some("NT_STATUS_INVALID_NETWORK_RESPONSE") => return NbenchError::Smb1Refused { server },
        Some("NT_STATUS_LOGON_FAILURE") => return NbenchError::LogonFailure { server },
        _ => {}
    }
    // `Unable to setup \clients - ERRSRV:ERRbaduid`: the share, before any client ran.
    if let Some(status) = lines(stdout).find_map(|l| l.strip_prefix("Unable to setup \\clients - "))
    {
        return NbenchError::ShareUnusable {
            server,
            share: job.share.to_owned(),
            status: status.to_owned(),
        };
    }
    // `[3] Error: NTCreateX should have succeeded - NT_STATUS_ACCESS_DENIED`
    if let Some(stopped) = lines(stdout).find_map(client_error) {
        return stopped;
    }
    let status = match exit {
        NbenchExit::Code(c) => c,
        _ => -1,
    };
    // A status not named above: smbtorture's own line says more than its `error:` report,
    // which read `Unknown error/failure` in every failure seen.
    if let Some(connect) = connect {
        return NbenchError::Failed {
            status,
            report: format!("Failed to open connection - {connect}"),
        };
    }
    if let Some(report) = error_report(stdout) {
        return NbenchError::Failed { status, report };
    }
    if status == 0 {
        output(format!("exited 0 without 'success: nbench'; {}", excerpt(stdout, stderr)))
    } else {
        NbenchError::Failed { status, report: excerpt(stdout, stderr) }
    }
}

/// `[3] Error: NTCreateX should have succeeded - NT_STATUS_ACCESS_DENIED`, or `(3) ERROR:
/// handle 10003 was not found` (nbio.c's other form): the load-file line and what went wrong
/// there.
fn client_error(line: &str) -> Option<NbenchError> {
    let (n, what) = match line.strip_prefix('[') {
        Some(rest) => rest.split_once("] Error: ")?,
        None => line.strip_prefix('(')?.split_once(") ERROR: ")?,
    };
    Some(NbenchError::ClientStopped { line: n.parse().ok()?, what: what.trim().to_owned() })
}

/// smbtorture's first `error:` report: `error: nbench [`, the lines up to `]`, joined.
fn error_report(stdout: &str) -> Option<String> {
    let mut all = lines(stdout).skip_while(|l| !l.starts_with("error:"));
    let first = all.next()?;
    if !first.ends_with('[') {
        return Some(first.to_owned());
    }
    let mut report = first.to_owned();
    for l in all.take(MAX_REPORT_LINES) {
        report.push(' ');
        report.push_str(l);
        if l == "]" {
            break;
        }
    }
    Some(report)
}

/// How many lines of an `error:` report are kept (its message is one or two).
const MAX_REPORT_LINES: usize = 8;

/// The lines of `text`, each trimmed (smbtorture ends its per-second lines in a space; a
/// capture may have CRLF endings).
pub(super) fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim)
}

fn output(problem: String) -> NbenchError {
    NbenchError::Output { problem }
}

fn unreadable(label: &str, line: &str) -> NbenchError {
    output(format!("printed a '{label}' line herd cannot read: {line:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_second_lines() {
        let s = read_second("   2      4531  82.59 MB/sec  execute 1 sec  latency 0.00 msec ")
            .unwrap()
            .unwrap();
        assert_eq!(
            s,
            NbenchSecond {
                clients: 2,
                lines_per_client: 4531,
                mb_per_s: 82.59,
                phase: Phase::Execute,
                second: 1
            }
        );
        let c = read_second("   2     17240  55.01 MB/sec  cleanup 4 sec   ").unwrap().unwrap();
        assert_eq!((c.phase, c.second), (Phase::Cleanup, 4));
        let w = read_second("  0  0  0.00 MB/sec  warmup 1 sec").unwrap().unwrap();
        assert_eq!((w.clients, w.phase), (0, Phase::Warmup));
        for other in
            ["", "2 clients started", "Throughput 55.0129 MB/sec", "x 1 2.0 MB/sec execute 1 sec"]
        {
            assert_eq!(read_second(other), Ok(None), "{other:?}");
        }
        for bad in [
            "99999999999 1 1.0 MB/sec execute 1 sec",
            "1 99999999999999999999999 1.0 MB/sec execute 1 sec",
            "1 1 1e999 MB/sec execute 1 sec",
            "1 1 -1.0 MB/sec execute 1 sec",
            "1 1 1.0.0 MB/sec execute 1 sec",
            "1 1 1.0 MB/sec execute 99999999999 sec",
            "1 1 1.0 MB/sec execute -1 sec",
        ] {
            assert!(matches!(read_second(bad), Err(NbenchError::Output { .. })), "{bad:?}");
        }
    }

    #[test]
    fn client_errors_in_both_forms() {
        let stopped = |line: u64, what: &str| {
            Some(NbenchError::ClientStopped { line, what: what.to_owned() })
        };
        assert_eq!(
            client_error("[3] Error: NTCreateX should have succeeded - NT_STATUS_ACCESS_DENIED"),
            stopped(3, "NTCreateX should have succeeded - NT_STATUS_ACCESS_DENIED")
        );
        assert_eq!(
            client_error("(612) ERROR: handle 10003 was not found"),
            stopped(612, "handle 10003 was not found")
        );
        for other in ["[3] client 0 exiting with status 1", "[x] Error: y", "(3) error: y", ""] {
            assert_eq!(client_error(other), None, "{other:?}");
        }
    }

    #[test]
    fn exit_statuses() {
        use std::os::unix::process::ExitStatusExt;
        // wait(2)'s encoding: the code in the second byte, a signal in the low bits.
        assert_eq!(NbenchExit::from(ExitStatus::from_raw(0)), NbenchExit::Code(0));
        assert_eq!(NbenchExit::from(ExitStatus::from_raw(1 << 8)), NbenchExit::Code(1));
        assert_eq!(NbenchExit::from(ExitStatus::from_raw(15)), NbenchExit::Signal(15));
    }

    #[test]
    fn the_running_line() {
        let (d, f, w) = read_running(
            "20 seconds with load '/usr/share/dbench/client.txt' and warmup 1 secs",
            AND_WARMUP,
        )
        .unwrap();
        assert_eq!(
            (d, f.to_str(), w),
            (Duration::from_secs(20), Some("/usr/share/dbench/client.txt"), Duration::from_secs(1))
        );
        // A quote in the path: the last `' and warmup` ends it.
        let (_, f, _) =
            read_running("1 seconds with load '/a' and warmup 'b' and warmup 0 secs", AND_WARMUP)
                .unwrap();
        assert_eq!(f.to_str(), Some("/a' and warmup 'b"));
        assert_eq!(read_running("-1 seconds with load 'x' and warmup 0 secs", AND_WARMUP), None);
    }

    #[test]
    fn error_reports_are_joined_and_bounded() {
        let out = "time: x\nerror: nbench [\nsomething broke\n]\nerror: later [\nx\n]\n";
        assert_eq!(error_report(out).as_deref(), Some("error: nbench [ something broke ]"));
        assert_eq!(error_report("error: plain").as_deref(), Some("error: plain"));
        let endless = format!("error: x [\n{}", "y\n".repeat(100));
        assert_eq!(error_report(&endless).unwrap().matches('y').count(), MAX_REPORT_LINES);
        assert_eq!(error_report("no report\n"), None);
    }
}
