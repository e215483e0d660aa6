//! What the client itself used during one run (or step): the worker threads' CPU and
//! run-queue shares (from the engine), the process's rusage and the cgroup's CPU-quota
//! throttling (read here, before and after). The figures only; health.rs judges them.

use std::time::Duration;

use herd_engine::ThreadUsage;

use crate::cgroup_cpu::ThrottleProbe;
use crate::process_cpu::ProcessCpu;
use crate::steal::StealProbe;
use crate::timer_probe::{self, TimerLateness};

/// Readings taken just before a run starts.
#[derive(Debug)]
pub(crate) struct UsageProbe {
    process: Option<ProcessCpu>,
    throttle: Option<ThrottleProbe>,
    steal: Option<StealProbe>,
    timers: Option<TimerLateness>,
}

/// The client's usage over a run. Shares are of the worker threads' wall time, 0 to 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ClientUsage {
    pub(crate) workers: u32,
    /// Mean over the worker threads of CPU time / wall time.
    pub(crate) busy: f64,
    /// The busiest worker's share: one saturated worker limits its own connections.
    pub(crate) busiest: f64,
    /// Mean share of time waiting on a run queue (throttling included); None if unknown.
    pub(crate) run_queue_wait: Option<f64>,
    /// Throttled time of herd's cgroup (or of the ancestor throttled most) over the workers'
    /// total wall time; None without a cgroup that reports it.
    pub(crate) throttled: Option<f64>,
    /// Periods in which the quota ran out, out of all periods; None as above.
    pub(crate) throttled_periods: Option<(u64, u64)>,
    pub(crate) process: Option<ProcessCpu>,
    /// The CPUs herd may run on (its affinity: taskset, the lab's placement, a container's
    /// cpuset) of those online; None if unknown.
    #[serde(default)]
    pub(crate) cpus: Option<Cpus>,
    /// How late this machine's timers woke a thread, measured just before an open-loop run;
    /// None for a closed loop.
    #[serde(default)]
    pub(crate) timers: Option<TimerLateness>,
    /// The machine's steal time over the run, a share of all its CPUs' time; None where
    /// /proc/stat has none.
    #[serde(default)]
    pub(crate) steal: Option<f64>,
}

/// How many CPUs herd may use, of how many are online.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Cpus {
    pub(crate) allowed: u32,
    pub(crate) online: u32,
}

impl Cpus {
    /// This process's, now.
    pub(crate) fn now() -> Option<Cpus> {
        // SAFETY: all-zero is an empty cpu_set_t; sched_getaffinity fills at most its size.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is valid for writes of the size given; pid 0 is this thread.
        let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
        // SAFETY: sysconf has no preconditions.
        let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        if rc != 0 || online <= 0 {
            return None;
        }
        // SAFETY: `set` was filled by sched_getaffinity.
        let allowed = unsafe { libc::CPU_COUNT(&set) };
        Some(Cpus { allowed: u32::try_from(allowed).ok()?, online: u32::try_from(online).ok()? })
    }

    /// Held to fewer CPUs than the machine has: placed apart already.
    pub(crate) fn pinned(self) -> bool {
        self.allowed < self.online
    }
}

impl UsageProbe {
    /// Readings now; for an open loop (`paced`), the timers' lateness is probed first.
    pub(crate) fn start(paced: bool) -> UsageProbe {
        let timers = paced.then(timer_probe::probe);
        UsageProbe {
            process: ProcessCpu::now(),
            throttle: ThrottleProbe::start(),
            steal: StealProbe::start(),
            timers,
        }
    }

    /// The usage since [`UsageProbe::start`], with the engine's per-worker figures.
    pub(crate) fn finish(&self, workers: &[ThreadUsage]) -> ClientUsage {
        let process = match (ProcessCpu::now(), &self.process) {
            (Some(now), Some(before)) => Some(now.since(before)),
            _ => None,
        };
        let throttling = self.throttle.as_ref().and_then(ThrottleProbe::finish);
        let n = workers.len();
        let mean = |f: &dyn Fn(&ThreadUsage) -> f64| {
            if n == 0 {
                0.0
            } else {
                workers.iter().map(f).sum::<f64>() / n as f64
            }
        };
        let run_queue_wait = (n > 0 && workers.iter().all(|w| w.run_queue_wait.is_some()))
            .then(|| mean(&|w| w.wait_share().unwrap_or(0.0)));
        let wall: Duration = workers.iter().map(|w| w.wall).sum();
        ClientUsage {
            workers: u32::try_from(n).unwrap_or(u32::MAX),
            busy: mean(&ThreadUsage::busy_share),
            busiest: workers.iter().map(ThreadUsage::busy_share).fold(0.0, f64::max),
            run_queue_wait,
            // Throttled time is summed over CPUs, like the workers' wall time here: two
            // workers held back for a whole run give 2 × wall, a share of 1.
            throttled: throttling.map(|t| {
                if wall.is_zero() {
                    0.0
                } else {
                    (t.throttled.as_secs_f64() / wall.as_secs_f64()).min(1.0)
                }
            }),
            throttled_periods: throttling.map(|t| (t.throttled_periods, t.periods)),
            process,
            cpus: Cpus::now(),
            timers: self.timers,
            steal: self.steal.as_ref().and_then(StealProbe::finish),
        }
    }
}

impl ClientUsage {
    /// The usage of several agents' clients taken as one client: workers added, shares
    /// averaged over all workers (every agent runs the same length), the busiest worker the
    /// busiest of all, CPU time added; a figure one agent could not read is unknown for all.
    pub(crate) fn combine(parts: &[ClientUsage]) -> ClientUsage {
        if parts.is_empty() {
            return ClientUsage::default();
        }
        let workers: u32 = parts.iter().map(|u| u.workers).sum();
        let weighted = |f: &dyn Fn(&ClientUsage) -> Option<f64>| -> Option<f64> {
            if workers == 0 {
                return None;
            }
            parts
                .iter()
                .map(|u| f(u).map(|v| v * f64::from(u.workers)))
                .sum::<Option<f64>>()
                .map(|total| total / f64::from(workers))
        };
        ClientUsage {
            workers,
            busy: weighted(&|u| Some(u.busy)).unwrap_or(0.0),
            busiest: parts.iter().map(|u| u.busiest).fold(0.0, f64::max),
            run_queue_wait: weighted(&|u| u.run_queue_wait),
            throttled: weighted(&|u| u.throttled),
            throttled_periods: parts
                .iter()
                .try_fold((0, 0), |(t, p), u| u.throttled_periods.map(|(a, b)| (t + a, p + b))),
            process: parts.iter().try_fold(ProcessCpu::default(), |a, u| {
                u.process.map(|b| ProcessCpu {
                    user: a.user + b.user,
                    system: a.system + b.system,
                    involuntary_switches: a.involuntary_switches + b.involuntary_switches,
                })
            }),
            // Agents on machines of their own: known only where every one says the same.
            cpus: parts[0].cpus.filter(|c| parts.iter().all(|u| u.cpus == Some(*c))),
            // The latest timers and the most stolen machine: what held some agent back.
            timers: parts.iter().filter_map(|u| u.timers).max_by_key(|t| t.p99_us),
            steal: parts.iter().filter_map(|u| u.steal).reduce(f64::max),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn agents_usage_combines_as_one_client() {
        let cpu = |s| ProcessCpu {
            user: Duration::from_secs(s),
            system: Duration::from_secs(1),
            involuntary_switches: 3,
        };
        let a = ClientUsage {
            workers: 2,
            busy: 0.5,
            busiest: 0.6,
            run_queue_wait: Some(0.1),
            throttled: None,
            throttled_periods: Some((1, 10)),
            process: Some(cpu(2)),
            cpus: Some(Cpus { allowed: 1, online: 2 }),
            timers: Some(TimerLateness { p50_us: 60, p99_us: 90 }),
            steal: Some(0.01),
        };
        let b = ClientUsage {
            workers: 1,
            busy: 0.8,
            busiest: 0.8,
            run_queue_wait: Some(0.4),
            throttled: Some(0.2),
            throttled_periods: Some((0, 10)),
            process: Some(cpu(5)),
            cpus: Some(Cpus { allowed: 1, online: 2 }),
            timers: Some(TimerLateness { p50_us: 55, p99_us: 400 }),
            steal: None,
        };
        let c = ClientUsage::combine(&[a, b]);
        assert_eq!(c.timers, Some(TimerLateness { p50_us: 55, p99_us: 400 }));
        assert_eq!(c.steal, Some(0.01));
        assert_eq!(c.workers, 3);
        assert!((c.busy - 0.6).abs() < 1e-9, "{c:?}");
        assert_eq!(c.busiest, 0.8);
        assert!((c.run_queue_wait.unwrap() - 0.2).abs() < 1e-9);
        assert_eq!(c.throttled, None, "unknown on one agent: unknown");
        assert_eq!(c.throttled_periods, Some((1, 20)));
        let want = ProcessCpu {
            user: Duration::from_secs(7),
            system: Duration::from_secs(2),
            involuntary_switches: 6,
        };
        assert_eq!(c.process, Some(want));
        assert_eq!(c.cpus, Some(Cpus { allowed: 1, online: 2 }), "the same on both");
        let other = ClientUsage { cpus: Some(Cpus { allowed: 4, online: 8 }), ..b };
        assert_eq!(ClientUsage::combine(&[a, other]).cpus, None, "not the same: unknown");
        assert_eq!(ClientUsage::combine(&[]), ClientUsage::default());
    }
}
