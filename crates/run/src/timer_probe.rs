//! How late this machine's timers wake a thread, measured just before an open-loop run: a
//! few dozen sleeps of half a millisecond, each timed. An open loop sends each request when a
//! timer fires; on a machine whose timers wake late (a virtual machine's timer slack, deep CPU
//! idle states, a busy host) requests leave late however idle herd's own threads are. The
//! health verdict then blames the timers, with these figures, instead of telling the user to
//! give herd more cores.

use std::time::{Duration, Instant};

/// The sleeps' lateness past the time asked, µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct TimerLateness {
    pub(crate) p50_us: u64,
    pub(crate) p99_us: u64,
}

/// Sleeps taken: enough for a p99 that means something, short enough (about 25 ms on an
/// ordinary machine) to be taken before every open-loop run.
const SLEEPS: usize = 40;
const ASKED: Duration = Duration::from_micros(500);

/// Measures the lateness now, on the calling thread.
pub(crate) fn probe() -> TimerLateness {
    let mut late: Vec<u64> = (0..SLEEPS)
        .map(|_| {
            let t = Instant::now();
            std::thread::sleep(ASKED);
            let over = t.elapsed().saturating_sub(ASKED);
            u64::try_from(over.as_micros()).unwrap_or(u64::MAX)
        })
        .collect();
    late.sort_unstable();
    TimerLateness { p50_us: quantile(&late, 0.5), p99_us: quantile(&late, 0.99) }
}

/// The `q` quantile of sorted `v` (nearest rank); 0 for an empty list.
fn quantile(v: &[u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!((quantile(&v, 0.5), quantile(&v, 0.99)), (50, 99));
        assert_eq!(quantile(&[7], 0.99), 7);
        assert_eq!(quantile(&[], 0.5), 0);
    }

    #[test]
    fn a_probe_is_short_and_ordered() {
        let t = Instant::now();
        let p = probe();
        assert!(p.p50_us <= p.p99_us, "{p:?}");
        // 40 × 0.5 ms asked: well under a second even on a loaded machine.
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
}
