//! Samba's `smbtorture … bench.nbench` (Debian's `samba-testsuite`) as the client of a
//! NetBench cell: it replays dbench's NetBench-derived trace (`/usr/share/dbench/client.txt`,
//! Debian's `dbench`) over SMB1 against an SMB server. [`NbenchJob`] makes its command line,
//! [`parse`] (in `nbench_output.rs`) reads what it printed, [`to_measurement`] turns that into
//! the lab's [`Measurement`]. See docs/netbench.md in the shared docs for the probe behind
//! this.
//!
//! Deliberately apart from the HTTP-shaped [`super::ClientJob`] and [`super::Tool`]: an NBENCH
//! step is a client count and a whole number of seconds against a share, not a request to a
//! URL; the lab wires it in on its own.
//!
//! For whoever runs it: give it [`kill_timeout`] (the cleanup after its time limit has no
//! bound), and stop it by its *process group*: smbtorture forks one process per client, and a
//! SIGTERM to the parent alone leaves the clients running until their own time limit
//! (seen here: both children of a `--num-progs=2` run outlived their parent). Run it in a
//! directory of its own: it makes a `smbtortureXXXXXX` directory in its working directory,
//! and leaves it there when it is killed.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use herd_stats::Measurement;

use super::argv;
pub use super::nbench_error::NbenchError;
pub use super::nbench_output::{
    parse, NbenchExit, NbenchOutcome, NbenchSecond, Phase, FIRST_READX_LINE,
};
pub use super::version::{
    parse_smbtorture_version as parse_version, smbtorture_version_argv as version_argv,
};
use crate::load::{Load, Shape, Warmup};

/// Where Debian's `dbench` package puts the NetBench-derived load file: the one NBENCH
/// replays.
pub const DBENCH_CLIENT_TXT: &str = "/usr/share/dbench/client.txt";

/// One smbtorture NBENCH run: `clients` processes replaying `loadfile` for `duration`
/// against `//server/share`, logged on as a guest.
#[derive(Debug, Clone, Copy)]
pub struct NbenchJob<'a> {
    /// smbtorture's executable (`/usr/bin/smbtorture`), the first element of the argv.
    pub program: &'a Path,
    /// The SMB server: an IP address in herd's ranges and its port.
    pub server: SocketAddr,
    /// The share's name, as in the server's smb.conf (`bench`).
    pub share: &'a str,
    /// Client processes (`--num-progs`), each replaying the whole load file.
    pub clients: u32,
    /// The time limit (`-t`): whole seconds, at least 1. smbtorture measures over it (after
    /// its warm-up, which it adds for limits of 20 s and more) and then cleans up.
    pub duration: Duration,
    /// The load file (`--loadfile`), normally [`DBENCH_CLIENT_TXT`]. Always given:
    /// without it smbtorture reads `./client.txt` from its working directory.
    pub loadfile: &'a Path,
}

/// What the cleanup after the time limit may take, on top of the time limit: a server-side
/// deltree of `\clients` took 3–20 s in the probe, and with one client the client does it
/// itself (15–20 s more under load). 60 s leaves room; there is no bound to rely on.
pub const CLEANUP_ALLOWANCE: Duration = Duration::from_secs(60);

/// The names of its figures in [`Measurement::reported`] (herd_stats', which the report
/// reads too).
pub use herd_stats::{
    REPORTED_LINES_PER_CLIENT, REPORTED_THROUGHPUT_MBIT_S, REPORTED_THROUGHPUT_MB_S,
    REPORTED_WARMUP_S, REPORTED_WRITE_ONLY_OPENING,
};

impl NbenchJob<'_> {
    /// `PROGRAM //ADDR/SHARE -N -p PORT --num-progs=N -t SECS --loadfile=LOADFILE
    /// bench.nbench`, or why the job cannot run. Checks the load file exists (the only thing
    /// looked at on disk).
    pub fn argv(&self) -> Result<Vec<OsString>, NbenchError> {
        herd_engine::check_allowed(self.server.ip())
            .map_err(|_| NbenchError::NotAllowed { server: self.server })?;
        if !share_name_ok(self.share) {
            return Err(NbenchError::BadShareName { share: self.share.to_owned() });
        }
        if self.clients == 0 {
            return Err(NbenchError::NoClients);
        }
        let seconds = whole_seconds(self.duration)?;
        if !self.loadfile.is_file() {
            return Err(NbenchError::LoadfileMissing { path: self.loadfile.to_path_buf() });
        }
        let mut loadfile = OsString::from("--loadfile=");
        loadfile.push(self.loadfile.as_os_str());
        let mut a = argv([self.program.as_os_str().to_owned()]);
        // smbtorture takes an IPv6 literal bare in the UNC (`//::1/bench`), no brackets.
        a.extend(argv([
            format!("//{}/{}", self.server.ip(), self.share),
            "-N".to_owned(),
            "-p".to_owned(),
            self.server.port().to_string(),
            format!("--num-progs={}", self.clients),
            "-t".to_owned(),
            seconds.to_string(),
        ]));
        a.push(loadfile);
        a.push("bench.nbench".into());
        Ok(a)
    }

    /// How long a runner lets this job run before killing it: [`kill_timeout`].
    pub fn kill_timeout(&self) -> Duration {
        kill_timeout(self.duration)
    }
}

/// The NBENCH runs a load makes, one smbtorture process each: the clients of every step, in
/// order, and the time limit they share; Err says why smbtorture cannot run that load. A
/// closed loop for a duration is one step of its `concurrency` clients; a ramp (`steps`) is
/// one run per step. smbtorture stops after a time limit in whole seconds, has no request
/// count and no open loop, and its warm-up can only be a time.
pub fn steps(load: &Load) -> Result<(Vec<u32>, Duration), String> {
    let (clients, limit) = match &load.shape {
        Shape::Duration { duration, concurrency } => (vec![*concurrency], *duration),
        Shape::Steps { clients, step } => (clients.clone(), *step),
        Shape::Requests { .. } => {
            return Err("smbtorture runs NBENCH for a time, not a request count: give `duration` \
                 (one step of `concurrency` clients) or `steps` with `step`"
                .to_owned())
        }
        Shape::Rate { .. } | Shape::RateSteps { .. } => return Err(
            "smbtorture has no open loop (`rate`, `rate_steps`): each client replays the trace \
                 as fast as the server answers; give `duration` or `steps`"
                .to_owned(),
        ),
    };
    let whole = |d: Duration| d.subsec_nanos() == 0 && d >= Duration::from_secs(1);
    if !whole(limit) {
        return Err(format!(
            "smbtorture's time limit is whole seconds, at least 1: {limit:?} is not one"
        ));
    }
    match load.warmup {
        Warmup::Requests(_) => {
            return Err("smbtorture's warm-up can only be a time: give `warmup = \"10s\"`, not \
                 `warmup_requests`"
                .to_owned())
        }
        Warmup::Duration(d) if !whole(d) => {
            return Err(format!(
                "smbtorture's warm-up is whole seconds, at least 1: {d:?} is not one"
            ))
        }
        _ => {}
    }
    Ok((clients, limit))
}

/// How long a runner lets an NBENCH run of time limit `duration` go before killing it: the
/// limit, any warm-up (limit / 20) and [`CLEANUP_ALLOWANCE`].
pub fn kill_timeout(duration: Duration) -> Duration {
    duration + warmup(duration) + CLEANUP_ALLOWANCE
}

/// One NBENCH run as the lab's measurement of step `step` (1, 2, …).
///
/// `bytes_total` is derived, not counted: throughput × 10^6 × the time limit, so it carries
/// the printed throughput's precision (six significant digits). `completed` and `failed` are
/// 0, "not reported": smbtorture counts no operations, and its lines per client are a
/// progress mark (the average line reached, printed once a second) rather than a count at
/// the time limit. A run that succeeded had no failed operation by construction (a client
/// stops the run at the first status the trace did not expect, and that is an
/// [`NbenchError`]). The figures it does print go to `reported` by the `REPORTED_*` names.
pub fn to_measurement(outcome: &NbenchOutcome, step: u32) -> Measurement {
    let duration_s = outcome.duration.as_secs_f64();
    let bytes = outcome.throughput_mb_s * 1e6 * duration_s;
    Measurement {
        step,
        label: format!("c={}", outcome.clients),
        concurrency: Some(outcome.clients),
        rate: None,
        duration_s,
        completed: 0,
        failed: 0,
        failures: Vec::new(),
        statuses: Vec::new(),
        non_2xx: 0,
        // `as` saturates; the parser keeps the throughput finite and not negative.
        bytes_total: bytes.round() as u64,
        bytes_body: 0,
        warmup_requests: 0,
        histograms: Vec::new(),
        reported: vec![
            (REPORTED_THROUGHPUT_MB_S.to_owned(), outcome.throughput_mb_s),
            (REPORTED_THROUGHPUT_MBIT_S.to_owned(), outcome.throughput_mbit_s()),
            (REPORTED_LINES_PER_CLIENT.to_owned(), outcome.lines_per_client as f64),
            (
                REPORTED_WRITE_ONLY_OPENING.to_owned(),
                if outcome.write_only_opening() { 1.0 } else { 0.0 },
            ),
            (REPORTED_WARMUP_S.to_owned(), outcome.warmup.as_secs_f64()),
        ],
        judgement: None,
    }
}

/// `clients` spread over `hosts` client hosts as evenly as they go, the first hosts taking
/// the remainder (Mindcraft's clients were spread over four switches the same way): 6 over 4
/// is 2, 2, 1, 1; 1 over 4 is 1, 0, 0, 0.
pub fn spread_clients(clients: u32, hosts: usize) -> Vec<u32> {
    let hosts = u32::try_from(hosts.max(1)).unwrap_or(u32::MAX);
    (0..hosts).map(|i| clients / hosts + u32::from(i < clients % hosts)).collect()
}

/// smbtorture's warm-up for a time limit: `timelimit / 20` in whole seconds (Samba's
/// `torture/nbench/nbench.c`), so none below 20 s.
fn warmup(duration: Duration) -> Duration {
    Duration::from_secs(duration.as_secs() / 20)
}

/// `d` as smbtorture's `-t`: whole seconds, at least 1.
fn whole_seconds(d: Duration) -> Result<u64, NbenchError> {
    if d.subsec_nanos() == 0 && d.as_secs() >= 1 {
        Ok(d.as_secs())
    } else {
        Err(NbenchError::BadDuration { duration: d })
    }
}

/// A name that fits in `//ADDR/SHARE` as one argument smbtorture splits on `/` and `\`.
fn share_name_ok(share: &str) -> bool {
    !share.is_empty()
        && !share.chars().any(|c| c == '/' || c == '\\' || c.is_whitespace() || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(server: &str) -> NbenchJob<'static> {
        NbenchJob {
            program: Path::new("/usr/bin/smbtorture"),
            server: server.parse().unwrap(),
            share: "bench",
            clients: 2,
            duration: Duration::from_secs(3),
            // A file that exists everywhere the tests run.
            loadfile: Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")),
        }
    }

    #[test]
    fn argv_as_smbtorture_takes_it() {
        let j = job("127.0.0.1:4450");
        let loadfile = format!("--loadfile={}", j.loadfile.display());
        assert_eq!(
            j.argv().unwrap(),
            [
                "/usr/bin/smbtorture",
                "//127.0.0.1/bench",
                "-N",
                "-p",
                "4450",
                "--num-progs=2",
                "-t",
                "3",
                loadfile.as_str(),
                "bench.nbench"
            ]
        );
        let v6 = job("[::1]:445").argv().unwrap();
        assert_eq!(v6[1], "//::1/bench");
        assert!(job("198.19.255.1:445").argv().is_ok());
    }

    #[test]
    fn refusals_name_what_to_do() {
        let refuse = |j: NbenchJob| j.argv().unwrap_err();
        for addr in ["10.0.0.1:445", "198.20.0.1:445", "[2001:db8::1]:445", "0.0.0.0:445"] {
            let e = refuse(job(addr));
            assert_eq!(e, NbenchError::NotAllowed { server: addr.parse().unwrap() });
            assert!(e.to_string().contains("127.0.0.0/8, ::1 and 198.18.0.0/15"), "{e}");
        }
        assert_eq!(refuse(NbenchJob { clients: 0, ..job("127.0.0.1:1") }), NbenchError::NoClients);
        for d in [Duration::ZERO, Duration::from_millis(500), Duration::from_millis(3500)] {
            let e = refuse(NbenchJob { duration: d, ..job("127.0.0.1:1") });
            assert_eq!(e, NbenchError::BadDuration { duration: d });
        }
        for share in ["", "a/b", "a\\b", "a b", "a\nb"] {
            let e = refuse(NbenchJob { share, ..job("127.0.0.1:1") });
            assert_eq!(e, NbenchError::BadShareName { share: share.to_owned() });
        }
        let missing = Path::new("/nonexistent/client.txt");
        let e = refuse(NbenchJob { loadfile: missing, ..job("127.0.0.1:1") });
        assert_eq!(e, NbenchError::LoadfileMissing { path: missing.to_path_buf() });
        let text = NbenchError::LoadfileMissing { path: DBENCH_CLIENT_TXT.into() }.to_string();
        assert!(text.contains("install the `dbench` package"), "{text}");
    }

    #[test]
    fn kill_timeout_covers_warmup_and_cleanup() {
        assert_eq!(kill_timeout(Duration::from_secs(3)), Duration::from_secs(63));
        assert_eq!(kill_timeout(Duration::from_secs(120)), Duration::from_secs(186));
        assert_eq!(job("127.0.0.1:1").kill_timeout(), Duration::from_secs(63));
    }

    #[test]
    fn measurement_of_a_step() {
        let second = |lines, phase, at| NbenchSecond {
            clients: 4,
            lines_per_client: lines,
            mb_per_s: 50.0,
            phase,
            second: at,
        };
        let o = NbenchOutcome {
            clients: 4,
            duration: Duration::from_secs(2),
            warmup: Duration::ZERO,
            loadfile: DBENCH_CLIENT_TXT.into(),
            throughput_mb_s: 55.0129,
            seconds: vec![second(4000, Phase::Execute, 1), second(8000, Phase::Cleanup, 2)],
            lines_per_client: 4000,
        };
        let m = to_measurement(&o, 3);
        assert_eq!((m.step, m.label.as_str(), m.concurrency), (3, "c=4", Some(4)));
        assert_eq!((m.duration_s, m.bytes_total), (2.0, 110_025_800));
        assert_eq!((m.completed, m.failed, m.rate), (0, 0, None));
        assert_eq!(m.reported(REPORTED_THROUGHPUT_MB_S), Some(55.0129));
        assert_eq!(m.reported(REPORTED_THROUGHPUT_MBIT_S), Some(55.0129 * 8.0));
        assert_eq!(m.reported(REPORTED_LINES_PER_CLIENT), Some(4000.0));
        assert_eq!(m.reported(REPORTED_WRITE_ONLY_OPENING), Some(0.0));
        assert_eq!(m.reported(REPORTED_WARMUP_S), Some(0.0));
        let short = NbenchOutcome { lines_per_client: 356, ..o };
        assert_eq!(to_measurement(&short, 1).reported(REPORTED_WRITE_ONLY_OPENING), Some(1.0));
    }

    /// Four client hosts' runs as one step: clients and MB/s summed, lines averaged over
    /// every client (a host of 2 clients at line 1000 and one of 1 at 400: 800), seconds
    /// combined where all printed them.
    #[test]
    fn runs_side_by_side_merge_into_one_step() {
        let run = |clients, lines, mb, seconds: &[u32]| NbenchOutcome {
            clients,
            duration: Duration::from_secs(60),
            warmup: Duration::from_secs(3),
            loadfile: DBENCH_CLIENT_TXT.into(),
            throughput_mb_s: mb,
            seconds: seconds
                .iter()
                .map(|&at| NbenchSecond {
                    clients,
                    lines_per_client: lines,
                    mb_per_s: mb,
                    phase: Phase::Execute,
                    second: at,
                })
                .collect(),
            lines_per_client: lines,
        };
        let a = run(2, 1000, 10.5, &[1, 2]);
        let b = run(1, 400, 4.0, &[1]);
        let m = NbenchOutcome::merged(&[a.clone(), b]).unwrap();
        assert_eq!((m.clients, m.lines_per_client, m.throughput_mb_s), (3, 800, 14.5));
        assert_eq!((m.duration, m.warmup), (a.duration, a.warmup));
        assert_eq!(m.seconds.len(), 1, "second 2 is one run's only");
        assert_eq!((m.seconds[0].clients, m.seconds[0].lines_per_client), (3, 800));
        assert_eq!(m.seconds[0].mb_per_s, 14.5);
        assert_eq!(NbenchOutcome::merged(std::slice::from_ref(&a)), Some(a));
        assert_eq!(NbenchOutcome::merged(&[]), None);
    }

    #[test]
    fn clients_spread_evenly_over_the_hosts() {
        assert_eq!(spread_clients(6, 4), [2, 2, 1, 1]);
        assert_eq!(spread_clients(1, 4), [1, 0, 0, 0]);
        assert_eq!(spread_clients(144, 4), [36, 36, 36, 36]);
        assert_eq!(spread_clients(7, 1), [7]);
        for n in 0..200 {
            assert_eq!(spread_clients(n, 4).iter().sum::<u32>(), n);
        }
    }
}
