//! ab's `-g` file into HdrHistograms. The file has a header, then one row per complete
//! request: `starttime` (a date), `seconds` (epoch), then `ctime`, `dtime`, `ttime` and
//! `wait`, each in milliseconds, rounded by ab (`ap_round_ms`) to whole milliseconds.
//!
//! The histograms are in microseconds like every other tool's, so each value is a multiple
//! of 1,000: ab's millisecond resolution is all there is, and a percentile read from these
//! histograms is only good to a millisecond (0 µs means "under half a millisecond").
//! `total` is ab's `ttime` (from the connection's start, or on a reused keep-alive
//! connection from the previous response's end), `connect` its `ctime` (0 on a reused
//! connection), `first_byte` its `wait` (from the request's last byte written to the
//! response's first byte read). `dtime` is `ttime - ctime`, nothing new, and is skipped.

use hdrhistogram::Histogram;
use herd_stats::LatencySeries;

use super::{empty_histogram, ClientError, Tool, MAX_MICROS};

/// ab 2.3's header line.
const HEADER: &str = "starttime\tseconds\tctime\tdtime\tttime\twait";

/// Which column goes into which histogram (columns counted from 0).
const COLUMNS: [(LatencySeries, usize); 3] =
    [(LatencySeries::Total, 4), (LatencySeries::Connect, 2), (LatencySeries::FirstByte, 5)];

/// `total`, `connect` and `first_byte`, in that order, each with one value per row.
pub(super) fn histograms(tsv: &str) -> Result<Vec<(LatencySeries, Histogram<u64>)>, ClientError> {
    let mut lines = tsv.lines();
    match lines.next() {
        Some(HEADER) => {}
        first => {
            return Err(ClientError::output(
                Tool::Ab,
                format!("wrote a -g file whose first line is {first:?}, expected {HEADER:?}"),
            ))
        }
    }
    let mut out: Vec<(LatencySeries, Histogram<u64>)> = COLUMNS
        .iter()
        .map(|&(series, _)| Ok((series, empty_histogram(Tool::Ab)?)))
        .collect::<Result<_, ClientError>>()?;
    for (i, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        let bad = |why: &str| {
            ClientError::output(
                Tool::Ab,
                format!("wrote a -g file whose row {} {why}: {line:?}", i + 1),
            )
        };
        if fields.len() != 6 {
            return Err(bad("does not have 6 columns"));
        }
        for ((_, h), &(_, column)) in out.iter_mut().zip(&COLUMNS) {
            let ms: u64 = fields[column].parse().map_err(|_| bad("has a non-count"))?;
            // Within the histogram's bounds by the clamp, so recording cannot fail.
            let _ = h.record(ms.saturating_mul(1000).min(MAX_MICROS));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_microseconds() {
        let tsv = format!(
            "{HEADER}\nSat Nov 21 14:07:40 2026\t1795270060\t1\t2\t3\t2\n\
             Sat Nov 21 14:07:40 2026\t1795270060\t0\t0\t0\t0\n"
        );
        let h = histograms(&tsv).unwrap();
        let names: Vec<&str> = h.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["total", "connect", "first_byte"]);
        let (total, connect, first) = (&h[0].1, &h[1].1, &h[2].1);
        // HdrHistogram reads back a bucket's highest value: 3000 µs is 3000..=3001.
        let top = |h: &Histogram<u64>, v| h.highest_equivalent(v);
        assert_eq!((total.len(), total.max(), total.min()), (2, top(total, 3000), 0));
        assert_eq!((connect.max(), first.max()), (top(connect, 1000), top(first, 2000)));
    }

    #[test]
    fn header_only_is_empty() {
        let h = histograms(&format!("{HEADER}\n")).unwrap();
        assert!(h.iter().all(|(_, h)| h.is_empty()));
    }

    #[test]
    fn malformed_files_are_errors_that_quote_the_row() {
        let e = histograms("").unwrap_err().to_string();
        assert!(e.starts_with("ab wrote a -g file whose first line is None"), "{e}");
        let e = histograms(&format!("{HEADER}\na\tb\n")).unwrap_err().to_string();
        assert_eq!(e, r#"ab wrote a -g file whose row 1 does not have 6 columns: "a\tb""#);
        let e = histograms(&format!("{HEADER}\nd\t1\t2\t-3\tx\t4\n")).unwrap_err().to_string();
        assert!(e.contains("row 1 has a non-count"), "{e}");
    }
}
