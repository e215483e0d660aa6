//! Keeps a helper started with an idle time (`herd host --idle-timeout`) alive while herd
//! holds its link: a thread pings it at an interval well inside that time, and herd's own
//! requests go through the same lock, one at a time as the protocol wants. Why: a helper
//! must end when herd is gone, and a link lost without a close (a host's network down, a
//! cable) shows up on the host as nothing but silence — sshd, by default, never notices. So
//! silence ends the helper, and herd, while it lives, is never silent.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::client::HostLink;

/// A link with its pinging thread; the link returns with [`Keeper::into_link`].
pub struct Keeper<W: Write + Send + 'static> {
    /// None once given back.
    link: Arc<Mutex<Option<HostLink<W>>>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
    /// The first ping that failed, for the next request to say.
    failed: Arc<Mutex<Option<String>>>,
}

impl<W: Write + Send + 'static> Keeper<W> {
    /// Pings `link` every `every` until [`Keeper::into_link`] or drop.
    pub fn start(link: HostLink<W>, every: Duration) -> Keeper<W> {
        let link = Arc::new(Mutex::new(Some(link)));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let failed = Arc::new(Mutex::new(None));
        let (l, s, f) = (link.clone(), stop.clone(), failed.clone());
        let thread = std::thread::spawn(move || {
            let (lock, wake) = &*s;
            let mut stopped = lock.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                // Asked before each wait: a halt that came before this thread took the lock
                // has notified no one, and would otherwise wait out a whole interval.
                if *stopped {
                    return;
                }
                let (now, _) =
                    wake.wait_timeout(stopped, every).unwrap_or_else(PoisonError::into_inner);
                stopped = now;
                if *stopped {
                    return;
                }
                let mut held = l.lock().unwrap_or_else(PoisonError::into_inner);
                let Some(link) = held.as_mut() else { return };
                if let Err(e) = link.ping() {
                    *f.lock().unwrap_or_else(PoisonError::into_inner) = Some(e.to_string());
                    return;
                }
            }
        });
        Keeper { link, stop, thread: Some(thread), failed }
    }

    /// Runs `f` on the link, between pings.
    pub fn with<R>(&self, f: impl FnOnce(&mut HostLink<W>) -> R) -> R {
        let mut held = self.link.lock().unwrap_or_else(PoisonError::into_inner);
        // Some until into_link, which takes self.
        match held.as_mut() {
            Some(link) => f(link),
            None => unreachable!("a keeper's link is there until into_link consumes it"),
        }
    }

    /// Why a ping failed, if one did (the link is then lost; the next request says so too).
    pub fn failure(&self) -> Option<String> {
        self.failed.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Stops pinging and gives the link back (for `bye`).
    pub fn into_link(mut self) -> HostLink<W> {
        self.halt();
        let taken = self.link.lock().unwrap_or_else(PoisonError::into_inner).take();
        match taken {
            Some(link) => link,
            None => unreachable!("a keeper's link is there until into_link consumes it"),
        }
    }

    fn halt(&mut self) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl<W: Write + Send + 'static> Drop for Keeper<W> {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_keeper_halted_at_once_gives_its_link_back_at_once() {
        // Many times: the halt races the thread's first taking of the lock.
        for _ in 0..50 {
            let link = HostLink::new("h", std::io::empty(), Vec::new(), Duration::from_secs(1));
            let t = Instant::now();
            let keeper = Keeper::start(link, Duration::from_secs(10));
            let _link = keeper.into_link();
            assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        }
    }
}
