//! `--hlog FILE`: the run as an HdrHistogram interval log, one histogram per second of the
//! latency from each request's intended start, in microseconds, written as each second
//! completes. The format is the one HdrHistogram's own tools read (Java's
//! `HistogramLogReader` and `HistogramLogProcessor`, the Rust crate's `IntervalLogIterator`):
//! a header with StartTime and BaseTime (the measurement start on the wall clock), then
//! `[Tag=step-K,]start,length,max,histogram` lines, start in seconds since BaseTime.
//!
//! Histograms are in the "V2 compressed" encoding, not plain V2: Java's `HistogramLogReader`
//! decodes interval lines with `decodeFromCompressedByteBuffer`, which accepts only that, and
//! most HdrHistogram tooling (HistogramLogProcessor, HdrHistogramVisualizer) is built on it.
//! Its DEFLATE stream is stored rather than compressed, to stay in herd run's memory budget:
//! `herd_stats::hdr` says why.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use herd_stats::hdr::StoredV2;

use crate::error::RunError;
use crate::merge::RunSecond;
use crate::outputs::StepStart;

/// An open `--hlog` file (or any writer).
pub struct Hlog {
    path: PathBuf,
    url: String,
    out: BufWriter<Box<dyn Write + Send>>,
    serializer: StoredV2,
    /// The first step's measurement start: the log's BaseTime, once written.
    base: Option<Instant>,
    /// Where the current step starts, from `base`.
    step_offset: Duration,
}

impl std::fmt::Debug for Hlog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hlog").field("path", &self.path).field("base", &self.base).finish()
    }
}

impl Hlog {
    /// Creates the file, before the run starts; the header waits for the measurement start.
    pub fn create(path: &Path, url: &str) -> Result<Hlog, RunError> {
        let file = File::create(path).map_err(|source| RunError::Create {
            flag: "--hlog",
            path: path.to_owned(),
            source,
        })?;
        Ok(Hlog::new(Box::new(file), path, url))
    }

    /// A log written to `out` (`path` names it in errors).
    pub fn new(out: Box<dyn Write + Send>, path: &Path, url: &str) -> Hlog {
        Hlog {
            path: path.to_owned(),
            url: url.to_owned(),
            out: BufWriter::new(out),
            serializer: StoredV2::default(),
            base: None,
            step_offset: Duration::ZERO,
        }
    }

    /// A step's seconds start at `start.origin`; the first step writes the header.
    pub(crate) fn begin_step(&mut self, start: &StepStart) -> Result<(), RunError> {
        let base = match self.base {
            Some(base) => base,
            None => {
                self.header(start).map_err(|e| self.error(e))?;
                self.base = Some(start.origin);
                start.origin
            }
        };
        self.step_offset = start.origin.saturating_duration_since(base);
        Ok(())
    }

    /// Appends one second (tagged `step-K` in a stepped run) and flushes it.
    pub(crate) fn write(&mut self, step: Option<usize>, s: &RunSecond) -> Result<(), RunError> {
        let tag_text = step.map(|k| format!("step-{k}"));
        // `Tag::new` refuses only commas, spaces and line breaks, which "step-K" has none of.
        let tag = tag_text.as_deref().and_then(Tag::new);
        let start = self.step_offset + Duration::from_secs(s.second);
        // The crate's log writer borrows the file and the serializer for its lifetime; a
        // builder without headers writes nothing, so one per line keeps this struct free of
        // self-borrows at no cost.
        let written = IntervalLogWriterBuilder::new()
            .begin_log_with(&mut self.out, &mut self.serializer)
            .and_then(|mut log| {
                log.write_histogram(s.interval.latency.histogram(), start, s.length, tag)
                    .map_err(|e| io::Error::other(format!("{e:?}")))
            })
            .and_then(|()| self.out.flush());
        written.map_err(|e| self.error(e))
    }

    pub(crate) fn close(mut self) -> Result<(), RunError> {
        self.out.flush().map_err(|e| self.error(e))
    }

    fn header(&mut self, start: &StepStart) -> io::Result<()> {
        IntervalLogWriterBuilder::new()
            .add_comment(&format!("herd run {}", self.url))
            .add_comment(
                "latency from each request's intended start (corrected for coordinated \
                 omission), in microseconds, one interval per second",
            )
            .add_comment("[Histogram log format version 1.3]")
            .with_start_time(start.origin_wall)
            .with_base_time(start.origin_wall)
            .begin_log_with(&mut self.out, &mut self.serializer)?;
        // The column legend Java's HistogramLogWriter writes, which readers skip.
        writeln!(
            self.out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        self.out.flush()
    }

    fn error(&self, source: io::Error) -> RunError {
        RunError::Output { flag: "--hlog", path: self.path.clone(), source }
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use base64::Engine as _;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::Histogram;

    use super::*;
    use herd_record::Interval;

    #[test]
    fn reads_back_with_the_crates_reader() {
        let path = std::env::temp_dir().join(format!("herd-hlog-unit-{}.hlog", std::process::id()));
        let mut h = Hlog::create(&path, "http://127.0.0.1:1/").unwrap();
        let origin = Instant::now();
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let start = StepStart { step: Some(2), workers: 1, origin, origin_wall: wall };
        h.begin_step(&start).unwrap();
        let mut interval = Interval::default();
        for us in [150, 2_500, 70_000] {
            interval.completed += 1;
            interval.latency.record_micros(us);
        }
        let s = RunSecond { second: 3, length: Duration::from_millis(500), interval };
        h.write(Some(2), &s).unwrap();
        h.close().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let entries: Vec<_> = IntervalLogIterator::new(&bytes).collect::<Result<_, _>>().unwrap();
        assert_eq!(entries[0], LogEntry::StartTime(Duration::from_secs(1_700_000_000)));
        assert_eq!(entries[1], LogEntry::BaseTime(Duration::from_secs(1_700_000_000)));
        let LogEntry::Interval(i) = &entries[2] else { panic!("{entries:?}") };
        assert_eq!(i.tag().map(|t| t.as_str()), Some("step-2"));
        assert_eq!(i.start_timestamp(), Duration::from_secs(3));
        assert_eq!(i.duration(), Duration::from_millis(500));
        assert_eq!(i.max(), s.interval.latency.max_micros() as f64);
        assert_eq!(entries.len(), 3);
        let raw = base64::engine::general_purpose::STANDARD.decode(i.encoded_histogram()).unwrap();
        let back: Histogram<u64> = Deserializer::new().deserialize(&mut &raw[..]).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back.max(), s.interval.latency.max_micros());
        // The compressed cookie (0x1c849304 | 0x10), for Java's reader.
        assert_eq!(raw[..4], [0x1c, 0x84, 0x93, 0x14]);
    }
}
