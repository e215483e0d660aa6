//! ab's `-w` report, `output_html_results()` of ab.c, line for line.
//!
//! It is not the text report in tables: it has no TLS lines, no "Write errors", no "Time per
//! request", no Waiting row, no percentiles; its failure breakdown omits Receive; its rate lines
//! only need a non-zero time (so 0 requests print "0.00"); and its connection times are min, avg
//! and max computed from rounded sums, with Processing derived as Total minus Connect
//! (docs/ab-compat.md).

use std::io::{self, Write};

use crate::results::{AbResults, HtmlAttributes};

use super::cfmt::{ap_round_ms, c_fixed};

/// `output_html_results()`.
pub(crate) fn write_html(
    r: &AbResults,
    attrs: &HtmlAttributes,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (tr, td) = (attrs.tr.as_str(), attrs.td.as_str());
    let timetaken = r.time_taken_s;

    write!(out, "\n\n<table {}>\n", attrs.table)?;
    // ab's usual row: `<tr %s><th colspan=2 %s>label</th><td colspan=2 %s>value</td></tr>`.
    let row = |out: &mut dyn Write, label: &str, value: &str| -> io::Result<()> {
        writeln!(
            out,
            "<tr {tr}><th colspan=2 {td}>{label}</th><td colspan=2 {td}>{value}</td></tr>"
        )
    };
    row(out, "Server Software:", &r.server_software)?;
    row(out, "Server Hostname:", &r.hostname)?;
    row(out, "Server Port:", &r.port.to_string())?;
    row(out, "Document Path:", &r.path)?;
    if r.variable_length {
        row(out, "Document Length:", "Variable")?;
    } else {
        row(out, "Document Length:", &format!("{} bytes", r.doclen))?;
    }
    row(out, "Concurrency Level:", &r.concurrency.to_string())?;
    row(out, "Time taken for tests:", &format!("{} seconds", c_fixed(timetaken, 3)))?;
    row(out, "Complete requests:", &r.done.to_string())?;
    row(out, "Failed requests:", &r.bad.to_string())?;
    if r.bad > 0 {
        // ab: no Receive count here (unlike the text report), and a space before '>'.
        writeln!(
            out,
            "<tr {tr}><td colspan=4 {td} >   (Connect: {}, Length: {}, Exceptions: {})</td></tr>",
            r.err_conn, r.err_length, r.err_except
        )?;
    }
    // ab prints no "Write errors" row in HTML.
    if r.err_response > 0 {
        row(out, "Non-2xx responses:", &r.err_response.to_string())?;
    }
    if r.keepalive {
        row(out, "Keep-Alive requests:", &r.doneka.to_string())?;
    }
    row(out, "Total transferred:", &format!("{} bytes", r.total_read))?;
    if r.send_body {
        // No unit, as in the text report.
        row(out, "Total body sent:", &r.total_posted.to_string())?;
    }
    row(out, "HTML transferred:", &format!("{} bytes", r.total_body_read))?;

    // ab: `if (timetaken)` only, not `&& done` as in the text report.
    if timetaken != 0.0 {
        row(out, "Requests per second:", &c_fixed(r.done as f64 / timetaken, 2))?;
        row(
            out,
            "Transfer rate:",
            &format!("{} kb/s received", c_fixed(r.total_read as f64 / 1024.0 / timetaken, 2)),
        )?;
        if r.send_body {
            let sent = c_fixed(r.total_posted as f64 / 1024.0 / timetaken, 2);
            let total = r.total_read.wrapping_add(r.total_posted);
            let total = c_fixed(total as f64 / 1024.0 / timetaken, 2);
            writeln!(
                out,
                "<tr {tr}><td colspan=2 {td}>&nbsp;</td><td colspan=2 {td}>{sent} kb/s sent</td></tr>"
            )?;
            writeln!(
                out,
                "<tr {tr}><td colspan=2 {td}>&nbsp;</td><td colspan=2 {td}>{total} kb/s total</td></tr>"
            )?;
        }
    }

    let n = r.samples.len();
    // ab: `if (done > 0)`, "avoid division by zero".
    if r.done > 0 && n > 0 {
        let t = HtmlTimes::compute(&r.samples);
        let n = n as i64;
        writeln!(out, "<tr {tr}><th {td} colspan=4>Connection Times (ms)</th></tr>")?;
        writeln!(
            out,
            "<tr {tr}><th {td}>&nbsp;</th> <th {td}>min</th>   <th {td}>avg</th>   <th {td}>max</th></tr>"
        )?;
        let mut times = |label: &str, min: i64, avg: i64, max: i64| -> io::Result<()> {
            writeln!(
                out,
                "<tr {tr}><th {td}>{label}</th><td {td}>{min:5}</td><td {td}>{avg:5}</td><td {td}>{max:5}</td></tr>"
            )
        };
        times("Connect:", t.mincon, t.totalcon / n, t.maxcon)?;
        // ab: `mintot - mincon`, `(total / done) - (totalcon / done)`, `maxtot - maxcon`: the
        // difference of the Total and Connect columns, not statistics of `time - ctime`.
        times(
            "Processing:",
            t.mintot.wrapping_sub(t.mincon),
            (t.total / n).wrapping_sub(t.totalcon / n),
            t.maxtot.wrapping_sub(t.maxcon),
        )?;
        times("Total:", t.mintot, t.total / n, t.maxtot)?;
    }
    out.write_all(b"</table>\n")
}

/// The HTML report's own, simpler statistics, already through `ap_round_ms` as ab prints them.
struct HtmlTimes {
    mincon: i64,
    maxcon: i64,
    mintot: i64,
    maxtot: i64,
    /// The rounded *sum* of connect times: ab rounds `totalcon` before dividing by `done`.
    totalcon: i64,
    /// The rounded sum of total times.
    total: i64,
}

impl HtmlTimes {
    fn compute(samples: &[crate::results::Sample]) -> HtmlTimes {
        let (mut mincon, mut mintot) = (i64::MAX, i64::MAX);
        let (mut maxcon, mut maxtot) = (0i64, 0i64);
        let (mut totalcon, mut total) = (0i64, 0i64);
        for s in samples {
            mincon = mincon.min(s.ctime_us());
            mintot = mintot.min(s.time_us());
            maxcon = maxcon.max(s.ctime_us());
            maxtot = maxtot.max(s.time_us());
            totalcon = totalcon.wrapping_add(s.ctime_us());
            total = total.wrapping_add(s.time_us());
        }
        HtmlTimes {
            mincon: ap_round_ms(mincon),
            maxcon: ap_round_ms(maxcon),
            mintot: ap_round_ms(mintot),
            maxtot: ap_round_ms(maxtot),
            totalcon: ap_round_ms(totalcon),
            total: ap_round_ms(total),
        }
    }
}
