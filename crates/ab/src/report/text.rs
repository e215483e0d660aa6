//! ab's text report, `output_results()` of ab.c, line for line.
//!
//! Every label, width and conditional line is ab's; where ab's output looks odd (no unit after
//! "Total body sent", the `-S` row format without a space before max, the SANE messages'
//! indentation) it is on purpose: see docs/ab-compat.md.

use std::io::{self, Write};

use crate::results::AbResults;

use super::cfmt::{ap_round_ms, c_fixed, c_fixed_width};
use super::stats::{self, ConnectionTimes, Row, Sanity};

/// `output_results(0)`.
pub(crate) fn write_text(r: &AbResults, out: &mut dyn Write) -> io::Result<()> {
    let timetaken = r.time_taken_s;
    out.write_all(b"\n\n")?;
    writeln!(out, "Server Software:        {}", r.server_software)?;
    writeln!(out, "Server Hostname:        {}", r.hostname)?;
    writeln!(out, "Server Port:            {}", r.port)?;
    if let Some(tls) = &r.tls {
        writeln!(out, "SSL/TLS Protocol:       {}", tls.protocol)?;
        if let Some(key) = &tls.temp_key {
            writeln!(out, "Server Temp Key:        {key}")?;
        }
        if let Some(sni) = &tls.sni {
            writeln!(out, "TLS Server Name:        {sni}")?;
        }
    }
    out.write_all(b"\n")?;
    writeln!(out, "Document Path:          {}", r.path)?;
    if r.variable_length {
        writeln!(out, "Document Length:        Variable")?;
    } else {
        writeln!(out, "Document Length:        {} bytes", r.doclen)?;
    }
    out.write_all(b"\n")?;
    writeln!(out, "Concurrency Level:      {}", r.concurrency)?;
    writeln!(out, "Time taken for tests:   {} seconds", c_fixed(timetaken, 3))?;
    writeln!(out, "Complete requests:      {}", r.done)?;
    writeln!(out, "Failed requests:        {}", r.bad)?;
    if r.bad > 0 {
        writeln!(
            out,
            "   (Connect: {}, Receive: {}, Length: {}, Exceptions: {})",
            r.err_conn, r.err_recv, r.err_length, r.err_except
        )?;
    }
    if r.epipe > 0 {
        writeln!(out, "Write errors:           {}", r.epipe)?;
    }
    if r.err_response > 0 {
        writeln!(out, "Non-2xx responses:      {}", r.err_response)?;
    }
    if r.keepalive {
        writeln!(out, "Keep-Alive requests:    {}", r.doneka)?;
    }
    writeln!(out, "Total transferred:      {} bytes", r.total_read)?;
    if r.send_body {
        // ab: `"Total body sent:        %" APR_INT64_T_FMT "\n"`, no unit, and the count is
        // every byte written (request heads included), not the body.
        writeln!(out, "Total body sent:        {}", r.total_posted)?;
    }
    writeln!(out, "HTML transferred:       {} bytes", r.total_body_read)?;

    // ab: `if (timetaken && done)`, "avoid divide by zero". A NaN time is truthy in C too.
    if timetaken != 0.0 && r.done > 0 {
        let done = r.done as f64;
        // Each expression keeps ab's operand order, so the doubles round as ab's do.
        writeln!(out, "Requests per second:    {} [#/sec] (mean)", c_fixed(done / timetaken, 2))?;
        writeln!(
            out,
            "Time per request:       {} [ms] (mean)",
            c_fixed(f64::from(r.concurrency) * timetaken * 1000.0 / done, 3)
        )?;
        writeln!(
            out,
            "Time per request:       {} [ms] (mean, across all concurrent requests)",
            c_fixed(timetaken * 1000.0 / done, 3)
        )?;
        writeln!(
            out,
            "Transfer rate:          {} [Kbytes/sec] received",
            c_fixed(r.total_read as f64 / 1024.0 / timetaken, 2)
        )?;
        if r.send_body {
            writeln!(
                out,
                "                        {} kb/s sent",
                c_fixed(r.total_posted as f64 / 1024.0 / timetaken, 2)
            )?;
            // ab adds the two apr_int64_t counters before converting to double.
            let total = r.total_read.wrapping_add(r.total_posted);
            writeln!(
                out,
                "                        {} kb/s total",
                c_fixed(total as f64 / 1024.0 / timetaken, 2)
            )?;
        }
    }

    // ab: `if (done > 0)`. The table is over stats[0..done], i.e. the samples.
    if r.done > 0 {
        if let Some(t) = stats::connection_times(&r.samples) {
            write_connection_times(r, &t, out)?;
        }
    }
    Ok(())
}

/// "Connection Times (ms)", the SANE warnings and the percentile table.
fn write_connection_times(
    r: &AbResults,
    t: &ConnectionTimes,
    out: &mut dyn Write,
) -> io::Result<()> {
    out.write_all(b"\nConnection Times (ms)\n")?;
    let rows: [(&str, &Row, &str); 4] = [
        ("Connect:    ", &t.connect, "the initial connection time"),
        ("Processing: ", &t.processing, "the processing time"),
        ("Waiting:    ", &t.waiting, "the waiting time"),
        ("Total:      ", &t.total, "the total time"),
    ];
    if r.show_confidence {
        out.write_all(b"              min  mean[+/-sd] median   max\n")?;
        for (label, row, _) in rows {
            // CONF_FMT_STRING: "%5" APR_TIME_T_FMT " %4" APR_TIME_T_FMT " %5.1f %6"
            // APR_TIME_T_FMT " %7" APR_TIME_T_FMT "\n"
            writeln!(
                out,
                "{label}{:5} {:4} {} {:6} {:7}",
                row.min,
                row.mean,
                c_fixed_width(row.sd, 5, 1),
                row.median,
                row.max
            )?;
        }
        // All four rows are printed before any warning, as in ab.
        for (_, row, what) in rows {
            match stats::sanity(row) {
                Sanity::Fine => {}
                Sanity::Error => write!(
                    out,
                    "ERROR: The median and mean for {what} are more than twice the standard\n       \
                     deviation apart. These results are NOT reliable.\n"
                )?,
                Sanity::Warning => write!(
                    out,
                    "WARNING: The median and mean for {what} are not within a normal deviation\n        \
                     These results are probably not that reliable.\n"
                )?,
            }
        }
    } else {
        out.write_all(b"              min   avg   max\n")?;
        for (label, row, _) in rows {
            // -S: CONF_FMT_STRING is "%5" " %5" "%5" "\n": no space before max, as in ab.
            writeln!(out, "{label}{:5} {:5}{:5}", row.min, row.mean, row.max)?;
        }
    }

    // ab: `if (percentile && (done > 1))`, on the array as last sorted: by total time.
    if r.show_percentiles && r.done > 1 && t.by_total.len() > 1 {
        out.write_all(b"\nPercentage of the requests served within a certain time (ms)\n")?;
        for p in stats::PERCENTILES {
            let ms =
                stats::percentile_sample(&t.by_total, p).map_or(0, |s| ap_round_ms(s.time_us()));
            if p >= 100 {
                writeln!(out, " 100%  {ms:5} (longest request)")?;
            } else {
                writeln!(out, "  {p}%  {ms:5}")?;
            }
        }
    }
    Ok(())
}
