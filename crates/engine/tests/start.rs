//! A later start (`Start::At`, `Start::Gate`), as the agents of a spread run use it: the
//! kept-alive connections are open before the start and no request leaves before it; the
//! gate reports what was opened, and a closed gate ends the run with nothing sent. What
//! could not be opened ahead opens with its first request, where its failure counts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use herd_engine::{
    Arrivals, Control, H2Settings, Reuse, RunSpec, Start, StartGate, StopAt, Warmed, Wire,
};
use herd_stats::FailureKind;
use herd_testutil::hiccups::Hiccups;
use herd_testutil::ports::closed_port;
use util::h2_peer::{self, Peer};
use util::{nz, rate, spec, spec_until, Counts, TestServer, TlsServer, KEEP_ALIVE};

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// A keep-alive server that counts the requests it reads.
fn counting_server() -> (TestServer, Arc<AtomicU64>) {
    let requests = Arc::new(AtomicU64::new(0));
    let seen = requests.clone();
    let server = TestServer::start(move |mut s| loop {
        if util::read_head(&mut s).is_empty() {
            return;
        }
        seen.fetch_add(1, Ordering::SeqCst);
        if std::io::Write::write_all(&mut s, OK).is_err() {
            return;
        }
    });
    (server, requests)
}

/// `requests` over `conns` kept-alive connections to `port` (2 workers), started by the gate
/// the test holds as the caller would.
fn gated(port: u16, conns: u32, requests: u64) -> (RunSpec, Arc<StartGate>) {
    let gate = StartGate::new();
    let mut sp = spec(port, conns, requests);
    sp.schedule = KEEP_ALIVE;
    sp.start = Start::Gate(gate.clone());
    (sp, gate)
}

fn merged(run: &herd_engine::Run<Counts>) -> Counts {
    let mut c = Counts::default();
    for r in &run.recorders {
        c.merge(r);
    }
    c
}

#[test]
fn a_gated_run_opens_every_connection_before_its_first_request() {
    let (server, requests) = counting_server();
    let (sp, gate) = gated(server.port, 6, 60);
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        let warmed = gate.wait_warm(&control).expect("the workers report");
        assert_eq!((warmed.connections, warmed.failed), (6, 0), "{warmed:?}");
        // Open and waiting: the server has every connection and not one request.
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(server.accepted(), 6);
        assert_eq!(requests.load(Ordering::SeqCst), 0, "a request left before the start");
        let at = Instant::now() + Duration::from_millis(50);
        gate.open(at);
        let run = engine.join().unwrap().unwrap();
        assert_eq!(run.started, at);
        assert!(!run.interrupted);
        let c = merged(&run);
        assert_eq!(c.completed, 60, "{c:?}");
        assert_eq!(c.failures_total(), 0, "{c:?}");
        // Opened before the start: no request of the run paid a connect.
        assert_eq!((c.new_connections, c.reused), (0, 60), "{c:?}");
        assert_eq!(server.accepted(), 6, "no connection opened twice");
        assert_eq!(requests.load(Ordering::SeqCst), 60);
    });
}

#[test]
fn a_closed_gate_ends_the_run_with_nothing_sent() {
    let (server, requests) = counting_server();
    let (sp, gate) = gated(server.port, 4, 40);
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        assert_eq!(gate.wait_warm(&control).map(|w| w.connections), Some(4));
        gate.close();
        let run = engine.join().unwrap().unwrap();
        assert!(run.interrupted, "a run that never started is no finished run");
        assert_eq!(run.recorders.len(), 2, "a recorder per worker, empty");
        assert_eq!(merged(&run).completed, 0);
    });
    assert_eq!(requests.load(Ordering::SeqCst), 0);
}

#[test]
fn a_stop_while_waiting_at_the_gate_ends_both_sides() {
    let (server, _) = counting_server();
    let (sp, gate) = gated(server.port, 2, 10);
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        assert!(gate.wait_warm(&control).is_some());
        control.stop();
        let run = engine.join().unwrap().unwrap();
        assert!(run.interrupted);
        assert_eq!(merged(&run).completed, 0);
    });
}

#[test]
fn what_cannot_be_opened_ahead_fails_with_its_first_request() {
    let (sp, gate) = gated(closed_port(), 3, 3);
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        let warmed = gate.wait_warm(&control).unwrap();
        assert_eq!((warmed.connections, warmed.failed), (0, 3), "{warmed:?}");
        gate.open(Instant::now());
        let c = merged(&engine.join().unwrap().unwrap());
        // Not hidden by the opening: each request tried, and failed, in the run.
        assert_eq!(c.failures.get(&FailureKind::Connect), Some(&3), "{c:?}");
    });
}

#[test]
fn a_run_at_an_instant_is_connected_by_then_and_starts_on_it() {
    let (server, requests) = counting_server();
    let mut sp = spec_until(server.port, 4, StopAt::Deadline(Duration::from_millis(300)));
    sp.schedule = KEEP_ALIVE;
    let at = Instant::now() + Duration::from_millis(400);
    sp.start = Start::At(at);
    let control = Control::new();
    let hiccups = Hiccups::watch();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        std::thread::sleep(Duration::from_millis(250));
        assert_eq!(server.accepted(), 4, "open before the instant");
        assert_eq!(requests.load(Ordering::SeqCst), 0);
        let run = engine.join().unwrap().unwrap();
        assert_eq!(run.started, at);
        // Lateness is measured, not assumed: a loaded machine may wake the start late by
        // as much as it woke a sleeping thread meanwhile.
        let seen = hiccups.stop();
        let bound = Duration::from_millis(200) + seen.worst;
        assert!(run.late < bound, "{:?} late, the machine's worst wake-up {seen:?}", run.late);
        let c = merged(&run);
        assert!(c.completed > 0 && c.failures_total() == 0, "{c:?}");
        assert_eq!(c.new_connections, 0, "{c:?}");
    });
}

/// An open loop over TLS: a TLS 1.3 server's session tickets arrive on the idle, pre-opened
/// connections; they are read, and the connections stay (none is reopened).
#[test]
fn pre_opened_tls_connections_stay_idle_through_session_tickets() {
    let server = TlsServer::start(OK);
    let gate = StartGate::new();
    let mut sp = spec_until(server.port, 4, StopAt::Deadline(Duration::from_millis(500)));
    sp.target.tls = Some(herd_engine::TlsClient::new(&util::tls_settings(), "localhost").unwrap());
    sp.schedule = rate(100.0, Arrivals::Uniform, Reuse::KeepAlive { per_connection: None });
    sp.start = Start::Gate(gate.clone());
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        let warmed = gate.wait_warm(&control).unwrap();
        assert_eq!(warmed, Warmed { connections: 4, failed: 0, took: warmed.took });
        // Long enough for the tickets to be waiting when the run begins.
        std::thread::sleep(Duration::from_millis(100));
        gate.open(Instant::now());
        let c = merged(&engine.join().unwrap().unwrap());
        assert!(c.completed >= 40, "{c:?}");
        assert_eq!(c.failures_total(), 0, "{c:?}");
        assert_eq!(c.new_connections, 0, "a pre-opened connection was dropped: {c:?}");
    });
}

/// An HTTP/2 server (h2_peer) that counts the connections whose preface it has read.
fn h2_counting_server() -> (TestServer, Arc<AtomicU64>) {
    let prefaces = Arc::new(AtomicU64::new(0));
    let seen = prefaces.clone();
    let server = TestServer::start(move |s| {
        let Some(p) = Peer::accept(s) else { return };
        seen.fetch_add(1, Ordering::SeqCst);
        h2_peer::serve_accepted(p, &[], b"ok");
    });
    (server, prefaces)
}

fn h2c(mut sp: RunSpec, streams: u32) -> RunSpec {
    sp.wire = Wire::Http2(H2Settings::new(nz(streams)));
    sp
}

/// HTTP/2 as HTTP/1: the connections are open before the start, their prefaces (and so any
/// request) go at the start, and no request pays a connect.
#[test]
fn a_gated_http2_run_opens_its_connections_before_the_start() {
    let (server, prefaces) = h2_counting_server();
    let (sp, gate) = gated(server.port, 3, 300);
    let sp = h2c(sp, 4);
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        let warmed = gate.wait_warm(&control).expect("the workers report");
        assert_eq!((warmed.connections, warmed.failed), (3, 0), "{warmed:?}");
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(server.accepted(), 3);
        assert_eq!(prefaces.load(Ordering::SeqCst), 0, "a preface left before the start");
        let at = Instant::now() + Duration::from_millis(50);
        gate.open(at);
        let run = engine.join().unwrap().unwrap();
        assert_eq!(run.started, at);
        let c = merged(&run);
        assert_eq!(c.completed, 300, "{c:?}");
        assert_eq!(c.failures_total(), 0, "{c:?}");
        assert_eq!((c.new_connections, c.reused), (0, 300), "{c:?}");
        assert_eq!(server.accepted(), 3, "no connection opened twice");
        assert_eq!(prefaces.load(Ordering::SeqCst), 3);
    });
}

/// An open loop over HTTP/2: the pre-opened connections take the requests as they fall due.
#[test]
fn an_open_loop_over_http2_sends_on_its_pre_opened_connections() {
    let (server, _) = h2_counting_server();
    let gate = StartGate::new();
    let mut sp = h2c(spec_until(server.port, 2, StopAt::Deadline(Duration::from_millis(500))), 4);
    sp.schedule = rate(200.0, Arrivals::Uniform, Reuse::KeepAlive { per_connection: None });
    sp.start = Start::Gate(gate.clone());
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        let warmed = gate.wait_warm(&control).unwrap();
        assert_eq!((warmed.connections, warmed.failed), (2, 0), "{warmed:?}");
        gate.open(Instant::now());
        let c = merged(&engine.join().unwrap().unwrap());
        assert!(c.completed >= 80, "{c:?}");
        assert_eq!(c.failures_total(), 0, "{c:?}");
        assert_eq!(c.new_connections, 0, "{c:?}");
        assert_eq!(server.accepted(), 2);
    });
}

/// HTTP/2 over TLS opens ahead only where the server chose `h2`: a server without it has
/// nothing opened ahead, and the run's own connections fail as TLS, counted.
#[test]
fn http2_over_tls_is_not_opened_ahead_without_alpn_h2() {
    let server = TlsServer::start(OK);
    let (sp, gate) = gated(server.port, 2, 4);
    let mut sp = h2c(sp, 2);
    let mut tls = util::tls_settings();
    tls.alpn = vec![b"h2".to_vec()];
    sp.target.tls = Some(herd_engine::TlsClient::new(&tls, "localhost").unwrap());
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        let warmed = gate.wait_warm(&control).unwrap();
        assert_eq!((warmed.connections, warmed.failed), (0, 2), "{warmed:?}");
        gate.open(Instant::now());
        let c = merged(&engine.join().unwrap().unwrap());
        assert_eq!(c.completed, 0, "{c:?}");
        assert!(c.failures.get(&FailureKind::Tls).copied().unwrap_or(0) > 0, "{c:?}");
    });
}

/// A server that closes the connections opened ahead at its idle timeout, saying nothing (as
/// Apache's 5 s KeepAliveTimeout does to connections an agent opened long before its start):
/// their requests go again on new connections, uncounted, as HTTP/1's keep-alive race; the
/// run loses nothing, and pays a connect for each new connection.
#[test]
fn http2_connections_closed_idle_before_the_start_are_retried_uncounted() {
    let accepted = Arc::new(AtomicU64::new(0));
    let seen = accepted.clone();
    let server = TestServer::start(move |s| {
        if seen.fetch_add(1, Ordering::SeqCst) < 2 {
            // The two opened ahead: dropped unheard.
            std::thread::sleep(Duration::from_millis(50));
            drop(s);
            return;
        }
        h2_peer::serve(s, &[], b"ok");
    });
    let (sp, gate) = gated(server.port, 2, 40);
    let sp = h2c(sp, 4);
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        let warmed = gate.wait_warm(&control).unwrap();
        assert_eq!((warmed.connections, warmed.failed), (2, 0), "{warmed:?}");
        // Left waiting past the server's close.
        std::thread::sleep(Duration::from_millis(200));
        gate.open(Instant::now());
        let c = merged(&engine.join().unwrap().unwrap());
        assert_eq!(c.completed, 40, "{c:?}");
        assert_eq!(c.failures_total(), 0, "{c:?}");
        assert_eq!(c.new_connections, 2, "the two connections opened again: {c:?}");
        assert_eq!(server.accepted(), 4);
    });
}

/// Once the server has spoken on it, the close is the server's: a connection opened ahead that
/// had the server's SETTINGS and then ended fails its requests, counted.
#[test]
fn an_http2_connection_that_spoke_before_closing_fails_its_requests() {
    let server = TestServer::start(move |s| {
        let Some(mut p) = Peer::accept(s) else { return };
        p.settings(&[]);
        let _ = p.flush();
        // The requests are read, and the connection closes without an answer.
        std::thread::sleep(Duration::from_millis(100));
    });
    let (sp, gate) = gated(server.port, 1, 3);
    let sp = h2c(sp, 4);
    let control = Control::new();
    std::thread::scope(|s| {
        let engine = s.spawn(|| herd_engine::run(&sp, &control, |_, _| Counts::default()));
        gate.wait_warm(&control).unwrap();
        gate.open(Instant::now());
        let c = merged(&engine.join().unwrap().unwrap());
        // Closed with the requests unread: a reset, as the receive's failure.
        assert_eq!((c.completed, c.failures_total()), (0, 3), "{c:?}");
    });
}
