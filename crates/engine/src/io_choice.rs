//! `--io auto|epoll|uring`: which event-loop backend a run's workers turn, chosen once per
//! run, safely, and said (issue 35). Two backends stand beside each other: readiness (epoll,
//! through mio, as every run has had) and completion (io_uring). The user asks for one, or
//! `auto`; [`resolve`] settles it against these facts and nothing else:
//!
//! - which backends the run's protocol has ([`backends_of`]: HTTP/1 and HTTP/2 both, plain
//!   or over TLS, HTTP/3 epoll alone);
//! - whether `auto` takes io_uring at all: only where it measured faster than epoll, which no
//!   protocol has yet (`HERD_AUTO_IO` says otherwise, for the test command's second pass);
//! - whether this machine lets herd use io_uring (`uring::probe`, run once per process and
//!   kept: every run and every worker of the process asks the same answer).
//!
//! `auto` takes io_uring where all say yes and falls back to epoll otherwise, with one line
//! saying why (not measured faster, not for the protocol yet, the kernel is too old,
//! `kernel.io_uring_disabled`, a seccomp filter). An explicit `uring` never falls back: a
//! run that asked for it and got epoll would measure what it did not ask for, so it is
//! refused before anything is sent, with the reason and what to do. The result
//! ([`Resolved`]) travels with the run's result, so every report can say which backend
//! measured.

use std::sync::OnceLock;

pub use herd_uring::choice::{probed, Backend, BadIoChoice, IoChoice, Resolved};
use herd_uring::probe::Uring;

use crate::Wire;

/// Why `--io uring` cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IoError {
    /// This machine refuses io_uring; the reason is the probe's.
    #[error("--io uring: io_uring is refused here: {0}; use --io epoll or --io auto")]
    Refused(String),
    /// The run's protocol has no worker on that backend yet.
    #[error(
        "--io {asked}: herd's {backend} backend does not carry {protocol} yet; use --io \
         epoll or --io auto"
    )]
    NotForProtocol { asked: IoChoice, backend: Backend, protocol: &'static str },
}

/// Whether `auto` takes io_uring for `kind` where the machine allows it: only where it was
/// measured faster than epoll (BENCHMARKS.md, issue 35), which no protocol is yet. The
/// environment's `HERD_AUTO_IO=uring` (or `epoll`) says otherwise, for every protocol io_uring
/// carries: the test command runs the engine's and herd run's tests once on each backend so.
fn auto_takes_uring(_kind: WireKind) -> bool {
    static PREFERRED: OnceLock<Option<IoChoice>> = OnceLock::new();
    let preferred = PREFERRED.get_or_init(|| std::env::var("HERD_AUTO_IO").ok()?.parse().ok());
    *preferred == Some(IoChoice::Uring)
}

/// A run's protocol as the backends' list knows it: a [`Wire`] without its settings, so that
/// what has no run yet (the lab reading an experiment) can ask too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireKind {
    Http1,
    Http2,
    Http3,
}

impl WireKind {
    pub fn of(wire: &Wire) -> WireKind {
        match wire {
            Wire::Http1 => WireKind::Http1,
            Wire::Http2(_) => WireKind::Http2,
            Wire::Http3(_) => WireKind::Http3,
        }
    }

    /// As the refusals and the fallback's reason say it.
    pub fn name(self) -> &'static str {
        match self {
            WireKind::Http1 => "HTTP/1",
            WireKind::Http2 => "HTTP/2",
            WireKind::Http3 => "HTTP/3",
        }
    }
}

/// The backends a run of `kind` can turn. The one place a protocol's io_uring worker is
/// declared: add [`Backend::Uring`] to its list when run.rs's `run_on_backend` builds one.
pub fn backends_of(kind: WireKind) -> &'static [Backend] {
    match kind {
        WireKind::Http1 | WireKind::Http2 | WireKind::Http3 => &[Backend::Epoll, Backend::Uring],
    }
}

/// The backends a run over `wire` can turn ([`backends_of`] its kind).
pub fn backends_for(wire: &Wire) -> &'static [Backend] {
    backends_of(WireKind::of(wire))
}

/// The protocol's name as the refusals and the fallback's reason say it.
pub fn protocol_name(wire: &Wire) -> &'static str {
    WireKind::of(wire).name()
}

/// Whether `choice` can ever run a `kind` run, whatever the machine: an explicit backend the
/// protocol has no worker on is refused (the lab asks this when it reads an experiment; the
/// machine is asked when a run starts, by [`resolve`]).
pub fn check_protocol(choice: IoChoice, kind: WireKind) -> Result<(), IoError> {
    offered(choice, kind.name(), backends_of(kind))
}

/// An explicit backend `offered` lacks, refused.
fn offered(asked: IoChoice, protocol: &'static str, offered: &[Backend]) -> Result<(), IoError> {
    let backend = match asked {
        IoChoice::Auto => return Ok(()),
        IoChoice::Epoll => Backend::Epoll,
        IoChoice::Uring => Backend::Uring,
    };
    if offered.contains(&backend) {
        Ok(())
    } else {
        Err(IoError::NotForProtocol { asked, backend, protocol })
    }
}

/// Settles `choice` for a run over `wire` (the probe runs on the first call that needs it,
/// once per process). TLS and a receive-rate cap ride on either backend.
pub fn resolve(choice: IoChoice, wire: &Wire) -> Result<Resolved, IoError> {
    resolve_kind(choice, WireKind::of(wire))
}

/// [`resolve`] for a run of `kind`, whatever else it asks (what `herd doctor` says `auto`
/// would take for the protocol).
pub fn resolve_kind(choice: IoChoice, kind: WireKind) -> Result<Resolved, IoError> {
    decide(choice, kind.name(), backends_of(kind), auto_takes_uring(kind), probed)
}

/// [`resolve`] with its two facts given: the protocol's name and backends, and the probe
/// (asked only when the answer depends on it).
fn decide<'a>(
    asked: IoChoice,
    protocol: &'static str,
    offered_backends: &[Backend],
    auto_uring: bool,
    probe: impl FnOnce() -> &'a Uring,
) -> Result<Resolved, IoError> {
    self::offered(asked, protocol, offered_backends)?;
    let resolved = |backend, why| Ok(Resolved { asked, backend, why });
    match asked {
        IoChoice::Epoll => resolved(Backend::Epoll, None),
        IoChoice::Uring => match probe() {
            Uring::Available { .. } => resolved(Backend::Uring, None),
            Uring::Refused(why) => Err(IoError::Refused(why.clone())),
        },
        IoChoice::Auto if !offered_backends.contains(&Backend::Uring) => {
            resolved(Backend::Epoll, Some(format!("io_uring not yet for {protocol}")))
        }
        IoChoice::Auto if !auto_uring => resolved(
            Backend::Epoll,
            Some(format!("io_uring not yet measured faster for {protocol}")),
        ),
        IoChoice::Auto => match probe() {
            Uring::Available { .. } => resolved(Backend::Uring, None),
            Uring::Refused(why) => {
                resolved(Backend::Epoll, Some(format!("io_uring refused here: {why}")))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: &[Backend] = &[Backend::Epoll, Backend::Uring];
    const EPOLL: &[Backend] = &[Backend::Epoll];

    fn available() -> Uring {
        Uring::Available { extras: vec![] }
    }

    fn refused() -> Uring {
        Uring::Refused("kernel.io_uring_disabled = 2: io_uring is off for every process".into())
    }

    /// `decide` with the probe given, and whether the probe was asked.
    fn decide_with(
        asked: IoChoice,
        offered: &[Backend],
        found: Uring,
    ) -> (Result<Resolved, IoError>, bool) {
        let mut probed = false;
        let got = decide(asked, "HTTP/1", offered, true, || {
            probed = true;
            // Leaked: a test's probe result must outlive the call, as the process's does.
            &*Box::leak(Box::new(found))
        });
        (got, probed)
    }

    #[test]
    fn the_spellings_read_back() {
        for c in IoChoice::ALL {
            assert_eq!(c.to_string().parse::<IoChoice>(), Ok(c));
        }
        assert_eq!(IoChoice::default(), IoChoice::Auto);
        let bad = "io_uring".parse::<IoChoice>().unwrap_err().to_string();
        assert_eq!(bad, "`io_uring` is not an I/O backend: give auto, epoll or uring");
        assert!("EPOLL".parse::<IoChoice>().is_err());
    }

    #[test]
    fn epoll_is_epoll_without_asking_the_kernel() {
        for offered in [BOTH, EPOLL] {
            let (got, probed) = decide_with(IoChoice::Epoll, offered, refused());
            let got = got.unwrap();
            assert_eq!((got.backend, got.why.as_deref(), probed), (Backend::Epoll, None, false));
            assert_eq!(got.to_string(), "epoll");
        }
    }

    #[test]
    fn uring_runs_where_the_probe_and_the_protocol_allow_it() {
        let (got, probed) = decide_with(IoChoice::Uring, BOTH, available());
        let got = got.unwrap();
        assert_eq!((got.backend, got.why.clone(), probed), (Backend::Uring, None, true));
        assert_eq!(got.to_string(), "io_uring");
    }

    #[test]
    fn uring_is_refused_with_the_probe_s_reason_and_what_to_do() {
        let (got, _) = decide_with(IoChoice::Uring, BOTH, refused());
        let e = got.unwrap_err();
        assert_eq!(
            e.to_string(),
            "--io uring: io_uring is refused here: kernel.io_uring_disabled = 2: io_uring is \
             off for every process; use --io epoll or --io auto"
        );
    }

    #[test]
    fn uring_is_refused_for_a_protocol_without_its_worker_whatever_the_kernel() {
        for found in [available(), refused()] {
            let (got, probed) = decide_with(IoChoice::Uring, EPOLL, found);
            assert!(!probed, "the protocol decides first");
            assert_eq!(
                got.unwrap_err().to_string(),
                "--io uring: herd's io_uring backend does not carry HTTP/1 yet; use --io epoll \
                 or --io auto"
            );
        }
    }

    #[test]
    fn auto_takes_uring_where_it_runs() {
        let (got, _) = decide_with(IoChoice::Auto, BOTH, available());
        let got = got.unwrap();
        assert_eq!((got.backend, got.why.as_deref()), (Backend::Uring, None));
        assert_eq!(got.to_string(), "io_uring (auto)");
    }

    #[test]
    fn auto_falls_back_to_epoll_saying_why_in_one_line() {
        let (got, _) = decide_with(IoChoice::Auto, BOTH, refused());
        let got = got.unwrap();
        assert_eq!(got.backend, Backend::Epoll);
        assert_eq!(
            got.to_string(),
            "epoll (auto: io_uring refused here: kernel.io_uring_disabled = 2: io_uring is off \
             for every process)"
        );
        let (got, probed) = decide_with(IoChoice::Auto, EPOLL, available());
        let got = got.unwrap();
        assert!(!probed, "no probe for a protocol without an io_uring worker");
        assert_eq!(got.backend, Backend::Epoll);
        assert_eq!(got.why.as_deref(), Some("io_uring not yet for HTTP/1"));
        assert_eq!(got.to_string(), "epoll (auto: io_uring not yet for HTTP/1)");
        for why in [got.to_string(), refused().to_string()] {
            assert!(!why.contains('\n'), "{why}");
        }
    }

    #[test]
    fn a_backend_the_protocol_lacks_is_refused_even_epoll() {
        let (got, _) = decide_with(IoChoice::Epoll, &[Backend::Uring], available());
        assert!(matches!(got, Err(IoError::NotForProtocol { backend: Backend::Epoll, .. })));
    }

    /// Every protocol turns either backend. `auto` keeps epoll where io_uring is not
    /// measured faster (no protocol yet) unless `HERD_AUTO_IO` says otherwise; `uring` runs
    /// where the machine allows it.
    #[test]
    fn every_protocol_turns_either_backend() {
        for kind in [WireKind::Http1, WireKind::Http2, WireKind::Http3] {
            assert_eq!(backends_of(kind), BOTH);
            let auto = resolve_kind(IoChoice::Auto, kind).unwrap();
            let why = format!("io_uring not yet measured faster for {}", kind.name());
            let expect = match (auto_takes_uring(kind), probed()) {
                (true, Uring::Available { .. }) => (Backend::Uring, None),
                (true, Uring::Refused(r)) => {
                    (Backend::Epoll, Some(format!("io_uring refused here: {r}")))
                }
                (false, _) => (Backend::Epoll, Some(why)),
            };
            assert_eq!((auto.backend, auto.why.clone()), expect);
            match probed() {
                Uring::Available { .. } => {
                    assert_eq!(
                        resolve_kind(IoChoice::Uring, kind).map(|r| r.backend),
                        Ok(Backend::Uring)
                    )
                }
                Uring::Refused(_) => {
                    assert!(matches!(resolve_kind(IoChoice::Uring, kind), Err(IoError::Refused(_))))
                }
            }
        }
        // A run's wire is asked as its kind.
        let h2 = Wire::Http2(crate::H2Settings::new(std::num::NonZeroU32::MIN));
        for wire in [&Wire::Http1, &h2] {
            assert_eq!(backends_for(wire), BOTH);
            let kind = WireKind::of(wire);
            assert_eq!(resolve(IoChoice::Auto, wire), resolve_kind(IoChoice::Auto, kind));
        }
    }

    /// What the lab asks of an experiment's cells before any run: an explicit backend the
    /// protocol has no worker on, refused; anything else left for the run to settle.
    #[test]
    fn a_protocol_without_the_backend_is_refused_before_any_run() {
        for kind in [WireKind::Http1, WireKind::Http2, WireKind::Http3] {
            assert_eq!(check_protocol(IoChoice::Auto, kind), Ok(()));
            assert_eq!(check_protocol(IoChoice::Epoll, kind), Ok(()));
        }
        for kind in [WireKind::Http1, WireKind::Http2, WireKind::Http3] {
            assert_eq!(check_protocol(IoChoice::Uring, kind), Ok(()));
        }
        // Every protocol has both today; one without io_uring would be refused so.
        let e = offered(IoChoice::Uring, "HTTP/3", EPOLL).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--io uring: herd's io_uring backend does not carry HTTP/3 yet; use --io epoll or \
             --io auto"
        );
        assert_eq!(offered(IoChoice::Uring, "HTTP/1", BOTH), Ok(()));
    }

    /// The probe runs once per process: every call hands back the same answer.
    #[test]
    fn the_probe_is_kept() {
        assert!(std::ptr::eq(probed(), probed()));
    }
}
