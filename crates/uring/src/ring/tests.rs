//! The ring on real sockets (Unix socket pairs and loopback TCP): what each operation
//! promises its caller, checked through completions, the peers' bytes and the counters.
//! Bounds are generous: the machine is busy; a failure shows as a deadline passed.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::*;

/// A completion, owned, for the test to keep.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    Data(Vec<u8>),
    Ended(Option<i32>),
    Sent,
    SendFailed(Option<i32>),
    Connected(Result<(), Option<i32>>),
    Polled(u32),
}

fn own(c: Completion<'_>) -> (u32, Got) {
    let got = match c.event {
        Event::Received(data) => Got::Data(data.to_vec()),
        Event::RecvEnded(end) => Got::Ended(end.map(|e| e.raw_os_error().unwrap_or(-1))),
        Event::Sent => Got::Sent,
        Event::SendFailed(e) => Got::SendFailed(e.raw_os_error()),
        Event::Connected(r) => Got::Connected(r.map_err(|e| e.raw_os_error())),
        Event::Polled(mask) => Got::Polled(mask),
    };
    (c.token, got)
}

/// A ring and the turns the test made, to check one enter a turn.
struct Turned {
    ring: Ring,
    turns: u64,
}

impl Turned {
    fn new(config: RingConfig) -> Turned {
        Turned { ring: Ring::new(config).unwrap(), turns: 0 }
    }

    fn turn(&mut self, wait: Duration) -> Vec<(u32, Got)> {
        let mut got = Vec::new();
        self.turns += 1;
        let seen = self.ring.turn(Some(wait), None, |_, c| got.push(own(c))).unwrap();
        assert_eq!(seen, got.len(), "the count returned is what the callback saw");
        got
    }

    /// Turns until `done` holds of everything received so far (at most 60 seconds).
    fn until(&mut self, mut done: impl FnMut(&[(u32, Got)]) -> bool) -> Vec<(u32, Got)> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut all = Vec::new();
        while !done(&all) {
            assert!(Instant::now() < deadline, "no end within 60 s; got {:?}", summary(&all));
            all.extend(self.turn(Duration::from_millis(100)));
        }
        all
    }

    /// Every enter was a turn's or an early submit's: one enter a turn.
    fn assert_one_enter_a_turn(&self) {
        let c = self.ring.counters();
        assert_eq!(c.enters, self.turns + c.early_submits, "{c:?}");
    }
}

/// Completions without their bytes, for failure messages.
fn summary(all: &[(u32, Got)]) -> Vec<String> {
    all.iter()
        .map(|(t, g)| match g {
            Got::Data(d) => format!("{t}: {} bytes", d.len()),
            other => format!("{t}: {other:?}"),
        })
        .collect()
}

fn ended(all: &[(u32, Got)], token: u32) -> bool {
    all.iter().any(|(t, g)| *t == token && matches!(g, Got::Ended(_)))
}

/// The bytes received on `token`, in order, and what followed them.
fn stream(all: &[(u32, Got)], token: u32) -> (Vec<u8>, Vec<&Got>) {
    let mut bytes = Vec::new();
    let mut rest = Vec::new();
    for (_, g) in all.iter().filter(|(t, _)| *t == token) {
        match g {
            Got::Data(d) => {
                assert!(rest.is_empty(), "bytes after {rest:?}");
                bytes.extend_from_slice(d);
            }
            other => rest.push(other),
        }
    }
    (bytes, rest)
}

/// The bytes received on `token`, whatever else came between them.
fn received(all: &[(u32, Got)], token: u32) -> Vec<u8> {
    let data = all.iter().filter_map(|(t, g)| match g {
        Got::Data(d) if *t == token => Some(&d[..]),
        _ => None,
    });
    data.flatten().copied().collect()
}

fn pattern(seed: u32, len: usize) -> Vec<u8> {
    (0..len as u32).map(|j| ((j * 31 + seed * 17) % 251) as u8).collect()
}

fn small(buffers: (u16, u32)) -> RingConfig {
    RingConfig { buffers, ..RingConfig::default() }
}

/// Five chunks of 100 bytes into 64-byte buffers: one receive armed once brings them whole
/// and in order over many completions, then the end of the stream, once, after the bytes.
#[test]
fn a_multishot_receive_brings_every_chunk_in_order_then_one_end() {
    let mut t = Turned::new(small((4, 64)));
    let (mut peer, ours) = UnixStream::pair().unwrap();
    t.ring.ops().recv_multishot(3, ours.as_raw_fd());
    let sent = pattern(1, 500);
    let mut all = Vec::new();
    for chunk in sent.chunks(100) {
        peer.write_all(chunk).unwrap();
        all.extend(t.until(|got| stream(got, 3).0.len() == chunk.len()));
    }
    peer.shutdown(Shutdown::Write).unwrap();
    all.extend(t.until(|got| ended(got, 3)));
    for _ in 0..3 {
        all.extend(t.turn(Duration::from_millis(20)));
    }
    let (bytes, rest) = stream(&all, 3);
    assert_eq!(bytes, sent);
    assert_eq!(rest, [&Got::Ended(None)], "one end, after the bytes");
    let data = all.iter().filter(|(_, g)| matches!(g, Got::Data(_))).count();
    assert!(data >= 8, "500 bytes fit no fewer than 8 buffers of 64, got {data} completions");
    assert_eq!(t.ring.counters().rearms, 0, "four buffers given back each turn sufficed");
    t.assert_one_enter_a_turn();
}

/// A paced reader's receive: one read of at most its allowance, re-armed from the callback
/// (as the worker does), never a multishot one; unarmed, nothing is read; the end comes
/// once, after the bytes. 10,000 bytes at 700 a read into 1 KiB buffers.
#[test]
fn a_read_up_to_an_allowance_brings_no_more_and_the_next_is_the_callers() {
    let mut ring = Ring::new(small((4, 1024))).unwrap();
    let (mut peer, ours) = UnixStream::pair().unwrap();
    let fd = ours.as_raw_fd();
    let sent = pattern(7, 10_000);
    peer.write_all(&sent).unwrap();
    ring.ops().recv_up_to(5, fd, 700);
    let mut bytes = Vec::new();
    let mut reads = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while bytes.len() < sent.len() {
        assert!(Instant::now() < deadline, "stalled at {} bytes", bytes.len());
        ring.turn(Some(Duration::from_millis(100)), None, |ops, c| {
            let Event::Received(data) = c.event else { panic!("{:?}", own(c)) };
            assert!(data.len() <= 700, "a read of {} bytes", data.len());
            bytes.extend_from_slice(data);
            reads += 1;
            ops.recv_up_to(5, fd, 700);
        })
        .unwrap();
    }
    assert_eq!(bytes, sent);
    assert!(reads >= 15, "10,000 bytes at most 700 a read: {reads} reads");
    // The last re-arm is in flight; its read ends with the stream, once.
    peer.shutdown(Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    while !rest.iter().any(|(_, g)| matches!(g, Got::Ended(_))) {
        assert!(Instant::now() < deadline, "no end: {rest:?}");
        ring.turn(Some(Duration::from_millis(100)), None, |_, c| rest.push(own(c))).unwrap();
    }
    assert_eq!(rest, [(5, Got::Ended(None))]);
    // Not re-armed: bytes the peer can no longer send are not read either way; a new pair's
    // bytes wait in its socket until the caller asks.
    let (mut peer2, ours2) = UnixStream::pair().unwrap();
    peer2.write_all(b"waiting").unwrap();
    ring.ops().recv_up_to(6, ours2.as_raw_fd(), 3);
    let mut got = Vec::new();
    for _ in 0..5 {
        ring.turn(Some(Duration::from_millis(20)), None, |_, c| got.push(own(c))).unwrap();
    }
    assert_eq!(got, [(6, Got::Data(b"wai".to_vec()))], "one read of 3, then nothing");
    assert_eq!(ring.counters().rearms, 0);
}

/// 64 connections, 4 buffers of 4 KiB, 64 KiB from each peer: the buffers run out again
/// and again (ENOBUFS), the ring re-arms, and every byte arrives, in order, on its token.
#[test]
fn more_connections_than_buffers_lose_no_byte() {
    const N: u32 = 64;
    const LEN: usize = 64 * 1024;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut peers = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..N {
        peers.push(TcpStream::connect(addr).unwrap());
        ours.push(listener.accept().unwrap().0);
    }
    let mut t = Turned::new(small((4, 4096)));
    for (token, s) in ours.iter().enumerate() {
        t.ring.ops().recv_multishot(token as u32, s.as_raw_fd());
    }
    let writer = std::thread::spawn(move || {
        for (i, mut peer) in peers.into_iter().enumerate() {
            peer.write_all(&pattern(i as u32, LEN)).unwrap();
            peer.shutdown(Shutdown::Write).unwrap();
        }
    });
    let all = t.until(|got| (0..N).all(|token| ended(got, token)));
    writer.join().unwrap();
    for token in 0..N {
        let (bytes, rest) = stream(&all, token);
        assert!(bytes == pattern(token, LEN), "token {token}: {} bytes, not its own", bytes.len());
        assert_eq!(rest, [&Got::Ended(None)], "token {token}");
    }
    let c = t.ring.counters();
    assert!(c.enobufs_rearms > 0, "4 buffers for 64 connections never ran out: {c:?}");
    t.assert_one_enter_a_turn();
}

/// 4 MiB into a socket with a small send buffer, the peer reading slowly: the kernel takes
/// it in parts, the ring sends the rest itself, and the caller sees one `Sent`.
#[test]
fn a_short_send_goes_on_until_all_is_sent_and_says_sent_once() {
    const LEN: usize = 4 << 20;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    socket2::SockRef::from(&listener).set_recv_buffer_size(8192).unwrap();
    let ours = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    socket2::SockRef::from(&ours).set_send_buffer_size(4096).unwrap();
    ours.set_nonblocking(true).unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::with_capacity(LEN);
        let mut buf = [0u8; 16 * 1024];
        while got.len() < LEN {
            let n = peer.read(&mut buf).unwrap();
            assert!(n > 0, "the stream ended after {} bytes", got.len());
            got.extend_from_slice(&buf[..n]);
            std::thread::sleep(Duration::from_micros(200));
        }
        got
    });
    let mut t = Turned::new(RingConfig::default());
    let sent = pattern(9, LEN);
    t.ring.ops().send(5, ours.as_raw_fd(), &sent);
    let mut all = t.until(|got| got.iter().any(|(_, g)| *g == Got::Sent));
    let got = reader.join().unwrap();
    assert!(got == sent, "the peer got {} bytes, not those sent", got.len());
    for _ in 0..3 {
        all.extend(t.turn(Duration::from_millis(20)));
    }
    assert_eq!(all, [(5, Got::Sent)], "one completion for the whole send");
    let c = t.ring.counters();
    assert!(c.short_sends > 0, "a 4 KiB send buffer took 4 MiB at once: {c:?}");
    t.assert_one_enter_a_turn();
}

/// Bytes given while a send is in flight go after it, none lost or reordered, and the
/// caller hears `Sent` only when all of them went.
#[test]
fn sends_given_while_one_is_in_flight_follow_it_in_order() {
    let (ours, mut peer) = UnixStream::pair().unwrap();
    let mut t = Turned::new(RingConfig::default());
    let fd = ours.as_raw_fd();
    const LEN: usize = 3 << 20;
    let whole = pattern(4, LEN);
    // More than a socket pair holds: the first send stays in flight until the peer reads.
    let (first, rest) = whole.split_at(2 << 20);
    t.ring.ops().send(2, fd, first);
    let mut all = t.turn(Duration::ZERO);
    assert_eq!(all, [], "2 MiB went into a socket pair at once");
    for part in rest.chunks(100_000) {
        t.ring.ops().send(2, fd, part);
    }
    let reader = std::thread::spawn(move || {
        let mut got = vec![0u8; LEN];
        peer.read_exact(&mut got).map(|()| got)
    });
    all.extend(t.until(|got| got.iter().any(|(_, g)| *g == Got::Sent)));
    assert!(reader.join().unwrap().unwrap() == whole, "the bytes arrived out of order");
    assert_eq!(all, [(2, Got::Sent)]);
    t.assert_one_enter_a_turn();
}

/// A connect through the ring: to a listener, done; to a port nobody listens on, refused.
/// A second connect on a token with one in flight is refused at once. Two connects to one
/// address name one kept copy of it.
#[test]
fn a_connect_through_the_ring_succeeds_or_says_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = listener.local_addr().unwrap();
    let closed = {
        let gone = TcpListener::bind("127.0.0.1:0").unwrap();
        gone.local_addr().unwrap()
    };
    let socket = || {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.set_nonblocking(true).unwrap();
        s
    };
    let (a, b, c) = (socket(), socket(), socket());
    let mut t = Turned::new(RingConfig::default());
    t.ring.ops().connect(1, a.as_raw_fd(), &open).unwrap();
    let again = t.ring.ops().connect(1, a.as_raw_fd(), &open).unwrap_err();
    assert_eq!(again.raw_os_error(), Some(libc::EALREADY));
    t.ring.ops().connect(2, b.as_raw_fd(), &closed).unwrap();
    t.ring.ops().connect(3, c.as_raw_fd(), &open).unwrap();
    assert_eq!(t.ring.core.addrs.len(), 2, "one copy of each address, not one a connect");
    let mut all = t.until(|got| got.len() == 3);
    all.sort_by_key(|(token, _)| *token);
    assert_eq!(
        all,
        [
            (1, Got::Connected(Ok(()))),
            (2, Got::Connected(Err(Some(libc::ECONNREFUSED)))),
            (3, Got::Connected(Ok(())))
        ]
    );
    let mut from = [listener.accept().unwrap().1, listener.accept().unwrap().1];
    from.sort();
    let mut ours =
        [a.local_addr().unwrap(), c.local_addr().unwrap()].map(|s| s.as_socket().unwrap());
    ours.sort();
    assert_eq!(from, ours, "the listener got both");
    t.assert_one_enter_a_turn();
}

/// A token closed with a receive armed, bytes on their way in and a send stuck in flight,
/// then reopened at once on another socket: the caller sees only the new connection's
/// bytes and end; the old socket is really closed (its peer reads the end of the stream);
/// every operation of the old one ended and its memory was freed.
#[test]
fn a_closed_token_reopened_gets_nothing_of_its_old_connection() {
    let mut t = Turned::new(small((4, 4096)));
    let (old, mut old_peer) = UnixStream::pair().unwrap();
    old_peer.write_all(b"first").unwrap();
    t.ring.ops().recv_multishot(7, old.as_raw_fd());
    t.ring.ops().send(7, old.as_raw_fd(), &vec![1u8; 1 << 20]);
    let before = t.until(|got| !stream(got, 7).0.is_empty());
    assert_eq!(stream(&before, 7).0, b"first", "the old connection's bytes, while it was open");
    // Bytes the old receive takes at the next enter, after the close: stale.
    old_peer.write_all(b"stale bytes").unwrap();
    t.ring.ops().close(7, OwnedFd::from(old));
    let (new, mut new_peer) = UnixStream::pair().unwrap();
    t.ring.ops().recv_multishot(7, new.as_raw_fd());
    new_peer.write_all(b"new bytes").unwrap();
    new_peer.shutdown(Shutdown::Write).unwrap();
    let mut all = t.until(|got| ended(got, 7));
    for _ in 0..3 {
        all.extend(t.turn(Duration::from_millis(20)));
    }
    let (bytes, rest) = stream(&all, 7);
    assert_eq!(bytes, b"new bytes");
    assert_eq!(rest, [&Got::Ended(None)], "no Sent, no failure of the old send");
    let c = t.ring.counters();
    assert!(c.stale > 0, "the old receive's cancellation was not seen: {c:?}");
    assert_eq!(c.close_errors, 0);
    assert!(t.ring.core.orphans.is_empty(), "the old send's buffer is still held");
    assert_eq!(t.ring.core.in_flight, 0, "an operation never ended");
    // The end of the stream, or a reset (the old socket was closed with "stale bytes" unread),
    // not a read timing out: the socket is closed.
    old_peer.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut drained = Vec::new();
    match old_peer.read_to_end(&mut drained) {
        Ok(_) => assert!(drained.len() < 1 << 20, "the stuck send went on after the close"),
        Err(e) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset, "{e}"),
    }
    t.assert_one_enter_a_turn();
}

/// A turn with nothing to do returns once its wait is over, with no completion; the same
/// with a min-wait.
#[test]
fn a_turn_with_nothing_to_do_returns_after_its_wait() {
    let mut ring = Ring::new(RingConfig::default()).unwrap();
    for min_wait in [None, Some(Duration::from_millis(1))] {
        let start = Instant::now();
        let seen = ring.turn(Some(Duration::from_millis(50)), min_wait, |_, _| panic!("nothing"));
        assert_eq!(seen.unwrap(), 0);
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(49), "{min_wait:?}: returned after {took:?}");
        assert!(took < Duration::from_secs(20), "{min_wait:?}: returned after {took:?}");
    }
    assert_eq!(ring.counters().enters, 2);
}

/// The tokens a worker will use get their state at once, exactly.
#[test]
fn the_expected_tokens_are_made_room_for_exactly() {
    let ring = Ring::new(RingConfig { tokens: 10_000, ..RingConfig::default() }).unwrap();
    assert_eq!(ring.core.slots.len(), 10_000);
    assert_eq!(ring.core.slots.capacity(), 10_000);
}

/// A watched descriptor that becomes readable ends a long wait at once, with nothing for the
/// callback: an epoll set holding an eventfd, as a worker's poll holds the run's waker.
/// Dropping the ring with the watch still armed cancels it.
#[test]
fn a_watched_descriptor_wakes_the_wait() {
    let poll = mio::Poll::new().unwrap();
    let waker = std::sync::Arc::new(mio::Waker::new(poll.registry(), mio::Token(7)).unwrap());
    let mut ring = Ring::new(RingConfig::default()).unwrap();
    ring.ops().watch(poll.as_raw_fd());
    let wake = {
        let waker = waker.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            waker.wake().unwrap();
        })
    };
    let start = Instant::now();
    let seen = ring.turn(Some(Duration::from_secs(30)), None, |_, _| panic!("nothing"));
    assert_eq!(seen.unwrap(), 0);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(20), "the wake did not end the wait: {took:?}");
    wake.join().unwrap();
    assert_eq!(ring.core.in_flight, 0, "the watch ended with its one completion");

    let mut armed = Ring::new(RingConfig::default()).unwrap();
    let quiet = mio::Poll::new().unwrap();
    armed.ops().watch(quiet.as_raw_fd());
    armed.turn(Some(Duration::from_millis(1)), None, |_, _| panic!("nothing")).unwrap();
    assert_eq!(armed.core.in_flight, 1);
    assert!(armed.wind_down(), "the watch was cancelled");
}

/// A turn waiting for a batch of 32 returns with the one completion there is once its
/// min-wait passed, long before its 30-second wait (kernels with IORING_FEAT_MIN_TIMEOUT).
#[test]
fn a_batched_wait_returns_with_what_there_is_after_min_wait() {
    let mut ring = Ring::new(RingConfig { batch: 32, ..RingConfig::default() }).unwrap();
    if !ring.setup().min_wait {
        return; // A kernel before 6.12: min_wait is ignored (Setup says so).
    }
    let (mut peer, ours) = UnixStream::pair().unwrap();
    ring.ops().recv_multishot(1, ours.as_raw_fd());
    peer.write_all(b"one").unwrap();
    let start = Instant::now();
    let mut got = Vec::new();
    while got.is_empty() {
        let min_wait = Some(Duration::from_micros(500));
        ring.turn(Some(Duration::from_secs(30)), min_wait, |_, c| got.push(own(c))).unwrap();
        assert!(start.elapsed() < Duration::from_secs(20), "it waited for the whole batch");
    }
    assert_eq!(got, [(1, Got::Data(b"one".to_vec()))]);
}

/// 16 connections' receives and sends into a submission queue of 4: it fills, the ring
/// submits early, and no operation is lost.
#[test]
fn a_full_submission_queue_submits_early_and_loses_nothing() {
    let mut t = Turned::new(RingConfig { entries: 4, ..small((16, 4096)) });
    let pairs: Vec<_> = (0..16).map(|_| UnixStream::pair().unwrap()).collect();
    for (token, (ours, _)) in pairs.iter().enumerate() {
        t.ring.ops().recv_multishot(token as u32, ours.as_raw_fd());
        t.ring.ops().send(token as u32, ours.as_raw_fd(), &pattern(token as u32, 100));
    }
    for (_, peer) in &pairs {
        let mut peer = peer;
        peer.write_all(b"ping").unwrap();
    }
    let all = t
        .until(|got| (0..16).all(|k| got.contains(&(k, Got::Sent)) && received(got, k).len() == 4));
    for (token, (_, peer)) in pairs.iter().enumerate() {
        assert_eq!(received(&all, token as u32), b"ping");
        let mut got = [0u8; 100];
        let mut peer = peer;
        peer.read_exact(&mut got).unwrap();
        assert_eq!(got[..], pattern(token as u32, 100)[..]);
    }
    assert!(t.ring.counters().early_submits > 0, "16 sends fit a queue of 4");
    t.assert_one_enter_a_turn();
}

/// Dropping a ring with a receive armed and a send stuck cancels both and waits for them:
/// every operation ends, so the buffers can be freed.
#[test]
fn winding_down_ends_every_operation() {
    let (ours, _peer) = UnixStream::pair().unwrap();
    let mut ring = Ring::new(RingConfig::default()).unwrap();
    ring.ops().recv_multishot(0, ours.as_raw_fd());
    ring.ops().send(0, ours.as_raw_fd(), &vec![0u8; 1 << 20]);
    ring.turn(Some(Duration::ZERO), None, |_, _| {}).unwrap();
    assert!(ring.core.in_flight >= 2, "the receive and the send are in flight");
    assert!(ring.wind_down(), "{} operations did not end", ring.core.in_flight);
    assert!(ring.core.orphans.is_empty());
}

/// The kernel refusing deferred task running (EINVAL, before 6.1) gets cooperative task
/// running; any other refusal is returned. And such a ring works here.
#[test]
fn without_deferred_task_running_the_ring_is_cooperative() {
    let refusing = |errno| {
        move |t| match t {
            TaskRun::Deferred => Err(io::Error::from_raw_os_error(errno)),
            TaskRun::Cooperative => Ok(()),
        }
    };
    assert_eq!(build_with(refusing(libc::EINVAL)).unwrap().1, TaskRun::Cooperative);
    assert_eq!(build_with(refusing(libc::EPERM)).unwrap_err().raw_os_error(), Some(libc::EPERM));
    assert_eq!(build_with(|_| Ok(())).unwrap().1, TaskRun::Deferred);
    assert_eq!(Ring::new(RingConfig::default()).unwrap().setup().task_run, TaskRun::Deferred);

    let config = small((4, 64));
    let io = build(&config, TaskRun::Cooperative).unwrap();
    let mut t = Turned { ring: Ring::with(io, TaskRun::Cooperative, &config).unwrap(), turns: 0 };
    assert_eq!(t.ring.setup().task_run, TaskRun::Cooperative);
    let (mut peer, ours) = UnixStream::pair().unwrap();
    t.ring.ops().recv_multishot(0, ours.as_raw_fd());
    peer.write_all(&pattern(2, 1000)).unwrap();
    drop(peer);
    let all = t.until(|got| ended(got, 0));
    assert_eq!(stream(&all, 0), (pattern(2, 1000), vec![&Got::Ended(None)]));
    t.assert_one_enter_a_turn();
}

/// The callback queues through the ops it is given: an answer sent on one token, a close of
/// another in the middle of its bytes, after which nothing more of it comes.
#[test]
fn the_callback_answers_and_closes_through_its_ops() {
    let mut ring = Ring::new(small((4, 64))).unwrap();
    let (a, mut a_peer) = UnixStream::pair().unwrap();
    let (b, mut b_peer) = UnixStream::pair().unwrap();
    let a_fd = a.as_raw_fd();
    let mut b = Some(OwnedFd::from(b));
    ring.ops().recv_multishot(0, a_fd);
    ring.ops().recv_multishot(1, b.as_ref().unwrap().as_raw_fd());
    a_peer.write_all(b"ping").unwrap();
    b_peer.write_all(&pattern(3, 1000)).unwrap();
    let mut all = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !all.contains(&(0, Got::Sent)) || !all.iter().any(|(t, _)| *t == 1) {
        assert!(Instant::now() < deadline, "got {:?}", summary(&all));
        ring.turn(Some(Duration::from_millis(100)), None, |ops, c| {
            match (c.token, &c.event) {
                (0, Event::Received(data)) => ops.send(0, a_fd, data),
                (1, Event::Received(_)) => ops.close(1, b.take().unwrap()),
                _ => {}
            }
            all.push(own(c));
        })
        .unwrap();
    }
    for _ in 0..3 {
        ring.turn(Some(Duration::from_millis(20)), None, |_, c| all.push(own(c))).unwrap();
    }
    let mut echo = [0u8; 4];
    a_peer.read_exact(&mut echo).unwrap();
    assert_eq!(&echo, b"ping");
    let of_b: Vec<_> = all.iter().filter(|(t, _)| *t == 1).collect();
    assert_eq!(of_b, [&(1, Got::Data(pattern(3, 1000)[..64].to_vec()))], "one, then nothing");
    assert!(ring.counters().stale > 0);
    assert!(ring.core.orphans.is_empty());
    assert_eq!(ring.core.in_flight, 1, "only token 0's receive is still armed");
}

/// A send to a peer gone fails with EPIPE (and no SIGPIPE ends the process); a receive from
/// a peer that reset the connection ends with ECONNRESET; each once.
#[test]
fn a_peer_gone_is_a_send_failure_and_a_reset_ends_the_receive() {
    let (ours, peer) = UnixStream::pair().unwrap();
    drop(peer);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (reset, _) = listener.accept().unwrap();
    let mut t = Turned::new(RingConfig::default());
    t.ring.ops().send(0, ours.as_raw_fd(), b"to nobody");
    t.ring.ops().recv_multishot(1, tcp.as_raw_fd());
    socket2::SockRef::from(&reset).set_linger(Some(Duration::ZERO)).unwrap();
    drop(reset);
    let mut all = t.until(|got| got.len() == 2);
    for _ in 0..3 {
        all.extend(t.turn(Duration::from_millis(20)));
    }
    all.sort_by_key(|(token, _)| *token);
    assert_eq!(
        all,
        [(0, Got::SendFailed(Some(libc::EPIPE))), (1, Got::Ended(Some(libc::ECONNRESET)))]
    );
    t.assert_one_enter_a_turn();
}

/// A completion queue of 4 for 8 connections' receives: multishot receives that could not
/// post a completion end (after their data, without `F_MORE`); the ring re-arms them, and
/// every byte arrives, in order.
#[test]
fn a_full_completion_queue_loses_no_byte() {
    const N: u32 = 8;
    const LEN: usize = 8 * 1024;
    let mut t = Turned::new(RingConfig { entries: 4, cq_entries: 4, ..small((64, 256)) });
    let pairs: Vec<_> = (0..N).map(|_| UnixStream::pair().unwrap()).collect();
    for (token, (ours, _)) in pairs.iter().enumerate() {
        t.ring.ops().recv_multishot(token as u32, ours.as_raw_fd());
    }
    t.turn(Duration::ZERO);
    for (token, (_, peer)) in pairs.iter().enumerate() {
        let mut peer = peer;
        peer.write_all(&pattern(token as u32, LEN)).unwrap();
        peer.shutdown(Shutdown::Write).unwrap();
    }
    let all = t.until(|got| (0..N).all(|token| ended(got, token)));
    for token in 0..N {
        let (bytes, rest) = stream(&all, token);
        assert!(bytes == pattern(token, LEN), "token {token}: {} bytes, not its own", bytes.len());
        assert_eq!(rest, [&Got::Ended(None)], "token {token}");
    }
    let c = t.ring.counters();
    assert!(c.rearms > c.enobufs_rearms, "no receive ended for a full queue: {c:?}");
    t.assert_one_enter_a_turn();
}

/// A UDP socket's readiness through the ring (QUIC reads and writes its socket itself): a
/// poll for reading says once when datagrams are there (at once if they are already), a poll
/// for writing once when it is writable; forgetting the token cancels its polls, so nothing
/// more reaches the caller and nothing stays in flight.
#[test]
fn a_polled_socket_says_when_it_is_ready_until_it_is_forgotten() {
    let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    a.connect(b.local_addr().unwrap()).unwrap();
    b.connect(a.local_addr().unwrap()).unwrap();
    a.set_nonblocking(true).unwrap();
    let mut t = Turned::new(RingConfig::default());
    t.ring.ops().poll_in(3, a.as_raw_fd());
    t.ring.ops().poll_in(3, a.as_raw_fd()); // armed already: nothing more
    assert!(t.turn(Duration::from_millis(20)).is_empty(), "nothing has arrived");
    let pollin = libc::POLLIN as u32;
    for round in 0..3u8 {
        b.send(&[round; 100]).unwrap();
        b.send(&[round; 100]).unwrap();
        let got = t.until(|all| !all.is_empty());
        assert!(matches!(got[..], [(3, Got::Polled(m))] if m & pollin != 0), "{got:?}");
        assert!(t.turn(Duration::from_millis(20)).is_empty(), "once, for two datagrams");
        // The caller reads what came, then polls again.
        let mut buf = [0u8; 200];
        for _ in 0..2 {
            assert_eq!(a.recv(&mut buf).unwrap(), 100);
            assert_eq!(buf[0], round);
        }
        t.ring.ops().poll_in(3, a.as_raw_fd());
    }
    t.ring.ops().poll_out(3, a.as_raw_fd());
    let got = t.until(|all| !all.is_empty());
    assert!(matches!(got[..], [(3, Got::Polled(m))] if m & libc::POLLOUT as u32 != 0), "{got:?}");
    assert!(t.turn(Duration::from_millis(20)).is_empty(), "a poll for writing is once");
    assert_eq!(t.ring.core.in_flight, 1, "the poll for reading waits");

    t.ring.ops().forget(3);
    b.send(&[9; 100]).unwrap();
    let got = t.turn(Duration::from_millis(50));
    assert!(got.is_empty(), "a forgotten token hears nothing: {got:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while t.ring.core.in_flight > 0 {
        assert!(Instant::now() < deadline, "the cancelled poll never ended");
        let got = t.turn(Duration::from_millis(10));
        assert!(got.is_empty(), "{got:?}");
    }
    t.assert_one_enter_a_turn();

    // The token, reused at once, is polled afresh.
    t.ring.ops().poll_in(3, a.as_raw_fd());
    let got = t.until(|all| !all.is_empty());
    assert!(matches!(got[..], [(3, Got::Polled(m))] if m & pollin != 0), "{got:?}");
}

/// A worker holds a slot a connection, idle ones included (issue 35: 10,000 idle
/// connections in 16 MiB): it was 104 B before the connect addresses moved to one list.
#[test]
fn a_slot_stays_small() {
    assert!(std::mem::size_of::<Slot>() <= 80, "{} B", std::mem::size_of::<Slot>());
}
