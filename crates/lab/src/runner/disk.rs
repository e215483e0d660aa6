//! Room for NetBench's share before anything runs: every smbtorture client writes its own
//! copy of the trace's files into the share, in the run directory under TMPDIR (the probe
//! behind docs/netbench.md: 144 clients grew the share to 1.77 GB within 8 s, about 12 MB a
//! client). A run that fills the disk would fail mid-ramp and leave the machine short of
//! space; it is refused up front with what it needs and what there is.

use std::path::Path;

use crate::client::smbtorture;
use crate::matrix::Cell;

/// What one NBENCH client may write into the share: the 12 MB measured, with a margin.
pub(super) const PER_CLIENT: u64 = 16 << 20;
/// Kept free besides: smbd's state and logs, the store, everything else on the disk.
const MARGIN: u64 = 256 << 20;

/// The bytes the largest NetBench step of `cells` needs under the run directory; None when no
/// cell is a NetBench one.
pub(super) fn needed(cells: &[Cell]) -> Option<u64> {
    let most = cells
        .iter()
        .filter(|c| c.workload.is_netbench())
        .filter_map(|c| smbtorture::steps(&c.load).ok())
        .filter_map(|(clients, _)| clients.into_iter().max())
        .max()?;
    Some(u64::from(most).saturating_mul(PER_CLIENT).saturating_add(MARGIN))
}

/// Whether the file system under `dir` has `needed` bytes for this user; the refusal says how
/// much of each, and what to do.
pub(super) fn check(needed: u64, dir: &Path) -> Result<(), String> {
    let free = available(dir).map_err(|err| {
        format!("cannot tell how much space is free under {}: {err}", dir.display())
    })?;
    judge(needed, free, dir)
}

fn judge(needed: u64, free: u64, dir: &Path) -> Result<(), String> {
    if free >= needed {
        return Ok(());
    }
    let mb = |b: u64| b / 1_000_000;
    Err(format!(
        "NetBench's largest step needs about {} MB under {} (each smbtorture client writes \
         about 12 MB into the share), and {} MB are free: free some space, or set TMPDIR to a \
         file system with more",
        mb(needed),
        dir.display(),
        mb(free)
    ))
}

/// Bytes an unprivileged user may still write on the file system holding `dir`.
fn available(dir: &Path) -> std::io::Result<u64> {
    let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: an all-zero statvfs is a valid value for the call to fill.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `st` is a valid, writable statvfs.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_with_what_it_needs_and_what_is_free() {
        let dir = Path::new("/tmp");
        assert_eq!(judge(10, 10, dir), Ok(()));
        let e = judge(2_560_000_000, 1_000_000_000, dir).unwrap_err();
        assert!(e.starts_with("NetBench's largest step needs about 2560 MB under /tmp"), "{e}");
        assert!(e.contains("and 1000 MB are free: free some space, or set TMPDIR"), "{e}");
    }

    #[test]
    fn the_largest_netbench_step_decides() {
        let text = |steps: &str| {
            format!(
                "name = \"n\"\n[matrix]\nserver = [\"samba\"]\nworkload = [\"nb\"]\n\
                 load = [\"ramp\"]\nclient = [\"smbtorture\"]\n[workloads.nb]\n\
                 kind = \"netbench\"\n[loads.ramp]\nsteps = {steps}\nstep = \"2s\"\n\
                 [repetitions]\nmin = 3\nmax = 3\n"
            )
        };
        let e = crate::experiment::parse(&text("[1, 144, 8]"), "t").unwrap();
        let cells = crate::matrix::runnable(&e);
        assert_eq!(needed(&cells), Some(144 * PER_CLIENT + MARGIN));
        // HTTP cells need nothing here.
        let http = crate::experiment::parse(crate::bundled::find("quickstart").unwrap().text, "q");
        assert_eq!(needed(&crate::matrix::runnable(&http.unwrap())), None);
    }

    #[test]
    fn the_machine_has_a_figure_for_its_temp_dir() {
        assert!(available(&std::env::temp_dir()).unwrap() > 0);
        assert!(available(Path::new("/no/such/dir")).is_err());
    }
}
