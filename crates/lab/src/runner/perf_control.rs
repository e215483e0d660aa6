//! perf record's control FIFOs (`-D -1 --control fifo:CTL,ACK`): perf starts with its events
//! disabled, herd writes `enable` to CTL and waits for perf's `ack` on ACK, which perf sends
//! once the events on every thread of the servers are open and enabled.
//!
//! Why not a fixed wait: a profiled run is a second long, and on a fresh machine perf's
//! first start reads its program and libraries from disk. A run begun before perf had
//! attached ended with no samples, and an empty flame graph.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The two FIFOs, made in a run's profile directory.
pub(super) struct Fifos {
    pub(super) ctl: PathBuf,
    pub(super) ack: PathBuf,
}

impl Fifos {
    /// Makes `perf-ctl` and `perf-ack` in `dir` (a leftover of an earlier attempt is
    /// replaced).
    pub(super) fn make(dir: &Path) -> Result<Fifos, String> {
        let fifos = Fifos { ctl: dir.join("perf-ctl"), ack: dir.join("perf-ack") };
        for path in [&fifos.ctl, &fifos.ack] {
            mkfifo(path)
                .map_err(|err| format!("cannot make the FIFO {}: {err}", path.display()))?;
        }
        Ok(fifos)
    }

    /// perf's `--control` argument for these FIFOs.
    pub(super) fn argument(&self) -> std::ffi::OsString {
        let mut arg = std::ffi::OsString::from("fifo:");
        arg.push(&self.ctl);
        arg.push(",");
        arg.push(&self.ack);
        arg
    }

    /// Asks perf to enable its events and waits for its ack, at most `limit`. `stop` is
    /// asked between looks: Some(why) ends the wait with that error (perf exited, Ctrl-C);
    /// the limit's error says what perf did not do in time.
    pub(super) fn enable(
        &self,
        limit: Duration,
        mut stop: impl FnMut() -> Option<String>,
    ) -> Result<(), String> {
        let deadline = Instant::now() + limit;
        let waited =
            |what: &str| format!("perf record did not {what} within {:.1} s", limit.as_secs_f64());
        // The reading end first, without waiting for a writer: perf opens ACK for writing
        // and would wait for a reader.
        let mut ack = open(&self.ack, false)
            .map_err(|err| format!("cannot open {}: {err}", self.ack.display()))?;
        let mut ctl = loop {
            match open(&self.ctl, true) {
                Ok(file) => break file,
                // ENXIO: perf has not opened CTL yet.
                Err(err) if err.raw_os_error() == Some(libc::ENXIO) => {}
                Err(err) => return Err(format!("cannot open {}: {err}", self.ctl.display())),
            }
            pause(&mut stop, deadline, || waited("open its control FIFO"))?;
        };
        ctl.write_all(b"enable\n")
            .map_err(|err| format!("cannot write to {}: {err}", self.ctl.display()))?;
        let mut heard = Vec::new();
        let mut buf = [0u8; 64];
        loop {
            match ack.read(&mut buf) {
                Ok(n) if n > 0 => {
                    heard.extend_from_slice(&buf[..n]);
                    if heard.windows(4).any(|w| w == b"ack\n") {
                        return Ok(());
                    }
                    continue;
                }
                // 0: no writer yet, or perf closed it; WouldBlock: nothing written yet.
                Ok(_) => {}
                Err(err) if err.kind() == ErrorKind::WouldBlock => {}
                Err(err) => return Err(format!("cannot read {}: {err}", self.ack.display())),
            }
            pause(&mut stop, deadline, || waited("acknowledge enabling its events"))?;
        }
    }
}

/// Between two looks: an error if the caller stops the wait or the time is up, else a short
/// sleep.
fn pause(
    stop: &mut impl FnMut() -> Option<String>,
    deadline: Instant,
    late: impl FnOnce() -> String,
) -> Result<(), String> {
    if let Some(why) = stop() {
        return Err(why);
    }
    if Instant::now() >= deadline {
        return Err(late());
    }
    std::thread::sleep(Duration::from_millis(5));
    Ok(())
}

fn open(path: &Path, write: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

fn mkfifo(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != ErrorKind::NotFound => return Err(err),
        _ => {}
    }
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(ErrorKind::InvalidInput, "a NUL in the path"))?;
    // SAFETY: `c` is a valid NUL-terminated path for the length of the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("herd-perf-control-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A stand-in for perf, on the other ends of the FIFOs, as perf opens them: CTL read and
    /// write (it never waits), ACK for writing (it waits for herd's reader).
    fn answer(
        fifos: &Fifos,
        reply: &'static [u8],
        after: Duration,
    ) -> std::thread::JoinHandle<String> {
        let (ctl, ack) = (fifos.ctl.clone(), fifos.ack.clone());
        std::thread::spawn(move || {
            std::thread::sleep(after);
            let mut ctl = OpenOptions::new().read(true).write(true).open(ctl).unwrap();
            let mut ack = OpenOptions::new().write(true).open(ack).unwrap();
            let mut got = [0u8; 7];
            ctl.read_exact(&mut got).unwrap();
            ack.write_all(reply).unwrap();
            String::from_utf8_lossy(&got).into_owned()
        })
    }

    #[test]
    fn enable_waits_for_perf_to_open_the_fifos_and_to_ack() {
        let d = dir("ack");
        let fifos = Fifos::make(&d).unwrap();
        let perf = answer(&fifos, b"ack\n", Duration::from_millis(300));
        let started = Instant::now();
        fifos.enable(Duration::from_secs(20), || None).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(perf.join().unwrap(), "enable\n");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_stopped_wait_or_a_perf_that_never_answers_is_an_error_that_says_so() {
        let d = dir("exit");
        let fifos = Fifos::make(&d).unwrap();
        let err = fifos.enable(Duration::from_secs(20), || Some("perf exited".into()));
        assert_eq!(err.unwrap_err(), "perf exited", "the caller's reason, as it is");

        let fifos = Fifos::make(&d).unwrap();
        let perf = answer(&fifos, b"nak\n", Duration::ZERO);
        let err = fifos.enable(Duration::from_millis(300), || None).unwrap_err();
        assert!(err.contains("did not acknowledge enabling its events within 0.3 s"), "{err}");
        perf.join().unwrap();
        std::fs::remove_dir_all(d).unwrap();
    }
}
