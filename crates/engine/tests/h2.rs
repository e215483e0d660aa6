//! HTTP/2 in the engine against scripted servers: the well-behaved cases (streams, the
//! server's stream limit, GOAWAY, REFUSED_STREAM, request bodies under flow control) and every
//! hostile one of issue 19 (malformed frames, an HPACK bomb, endless CONTINUATION, a window
//! never replenished, GOAWAY at once, SETTINGS and PING floods, DATA beyond content-length, a
//! reset, silence). Each ends in bounded time with its named failure kind, never a hang or a
//! panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use herd_engine::{H2Settings, Prepared, RunSpec, Wire, Workload};
use herd_proto::h2::{encode, ErrorCode, SettingId};
use herd_stats::FailureKind;
use util::h2_peer::{self, Got, Peer};
use util::{nz, run, spec, Counts, TestServer, KEEP_ALIVE};

/// `requests` GETs over `connections` HTTP/2 connections of `streams` streams each, a 1 s
/// timeout.
fn h2_spec(port: u16, connections: u32, streams: u32, requests: u64) -> RunSpec {
    let mut s = spec(port, connections, requests);
    s.schedule = KEEP_ALIVE;
    s.wire = Wire::Http2(H2Settings::new(nz(streams)));
    s.timeout = Duration::from_secs(1);
    s.workload = Workload::single(Prepared::new(
        b"GET /x HTTP/1.1\r\nHost: localhost\r\nUser-Agent: herd\r\n\r\n".to_vec(),
        false,
    ));
    s
}

/// Runs `spec`, which must end within `limit`.
fn run_within(spec: &RunSpec, limit: Duration) -> Counts {
    let t = Instant::now();
    let c = run(spec);
    assert!(t.elapsed() < limit, "the run took {:?}: {c:?}", t.elapsed());
    c
}

fn failures(c: &Counts, kind: FailureKind) -> u64 {
    c.failures.get(&kind).copied().unwrap_or(0)
}

#[test]
fn streams_carry_every_request_and_only_the_first_carries_the_connect() {
    let server = TestServer::start(|s| h2_peer::serve(s, &[], b"hello"));
    let c = run_within(&h2_spec(server.port, 2, 10, 500), Duration::from_secs(10));
    assert_eq!(c.completed, 500, "{c:?}");
    assert_eq!(c.failures_total(), 0, "{c:?}");
    assert_eq!(c.body_bytes, 500 * 5);
    assert_eq!(c.new_connections, 2, "one per connection: {c:?}");
    assert_eq!(server.accepted(), 2);
}

#[test]
fn the_server_s_stream_limit_caps_the_streams_in_flight() {
    // The server allows 3 at once and checks it never sees more.
    let most = Arc::new(AtomicU32::new(0));
    let seen = most.clone();
    let server = TestServer::start(move |s| {
        let Some(mut p) = Peer::accept(s) else { return };
        p.settings(&[(SettingId::MAX_CONCURRENT_STREAMS, 3)]).flush();
        // Wait for the client's ack of our settings before counting.
        let mut open: Vec<u32> = Vec::new();
        let mut acked = false;
        loop {
            match p.next() {
                Some(Got::Settings { ack: true }) => acked = true,
                Some(Got::Headers { stream, .. }) => {
                    open.push(stream);
                    if acked {
                        seen.fetch_max(open.len() as u32, Ordering::SeqCst);
                    }
                    // Answer in pairs, so that several are open at once.
                    if open.len() >= 2 {
                        for s in open.drain(..) {
                            p.respond(s, b"ok");
                        }
                        if !p.flush() {
                            return;
                        }
                    }
                }
                Some(_) => {}
                None => return,
            }
        }
    });
    let c = run_within(&h2_spec(server.port, 1, 50, 200), Duration::from_secs(10));
    assert_eq!(c.completed + c.failures_total(), 200, "{c:?}");
    let most = most.load(Ordering::SeqCst);
    // At least two at once (the server answers in pairs), never more than it allows.
    assert!((2..=3).contains(&most), "{most} streams at once");
}

#[test]
fn goaway_after_some_requests_and_refused_streams_cost_no_failure() {
    // Each connection answers 7 requests, refuses the 8th (REFUSED_STREAM), then sends
    // GOAWAY naming the 9th as its last, answers up to it and closes.
    let server = TestServer::start(|s| {
        let Some(mut p) = Peer::accept(s) else { return };
        p.settings(&[]).flush();
        let mut n = 0;
        while let Some(stream) = p.next_request() {
            n += 1;
            match n {
                8 => {
                    encode::rst_stream(&mut p.out, stream, ErrorCode::REFUSED_STREAM);
                }
                9 => {
                    encode::goaway(&mut p.out, stream, ErrorCode::NO_ERROR, b"");
                    p.respond(stream, b"ok");
                    p.flush();
                    // A graceful end, as nginx's: close our side and read what the client
                    // still sends, so that the close is a FIN, not a reset of unread bytes.
                    let _ = p.s.shutdown(std::net::Shutdown::Write);
                    while p.next().is_some() {}
                    return;
                }
                _ => {
                    p.respond(stream, b"ok");
                }
            }
            if !p.flush() {
                return;
            }
        }
    });
    let c = run_within(&h2_spec(server.port, 1, 4, 100), Duration::from_secs(10));
    assert_eq!(c.completed, 100, "{c:?}");
    assert_eq!(c.failures_total(), 0, "{c:?}");
    assert!(server.accepted() >= 13, "8 answers per connection: {}", server.accepted());
}

#[test]
fn a_body_larger_than_the_initial_window_waits_for_window_updates() {
    let got = Arc::new(AtomicU32::new(0));
    let total = got.clone();
    let server = TestServer::start(move |s| {
        let Some(mut p) = Peer::accept(s) else { return };
        p.settings(&[(SettingId::INITIAL_WINDOW_SIZE, 1000)]).flush();
        let mut body = 0usize;
        loop {
            match p.next() {
                Some(Got::Data { stream, len, end_stream }) => {
                    body += len;
                    // Give the window back as the bytes arrive, stream and connection.
                    encode::window_update(&mut p.out, stream, len as u32);
                    encode::window_update(&mut p.out, 0, len as u32);
                    if end_stream {
                        total.fetch_add(body as u32, Ordering::SeqCst);
                        body = 0;
                        p.respond(stream, b"done");
                    }
                    if !p.flush() {
                        return;
                    }
                }
                Some(_) => {}
                None => return,
            }
        }
    });
    let mut s = h2_spec(server.port, 1, 1, 3);
    let body = vec![b'b'; 70_000];
    let mut raw = b"POST /up HTTP/1.1\r\nHost: localhost\r\nContent-Length: 70000\r\n\r\n".to_vec();
    raw.extend_from_slice(&body);
    s.workload = Workload::single(Prepared::new(raw, false));
    let c = run_within(&s, Duration::from_secs(10));
    assert_eq!(c.completed, 3, "{c:?}");
    assert_eq!(got.load(Ordering::SeqCst), 3 * 70_000);
}

/// A server that sends its SETTINGS, then answers every request with `hostile`, until the
/// client leaves (bounded by the read timeout).
fn hostile<F>(hostile: F) -> TestServer
where
    F: Fn(&mut Peer, u32) + Send + Sync + 'static,
{
    TestServer::start(move |s| {
        let Some(mut p) = Peer::accept(s) else { return };
        p.settings(&[]).flush();
        while let Some(stream) = p.next_request() {
            hostile(&mut p, stream);
            if !p.flush() {
                return;
            }
        }
    })
}

#[test]
fn a_malformed_frame_ends_the_connection_as_malformed() {
    // A SETTINGS frame whose length is not a multiple of 6.
    let server = hostile(|p, _| {
        encode::frame_header(&mut p.out, 7, 0x4, 0, 0);
        p.raw(&[0; 7]);
    });
    let c = run_within(&h2_spec(server.port, 1, 1, 3), Duration::from_secs(10));
    assert_eq!(failures(&c, FailureKind::Malformed), 3, "{c:?}");
}

#[test]
fn an_hpack_bomb_is_head_too_large_in_bounded_memory() {
    // One 4,000-byte field inserted into the table, then referenced 100 times: 400 kB of
    // header list from a block of about 4 kB.
    let server = hostile(|p, stream| {
        let big = vec![b'v'; 4000];
        let mut block = Vec::new();
        block.push(0x88); // :status 200
        block.push(0x40); // literal with incremental indexing, new name
        block.push(4);
        block.extend_from_slice(b"x-bi");
        // value length 4000 as an HPACK integer with a 7-bit prefix: 127, then 3873.
        block.push(0x7f);
        let mut rest = 4000 - 127;
        while rest >= 128 {
            block.push((rest % 128) as u8 | 0x80);
            rest /= 128;
        }
        block.push(rest as u8);
        block.extend_from_slice(&big);
        // Index 62: the newest dynamic entry.
        block.extend(std::iter::repeat_n(0xbe, 100));
        encode::headers(&mut p.out, stream, &block, true, 1 << 20);
    });
    let c = run_within(&h2_spec(server.port, 1, 1, 2), Duration::from_secs(10));
    assert_eq!(failures(&c, FailureKind::HeadTooLarge), 2, "{c:?}");
}

#[test]
fn endless_continuation_is_head_too_large() {
    let server = hostile(|p, stream| {
        encode::frame_header(&mut p.out, 0, 0x1, 0, stream); // HEADERS, no END_HEADERS
        p.flush();
        // CONTINUATION frames of 16 KiB without END_HEADERS, until the client leaves (at most
        // 64 MiB).
        let chunk = vec![0u8; 16_384];
        for _ in 0..4096 {
            encode::frame_header(&mut p.out, chunk.len() as u32, 0x9, 0, stream);
            p.raw(&chunk);
            if !p.flush() {
                return;
            }
        }
    });
    let c = run_within(&h2_spec(server.port, 1, 1, 2), Duration::from_secs(10));
    assert_eq!(failures(&c, FailureKind::HeadTooLarge), 2, "{c:?}");
}

#[test]
fn a_window_never_replenished_times_out() {
    // The request body is larger than the server's window, which it never opens.
    let server = hostile(|_, _| {});
    let mut s = h2_spec(server.port, 1, 1, 2);
    let mut raw =
        b"POST /up HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n".to_vec();
    raw.extend_from_slice(&[b'b'; 100_000]);
    s.workload = Workload::single(Prepared::new(raw, false));
    let c = run_within(&s, Duration::from_secs(10));
    assert_eq!(failures(&c, FailureKind::Timeout), 2, "{c:?}");
}

#[test]
fn goaway_at_once_is_goaway() {
    let server = TestServer::start(|s| {
        let Some(mut p) = Peer::accept(s) else { return };
        p.settings(&[]);
        encode::goaway(&mut p.out, 0, ErrorCode::NO_ERROR, b"go away");
        p.flush();
        while p.next().is_some() {}
    });
    let c = run_within(&h2_spec(server.port, 1, 4, 5), Duration::from_secs(10));
    assert_eq!(failures(&c, FailureKind::GoAway), 5, "{c:?}");
}

#[test]
fn settings_and_ping_floods_are_floods() {
    for ping in [false, true] {
        let server = hostile(move |p, _| {
            for _ in 0..100_000 {
                if ping {
                    encode::ping(&mut p.out, false, [7; 8]);
                } else {
                    encode::settings(&mut p.out, &[]);
                }
                if p.out.len() > 64 * 1024 && !p.flush() {
                    return;
                }
            }
        });
        let c = run_within(&h2_spec(server.port, 1, 1, 2), Duration::from_secs(10));
        assert_eq!(failures(&c, FailureKind::Flood), 2, "ping {ping}: {c:?}");
    }
}

#[test]
fn data_beyond_content_length_is_an_overrun() {
    let server = hostile(|p, stream| {
        p.headers(stream, &[(b":status", b"200"), (b"content-length", b"5")], false);
        encode::data(&mut p.out, stream, b"0123456789", true);
    });
    let c = run_within(&h2_spec(server.port, 1, 1, 2), Duration::from_secs(10));
    assert_eq!(failures(&c, FailureKind::Overrun), 2, "{c:?}");
}

#[test]
fn a_reset_stream_is_reset_and_the_connection_goes_on() {
    // Every other request is reset; the connection carries on with the rest.
    let server = TestServer::start(|s| {
        let Some(mut p) = Peer::accept(s) else { return };
        p.settings(&[]).flush();
        let mut n = 0;
        while let Some(stream) = p.next_request() {
            n += 1;
            if n % 2 == 0 {
                encode::rst_stream(&mut p.out, stream, ErrorCode::INTERNAL_ERROR);
            } else {
                p.respond(stream, b"ok");
            }
            if !p.flush() {
                return;
            }
        }
    });
    let c = run_within(&h2_spec(server.port, 1, 1, 10), Duration::from_secs(10));
    assert_eq!((c.completed, failures(&c, FailureKind::Reset)), (5, 5), "{c:?}");
    assert_eq!(server.accepted(), 1);
}

#[test]
fn silence_times_out_and_a_close_is_closed() {
    let server = hostile(|_, _| {});
    let c = run_within(&h2_spec(server.port, 1, 2, 2), Duration::from_secs(10));
    assert_eq!(failures(&c, FailureKind::Timeout), 2, "{c:?}");
    // The server closes after the first request, having read all the client sent (a close
    // with unread bytes would be a reset).
    let server = TestServer::start(|s| {
        let Some(mut p) = Peer::accept(s) else { return };
        p.settings(&[]).flush();
        if p.next_request().is_some() {
            let _ = p.s.shutdown(std::net::Shutdown::Write);
        }
        while p.next().is_some() {}
    });
    let c = run_within(&h2_spec(server.port, 1, 2, 3), Duration::from_secs(10));
    assert_eq!(failures(&c, FailureKind::Closed), 3, "{c:?}");
}
