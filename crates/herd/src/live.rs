//! The live line: while `herd run` runs with stderr on a terminal, one line on stderr
//! rewritten once a second with the elapsed time, the last second's rate and p99, and the
//! errors so far. It is erased before anything else is printed (outputs.rs waits for that),
//! so the summary and step lines are as they would be without it. Nothing is written when
//! stderr is not a terminal: run_cmd.rs does not create a `Live` then, so logs and pipes
//! never see carriage returns or escape sequences.

use std::io::{self, Write};

use herd_run::summary::micros;
use herd_run::{RunSecond, SecondObserver};

/// Go to the start of the line and erase it (ANSI "erase in line", understood by every
/// terminal emulator in use).
const ERASE: &str = "\r\x1b[2K";

#[derive(Debug)]
pub(crate) struct Live {
    /// How many steps a stepped run has.
    steps: Option<usize>,
    /// Failed requests so far, over the whole run.
    errors: u64,
    shown: bool,
}

impl Live {
    pub(crate) fn new(steps: Option<usize>) -> Live {
        Live { steps, errors: 0, shown: false }
    }

    /// Shows second `s` (of step `step`).
    fn show(&mut self, step: Option<usize>, s: &RunSecond) {
        self.errors += s.interval.failed;
        let line = self.line(step, s);
        // Best effort: a terminal that went away is no reason to stop the run.
        let mut err = io::stderr().lock();
        let _ = write!(err, "{ERASE}{line}");
        let _ = err.flush();
        self.shown = true;
    }

    /// Erases the line, if one is shown.
    fn clear(&mut self) {
        if self.shown {
            let mut err = io::stderr().lock();
            let _ = write!(err, "{ERASE}");
            let _ = err.flush();
            self.shown = false;
        }
    }

    fn line(&self, step: Option<usize>, s: &RunSecond) -> String {
        let elapsed = s.second as f64 + s.length.as_secs_f64();
        let p99 = if s.interval.completed > 0 {
            micros(s.interval.latency.quantile_micros(0.99))
        } else {
            "-".to_owned()
        };
        let step = match (step, self.steps) {
            (Some(k), Some(n)) => format!("step {k}/{n}  "),
            _ => String::new(),
        };
        format!(
            "{step}{elapsed:.0}s  {:.0} req/s  {} errors  p99 {p99}",
            s.per_second(),
            self.errors
        )
    }
}

impl SecondObserver for Live {
    fn second(&mut self, step: Option<usize>, s: &RunSecond) {
        self.show(step, s);
    }

    fn end_step(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use herd_run::Interval;

    #[test]
    fn the_line_shows_the_last_second_and_the_errors_so_far() {
        let mut live = Live::new(Some(4));
        let mut interval = Interval { failed: 2, ..Interval::default() };
        for us in [900, 1_234, 1_234] {
            interval.completed += 1;
            interval.latency.record_micros(us);
        }
        let s = RunSecond { second: 11, length: Duration::from_secs(1), interval };
        live.errors = 5;
        assert_eq!(live.line(Some(2), &s), "step 2/4  12s  3 req/s  5 errors  p99 1.234ms");
        let empty =
            RunSecond { second: 0, length: Duration::from_secs(1), interval: Interval::default() };
        assert_eq!(Live::new(None).line(None, &empty), "1s  0 req/s  0 errors  p99 -");
    }
}
