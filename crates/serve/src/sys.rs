//! Safe wrappers over the few Linux system calls std does not expose: `send` with flags,
//! `sendfile`, `openat2` and the `TCP_DEFER_ACCEPT` socket option. Each retries on EINTR and returns `io::Result`; none keeps state or
//! knows about HTTP. All the crate's `unsafe` is here.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// `send(2)` with `MSG_NOSIGNAL`, so a vanished peer is an `EPIPE` error rather than a signal,
/// and with `MSG_MORE` when `more` is set, so a head followed by a `sendfile` body leaves in the
/// same segment instead of a tiny one of its own.
pub(crate) fn send(socket: BorrowedFd<'_>, buf: &[u8], more: bool) -> io::Result<usize> {
    let flags = libc::MSG_NOSIGNAL | if more { libc::MSG_MORE } else { 0 };
    loop {
        // SAFETY: `buf` is valid for reads of `buf.len()` bytes; the descriptor is open for the
        // lifetime of the borrow.
        let n = unsafe { libc::send(socket.as_raw_fd(), buf.as_ptr().cast(), buf.len(), flags) };
        if let Ok(n) = usize::try_from(n) {
            return Ok(n);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// `sendfile(2)` of up to `count` bytes of `file` from `*offset` to `socket`, advancing
/// `*offset`. Returns 0 when the file ends before `count` bytes (it was truncated while being
/// served).
pub(crate) fn sendfile(
    socket: BorrowedFd<'_>,
    file: BorrowedFd<'_>,
    offset: &mut u64,
    count: usize,
) -> io::Result<usize> {
    let mut off = libc::off_t::try_from(*offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file offset too large"))?;
    loop {
        // SAFETY: both descriptors are open for the lifetime of the borrows; `off` is a valid,
        // exclusively borrowed off_t the kernel updates.
        let n = unsafe { libc::sendfile(socket.as_raw_fd(), file.as_raw_fd(), &mut off, count) };
        if let Ok(n) = usize::try_from(n) {
            *offset = u64::try_from(off).unwrap_or(*offset);
            return Ok(n);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// `struct open_how` of `linux/openat2.h`. libc's version is `#[non_exhaustive]`, so it cannot
/// be built with a literal.
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// `openat2(2)`: opens `path` relative to `dir` with `flags` (`O_*`) and `resolve`
/// (`RESOLVE_*`). Available since Linux 5.6; older kernels answer `ENOSYS`.
pub(crate) fn openat2(
    dir: BorrowedFd<'_>,
    path: &CStr,
    flags: libc::c_int,
    resolve: u64,
) -> io::Result<OwnedFd> {
    let flags = u64::try_from(flags)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "negative open flags"))?;
    let how = OpenHow { flags, mode: 0, resolve };
    loop {
        // SAFETY: `path` is NUL-terminated, `how` is a valid open_how of the size passed, and
        // `dir` is open for the lifetime of the borrow.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                path.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if let Ok(fd) = RawFd::try_from(fd) {
            if fd >= 0 {
                // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
                return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Sets `TCP_DEFER_ACCEPT` on a listening socket: a connection is queued for `accept` only once
/// its first data has arrived (or after about `seconds`, when the kernel gives up waiting).
pub(crate) fn set_defer_accept(socket: BorrowedFd<'_>, seconds: u32) -> io::Result<()> {
    let value = libc::c_int::try_from(seconds).unwrap_or(libc::c_int::MAX);
    // SAFETY: `value` is a valid c_int for the duration of the call and its size is passed; the
    // descriptor is open for the lifetime of the borrow.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            std::ptr::from_ref(&value).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
