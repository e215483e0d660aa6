//! Whether this machine lets herd's engine drive its sockets through io_uring, and if not,
//! why, in one line (`--io auto` takes io_uring only where this probe succeeds, else epoll,
//! saying why). The probe makes one small ring the way the completion backend does (one
//! issuer per ring, completions run when the loop asks for them, kernel 6.1 on), asks the
//! kernel which operations it supports, and then really receives: a multishot receive into
//! a provided-buffer ring over a socket pair, cancelled and ended as the backend ends its
//! own. What it reports is what it did, not what the kernel's version promises. `herd
//! doctor` prints it and every lab result records it (`io_uring` in the disclosure).
//!
//! What refuses io_uring, and how it shows: a kernel without it (`ENOSYS`); the
//! `kernel.io_uring_disabled` sysctl (2: for everyone, 1: for all but root and
//! `kernel.io_uring_group`), `EPERM`; a seccomp filter, `EPERM` or `ENOSYS` (Docker's default
//! profile refuses io_uring since 2023); a kernel older than 6.1 takes no deferred task
//! running, `EINVAL`.

use std::fmt;

use super::BufRing;

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uring {
    /// A ring as the completion backend makes it works here; with what else it has.
    Available {
        /// Operations and features beyond the backend's needs that change how it runs:
        /// `send bundles` (6.10), `zero-copy send`.
        extras: Vec<&'static str>,
    },
    /// Not usable, and why (for the user: what to change, where that is possible).
    Refused(String),
}

impl fmt::Display for Uring {
    /// `available (single issuer, deferred task running, multishot receive, buffer rings;
    /// send bundles)` or `refused: …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Uring::Available { extras } => {
                f.write_str(
                    "available (single issuer, deferred task running, multishot receive, \
                     buffer rings",
                )?;
                if !extras.is_empty() {
                    write!(f, "; {}", extras.join(", "))?;
                }
                f.write_str(")")
            }
            Uring::Refused(why) => write!(f, "refused: {why}"),
        }
    }
}

/// The operations the completion backend submits: without any of them it does not run.
const NEEDED: [(u8, &str); 5] = [
    (io_uring::opcode::Recv::CODE, "recv"),
    (io_uring::opcode::Send::CODE, "send"),
    (io_uring::opcode::Connect::CODE, "connect"),
    (io_uring::opcode::Close::CODE, "close"),
    (io_uring::opcode::Timeout::CODE, "timeout"),
];

/// Probes this machine (about a millisecond: one ring of 8 entries made, one receive, the
/// ring dropped).
pub fn probe() -> Uring {
    let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .and_then(|v| v.trim().parse::<u8>().ok());
    // Single issuer and deferred task running: the backend's ring, one per worker thread.
    let built: std::io::Result<io_uring::IoUring> =
        io_uring::IoUring::builder().setup_single_issuer().setup_defer_taskrun().build(8);
    let ring = match built {
        Ok(ring) => ring,
        Err(e) => return Uring::Refused(refusal(e.raw_os_error(), disabled)),
    };
    let mut supported = io_uring::Probe::new();
    if let Err(e) = ring.submitter().register_probe(&mut supported) {
        return Uring::Refused(format!("the kernel would not say which operations it has: {e}"));
    }
    let missing: Vec<&str> =
        NEEDED.iter().filter(|(code, _)| !supported.is_supported(*code)).map(|(_, n)| *n).collect();
    if !missing.is_empty() {
        return Uring::Refused(format!("the kernel's io_uring lacks {}", missing.join(", ")));
    }
    let mut ring = ring;
    if let Err(why) = receive_once(&mut ring) {
        return Uring::Refused(why);
    }
    let mut extras = Vec::new();
    if ring.params().is_feature_recvsend_bundle() {
        extras.push("send bundles");
    }
    if supported.is_supported(io_uring::opcode::SendZc::CODE) {
        extras.push("zero-copy send");
    }
    Uring::Available { extras }
}

/// A multishot receive into a ring of two buffers: four bytes sent over a socket pair come
/// back in one buffer, and the receive, cancelled, ends. Every step bounded by a second.
fn receive_once(ring: &mut io_uring::IoUring) -> Result<(), String> {
    use std::io::Write;
    use std::os::fd::AsRawFd;

    use io_uring::{cqueue, opcode, types};

    const RECV: u64 = 1;
    const CANCEL: u64 = 2;
    let mut bufs = BufRing::new(2, 64, 0).map_err(|e| format!("no memory for buffers: {e}"))?;
    // SAFETY: `bufs` stays alive until it is unregistered below, or, on an early return while
    // registered, its drop leaks the buffers rather than free them under the kernel.
    if let Err(e) = unsafe { bufs.register(&ring.submitter()) } {
        return Err(format!("the kernel has no provided-buffer rings (5.19 on): {e}"));
    }
    let (mut peer, ours) = std::os::unix::net::UnixStream::pair()
        .map_err(|e| format!("no socket pair for the probe: {e}"))?;
    let recv = opcode::RecvMulti::new(types::Fd(ours.as_raw_fd()), 0).build().user_data(RECV);
    // SAFETY: the entry references no user memory: the socket by its fd (the kernel takes its
    // own reference to the file at submission, so `ours` closing early, on an error return,
    // frees nothing the receive uses) and the registered buffer group (leaked, not freed, if
    // still registered on an error return).
    unsafe { ring.submission().push(&recv) }.map_err(|_| "a full submission queue".to_owned())?;
    peer.write_all(b"herd").map_err(|e| format!("the probe's socket pair: {e}"))?;
    let turn = |ring: &mut io_uring::IoUring| -> Result<Vec<cqueue::Entry>, String> {
        let ts = types::Timespec::new().sec(1);
        let args = types::SubmitArgs::new().timespec(&ts);
        match ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => {}
            Err(e) => return Err(format!("io_uring_enter failed: {e}")),
        }
        Ok(ring.completion().collect())
    };
    let got = turn(ring)?;
    let first = got.iter().find(|c| c.user_data() == RECV);
    let received = first.and_then(|c| {
        let bid = cqueue::buffer_select(c.flags())?;
        let n = usize::try_from(c.result()).ok()?;
        Some((bid, bufs.buffer(bid, n)? == b"herd", cqueue::more(c.flags())))
    });
    let (bid, armed) = match received {
        Some((bid, true, more)) => (bid, more),
        _ => {
            let what = match first.map(|c| c.result()) {
                None => "no completion within a second".to_owned(),
                Some(r) if r < 0 => std::io::Error::from_raw_os_error(-r).to_string(),
                Some(r) => format!("{r} bytes, not the 4 sent, or in no buffer of the ring"),
            };
            return Err(format!("a multishot receive into a buffer ring failed here: {what}"));
        }
    };
    bufs.recycle(bid);
    if armed {
        let cancel = opcode::AsyncCancel::new(RECV).build().user_data(CANCEL);
        // SAFETY: a cancel entry references no memory.
        unsafe { ring.submission().push(&cancel) }
            .map_err(|_| "a full submission queue".to_owned())?;
        let mut ended = false;
        for _ in 0..3 {
            ended |= turn(ring)?.iter().any(|c| c.user_data() == RECV && !cqueue::more(c.flags()));
            if ended {
                break;
            }
        }
        if !ended {
            return Err("a cancelled multishot receive did not end".to_owned());
        }
    }
    bufs.unregister(&ring.submitter()).map_err(|e| format!("unregistering buffers: {e}"))
}

/// Why making the ring failed, from its error number and `kernel.io_uring_disabled`.
fn refusal(errno: Option<i32>, disabled: Option<u8>) -> String {
    match (errno, disabled) {
        (Some(libc::EPERM), Some(2)) => {
            "kernel.io_uring_disabled = 2: io_uring is off for every process".to_owned()
        }
        (Some(libc::EPERM), Some(1)) => "kernel.io_uring_disabled = 1: io_uring is for root and \
                                         kernel.io_uring_group only"
            .to_owned(),
        (Some(libc::EPERM), _) => "not permitted: a seccomp filter refuses io_uring_setup \
                                   (Docker's default profile does)"
            .to_owned(),
        (Some(libc::ENOSYS), _) => "no io_uring_setup: a kernel without io_uring, or a seccomp \
                                    filter that hides it (Docker's default profile does)"
            .to_owned(),
        (Some(libc::EINVAL), _) => "the kernel takes no single-issuer ring with deferred task \
                                    running: it is older than 6.1"
            .to_owned(),
        (Some(libc::ENOMEM), _) => "no memory for a ring: RLIMIT_MEMLOCK is too low for this \
                                    kernel's io_uring (before 5.12 rings count against it)"
            .to_owned(),
        (Some(n), _) => format!("io_uring_setup failed: {}", std::io::Error::from_raw_os_error(n)),
        (None, _) => "io_uring_setup failed".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_says_its_cause() {
        let says = |errno, disabled| refusal(Some(errno), disabled);
        assert!(says(libc::EPERM, Some(2)).starts_with("kernel.io_uring_disabled = 2"));
        assert!(says(libc::EPERM, Some(1)).contains("root and kernel.io_uring_group"));
        assert!(says(libc::EPERM, Some(0)).contains("seccomp filter"));
        assert!(says(libc::ENOSYS, None).contains("a kernel without io_uring"));
        assert!(says(libc::EINVAL, Some(0)).contains("older than 6.1"));
        assert!(says(libc::EBADF, Some(0)).starts_with("io_uring_setup failed: "));
    }

    /// What the probe finds follows from the sysctl, who we are and the kernel.
    #[test]
    fn the_probe_agrees_with_the_sysctl_and_the_kernel() {
        let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|_| "0".into());
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut v = release.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok());
        let new_enough = (v.next().unwrap_or(0), v.next().unwrap_or(0)) >= (6u32, 1u32);
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let found = probe();
        let refused_with = |w: &str| matches!(&found, Uring::Refused(why) if why.contains(w));
        match (disabled.as_str(), new_enough) {
            ("2", _) => assert!(refused_with("= 2"), "{found}"),
            ("1", _) if !root => assert!(refused_with("= 1"), "{found}"),
            (_, true) => assert!(matches!(found, Uring::Available { .. }), "{found}"),
            (_, false) => assert!(refused_with("older than 6.1"), "{found}"),
        }
    }
}
