//! ab's accounting: every engine outcome becomes ab's counters and `struct data` samples,
//! with ab's rules (see docs/ab-compat.md, "Accounting").
//!
//! Each worker owns an [`AbRecorder`]; [`merge`] folds them into [`AbResults`] after the
//! run. The only shared state is the failure count that ab's "Test aborted after 10
//! failures" rule reads, touched on failures only, never on a successful request.

use std::ops::AddAssign;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use herd_engine::{Answer, Completed, Failed, Recorder, Run};
use herd_record::{MaybeSeconds, Seconds};
use herd_stats::{FailureKind, LatencyHistogram, LengthTally, RunStats};

use crate::{AbConfig, AbResults, Sample};

/// A fatal error that ends an ab run the way ab ends it: a message on stderr naming the
/// APR call, "Total of N requests completed" on stdout, and `exit(rv)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbFatal {
    /// Printed on stderr before the message (ab's "\nTest aborted after 10 failures\n\n").
    pub preface: Option<&'static str>,
    /// e.g. `apr_socket_recv: Connection refused (111)`.
    pub message: String,
    /// The process exit status: the error code modulo 256, as exit() truncates it.
    pub exit_code: i32,
}

impl AbFatal {
    /// ab's `apr_err(fn, rv)` for an OS error number.
    pub fn os(function: &str, errno: i32) -> AbFatal {
        AbFatal {
            preface: None,
            message: format!("{function}: {} ({errno})", strerror(errno)),
            exit_code: errno & 0xff,
        }
    }
}

/// Settings every worker's recorder shares.
#[derive(Debug, Clone)]
pub struct AbAccounting {
    pub keepalive: bool,
    pub variable_length: bool,
    pub receive_errors_ok: bool,
    /// An https:// target: ab finds a refused connection through SSL_read, not recv().
    pub tls: bool,
    /// Instant and wall-clock time taken together before the run, to date samples for `-g`.
    pub base: Instant,
    pub base_wall: SystemTime,
    /// `base_wall` in microseconds since the epoch, computed once.
    pub base_epoch_us: i64,
    /// ab's global `bad` counter, for the abort-after-10-failures rule.
    pub bad: Arc<AtomicU64>,
    /// Record latency histograms: only `--json` reports them, and three HdrHistogram
    /// records per request are a visible share of the client's CPU on keep-alive runs.
    pub histograms: bool,
}

impl AbAccounting {
    pub fn new(cfg: &AbConfig) -> AbAccounting {
        let base_wall = SystemTime::now();
        AbAccounting {
            keepalive: cfg.keepalive,
            variable_length: cfg.variable_length,
            receive_errors_ok: cfg.receive_errors_ok,
            tls: cfg.url.tls,
            base: Instant::now(),
            base_wall,
            base_epoch_us: epoch_micros(base_wall),
            bad: Arc::new(AtomicU64::new(0)),
            histograms: cfg.json.is_some(),
        }
    }
}

/// What every recorder counts ([`RunStats`]), and what only ab's report needs beside it:
/// waiting times (ab's "Waiting") and body lengths (for its Length failures).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AbStats {
    pub core: RunStats,
    /// From the request fully written to the first response byte.
    pub waiting: LatencyHistogram,
    /// Body lengths of complete responses.
    pub lengths: LengthTally,
}

impl AddAssign<&AbStats> for AbStats {
    fn add_assign(&mut self, o: &AbStats) {
        // Destructured without `..`: a new field does not compile until it is merged here.
        let AbStats { core, waiting, lengths } = o;
        self.core += core;
        self.waiting += waiting;
        self.lengths += lengths;
    }
}

/// One worker's ab counters.
#[derive(Debug)]
pub struct AbRecorder {
    acc: AbAccounting,
    /// The full statistics, for `--json`.
    pub stats: AbStats,
    samples: Vec<Sample>,
    /// When and with what the worker's first response completed: the run's first
    /// response decides "Document Length" and "Server Software".
    first: Option<(Instant, u64)>,
    server: Option<(Instant, String)>,
    done: u64,
    doneka: u64,
    err_conn: u64,
    err_recv: u64,
    err_except: u64,
    /// Connections refused and counted as ab counts them ([`AbRecorder::refused`]); ab's
    /// counters for them are [`merge`]'s to derive, from all workers' refusals at once.
    refused: u64,
    /// Length failures known without the document length (truncated or overlong bodies).
    err_length_direct: u64,
    epipe: u64,
    err_response: u64,
    /// Failures counted in `bad` but in none of ab's four sub-counters.
    bad_unlisted: u64,
    fatal: Option<AbFatal>,
    /// The run cut into seconds for `--tui`'s view (None without it: no per-request cost
    /// but this test).
    seconds: MaybeSeconds,
}

impl AbRecorder {
    /// Also cuts the run into seconds and sends them on (`--tui`).
    pub fn with_seconds(mut self, seconds: Seconds) -> AbRecorder {
        self.seconds.set(seconds);
        self
    }

    /// The run ended at `end` (the engine's `Run::ended`): sends the last second.
    pub fn finish_seconds(&mut self, end: Instant) {
        self.seconds.finish(end);
    }

    /// `expected` is the worker's share of requests, so that samples never reallocate.
    pub fn new(acc: AbAccounting, expected: u64) -> AbRecorder {
        AbRecorder {
            acc,
            stats: AbStats::default(),
            samples: Vec::with_capacity(usize::try_from(expected).unwrap_or(0).min(1 << 24)),
            first: None,
            server: None,
            done: 0,
            doneka: 0,
            err_conn: 0,
            err_recv: 0,
            err_except: 0,
            refused: 0,
            err_length_direct: 0,
            epipe: 0,
            err_response: 0,
            bad_unlisted: 0,
            fatal: None,
            seconds: MaybeSeconds::default(),
        }
    }

    fn sample(&mut self, t: &herd_engine::Timing, d: &Durations) {
        let start_epoch_us = self.acc.base_epoch_us + signed_micros(self.acc.base, t.start);
        self.samples.push(Sample::new(
            start_epoch_us,
            micros(d.connect),
            micros(d.total),
            // ab: waittime = beginread - endwrite, floored at 0; a response that never
            // started (or a request never written) gives 0.
            d.wait.map_or(0, micros),
        ));
        self.done += 1;
    }

    fn bad(&self) -> u64 {
        self.acc.bad.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A connection refused where ab goes on: with `-r`, or over TLS (ab's SSL_read path
    /// never looks at `-r`). ab learns of the refusal by reading the connecting socket and
    /// closes it as a finished request: a "Complete" request with no bytes (`done++`), a
    /// Receive failure over plain TCP (`err_recv++`, `bad++`). Then, still handling the same
    /// poll event, it sees its error flags, reopens, and reads the new connection, which on
    /// loopback has already been refused too: an Exception (`err_except++`, `bad++`) and a
    /// second refused request like the first, counted even past `-n`. So every *pair* of
    /// refusals costs one Exception, and an odd last one is paired with a refusal ab makes
    /// but does not count as complete (docs/ab-compat.md, "Accounting"). The pairs are
    /// [`merge`]'s to count, over every worker; here the sample, and ab's `bad` as it grows.
    fn refused(&mut self, f: &Failed) {
        self.refused += 1;
        self.sample(&f.timing, &Durations::of(&f.timing));
        if !self.acc.tls {
            self.bad();
        }
        if self.refused % 2 == 1 {
            self.bad();
        }
    }
}

impl Recorder for AbRecorder {
    fn completed(&mut self, c: &Completed<'_>) -> Answer {
        // Each duration is computed once, for the histograms and the sample alike.
        let d = Durations::of(c.timing);
        record_stats_completed(&mut self.stats, c, &d, self.acc.histograms);
        // ab: the first digit of the status is not '2' → "Non-2xx" (3xx included).
        if c.status / 100 != 2 {
            self.err_response += 1;
        }
        if self.acc.keepalive && c.reusable {
            self.doneka += 1;
        }
        if self.first.is_none() {
            self.first = Some((c.timing.end, c.body_bytes));
        }
        if let (None, Some(s)) = (&self.server, c.server) {
            self.server = Some((c.timing.end, String::from_utf8_lossy(s).into_owned()));
        }
        self.sample(c.timing, &d);
        if let Some(s) = self.seconds.get() {
            // ab's closed loop sends each request as its connection frees: never late.
            s.completed(c.timing.end, d.total, c.bytes_read, false);
        }
        Answer::Continue
    }

    fn tick(&mut self, now: Instant) {
        self.seconds.tick(now);
    }

    fn open_connections(&mut self, open: usize) {
        self.seconds.open_connections(open);
    }

    fn failed(&mut self, f: &Failed) -> Answer {
        record_stats_failed(&mut self.stats, f);
        if let Some(s) = self.seconds.get() {
            s.failed(f.timing.end, f.kind, f.bytes_read);
        }
        match f.kind {
            FailureKind::Connect
                if f.os_error == Some(ECONNREFUSED)
                    && (self.acc.receive_errors_ok || self.acc.tls) =>
            {
                self.refused(f);
            }
            FailureKind::Connect | FailureKind::Tls => {
                // ab discovers a refused connection through recv() on the connecting
                // socket, which is fatal without -r: "apr_socket_recv: Connection
                // refused (111)".
                if !self.acc.receive_errors_ok {
                    let errno = f.os_error.unwrap_or(ECONNREFUSED);
                    self.fatal = Some(AbFatal::os("apr_socket_recv", errno));
                    return Answer::Abort;
                }
                self.err_conn += 1;
                if self.bad() > 10 {
                    let errno = f.os_error.unwrap_or(ECONNREFUSED);
                    let mut fatal = AbFatal::os("apr_socket_connect()", errno);
                    fatal.preface = Some("\nTest aborted after 10 failures\n\n");
                    self.fatal = Some(fatal);
                    return Answer::Abort;
                }
            }
            FailureKind::Receive => {
                if !self.acc.receive_errors_ok {
                    let errno = f.os_error.unwrap_or(0);
                    self.fatal = Some(AbFatal::os("apr_socket_recv", errno));
                    return Answer::Abort;
                }
                self.err_recv += 1;
                self.bad();
            }
            FailureKind::Write => {
                // ab: "Send request failed!" and epipe++, not counted in Failed requests.
                self.epipe += 1;
            }
            FailureKind::Timeout => {
                // ab would abort the whole run; herd aborts the one request and counts it
                // under Exceptions (docs/ab-compat.md, "Where herd ab differs").
                self.err_except += 1;
                self.bad();
            }
            FailureKind::Closed | FailureKind::Overrun => {
                // ab reads until the server closes and then compares the body length
                // with the first response's: a short or long body is a Length failure,
                // and the request still counts as complete.
                self.sample(&f.timing, &Durations::of(&f.timing));
                if !self.acc.variable_length {
                    self.err_length_direct += 1;
                    self.bad();
                }
            }
            // Only HTTP/2 and HTTP/3 streams fail these ways; herd ab speaks HTTP/1 (as ab).
            FailureKind::Malformed
            | FailureKind::HeadTooLarge
            | FailureKind::Reset
            | FailureKind::GoAway
            | FailureKind::Flood => {
                // ab: "header is invalid or too big" → err_response++ and bad++, but in
                // none of the four sub-counters (so the breakdown can sum to less).
                self.err_response += 1;
                self.bad_unlisted += 1;
                self.bad();
            }
        }
        Answer::Continue
    }
}

/// Everything the ab CLI needs after a run.
#[derive(Debug)]
pub struct Merged {
    pub results: AbResults,
    pub stats: AbStats,
    pub fatal: Option<AbFatal>,
    /// ab's "SSL read failed (5) - closing connection" lines, one per refused https://
    /// connection it counted (see [`AbRecorder::refused`]): ab prints them on stderr as they
    /// happen, herd ab after the run.
    pub ssl_read_failed: u64,
    /// Which event-loop backend measured (`--io`), and why when `auto` fell back.
    pub io: herd_engine::Resolved,
}

/// Folds the workers' recorders into ab's results.
pub fn merge(cfg: &AbConfig, run: Run<AbRecorder>) -> Merged {
    // ab: (double)(lasttime - start) / APR_USEC_PER_SEC, from whole microseconds.
    let time_taken_s =
        run.ended.saturating_duration_since(run.started).as_micros() as f64 / 1_000_000.0;
    let mut stats = AbStats::default();
    let mut first: Option<(Instant, u64)> = None;
    let mut server: Option<(Instant, String)> = None;
    let mut fatal = None;
    // Reuse the largest worker's sample vector and append the others to it, so that a
    // million samples are never held twice (herd ab -n 1000000 must stay under 64 MB).
    let mut recorders = run.recorders;
    let total: usize = recorders.iter().map(|r| r.samples.len()).sum();
    let largest = (0..recorders.len()).max_by_key(|&i| recorders[i].samples.capacity());
    let mut samples = match largest {
        Some(i) => std::mem::take(&mut recorders[i].samples),
        None => Vec::new(),
    };
    samples.reserve_exact(total - samples.len());
    let mut r_all = AbResults {
        server_software: String::new(),
        hostname: cfg.url.hostname.clone(),
        port: cfg.url.port,
        tls: None,
        proxy: cfg.proxy.clone(),
        path: cfg.url.path.clone(),
        variable_length: cfg.variable_length,
        doclen: 0,
        concurrency: cfg.concurrency,
        time_taken_s,
        done: 0,
        bad: 0,
        err_conn: 0,
        err_recv: 0,
        err_length: 0,
        err_except: 0,
        epipe: 0,
        err_response: 0,
        keepalive: cfg.keepalive,
        doneka: 0,
        total_read: 0,
        send_body: cfg.body.is_some(),
        total_posted: 0,
        total_body_read: 0,
        samples: Vec::new(),
        show_percentiles: cfg.show_percentiles,
        show_confidence: cfg.show_confidence,
        html: cfg.html.clone(),
    };
    let mut bad_unlisted = 0;
    let mut refused = 0;
    for mut r in recorders {
        stats += &r.stats;
        if let Some(f) = r.first {
            if first.is_none_or(|(t, _)| f.0 < t) {
                first = Some(f);
            }
        }
        if let Some(s) = r.server.take() {
            if server.as_ref().is_none_or(|(t, _)| s.0 < *t) {
                server = Some(s);
            }
        }
        if fatal.is_none() {
            fatal = r.fatal.take();
        }
        r_all.done += r.done;
        r_all.doneka += r.doneka;
        r_all.err_conn += r.err_conn;
        r_all.err_recv += r.err_recv;
        r_all.err_except += r.err_except;
        r_all.err_length += r.err_length_direct;
        r_all.epipe += r.epipe;
        r_all.err_response += r.err_response;
        bad_unlisted += r.bad_unlisted;
        refused += r.refused;
        samples.append(&mut r.samples);
    }
    // ab counts refusals in pairs, one poll event each (AbRecorder::refused).
    let pairs = refused.div_ceil(2);
    r_all.err_except += pairs;
    let ssl_read_failed = if cfg.url.tls {
        2 * pairs
    } else {
        r_all.err_recv += 2 * pairs;
        0
    };
    if let Some((_, len)) = first {
        r_all.doclen = len;
        if !cfg.variable_length {
            // Bodies of complete responses, now that the first is known.
            r_all.err_length += stats.lengths.other_than(len);
        }
    }
    // ab's byte totals are the merged statistics' own: every byte read, every byte written
    // (request heads included, ab's "Total body sent"), and decoded body bytes.
    r_all.total_read = stats.core.bytes_read;
    r_all.total_posted = stats.core.bytes_written;
    r_all.total_body_read = stats.core.body_bytes;
    r_all.server_software = server.map(|(_, s)| s).unwrap_or_default();
    r_all.bad =
        r_all.err_conn + r_all.err_recv + r_all.err_length + r_all.err_except + bad_unlisted;
    // ab's report reads the samples sorted by total time (its last qsort); sorting once
    // here lets the renderers read them without a copy.
    samples.sort_by_key(|s| s.time_us());
    r_all.samples = samples;
    r_all.tls = run.tls_info.map(|t| crate::TlsSummary {
        protocol: format!(
            "{},{},{},{}",
            t.protocol,
            t.cipher,
            t.peer_key_bits.unwrap_or(0),
            t.cipher_bits
        ),
        temp_key: t.temp_key,
        sni: cfg.tls.server_name.clone(),
    });
    Merged { results: r_all, stats, fatal, ssl_read_failed, io: run.io }
}

/// The three durations ab reports for a request.
struct Durations {
    /// Connect (+ TLS) time: `connected - start`, 0 on a reused connection.
    connect: Duration,
    /// `first_byte - written`, when both happened.
    wait: Option<Duration>,
    /// `end - start`.
    total: Duration,
}

impl Durations {
    fn of(t: &herd_engine::Timing) -> Durations {
        Durations {
            connect: t.connected.map_or(Duration::ZERO, |c| c.saturating_duration_since(t.start)),
            wait: match (t.written, t.first_byte) {
                (Some(w), Some(f)) => Some(f.saturating_duration_since(w)),
                _ => None,
            },
            total: t.end.saturating_duration_since(t.start),
        }
    }
}

fn record_stats_completed(s: &mut AbStats, c: &Completed<'_>, d: &Durations, histograms: bool) {
    s.core.count_response(c.status, c.bytes_read, c.bytes_written, c.body_bytes, c.reused);
    s.lengths.add(c.body_bytes);
    if !histograms {
        return;
    }
    if !c.reused && c.timing.connected.is_some() {
        s.core.connect.record(d.connect);
    }
    if let Some(w) = d.wait {
        s.waiting.record(w);
    }
    // ab is a closed loop: the intended send is the start.
    s.core.total.record(d.total);
}

fn record_stats_failed(s: &mut AbStats, f: &Failed) {
    s.core.count_failure(f.kind, f.bytes_read, f.bytes_written);
}

fn micros(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

fn signed_micros(base: Instant, t: Instant) -> i64 {
    if t >= base {
        micros(t - base)
    } else {
        -micros(base - t)
    }
}

fn epoch_micros(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).map(micros).unwrap_or(0)
}

/// The C library's text for an errno, as ab's apr_strerror gives it.
fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Linux's ECONNREFUSED, for a refusal the OS reported without an error number.
const ECONNREFUSED: i32 = 111;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fatal_messages_match_ab() {
        let f = AbFatal::os("apr_socket_recv", 111);
        assert_eq!(f.message, "apr_socket_recv: Connection refused (111)");
        assert_eq!(f.exit_code, 111);
        let f = AbFatal::os("apr_socket_recv", 104);
        assert_eq!(f.message, "apr_socket_recv: Connection reset by peer (104)");
    }
}
