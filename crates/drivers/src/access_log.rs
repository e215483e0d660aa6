//! The access log a server writes when its spec asks for one ([`ServerSpec::access_log`]),
//! and how to read it back. Off in the lab, which measures servers, not their logging; on
//! where a client's counts are held against the server's own (herd's tests of `herd run`
//! against every server over every protocol).
//!
//! One line per response, written to `logs/access.log` under the run_dir (herd serve: its
//! stdout, `logs/herd.out`, after its `listening on` line). Every server writes the Common Log
//! Format, `host ident user [date] "request line" status bytes`, with the request line's
//! protocol as the server saw it (`HTTP/2.0`, h2o's `HTTP/2`) and the body's bytes
//! (mini_httpd adds the referrer and the user agent after them); caddy alone writes JSON, one
//! object per line. Pure: the caller reads the file, [`parse`] reads the text.
//!
//! [`ServerSpec::access_log`]: crate::ServerSpec::access_log

use std::path::PathBuf;

use crate::run_dir::Places;
use crate::spec::ServerSpec;

/// Where the log goes under the run_dir (all servers but herd serve).
pub(crate) const PATH: &str = "logs/access.log";

/// The Common Log Format in the `%` language Apache, lighttpd and h2o share (`%b`: the body's
/// bytes, `-` for none).
pub(crate) const COMMON: &str = r#"%h %l %u %t \"%r\" %>s %b"#;

/// The access log of a [`Launch`](crate::Launch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessLog {
    /// The file, absolute, under the run_dir. Complete once the server has stopped (lighttpd
    /// buffers its lines until then).
    pub path: PathBuf,
    pub format: LogFormat,
}

/// How the lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Common Log Format (and Combined, which adds fields after it).
    Common,
    /// Common Log Format between the lines herd serve writes on the same stdout and stderr:
    /// `listening on …` first, then `herd serve: I/O …` (the backend that serves; herd serve
    /// before it had none), and `herd serve: stopped after …` last.
    HerdServe,
    /// caddy's JSON: `request.method`, `request.uri`, `request.proto`, `status`, `size`.
    CaddyJson,
}

/// One response, as the server logged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    pub method: String,
    /// The request target as sent (`/static.bin`).
    pub target: String,
    /// The protocol as the server names it: `HTTP/1.1`, `HTTP/2.0` (h2o: `HTTP/2`), `HTTP/3.0`.
    pub version: String,
    pub status: u16,
    /// The body's bytes (`-` in the log: 0).
    pub body_bytes: u64,
}

impl Logged {
    /// The HTTP major version its protocol names (1, 2 or 3), if it names one.
    pub fn major(&self) -> Option<u8> {
        let v = self.version.strip_prefix("HTTP/")?;
        let major = v.split('.').next()?;
        major.parse().ok()
    }
}

/// A line that is not what the server was told to write.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("line {line} of the access log is not in its format ({why}): {text:?}")]
pub struct BadLine {
    /// 1-based.
    pub line: usize,
    pub why: &'static str,
    pub text: String,
}

/// Whether line `i` (from 0) of herd serve's log, the `last` or not, is one of herd serve's own
/// lines around the responses: `listening on …` first, `herd serve: I/O …` second (herd serve
/// before it had none), `herd serve: stopped after …` last. Anywhere else they are no log line.
pub fn herd_serve_own_line(i: usize, line: &str, last: bool) -> bool {
    (i == 0 && line.starts_with("listening on "))
        || (i == 1 && line.starts_with("herd serve: I/O "))
        || (last && line.starts_with("herd serve: stopped after "))
}

/// Every response in `text`, a whole log in `format`. A line that is not in it fails the
/// whole read: a count from a log misread would be no count.
pub fn parse(format: LogFormat, text: &str) -> Result<Vec<Logged>, BadLine> {
    let mut out = Vec::new();
    let herd = format == LogFormat::HerdServe;
    let mut lines = text.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        if herd && herd_serve_own_line(i, line, lines.peek().is_none()) {
            continue;
        }
        let parsed = match format {
            LogFormat::Common | LogFormat::HerdServe => common(line),
            LogFormat::CaddyJson => caddy(line),
        };
        let bad = |why| BadLine { line: i + 1, why, text: line.to_owned() };
        out.push(parsed.map_err(bad)?);
    }
    Ok(out)
}

/// `127.0.0.1 - - [01/Dec/2026:21:35:22 +0000] "GET /f HTTP/2.0" 200 13` (and anything after).
fn common(line: &str) -> Result<Logged, &'static str> {
    let (_, after_date) = line.split_once("] \"").ok_or("no `] \"` after the date")?;
    let (request, rest) = quoted(after_date).ok_or("the request line is not closed by `\"`")?;
    let mut words = rest.split(' ');
    let status = words.next().and_then(|s| s.parse().ok()).ok_or("no status after the request")?;
    let body_bytes = match words.next() {
        Some("-") => 0,
        Some(n) => n.parse().map_err(|_| "the bytes are not a number")?,
        None => return Err("no bytes after the status"),
    };
    let mut parts = request.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the request line is not `METHOD TARGET PROTOCOL`");
    };
    Ok(Logged {
        method: method.to_owned(),
        target: target.to_owned(),
        version: version.to_owned(),
        status,
        body_bytes,
    })
}

/// The text up to the first `"` that no backslash escapes, and what follows its `" `.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some((&s[..i], s[i + 1..].strip_prefix(' ')?)),
            _ => i += 1,
        }
    }
    None
}

fn caddy(line: &str) -> Result<Logged, &'static str> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|_| "not a JSON object")?;
    let text = |v: &serde_json::Value, what| v.as_str().map(str::to_owned).ok_or(what);
    let request = &v["request"];
    Ok(Logged {
        method: text(&request["method"], "no request.method")?,
        target: text(&request["uri"], "no request.uri")?,
        version: text(&request["proto"], "no request.proto")?,
        status: v["status"].as_u64().and_then(|s| u16::try_from(s).ok()).ok_or("no status")?,
        body_bytes: v["size"].as_u64().ok_or("no size")?,
    })
}

/// The log `spec` asks for at `logs/access.log`, in `format`.
pub(crate) fn at_path(spec: &ServerSpec, places: &Places, format: LogFormat) -> Option<AccessLog> {
    spec.access_log.then(|| AccessLog { path: places.path(PATH), format })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(method: &str, target: &str, version: &str, status: u16, body: u64) -> Logged {
        Logged {
            method: method.into(),
            target: target.into(),
            version: version.into(),
            status,
            body_bytes: body,
        }
    }

    #[test]
    fn common_lines_of_every_server() {
        // As nginx 1.22, Apache 2.4 (%B), lighttpd 1.4 (`-` for no body), h2o 2.2 and
        // mini_httpd (Combined) wrote them here.
        let text = "127.0.0.1 - - [01/Dec/2026:21:35:22 +0000] \"GET /static.bin HTTP/2.0\" 200 100000\n\
                    127.0.0.1 - - [01/Dec/2026:21:35:22 +0000] \"HEAD /a HTTP/1.1\" 304 -\n\
                    ::1 - - [01/Dec/2026:21:35:22 +0000] \"GET /a?x=\\\"y\\\" HTTP/2\" 404 0\n\
                    127.0.0.1 - - [01/Dec/2026:21:35:22 +0000] \"GET /b HTTP/1.1\" 200 5 \"-\" \"herd\"\n";
        let got = parse(LogFormat::Common, text).unwrap();
        assert_eq!(
            got,
            [
                logged("GET", "/static.bin", "HTTP/2.0", 200, 100_000),
                logged("HEAD", "/a", "HTTP/1.1", 304, 0),
                logged("GET", "/a?x=\\\"y\\\"", "HTTP/2", 404, 0),
                logged("GET", "/b", "HTTP/1.1", 200, 5),
            ]
        );
        assert_eq!(
            got.iter().map(Logged::major).collect::<Vec<_>>(),
            [Some(2), Some(1), Some(2), Some(1)]
        );
    }

    #[test]
    fn herd_serve_s_own_first_and_last_lines_are_skipped() {
        let text = "listening on http://127.0.0.1:8080\n\
                    herd serve: I/O epoll (auto: io_uring not yet measured faster for h2c)\n\
                    127.0.0.1 - - [01/Dec/2026:21:35:22 +0000] \"GET / HTTP/2.0\" 200 2\n\
                    herd serve: stopped after 1 requests (0 bad) on 1 connections, 2 bytes written\n";
        assert_eq!(parse(LogFormat::HerdServe, text).unwrap().len(), 1);
        // An older herd serve's log has no I/O line.
        let older = text.replace(
            "herd serve: I/O epoll (auto: io_uring not yet measured faster for h2c)\n",
            "",
        );
        assert_eq!(parse(LogFormat::HerdServe, &older).unwrap().len(), 1);
        // The I/O line only second.
        let late = text
            .replacen(
                "herd serve: I/O epoll (auto: io_uring not yet measured faster for h2c)\n",
                "",
                1,
            )
            .replace("200 2\n", "200 2\nherd serve: I/O io_uring\n");
        assert_eq!(parse(LogFormat::HerdServe, &late).unwrap_err().line, 3);
        // Anywhere else, they are not log lines: here the summary, no longer last.
        let again = format!("{text}listening on http://127.0.0.1:8080\n");
        assert_eq!(parse(LogFormat::HerdServe, &again).unwrap_err().line, 4);
        assert_eq!(parse(LogFormat::Common, text).unwrap_err().line, 1);
    }

    #[test]
    fn caddy_s_json() {
        let line = r#"{"level":"info","logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","proto":"HTTP/3.0","method":"GET","host":"localhost:8443","uri":"/static.bin"},"bytes_read":0,"size":100000,"status":200}"#;
        assert_eq!(
            parse(LogFormat::CaddyJson, line).unwrap(),
            [logged("GET", "/static.bin", "HTTP/3.0", 200, 100_000)]
        );
        assert_eq!(parse(LogFormat::CaddyJson, "{}").unwrap_err().why, "no request.method");
    }

    #[test]
    fn what_is_not_the_format_is_named_with_its_line() {
        let good = "h - - [d] \"GET / HTTP/1.1\" 200 1";
        for (bad, why) in [
            ("h - - [d] GET / HTTP/1.1 200 1", "no `] \"` after the date"),
            ("h - - [d] \"GET / HTTP/1.1 200 1", "the request line is not closed by `\"`"),
            ("h - - [d] \"GET / HTTP/1.1\" ok 1", "no status after the request"),
            ("h - - [d] \"GET / HTTP/1.1\" 200", "no bytes after the status"),
            ("h - - [d] \"GET / HTTP/1.1\" 200 x", "the bytes are not a number"),
            ("h - - [d] \"-\" 400 0", "the request line is not `METHOD TARGET PROTOCOL`"),
        ] {
            let err = parse(LogFormat::Common, &format!("{good}\n{bad}\n")).unwrap_err();
            assert_eq!((err.line, err.why), (2, why), "{bad}");
            assert!(err.to_string().starts_with("line 2 of the access log"), "{err}");
        }
    }
}
