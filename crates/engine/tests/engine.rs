//! The engine against real sockets: well-behaved and hostile servers written in the test,
//! on 127.0.0.1 port 0. Every run is bounded by a request count and a short timeout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use herd_engine::StopAt;
use herd_stats::FailureKind;
use util::{run, spec, Counts, TestServer, KEEP_ALIVE};

#[test]
fn keep_alive_reuses_connections() {
    let server = TestServer::start(|mut s| {
        util::serve_keep_alive(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
    });
    let mut sp = spec(server.port, 4, 200);
    sp.schedule = KEEP_ALIVE;
    let c = run(&sp);
    assert_eq!(c.completed, 200, "{c:?}");
    assert_eq!(c.failures_total(), 0, "{c:?}");
    assert_eq!(c.new_connections, 4);
    assert_eq!(c.reused, 196);
    assert_eq!(c.body_bytes, 200 * 5);
    assert_eq!(server.accepted(), 4);
}

#[test]
fn without_keep_alive_each_request_has_its_own_connection() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc");
    });
    let c = run(&spec(server.port, 3, 30));
    assert_eq!(c.completed, 30, "{c:?}");
    assert_eq!(c.new_connections, 30);
    assert_eq!(server.accepted(), 30);
}

#[test]
fn http11_server_is_not_kept_when_keep_alive_is_off() {
    // The server would keep the connection; the engine closes it itself, never hangs.
    let server = TestServer::start(|mut s| {
        util::serve_keep_alive(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    });
    let c = run(&spec(server.port, 2, 10));
    assert_eq!(c.completed, 10, "{c:?}");
    assert_eq!(c.new_connections, 10);
}

#[test]
fn keep_alive_response_without_keep_alive_header_does_not_hang() {
    // ab hangs on this (HTTP/1.1 persistent by default, no "Keep-Alive" text).
    let server = TestServer::start(|mut s| {
        util::serve_keep_alive(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")
    });
    let mut sp = spec(server.port, 1, 20);
    sp.schedule = KEEP_ALIVE;
    let t = Instant::now();
    let c = run(&sp);
    assert_eq!(c.completed, 20);
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn chunked_and_close_delimited_bodies_are_read() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nTrailer: 1\r\n\r\n");
    });
    let c = run(&spec(server.port, 1, 5));
    assert_eq!(c.completed, 5, "{c:?}");
    assert_eq!(c.body_bytes, 25);

    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.0 200 OK\r\n\r\nuntil close");
    });
    let c = run(&spec(server.port, 1, 5));
    assert_eq!(c.completed, 5, "{c:?}");
    assert_eq!(c.body_bytes, 5 * 11);
}

#[test]
fn head_request_has_no_body() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 1000\r\n\r\n");
    });
    let mut sp = spec(server.port, 1, 3);
    sp.workload = herd_engine::Workload::single(herd_engine::Prepared::new(
        b"HEAD / HTTP/1.0\r\n\r\n".to_vec(),
        true,
    ));
    let c = run(&sp);
    assert_eq!(c.completed, 3, "{c:?}");
    assert_eq!(c.body_bytes, 0);
}

#[test]
fn malformed_status_line_is_malformed() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTX/1.1 2OO OK\r\n\r\n");
    });
    let c = run(&spec(server.port, 1, 4));
    assert_eq!(c.failures[&FailureKind::Malformed], 4, "{c:?}");
}

#[test]
fn head_over_64k_is_refused_with_bounded_memory() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\n");
        let line = format!("X-Big: {}\r\n", "a".repeat(1000));
        for _ in 0..100 {
            if s.write_all(line.as_bytes()).is_err() {
                return;
            }
        }
    });
    let c = run(&spec(server.port, 1, 2));
    assert_eq!(c.failures[&FailureKind::HeadTooLarge], 2, "{c:?}");
}

#[test]
fn short_body_is_closed_and_long_body_is_overrun() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\nshort");
    });
    let c = run(&spec(server.port, 1, 3));
    assert_eq!(c.failures[&FailureKind::Closed], 3, "{c:?}");

    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\ntoo long");
    });
    let c = run(&spec(server.port, 1, 3));
    assert_eq!(c.failures[&FailureKind::Overrun], 3, "{c:?}");
}

#[test]
fn invalid_chunk_size_is_malformed() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        );
    });
    let c = run(&spec(server.port, 1, 2));
    assert_eq!(c.failures[&FailureKind::Malformed], 2, "{c:?}");
}

#[test]
fn silent_server_times_out_within_bounds() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        std::thread::sleep(Duration::from_secs(3));
    });
    let mut sp = spec(server.port, 2, 2);
    sp.timeout = Duration::from_millis(200);
    let t = Instant::now();
    let c = run(&sp);
    assert_eq!(c.failures[&FailureKind::Timeout], 2, "{c:?}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

#[test]
fn reset_mid_response_is_a_receive_failure() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
        std::thread::sleep(Duration::from_millis(20));
        util::reset(s);
    });
    let c = run(&spec(server.port, 1, 3));
    assert_eq!(c.failures[&FailureKind::Receive], 3, "{c:?}");
}

#[test]
fn trickling_server_is_bounded_by_the_timeout() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        for b in b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" {
            if s.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let mut sp = spec(server.port, 1, 1);
    sp.timeout = Duration::from_millis(400);
    let t = Instant::now();
    let c = run(&sp);
    assert_eq!(c.failures[&FailureKind::Timeout], 1, "{c:?}");
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn endless_body_is_bounded_by_the_timeout() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.0 200 OK\r\n\r\n");
        let chunk = vec![b'x'; 64 * 1024];
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            if s.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    let mut sp = spec(server.port, 1, 1);
    sp.timeout = Duration::from_millis(300);
    let t = Instant::now();
    let c = run(&sp);
    assert_eq!(c.failures[&FailureKind::Timeout], 1, "{c:?}");
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn refused_connection_is_a_connect_failure() {
    let port = herd_testutil::ports::closed_port();
    let c = run(&spec(port, 2, 6));
    assert_eq!(c.failures[&FailureKind::Connect], 6, "{c:?}");
}

#[test]
fn duration_bounds_the_run() {
    let server = TestServer::start(|mut s| {
        util::serve_keep_alive(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")
    });
    let mut sp = util::spec_until(server.port, 2, StopAt::Deadline(Duration::from_millis(300)));
    sp.schedule = KEEP_ALIVE;
    let t = Instant::now();
    let c = run(&sp);
    let took = t.elapsed();
    assert!(c.completed > 10, "{c:?}");
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn stop_from_another_thread_ends_the_run() {
    let server = TestServer::start(|mut s| {
        util::read_head(&mut s);
        std::thread::sleep(Duration::from_secs(5));
    });
    let mut sp = spec(server.port, 2, 4);
    sp.timeout = Duration::from_secs(30);
    let control = std::sync::Arc::new(herd_engine::Control::new());
    let c2 = control.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        c2.stop();
    });
    let t = Instant::now();
    let r = herd_engine::run(&sp, &control, |_, _| Counts::default()).unwrap();
    stopper.join().unwrap();
    assert!(r.interrupted);
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn post_body_is_written_in_full() {
    let server = TestServer::start(|mut s| {
        let head = util::read_head(&mut s);
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; len];
        let _ = s.read_exact(&mut body);
        let reply = format!("HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
        let _ = s.write_all(reply.as_bytes());
        let _ = s.write_all(&body);
    });
    let body = vec![b'p'; 1 << 20];
    let mut request =
        format!("POST / HTTP/1.0\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    request.extend_from_slice(&body);
    let mut sp = spec(server.port, 1, 2);
    sp.workload = herd_engine::Workload::single(herd_engine::Prepared::new(request, false));
    let c = run(&sp);
    assert_eq!(c.completed, 2, "{c:?}");
    assert_eq!(c.body_bytes, 2 << 20);
}

#[test]
fn tls_server_that_closes_ends_each_request_at_once() {
    // Regression: the close_notify arrives with the response and sits inside rustls, where
    // no new epoll edge announces it; the request must not wait for its timeout.
    let server = util::TlsServer::start_closing(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let mut sp = spec(server.port, 2, 10);
    sp.timeout = Duration::from_secs(3);
    sp.target.tls = Some(herd_engine::TlsClient::new(&util::tls_settings(), "localhost").unwrap());
    let t = Instant::now();
    let c = run(&sp);
    assert_eq!(c.completed, 10, "{c:?}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

#[test]
fn ipv6_loopback_and_host_names() {
    let l = std::net::TcpListener::bind("[::1]:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut s = s;
                util::serve_keep_alive(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nv6")
            });
        }
    });
    for host in ["[::1]", "::1"] {
        let mut sp = spec(port, 2, 10);
        sp.target = herd_engine::Target::resolve(host, port, None).unwrap();
        sp.schedule = KEEP_ALIVE;
        let c = run(&sp);
        assert_eq!(c.completed, 10, "{host}: {c:?}");
    }
    // "localhost" may resolve to ::1 and 127.0.0.1; the engine moves to the next address
    // while none has answered, so the run completes on ::1 either way.
    let mut sp = spec(port, 1, 5);
    sp.target = herd_engine::Target::resolve("localhost", port, None).unwrap();
    if sp.target.addrs.iter().any(|a| a.is_ipv6()) {
        let c = run(&sp);
        assert_eq!(c.completed, 5, "{c:?}");
    }
}

#[test]
fn a_target_without_addresses_is_an_error_not_a_panic() {
    let mut sp = spec(herd_testutil::ports::closed_port(), 1, 1);
    sp.target.addrs.clear();
    let control = herd_engine::Control::new();
    let r = herd_engine::run(&sp, &control, |_, _| Counts::default());
    assert!(matches!(r, Err(herd_engine::EngineError::NoAddress)), "{r:?}");
}

/// `--io epoll` runs on epoll and `--io uring` on io_uring (where this machine allows it, else
/// refused before any connection opens, saying what to do), each saying so; `auto` says what
/// it took and why not io_uring when it did not; what the ring does not carry yet (TLS) is
/// refused before any connection opens.
#[test]
fn the_run_says_which_backend_measured() {
    use herd_engine::{Backend, EngineError, IoChoice, IoError};
    let server = TestServer::start(|mut s| util::serve_keep_alive(&mut s, response_of(2)));
    let control = herd_engine::Control::new();
    let mut sp = spec(server.port, 1, 3);
    sp.schedule = KEEP_ALIVE;
    sp.io = IoChoice::Epoll;
    let run = herd_engine::run(&sp, &control, |_, _| Counts::default()).unwrap();
    assert_eq!((run.io.asked, run.io.backend, run.io.why), (IoChoice::Epoll, Backend::Epoll, None));
    assert_eq!(run.recorders.iter().map(|c| c.completed).sum::<u64>(), 3);
    sp.io = IoChoice::Auto;
    let run = herd_engine::run(&sp, &control, |_, _| Counts::default()).unwrap();
    let auto = herd_engine::io_choice::resolve(IoChoice::Auto, &sp.wire).unwrap();
    assert_eq!((run.io.backend, run.io.why), (auto.backend, auto.why));
    assert_eq!(run.recorders.iter().map(|c| c.completed).sum::<u64>(), 3);
    sp.io = IoChoice::Uring;
    let accepted = server.accepted();
    let r = herd_engine::run(&sp, &control, |_, _| Counts::default());
    match herd_engine::io_choice::probed() {
        herd_engine::uring::probe::Uring::Available { .. } => {
            let run = r.unwrap();
            assert_eq!((run.io.backend, run.io.why), (Backend::Uring, None));
            assert_eq!(run.recorders.iter().map(|c| c.completed).sum::<u64>(), 3);
        }
        herd_engine::uring::probe::Uring::Refused(_) => {
            let Err(EngineError::Io(e @ IoError::Refused(_))) = r else {
                panic!("--io uring ran where io_uring is refused: {r:?}")
            };
            assert!(e.to_string().contains("use --io epoll or --io auto"), "{e}");
            assert_eq!(server.accepted(), accepted, "a refused run opens no connection");
        }
    }
}

/// TLS on each backend the machine has: rustls on the ring's buffers answers as on epoll —
/// the handshake (1.2 and 1.3) counted in the connect time (only the first request of a
/// connection carries it) and said, keep-alive requests.
/// (The other TLS tests here — a close_notify behind the response, a request larger than
/// rustls's buffer, the receive cap — run on io_uring too in the test command's second pass.)
#[test]
fn tls_runs_alike_on_both_backends() {
    use herd_engine::{Backend, IoChoice, TlsVersions};
    let keep = util::TlsServer::start(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ntls!");
    for io in backends() {
        for versions in [TlsVersions::Tls13, TlsVersions::Tls12] {
            let mut settings = util::tls_settings();
            settings.versions = versions;
            let mut sp = spec(keep.port, 2, 40);
            sp.schedule = KEEP_ALIVE;
            sp.io = io;
            sp.target.tls = Some(herd_engine::TlsClient::new(&settings, "localhost").unwrap());
            let control = herd_engine::Control::new();
            let r = herd_engine::run(&sp, &control, |_, _| Counts::default()).unwrap();
            assert_eq!(
                r.io.backend,
                if io == IoChoice::Uring { Backend::Uring } else { Backend::Epoll }
            );
            let mut c = Counts::default();
            for w in &r.recorders {
                c.merge(w);
            }
            let what = format!("{io} {versions:?}: {c:?}");
            assert_eq!((c.completed, c.body_bytes, c.new_connections), (40, 160, 2), "{what}");
            assert_eq!(c.failures_total(), 0, "{what}");
            assert!(c.max_connect_us > 0, "{what}");
            let info = r.tls_info.unwrap();
            let want = if versions == TlsVersions::Tls12 { "TLSv1.2" } else { "TLSv1.3" };
            assert_eq!(info.protocol, want, "{what}");
            assert_eq!(info.peer_key_bits, Some(256), "{what}");
        }
    }
}

/// Peers that break TLS's handshake, on each backend: one answering the ClientHello with
/// bytes that are not TLS, one closing after reading it, one resetting it. Every request
/// fails as TLS's (or, reset, as a connect's), at once: none waits out its timeout.
#[test]
fn a_peer_that_breaks_the_tls_handshake_fails_each_request_at_once() {
    use std::io::{Read, Write};
    let read_hello = |s: &mut std::net::TcpStream| {
        let mut hello = [0u8; 512];
        let _ = s.read(&mut hello);
    };
    let garbage = TestServer::start(move |mut s| {
        read_hello(&mut s);
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        std::thread::sleep(Duration::from_secs(5));
    });
    let closing = TestServer::start(move |mut s| read_hello(&mut s));
    let resetting = TestServer::start(move |mut s| {
        read_hello(&mut s);
        util::reset(s);
    });
    for io in backends() {
        for (name, port, kinds) in [
            ("not TLS", garbage.port, &[FailureKind::Tls][..]),
            ("closed", closing.port, &[FailureKind::Tls]),
            ("reset", resetting.port, &[FailureKind::Tls, FailureKind::Connect]),
        ] {
            let mut sp = spec(port, 2, 6);
            sp.io = io;
            sp.timeout = Duration::from_secs(4);
            sp.target.tls =
                Some(herd_engine::TlsClient::new(&util::tls_settings(), "localhost").unwrap());
            let t = Instant::now();
            let c = run(&sp);
            let what = format!("{io}, {name}: {c:?}");
            assert_eq!((c.completed, c.failures_total()), (0, 6), "{what}");
            assert!(c.failures.keys().all(|k| kinds.contains(k)), "{what}");
            assert!(t.elapsed() < Duration::from_secs(3), "{what}: {:?}", t.elapsed());
        }
    }
}

/// The backends this machine runs: epoll, and io_uring where the probe found it.
fn backends() -> Vec<herd_engine::IoChoice> {
    use herd_engine::uring::probe::Uring;
    match herd_engine::io_choice::probed() {
        Uring::Available { .. } => vec![herd_engine::IoChoice::Epoll, herd_engine::IoChoice::Uring],
        Uring::Refused(why) => {
            herd_testutil::not_run::not_run(
                "TLS on io_uring",
                &format!("io_uring is refused here: {why}"),
            );
            vec![herd_engine::IoChoice::Epoll]
        }
    }
}

/// A keep-alive response with a body of `body` bytes, kept for the life of the test binary.
fn response_of(body: usize) -> &'static [u8] {
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {body}\r\n\r\n").into_bytes();
    r.resize(r.len() + body, b'x');
    Box::leak(r.into_boxed_slice())
}

#[test]
fn the_receive_cap_paces_plain_and_tls_reads_alike() {
    // 200,000 bytes at 400,000 bytes/s, with a first bucket of 8,000 bytes (20 ms): at least
    // 192,000 / 400,000 = 0.48 s, however fast the server and the loopback are.
    let response = response_of(200_000);
    let plain = TestServer::start(move |mut s| util::serve_keep_alive(&mut s, response));
    let tls = util::TlsServer::start(response);
    let tls_client = herd_engine::TlsClient::new(&util::tls_settings(), "localhost").unwrap();
    for (name, port, client) in [("plain", plain.port, None), ("tls", tls.port, Some(tls_client))] {
        let mut sp = spec(port, 1, 1);
        sp.receive_rate = std::num::NonZeroU64::new(400_000);
        sp.target.tls = client;
        let t = Instant::now();
        let c = run(&sp);
        let took = t.elapsed();
        assert_eq!((c.completed, c.body_bytes), (1, 200_000), "{name}: {c:?}");
        assert!(took >= Duration::from_millis(450), "{name}: the cap did not hold: {took:?}");
        assert!(took < Duration::from_secs(3), "{name}: {took:?}");
    }
}

#[test]
fn a_tls_request_larger_than_the_tls_buffer_is_written_in_full() {
    // rustls takes at most 64 KiB of plaintext before its records are sent: a 1 MiB body
    // goes out in several rounds of write and flush.
    let server = util::TlsServer::serve(|tls| loop {
        let head = String::from_utf8_lossy(&util::read_tls_head(tls)).into_owned();
        if head.is_empty() {
            return;
        }
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; len];
        if tls.read_exact(&mut body).is_err() {
            return;
        }
        let reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
        if tls.write_all(reply.as_bytes()).is_err() || tls.write_all(&body).is_err() {
            return;
        }
        let _ = tls.flush();
    });
    let body = vec![b'p'; 1 << 20];
    let mut request =
        format!("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n", body.len())
            .into_bytes();
    request.extend_from_slice(&body);
    let mut sp = spec(server.port, 1, 3);
    sp.schedule = KEEP_ALIVE;
    sp.workload = herd_engine::Workload::single(herd_engine::Prepared::new(request, false));
    sp.target.tls = Some(herd_engine::TlsClient::new(&util::tls_settings(), "localhost").unwrap());
    let c = run(&sp);
    assert_eq!(c.completed, 3, "{c:?}");
    assert_eq!(c.body_bytes, 3 << 20);
    assert_eq!(c.new_connections, 1, "{c:?}");
}
