//! Writes the report goldens' fixtures (`tests/fixtures/`) out for a cross-check against
//! ab.c: one `NAME.fixture` file per fixture in the directory given, with `key=value` lines
//! named after ab.c's globals, then one `S start ctime time wait` line per sample (µs).
//! Fed to a harness built from ab.c's own `output_results()`, the same numbers must print
//! what `tests/golden/` holds (docs/ab-compat.md).
//!
//! `cargo run -p herd-ab --example dump_fixtures -- DIR`

#[path = "../tests/fixtures/mod.rs"]
mod fixtures;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use herd_ab::AbResults;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), None) = (args.next(), args.next()) else {
        eprintln!("usage: cargo run -p herd-ab --example dump_fixtures -- DIR");
        return ExitCode::from(2);
    };
    match dump(&PathBuf::from(dir)) {
        Ok(n) => {
            eprintln!("dump_fixtures: wrote {n} fixtures");
            ExitCode::SUCCESS
        }
        Err((path, e)) => {
            eprintln!("dump_fixtures: cannot write {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}

/// Writes every fixture into `dir` (created if needed); the count, or the path that failed.
fn dump(dir: &Path) -> Result<usize, (PathBuf, std::io::Error)> {
    std::fs::create_dir_all(dir).map_err(|e| (dir.to_owned(), e))?;
    let all = fixtures::all_fixtures();
    for (name, r) in &all {
        let path = dir.join(format!("{name}.fixture"));
        std::fs::write(&path, text(r)).map_err(|e| (path, e))?;
    }
    Ok(all.len())
}

/// One fixture as ab.c's globals, then its samples.
fn text(r: &AbResults) -> String {
    let b = |x: bool| u8::from(x);
    let tls = r.tls.as_ref();
    let html = r.html.as_ref();
    let kv: Vec<(&str, String)> = vec![
        ("servername", r.server_software.clone()),
        ("hostname", r.hostname.clone()),
        ("port", r.port.to_string()),
        ("is_ssl", b(tls.is_some()).to_string()),
        ("ssl_info", tls.map(|t| t.protocol.clone()).unwrap_or_default()),
        ("ssl_tmp_key", tls.and_then(|t| t.temp_key.clone()).unwrap_or_default()),
        ("tls_sni", tls.and_then(|t| t.sni.clone()).unwrap_or_default()),
        ("path", r.path.clone()),
        ("nolength", b(r.variable_length).to_string()),
        ("doclen", r.doclen.to_string()),
        ("concurrency", r.concurrency.to_string()),
        ("timetaken", format!("{:e}", r.time_taken_s)),
        ("bad", r.bad.to_string()),
        ("err_conn", r.err_conn.to_string()),
        ("err_recv", r.err_recv.to_string()),
        ("err_length", r.err_length.to_string()),
        ("err_except", r.err_except.to_string()),
        ("epipe", r.epipe.to_string()),
        ("err_response", r.err_response.to_string()),
        ("keepalive", b(r.keepalive).to_string()),
        ("doneka", r.doneka.to_string()),
        ("totalread", r.total_read.to_string()),
        ("send_body", b(r.send_body).to_string()),
        ("totalposted", r.total_posted.to_string()),
        ("totalbread", r.total_body_read.to_string()),
        ("percentile", b(r.show_percentiles).to_string()),
        ("confidence", b(r.show_confidence).to_string()),
        ("use_html", b(html.is_some()).to_string()),
        ("tablestring", html.map(|h| h.table.clone()).unwrap_or_default()),
        ("trstring", html.map(|h| h.tr.clone()).unwrap_or_default()),
        ("tdstring", html.map(|h| h.td.clone()).unwrap_or_default()),
    ];
    let mut s = String::new();
    for (k, v) in kv {
        let _ = writeln!(s, "{k}={v}");
    }
    for x in &r.samples {
        let (start, ctime, time, wait) =
            (x.start_epoch_us(), x.ctime_us(), x.time_us(), x.wait_us());
        let _ = writeln!(s, "S {start} {ctime} {time} {wait}");
    }
    s
}
