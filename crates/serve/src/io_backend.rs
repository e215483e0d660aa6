//! Which backend herd serve's workers turn (`herd serve --io auto|epoll|uring`, docs/io.md),
//! settled once at bind and said: epoll (readiness, through mio) or io_uring (completions,
//! herd-uring's ring, worker/ring_loop.rs). The words are herd's client's (herd-uring's
//! `choice`), and so are the rules: `auto` takes io_uring only where this machine runs it and
//! it was measured faster for what is served; an explicit `uring` that cannot run is refused,
//! never quietly served on epoll.
//!
//! On io_uring herd serve carries plain TCP (HTTP/1 and h2c); a TLS listener stays on epoll.

use std::sync::OnceLock;

use herd_uring::choice::{self, Backend, IoChoice, Resolved};
use herd_uring::probe::Uring;

use crate::ServeError;

/// Whether `auto` takes io_uring for a plain listener where the machine allows it. Not yet:
/// measured faster for HTTP/1 keep-alive, the same for a connection per request, and for h2c
/// the same CPU but fewer requests a second (BENCHMARKS.md, rows 35ab-35ad).
/// `HERD_AUTO_IO=uring` (or `epoll`) says otherwise, as for herd's client: the test command's
/// io_uring pass serves on the ring so.
fn auto_takes_uring() -> bool {
    static PREFERRED: OnceLock<Option<IoChoice>> = OnceLock::new();
    let preferred = PREFERRED.get_or_init(|| std::env::var("HERD_AUTO_IO").ok()?.parse().ok());
    *preferred == Some(IoChoice::Uring)
}

/// Settles `asked` for a listener with or without TLS.
pub(crate) fn resolve(asked: IoChoice, tls: bool) -> Result<Resolved, ServeError> {
    decide(asked, tls, auto_takes_uring(), choice::probed)
}

fn decide<'a>(
    asked: IoChoice,
    tls: bool,
    auto_uring: bool,
    probe: impl FnOnce() -> &'a Uring,
) -> Result<Resolved, ServeError> {
    let served = |backend, why| Ok(Resolved { asked, backend, why });
    match asked {
        IoChoice::Epoll => served(Backend::Epoll, None),
        IoChoice::Uring if tls => Err(ServeError::IoUringTls),
        IoChoice::Uring => match probe() {
            Uring::Available { .. } => served(Backend::Uring, None),
            Uring::Refused(why) => Err(ServeError::IoUringRefused { why: why.clone() }),
        },
        IoChoice::Auto if tls => {
            served(Backend::Epoll, Some("herd serve's io_uring carries plain TCP only".into()))
        }
        IoChoice::Auto if !auto_uring => {
            served(Backend::Epoll, Some("io_uring not yet measured faster for h2c".into()))
        }
        IoChoice::Auto => match probe() {
            Uring::Available { .. } => served(Backend::Uring, None),
            Uring::Refused(why) => {
                served(Backend::Epoll, Some(format!("io_uring refused here: {why}")))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn available() -> &'static Uring {
        static A: OnceLock<Uring> = OnceLock::new();
        A.get_or_init(|| Uring::Available { extras: Vec::new() })
    }

    fn refused() -> &'static Uring {
        static R: OnceLock<Uring> = OnceLock::new();
        R.get_or_init(|| Uring::Refused("kernel.io_uring_disabled = 2".into()))
    }

    fn never() -> &'static Uring {
        panic!("the probe is not asked when the answer does not depend on it")
    }

    #[test]
    fn an_explicit_backend_is_served_or_refused_never_swapped() {
        assert_eq!(decide(IoChoice::Epoll, false, true, never).unwrap().backend, Backend::Epoll);
        assert_eq!(
            decide(IoChoice::Uring, false, false, available).unwrap().backend,
            Backend::Uring
        );
        let refused = decide(IoChoice::Uring, false, true, refused).unwrap_err();
        assert!(refused.to_string().contains("kernel.io_uring_disabled = 2"), "{refused}");
        let tls = decide(IoChoice::Uring, true, true, never).unwrap_err();
        assert!(matches!(tls, ServeError::IoUringTls), "{tls}");
    }

    #[test]
    fn auto_falls_back_to_epoll_and_says_why() {
        let not_faster = decide(IoChoice::Auto, false, false, never).unwrap();
        assert_eq!(
            not_faster.to_string(),
            "epoll (auto: io_uring not yet measured faster for h2c)"
        );
        let tls = decide(IoChoice::Auto, true, true, never).unwrap();
        assert_eq!(tls.backend, Backend::Epoll);
        assert!(tls.to_string().contains("plain TCP only"), "{tls}");
        let refused = decide(IoChoice::Auto, false, true, refused).unwrap();
        assert_eq!(refused.backend, Backend::Epoll);
        assert!(
            refused.to_string().contains("refused here: kernel.io_uring_disabled"),
            "{refused}"
        );
        let taken = decide(IoChoice::Auto, false, true, available).unwrap();
        assert_eq!(taken.to_string(), "io_uring (auto)");
    }
}
