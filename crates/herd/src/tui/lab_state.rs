//! What `herd lab run --tui` shows, kept by the lab's progress calls: the matrix of cells by
//! repetition filling in with each run's figure, the run in flight (its cell, repetition and
//! time), its seconds as herd's client writes them (`--series`, followed from the view's own
//! thread), and the lab's notes. Pure data and the series' reading: drawing is lab_draw.rs's.

use std::collections::{HashMap, VecDeque};
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::PathBuf;
use std::time::Instant;

use herd_lab::runner::progress::RunSummary;

/// Notes kept on the screen (all of them are printed once the view closes).
const NOTES_SHOWN: usize = 4;
/// Seconds of the run in flight kept for its charts.
const HISTORY: usize = 600;

/// One repetition of one cell, as the matrix shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mark {
    /// In flight.
    Running,
    /// Finished: its figure (requests or megabits per second).
    Figure(f64),
    Failed,
}

/// One second of the run in flight, from its series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LiveSecond {
    pub(crate) rate: f64,
    pub(crate) failed: u64,
    /// p50 and p99 in milliseconds; None for a second without a response.
    pub(crate) latency_ms: Option<[f64; 2]>,
}

/// The run in flight.
#[derive(Debug)]
pub(crate) struct Current {
    pub(crate) n: usize,
    pub(crate) key: String,
    /// From 0.
    pub(crate) repetition: u32,
    pub(crate) since: Instant,
}

/// The lab view's state.
#[derive(Debug)]
pub(crate) struct LabView {
    pub(crate) name: String,
    /// The cells in the report's order, and each one's repetitions so far.
    pub(crate) cells: Vec<String>,
    pub(crate) marks: HashMap<(String, u32), Mark>,
    /// Repetitions seen so far (the matrix's columns).
    pub(crate) repetitions: u32,
    pub(crate) planned: usize,
    /// Runs stored (a resumed experiment's earlier ones included).
    pub(crate) done: usize,
    /// Runs finished by this process, and since when: the ETA's rate.
    pub(crate) finished_here: usize,
    pub(crate) started: Instant,
    pub(crate) failed: usize,
    pub(crate) current: Option<Current>,
    /// The run in flight's seconds (herd's client only).
    pub(crate) live: VecDeque<LiveSecond>,
    pub(crate) unit: &'static str,
    pub(crate) notes: Vec<String>,
    pub(crate) stopping: bool,
    pub(crate) version: u64,
    follow: Option<Follow>,
    /// The run in flight's time as last drawn, in whole seconds.
    shown_seconds: Option<u64>,
}

impl LabView {
    /// The view of experiment `name`; `series`, where herd's measured runs write their
    /// seconds (None: no run is followed).
    pub(crate) fn new(name: String, series: Option<PathBuf>) -> LabView {
        LabView {
            name,
            cells: Vec::new(),
            marks: HashMap::new(),
            repetitions: 0,
            planned: 0,
            done: 0,
            finished_here: 0,
            started: Instant::now(),
            failed: 0,
            current: None,
            live: VecDeque::new(),
            unit: "req/s",
            notes: Vec::new(),
            stopping: false,
            version: 0,
            follow: series.map(Follow::new),
            shown_seconds: None,
        }
    }

    pub(crate) fn cells(&mut self, keys: &[&str]) {
        self.cells = keys.iter().map(|k| (*k).to_owned()).collect();
        self.version += 1;
    }

    pub(crate) fn begin(&mut self, done: usize, planned: usize) {
        (self.done, self.planned) = (done, planned);
        self.started = Instant::now();
        self.version += 1;
    }

    pub(crate) fn run_started(&mut self, n: usize, planned: usize, key: &str, repetition: u32) {
        self.planned = planned;
        if !self.cells.iter().any(|c| c == key) {
            // An A/A twin, or a cell the matrix did not list: a row of its own.
            self.cells.push(key.to_owned());
        }
        self.repetitions = self.repetitions.max(repetition + 1);
        self.marks.insert((key.to_owned(), repetition), Mark::Running);
        self.current = Some(Current { n, key: key.to_owned(), repetition, since: Instant::now() });
        self.live.clear();
        if let Some(f) = &mut self.follow {
            f.restart();
        }
        self.version += 1;
    }

    pub(crate) fn run_finished(&mut self, s: &RunSummary) {
        let mark = match s.outcome.failure_reason() {
            Some(reason) => {
                self.failed += 1;
                self.notes.push(format!(
                    "failed: {} rep {}: {reason}",
                    s.cell_key,
                    s.repetition + 1
                ));
                Mark::Failed
            }
            None => match s.mbit_per_second {
                Some(mbit) => {
                    self.unit = "Mbit/s";
                    Mark::Figure(mbit)
                }
                None => Mark::Figure(s.requests_per_second),
            },
        };
        self.marks.insert((s.cell_key.clone(), s.repetition), mark);
        self.done += 1;
        self.finished_here += 1;
        self.current = None;
        self.version += 1;
    }

    pub(crate) fn replanned(&mut self, planned: usize, why: &str) {
        self.planned = planned;
        self.note(why);
    }

    pub(crate) fn note(&mut self, text: &str) {
        self.notes.push(text.to_owned());
        self.version += 1;
    }

    pub(crate) fn stop(&mut self) {
        self.stopping = true;
        self.version += 1;
    }

    /// The last notes, for the screen.
    pub(crate) fn recent_notes(&self) -> &[String] {
        &self.notes[self.notes.len().saturating_sub(NOTES_SHOWN)..]
    }

    /// What is left, at the rate of the runs finished here; None before the first.
    pub(crate) fn eta(&self) -> Option<std::time::Duration> {
        (self.finished_here > 0).then(|| {
            let per_run = self.started.elapsed() / self.finished_here as u32;
            per_run * self.planned.saturating_sub(self.done) as u32
        })
    }

    /// A cell's median figure over its finished repetitions.
    pub(crate) fn median(&self, key: &str) -> Option<f64> {
        let mut v: Vec<f64> = (0..self.repetitions)
            .filter_map(|r| match self.marks.get(&(key.to_owned(), r)) {
                Some(Mark::Figure(f)) => Some(*f),
                _ => None,
            })
            .collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        Some(if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 })
    }

    /// Reads what the run in flight wrote to its series since the last look; a new second
    /// of the run in flight is a change too (its time on the screen).
    pub(crate) fn follow(&mut self) {
        let seconds = self.current.as_ref().map(|c| c.since.elapsed().as_secs());
        if seconds != self.shown_seconds {
            self.shown_seconds = seconds;
            self.version += 1;
        }
        let Some(f) = &mut self.follow else { return };
        let seconds = f.read();
        if seconds.is_empty() {
            return;
        }
        for s in seconds {
            if self.live.len() == HISTORY {
                self.live.pop_front();
            }
            self.live.push_back(s);
        }
        self.version += 1;
    }
}

/// A `--series` CSV file as herd's client writes it: read from where the last look ended,
/// whole lines only; the header names the columns (a stepped run's has `step` first).
#[derive(Debug)]
struct Follow {
    path: PathBuf,
    offset: u64,
    partial: String,
    columns: Option<Columns>,
}

/// Where the view's figures are in a row.
#[derive(Debug, Clone, Copy)]
struct Columns {
    rps: usize,
    failed: usize,
    p50: usize,
    p99: usize,
}

impl Follow {
    fn new(path: PathBuf) -> Follow {
        Follow { path, offset: 0, partial: String::new(), columns: None }
    }

    /// A new run writes a new file: the old one is removed, so that its seconds are never
    /// read as the new run's.
    fn restart(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        (self.offset, self.columns) = (0, None);
        self.partial.clear();
    }

    fn read(&mut self) -> Vec<LiveSecond> {
        let Ok(mut file) = std::fs::File::open(&self.path) else { return Vec::new() };
        let mut text = String::new();
        let read = file
            .seek(SeekFrom::Start(self.offset))
            .and_then(|_| file.take(1 << 20).read_to_string(&mut text));
        if read.is_err() {
            return Vec::new();
        }
        self.offset += text.len() as u64;
        self.partial.push_str(&text);
        let mut out = Vec::new();
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            let fields: Vec<&str> = line.trim_end().split(',').collect();
            match self.columns {
                None => self.columns = Columns::of(&fields),
                Some(c) => out.extend(c.second(&fields)),
            }
        }
        out
    }
}

impl Columns {
    fn of(header: &[&str]) -> Option<Columns> {
        let at = |name: &str| header.iter().position(|h| *h == name);
        Some(Columns {
            rps: at("rps")?,
            failed: at("failed")?,
            p50: at("p50_us")?,
            p99: at("p99_us")?,
        })
    }

    fn second(&self, f: &[&str]) -> Option<LiveSecond> {
        let ms = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).map(|us| us / 1000.0);
        Some(LiveSecond {
            rate: f.get(self.rps)?.parse().ok()?,
            failed: f.get(self.failed)?.parse().ok()?,
            latency_ms: ms(self.p50).zip(ms(self.p99)).map(|(a, b)| [a, b]),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn the_series_is_followed_line_by_line_and_restarted_per_run() {
        let dir = std::env::temp_dir().join(format!("herd-lab-view-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("series.csv");
        let mut v = LabView::new("e".into(), Some(path.clone()));
        v.cells(&["a", "b"]);
        v.begin(0, 4);
        v.run_started(1, 4, "a", 0);
        v.follow();
        assert!(v.live.is_empty(), "no file yet");
        let mut f = std::fs::File::create(&path).unwrap();
        write!(f, "second,requests,failed,bytes_read,rps,p50_us,p90_us,p99_us,p99_9_us,max_us\n0,100,1,9,100.0,250,400,900,1000,1200\n1,200,0,9,200.0,").unwrap();
        v.follow();
        assert_eq!(v.live.len(), 1, "the half-written line waits");
        assert_eq!(v.live[0], LiveSecond { rate: 100.0, failed: 1, latency_ms: Some([0.25, 0.9]) });
        writeln!(f, ",,,,").unwrap();
        v.follow();
        assert_eq!(v.live[1], LiveSecond { rate: 200.0, failed: 0, latency_ms: None });
        v.run_started(2, 4, "b", 0);
        assert!(v.live.is_empty() && !path.exists(), "a new run starts from nothing");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_matrix_fills_in_and_each_cell_has_its_median() {
        let mut v = LabView::new("e".into(), None);
        v.cells(&["a", "b"]);
        v.begin(0, 6);
        for (rep, figure) in [(0, 10.0), (1, 30.0), (2, 20.0)] {
            v.run_started(rep as usize + 1, 6, "a", rep);
            assert_eq!(v.marks[&("a".to_owned(), rep)], Mark::Running);
            v.run_finished(&summary("a", rep, figure));
        }
        assert_eq!(v.median("a"), Some(20.0));
        assert_eq!(v.median("b"), None);
        assert_eq!((v.done, v.repetitions), (3, 3));
        assert!(v.eta().is_some());
    }

    fn summary(key: &str, repetition: u32, rps: f64) -> RunSummary {
        RunSummary {
            cell_key: key.into(),
            repetition,
            outcome: herd_store::Outcome::Ok,
            requests_per_second: rps,
            mbit_per_second: None,
            failed: 0,
            seconds: 1.0,
            client_flag: None,
        }
    }
}
