//! ab's report: text, `-w` HTML, `-e` CSV and `-g` TSV, plus the banner and progress lines.
//!
//! Everything here reproduces ApacheBench 2.3 (`support/ab.c`: `copyright()`, `test()`,
//! `output_results()`, `output_html_results()`) byte for byte, quirks included; each quirk is
//! listed in docs/ab-compat.md under "Report: quirks reproduced on purpose". The only text that
//! differs from ab on purpose is the banner, which names herd instead of ApacheBench.
//!
//! Nothing here decides *where* output goes: ab prints the banner, the "Benchmarking" line, the
//! "..done" line and the report on stdout, and "Completed"/"Finished" on stderr; the caller picks
//! the writers accordingly.

mod cfmt;
mod files;
mod html;
mod stats;
mod text;

use std::io::{self, Write};

use crate::results::AbResults;

pub use files::{write_csv, write_gnuplot, write_gnuplot_in};

/// herd's version, printed in the banner where ab prints its own.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The banner (ab's `copyright()`): three lines and a blank line, or the HTML form with `-w`.
///
/// ab prints `This is ApacheBench, Version 2.3 <$Revision$>` and two copyright lines; herd names
/// itself instead (docs/ab-compat.md) but keeps the shape, so tools that skip "the first four
/// lines" keep working. The HTML form mirrors ab's, including the `<p>` it opens and never closes.
pub fn write_banner(out: &mut dyn Write, html: bool) -> io::Result<()> {
    const LINE2: &str = "herd's implementation of ab's flags and report, on the herd engine";
    const LINE3: &str = "Not ApacheBench itself: see docs/ab-compat.md for the differences";
    if html {
        write!(
            out,
            "<p>\n This is herd ab, Version {VERSION} <i>&lt;ApacheBench 2.3 compatible&gt;</i><br>\n \
             {LINE2}<br>\n {LINE3}<br>\n</p>\n<p>\n"
        )
    } else {
        write!(
            out,
            "This is herd ab, Version {VERSION} (ApacheBench 2.3 compatible)\n{LINE2}\n{LINE3}\n\n"
        )
    }
}

/// ab's `Benchmarking <host> [through <proxy>:<port>] (be patient)` line.
///
/// `progress` is ab's `heartbeatres != 0` (see [`heartbeat_interval`]): with progress lines the
/// line ends in `"\n"`, without them in `"..."`, to be completed later by [`write_done`]
/// ("...", then "..done\n": ab really prints five dots). ab skips this line entirely with `-w`
/// (`if (!use_html)`), so the caller must not call this for HTML output. ab flushes stdout here,
/// and so does this function.
pub fn write_benchmarking(
    out: &mut dyn Write,
    hostname: &str,
    proxy: Option<(&str, u16)>,
    progress: bool,
) -> io::Result<()> {
    write!(out, "Benchmarking {hostname} ")?;
    if let Some((proxy_host, proxy_port)) = proxy {
        write!(out, "[through {proxy_host}:{proxy_port}] ")?;
    }
    write!(out, "(be patient){}", if progress { "\n" } else { "..." })?;
    out.flush()
}

/// How often ab prints "Completed N requests" (ab's `heartbeatres`); 0 means never.
///
/// ab: `if (heartbeatres && requests > 150) { heartbeatres = requests / 10; if (heartbeatres <
/// 100) heartbeatres = 100; } else heartbeatres = 0;` where `-q` set `heartbeatres = 0` first.
/// `requests` is ab's `requests`: the `-n` value, or 50000 with `-t`.
pub fn heartbeat_interval(requests: u64, quiet: bool) -> u64 {
    if !quiet && requests > 150 {
        (requests / 10).max(100)
    } else {
        0
    }
}

/// `Completed N requests`, printed by ab on stderr each time `done % heartbeatres == 0`.
pub fn write_completed(out: &mut dyn Write, done: u64) -> io::Result<()> {
    writeln!(out, "Completed {done} requests")?;
    out.flush()
}

/// `Finished N requests`, printed by ab on stderr at the end of the run when progress lines are
/// on (`heartbeatres != 0`). Without them ab prints [`write_done`] on stdout instead.
pub fn write_finished(out: &mut dyn Write, done: u64) -> io::Result<()> {
    writeln!(out, "Finished {done} requests")?;
    out.flush()
}

/// `..done`, printed by ab on stdout at the end of the run when progress lines are off. ab
/// prints it with `-w` too, even though the "Benchmarking" line it completes was not printed.
pub fn write_done(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"..done\n")
}

/// The report: ab's `output_results()` (text) when `r.html` is None, `output_html_results()`
/// when it is Some. Starts with ab's two blank lines.
///
/// `r.time_taken_s` should be computed as ab does, `(lasttime - start) as f64 / 1e6` from
/// microseconds, for the rates to match ab to the last digit. Statistics are taken over
/// `r.samples` (ab's `stats[0..done]`), which by contract has `r.done` entries.
pub fn write_report(r: &AbResults, out: &mut dyn Write) -> io::Result<()> {
    match &r.html {
        None => text::write_text(r, out),
        Some(attrs) => html::write_html(r, attrs, out),
    }
}

/// Whether ab would write the `-e` and `-g` files at all. ab writes them from
/// `output_results()` only, inside `if (done > 0)`: with no completed request, or with `-w`
/// (whose `output_html_results()` has no such code), neither file is even created.
pub fn writes_side_files(r: &AbResults) -> bool {
    r.html.is_none() && r.done > 0 && !r.samples.is_empty()
}
