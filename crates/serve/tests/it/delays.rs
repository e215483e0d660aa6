//! `/sleep` and `/stall`: responses held back without holding the worker, in order on their
//! connection, and the every-M-th stall pattern.

use std::thread;
use std::time::{Duration, Instant};

use herd_serve::ServeConfig;
use herd_testutil::hiccups::Hiccups;

use crate::harness::{config, TestServer};

/// One worker, so that a blocked worker would show.
fn one_worker() -> TestServer {
    TestServer::start_with(ServeConfig { threads: 1, ..config(None) })
}

#[test]
fn sleep_holds_one_connection_not_the_worker() {
    let server = one_worker();
    let addr = server.addr();
    let sleeper = thread::spawn(move || {
        let start = Instant::now();
        let mut c = crate::harness::Client::connect(addr);
        c.send(b"GET /sleep?ms=600 HTTP/1.1\r\nHost: t\r\n\r\n");
        let r = c.response(false);
        (r.status, r.body, start.elapsed())
    });
    let hiccups = Hiccups::watch();
    thread::sleep(Duration::from_millis(100));
    // Meanwhile the same worker answers others at once.
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let t = Instant::now();
        assert_eq!(server.get("/9x9").status, 200);
        slowest = slowest.max(t.elapsed());
    }
    // A blocked worker would hold one of them ~500 ms; a busy machine may hold one as long
    // as it held a sleeping thread meanwhile.
    let seen = hiccups.stop();
    let bound = Duration::from_millis(300) + seen.worst;
    assert!(slowest < bound, "blocked for {slowest:?}; the machine's worst wake-up {seen:?}");
    let (status, body, took) = sleeper.join().unwrap();
    assert_eq!((status, body.as_slice()), (200, &b"ok\n"[..]));
    assert!(took >= Duration::from_millis(600), "answered after {took:?}");
    assert!(took < Duration::from_millis(600) + Duration::from_secs(2), "answered after {took:?}");
}

#[test]
fn held_responses_keep_pipelined_order() {
    let server = one_worker();
    let mut c = server.client();
    let hiccups = Hiccups::watch();
    let start = Instant::now();
    c.send(
        b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\nGET /sleep?ms=300 HTTP/1.1\r\nHost: t\r\n\r\n\
          GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\nGET /sleep?ms=0 HTTP/1.1\r\nHost: t\r\n\r\n\
          GET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n",
    );
    assert_eq!(c.response(false).body, b"0");
    // The response before the held one is not held back with it (by more than a busy
    // machine held a sleeping thread meanwhile).
    let first = start.elapsed();
    let seen = hiccups.stop();
    assert!(first < Duration::from_millis(250) + seen.worst, "{first:?}; {seen:?}");
    assert_eq!(c.response(false).body, b"ok\n");
    assert!(start.elapsed() >= Duration::from_millis(300));
    assert_eq!(c.response(false).body, b"01");
    assert_eq!(c.response(false).body, b"ok\n");
    assert_eq!(c.response(false).body, b"012");
}

#[test]
fn every_mth_stall_request_waits() {
    let server = one_worker();
    let mut c = server.client();
    let mut slow = Vec::new();
    for i in 1..=9 {
        let t = Instant::now();
        c.send(b"GET /stall?every=3&ms=250 HTTP/1.1\r\nHost: t\r\n\r\n");
        let r = c.response(false);
        assert_eq!((r.status, r.body.as_slice()), (200, &b"ok\n"[..]), "the same body always");
        if t.elapsed() >= Duration::from_millis(250) {
            slow.push(i);
        } else {
            assert!(t.elapsed() < Duration::from_millis(200), "request {i}: {:?}", t.elapsed());
        }
    }
    assert_eq!(slow, [3, 6, 9]);
}

#[test]
fn a_client_gone_during_a_hold_is_harmless() {
    let server = one_worker();
    for _ in 0..5 {
        let mut c = server.client();
        c.send(b"GET /sleep?ms=200 HTTP/1.1\r\nHost: t\r\n\r\n");
        drop(c);
    }
    thread::sleep(Duration::from_millis(400));
    assert_eq!(server.get("/bytes/4").body, b"0123");
    let stats = server.stop();
    assert_eq!(stats.by_route["/sleep"], 5);
}
