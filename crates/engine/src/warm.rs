//! Opening a worker's connections before the run starts (a spread run's agents arm with
//! their connections open: docs/cluster.md).
//!
//! Each connection is connected (and its TLS handshake done) on the worker's own event loop,
//! under the token it keeps in the run, and handed to the worker open and idle. Nothing is
//! recorded here: like a warm-up, the opening comes before the measured run, so a pre-opened
//! connection's first request counts as one on a kept-alive connection (no connect time, and
//! a server's close just before it is the keep-alive race, retried). What could not be opened
//! in time is closed and opened again with its first request, where a failure counts.
//!
//! An HTTP/2 connection is open here once TCP is up and, over TLS, the server has chosen `h2`
//! (ALPN; any other choice is not opened ahead, and fails at the start as the run's would).
//! Its preface goes with its first requests: the session is the worker's. What the server
//! sends meanwhile (its SETTINGS, TLS session tickets) is left unread for the session.

use std::io;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use crate::control::WAKER;
use crate::socket;
use crate::start::Warmed;
use crate::transport::{Io, Transport};
use crate::{Control, RunSpec, Wire};

/// One connection on its way to being open.
enum Opening {
    /// connect() in progress on the target's address `addr`.
    Connecting(Transport, usize),
    Handshaking(Transport, usize),
    Open(Transport, usize),
    /// Given up: opened with the first request instead.
    Dropped,
}

impl Opening {
    /// Still on its way (connecting, or in its TLS handshake).
    fn pending(&self) -> bool {
        matches!(self, Opening::Connecting(..) | Opening::Handshaking(..))
    }
}

/// A worker's connections, open or not, and what opening them did.
pub(crate) struct Warm {
    pub(crate) conns: Vec<Option<Transport>>,
    pub(crate) warmed: Warmed,
    /// The target's address the open connections reached (None: none did), where the
    /// worker opens the rest.
    pub(crate) addr: Option<usize>,
}

impl Warm {
    /// Nothing opened ahead: every connection opens with its first request.
    pub(crate) fn none(n_conns: u32) -> Warm {
        Warm { conns: (0..n_conns).map(|_| None).collect(), warmed: Warmed::default(), addr: None }
    }
}

/// Opens `n_open` of the worker's `n_conns` connections (its first; those its quota would
/// never use stay closed) until all are open or failed, `until` passes, or the run stops.
pub(crate) fn open(
    poll: &mut Poll,
    spec: &RunSpec,
    control: &Control,
    (n_conns, n_open, first_conn): (u32, u32, u32),
    until: Instant,
) -> Warm {
    let begun = Instant::now();
    let mut warm = Warm::none(n_conns);
    if begun >= until {
        // No time left (a step that starts where the last one ended): opened with the first
        // requests, as a run that starts at once.
        return warm;
    }
    let h2 = matches!(spec.wire, Wire::Http2(_));
    let mut opening: Vec<Opening> = Vec::with_capacity(n_open as usize);
    for i in 0..n_open as usize {
        opening.push(start(poll, spec, h2, i, first_conn, 0));
    }
    // Counted as they change, not scanned: 17,000 connections a worker is no rare case.
    let mut pending = opening.iter().filter(|o| o.pending()).count();
    let mut answered = opening.iter().any(|o| matches!(o, Opening::Open(..)));
    let mut events = Events::with_capacity(opening.len().clamp(16, 1024));
    let mut scratch = [0u8; 4096];
    let mut last = begun;
    loop {
        let now = Instant::now();
        if pending == 0 || now >= until || control.is_stopped() {
            break;
        }
        let wait = until.saturating_duration_since(now).min(Duration::from_millis(100));
        match poll.poll(&mut events, Some(wait)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // Not hidden: the worker's own loop polls the same event loop next and fails
            // the run with the error; what is open so far is handed over.
            Err(_) => break,
        }
        for ev in events.iter() {
            let Token(i) = ev.token();
            if ev.token() == WAKER || i >= opening.len() {
                continue;
            }
            let bad = ev.is_error() || (ev.is_read_closed() && !ev.is_writable());
            let before = std::mem::replace(&mut opening[i], Opening::Dropped);
            let was_pending = before.pending();
            let next = match before {
                Opening::Connecting(t, addr) if bad => {
                    // Like the run: the next resolved address while none has answered.
                    let untried = addr + 1 < spec.target.addrs.len();
                    if untried && !answered {
                        drop(t);
                        start(poll, spec, h2, i, first_conn, addr + 1)
                    } else {
                        Opening::Dropped
                    }
                }
                Opening::Connecting(t, addr) if ev.is_writable() || ev.is_readable() => {
                    connected(spec, h2, t, addr)
                }
                Opening::Handshaking(t, addr) => handshake(h2, t, addr),
                Opening::Open(mut t, addr) => {
                    // As an idle connection of the run (link/h1link.rs); a writable edge
                    // alone says nothing new. HTTP/2's bytes are the session's: not read.
                    let quiet = if ev.is_read_closed() || ev.is_error() {
                        false
                    } else {
                        h2 || !ev.is_readable() || t.still_idle(&mut scratch)
                    };
                    if quiet {
                        Opening::Open(t, addr)
                    } else {
                        Opening::Dropped
                    }
                }
                other => other,
            };
            if was_pending && matches!(next, Opening::Open(..)) {
                last = Instant::now();
                answered = true;
            }
            if was_pending && !next.pending() {
                pending -= 1;
            }
            opening[i] = next;
        }
    }
    for (i, o) in opening.into_iter().enumerate() {
        match o {
            Opening::Open(t, addr) => {
                warm.warmed.connections += 1;
                warm.addr = warm.addr.max(Some(addr));
                if let Some(slot) = warm.conns.get_mut(i) {
                    *slot = Some(t);
                }
            }
            // Closed here (dropping the socket takes it out of epoll).
            _ => warm.warmed.failed += 1,
        }
    }
    warm.warmed.took = last.saturating_duration_since(begun);
    warm
}

/// Starts connection `i` to the target's address `addr`, registered under its run token.
/// `h2`: the run speaks HTTP/2 (over TLS, open only where the server chose `h2`).
fn start(poll: &Poll, spec: &RunSpec, h2: bool, i: usize, first_conn: u32, addr: usize) -> Opening {
    let connecting = socket::connect(spec, addr, first_conn as usize + i, socket::Stream);
    let Ok((mut sock, in_progress)) = connecting else { return Opening::Dropped };
    let interest = Interest::READABLE | Interest::WRITABLE;
    if poll.registry().register(&mut sock, Token(i), interest).is_err() {
        return Opening::Dropped;
    }
    let t = Transport::Plain(sock);
    if in_progress {
        Opening::Connecting(t, addr)
    } else {
        connected(spec, h2, t, addr)
    }
}

/// TCP is up: open, or on to the TLS handshake.
fn connected(spec: &RunSpec, h2: bool, t: Transport, addr: usize) -> Opening {
    let failed = t.socket().take_error().ok().flatten().is_some();
    if failed {
        return Opening::Dropped;
    }
    match &spec.target.tls {
        None => Opening::Open(t, addr),
        Some(tls) => match tls.connect() {
            Ok(session) => handshake(h2, t.start_tls(session), addr),
            Err(_) => Opening::Dropped,
        },
    }
}

fn handshake(h2: bool, mut t: Transport, addr: usize) -> Opening {
    match t.handshake() {
        // HTTP/2 over TLS only where the server chose it (the worker checks it again).
        Io::Done(_) if h2 && !t.chose_h2() => Opening::Dropped,
        Io::Done(_) => Opening::Open(t, addr),
        Io::Retry => Opening::Handshaking(t, addr),
        Io::Eof | Io::Err(_) => Opening::Dropped,
    }
}
