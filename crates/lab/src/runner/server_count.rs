//! `[runner] server_count`: the server's own count of a run, read from its access log once
//! it has stopped, held against what the client counted (issue 34). The lines of the
//! workload's request (method and target) are counted; every other line is another
//! request's (the readiness file asked while the server started and through a path, Apache's
//! own `OPTIONS *` to wake its children, a connection closed before it sent a request).
//!
//! What reaches the server with the workload's request: the verification (one request, from
//! the client's host), the warm-up run and the measured run. So the log must hold at least
//! every response the client counted complete in both runs, plus the verification's; and at
//! most those, plus every request the client counted as failed (a timeout may still be
//! answered and logged, a connection refused never is), plus, for a timed load, every
//! request that could be in flight when a run stopped (its connections × the streams on
//! each, for each step, for each agent: the client abandons them uncounted, the server may
//! answer and log them). A request-count load without failures leaves no room: the count
//! must be exact.
//!
//! The check reads the log after the run's processes stopped (`cell.rs`), where a server
//! that buffers its lines (lighttpd) has written them out; on a `[hosts]` server host,
//! through the helper's `read_file`, which returns at most [`MAX_READ_BYTES`]: a log larger
//! than that is said to be, not counted in part.

use std::fmt;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use herd_drivers::{herd_serve_own_line, parse_access_log, BadLine, LogFormat};
use herd_host::protocol::MAX_READ_BYTES;
use herd_stats::{
    Measurement, REPORTED_SERVER_COUNT_LEAST, REPORTED_SERVER_COUNT_LOGGED,
    REPORTED_SERVER_COUNT_MOST,
};

use super::role_host::RoleHost;
use crate::load::{Load, Method, Request, Shape};

/// Where the run's front server wrote its access log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum LogAt {
    /// A file on this machine.
    Here(PathBuf),
    /// A file on the server host, as its helper's `read_file` takes it.
    Host(String),
}

/// The access log of a run's server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ServerLog {
    /// The server's name in the experiment.
    pub(super) server: String,
    pub(super) at: LogAt,
    pub(super) format: LogFormat,
}

/// What one client run counted, over all its steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counted {
    pub(super) completed: u64,
    pub(super) failed: u64,
}

impl Counted {
    pub(super) fn of(steps: &[Measurement]) -> Counted {
        steps.iter().fold(Counted::default(), |c, m| Counted {
            completed: c.completed.saturating_add(m.completed),
            failed: c.failed.saturating_add(m.failed),
        })
    }

    /// Every request it counted, complete or failed.
    pub(super) fn total(self) -> u64 {
        self.completed.saturating_add(self.failed)
    }
}

/// What the client sent the server, as the check needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Sent {
    /// Verification requests of the workload's request (one, unless it verified another
    /// target).
    pub(super) verified: u64,
    /// The warm-up run's counts, and the requests it could leave in flight.
    pub(super) warmup: Option<(Counted, u64)>,
    /// The measured run's counts, and the requests it could leave in flight.
    pub(super) measured: (Counted, u64),
}

impl Sent {
    /// The fewest and the most lines of the workload's request the log may hold.
    pub(super) fn bounds(&self) -> (u64, u64) {
        let runs = self.warmup.iter().chain(std::iter::once(&self.measured));
        runs.fold((self.verified, self.verified), |(least, most), (c, in_flight)| {
            (
                least.saturating_add(c.completed),
                most.saturating_add(c.total()).saturating_add(*in_flight),
            )
        })
    }

    /// Its parts in words, for a mismatch's message.
    fn describe(&self) -> String {
        let run = |what: &str, (c, in_flight): &(Counted, u64)| {
            let mut s = format!("{} {what} completed", c.completed);
            if c.failed > 0 {
                s.push_str(&format!(" and {} failed", c.failed));
            }
            if *in_flight > 0 {
                s.push_str(&format!(", up to {in_flight} in flight when it stopped"));
            }
            s
        };
        let mut parts = vec![format!("{} verification", self.verified)];
        if let Some(w) = &self.warmup {
            parts.push(run("warm-up", w));
        }
        parts.push(run("measured", &self.measured));
        parts.join(", ")
    }
}

/// The most requests a client run of `load` over `agents` agents can leave in flight when
/// it stops: none for a request count (the run ends when every request has), else each
/// step's connections, each with its streams at once, on every agent (each agent opens at
/// most the load's connections).
pub(super) fn in_flight(load: &Load, agents: u8) -> u64 {
    let connections: u64 = match &load.shape {
        Shape::Requests { .. } => return 0,
        Shape::Duration { concurrency, .. } => u64::from(*concurrency),
        Shape::Rate { connections, .. } => u64::from(*connections),
        Shape::Steps { clients, .. } => clients.iter().map(|&c| u64::from(c)).sum(),
        Shape::RateSteps { rates, connections, .. } => {
            (rates.len() as u64).saturating_mul(u64::from(*connections))
        }
    };
    let streams = load.streams.map_or(1, |s| u64::from(s.get()));
    connections.saturating_mul(streams).saturating_mul(u64::from(agents.max(1)))
}

/// A run's check, waiting for its server to stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pending {
    pub(super) log: ServerLog,
    /// The workload's request as a log line names it: `GET` and `/sizes/101.html`.
    pub(super) method: &'static str,
    pub(super) target: String,
    pub(super) sent: Sent,
}

impl Pending {
    /// The check of `log` for `request`, after `sent`.
    pub(super) fn new(log: ServerLog, request: &Request, sent: Sent) -> Pending {
        let method = match request.method {
            Method::Get => "GET",
            Method::Post { .. } => "POST",
        };
        Pending { log, method, target: request.path.clone(), sent }
    }

    /// Reads the log (on `host` when the server ran there) and counts it; the figures for
    /// the record (logged, fewest, most), and the failure when the count is outside.
    pub(super) fn check(
        &self,
        host: Option<&RoleHost>,
    ) -> (Vec<(String, f64)>, Result<(), CountFailure>) {
        let logged = match self.logged(host) {
            Ok(n) => n,
            Err(why) => {
                let failure = CountFailure::Unreadable { server: self.log.server.clone(), why };
                return (Vec::new(), Err(failure));
            }
        };
        let (least, most) = self.sent.bounds();
        let figures = vec![
            (REPORTED_SERVER_COUNT_LOGGED.to_owned(), logged as f64),
            (REPORTED_SERVER_COUNT_LEAST.to_owned(), least as f64),
            (REPORTED_SERVER_COUNT_MOST.to_owned(), most as f64),
        ];
        (figures, self.judge(logged))
    }

    /// Whether `logged` lines are what the client's counts allow.
    pub(super) fn judge(&self, logged: u64) -> Result<(), CountFailure> {
        let (least, most) = self.sent.bounds();
        if (least..=most).contains(&logged) {
            return Ok(());
        }
        Err(CountFailure::Mismatch {
            server: self.log.server.clone(),
            request: format!("{} {}", self.method, self.target),
            logged,
            least,
            most,
            sent: self.sent.describe(),
        })
    }

    /// The lines of the request in the log, read where it is.
    fn logged(&self, host: Option<&RoleHost>) -> Result<u64, String> {
        let (method, target) = (self.method, self.target.as_str());
        match (&self.log.at, host) {
            (LogAt::Here(path), _) => {
                let file = std::fs::File::open(path)
                    .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
                count(self.log.format, BufReader::new(file).lines(), method, target)
                    .map_err(|e| format!("{}: {e}", path.display()))
            }
            (LogAt::Host(path), Some(host)) => {
                let part = host.read_file(path, MAX_READ_BYTES)?;
                if part.truncated {
                    return Err(too_large(&host.url.to_string(), path, part.size));
                }
                let lines = part.text.lines().map(|l| Ok(l.to_owned()));
                count(self.log.format, lines, method, target)
                    .map_err(|e| format!("{path} on {}: {e}", host.url))
            }
            (LogAt::Host(path), None) => Err(format!("{path} is on a server host no longer here")),
        }
    }
}

/// Why a log on `host` is not counted: it is larger than one `read_file` returns.
fn too_large(host: &str, path: &str, size: u64) -> String {
    format!(
        "{path} on {host} is {size} bytes, more than the {} MiB herd's helper returns in one \
         read: it cannot be counted whole (run fewer requests in a run with server_count on)",
        MAX_READ_BYTES >> 20
    )
}

/// The lines of `method target` in a log of `format`, read line by line (a long run's log
/// need not fit in memory). herd serve's own first and last lines are skipped, and so is a
/// Common line whose request is `-` or empty (a connection closed or timed out before it
/// sent a request: Apache's 408, nginx's 400); any other line not in the format fails the
/// count, as a log misread would be no count.
pub(super) fn count(
    format: LogFormat,
    lines: impl Iterator<Item = std::io::Result<String>>,
    method: &str,
    target: &str,
) -> Result<u64, String> {
    let herd = format == LogFormat::HerdServe;
    let each = if herd { LogFormat::Common } else { format };
    let mut lines = lines.enumerate().peekable();
    let mut n = 0u64;
    while let Some((i, line)) = lines.next() {
        let line = line.map_err(|e| format!("cannot read line {}: {e}", i + 1))?;
        if herd && herd_serve_own_line(i, &line, lines.peek().is_none()) {
            continue;
        }
        if each == LogFormat::Common && (line.contains("] \"-\" ") || line.contains("] \"\" ")) {
            continue;
        }
        let parsed = parse_access_log(each, &line)
            .map_err(|bad| BadLine { line: i + 1, ..bad }.to_string())?;
        n += parsed.iter().filter(|l| l.method == method && l.target == target).count() as u64;
    }
    Ok(n)
}

/// Why the check failed a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CountFailure {
    /// The log's count is outside what the client's counts allow.
    Mismatch {
        server: String,
        /// `GET /sizes/101.html`.
        request: String,
        logged: u64,
        least: u64,
        most: u64,
        /// What the client sent, in words.
        sent: String,
    },
    /// The log could not be read or counted.
    Unreadable { server: String, why: String },
}

impl fmt::Display for CountFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CountFailure::Mismatch { server, request, logged, least, most, sent } => {
                let allowed = if least == most {
                    format!("exactly {least}")
                } else {
                    format!("{least} to {most}")
                };
                let suspect = if logged < least {
                    "fewer than the client counted complete: suspect the client miscounted \
                     (responses it counted that the server never logged), or a server stopped \
                     before it wrote its log out"
                } else {
                    "more than the client sent: suspect something else sent this request to \
                     the server, or the client sent more than it counted"
                };
                write!(
                    f,
                    "server count: the access log of {server} has {logged} lines of {request}, \
                     the client's counts allow {allowed} ({sent}): {suspect}"
                )
            }
            CountFailure::Unreadable { server, why } => {
                write!(f, "server count: the access log of {server} cannot be counted: {why}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::time::Duration;

    use super::*;
    use crate::load::Warmup;

    fn load(shape: Shape, streams: Option<u32>) -> Load {
        Load {
            shape,
            keep_alive: true,
            warmup: Warmup::None,
            timeout: Duration::from_secs(30),
            streams: streams.and_then(NonZeroU32::new),
        }
    }

    fn counted(completed: u64, failed: u64) -> Counted {
        Counted { completed, failed }
    }

    fn line(request: &str) -> String {
        format!("127.0.0.1 - - [03/Dec/2026:05:30:00 +0000] \"{request}\" 200 101")
    }

    fn lines(text: &str) -> impl Iterator<Item = std::io::Result<String>> + '_ {
        text.lines().map(|l| Ok(l.to_owned()))
    }

    fn pending(sent: Sent) -> Pending {
        let log = ServerLog {
            server: "nginx".into(),
            at: LogAt::Here(PathBuf::from("/nowhere")),
            format: LogFormat::Common,
        };
        let request = Request {
            path: "/sizes/101.html".into(),
            method: Method::Get,
            specweb_dir: None,
            expect_status: 200,
            expect_body_bytes: Some(101),
        };
        Pending::new(log, &request, sent)
    }

    #[test]
    fn a_request_count_load_leaves_no_room() {
        let n300 = load(Shape::Requests { n_requests: 300, concurrency: 2 }, None);
        assert_eq!(in_flight(&n300, 1), 0);
        assert_eq!(in_flight(&n300, 4), 0, "each agent ends with its share");
        let sent = Sent { verified: 1, warmup: None, measured: (counted(300, 0), 0) };
        assert_eq!(sent.bounds(), (301, 301));
        let p = pending(sent);
        assert_eq!(p.judge(301), Ok(()));
        for wrong in [300, 302] {
            assert!(p.judge(wrong).is_err(), "{wrong}");
        }
        // A warm-up's requests are the server's too.
        let warmed =
            Sent { verified: 1, warmup: Some((counted(10, 0), 0)), measured: (counted(300, 0), 0) };
        assert_eq!(warmed.bounds(), (311, 311));
    }

    #[test]
    fn a_timed_load_allows_what_was_in_flight_and_what_failed() {
        let d = |c| Shape::Duration { duration: Duration::from_secs(1), concurrency: c };
        assert_eq!(in_flight(&load(d(8), None), 1), 8);
        // Streams at once on each connection, and each agent's own connections.
        assert_eq!(in_flight(&load(d(8), Some(10)), 1), 80);
        assert_eq!(in_flight(&load(d(8), None), 3), 24);
        let rate = Shape::Rate { per_second: 100.0, duration: Duration::ZERO, connections: 4 };
        assert_eq!(in_flight(&load(rate, None), 1), 4);
        // Each step stops with its own in flight.
        let steps = Shape::Steps { clients: vec![1, 2, 4], step: Duration::from_secs(1) };
        assert_eq!(in_flight(&load(steps, None), 1), 7);
        let rates =
            Shape::RateSteps { rates: vec![10.0, 20.0], step: Duration::ZERO, connections: 3 };
        assert_eq!(in_flight(&load(rates, None), 2), 12);

        let sent = Sent {
            verified: 1,
            warmup: Some((counted(50, 0), 2)),
            measured: (counted(1000, 3), 2),
        };
        assert_eq!(sent.bounds(), (1051, 1058));
        let p = pending(sent);
        for ok in [1051, 1055, 1058] {
            assert_eq!(p.judge(ok), Ok(()), "{ok}");
        }
        let short = p.judge(1050).unwrap_err().to_string();
        assert_eq!(
            short,
            "server count: the access log of nginx has 1050 lines of GET /sizes/101.html, the \
             client's counts allow 1051 to 1058 (1 verification, 50 warm-up completed, up to 2 \
             in flight when it stopped, 1000 measured completed and 3 failed, up to 2 in flight \
             when it stopped): fewer than the client counted complete: suspect the client \
             miscounted (responses it counted that the server never logged), or a server \
             stopped before it wrote its log out"
        );
        let long = p.judge(1059).unwrap_err().to_string();
        assert!(long.contains("has 1059 lines"), "{long}");
        assert!(long.contains("something else sent this request to the server"), "{long}");
    }

    #[test]
    fn only_lines_of_the_request_count() {
        let text = [
            line("GET /sizes/101.html HTTP/1.1"),
            line("GET /.herd-ready HTTP/1.1"),
            line("POST /sizes/101.html HTTP/1.1"),
            line("GET /sizes/1010.html HTTP/1.1"),
            line("OPTIONS * HTTP/1.0"),
            "127.0.0.1 - - [03/Dec/2026:05:30:00 +0000] \"-\" 408 -".to_owned(),
            line("GET /sizes/101.html HTTP/2.0"),
        ]
        .join("\n");
        let n = count(LogFormat::Common, lines(&text), "GET", "/sizes/101.html");
        assert_eq!(n, Ok(2));
        // herd serve's own lines around its log.
        let herd = format!(
            "listening on http://127.0.0.1:8080\nherd serve: I/O epoll\n{}\n{}\nherd serve: stopped after 2 requests",
            line("GET /sizes/101.html HTTP/1.1"),
            line("GET /sizes/101.html HTTP/1.1")
        );
        assert_eq!(count(LogFormat::HerdServe, lines(&herd), "GET", "/sizes/101.html"), Ok(2));
        // Anywhere else they are no log line, and nothing is counted from a misread log.
        let wrong = format!("{}\nlistening on http://127.0.0.1:8080\n", line("GET / HTTP/1.1"));
        let err = count(LogFormat::HerdServe, lines(&wrong), "GET", "/").unwrap_err();
        assert!(err.starts_with("line 2 of the access log is not in its format"), "{err}");
    }

    #[test]
    fn a_short_log_is_a_mismatch() {
        // The client counted 300 and the verification: the server logged 299 of them.
        let text: Vec<String> = (0..299).map(|_| line("GET /sizes/101.html HTTP/1.1")).collect();
        let logged =
            count(LogFormat::Common, lines(&text.join("\n")), "GET", "/sizes/101.html").unwrap();
        let p = pending(Sent { verified: 1, warmup: None, measured: (counted(300, 0), 0) });
        let err = p.judge(logged).unwrap_err().to_string();
        assert!(err.contains("has 299 lines of GET /sizes/101.html"), "{err}");
        assert!(
            err.contains("allow exactly 301 (1 verification, 300 measured completed)"),
            "{err}"
        );
        assert!(err.contains("suspect the client miscounted"), "{err}");
    }

    #[test]
    fn a_log_larger_than_one_read_is_said_to_be() {
        let why = too_large("ssh://lab@server", "/run/x/logs/access.log", 20 << 20);
        assert_eq!(
            why,
            "/run/x/logs/access.log on ssh://lab@server is 20971520 bytes, more than the 16 \
             MiB herd's helper returns in one read: it cannot be counted whole (run fewer \
             requests in a run with server_count on)"
        );
        let failure = CountFailure::Unreadable { server: "nginx".into(), why };
        assert!(failure.to_string().starts_with("server count: the access log of nginx cannot"));
    }

    #[test]
    fn a_log_on_this_machine_is_read_from_its_file() {
        let dir = std::env::temp_dir().join(format!("herd-server-count-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("access.log");
        let text: Vec<String> = (0..301).map(|_| line("GET /sizes/101.html HTTP/1.1")).collect();
        std::fs::write(&path, text.join("\n") + "\n").unwrap();
        let mut p = pending(Sent { verified: 1, warmup: None, measured: (counted(300, 0), 0) });
        p.log.at = LogAt::Here(path);
        let (figures, verdict) = p.check(None);
        assert_eq!(verdict, Ok(()));
        assert_eq!(
            figures,
            [
                (REPORTED_SERVER_COUNT_LOGGED.to_owned(), 301.0),
                (REPORTED_SERVER_COUNT_LEAST.to_owned(), 301.0),
                (REPORTED_SERVER_COUNT_MOST.to_owned(), 301.0)
            ]
        );
        p.log.at = LogAt::Here(dir.join("missing.log"));
        let (figures, verdict) = p.check(None);
        assert!(figures.is_empty());
        assert!(verdict.unwrap_err().to_string().contains("cannot open"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
