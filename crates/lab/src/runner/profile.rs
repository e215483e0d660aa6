//! Server profiles (`[runner] profile = "perf"`): one extra run of each cell, after its
//! measured repetitions, with `perf record -g` attached by PID to every process of the
//! cell's server for the length of the measured client run (which begins only once perf has
//! acknowledged enabling its events: perf_control.rs); `perf script`'s output is
//! folded with inferno (`inferno::collapse::perf`) into the stacks the store keeps.
//!
//! The profiled run is not a repetition: it is stored apart (`herd_store::ProfileRecord`),
//! so no figure, interval or spread includes a run slowed by the profiler, and the rounds
//! and `--resume` logic of the repetitions is untouched. Its client's requests per second
//! are kept to show what profiling cost.
//!
//! perf is started and stopped through the run's `Supervisor` (stopped by PID with SIGTERM,
//! on which perf writes its file and exits; on error and Ctrl-C the run's `stop_all`
//! stops it with the servers). It runs in herd's own network namespace: `perf record -p`
//! follows processes by PID, and a path's namespaces share the PID namespace with herd.
//! Not here: drawing (the report's, with inferno, from the stored text).

use std::ffi::OsString;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use herd_topo::{CpuSet, Spawn};
use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;

use super::failure::{RunFailure, Stop};
use super::perf_control::Fifos;
use super::watched::Started;

/// perf's sampling frequency: 999 Hz, off the beat of timers that fire at round rates.
const FREQUENCY: &str = "999";

/// How long perf may take to attach to the servers and enable its events: its first start
/// on a fresh machine reads its program from disk.
const PERF_ATTACH: Duration = Duration::from_secs(30);

/// How long perf may take to write its file once asked to stop, and `perf script` to read
/// it, before they are killed.
const PERF_GRACE: Duration = Duration::from_secs(20);
const SCRIPT_LIMIT: Duration = Duration::from_secs(120);

/// Why this machine cannot profile, or None: `perf` is the program found (None: not
/// installed), `paranoid` the value of /proc/sys/kernel/perf_event_paranoid (None: not
/// readable), `root` whether herd runs as root (root may attach to any process whatever the
/// value).
pub(crate) fn refusal(perf: Option<&Path>, paranoid: Option<i64>, root: bool) -> Option<String> {
    if perf.is_none() {
        return Some(
            "[runner] profile = \"perf\": perf is not installed (apt-get install linux-perf)"
                .into(),
        );
    }
    if root {
        return None;
    }
    match paranoid {
        None => Some(
            "[runner] profile = \"perf\": cannot read /proc/sys/kernel/perf_event_paranoid, so whether perf may attach to the servers is unknown: run herd lab as root".into(),
        ),
        // 1 lets a user profile their own processes, kernel included; 2 only user space,
        // which leaves -p PID of another program's processes refused by perf_event_open.
        Some(v) if v > 1 => Some(format!(
            "[runner] profile = \"perf\": /proc/sys/kernel/perf_event_paranoid is {v}, and perf needs 1 or less to attach to the servers as a user other than root: run `sysctl kernel.perf_event_paranoid=1`, or run herd lab as root"
        )),
        Some(_) => None,
    }
}

/// This machine's answer to [`refusal`]: perf on PATH, the kernel's setting, the user.
pub(crate) fn check_machine() -> Result<PathBuf, String> {
    let perf = herd_topo::net::machine::find_program("perf");
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok());
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    match (refusal(perf.as_deref(), paranoid, root), perf) {
        (None, Some(perf)) => Ok(perf),
        (Some(why), _) => Err(why),
        (None, None) => Err("[runner] profile = \"perf\": perf is not installed".into()),
    }
}

/// perf recording the servers, started by [`start`].
pub(super) struct Recording {
    pid: u32,
    data: PathBuf,
    dir: PathBuf,
}

/// The folded stacks of one profiled run.
pub(super) struct Folded {
    pub(super) text: String,
    pub(super) weight: u64,
}

/// Starts `perf record -g` on every process of the servers (each server's process group,
/// so that nginx's and Apache's workers are followed too), its files in `dir`, and returns
/// once its events are enabled; Ctrl-C (`cancel`) during that wait stops perf and the run.
pub(super) fn start(
    sup: &mut herd_topo::Supervisor,
    perf: &Path,
    started: &Started,
    dir: &Path,
    cancel: &AtomicBool,
) -> Result<Recording, Stop> {
    std::fs::create_dir_all(dir)
        .map_err(|err| RunFailure::Setup(format!("cannot create {}: {err}", dir.display())))?;
    let mut pids: Vec<u32> = Vec::new();
    for s in &started.servers {
        let members = herd_topo::proc::group_members(s.pid);
        if members.is_empty() {
            pids.push(s.pid);
        }
        pids.extend(members);
    }
    pids.sort_unstable();
    pids.dedup();
    let list = pids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let data = dir.join("perf.data");
    let fifos = Fifos::make(dir).map_err(RunFailure::Setup)?;
    let argv: Vec<OsString> = vec![
        perf.into(),
        "record".into(),
        "-F".into(),
        FREQUENCY.into(),
        "-g".into(),
        // No build-id cache in ~/.debug and no build-id pass at the end: the stacks are
        // read once, right after, from the binaries in place.
        "-N".into(),
        "-B".into(),
        "-q".into(),
        // Events off until herd enables them and perf acknowledges (perf_control.rs).
        "-D".into(),
        "-1".into(),
        "--control".into(),
        fifos.argument(),
        "-p".into(),
        list.into(),
        "-o".into(),
        data.clone().into(),
    ];
    let log = dir.join("perf-record.log");
    let spawn = Spawn::logged("perf-record", &argv, &log);
    let pid = sup.start(&spawn).map_err(|err| {
        RunFailure::Setup(format!("cannot start perf record: {}", crate::error::with_causes(&err)))
    })?;
    // Ctrl-C ends the wait at once, as it ends a client's run.
    let interrupted = || cancel.load(Ordering::Relaxed);
    let enabled = fifos.enable(PERF_ATTACH, || {
        if interrupted() {
            return Some("interrupted".into());
        }
        let status = sup.exit_status(pid)?;
        Some(format!("perf record exited at start ({})", herd_topo::proc::describe(&status)))
    });
    if let Err(why) = enabled {
        sup.stop(pid, PERF_GRACE);
        if interrupted() {
            return Err(Stop::Cancelled { client: false });
        }
        return Err(
            RunFailure::Setup(format!("{why}: {}", super::log_tail::last_lines_of(&log))).into()
        );
    }
    Ok(Recording { pid, data, dir: dir.to_path_buf() })
}

/// Stops perf (SIGTERM: it writes its file and exits), reads the samples back with
/// `perf script` and folds them.
pub(super) fn finish(
    sup: &mut herd_topo::Supervisor,
    perf: &Path,
    rec: Recording,
) -> Result<Folded, RunFailure> {
    sup.stop(rec.pid, PERF_GRACE);
    let script_out = rec.dir.join("perf-script.txt");
    let script_err = rec.dir.join("perf-script.log");
    let argv: Vec<OsString> =
        vec![perf.into(), "script".into(), "-i".into(), rec.data.clone().into()];
    let spawn = Spawn {
        name: "perf-script",
        argv: &argv,
        env: &[],
        stdout: &script_out,
        stderr: &script_err,
        cpus: &CpuSet::All,
        netns: None,
    };
    let finished = sup.run(&spawn, SCRIPT_LIMIT, Duration::from_secs(2), None).map_err(|err| {
        RunFailure::Setup(format!("cannot run perf script: {}", crate::error::with_causes(&err)))
    })?;
    if !finished.status.success() {
        return Err(RunFailure::Setup(format!(
            "perf script -i {} failed ({}): {}",
            rec.data.display(),
            herd_topo::proc::describe(&finished.status),
            super::log_tail::last_lines_of(&script_err)
        )));
    }
    let file = std::fs::File::open(&script_out)
        .map_err(|err| RunFailure::Setup(format!("cannot read {}: {err}", script_out.display())))?;
    let folded = fold(BufReader::new(file))
        .map_err(|err| RunFailure::Setup(format!("cannot fold perf script's output: {err}")))?;
    // A flame graph of nothing is not a profile: say so rather than store it.
    if folded.weight == 0 {
        return Err(RunFailure::Setup(format!(
            "perf record took no samples of the servers during the profiled run ({} has none): {}",
            rec.data.display(),
            super::log_tail::last_lines_of(&rec.dir.join("perf-record.log"))
        )));
    }
    Ok(folded)
}

/// `perf script`'s text folded into stacks (inferno), with what their counts add up to
/// (each sample weighs its event's period, as inferno folds it).
pub(super) fn fold(script: impl std::io::BufRead) -> std::io::Result<Folded> {
    let mut options = Options::default();
    // One thread: the lab's machine is busy enough, and the order of lines stays fixed.
    options.nthreads = 1;
    let mut folded = Vec::new();
    Folder::from(options).collapse(script, &mut folded)?;
    let text = String::from_utf8_lossy(&folded).into_owned();
    let weight = text
        .lines()
        .filter_map(|l| l.rsplit_once(' ').and_then(|(_, n)| n.parse::<u64>().ok()))
        .fold(0u64, u64::saturating_add);
    Ok(Folded { text, weight })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(perf: bool, paranoid: Option<i64>, root: bool, expect: Option<&str>) {
        let found = perf.then(|| Path::new("/usr/bin/perf"));
        let got = refusal(found, paranoid, root);
        match (got.as_deref(), expect) {
            (None, None) => {}
            (Some(got), Some(want)) => assert!(got.contains(want), "{got:?} lacks {want:?}"),
            (got, want) => panic!("got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn refusals_say_what_to_install_or_set() {
        check(false, Some(-1), true, Some("apt-get install linux-perf"));
        check(true, Some(2), false, Some("perf_event_paranoid is 2"));
        check(true, Some(2), false, Some("sysctl kernel.perf_event_paranoid=1"));
        check(true, Some(3), false, Some("needs 1 or less"));
        check(true, None, false, Some("cannot read /proc/sys/kernel/perf_event_paranoid"));
        check(true, Some(1), false, None);
        check(true, Some(-1), false, None);
        check(true, Some(4), true, None);
    }

    #[test]
    fn perf_script_output_folds_into_stacks_with_their_samples() {
        let script = "herd 1234/1235 [001] 100.000001: 1001001 cycles:P: \n\
            \t    55d0 herd_serve::worker::Worker::turn+0x10 (/usr/bin/herd)\n\
            \t    55c0 herd_serve::worker::run+0x20 (/usr/bin/herd)\n\
            \t    55b0 main+0x30 (/usr/bin/herd)\n\
            \n\
            herd 1234/1235 [001] 100.001002: 1001001 cycles:P: \n\
            \t    55d0 herd_serve::worker::Worker::turn+0x10 (/usr/bin/herd)\n\
            \t    55c0 herd_serve::worker::run+0x20 (/usr/bin/herd)\n\
            \t    55b0 main+0x30 (/usr/bin/herd)\n\
            \n";
        let folded = fold(script.as_bytes()).unwrap();
        assert_eq!(folded.weight, 2 * 1001001);
        assert_eq!(
            folded.text.trim(),
            "herd;main;herd_serve::worker::run;herd_serve::worker::Worker::turn 2002002"
        );
    }
}
