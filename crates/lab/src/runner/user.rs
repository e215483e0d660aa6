//! A user's ids from the system's user database (`getpwnam_r`: /etc/passwd, and LDAP, sssd
//! or systemd-homed users where NSS is set up for them), for the directories a server writes
//! after dropping to its user, and for preflight's "does www-data exist".

use std::ffi::{CStr, CString};

/// The uid and gid of user `name`; None when there is no such user (or the database cannot
/// be read).
pub(super) fn user_ids(name: &str) -> Option<(u32, u32)> {
    let name = CString::new(name).ok()?;
    lookup(&name, initial_buffer_size())
}

/// Asks `getpwnam_r` with a buffer of `size` bytes for the entry's strings, doubled while it
/// says ERANGE.
fn lookup(name: &CStr, mut size: usize) -> Option<(u32, u32)> {
    loop {
        let mut buf = vec![0 as libc::c_char; size];
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids); getpwnam_r fills it.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `name` is NUL-terminated; `pwd`, `buf` (of `buf.len()` bytes) and `found`
        // are valid for writes and outlive the call. The strings it points `pwd` at live in
        // `buf`; only the ids, copied out below, are read.
        let rc = unsafe {
            libc::getpwnam_r(name.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found)
        };
        match rc {
            0 if found.is_null() => return None,
            0 => return Some((pwd.pw_uid, pwd.pw_gid)),
            libc::ERANGE if size < MAX_BUFFER => size = size.saturating_mul(2),
            _ => return None,
        }
    }
}

/// The buffer the system suggests, or 1 KiB when it suggests none.
fn initial_buffer_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let suggested = unsafe { libc::sysconf(libc::_SC_GETPW_R_SIZE_MAX) };
    usize::try_from(suggested).ok().filter(|&n| n > 0).unwrap_or(1024).min(MAX_BUFFER)
}

/// A user's strings (name, home, shell, gecos) never need more; a bound, so a misbehaving
/// NSS module cannot make the loop grow the buffer forever.
const MAX_BUFFER: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_uid_0_and_a_missing_user_is_none() {
        assert_eq!(user_ids("root"), Some((0, 0)));
        assert_eq!(user_ids("herd-no-such-user-7f3a"), None);
        assert_eq!(user_ids("nul\0inside"), None, "a name with NUL is no user");
        assert_eq!(user_ids(""), None);
    }

    #[test]
    fn a_buffer_too_small_for_the_entry_is_grown() {
        let root = CString::new("root").unwrap();
        assert_eq!(lookup(&root, 1), Some((0, 0)));
    }
}
