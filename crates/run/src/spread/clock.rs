//! How far an agent's wall clock is from the coordinator's: NTP's four timestamps, a few
//! exchanges, the one with the shortest round trip kept (its offset is the least disturbed
//! by a queue on the way). The start instant comes on the coordinator's clock; each agent
//! turns it into a moment of its own monotonic clock with this offset.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Exchanges an agent makes before it says it is armed.
pub(crate) const EXCHANGES: usize = 8;

/// One exchange: `t1` the agent sent, `t2` the coordinator received, `t3` it answered, `t4`
/// the agent received (ns since the Unix epoch, each on its sender's own clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Exchange {
    pub(crate) t1: i64,
    pub(crate) t2: i64,
    pub(crate) t3: i64,
    pub(crate) t4: i64,
}

/// The estimate: the coordinator's clock minus the agent's, and the round trip it came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Offset {
    pub(crate) offset_ns: i64,
    pub(crate) rtt_ns: i64,
}

impl Exchange {
    fn estimate(&self) -> Offset {
        let Exchange { t1, t2, t3, t4 } = *self;
        // The time on the wire, less the coordinator's own turn-around; never negative (a
        // clock stepped mid-exchange).
        let rtt = (t4.saturating_sub(t1)).saturating_sub(t3.saturating_sub(t2)).max(0);
        let offset = (t2.saturating_sub(t1) / 2).saturating_add(t3.saturating_sub(t4) / 2);
        Offset { offset_ns: offset, rtt_ns: rtt }
    }
}

/// The estimate of the exchange with the shortest round trip; None without any.
pub(crate) fn best(exchanges: &[Exchange]) -> Option<Offset> {
    exchanges.iter().map(Exchange::estimate).min_by_key(|o| o.rtt_ns)
}

/// Now on the wall clock, in ns since the Unix epoch (0 before it: a clock that broken
/// is reported by the offset it gives).
pub(crate) fn wall_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The moment of this process's monotonic clock when the coordinator's wall clock reads
/// `at` (ns since the epoch), given `offset` (coordinator − agent).
pub(crate) fn local_instant(at: i64, offset: Offset) -> Instant {
    let now = Instant::now();
    let ahead = at.saturating_sub(offset.offset_ns).saturating_sub(wall_ns());
    let span = Duration::from_nanos(ahead.unsigned_abs());
    if ahead >= 0 {
        now + span
    } else {
        now.checked_sub(span).unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_of_a_symmetric_path_is_exact() {
        // The coordinator's clock is 5 ms ahead; 100 µs each way; 20 µs to answer.
        let e = Exchange { t1: 1_000_000, t2: 6_100_000, t3: 6_120_000, t4: 1_220_000 };
        assert_eq!(best(&[e]), Some(Offset { offset_ns: 5_000_000, rtt_ns: 200_000 }));
    }

    #[test]
    fn the_shortest_round_trip_wins() {
        // A queued exchange (asymmetric: 3 ms out, 100 µs back) gives a wrong offset; the
        // quick one gives the right one.
        let slow = Exchange { t1: 0, t2: 3_000_000, t3: 3_001_000, t4: 3_101_000 };
        let quick =
            Exchange { t1: 10_000_000, t2: 10_049_000, t3: 10_050_000, t4: 10_101_000 - 1_000 };
        let o = best(&[slow, quick]).unwrap();
        assert_eq!(o.rtt_ns, 99_000);
        assert!(o.offset_ns.abs() <= 1_000, "{o:?}");
        assert_eq!(best(&[]), None);
    }

    #[test]
    fn a_stepped_clock_gives_no_negative_round_trip() {
        let e = Exchange { t1: 10, t2: 5, t3: 100, t4: 12 };
        assert_eq!(best(&[e]).unwrap().rtt_ns, 0);
    }

    #[test]
    fn the_start_lands_on_the_local_clock() {
        let offset = Offset { offset_ns: -2_000_000_000, rtt_ns: 0 };
        // The coordinator reads 1 s after our now minus 2 s: that is 1 s from now here.
        // Judged against the instant taken just before reading the wall clock, not against
        // a later `now`: a busy machine may hold this thread between the lines, and the
        // answer must not move with it.
        let before = Instant::now();
        let at = wall_ns() - 2_000_000_000 + 1_000_000_000;
        let when = local_instant(at, offset);
        let from_before = when.saturating_duration_since(before);
        let off = from_before.abs_diff(Duration::from_secs(1));
        assert!(off < Duration::from_millis(100), "{from_before:?} after, not 1 s");
    }
}
