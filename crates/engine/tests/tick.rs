//! `Recorder::tick`: the worker's clock reaches the recorder at least every ~100 ms while the
//! run goes on, whether requests complete or not (a server that never answers), and not after
//! the run. herd run's per-second outputs rely on it to report seconds in which nothing ended.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::time::{Duration, Instant};

use herd_engine::{Answer, Completed, Control, Failed, Recorder, StopAt};
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
    let run = herd_engine::run(&sp, &Control::new(), |_, _| Ticks::default()).unwrap();
    assert_eq!(run.recorders.len(), 2);
    for Ticks(ticks) in &run.recorders {
        assert!(ticks.len() >= 8, "{} ticks in 1.2 s", ticks.len());
        let mut at = run.started;
        for &t in ticks.iter().chain([&run.ended]) {
            // ~100 ms apart; generous for a loaded machine, far below a second.
            assert!(t - at <= Duration::from_millis(400), "a gap of {:?}", t - at);
            at = t;
        }
        assert!(
            ticks.iter().all(|&t| t <= run.ended + Duration::from_millis(150)),
            "after the run"
        );
    }
}
