//! No heap allocation per request on the hot path: a keep-alive run of 10x more requests
//! must not make (meaningfully) more allocations. A counting global allocator sees every
//! thread; the test server below allocates nothing per request, so any growth is the
//! engine's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use std::num::{NonZeroU32, NonZeroU64};

use herd_engine::{
    Answer, Completed, Control, Failed, Recorder, Reuse, RunSpec, Schedule, StopAt, Target,
};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The counter sees every thread: the tests take turns, so that one's servers do not count
/// against the other.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Counts responses without allocating.
#[derive(Default)]
struct Count(u64);

impl Recorder for Count {
    fn completed(&mut self, _: &Completed<'_>) -> Answer {
        self.0 += 1;
        Answer::Continue
    }
    fn failed(&mut self, _: &Failed) -> Answer {
        Answer::Continue
    }
}

/// A keep-alive server that answers each request from a fixed buffer.
fn server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut s = s;
                let mut buf = [0u8; 4096];
                let mut tail = [0u8; 4];
                loop {
                    let n = match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    // Requests are small and arrive whole; answer when one ends here.
                    if n >= 4 {
                        tail.copy_from_slice(&buf[n - 4..n]);
                    }
                    if &tail == b"\r\n\r\n"
                        && s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
                            .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// An HTTP/2 server (prior knowledge) that answers each request with a fixed response,
/// decoding the client's frames with herd-proto's decoder from a fixed buffer.
fn h2_server() -> u16 {
    use herd_proto::h2::{Frame, FrameDecoder};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut s = s;
                let mut preface = [0u8; 24];
                if s.read_exact(&mut preface).is_err()
                    || s.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).is_err()
                {
                    return;
                }
                let mut dec = FrameDecoder::new(16_384);
                let mut buf = vec![0u8; 1 << 16];
                let mut len = 0;
                // HEADERS (:status 200, content-length: 5) and DATA "hello" with END_STREAM;
                // the stream id goes in bytes 5..9 and 19..23.
                let mut answer =
                    *b"\0\0\x05\x01\x04\0\0\0\0\x88\x0f\x0d\x015\0\0\x05\0\x01\0\0\0\0hello";
                loop {
                    let n = match s.read(&mut buf[len..]) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    len += n;
                    let mut at = 0;
                    loop {
                        match dec.decode(&buf[at..len]) {
                            Ok(Some((frame, used))) => {
                                at += used;
                                if let Frame::Headers { stream, .. } = frame {
                                    let id = stream.to_be_bytes();
                                    answer[5..9].copy_from_slice(&id);
                                    answer[19..23].copy_from_slice(&id);
                                    if s.write_all(&answer).is_err() {
                                        return;
                                    }
                                }
                            }
                            Ok(None) => break,
                            Err(_) => return,
                        }
                    }
                    buf.copy_within(at..len, 0);
                    len -= at;
                }
            });
        }
    });
    port
}

fn allocations_for(port: u16, requests: u64) -> u64 {
    allocations_of(port, requests, herd_engine::Wire::Http1)
}

fn allocations_of(port: u16, requests: u64, wire: herd_engine::Wire) -> u64 {
    let spec = RunSpec {
        wire,
        connections: NonZeroU32::new(4).unwrap(),
        threads: NonZeroU32::new(2).unwrap(),
        schedule: Schedule::Closed {
            reuse: Reuse::KeepAlive { per_connection: None },
            think: None,
        },
        timeout: Duration::from_secs(5),
        ..RunSpec::new(
            Target::resolve("127.0.0.1", port, None).unwrap(),
            herd_engine::Workload::single(herd_engine::Prepared::new(
                b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
                false,
            )),
            StopAt::Requests(NonZeroU64::new(requests).unwrap()),
        )
    };
    let control = Control::new();
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let run = herd_engine::run(&spec, &control, |_, _| Count::default()).unwrap();
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    assert_eq!(run.recorders.iter().map(|c| c.0).sum::<u64>(), requests);
    after - before
}

#[test]
fn keep_alive_requests_do_not_allocate() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let port = server();
    let _warm = allocations_for(port, 100);
    let small = allocations_for(port, 1_000);
    let large = allocations_for(port, 10_000);
    // Set-up costs (threads, poll, buffers, parsers) are the same for both runs; 9,000 more
    // requests may add a handful of allocations at most (none is expected).
    assert!(large <= small + 16, "1k requests: {small} allocations, 10k requests: {large}");
}

#[test]
fn http2_streams_do_not_allocate() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let port = h2_server();
    let wire = herd_engine::Wire::Http2(herd_engine::H2Settings::new(NonZeroU32::new(8).unwrap()));
    let _warm = allocations_of(port, 100, wire.clone());
    let small = allocations_of(port, 1_000, wire.clone());
    let large = allocations_of(port, 10_000, wire);
    // HPACK's tables, the stream slab and the frame buffers are per connection; a request
    // reuses them.
    assert!(large <= small + 16, "1k requests: {small} allocations, 10k requests: {large}");
}
