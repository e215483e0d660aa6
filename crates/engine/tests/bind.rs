//! `--bind` (`SocketOptions::bind`): a run's connections leave from the source addresses given,
//! taken in turn, whatever they speak. Before, HTTP/3 ignored them: its UDP sockets bound the
//! wildcard address, so `herd run --h3 --bind 127.0.0.2` was checked and then sent from
//! 127.0.0.1. Each case here records where the first packets came from, on a listener that
//! never answers (no server needed: the source is in the first SYN or the first Initial).
//! Every address is on loopback (127.0.0.0/8: all of it is this host's).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::collections::BTreeSet;
use std::net::{IpAddr, TcpListener, UdpSocket};
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use herd_engine::quic::{QuicClient, QuicSettings};
use herd_engine::{Control, H3Wire, RunSpec, StopAt, Unreachable, Wire};
use herd_stats::FailureKind;
use util::{nz, spec_until, tls_settings, Counts};

/// Two connections of one request each, from `bind` in turn, giving up quickly: nothing
/// answers, and only the first packets matter.
fn two_connections(port: u16, bind: &[&str], h3: bool) -> RunSpec {
    let mut sp = spec_until(port, 2, StopAt::Requests(2u64.try_into().unwrap()));
    sp.threads = NonZeroU32::MIN;
    sp.timeout = Duration::from_millis(500);
    sp.unreachable = Unreachable::GiveUp;
    sp.socket.bind = bind.iter().map(|a| a.parse().unwrap()).collect();
    if h3 {
        let mut settings = QuicSettings::new(tls_settings());
        settings.handshake_timeout = Duration::from_millis(500);
        let client = QuicClient::new(&settings, "localhost").unwrap();
        sp.wire = Wire::Http3(H3Wire { streams: nz(1), client });
    }
    sp
}

/// Runs `spec` on a thread; the counts once it has ended.
fn run_in_background(spec: RunSpec) -> std::thread::JoinHandle<Counts> {
    std::thread::spawn(move || {
        let r = herd_engine::run(&spec, &Control::new(), |_, _| Counts::default()).unwrap();
        let mut c = Counts::default();
        for w in &r.recorders {
            c.merge(w);
        }
        c
    })
}

/// The source addresses of the datagrams waiting in `socket`, read once the run has ended:
/// on loopback a datagram sent is already queued, so no wait can be too short.
fn udp_sources(socket: &UdpSocket) -> BTreeSet<IpAddr> {
    socket.set_nonblocking(true).unwrap();
    let mut seen = BTreeSet::new();
    let mut buf = [0u8; 2048];
    while let Ok((_, from)) = socket.recv_from(&mut buf) {
        seen.insert(from.ip());
    }
    seen
}

/// The source addresses of the first `n` connections `listener` accepts, within 10 s.
fn tcp_sources(listener: &TcpListener, n: usize) -> BTreeSet<IpAddr> {
    listener.set_nonblocking(true).unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let mut seen = BTreeSet::new();
    let mut accepted = 0;
    while accepted < n && Instant::now() < until {
        match listener.accept() {
            Ok((_stream, from)) => {
                seen.insert(from.ip());
                accepted += 1;
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    seen
}

fn ips(list: &[&str]) -> BTreeSet<IpAddr> {
    list.iter().map(|a| a.parse().unwrap()).collect()
}

/// TCP, as it always did: connection k connects from bind[k mod 2].
#[test]
fn tcp_connections_leave_from_each_bind_address() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let run = run_in_background(two_connections(port, &["127.0.0.2", "127.0.0.3"], false));
    let seen = tcp_sources(&listener, 2);
    let c = run.join().unwrap();
    assert_eq!(seen, ips(&["127.0.0.2", "127.0.0.3"]), "{c:?}");
}

/// HTTP/3: the same, each QUIC connection's UDP socket bound to its source address.
#[test]
fn quic_connections_leave_from_each_bind_address() {
    let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = receiver.local_addr().unwrap().port();
    let run = run_in_background(two_connections(port, &["127.0.0.2", "127.0.0.3"], true));
    let c = run.join().unwrap();
    let seen = udp_sources(&receiver);
    assert_eq!(seen, ips(&["127.0.0.2", "127.0.0.3"]), "{c:?}");
    // Nothing answered: the handshakes timed out, as failed connects.
    assert_eq!(c.completed, 0, "{c:?}");
    assert!(c.failures.get(&FailureKind::Connect).is_some_and(|&n| n >= 1), "{c:?}");
}

/// A source of the other family than the target's cannot be bound: over TCP and over QUIC
/// alike the connection fails to connect (counted), and nothing is sent from another
/// address instead. (`herd run` refuses such a `--bind` before the run: herd-run's
/// check_sources.)
#[test]
fn a_source_of_the_wrong_family_fails_the_connect_and_sends_nothing() {
    for h3 in [false, true] {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = receiver.local_addr().unwrap().port();
        // TCP: the same port number on TCP; nothing may connect to it either.
        let listener = TcpListener::bind(("127.0.0.1", port)).ok();
        let run = run_in_background(two_connections(port, &["::1"], h3));
        let c = run.join().unwrap();
        let seen = udp_sources(&receiver);
        assert!(seen.is_empty(), "h3 {h3}: sent from {seen:?}");
        if let Some(l) = listener {
            l.set_nonblocking(true).unwrap();
            assert!(l.accept().is_err(), "h3 {h3}: a connection came");
        }
        assert_eq!(c.completed, 0, "h3 {h3}: {c:?}");
        assert!(c.failures.get(&FailureKind::Connect).is_some_and(|&n| n >= 1), "h3 {h3}: {c:?}");
    }
}
