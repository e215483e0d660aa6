//! The optional access log: one Common Log Format line per response, collected per worker and
//! written to stdout once per event-loop turn, so logging costs one write per turn rather than
//! one per request. Request lines are escaped, so a client cannot forge log lines. Does not
//! rotate files or log to anything but stdout; a slow reader of stdout slows the server, which
//! is why the log is off unless asked for.

use std::io::Write as _;
use std::net::IpAddr;

use crate::date::DateCache;

/// Write before a turn ends if this much is pending, to bound memory under a pipelining burst.
const FLUSH_AT: usize = 64 * 1024;

#[derive(Debug)]
pub(crate) struct AccessLog {
    enabled: bool,
    buf: Vec<u8>,
}

impl AccessLog {
    pub(crate) fn new(enabled: bool) -> AccessLog {
        AccessLog { enabled, buf: Vec::new() }
    }

    /// Whether lines are recorded (an HTTP/2 connection builds a request line only then).
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// `127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 2326`. `request` is the
    /// request head (or `-`): its first line is found only when the log is on, so a server
    /// without a log pays nothing per request.
    #[inline]
    pub(crate) fn record(
        &mut self,
        client: IpAddr,
        date: &DateCache,
        request: &[u8],
        status: u16,
        body_bytes: u64,
    ) {
        if self.enabled {
            self.write_line(client, date, request, status, body_bytes);
        }
    }

    #[inline(never)]
    fn write_line(
        &mut self,
        client: IpAddr,
        date: &DateCache,
        request: &[u8],
        status: u16,
        body_bytes: u64,
    ) {
        // Writing into a Vec cannot fail.
        let _ = write!(self.buf, "{client} - - [");
        self.buf.extend_from_slice(date.clf());
        self.buf.extend_from_slice(b"] \"");
        escape_into(&mut self.buf, request_line(request));
        let _ = writeln!(self.buf, "\" {status} {body_bytes}");
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    /// Writes pending lines to stdout. If stdout is gone (closed pipe), logging stops rather
    /// than failing every turn.
    pub(crate) fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        if out.write_all(&self.buf).and_then(|()| out.flush()).is_err() {
            self.enabled = false;
        }
        self.buf.clear();
    }
}

/// The request line of a head: up to its first CR or LF.
fn request_line(head: &[u8]) -> &[u8] {
    let end = head.iter().position(|&b| b == b'\r' || b == b'\n').unwrap_or(head.len());
    &head[..end]
}

/// Printable ASCII as is, except `"` and `\`; everything else as `\xHH` (Apache's rule).
fn escape_into(buf: &mut Vec<u8>, s: &[u8]) {
    for &b in s {
        match b {
            b'"' | b'\\' => buf.extend_from_slice(&[b'\\', b]),
            0x20..=0x7e => buf.push(b),
            _ => {
                let _ = write!(buf, "\\x{b:02x}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn common_log_format_with_escapes() {
        let mut log = AccessLog::new(true);
        let date = DateCache::new(UNIX_EPOCH + Duration::from_secs(784_111_777));
        let head = b"GET /a\"b\x01\xff HTTP/1.1\r\nHost: x\r\n\r\n";
        log.record("127.0.0.1".parse().unwrap(), &date, head, 200, 12);
        assert_eq!(
            String::from_utf8(log.buf.clone()).unwrap(),
            "127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] \"GET /a\\\"b\\x01\\xff HTTP/1.1\" 200 12\n"
        );
    }

    #[test]
    fn disabled_log_records_nothing() {
        let mut log = AccessLog::new(false);
        let date = DateCache::new(UNIX_EPOCH);
        log.record("::1".parse().unwrap(), &date, b"GET / HTTP/1.1", 200, 0);
        assert!(log.buf.is_empty());
    }
}
