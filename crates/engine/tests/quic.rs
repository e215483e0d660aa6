//! The QUIC driver (herd_engine::quic) against real HTTP/3 servers on 127.0.0.1 (Debian's
//! ngtcp2 example server and caddy) and against peers that misbehave: requests on several
//! streams end with status 200 and the exact body, the statistics are plausible, and every
//! bad peer ends in bounded time with a named failure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod quic_util;

use std::time::Duration;

use herd_engine::quic::{Offload, QuicFailure};
use herd_proto::h3::{H3Error, MessageError, StreamKind};
use quic_util::hostile::{Behaviour, HostileServer};
use quic_util::{large, run, write_certificates, Plan, Server, SilentPeer, TempDir, SMALL};

fn check_served(server: &Server) {
    let big = large();
    for offload in [Offload::default(), Offload { gso: false, gro: false }] {
        for (path, body, requests, streams) in
            [("/small.txt", SMALL.to_vec(), 300, 10), ("/large.bin", big.clone(), 12, 4)]
        {
            let plan = Plan {
                requests,
                streams,
                expect_body: Some(body.clone()),
                ..Plan::new(server, path)
            }
            .offload(offload);
            let out = run(server.addr, &plan);
            let what = format!("{} {path} {offload:?}", server.name);
            assert!(!out.hit_limit, "{what}: hung: {out:?}");
            assert!(out.failures.is_empty() && out.closed.is_none(), "{what}: {out:?}");
            assert_eq!(out.ok, requests, "{what}");
            assert_eq!(out.statuses.get(&200), Some(&requests), "{what}: {:?}", out.statuses);
            assert_eq!(out.wrong_bodies, 0, "{what}: a body differed");
            assert_eq!(out.body_bytes, (body.len() * requests) as u64, "{what}");
            assert_eq!(out.first_byte.len(), requests, "{what}: a first byte per request");

            let s = out.stats;
            let handshake = out.handshake.expect("handshake time");
            assert!(
                handshake > Duration::ZERO && handshake < Duration::from_secs(5),
                "{what}: {handshake:?}"
            );
            assert_eq!(s.handshake, Some(handshake));
            let rtt = s.rtt.expect("an RTT measured");
            assert!(
                rtt.min > Duration::ZERO && rtt.min < Duration::from_millis(200),
                "{what}: {s:?}"
            );
            assert!(rtt.smoothed >= rtt.min, "{what}: {s:?}");
            // Every request goes out in a packet of its own or shares one; every response too.
            assert!(s.packets_sent >= s.datagrams_sent && s.datagrams_sent > 0, "{what}: {s:?}");
            assert!(s.datagrams_received > 0 && s.bytes_received > out.body_bytes, "{what}: {s:?}");
            assert!(
                s.bytes_sent > 0 && s.send_calls > 0 && s.send_calls <= s.datagrams_sent,
                "{what}: {s:?}"
            );
            assert!(s.recv_calls > 0 && s.datagrams_per_recv >= 1.0, "{what}: {s:?}");
            assert!(s.packets_lost * 10 <= s.packets_sent, "{what}: loss on loopback: {s:?}");
            assert!(s.mtu >= 1200, "{what}: {s:?}");
            assert_eq!((s.gso, s.gro), (offload.gso, offload.gro), "{what}: offload in use");
        }
    }
}

#[test]
fn ngtcp2_serves_requests_on_many_streams_byte_for_byte() {
    let server = Server::ngtcp2();
    check_served(&server);
}

#[test]
fn caddy_serves_requests_on_many_streams_byte_for_byte() {
    let server = Server::caddy();
    check_served(&server);
    let out = run(server.addr, &Plan::new(&server, "/small.txt"));
    let server_field = out.first_fields.iter().find(|(n, _)| n == "server");
    assert_eq!(server_field.map(|(_, v)| v.as_str()), Some("Caddy"), "{:?}", out.first_fields);
}

#[test]
fn certificates_are_checked_when_a_ca_is_given() {
    let server = Server::ngtcp2();
    // -k: no CA, no check.
    let insecure = Plan::to(server.addr, "/small.txt", None);
    assert_eq!(run(server.addr, &insecure).ok, 1);
    // The right CA, a name the certificate does not have.
    let mut wrong_name = Plan::new(&server, "/small.txt");
    wrong_name.settings.tls.sni = Some("example.com".into());
    let out = run(server.addr, &wrong_name);
    assert_eq!(out.ok, 0);
    let Some(QuicFailure::Tls(reason)) = &out.closed else { panic!("{out:?}") };
    assert!(reason.contains("certificate") || reason.contains("NotValidForName"), "{reason}");
    assert_eq!(out.failures.len(), 0, "no request was submitted before the handshake");
}

#[test]
fn a_silent_peer_ends_with_a_handshake_timeout_in_bounded_time() {
    let peer = SilentPeer::start();
    let mut plan = Plan::to(peer.addr, "/", None);
    plan.settings.handshake_timeout = Duration::from_secs(1);
    plan.limit = Duration::from_secs(10);
    let out = run(peer.addr, &plan);
    assert!(!out.hit_limit, "{out:?}");
    assert_eq!(out.closed, Some(QuicFailure::HandshakeTimeout(Duration::from_secs(1))));
    assert!(
        out.elapsed >= Duration::from_secs(1) && out.elapsed < Duration::from_secs(4),
        "{out:?}"
    );
    assert_eq!(out.ok + out.failures.len(), 0, "no request went out");
    // The Initial went out (its first retransmission is due at about 1 s: the PTO of
    // quinn's 333 ms initial RTT).
    assert!(peer.received.load(std::sync::atomic::Ordering::SeqCst) >= 1);
    // Nothing came back: no round trip was measured (quinn's 333 ms guess is not one).
    assert_eq!(out.stats.rtt, None, "{:?}", out.stats);
    let text = out.closed.unwrap().to_string();
    assert_eq!(text, "no QUIC handshake within 1.0 s: the server does not answer on UDP");
}

#[test]
fn a_closed_port_is_refused_at_once() {
    let port = std::net::SocketAddr::from(([127, 0, 0, 1], herd_testutil::ports::closed_port()));
    let out = run(port, &Plan::to(port, "/", None));
    assert_eq!(out.closed, Some(QuicFailure::Refused), "{out:?}");
    assert!(out.elapsed < Duration::from_secs(2), "{out:?}");
    assert_eq!(out.stats.rtt, None, "{:?}", out.stats);
}

fn hostile(behaviour: Behaviour, requests: usize) -> quic_util::Outcome {
    let dir = TempDir::new("hostile");
    write_certificates(&dir.0);
    let server = HostileServer::start(behaviour, &dir.0);
    let mut plan = Plan::to(server.addr, "/", Some(dir.0.join("ca.pem")));
    plan.requests = requests;
    plan.limit = Duration::from_secs(15);
    let out = run(server.addr, &plan);
    assert!(!out.hit_limit, "{behaviour:?}: hung: {out:?}");
    out
}

#[test]
fn the_hostile_server_answers_when_it_behaves() {
    let out = hostile(Behaviour::Answer, 3);
    assert_eq!((out.ok, out.body_bytes, &out.closed), (3, 15, &None), "{out:?}");
}

#[test]
fn a_peer_closing_mid_stream_ends_with_its_code_and_reason() {
    let out = hostile(Behaviour::CloseMidBody, 1);
    let want =
        QuicFailure::ClosedByPeer { code: 0x102, application: true, reason: "going away".into() };
    assert_eq!(out.failures, std::slice::from_ref(&want), "{out:?}");
    assert_eq!(out.closed, Some(want.clone()));
    assert_eq!(out.first_byte.len(), 1, "the response had begun");
    assert_eq!(
        want.to_string(),
        "the server closed the connection (HTTP/3 error 0x102: going away)"
    );
}

#[test]
fn a_reset_stream_fails_that_request_only() {
    let out = hostile(Behaviour::ResetStream, 2);
    assert_eq!(out.failures, [QuicFailure::StreamReset(0x10c), QuicFailure::StreamReset(0x10c)]);
    assert_eq!(out.closed, None, "the connection lived on");
}

#[test]
fn a_frame_not_allowed_closes_the_connection_with_its_error() {
    let out = hostile(Behaviour::FrameOnRequest, 1);
    let e = H3Error::FrameUnexpected { frame_type: 4, stream: StreamKind::Request };
    assert_eq!(out.failures, [QuicFailure::Protocol(e)], "{out:?}");
    assert_eq!(out.closed, Some(QuicFailure::Protocol(e)));
}

#[test]
fn a_body_past_its_length_fails_the_request_not_the_connection() {
    let out = hostile(Behaviour::BodyPastLength, 2);
    let e = H3Error::Message(MessageError::BodyPastLength { want: 3 });
    assert_eq!(out.failures, [QuicFailure::Protocol(e), QuicFailure::Protocol(e)], "{out:?}");
    assert_eq!(out.closed, None);
}
