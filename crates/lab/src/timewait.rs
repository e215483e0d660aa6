//! TIME_WAIT between cells. A cell that opened a connection per request leaves thousands of
//! sockets in TIME_WAIT for 60 s; the next cell would run with a crowded port range and
//! connection table the previous one made. The runner waits until fewer than a bound remain
//! (TFB's rule), and records the count it found and how long it waited.

use std::time::{Duration, Instant};

/// Sockets in TIME_WAIT in this network namespace (IPv4 and IPv6).
pub fn count() -> u64 {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| count_in(&t))
        .sum()
}

/// Waits until fewer than `below` sockets are in TIME_WAIT, at most `limit`, checking
/// `cancelled` between looks. Returns the count at the start and the time waited.
pub fn drain(below: u64, limit: Duration, cancelled: &dyn Fn() -> bool) -> (u64, Duration) {
    let started = Instant::now();
    let first = count();
    let mut now = first;
    while now >= below && started.elapsed() < limit && !cancelled() {
        std::thread::sleep(Duration::from_millis(250));
        now = count();
    }
    (first, started.elapsed())
}

/// Lines of a /proc/net/tcp table whose state (4th column) is 06, TIME_WAIT.
fn count_in(table: &str) -> u64 {
    table.lines().skip(1).filter(|l| l.split_whitespace().nth(3) == Some("06")).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_time_wait_rows() {
        let t = "  sl  local_address rem_address   st tx_queue\n   0: 0100007F:1F90 00000000:0000 0A 0\n   1: 0100007F:1F90 0100007F:9C40 06 0\n   2: 0100007F:1F90 0100007F:9C41 06 0\n";
        assert_eq!(count_in(t), 2);
    }
}
