//! What an ab run produced, in ab's own terms: the input of every ab renderer.

/// One completed request, as ab's `struct data`, in 16 bytes.
///
/// ab keeps one such record per request, and so does herd ab (its report needs exact
/// medians of raw microseconds). Compact storage keeps `-n 1000000` at 16 MB: the start is
/// kept in whole seconds (all that `-g` prints), the durations as u32 microseconds
/// (saturating at about 71 minutes, far beyond any `-s` timeout in practice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    start_epoch_s: u32,
    ctime_us: u32,
    time_us: u32,
    wait_us: u32,
}

impl Sample {
    /// `start_epoch_us`: when the request (or its connection) started, in microseconds
    /// since the Unix epoch (ab's `starttime`); the others are ab's `ctime`, `time` and
    /// `waittime` in microseconds. Values out of range saturate.
    pub fn new(start_epoch_us: i64, ctime_us: i64, time_us: i64, wait_us: i64) -> Sample {
        let sat = |v: i64| u32::try_from(v.max(0)).unwrap_or(u32::MAX);
        Sample {
            start_epoch_s: sat(start_epoch_us.div_euclid(1_000_000)),
            ctime_us: sat(ctime_us),
            time_us: sat(time_us),
            wait_us: sat(wait_us),
        }
    }

    /// The start, to the second, in microseconds since the epoch.
    pub fn start_epoch_us(&self) -> i64 {
        i64::from(self.start_epoch_s) * 1_000_000
    }

    /// ab's `ctime`: connect (+ TLS handshake) time; 0 for a reused keep-alive connection.
    pub fn ctime_us(&self) -> i64 {
        i64::from(self.ctime_us)
    }

    /// ab's `time`: from start to the end of the response.
    pub fn time_us(&self) -> i64 {
        i64::from(self.time_us)
    }

    /// ab's `waittime`: from the request written to the first response byte.
    pub fn wait_us(&self) -> i64 {
        i64::from(self.wait_us)
    }
}

/// The TLS lines of the report, present only for https:// targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSummary {
    /// `<protocol>,<cipher>,<public key bits>,<cipher secret bits>`, e.g.
    /// `TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256`.
    pub protocol: String,
    /// e.g. `X25519 253 bits` as ab prints after `Server Temp Key:`; None if unknown.
    pub temp_key: Option<String>,
    /// The SNI name sent, if any.
    pub sni: Option<String>,
}

/// Attributes for `-w` HTML tables (`-x`, `-y`, `-z`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HtmlAttributes {
    pub table: String,
    pub tr: String,
    /// ab's default is `bgcolor=white`.
    pub td: String,
}

impl Default for HtmlAttributes {
    fn default() -> Self {
        HtmlAttributes { table: String::new(), tr: String::new(), td: "bgcolor=white".into() }
    }
}

/// Everything ab's report prints, with ab's names. Counters are ab's globals.
#[derive(Debug, Clone, PartialEq)]
pub struct AbResults {
    /// `Server:` of the first response, up to the first byte <= 0x20.
    pub server_software: String,
    pub hostname: String,
    pub port: u16,
    pub tls: Option<TlsSummary>,
    /// Proxy host and port when `-X` was given (the "Benchmarking" line says "through").
    pub proxy: Option<(String, u16)>,
    pub path: String,
    /// `-l`: print "Variable" instead of the document length.
    pub variable_length: bool,
    /// Body bytes of the first completed response.
    pub doclen: u64,
    pub concurrency: u32,
    /// Seconds from the start of the run to its last activity.
    pub time_taken_s: f64,
    pub done: u64,
    pub bad: u64,
    pub err_conn: u64,
    pub err_recv: u64,
    pub err_length: u64,
    pub err_except: u64,
    /// Write errors.
    pub epipe: u64,
    /// Non-2xx responses (ab's `err_response`).
    pub err_response: u64,
    /// `-k` was given: print "Keep-Alive requests".
    pub keepalive: bool,
    pub doneka: u64,
    pub total_read: u64,
    /// `-p`/`-u` was given: print "Total body sent" and the sent/total rates.
    pub send_body: bool,
    /// Every byte written, request heads included (ab's `totalposted`).
    pub total_posted: u64,
    /// Body bytes (ab's `totalbread`).
    pub total_body_read: u64,
    /// Completed requests, in completion order. Renderers sort copies as ab does.
    pub samples: Vec<Sample>,
    /// `-d` not given: print the percentile table.
    pub show_percentiles: bool,
    /// `-S` not given: print the [+/-sd] and median columns and the SANE warnings.
    pub show_confidence: bool,
    /// `-w`/`-x`/`-y`/`-z`: HTML output with these attributes.
    pub html: Option<HtmlAttributes>,
}
