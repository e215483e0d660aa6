//! A herd that another herd started (the lab's client: `herd run`, `herd cluster run`) ends
//! with it: when the lab is killed with SIGKILL, its client gets SIGINT from the kernel
//! (`PR_SET_PDEATHSIG`) and stops as after a Ctrl-C, its agents on other hosts with it, rather
//! than loading on for the rest of its run with nobody to read the result. The lab names
//! itself in `HERD_PARENT_PID`; a herd started any other way is untouched.

use herd_lab::client::PARENT_VAR;

/// Arranges to be told of the parent's death, if a herd parent asked for it.
pub(crate) fn follow_parent() {
    let Some(parent) = std::env::var(PARENT_VAR).ok().and_then(|v| v.parse::<u32>().ok()) else {
        return;
    };
    // Not for what this herd starts in turn (`herd cluster run --local`'s agents, whose
    // parent it is): read once, here, while the process has one thread.
    std::env::remove_var(PARENT_VAR);
    // SAFETY: PR_SET_PDEATHSIG with a signal number reads and writes no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT) };
    // The parent may have died before the request was made: then no signal will come.
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } as u32 != parent {
        eprintln!("herd: the herd that started this one ({parent}) is gone: stopping");
        std::process::exit(130);
    }
}
