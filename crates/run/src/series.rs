//! `--series FILE`: the run second by second, one row per second written as soon as the
//! second is complete (a `tail -f` follows the run), as CSV or NDJSON chosen by the file's
//! extension. Columns and meaning: docs/run-series.md. Writes rows; merging and timing are
//! merge.rs's.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::RunError;
use crate::merge::RunSecond;

/// The series' columns after `step`: the CSV header, and the NDJSON keys in this order.
const COLUMNS: [&str; 10] = [
    "second",
    "requests",
    "failed",
    "bytes_read",
    "rps",
    "p50_us",
    "p90_us",
    "p99_us",
    "p99_9_us",
    "max_us",
];

/// The quantiles of the `p…_us` columns, in order.
const QUANTILES: [f64; 4] = [0.50, 0.90, 0.99, 0.999];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    /// One JSON object per line.
    Ndjson,
}

/// An open `--series` file (or any writer).
pub struct Series {
    path: PathBuf,
    format: Format,
    out: BufWriter<Box<dyn Write + Send>>,
}

/// clap's parser for `--series`: the extension must name a format.
pub fn parse_path(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    format_of(&path).map(|_| path)
}

impl Series {
    /// Creates the file (and writes the CSV header), before the run starts.
    pub fn create(path: &Path, stepped: bool) -> Result<Series, RunError> {
        let format = format_of(path).map_err(|why| RunError::Create {
            flag: "--series",
            path: path.to_owned(),
            source: io::Error::other(why),
        })?;
        let file = File::create(path).map_err(|source| RunError::Create {
            flag: "--series",
            path: path.to_owned(),
            source,
        })?;
        Series::new(Box::new(file), path, format, stepped)
    }

    /// A series written to `out` (`path` names it in errors).
    pub fn new(
        out: Box<dyn Write + Send>,
        path: &Path,
        format: Format,
        stepped: bool,
    ) -> Result<Series, RunError> {
        let mut series = Series { path: path.to_owned(), format, out: BufWriter::new(out) };
        if format == Format::Csv {
            let header =
                if stepped { format!("step,{}", COLUMNS.join(",")) } else { COLUMNS.join(",") };
            let written = writeln!(series.out, "{header}").and_then(|()| series.out.flush());
            written.map_err(|e| series.error(e))?;
        }
        Ok(series)
    }

    /// Appends one second (of step `step`, in a stepped run) and flushes it.
    pub(crate) fn write(&mut self, step: Option<usize>, s: &RunSecond) -> Result<(), RunError> {
        let written = row(&mut self.out, self.format, step, s).and_then(|()| self.out.flush());
        written.map_err(|e| self.error(e))
    }

    fn error(&self, source: io::Error) -> RunError {
        RunError::Output { flag: "--series", path: self.path.clone(), source }
    }
}

impl std::fmt::Debug for Series {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Series").field("path", &self.path).field("format", &self.format).finish()
    }
}

fn format_of(path: &Path) -> Result<Format, String> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("csv") => Ok(Format::Csv),
        Some("ndjson" | "jsonl") => Ok(Format::Ndjson),
        _ => Err(format!(
            "`{}`: the extension chooses the format: .csv for CSV, .ndjson or .jsonl for one \
             JSON object per line",
            path.display()
        )),
    }
}

/// One row: the figures in [`COLUMNS`] order; latency columns empty (CSV) or null (NDJSON)
/// when no request completed in the second.
fn row(out: &mut dyn Write, format: Format, step: Option<usize>, s: &RunSecond) -> io::Result<()> {
    let i = &s.interval;
    let latency: Vec<Option<u64>> = QUANTILES
        .iter()
        .map(|&q| i.latency.quantile_micros(q))
        .chain([i.latency.max_micros()])
        .map(|us| (i.completed > 0).then_some(us))
        .collect();
    let rps = format!("{:.1}", s.per_second());
    let counts = [s.second, i.completed, i.failed, i.bytes_read].map(|n| n.to_string());
    match format {
        Format::Csv => {
            let mut fields: Vec<String> = step.map(|k| k.to_string()).into_iter().collect();
            fields.extend(counts);
            fields.push(rps);
            fields.extend(latency.iter().map(|v| v.map_or(String::new(), |us| us.to_string())));
            writeln!(out, "{}", fields.join(","))
        }
        Format::Ndjson => {
            let mut values: Vec<String> = counts.into();
            values.push(rps);
            values.extend(latency.iter().map(|v| v.map_or("null".to_owned(), |us| us.to_string())));
            let mut pairs: Vec<String> =
                step.map(|k| format!("\"step\":{k}")).into_iter().collect();
            pairs.extend(COLUMNS.iter().zip(&values).map(|(k, v)| format!("\"{k}\":{v}")));
            writeln!(out, "{{{}}}", pairs.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use herd_record::Interval;

    fn second(second: u64, length_ms: u64, latencies: &[u64], failed: u64) -> RunSecond {
        let mut interval = Interval { failed, bytes_read: 100, ..Interval::default() };
        for &us in latencies {
            interval.completed += 1;
            interval.latency.record_micros(us);
        }
        RunSecond { second, length: Duration::from_millis(length_ms), interval }
    }

    fn check(format: Format, step: Option<usize>, s: &RunSecond, expect: &str) {
        let mut out = Vec::new();
        row(&mut out, format, step, s).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expect);
    }

    #[test]
    fn csv_rows() {
        let full = second(3, 1000, &[100, 200, 300, 400], 1);
        check(Format::Csv, None, &full, "3,4,1,100,4.0,200,400,400,400,400\n");
        check(Format::Csv, Some(2), &full, "2,3,4,1,100,4.0,200,400,400,400,400\n");
        // The last second of a run may be short: its rate is over its own length.
        check(Format::Csv, None, &second(4, 500, &[10], 0), "4,1,0,100,2.0,10,10,10,10,10\n");
        // A stalled second: zeros, and no latency at all rather than a made-up 0.
        check(Format::Csv, None, &second(5, 1000, &[], 2), "5,0,2,100,0.0,,,,,\n");
    }

    #[test]
    fn ndjson_rows_parse_and_keep_the_column_order() {
        let mut out = Vec::new();
        row(&mut out, Format::Ndjson, Some(1), &second(0, 1000, &[], 0)).unwrap();
        let text = String::from_utf8(out).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["step"], 1);
        assert_eq!(v["rps"], 0.0);
        assert!(v["p99_us"].is_null() && v["max_us"].is_null(), "{v}");
        let keys: Vec<&str> = text.split('"').skip(1).step_by(2).collect();
        assert_eq!(keys[1..], COLUMNS);
        check(
            Format::Ndjson,
            None,
            &second(7, 1000, &[1000], 0),
            "{\"second\":7,\"requests\":1,\"failed\":0,\"bytes_read\":100,\"rps\":1.0,\
             \"p50_us\":1000,\"p90_us\":1000,\"p99_us\":1000,\"p99_9_us\":1000,\"max_us\":1000}\n",
        );
    }

    #[test]
    fn the_extension_chooses_the_format() {
        assert_eq!(format_of(Path::new("a/b.csv")), Ok(Format::Csv));
        assert_eq!(format_of(Path::new("b.CSV")), Ok(Format::Csv));
        assert_eq!(format_of(Path::new("b.ndjson")), Ok(Format::Ndjson));
        assert_eq!(format_of(Path::new("b.jsonl")), Ok(Format::Ndjson));
        for bad in ["b.json", "b.txt", "b", "csv"] {
            let e = parse_path(bad).unwrap_err();
            assert!(e.contains(".csv") && e.contains(".ndjson") && e.contains(".jsonl"), "{e}");
        }
    }
}
