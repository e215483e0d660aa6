//! The QUIC driver's receive path does not allocate per datagram: received datagrams are
//! carved from the worker's pool (`IoBuffers`), which is reclaimed once quinn has let go
//! of them. Responses of 200 KB (about 140 datagrams each) from ngtcp2-server must cost
//! far fewer allocations than datagrams, and than receive calls; what quinn allocates per
//! stream (its stream state) remains, and is printed. A counting global allocator counts this thread only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod quic_util;

use std::time::{Duration, Instant};

use bytes::Bytes;
use herd_engine::quic::{H3Conn, H3Event, IoBuffers, Offload, QuicClient};
use herd_proto::h3::encode_request;
use herd_proto::Request;
use herd_testutil::alloc::allocations_in;
use mio::{Events, Interest, Poll, Token};
use quic_util::{Plan, Server};

herd_testutil::counting_allocator!();

/// Sends `n` requests one after the other on `conn`; returns when all have ended.
fn requests(conn: &mut H3Conn, poll: &mut Poll, io: &mut IoBuffers, request: &Bytes, n: u64) {
    let mut events = Events::with_capacity(8);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut sent, mut done) = (0u64, 0u64);
    while done < n {
        assert!(Instant::now() < deadline, "hung at {done} of {n}");
        if sent == done && conn.can_submit() {
            conn.submit(request, false, sent).unwrap();
            sent += 1;
            conn.flush(Instant::now(), io);
        }
        let wake = conn.poll_timeout().unwrap_or(deadline);
        poll.poll(&mut events, Some(wake.saturating_duration_since(Instant::now()))).unwrap();
        let now = Instant::now();
        let mut on = |e: H3Event<'_>| match e {
            H3Event::Response { result, .. } => {
                assert!(result.is_ok(), "{result:?}");
                done += 1;
            }
            H3Event::Closed(f) => panic!("{f}"),
            _ => {}
        };
        if !events.is_empty() {
            conn.on_readable(now, io, &mut on);
        }
        if conn.poll_timeout().is_some_and(|t| t <= now) {
            conn.on_timeout(now, io, &mut on);
        }
    }
}

#[test]
fn receiving_allocates_far_less_than_once_per_datagram() {
    let server = Server::ngtcp2();
    for offload in [Offload::default(), Offload { gso: false, gro: false }] {
        let plan = Plan::new(&server, "/large.bin").offload(offload);
        let client = QuicClient::new(&plan.settings, "localhost").unwrap();
        let mut bytes = Vec::new();
        let request = Request {
            method: "GET".into(),
            target: "/large.bin".into(),
            version: "HTTP/1.1",
            headers: Vec::new(),
            body: Vec::new(),
        };
        encode_request(&request, "https", &plan.authority, &mut bytes).unwrap();
        let request = Bytes::from(bytes);
        let mut conn = H3Conn::connect(&client, server.addr, 1, Instant::now()).unwrap();
        let mut poll = Poll::new().unwrap();
        poll.registry()
            .register(conn.quic().socket(), Token(0), Interest::READABLE | Interest::WRITABLE)
            .unwrap();
        let mut io = IoBuffers::new();
        conn.flush(Instant::now(), &mut io);
        // Warm up: the handshake, quinn's tables, the buffers' growth.
        requests(&mut conn, &mut poll, &mut io, &request, 20);
        let before = conn.stats();
        let allocations =
            allocations_in(|| requests(&mut conn, &mut poll, &mut io, &request, 50)) as u64;
        let after = conn.stats();
        let datagrams = after.datagrams_received - before.datagrams_received;
        let calls = after.recv_calls - before.recv_calls;
        println!(
            "{offload:?}: {allocations} allocations for 50 responses: {:.1} a request, \
             {datagrams} datagrams in {calls} receives ({:.3} allocations a datagram)",
            allocations as f64 / 50.0,
            allocations as f64 / datagrams as f64
        );
        assert!(datagrams >= 50 * 100, "{datagrams} datagrams: the body went missing");
        // quinn's per-stream state is always there: none counted means no counting at all.
        assert!(allocations > 0, "nothing counted: is Counting the global allocator?");
        assert!(
            allocations * 10 < datagrams,
            "{offload:?}: {allocations} allocations for {datagrams} datagrams"
        );
        // Nor per receive call: what remains is quinn's per stream (3 a request in 0.11.19).
        assert!(
            allocations <= 4 * 50,
            "{offload:?}: {allocations} allocations for 50 requests and {calls} receives"
        );
    }
}
