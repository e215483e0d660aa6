//! A health verdict for the clients that do not judge themselves (ab, wrk, h2load), from the one
//! figure the lab has for every program it runs: its CPU time over the run (`wait4`'s
//! rusage). A single-threaded ab at 100 % of a CPU measured itself, not the server; the table
//! must say so as it does for herd's own client.
//!
//! The rule is herd's closed-loop rule (docs/client-health.md): the share of the CPU the
//! client could use that it did use; suspect from 0.85, client-bound from 0.95. What the
//! client could use is one CPU per thread, at most the CPUs it was pinned to. Time spent
//! waiting for a CPU is not seen here, so this is the lower bound of herd's "demand".

use std::time::Duration;

use herd_stats::{ClientJudgement, ClientVerdict, CpuFacts};

use super::Tool;

/// What one external client run cost, as the lab measured it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientCpu {
    /// User + system seconds of the client and the children it reaped.
    pub cpu_seconds: f64,
    /// From its start to its end.
    pub wall: Duration,
    /// Threads it ran (ab: 1).
    pub threads: u32,
    /// CPUs it was allowed on.
    pub cpus: usize,
}

impl ClientCpu {
    /// CPUs the client could have used at most: a CPU per thread, within its CPU set.
    pub fn capacity(&self) -> usize {
        (self.threads as usize).clamp(1, self.cpus.max(1))
    }

    /// Share of that capacity it used, 0 to 1 (a little over 1 from rounding is clamped).
    pub fn busy_share(&self) -> f64 {
        let wall = self.wall.as_secs_f64();
        if wall <= 0.0 {
            return 0.0;
        }
        (self.cpu_seconds / (wall * self.capacity() as f64)).clamp(0.0, 1.0)
    }

    /// The figures, stored with the run as its client health record.
    pub fn facts(&self) -> CpuFacts {
        CpuFacts {
            judged_by: "herd lab, from the client's CPU time (wait4 rusage)".to_owned(),
            cpu_seconds: self.cpu_seconds,
            wall_seconds: self.wall.as_secs_f64(),
            threads: self.threads,
            cpus_allowed: self.cpus,
            busy_share: self.busy_share(),
        }
    }
}

/// The verdict on an ab or wrk run (herd judges itself: None for it).
pub fn judge(tool: Tool, cpu: &ClientCpu) -> Option<ClientJudgement> {
    if tool == Tool::Herd {
        return None;
    }
    let share = cpu.busy_share();
    let verdict = ClientVerdict::of_busy_share(share);
    if verdict == ClientVerdict::Ok {
        return Some(ClientJudgement { verdict, reason: None });
    }
    let used = if cpu.capacity() == 1 {
        format!("{} was on its CPU {:.0} % of the run", tool.name(), share * 100.0)
    } else {
        format!(
            "{}'s {} threads used {:.2} of the {} CPUs they could use ({:.0} %)",
            tool.name(),
            cpu.threads,
            cpu.cpu_seconds / cpu.wall.as_secs_f64(),
            cpu.capacity(),
            share * 100.0
        )
    };
    let todo = match tool {
        Tool::Ab => "ab has one thread: compare with herd's client on more threads",
        _ => "give it more threads and CPUs, or compare with herd's client",
    };
    Some(ClientJudgement {
        verdict,
        reason: Some(format!("{used}; the server may be faster than this shows — {todo}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu_seconds: f64, wall_ms: u64, threads: u32, cpus: usize) -> ClientCpu {
        ClientCpu { cpu_seconds, wall: Duration::from_millis(wall_ms), threads, cpus }
    }

    #[test]
    fn herd_judges_itself() {
        assert_eq!(judge(Tool::Herd, &cpu(1.0, 1000, 1, 1)), None);
    }

    #[test]
    fn thresholds_for_one_thread() {
        let v = |s: f64| judge(Tool::Ab, &cpu(s, 1000, 1, 2)).unwrap().verdict.as_str();
        assert_eq!(v(0.5), "ok");
        assert_eq!(v(0.849), "ok");
        assert_eq!(v(0.85), "suspect");
        assert_eq!(v(0.949), "suspect");
        assert_eq!(v(0.95), "client-bound");
        assert_eq!(v(1.02), "client-bound");
    }

    #[test]
    fn capacity_is_threads_within_the_cpu_set() {
        // wrk, 2 threads on 2 CPUs: 1.8 CPU-seconds a second is 90 %.
        assert_eq!(judge(Tool::Wrk, &cpu(1.8, 1000, 2, 2)).unwrap().verdict.as_str(), "suspect");
        // The same 2 threads pinned to one CPU could use only that one: 0.97 is bound.
        assert_eq!(
            judge(Tool::Wrk, &cpu(0.97, 1000, 2, 1)).unwrap().verdict.as_str(),
            "client-bound"
        );
        // 4 threads on 2 CPUs at 1.2 CPU: 60 %.
        assert_eq!(judge(Tool::Wrk, &cpu(1.2, 1000, 4, 2)).unwrap().verdict.as_str(), "ok");
    }

    #[test]
    fn the_reason_names_the_figures_and_what_to_do() {
        let v = judge(Tool::Ab, &cpu(0.97, 1000, 1, 2)).unwrap();
        let r = v.reason.unwrap();
        assert!(r.starts_with("ab was on its CPU 97 % of the run;"), "{r}");
        assert!(r.contains("herd's client on more threads"), "{r}");
        let v = judge(Tool::Wrk, &cpu(1.9, 1000, 2, 2)).unwrap();
        assert!(v.reason.unwrap().starts_with("wrk's 2 threads used 1.90 of the 2 CPUs"));
        assert_eq!(judge(Tool::Ab, &cpu(0.1, 1000, 1, 1)).unwrap().reason, None);
    }

    #[test]
    fn a_zero_length_run_is_not_judged_busy() {
        assert_eq!(judge(Tool::Ab, &cpu(0.0, 0, 1, 1)).unwrap().verdict.as_str(), "ok");
        assert_eq!(cpu(0.5, 1000, 1, 1).facts().busy_share, 0.5);
    }
}
