//! The whole herd process's CPU time (getrusage RUSAGE_SELF), read before and after a run: the
//! user/system split and the involuntary context switches that the per-thread clocks of the
//! engine do not give. Reported as measured; the health verdict judges the worker threads'
//! own figures instead, because the process total also counts the idle main thread.

use std::time::Duration;

/// CPU used by the process between two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ProcessCpu {
    pub(crate) user: Duration,
    pub(crate) system: Duration,
    /// Times a thread was switched out while it still wanted to run (preempted).
    pub(crate) involuntary_switches: u64,
}

impl ProcessCpu {
    /// The process's usage so far; None if the kernel refuses (it does not for RUSAGE_SELF).
    pub(crate) fn now() -> Option<ProcessCpu> {
        // SAFETY: an all-zero rusage is a valid value of this plain C struct.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage writes only into the struct we own and pass by pointer.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
            return None;
        }
        Some(ProcessCpu {
            user: timeval(ru.ru_utime),
            system: timeval(ru.ru_stime),
            involuntary_switches: u64::try_from(ru.ru_nivcsw).unwrap_or(0),
        })
    }

    /// What was used from `earlier` to `self`.
    pub(crate) fn since(&self, earlier: &ProcessCpu) -> ProcessCpu {
        ProcessCpu {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
        }
    }
}

fn timeval(t: libc::timeval) -> Duration {
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let micros = u64::try_from(t.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spinning_shows_as_user_time() {
        let before = ProcessCpu::now().unwrap();
        let until = std::time::Instant::now() + Duration::from_millis(50);
        let mut x = 0u64;
        while std::time::Instant::now() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let used = ProcessCpu::now().unwrap().since(&before);
        // The machine may be shared: some of the 50 ms may have gone to other processes.
        assert!(used.user + used.system >= Duration::from_millis(10), "{used:?}");
        assert_eq!(before.since(&ProcessCpu::now().unwrap()), ProcessCpu::default());
    }
}
