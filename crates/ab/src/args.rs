//! ab's command line: every flag of ApacheBench 2.3 with ab's meaning, read the way ab
//! reads it (`apr_getopt` with ab's option string, C `atoi` numbers, ab's checks in ab's
//! order and with ab's exit codes), plus herd's long options (`--threads`, `--io`, `--json`,
//! `--html`). The result is an [`AbConfig`] with the exact request bytes already built. See
//! docs/ab-compat.md, "Flags".

mod num;
mod tls;
mod url;

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

use herd_engine::IoChoice;

use crate::config::{AbConfig, Body, TlsOptions};
use crate::request::{self, Credential, RequestSpec};
use crate::results::HtmlAttributes;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    /// Run the benchmark.
    Run(Box<AbConfig>),
    /// `-V`: print the version banner and exit with [`VERSION_EXIT_CODE`]. ab acts on it as
    /// soon as it reads it: later arguments are not looked at, not even the URL.
    Version,
    /// `-h`: print [`usage`] to stderr and exit with [`HELP_EXIT_CODE`].
    Help,
}

/// ab exits with EINVAL (22) after printing its help, `-h` included.
pub const HELP_EXIT_CODE: i32 = 22;

/// `-V` exits 0.
pub const VERSION_EXIT_CODE: i32 = 0;

/// EINVAL: ab's exit code for every error that prints the usage text.
const EINVAL: i32 = 22;

/// ab's `MAX_CONCURRENCY` (the 2.4.71 binary says "Invalid Concurrency [Range 0..200000]").
pub const MAX_CONCURRENCY: i32 = 200_000;

/// ab's `MAX_REQUESTS`: the request count `-t` implies.
pub const MAX_REQUESTS: i32 = 50_000;

/// ab's option string; a letter followed by ':' takes a value.
const OPTSTRING: &[u8] = b"n:c:t:s:b:T:p:u:v:lrkVhwiIx:y:z:C:H:P:A:g:X:de:SqB:m:Z:f:E:";

/// A `-s` below zero gives APR a negative poll timeout, which waits forever. herd stores
/// this instead (about 136 years): long enough to never fire, small enough to add to an
/// `Instant`.
pub const NO_TIMEOUT: Duration = Duration::from_secs(u32::MAX as u64);

/// A command line herd ab will not run, with ab's exit code for it ([`ArgsError::exit_code`]).
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    #[error("unknown option {0}; run \"herd ab -h\" for the list")]
    UnknownOption(String),
    #[error("option {0} needs a value; run \"herd ab -h\" for the list")]
    MissingValue(String),
    #[error("option {0} takes no value: give it alone, e.g. --tui")]
    UnwantedValue(String),
    #[error("missing URL: give one http[s]://host[:port]/path after the options")]
    MissingUrl,
    #[error(
        "expected one URL after the options, found {} arguments ({}): options must come \
         before the URL",
        .0.len(),
        .0.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(" ")
    )]
    TooManyArguments(Vec<String>),
    #[error("invalid URL \"{url}\": {reason}; expected http[s]://host[:port]/path")]
    InvalidUrl { url: String, reason: String },
    /// ab's own words, printed as ab prints them ([`ArgsError::is_abs_own`]): scripts that
    /// drive ab look for them. The value as given is kept for callers that want it.
    #[error("Invalid number of requests")]
    InvalidRequests(String),
    #[error("-c {0} is not a valid concurrency: use 1 to {MAX_CONCURRENCY}")]
    InvalidConcurrency(String),
    #[error(
        "-c {concurrency} is more than the {requests} requests to make: concurrency cannot \
         exceed the number of requests (-n, or 50000 with -t)"
    )]
    ConcurrencyOverRequests { concurrency: i32, requests: i32 },
    #[error(
        "cannot mix {method} (-{flag}) with other methods: use only one of -i, -p, -u \
         (-m may follow -p or -u to rename the method of the body)"
    )]
    MixedMethods { method: &'static str, flag: char },
    #[error("could not read the -{flag} data file \"{path}\"")]
    BodyFile {
        flag: char,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("-{0} credentials are too long: at most 765 bytes of user:password, as in ab")]
    CredentialsTooLong(char),
    #[error(
        "the request head would be {0} bytes, over ab's 8191-byte buffer (ab would cut it \
         there and send a broken request): shorten the -H, -C, -A or -P values or the URL"
    )]
    RequestTooLong(usize),
    #[error("invalid proxy \"-X {value}\": {reason}; expected -X host:port")]
    InvalidProxy { value: String, reason: String },
    #[error(
        "-f {value} asks for {version}, which herd cannot speak: rustls only speaks TLS 1.2 \
         and 1.3; use -f TLS1.2, TLS1.3 or ALL"
    )]
    UnsupportedProtocol { value: String, version: &'static str },
    #[error("-Z: {reason}")]
    CipherSuites { reason: String },
    #[error("cannot use the client certificate file \"{path}\" (-E): {reason}")]
    ClientCert { path: String, reason: String },
    #[error("--threads {0} is not valid: use a whole number of threads, 1 or more")]
    InvalidThreads(String),
    #[error("--io {0} is not valid: give auto, epoll or uring")]
    InvalidIo(String),
}

impl ArgsError {
    /// The exit code ab uses in the same situation: 22 (EINVAL, after the usage text) for
    /// command-line mistakes, 1 for what ab reports through `err()` or `exit(1)`: "Invalid
    /// number of requests", "Cannot mix ...", an unreadable -p/-u file, credentials or
    /// request too long, TLS setup errors. The herd-only checks follow the same split.
    pub fn exit_code(&self) -> i32 {
        match self {
            ArgsError::UnknownOption(_)
            | ArgsError::MissingValue(_)
            | ArgsError::UnwantedValue(_)
            | ArgsError::MissingUrl
            | ArgsError::TooManyArguments(_)
            | ArgsError::InvalidUrl { .. }
            | ArgsError::InvalidConcurrency(_)
            | ArgsError::ConcurrencyOverRequests { .. }
            | ArgsError::InvalidProxy { .. }
            | ArgsError::InvalidThreads(_)
            | ArgsError::InvalidIo(_) => EINVAL,
            ArgsError::InvalidRequests(_)
            | ArgsError::MixedMethods { .. }
            | ArgsError::BodyFile { .. }
            | ArgsError::CredentialsTooLong(_)
            | ArgsError::RequestTooLong(_)
            | ArgsError::UnsupportedProtocol { .. }
            | ArgsError::CipherSuites { .. }
            | ArgsError::ClientCert { .. } => 1,
        }
    }

    /// The message is ab's own, to be printed as ab's `err()` prints it: alone on stderr, a
    /// blank line after it (ab's message ends in "\n" and `err()` adds one), no "herd ab:"
    /// before it and no usage text. ab says nothing more for `-n 0`, and herd ab says what ab
    /// says (docs/ab-compat.md, "Exit codes").
    pub fn is_abs_own(&self) -> bool {
        matches!(self, ArgsError::InvalidRequests(_))
    }
}

/// ab's `-h` text, naming `herd ab`, with herd's long options at the end.
pub fn usage() -> String {
    let mut s = String::from("Usage: herd ab [options] [http[s]://]hostname[:port]/path\n");
    s.push_str(
        "Options are:
    -n requests     Number of requests to perform
    -c concurrency  Number of multiple requests to make at a time
    -t timelimit    Seconds to max. to spend on benchmarking
                    This implies -n 50000
    -s timeout      Seconds to max. wait for each response
                    Default is 30 seconds
    -b windowsize   Size of TCP send/receive buffer, in bytes
    -B address      Address to bind to when making outgoing connections
    -p postfile     File containing data to POST. Remember also to set -T
    -u putfile      File containing data to PUT. Remember also to set -T
    -T content-type Content-type header to use for POST/PUT data, eg.
                    'application/x-www-form-urlencoded'
                    Default is 'text/plain'
    -v verbosity    How much troubleshooting info to print
    -w              Print out results in HTML tables
    -i              Use HEAD instead of GET
    -x attributes   String to insert as table attributes
    -y attributes   String to insert as tr attributes
    -z attributes   String to insert as td or th attributes
    -C attribute    Add cookie, eg. 'Apache=1234'. (repeatable)
    -H attribute    Add Arbitrary header line, eg. 'Accept-Encoding: gzip'
                    Inserted after all normal header lines. (repeatable)
    -A attribute    Add Basic WWW Authentication, the attributes
                    are a colon separated username and password.
    -P attribute    Add Basic Proxy Authentication, the attributes
                    are a colon separated username and password.
    -X proxy:port   Proxyserver and port number to use
    -V              Print version number and exit
    -k              Use HTTP KeepAlive feature
    -d              Do not show percentiles served table.
    -S              Do not show confidence estimators and warnings.
    -q              Do not show progress when doing more than 150 requests
    -l              Accept variable document length (use this for dynamic pages)
    -g filename     Output collected data to gnuplot format file.
    -e filename     Output CSV file with percentages served
    -r              Don't exit on socket receive errors.
    -m method       Method name
    -h              Display usage information (this message)
    -I              Disable TLS Server Name Indication (SNI) extension
    -Z ciphersuite  Specify SSL/TLS cipher suite (See openssl ciphers)
                    (ECDHE AES-GCM and CHACHA20-POLY1305 suites only)
    -f protocol     Specify SSL/TLS protocol
                    (TLS1.2, TLS1.3 or ALL)
    -E certfile     Specify optional client certificate chain and private key
herd options (long only, anywhere before the URL):
    --threads N     Number of worker threads (default: one per core, at most -c)
    --io backend    Event loop: auto (io_uring where measured faster, else epoll), epoll, uring
    --json file     Write the full results as JSON to file
    --html file     Write the run as a page with charts (herd report's look) to file
    --tui           Show the run live on the terminal (requests/s, latency, failures)
",
    );
    s
}

/// Parses the arguments after `herd ab` (no program name).
///
/// Options are read left to right as `apr_getopt` reads them: values attached (`-n100`) or
/// in the next argument (`-n 100`, even if it starts with '-'), flags bundled (`-kq`,
/// `-kn100`), `--` ends the options, and the first argument not starting with '-' (or a lone
/// `-`) ends them too; exactly one argument, the URL, must remain. Each option acts when it
/// is read, so the first error wins, and `-V`/`-h` win over anything after them.
pub fn parse(args: &[OsString]) -> Result<Parsed, ArgsError> {
    let args: Vec<Vec<u8>> = args.iter().map(|a| os_bytes(a)).collect();
    let mut st = State::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg.len() < 2 || arg[0] != b'-' {
            // The URL (or a lone "-", which apr_getopt leaves in place too).
            break;
        }
        if arg[1] == b'-' {
            i += 1;
            if arg.len() == 2 {
                break;
            }
            // apr_getopt would take any "--xxx" as "--"; herd uses that room for its own
            // long options, which ab's letters cannot clash with.
            i = long_option(&mut st, arg, &args, i)?;
            continue;
        }
        let mut j = 1;
        while j < arg.len() {
            let letter = arg[j];
            j += 1;
            let takes_value = match OPTSTRING.iter().position(|&b| b == letter && b != b':') {
                Some(p) => OPTSTRING.get(p + 1) == Some(&b':'),
                None => {
                    return Err(ArgsError::UnknownOption(format!(
                        "-{}",
                        lossy(std::slice::from_ref(&letter))
                    )))
                }
            };
            if !takes_value {
                match letter {
                    b'V' => return Ok(Parsed::Version),
                    b'h' => return Ok(Parsed::Help),
                    _ => flag(&mut st, letter)?,
                }
                continue;
            }
            let value: &[u8] = if j < arg.len() {
                &arg[j..]
            } else {
                i += 1;
                match args.get(i) {
                    Some(v) => v,
                    None => return Err(ArgsError::MissingValue(format!("-{}", letter as char))),
                }
            };
            option(&mut st, letter, value)?;
            break;
        }
        i += 1;
    }
    match args.len() - i {
        0 => return Err(ArgsError::MissingUrl),
        1 => {}
        _ => return Err(ArgsError::TooManyArguments(args[i..].iter().map(|a| lossy(a)).collect())),
    }
    finish(st, &args[i]).map(|cfg| Parsed::Run(Box::new(cfg)))
}

/// The method as ab tracks it: `-i`, `-p` and `-u` refuse to follow any method; `-m`
/// replaces whatever was there (ab: `method = CUSTOM_METHOD` without the `NO_METH` check).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Method {
    Unset,
    Head,
    Post,
    Put,
    Custom(Vec<u8>),
}

/// ab's globals, as the option loop leaves them.
struct State {
    requests: i32,
    concurrency: i32,
    concurrency_text: String,
    tlimit: Option<i32>,
    timeout: i32,
    window: i32,
    bind: Option<String>,
    method: Method,
    body: Option<Vec<u8>>,
    content_type: Option<Vec<u8>>,
    verbosity: i32,
    use_html: bool,
    html: HtmlAttributes,
    keepalive: bool,
    percentiles: bool,
    confidence: bool,
    progress: bool,
    variable_length: bool,
    gnuplot: Option<PathBuf>,
    csv: Option<PathBuf>,
    recv_errors_ok: bool,
    proxy: Option<(String, u16)>,
    cookie: Option<Vec<u8>>,
    credentials: Vec<Credential>,
    headers: Vec<Vec<u8>>,
    /// The last `-H Host:` value, trimmed (ab's `opt_host`, used for SNI).
    host_override: Option<Vec<u8>>,
    sni: bool,
    protocol: Option<Vec<u8>>,
    ciphers: Option<Vec<u8>>,
    client_cert: Option<PathBuf>,
    threads: Option<u32>,
    io: IoChoice,
    json: Option<PathBuf>,
    html_page: Option<PathBuf>,
    tui: bool,
}

impl Default for State {
    fn default() -> Self {
        State {
            requests: 1,
            concurrency: 1,
            concurrency_text: "1".into(),
            tlimit: None,
            timeout: 30,
            window: 0,
            bind: None,
            method: Method::Unset,
            body: None,
            content_type: None,
            verbosity: 0,
            use_html: false,
            html: HtmlAttributes::default(),
            keepalive: false,
            percentiles: true,
            confidence: true,
            progress: true,
            variable_length: false,
            gnuplot: None,
            csv: None,
            recv_errors_ok: false,
            proxy: None,
            cookie: None,
            credentials: Vec::new(),
            headers: Vec::new(),
            host_override: None,
            sni: true,
            protocol: None,
            ciphers: None,
            client_cert: None,
            threads: None,
            io: IoChoice::Auto,
            json: None,
            html_page: None,
            tui: false,
        }
    }
}

#[cfg(unix)]
fn os_bytes(s: &OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes().to_vec()
}

#[cfg(not(unix))]
fn os_bytes(s: &OsStr) -> Vec<u8> {
    s.to_string_lossy().into_owned().into_bytes()
}

#[cfg(unix)]
fn bytes_os(b: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    OsStr::from_bytes(b).to_os_string()
}

#[cfg(not(unix))]
fn bytes_os(b: &[u8]) -> OsString {
    OsString::from(String::from_utf8_lossy(b).into_owned())
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// herd's long options: `--threads N`, `--io BACKEND`, `--json FILE`, `--html FILE`, also as
/// `--name=value`; and `--tui`.
/// Returns the index of the next argument.
fn long_option(
    st: &mut State,
    arg: &[u8],
    args: &[Vec<u8>],
    next: usize,
) -> Result<usize, ArgsError> {
    let (name, inline) = match arg.iter().position(|&b| b == b'=') {
        Some(eq) => (&arg[..eq], Some(&arg[eq + 1..])),
        None => (arg, None),
    };
    if name == b"--tui" {
        // The one long option without a value.
        if inline.is_some() {
            return Err(ArgsError::UnwantedValue(lossy(name)));
        }
        st.tui = true;
        return Ok(next);
    }
    if ![&b"--threads"[..], b"--io", b"--json", b"--html"].contains(&name) {
        return Err(ArgsError::UnknownOption(lossy(name)));
    }
    let (value, next) = match inline {
        Some(v) => (v, next),
        None => match args.get(next) {
            Some(v) => (v.as_slice(), next + 1),
            None => return Err(ArgsError::MissingValue(lossy(name))),
        },
    };
    if name == b"--threads" {
        // herd's own option: strict, no atoi leniency.
        let threads = std::str::from_utf8(value)
            .ok()
            .and_then(|t| t.parse::<u32>().ok())
            .filter(|&t| t >= 1)
            .ok_or_else(|| ArgsError::InvalidThreads(lossy(value)))?;
        st.threads = Some(threads);
    } else if name == b"--io" {
        st.io = std::str::from_utf8(value)
            .ok()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| ArgsError::InvalidIo(lossy(value)))?;
    } else if name == b"--html" {
        st.html_page = Some(PathBuf::from(bytes_os(value)));
    } else {
        st.json = Some(PathBuf::from(bytes_os(value)));
    }
    Ok(next)
}

/// Options without a value (other than -V and -h, which end parsing).
fn flag(st: &mut State, letter: u8) -> Result<(), ArgsError> {
    match letter {
        b'k' => st.keepalive = true,
        b'q' => st.progress = false,
        b'i' => {
            if st.method != Method::Unset {
                return Err(ArgsError::MixedMethods { method: "HEAD", flag: 'i' });
            }
            st.method = Method::Head;
        }
        b'd' => st.percentiles = false,
        b'S' => st.confidence = false,
        b'l' => st.variable_length = true,
        b'r' => st.recv_errors_ok = true,
        b'w' => st.use_html = true,
        b'I' => st.sni = false,
        // OPTSTRING lists no other flag.
        _ => return Err(ArgsError::UnknownOption(format!("-{}", letter as char))),
    }
    Ok(())
}

/// Options with a value, as ab's switch handles them.
fn option(st: &mut State, letter: u8, value: &[u8]) -> Result<(), ArgsError> {
    match letter {
        b'n' => {
            st.requests = num::atoi(value);
            if st.requests <= 0 {
                return Err(ArgsError::InvalidRequests(lossy(value)));
            }
        }
        b'c' => {
            st.concurrency = num::atoi(value);
            st.concurrency_text = lossy(value);
        }
        b'b' => st.window = num::atoi(value),
        b'g' => st.gnuplot = Some(PathBuf::from(bytes_os(value))),
        b'e' => st.csv = Some(PathBuf::from(bytes_os(value))),
        b's' => st.timeout = num::atoi(value),
        b'p' | b'u' => {
            let (name, method) =
                if letter == b'p' { ("POST", Method::Post) } else { ("PUT", Method::Put) };
            if st.method != Method::Unset {
                return Err(ArgsError::MixedMethods { method: name, flag: letter as char });
            }
            // open_postfile: the whole file, read now.
            let path = PathBuf::from(bytes_os(value));
            let data = std::fs::read(&path).map_err(|source| ArgsError::BodyFile {
                flag: letter as char,
                path: path.display().to_string(),
                source,
            })?;
            st.body = Some(data);
            st.method = method;
        }
        b'v' => st.verbosity = num::atoi(value),
        b't' => {
            st.tlimit = Some(num::atoi(value));
            // ab: "need to size data array on something"; a later -n wins.
            st.requests = MAX_REQUESTS;
        }
        b'T' => st.content_type = Some(value.to_vec()),
        b'C' => st.cookie = Some(value.to_vec()),
        b'A' | b'P' => {
            // ab skips leading whitespace, then refuses what would not fit its 1024-byte
            // base64 buffer: apr_base64_encode_len(len) = (len + 2) / 3 * 4 + 1, at most 765 bytes.
            let start = value.iter().position(|&b| !num::is_c_space(b)).unwrap_or(value.len());
            let credentials = value[start..].to_vec();
            if credentials.len().div_ceil(3) * 4 + 1 > 1024 {
                return Err(ArgsError::CredentialsTooLong(letter as char));
            }
            st.credentials.push(if letter == b'A' {
                Credential::Www(credentials)
            } else {
                Credential::Proxy(credentials)
            });
        }
        b'H' => {
            st.headers.push(value.to_vec());
            if value.len() >= 5 && value[..5].eq_ignore_ascii_case(b"Host:") {
                // ab keeps the value, whitespace trimmed at both ends, for SNI.
                let v = &value[5..];
                let start = v.iter().position(|&b| !num::is_c_space(b)).unwrap_or(v.len());
                let end = v.iter().rposition(|&b| !num::is_c_space(b)).map_or(start, |e| e + 1);
                st.host_override = Some(v[start..end.max(start)].to_vec());
            }
        }
        b'x' => {
            st.use_html = true;
            st.html.table = lossy(value);
        }
        b'y' => {
            st.use_html = true;
            st.html.tr = lossy(value);
        }
        b'z' => {
            st.use_html = true;
            st.html.td = lossy(value);
        }
        b'X' => {
            let proxy = url::parse_proxy(value)
                .map_err(|reason| ArgsError::InvalidProxy { value: lossy(value), reason })?;
            st.proxy = Some(proxy);
        }
        b'B' => st.bind = Some(lossy(value)),
        b'm' => st.method = Method::Custom(value.to_vec()),
        b'Z' => st.ciphers = Some(value.to_vec()),
        b'E' => st.client_cert = Some(PathBuf::from(bytes_os(value))),
        b'f' => st.protocol = Some(value.to_vec()),
        _ => return Err(ArgsError::UnknownOption(format!("-{}", letter as char))),
    }
    Ok(())
}

/// What ab does after its option loop, in ab's order: URL, concurrency range, concurrency
/// against requests, TLS setup (-f, -Z, -E), then the request ("Request too long").
fn finish(st: State, raw_url: &[u8]) -> Result<AbConfig, ArgsError> {
    let url = url::parse_url(raw_url)
        .map_err(|reason| ArgsError::InvalidUrl { url: lossy(raw_url), reason })?;
    if st.concurrency < 0 || st.concurrency > MAX_CONCURRENCY {
        return Err(ArgsError::InvalidConcurrency(st.concurrency_text));
    }
    if st.concurrency > st.requests {
        return Err(ArgsError::ConcurrencyOverRequests {
            concurrency: st.concurrency,
            requests: st.requests,
        });
    }
    if st.concurrency == 0 {
        // ab passes the range check and then fails creating a pollset of size 0:
        // "apr_pollset_poll: Invalid argument (22)", exit 22.
        return Err(ArgsError::InvalidConcurrency(st.concurrency_text));
    }
    let protocol = tls::protocol(st.protocol.as_deref())?;
    let cipher_suites = match &st.ciphers {
        Some(z) => Some(tls::cipher_suites(z, protocol)?),
        None => None,
    };
    if let Some(cert) = &st.client_cert {
        tls::check_client_cert(cert)?;
    }
    let server_name = if st.sni {
        let name = match &st.host_override {
            Some(h) => lossy(h),
            None => url.hostname.clone(),
        };
        (!name.is_empty() && !url::apr_is_ip(&name)).then_some(name)
    } else {
        None
    };

    let (method_bytes, head) = match &st.method {
        Method::Unset => (b"GET".to_vec(), false),
        Method::Head => (b"HEAD".to_vec(), true),
        Method::Post => (b"POST".to_vec(), false),
        Method::Put => (b"PUT".to_vec(), false),
        // ab's `method != HEAD` tests see CUSTOM_METHOD even for -m HEAD.
        Method::Custom(m) => (m.clone(), false),
    };
    let content_type = st
        .content_type
        .clone()
        .unwrap_or_else(|| request::DEFAULT_CONTENT_TYPE.as_bytes().to_vec());
    // ab sends the URL exactly as given through a proxy (`fullurl`), the path otherwise,
    // byte for byte even if it is not UTF-8.
    let target = if st.proxy.is_some() {
        raw_url.to_vec()
    } else {
        raw_path(raw_url).map_or_else(|| url.path.clone().into_bytes(), <[u8]>::to_vec)
    };
    let spec = RequestSpec {
        method: method_bytes.clone(),
        target,
        keepalive: st.keepalive,
        cookie: st.cookie.clone(),
        credentials: st.credentials.clone(),
        headers: st.headers.clone(),
        host: url::host_header(&url).into_bytes(),
        body: st.body.as_ref().map(|data| (data.clone(), content_type.clone())),
    };
    let (request, request_head_len) = request::build(&spec);
    if request_head_len > request::MAX_HEAD_LEN {
        return Err(ArgsError::RequestTooLong(request_head_len));
    }

    let time_limit = match st.tlimit {
        // ab: `stoptime = tlimit ? (start + apr_time_from_sec(tlimit)) : AB_MAX`.
        None | Some(0) => None,
        // A negative -t puts the stop time in the past: ab stops after its first poll round.
        Some(t) => Some(Duration::from_secs(u64::try_from(t).unwrap_or(0))),
    };
    let timeout = u64::try_from(st.timeout).map_or(NO_TIMEOUT, Duration::from_secs);
    Ok(AbConfig {
        url,
        requests: u64::try_from(st.requests).unwrap_or(1),
        concurrency: u32::try_from(st.concurrency).unwrap_or(1),
        time_limit,
        timeout,
        // ab sets SO_SNDBUF/SO_RCVBUF whenever the value is not 0; a negative int reaches
        // setsockopt as is, which the same bit pattern in a u32 reproduces.
        window_size: (st.window != 0).then_some(st.window as u32),
        bind: st.bind,
        method: lossy(&method_bytes),
        head,
        body: st.body.map(|data| Body { data, content_type: lossy(&content_type) }),
        // A negative -v fails every `verbosity >= n` test, like 0.
        verbosity: u32::try_from(st.verbosity).unwrap_or(0),
        html: st.use_html.then_some(st.html),
        keepalive: st.keepalive,
        show_percentiles: st.percentiles,
        show_confidence: st.confidence,
        show_progress: st.progress,
        variable_length: st.variable_length,
        gnuplot: st.gnuplot,
        csv: st.csv,
        receive_errors_ok: st.recv_errors_ok,
        proxy: st.proxy,
        tls: TlsOptions {
            sni: st.sni,
            server_name,
            protocol,
            cipher_suites,
            client_cert: st.client_cert,
        },
        request,
        request_head_len,
        threads: st.threads,
        io: st.io,
        json: st.json,
        html_page: st.html_page,
        tui: st.tui,
    })
}

/// The path part of a URL that parse_url accepted, as raw bytes.
fn raw_path(raw_url: &[u8]) -> Option<&[u8]> {
    let rest = if raw_url.len() > 7 && raw_url.starts_with(b"http://") {
        &raw_url[7..]
    } else if raw_url.len() > 8 && raw_url.starts_with(b"https://") {
        &raw_url[8..]
    } else {
        raw_url
    };
    rest.iter().position(|&b| b == b'/').map(|p| &rest[p..])
}
