//! ab's side files: the `-e` CSV of percentages served and the `-g` gnuplot TSV.
//!
//! Both come from the stats array as ab leaves it after its last sort, by total time; ab writes
//! them only when `done > 0` and never with `-w` (see [`super::writes_side_files`]), and these
//! functions write nothing in those cases, so the caller should not create the file either.

use std::io::{self, Write};

use chrono::{Local, TimeZone};

use crate::results::AbResults;

use super::cfmt::{ap_double_ms, ap_round_ms, apr_ctime, apr_time_sec, c_fixed};
use super::stats;

/// The `-e` file: `Percentage served,Time in ms`, then rows 0..=100 as `"%d,%.3f"` with the
/// time in milliseconds (not rounded to whole ms, unlike the console table).
///
/// Row `i` is `stats[(unsigned long)(0.5 + (double)done * i / 100.0)]`, which rounds the rank
/// where the console table truncates it; row 0 is the fastest and row 100 the slowest request.
/// Where ab's index runs past its array (done < 100, last rows) herd uses the slowest request
/// (docs/ab-compat.md). Writes nothing when ab would not create the file (no request
/// completed, or `-w`).
pub fn write_csv(r: &AbResults, out: &mut dyn Write) -> io::Result<()> {
    if !super::writes_side_files(r) {
        return Ok(());
    }
    let by_total = stats::sort_by_total(&r.samples);
    out.write_all(b"Percentage served,Time in ms\n")?;
    for i in 0..=100u32 {
        let us = stats::csv_sample(&by_total, i).map_or(0, |s| s.time_us());
        // `t = ap_double_ms(stats[...].time)`: `(double)time / 1000.0`.
        writeln!(out, "{i},{}", c_fixed(ap_double_ms(us as f64), 3))?;
    }
    Ok(())
}

/// The `-g` file, with start times in the local time zone as ab's `apr_ctime` prints them.
///
/// Header `starttime\tseconds\tctime\tdtime\tttime\twait`, then one row per request in ab's
/// final order, *sorted by total time* (not completion order), each
/// `apr_ctime(starttime)\tapr_time_sec(starttime)\tctime\ttime-ctime\ttime\twaittime` with the
/// four durations through `ap_round_ms`. Writes nothing when ab would not create the file (no
/// request completed, or `-w`).
pub fn write_gnuplot(r: &AbResults, out: &mut dyn Write) -> io::Result<()> {
    write_gnuplot_in(r, out, &Local)
}

/// [`write_gnuplot`] with the start times in time zone `tz` instead of the local one (for
/// tests, and for callers that pin the zone).
pub fn write_gnuplot_in<Tz: TimeZone>(r: &AbResults, out: &mut dyn Write, tz: &Tz) -> io::Result<()>
where
    Tz::Offset: std::fmt::Display,
{
    if !super::writes_side_files(r) {
        return Ok(());
    }
    out.write_all(b"starttime\tseconds\tctime\tdtime\tttime\twait\n")?;
    for s in stats::sort_by_total(&r.samples).iter() {
        writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}",
            apr_ctime(s.start_epoch_us(), tz),
            apr_time_sec(s.start_epoch_us()),
            ap_round_ms(s.ctime_us()),
            ap_round_ms(stats::processing_us(s)),
            ap_round_ms(s.time_us()),
            ap_round_ms(s.wait_us())
        )?;
    }
    Ok(())
}
