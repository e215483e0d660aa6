//! `Recorder::tick`: the worker's clock reaches the recorder at least every ~100 ms while the
//! run goes on, whether requests complete or not (a server that never answers), and not after
//! the run. herd run's per-second outputs rely on it to report seconds in which nothing ended.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::time::{Duration, Instant};

use herd_engine::{Answer, Completed, Control, Failed, Recorder, StopAt};
use herd_testutil::hiccups::Hiccups;
use util::{spec_until, TestServer};

/// The time of every tick.
#[derive(Debug, Default)]
struct Ticks(Vec<Instant>);

impl Recorder for Ticks {
    fn completed(&mut self, _: &Completed<'_>) -> Answer {
        Answer::Continue
    }
    fn failed(&mut self, _: &Failed) -> Answer {
        Answer::Continue
    }
    fn tick(&mut self, now: Instant) {
        self.0.push(now);
    }
}

#[test]
fn ticks_come_while_nothing_completes() {
    // Reads the request and never answers: no outcome before the deadline.
    let server = TestServer::start(|mut s| {
        let _ = util::read_head(&mut s);
        std::thread::sleep(Duration::from_secs(3));
    });
    let mut sp = spec_until(server.port, 2, StopAt::Deadline(Duration::from_millis(1200)));
    sp.threads = util::nz(2);
    // The default 30 s timeout: the checks that carry the ticks run every 100 ms.
    sp.timeout = Duration::from_secs(30);
    let hiccups = Hiccups::watch();
    let run = herd_engine::run(&sp, &Control::new(), |_, _| Ticks::default()).unwrap();
    // A loaded machine wakes the worker late by as much as it woke a sleeping thread
    // meanwhile: the bounds below grow by that, and stay tight on a quiet machine.
    let seen = hiccups.stop();
    assert_eq!(run.recorders.len(), 2);
    // ~100 ms apart: at least 8 in 1.2 s on a quiet machine (1,200 / 140).
    let at_least = 1200 / (140 + seen.worst.as_millis());
    let gap = Duration::from_millis(400) + seen.worst;
    for Ticks(ticks) in &run.recorders {
        assert!(ticks.len() as u128 >= at_least, "{} ticks in 1.2 s; {seen:?}", ticks.len());
        let mut at = run.started;
        for &t in ticks.iter().chain([&run.ended]) {
            assert!(t - at <= gap, "a gap of {:?}; {seen:?}", t - at);
            at = t;
        }
        assert!(
            ticks.iter().all(|&t| t <= run.ended + Duration::from_millis(150) + seen.worst),
            "after the run; {seen:?}"
        );
    }
}
