//! The facts a client's verdict was judged on, as one type wherever they are written or read:
//! herd run's `client` object of herd.run.v1 (its own usage, judged by itself), or, for ab
//! and wrk, the lab's reading of their CPU time. The store keeps them as JSON text; the
//! reports decode that text into these types, never by walking JSON.

use serde::{Deserialize, Serialize};

use crate::ClientVerdict;

/// herd run's client health: the verdict and every figure it was judged on
/// (docs/client-health.md; the `client` object of herd.run.v1).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClientHealth {
    /// None when the run gave nothing to judge: no request got a response.
    pub verdict: Option<ClientVerdict>,
    /// One sentence naming the cause and what to do; None when ok.
    pub reason: Option<String>,
    pub worker_threads: u32,
    /// Mean share of the worker threads' wall time on a CPU (0..1).
    pub cpu_busy_share: f64,
    /// Mean share waiting on a run queue, quota throttling included; None if unknown.
    pub run_queue_wait_share: Option<f64>,
    /// Share of the workers' time herd's cgroup was throttled; None without a quota.
    pub throttled_share: Option<f64>,
    pub throttled_periods: Option<u64>,
    pub quota_periods: Option<u64>,
    /// Send lag (actual send − ready) quantiles: the client's own delay.
    pub send_lag_us: SendLag,
    /// Requests that failed for want of a local port.
    pub port_errors: u64,
    /// Requests that failed for want of a file descriptor.
    pub fd_errors: u64,
    pub process_cpu_s: Option<ProcessCpu>,
    pub involuntary_switches: Option<u64>,
    /// CPU seconds of the server's processes over the run (those holding the target's
    /// listening socket, on this machine); None where herd cannot see them.
    #[serde(default)]
    pub server_cpu_s: Option<f64>,
    /// How many processes that was.
    #[serde(default)]
    pub server_processes: Option<u32>,
    /// How late the machine's timers woke a 0.5 ms sleep, µs (`p50`, `p99`), probed before
    /// an open-loop run; None for a closed loop.
    #[serde(default)]
    pub timer_late_us: Option<TimerLate>,
    /// The machine's steal time over the run, a share of its CPUs' time (/proc/stat).
    #[serde(default)]
    pub steal_share: Option<f64>,
}

/// Timer lateness quantiles, µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TimerLate {
    pub p50: u64,
    pub p99: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SendLag {
    pub p50: Option<u64>,
    pub p99: Option<u64>,
}

/// The process's CPU time over the run, seconds (getrusage).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessCpu {
    pub user: f64,
    pub system: f64,
}

/// The lab's reading of a client that does not judge itself (ab, wrk): its CPU time over the
/// run, from `wait4`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuFacts {
    /// Who judged, and from what: said on the page beside the figures.
    pub judged_by: String,
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    pub threads: u32,
    pub cpus_allowed: usize,
    pub busy_share: f64,
}

/// What a stored client health record holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HealthFacts {
    /// herd run, stepped: each step's, in order.
    Steps(Vec<ClientHealth>),
    /// herd run, one result.
    Run(ClientHealth),
    /// ab or wrk, judged by the lab from their CPU time.
    ByCpu(CpuFacts),
    /// A record of another shape (a store from an early herd), kept as it was written.
    Other(serde_json::Value),
}

impl HealthFacts {
    /// As stored (JSON text).
    pub fn to_json(&self) -> String {
        // Plain data (numbers, strings, options): serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The record stored as `text`, or why it cannot be read.
    pub fn from_json(text: &str) -> Result<HealthFacts, String> {
        serde_json::from_str(text)
            .map_err(|e| format!("the stored client health facts cannot be read: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_reads_back_as_itself() {
        let run = ClientHealth {
            verdict: Some(ClientVerdict::Suspect),
            reason: Some("busy".into()),
            worker_threads: 2,
            cpu_busy_share: 0.9,
            send_lag_us: SendLag { p50: Some(3), p99: Some(40) },
            process_cpu_s: Some(ProcessCpu { user: 0.5, system: 0.25 }),
            ..ClientHealth::default()
        };
        let cpu = CpuFacts {
            judged_by: "herd lab".into(),
            cpu_seconds: 1.0,
            wall_seconds: 2.0,
            threads: 1,
            cpus_allowed: 1,
            busy_share: 0.5,
        };
        for facts in [
            HealthFacts::Run(run.clone()),
            HealthFacts::Steps(vec![run.clone(), ClientHealth::default()]),
            HealthFacts::ByCpu(cpu),
        ] {
            assert_eq!(HealthFacts::from_json(&facts.to_json()), Ok(facts));
        }
        assert_eq!(
            HealthFacts::from_json("{\"cpu\":0.98}"),
            Ok(HealthFacts::Other(serde_json::json!({"cpu": 0.98}))),
            "an early herd's record is kept as written"
        );
        let err = HealthFacts::from_json("{cpu").unwrap_err();
        assert!(err.starts_with("the stored client health facts cannot be read"), "{err}");
    }

    #[test]
    fn herd_runs_client_object_as_written_since_the_verdict_came() {
        // A `client` object as herd run wrote it (herd.run.v1), absent fields and all.
        let text = r#"{"verdict":"ok","reason":null,"worker_threads":1,"cpu_busy_share":0.94,
            "run_queue_wait_share":0.01,"throttled_share":null,"throttled_periods":null,
            "quota_periods":null,"send_lag_us":{"p50":1,"p99":9},"port_errors":0,"fd_errors":0,
            "process_cpu_s":{"user":0.15,"system":0.3},"involuntary_switches":12}"#;
        let HealthFacts::Run(h) = HealthFacts::from_json(text).unwrap() else { panic!() };
        assert_eq!(h.verdict, Some(ClientVerdict::Ok));
        assert_eq!(h.send_lag_us.p99, Some(9));
    }
}
