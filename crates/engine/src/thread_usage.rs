//! What one worker thread cost the machine: its own CPU time and how long it waited on a run
//! queue, between the start and the end of its loop. These are the client-side half of the
//! question "was it the server or the client?": a worker busy nearly all of its wall time, or
//! waiting for a CPU most of the rest, could not have asked faster, whatever the server did.
//!
//! Two reads per thread per run (a clock and a small /proc file), never on the hot path. This
//! file measures; judging the figures is the caller's business (herd run's health verdict).

use std::time::{Duration, Instant};

use rustix::time::{clock_gettime, ClockId};

/// One worker thread's usage over its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadUsage {
    /// Wall-clock time from the start of the worker's loop to its end.
    pub wall: Duration,
    /// CPU time the thread itself used, user and system (CLOCK_THREAD_CPUTIME_ID).
    pub cpu: Duration,
    /// Time the thread was runnable but waiting on a run queue for a CPU (the second field of
    /// /proc/thread-self/schedstat). CPU-quota throttling counts here too: a throttled
    /// thread stays runnable. None where the kernel does not provide the file.
    pub run_queue_wait: Option<Duration>,
}

impl ThreadUsage {
    /// `cpu / wall`: the share of the run the thread was on a CPU (0 for an empty run).
    pub fn busy_share(&self) -> f64 {
        share(self.cpu, self.wall)
    }

    /// `run_queue_wait / wall`, when known.
    pub fn wait_share(&self) -> Option<f64> {
        self.run_queue_wait.map(|w| share(w, self.wall))
    }
}

/// Started on the worker's own thread; stopped on the same thread.
#[derive(Debug)]
pub(crate) struct ThreadClock {
    wall: Instant,
    cpu: Duration,
    wait: Option<Duration>,
}

impl ThreadClock {
    pub(crate) fn start() -> ThreadClock {
        ThreadClock { wall: Instant::now(), cpu: thread_cpu(), wait: run_queue_wait() }
    }

    pub(crate) fn stop(self) -> ThreadUsage {
        let wait = match (self.wait, run_queue_wait()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        ThreadUsage {
            wall: self.wall.elapsed(),
            cpu: thread_cpu().saturating_sub(self.cpu),
            run_queue_wait: wait,
        }
    }
}

fn share(part: Duration, whole: Duration) -> f64 {
    if whole.is_zero() {
        0.0
    } else {
        part.as_secs_f64() / whole.as_secs_f64()
    }
}

/// The calling thread's CPU time so far.
fn thread_cpu() -> Duration {
    let t = clock_gettime(ClockId::ThreadCPUTime);
    // The kernel never returns negative fields for this clock; clamp rather than trust it.
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(t.tv_nsec).unwrap_or(0).min(999_999_999);
    Duration::new(secs, nanos)
}

/// The calling thread's run-queue wait so far, from /proc/thread-self/schedstat
/// ("run_ns wait_ns timeslices"); None when the file is missing (no /proc, or a kernel
/// without CONFIG_SCHED_INFO) or unreadable.
fn run_queue_wait() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    parse_schedstat_wait(&text)
}

fn parse_schedstat_wait(text: &str) -> Option<Duration> {
    let ns = text.split_ascii_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(Duration::from_nanos(ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_second_field_is_the_wait() {
        let d = parse_schedstat_wait("1361739416 639107146 184\n");
        assert_eq!(d, Some(Duration::from_nanos(639_107_146)));
        assert_eq!(parse_schedstat_wait("12"), None);
        assert_eq!(parse_schedstat_wait("1 x 3"), None);
        assert_eq!(parse_schedstat_wait(""), None);
    }

    /// Every CPU's steal so far (/proc/stat's `cpu` line, eighth field), as time: what a
    /// hypervisor gave other guests. Neither this thread's CPU clock nor its run-queue wait
    /// counts it, so a spin on a stolen-from guest is covered only with it added.
    fn machine_steal() -> Duration {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let ticks = stat
            .lines()
            .find(|l| l.starts_with("cpu "))
            .and_then(|l| l.split_whitespace().nth(8))
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0);
        // SAFETY: sysconf reads a constant; no memory is touched.
        let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100).max(1);
        Duration::from_nanos(ticks.saturating_mul(1_000_000_000 / hz))
    }

    #[test]
    fn a_spinning_thread_is_busy_and_a_sleeping_one_is_not() {
        let steal_before = machine_steal();
        let spin = ThreadClock::start();
        // At least 300 ms, long enough for steal's 10 ms ticks to count what the hypervisor
        // took; and on until the thread has had 50 ms of CPU, however little a busy machine
        // leaves it (up to 10 s): beside the test command's other binaries a 300 ms spin once
        // got 22 ms, waiting 287 ms for a CPU.
        let (started, cpu_before) = (Instant::now(), thread_cpu());
        let mut x = 0u64;
        while started.elapsed() < Duration::from_millis(300)
            || (thread_cpu().saturating_sub(cpu_before) < Duration::from_millis(50)
                && started.elapsed() < Duration::from_secs(10))
        {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let spun = spin.stop();
        let stolen = machine_steal().saturating_sub(steal_before);
        // On a CPU, waiting for one, or stolen by the hypervisor (every CPU's steal: an upper
        // bound of this thread's): together they cover the spin on a shared machine. CI's
        // guest lost 11 ms of a 63 ms spin to steal (cpu 46 ms, run-queue wait 6 ms).
        let covered =
            spun.busy_share() + spun.wait_share().unwrap_or(0.0) + share(stolen, spun.wall);
        assert!(covered > 0.9, "{spun:?}, stolen {stolen:?}");
        assert!(spun.cpu > Duration::from_millis(25), "{spun:?}, stolen {stolen:?}");

        let nap = ThreadClock::start();
        std::thread::sleep(Duration::from_millis(60));
        let slept = nap.stop();
        assert!(slept.busy_share() < 0.2, "{slept:?}");
        assert!(slept.wall >= Duration::from_millis(60), "{slept:?}");
    }

    #[test]
    fn this_kernel_reports_run_queue_wait() {
        // Linux has had /proc/<pid>/task/<tid>/schedstat since 2.6; herd's CI is Linux.
        assert!(run_queue_wait().is_some(), "no /proc/thread-self/schedstat");
    }
}
