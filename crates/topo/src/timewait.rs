//! Counting the sockets in TIME_WAIT of this network namespace, from /proc/net/tcp and
//! tcp6, and the bound the lab keeps them under: herd's lab reads its own machine's with it
//! (crates/lab/src/timewait.rs says why TIME_WAIT matters between runs), and a lab host's
//! helper (`herd host`) reads the server host's, where a server that closes first leaves
//! them.

/// Sockets in TIME_WAIT in this network namespace, None when it cannot be read. Counts
/// rows only: the drain loop asks four times a second while tens of thousands expire.
pub fn count() -> Option<u64> {
    Some(tables()?.iter().map(|t| time_wait_rows(t).count() as u64).sum())
}

/// Sockets in TIME_WAIT in one /proc/net/tcp table's text.
pub fn count_in(table: &str) -> u64 {
    time_wait_rows(table).count() as u64
}

pub fn tables() -> Option<Vec<String>> {
    let v4 = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let v6 = std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    Some(vec![v4, v6])
}

/// (local, remote) address columns of the rows of a /proc/net/tcp table whose state (4th
/// column) is 06, TIME_WAIT.
pub fn time_wait_rows(table: &str) -> impl Iterator<Item = (&str, &str)> {
    table.lines().skip(1).filter_map(|line| {
        let mut cols = line.split_whitespace().skip(1);
        let (local, remote, state) = (cols.next()?, cols.next()?, cols.next()?);
        (state == "06").then_some((local, remote))
    })
}

/// The default bound: half of `net.ipv4.tcp_max_tw_buckets`, so that a run never pushes the
/// table to where the kernel starts dropping TIME_WAIT sockets (65,536 when unreadable).
pub fn default_bound() -> u64 {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_max_tw_buckets")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map_or(65_536, |max| (max / 2).max(1))
}
