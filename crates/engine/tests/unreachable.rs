//! A run against a port where nothing listens (issue 31: `herd run -d 2s` made 784 failed
//! connects to nothing). With [`Unreachable::GiveUp`] it stops once its first attempts have
//! all been refused — in a closed loop, over HTTP/1 and HTTP/2, and in an open loop — having
//! counted only those; with `KeepTrying` (herd ab) it tries to its end; and once a connection
//! has connected it never gives up, counting failures as before.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::io::Write;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use herd_engine::{
    Arrivals, Control, H2Settings, Reach, Reuse, RunSpec, StopAt, Unreachable, Wire,
};
use herd_stats::FailureKind;
use util::{nz, spec_until, Counts};

/// Far longer than giving up takes, far shorter than the run's own 10 s: a busy 2-core
/// machine still ends well inside it.
const WITHIN: Duration = Duration::from_secs(3);

/// `connections` on 2 threads for 10 s to a refused port, giving up.
fn to_nothing(connections: u32) -> RunSpec {
    let port = herd_testutil::ports::closed_port();
    let mut sp = spec_until(port, connections, StopAt::Deadline(Duration::from_secs(10)));
    sp.unreachable = Unreachable::GiveUp;
    sp
}

/// Runs `spec`; its counts, how it ended, and how long it took.
fn run(spec: &RunSpec) -> (Counts, herd_engine::Run<Counts>, Duration) {
    let control = Control::new();
    let t = Instant::now();
    let r = herd_engine::run(spec, &control, |_, _| Counts::default()).unwrap();
    let took = t.elapsed();
    let mut c = Counts::default();
    for w in &r.recorders {
        c.merge(w);
    }
    (c, r, took)
}

/// Every failure a failed connect, and between `lo` and `hi` of them.
fn only_connects(c: &Counts, lo: u64, hi: u64) {
    let connects = c.failures.get(&FailureKind::Connect).copied().unwrap_or(0);
    assert_eq!(connects, c.failures_total(), "{c:?}");
    assert!((lo..=hi).contains(&connects), "{connects} failed connects, not {lo} to {hi}: {c:?}");
}

#[test]
fn a_closed_loop_gives_up_once_each_connection_was_refused() {
    let (c, r, took) = run(&to_nothing(8));
    assert!(took < WITHIN, "{took:?}");
    assert_eq!(r.reach, Reach::GaveUp);
    assert!(!r.interrupted, "giving up is no interruption");
    assert_eq!(c.completed, 0);
    // Each of the 8 once; the other worker may count one more before it sees the run gave up.
    only_connects(&c, 8, 8 + 1);
}

/// HTTP/2's worker too; a refused connect is a failed connect there (it was counted as a
/// failed write: epoll reports EPOLLOUT with the error).
#[test]
fn an_http2_run_gives_up_too() {
    let mut sp = to_nothing(8);
    sp.schedule = util::KEEP_ALIVE;
    sp.wire = Wire::Http2(H2Settings::new(nz(4)));
    let (c, r, took) = run(&sp);
    assert!(took < WITHIN, "{took:?}");
    assert_eq!(r.reach, Reach::GaveUp);
    only_connects(&c, 8, 8 + 1);
}

/// An open loop opens its connections one due request at a time: it gives up after its
/// first three, not after one per connection (50 at 20 a second would be 2.5 s).
#[test]
fn an_open_loop_gives_up_after_its_first_attempts() {
    let mut sp = to_nothing(50);
    sp.schedule = util::rate(20.0, Arrivals::Uniform, Reuse::Close);
    let (c, r, took) = run(&sp);
    assert!(took < WITHIN, "{took:?}");
    assert_eq!(r.reach, Reach::GaveUp);
    only_connects(&c, u64::from(Unreachable::OPEN_LOOP_ATTEMPTS), 3 + 1);
}

/// herd ab's way: every request it was asked for is tried and counted.
#[test]
fn keep_trying_counts_every_refusal() {
    let mut sp = to_nothing(2);
    sp.unreachable = Unreachable::KeepTrying;
    sp.stop = StopAt::Requests(std::num::NonZeroU64::new(40).unwrap());
    let (c, r, _) = run(&sp);
    assert_eq!(r.reach, Reach::Never);
    only_connects(&c, 40, 40);
}

/// A server that answered once and then went away: the run was reached, so it goes on to its
/// deadline counting every refusal, as before.
#[test]
fn a_run_that_connected_does_not_give_up() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        util::read_head(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        // The listener closes with the answer: every connect after it is refused.
    });
    let mut sp = spec_until(port, 1, StopAt::Deadline(Duration::from_millis(600)));
    sp.threads = nz(1);
    sp.unreachable = Unreachable::GiveUp;
    let (c, r, took) = run(&sp);
    server.join().unwrap();
    assert_eq!(r.reach, Reach::Connected);
    assert_eq!(c.completed, 1, "{c:?}");
    assert!(took >= Duration::from_millis(550), "it stopped early: {took:?} {c:?}");
    // Refused every 10 ms for about 0.6 s; the first attempts alone would be 1.
    assert!(c.failures_total() >= 5, "{c:?}");
}

/// A connect that fails on herd's own side (here: a source address this host does not have,
/// EADDRNOTAVAIL) says nothing of the target: it is counted, and the run does not give up on
/// a server it never tried to reach, with a hint that would send the user looking there.
#[test]
fn a_failure_of_herds_own_side_does_not_give_the_target_up() {
    let mut sp = to_nothing(2);
    sp.stop = StopAt::Deadline(Duration::from_millis(600));
    // Not an address of this host: bind() refuses it before any packet leaves.
    sp.socket.bind = vec!["198.51.100.7".parse().unwrap()];
    let (c, r, took) = run(&sp);
    assert_eq!(r.reach, Reach::Never, "{c:?}");
    assert!(took >= Duration::from_millis(500), "ran to its end: {took:?}");
    assert!(c.failures.get(&FailureKind::Connect).copied().unwrap_or(0) > 2, "{c:?}");
}
