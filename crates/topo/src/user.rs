//! A user's ids from the system's user database (`getpwnam_r`: /etc/passwd, and LDAP, sssd
//! or systemd-homed users where NSS is set up for them), for the directories a server writes
//! after dropping to its user, and for preflight's "does www-data exist"; and the name of the
//! user herd runs as (`getpwuid_r`), which every server that does not switch users runs as
//! too (`ServerSpec::runs_as`: a Samba share's guests without root).

use std::ffi::{CStr, CString};

/// The uid and gid of user `name`; None when there is no such user (or the database cannot
/// be read).
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    let name = CString::new(name).ok()?;
    lookup(&name, initial_buffer_size())
}

/// Asks `getpwnam_r` with a buffer of `size` bytes for the entry's strings, doubled while it
/// says ERANGE.
fn lookup(name: &CStr, size: usize) -> Option<(u32, u32)> {
    // SAFETY: `name` is NUL-terminated; the other pointers are `entry`'s, valid for the call.
    entry(
        size,
        |pwd, buf, len, found| unsafe { libc::getpwnam_r(name.as_ptr(), pwd, buf, len, found) },
        |pwd| Some((pwd.pw_uid, pwd.pw_gid)),
    )
}

/// The name of the user herd runs as; None when it has no entry in the user database, or a
/// name no config could carry (not letters, digits, `_`, `.`, `-`, or starting with `-`).
pub fn current_user() -> Option<String> {
    // SAFETY: geteuid has no preconditions; the other pointers are `entry`'s, valid for the
    // call.
    let name = entry(
        initial_buffer_size(),
        |pwd, buf, len, found| unsafe { libc::getpwuid_r(libc::geteuid(), pwd, buf, len, found) },
        |pwd| {
            if pwd.pw_name.is_null() {
                return None;
            }
            // SAFETY: pw_name is non-null and NUL-terminated, in the buffer that outlives this.
            let name = unsafe { CStr::from_ptr(pwd.pw_name) };
            name.to_str().ok().map(str::to_owned)
        },
    )?;
    let plain = !name.is_empty()
        && !name.starts_with('-')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    plain.then_some(name)
}

/// One `get*_r` call (`ask`, given the entry to fill, the buffer and its length, and where to
/// say it was found) with a buffer of `size` bytes, doubled while it says ERANGE; `read` takes
/// what it needs from the entry while the buffer its strings point into is alive.
fn entry<T>(
    mut size: usize,
    ask: impl Fn(*mut libc::passwd, *mut libc::c_char, usize, *mut *mut libc::passwd) -> libc::c_int,
    read: impl Fn(&libc::passwd) -> Option<T>,
) -> Option<T> {
    loop {
        let mut buf = vec![0 as libc::c_char; size];
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids); the call fills it.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = ask(&mut pwd, buf.as_mut_ptr(), buf.len(), &mut found);
        match rc {
            0 if found.is_null() => return None,
            0 => return read(&pwd),
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
    fn the_current_user_is_the_one_with_our_uid() {
        let name = current_user().expect("this test's user has a name");
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        assert_eq!(user_ids(&name).map(|(u, _)| u), Some(uid), "{name}");
    }

    #[test]
    fn a_buffer_too_small_for_the_entry_is_grown() {
        let root = CString::new("root").unwrap();
        assert_eq!(lookup(&root, 1), Some((0, 0)));
    }
}
