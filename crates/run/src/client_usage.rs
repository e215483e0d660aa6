//! What the client itself used during one run (or step): the worker threads' CPU and
//! run-queue shares (from the engine), the process's rusage and the cgroup's CPU-quota
//! throttling (read here, before and after). The figures only; health.rs judges them.

use std::time::Duration;

use herd_engine::ThreadUsage;

use crate::cgroup_cpu::ThrottleProbe;
use crate::process_cpu::ProcessCpu;

/// Readings taken just before a run starts.
#[derive(Debug)]
pub(crate) struct UsageProbe {
    process: Option<ProcessCpu>,
    throttle: Option<ThrottleProbe>,
}

/// The client's usage over a run. Shares are of the worker threads' wall time, 0 to 1.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
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
}

impl UsageProbe {
    pub(crate) fn start() -> UsageProbe {
        UsageProbe { process: ProcessCpu::now(), throttle: ThrottleProbe::start() }
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
        }
    }
}
