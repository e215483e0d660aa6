//! Raising the open-file limit: one descriptor per connection, and a soft limit of 1024
//! is common, so the engine lifts the soft limit to the hard one at start.

/// Raises RLIMIT_NOFILE's soft limit to its hard limit; returns the new soft limit.
pub fn raise_nofile_limit() -> std::io::Result<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we own; no other memory is touched.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
        // SAFETY: setrlimit reads the struct we own.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        lim = raised;
    }
    Ok(lim.rlim_cur)
}

#[cfg(test)]
mod tests {
    #[test]
    fn raises_to_at_least_the_current_limit() {
        let n = super::raise_nofile_limit().unwrap();
        assert!(n >= 64);
    }
}
