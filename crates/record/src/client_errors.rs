//! Failures that are the client's own doing, told apart by the OS error behind them: no free
//! local port (EADDRNOTAVAIL, EADDRINUSE: ephemeral ports used up, often by TIME_WAIT when
//! every request opens a connection) and no free file descriptor (EMFILE: herd's
//! RLIMIT_NOFILE; ENFILE: the system's). Such a request never reached the server, so counting
//! it against the server would be wrong; the health verdict names them instead.

use std::ops::AddAssign;

/// Counts of client-side failures by OS error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClientErrors {
    pub addr_not_avail: u64,
    pub addr_in_use: u64,
    pub process_fds: u64,
    pub system_fds: u64,
}

impl ClientErrors {
    /// Counts a failure's OS error if it is one of ours; other errors are the server's or the
    /// network's and are ignored here.
    pub fn add(&mut self, os_error: Option<i32>) {
        match os_error {
            Some(libc::EADDRNOTAVAIL) => self.addr_not_avail += 1,
            Some(libc::EADDRINUSE) => self.addr_in_use += 1,
            Some(libc::EMFILE) => self.process_fds += 1,
            Some(libc::ENFILE) => self.system_fds += 1,
            _ => {}
        }
    }

    /// Failures for want of a local port.
    pub fn ports(&self) -> u64 {
        self.addr_not_avail + self.addr_in_use
    }

    /// Failures for want of a file descriptor.
    pub fn fds(&self) -> u64 {
        self.process_fds + self.system_fds
    }
}

impl AddAssign<&ClientErrors> for ClientErrors {
    fn add_assign(&mut self, o: &ClientErrors) {
        self.addr_not_avail += o.addr_not_avail;
        self.addr_in_use += o.addr_in_use;
        self.process_fds += o.process_fds;
        self.system_fds += o.system_fds;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_by_errno() {
        let mut e = ClientErrors::default();
        for errno in [
            Some(libc::EADDRNOTAVAIL),
            Some(libc::EADDRINUSE),
            Some(libc::EADDRNOTAVAIL),
            Some(libc::EMFILE),
            Some(libc::ENFILE),
            Some(libc::ECONNREFUSED),
            None,
        ] {
            e.add(errno);
        }
        assert_eq!((e.ports(), e.fds()), (3, 2));
        let mut total = e;
        total += &e;
        assert_eq!(total.addr_not_avail, 4);
        assert_eq!((total.ports(), total.fds()), (6, 4));
    }
}
