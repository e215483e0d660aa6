//! herd's end of the link to a host's helper: [`HostLink`], typed requests over any byte pipe
//! (an `ssh HOST herd host` child's stdin and stdout in the lab, a local `herd host` in the
//! tests), one at a time, each with a time limit. Every error names the host, so that a lab
//! run that loses one says which.
//!
//! Replies are read on a thread of the link's own, so that a limit holds whatever the pipe
//! does; a request that ran past its limit leaves the link unusable (its reply may still
//! come, and would be taken for the next one's), and every later request says so.

use std::io::{self, BufReader, Read, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use crate::lines::{read_line, Line};
use crate::protocol::{
    Answer, Cleaned, Ending, Hello, Probe, Readiness, Reply, Request, StartSpec, DEFAULT_GRACE_MS,
    MAX_REPLY_LINE, MAX_WRITE_PART,
};

/// Why a request to a host's helper got no answer.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("host {host}: cannot send {what} to its helper")]
    Send { host: String, what: &'static str, source: io::Error },
    #[error("host {host}: its helper's link closed (before the reply to {what})")]
    Closed { host: String, what: &'static str },
    #[error("host {host}: reading its helper's reply to {what} failed")]
    Read { host: String, what: &'static str, source: io::Error },
    #[error("host {host}: no reply to {what} within {limit:?}; the link is given up")]
    Timeout { host: String, what: &'static str, limit: Duration },
    #[error("host {host}: the link was given up after an earlier request ran out of time")]
    GivenUp { host: String },
    #[error("host {host}: its helper's reply to {what} is not a herd.host.v1 reply: {reason}")]
    Malformed { host: String, what: &'static str, reason: String },
    #[error("host {host}: {what} refused: {message}")]
    Refused { host: String, what: &'static str, message: String },
    #[error("host {host}: its helper answered {what} with {got}")]
    Unexpected { host: String, what: &'static str, got: &'static str },
}

impl LinkError {
    /// The host the error is about.
    pub fn host(&self) -> &str {
        match self {
            LinkError::Send { host, .. }
            | LinkError::Closed { host, .. }
            | LinkError::Read { host, .. }
            | LinkError::Timeout { host, .. }
            | LinkError::GivenUp { host }
            | LinkError::Malformed { host, .. }
            | LinkError::Refused { host, .. }
            | LinkError::Unexpected { host, .. } => host,
        }
    }
}

/// What a reader thread hands over: a line, or how reading ended.
type Read1 = io::Result<Line>;

/// The typed link to one host's helper.
#[derive(Debug)]
pub struct HostLink<W: Write> {
    name: String,
    writer: W,
    replies: Receiver<Read1>,
    limit: Duration,
    given_up: bool,
}

/// How long a request other than `ready` and `doctor` may take before the link is given up.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(30);

/// What a `stop` said of the program's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    pub how: String,
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// What a `start` said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub pid: u32,
    pub accounting: String,
    pub log: String,
}

/// What a `read_file` returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePart {
    pub text: String,
    pub size: u64,
    pub truncated: bool,
}

impl<W: Write> HostLink<W> {
    /// A link to the helper of host `name` that reads replies from `reader` and writes
    /// requests to `writer`; each request may take `limit` (plus its own wait, for `ready`).
    pub fn new(
        name: impl Into<String>,
        reader: impl Read + Send + 'static,
        writer: W,
        limit: Duration,
    ) -> HostLink<W> {
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(reader);
            loop {
                let line = read_line(&mut reader, MAX_REPLY_LINE);
                let last =
                    !matches!(line, Ok(Line::Text(_) | Line::NotUtf8 | Line::TooLong { .. }));
                if tx.send(line).is_err() || last {
                    return;
                }
            }
        });
        HostLink { name: name.into(), writer, replies, limit, given_up: false }
    }

    /// The host's name, as errors say it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends `request`, waits at most `limit` for its reply; an error reply is
    /// [`LinkError::Refused`].
    pub fn call_within(&mut self, request: &Request, limit: Duration) -> Result<Answer, LinkError> {
        let what = request.kind();
        let host = || self.name.clone();
        if self.given_up {
            return Err(LinkError::GivenUp { host: host() });
        }
        let sent =
            writeln!(self.writer, "{}", request.to_line()).and_then(|()| self.writer.flush());
        sent.map_err(|source| LinkError::Send { host: host(), what, source })?;
        let line = match self.replies.recv_timeout(limit) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                self.given_up = true;
                return Err(LinkError::Timeout { host: host(), what, limit });
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(LinkError::Closed { host: host(), what })
            }
        };
        let malformed = |reason: String| LinkError::Malformed { host: host(), what, reason };
        let text = match line {
            Ok(Line::Text(t)) => t,
            Ok(Line::End) => return Err(LinkError::Closed { host: host(), what }),
            Ok(Line::NotUtf8) => return Err(malformed("not UTF-8".into())),
            Ok(Line::TooLong { len }) => {
                return Err(malformed(format!("{len} bytes, over {MAX_REPLY_LINE}")))
            }
            Err(source) => return Err(LinkError::Read { host: host(), what, source }),
        };
        match serde_json::from_str::<Reply>(&text) {
            Ok(Reply::Ok(answer)) => Ok(answer),
            Ok(Reply::Error { message }) => Err(LinkError::Refused { host: host(), what, message }),
            Err(e) => Err(malformed(format!("{e}: {}", clip(&text)))),
        }
    }

    /// Sends `request` with the link's own limit.
    pub fn call(&mut self, request: &Request) -> Result<Answer, LinkError> {
        self.call_within(request, self.limit)
    }

    fn unexpected(&self, what: &'static str, got: &Answer) -> LinkError {
        LinkError::Unexpected { host: self.name.clone(), what, got: got.kind() }
    }

    pub fn hello(&mut self) -> Result<Hello, LinkError> {
        match self.call(&Request::Hello)? {
            Answer::Hello(h) => Ok(h),
            other => Err(self.unexpected("hello", &other)),
        }
    }

    pub fn start(&mut self, spec: StartSpec) -> Result<Started, LinkError> {
        match self.call(&Request::Start(spec))? {
            Answer::Started { pid, accounting, log, .. } => Ok(Started { pid, accounting, log }),
            other => Err(self.unexpected("start", &other)),
        }
    }

    /// Waits for `id` to accept a connection on `probe`, at most `timeout` (the link's
    /// limit is added to it for the reply).
    pub fn ready(
        &mut self,
        id: &str,
        probe: Probe,
        timeout: Duration,
    ) -> Result<Readiness, LinkError> {
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let request = Request::Ready { id: id.to_owned(), probe, timeout_ms };
        match self.call_within(&request, timeout.saturating_add(self.limit))? {
            Answer::Ready(r) => Ok(r),
            other => Err(self.unexpected("ready", &other)),
        }
    }

    /// CPU seconds of `id` and everything it forked, and how they were read.
    pub fn cpu(&mut self, id: &str) -> Result<(f64, String), LinkError> {
        match self.call(&Request::Cpu { id: id.to_owned() })? {
            Answer::Cpu { seconds, accounting, .. } => Ok((seconds, accounting)),
            other => Err(self.unexpected("cpu", &other)),
        }
    }

    /// None while `id` runs; how it ended once it has.
    pub fn status(&mut self, id: &str) -> Result<Option<Ending>, LinkError> {
        match self.call(&Request::Status { id: id.to_owned() })? {
            Answer::Status { ended, .. } => Ok(ended),
            other => Err(self.unexpected("status", &other)),
        }
    }

    /// CPU seconds of the process group of `pid`, a process herd did not start there.
    pub fn group_cpu(&mut self, pid: u32) -> Result<f64, LinkError> {
        match self.call(&Request::GroupCpu { pid })? {
            Answer::GroupCpu { seconds, .. } => Ok(seconds),
            other => Err(self.unexpected("group_cpu", &other)),
        }
    }

    /// The host's sockets in TIME_WAIT, and the bound herd keeps them under there.
    pub fn time_wait(&mut self) -> Result<(u64, u64), LinkError> {
        match self.call(&Request::TimeWait)? {
            Answer::TimeWait { count, bound } => Ok((count, bound)),
            other => Err(self.unexpected("time_wait", &other)),
        }
    }

    /// The host's network card toward `peer` (for one of its own addresses: the card that
    /// holds it), in words.
    pub fn nic(&mut self, peer: std::net::IpAddr) -> Result<String, LinkError> {
        match self.call(&Request::Nic { toward: peer.to_string() })? {
            Answer::Nic { nic } => Ok(nic),
            other => Err(self.unexpected("nic", &other)),
        }
    }

    /// Makes directory `path` under the helper's run directory, given to `owner` if named.
    pub fn make_dir(
        &mut self,
        path: &str,
        mode: Option<u32>,
        owner: Option<&str>,
    ) -> Result<(), LinkError> {
        let request =
            Request::MakeDir { path: path.to_owned(), mode, owner: owner.map(str::to_owned) };
        match self.call(&request)? {
            Answer::Made { .. } => Ok(()),
            other => Err(self.unexpected("make_dir", &other)),
        }
    }

    pub fn stop(&mut self, id: &str, grace: Option<Duration>) -> Result<Stopped, LinkError> {
        let grace_ms = grace.map(|g| u64::try_from(g.as_millis()).unwrap_or(u64::MAX));
        let request = Request::Stop { id: id.to_owned(), grace_ms };
        let limit = self.limit.saturating_add(grace.unwrap_or_default());
        match self.call_within(&request, limit)? {
            Answer::Stopped { how, code, signal, .. } => Ok(Stopped { how, code, signal }),
            other => Err(self.unexpected("stop", &other)),
        }
    }

    pub fn read_file(&mut self, path: &str, max_bytes: u64) -> Result<FilePart, LinkError> {
        match self.call(&Request::ReadFile { path: path.to_owned(), max_bytes })? {
            Answer::File { text, size, truncated, .. } => Ok(FilePart { text, size, truncated }),
            other => Err(self.unexpected("read_file", &other)),
        }
    }

    /// What `herd doctor` printed on the host, and how it ended (None: exit 0).
    pub fn doctor(&mut self) -> Result<(String, Option<String>), LinkError> {
        match self
            .call_within(&Request::Doctor, self.limit.saturating_add(Duration::from_secs(120)))?
        {
            Answer::Doctor { text, failure } => Ok((text, failure)),
            other => Err(self.unexpected("doctor", &other)),
        }
    }

    /// Writes `bytes` to `path` under the helper's run directory (its directories made), in
    /// parts of at most [`MAX_WRITE_PART`] bytes; the file's size when done.
    pub fn write_file(&mut self, path: &str, bytes: &[u8], mode: u32) -> Result<u64, LinkError> {
        use base64::Engine as _;
        let mut size = 0;
        // An empty file is one empty part.
        let parts: Vec<&[u8]> =
            if bytes.is_empty() { vec![&[]] } else { bytes.chunks(MAX_WRITE_PART).collect() };
        let mut append = false;
        for part in parts {
            let request = Request::WriteFile {
                path: path.to_owned(),
                base64: base64::engine::general_purpose::STANDARD.encode(part),
                append,
                mode: Some(mode),
            };
            size = match self.call(&request)? {
                Answer::Written { size, .. } => size,
                other => return Err(self.unexpected("write_file", &other)),
            };
            append = true;
        }
        Ok(size)
    }

    /// A sign of life, so that a helper with an idle time goes on ([`Request::Ping`]).
    pub fn ping(&mut self) -> Result<(), LinkError> {
        match self.call(&Request::Ping)? {
            Answer::Pong => Ok(()),
            other => Err(self.unexpected("ping", &other)),
        }
    }

    pub fn clean(&mut self) -> Result<Cleaned, LinkError> {
        match self.call(&Request::Clean)? {
            Answer::Cleaned(c) => Ok(c),
            other => Err(self.unexpected("clean", &other)),
        }
    }

    /// Ends the helper. It replies once it has stopped what still ran (how many, returned)
    /// and removed its run directory; a directory it could not remove is an error.
    pub fn bye(mut self) -> Result<usize, LinkError> {
        let limit = self.limit.saturating_add(Duration::from_millis(DEFAULT_GRACE_MS));
        match self.call_within(&Request::Bye, limit)? {
            Answer::Bye { stopped, removed: true } => Ok(stopped),
            Answer::Bye { stopped, removed: false } => Err(LinkError::Refused {
                host: self.name.clone(),
                what: "bye",
                message: format!(
                    "stopped {stopped} program(s) but could not remove its run directory \
                     (its stderr says why)"
                ),
            }),
            other => Err(self.unexpected("bye", &other)),
        }
    }
}

/// The start of a long line, for a message.
fn clip(text: &str) -> &str {
    match text.char_indices().nth(200) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A pipe's far end that has already said `replies`.
    fn link(replies: &str) -> HostLink<Vec<u8>> {
        HostLink::new(
            "bench-1",
            Cursor::new(replies.to_owned()),
            Vec::new(),
            Duration::from_secs(5),
        )
    }

    #[test]
    fn replies_are_typed_and_requests_written_one_a_line() {
        let mut l = link(concat!(
            r#"{"result":"ok","kind":"cpu","id":"s","seconds":1.5,"accounting":"per-process"}"#,
            "\n",
            r#"{"result":"error","message":"no program started as \"x\" runs on this host"}"#,
            "\n"
        ));
        assert_eq!(l.cpu("s").unwrap(), (1.5, "per-process".to_owned()));
        let err = l.cpu("x").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"host bench-1: cpu refused: no program started as "x" runs on this host"#
        );
        let err = l.hello().unwrap_err();
        assert!(matches!(err, LinkError::Closed { .. }), "{err}");
        assert_eq!(err.host(), "bench-1");
        let written = String::from_utf8(l.writer.clone()).unwrap();
        assert_eq!(
            written,
            concat!(
                r#"{"kind":"cpu","id":"s"}"#,
                "\n",
                r#"{"kind":"cpu","id":"x"}"#,
                "\n",
                r#"{"kind":"hello"}"#,
                "\n"
            )
        );
    }

    #[test]
    fn wrong_replies_name_the_host_and_the_request() {
        let mut l =
            link("not json\n{\"result\":\"ok\",\"kind\":\"bye\",\"stopped\":0,\"removed\":true}\n");
        let err = l.hello().unwrap_err().to_string();
        assert!(err.starts_with("host bench-1: its helper's reply to hello is not"), "{err}");
        assert!(err.ends_with(": not json"), "{err}");
        let err = l.clean().unwrap_err().to_string();
        assert_eq!(err, "host bench-1: its helper answered clean with bye");
    }

    #[test]
    fn each_cause_is_printed_once() {
        let os = || io::Error::from_raw_os_error(libc::EPIPE);
        let cause = os().to_string();
        let host = "bench-1".to_owned();
        for err in [
            LinkError::Send { host: host.clone(), what: "hello", source: os() },
            LinkError::Read { host: host.clone(), what: "hello", source: os() },
        ] {
            herd_testutil::causes::assert_cause_once(&err, &cause);
        }
    }

    /// A helper that never answers: the request runs out of time, and the link is given up.
    #[test]
    fn a_silent_helper_times_out_and_the_link_is_given_up() {
        let (_keep, rx) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut l = HostLink::new("bench-2", rx, Vec::new(), Duration::from_millis(50));
        let err = l.hello().unwrap_err();
        assert!(matches!(err, LinkError::Timeout { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "host bench-2: no reply to hello within 50ms; the link is given up"
        );
        let err = l.hello().unwrap_err();
        assert!(matches!(err, LinkError::GivenUp { .. }), "{err}");
    }
}
