//! A parsed `herd ab` command line: ab's flags with ab's meaning, validated.

use std::path::PathBuf;
use std::time::Duration;

use crate::results::HtmlAttributes;

/// The target URL, split the way ab's `parse_url` splits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbUrl {
    pub tls: bool,
    /// Host as given, without brackets for IPv6 (`::1`).
    pub hostname: String,
    /// Port given, or 80/443.
    pub port: u16,
    /// Path with query, as given (starts with `/`).
    pub path: String,
    /// The URL exactly as given (sent as the request target through a proxy, `-X`).
    pub full: String,
}

/// TLS protocol versions `-f` may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsProtocol {
    /// `ALL` (the default): TLS 1.2 and 1.3, the versions rustls offers.
    All,
    Tls12,
    Tls13,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsOptions {
    /// `-I` not given: send SNI (never for an IP address, as ab).
    pub sni: bool,
    /// The SNI name ab would send, resolved: `None` with `-I`, else the last `-H Host:` value
    /// (trimmed, port included if the user wrote one) or the URL's host, and `None` when that
    /// is empty or an IP address (ab: "IP not allowed in TLS SNI extension"). A name rustls
    /// cannot send (e.g. `example.com:8443` from `-H`) is the engine's call: ab sends it as is.
    pub server_name: Option<String>,
    /// `-f`.
    pub protocol: TlsProtocol,
    /// `-Z`, as rustls cipher suite names (IANA names like `TLS13_AES_128_GCM_SHA256`).
    pub cipher_suites: Option<Vec<String>>,
    /// `-E`: a PEM file with the client certificate chain and its private key.
    pub client_cert: Option<PathBuf>,
}

/// A request body from `-p` (POST) or `-u` (PUT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub data: Vec<u8>,
    /// `-T`, default `text/plain`.
    pub content_type: String,
}

/// Everything `herd ab` needs to run, from ab's flags plus herd's long options.
#[derive(Debug, Clone, PartialEq)]
pub struct AbConfig {
    pub url: AbUrl,
    /// `-n` (default 1; `-t` implies 50000 as in ab).
    pub requests: u64,
    /// `-c`.
    pub concurrency: u32,
    /// `-t`.
    pub time_limit: Option<Duration>,
    /// `-s`, default 30 s.
    pub timeout: Duration,
    /// `-b`: SO_SNDBUF and SO_RCVBUF.
    pub window_size: Option<u32>,
    /// `-B`: local address to bind.
    pub bind: Option<String>,
    /// Method name on the request line (GET, HEAD with `-i`, POST/PUT with `-p`/`-u`, `-m`).
    pub method: String,
    /// True with `-i` (HEAD): responses have no body.
    pub head: bool,
    pub body: Option<Body>,
    /// `-v`.
    pub verbosity: u32,
    /// `-w`, `-x`, `-y`, `-z`.
    pub html: Option<HtmlAttributes>,
    /// `-k`.
    pub keepalive: bool,
    /// `-d` not given.
    pub show_percentiles: bool,
    /// `-S` not given.
    pub show_confidence: bool,
    /// `-q` not given (progress lines on stderr when over 150 requests).
    pub show_progress: bool,
    /// `-l`.
    pub variable_length: bool,
    /// `-g`.
    pub gnuplot: Option<PathBuf>,
    /// `-e`.
    pub csv: Option<PathBuf>,
    /// `-r`.
    pub receive_errors_ok: bool,
    /// `-X proxy:port`.
    pub proxy: Option<(String, u16)>,
    pub tls: TlsOptions,
    /// The exact request bytes (head and body) ab would send.
    pub request: Vec<u8>,
    /// Length of the request head within `request` (what precedes the body).
    pub request_head_len: usize,
    /// herd extension `--threads N`: worker threads (default: one per core, never more
    /// than `-c`).
    pub threads: Option<u32>,
    /// herd extension `--io BACKEND`: the engine's event-loop backend (default auto).
    pub io: herd_engine::IoChoice,
    /// herd extension `--json FILE`: the full result as JSON.
    pub json: Option<PathBuf>,
    /// herd extension `--html FILE`: the run as a page in herd report's look (not `-w`,
    /// which is ab's own HTML report on stdout).
    pub html_page: Option<PathBuf>,
    /// herd extension `--tui`: a live view of the run on the terminal (stderr), in place of
    /// the "Completed N requests" lines, which follow once it closes.
    pub tui: bool,
}
