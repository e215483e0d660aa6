//! The request bytes ab sends, byte for byte.
//!
//! ab formats one request in `test()` and sends it on every connection:
//!
//! ```text
//! "%s %s HTTP/1.0\r\n"  method, path (or the full URL through a proxy)
//! "%s%s%s"              "Connection: Keep-Alive\r\n" with -k, the -C cookie line, the -A/-P lines
//! "Content-length: %zu\r\nContent-type: %s\r\n"   only with a body (-p/-u)
//! "%s" "\r\n"           hdrs: the -H lines, then Host, User-Agent, Accept unless overridden
//! ```
//!
//! followed by the body. [`build`] reproduces it from a [`RequestSpec`]; `args::parse`
//! fills `AbConfig::request` with it.

use base64::Engine as _;

/// ab's `User-Agent:` value (`"ApacheBench/" AP_AB_BASEREVISION`).
pub const USER_AGENT: &str = "ApacheBench/2.3";

/// ab formats the head into `char _request[8192]` with `apr_snprintf`, which returns the
/// bytes it wrote rather than the length it wanted, so ab's "Request too long" check never
/// fires: a longer head is cut at 8191 bytes (blank line lost) and sent that way — observed
/// with ab 2.4.71. herd refuses such a head instead of sending a broken request.
pub const MAX_HEAD_LEN: usize = 8191;

/// The default `Content-type` with a body and no `-T`.
pub const DEFAULT_CONTENT_TYPE: &str = "text/plain";

/// Basic credentials from `-A` (`Authorization`) or `-P` (`Proxy-Authorization`), as
/// `user:password` with ab's leading whitespace already skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// `-A`.
    Www(Vec<u8>),
    /// `-P`.
    Proxy(Vec<u8>),
}

/// Everything the request depends on, as raw bytes (ab sends arguments unchanged, whatever
/// their encoding).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestSpec {
    /// Method name: GET, HEAD (`-i`), POST (`-p`), PUT (`-u`) or the `-m` string as given.
    pub method: Vec<u8>,
    /// Request target: the URL's path, or the URL exactly as given when proxied (`-X`).
    pub target: Vec<u8>,
    /// `-k`.
    pub keepalive: bool,
    /// The last `-C` value: each `-C` replaces the line (ab: `cookie = apr_pstrcat(cntxt,
    /// "Cookie: ", opt_arg, "\r\n", NULL)`), despite ab's help saying "repeatable".
    pub cookie: Option<Vec<u8>>,
    /// `-A` and `-P` in command-line order: each appends a line.
    pub credentials: Vec<Credential>,
    /// `-H` lines in order, without line ends.
    pub headers: Vec<Vec<u8>>,
    /// The default `Host:` value: host (IPv6 in brackets) and `:port` unless it is the
    /// scheme's default. Sent only when no `-H` starts with `Host:`.
    pub host: Vec<u8>,
    /// `-p`/`-u` data and its content type (`-T`, default `text/plain`).
    pub body: Option<(Vec<u8>, Vec<u8>)>,
}

/// Which of ab's default headers the `-H` lines replace. ab compares the start of each `-H`
/// value, case-insensitively and without skipping whitespace (`strncasecmp(opt_arg, "Host:",
/// 5)`); the overriding line itself is sent among the other `-H` lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    pub host: bool,
    pub user_agent: bool,
    pub accept: bool,
}

impl Overrides {
    /// Scans `-H` values the way ab's option loop does.
    pub fn scan<H: AsRef<[u8]>>(headers: &[H]) -> Overrides {
        let starts =
            |h: &[u8], p: &[u8]| h.len() >= p.len() && h[..p.len()].eq_ignore_ascii_case(p);
        let mut o = Overrides::default();
        for h in headers {
            let h = h.as_ref();
            // ab tests Host:, then Accept:, then User-Agent: in an else-if chain; a line can
            // only start with one of them anyway.
            if starts(h, b"Host:") {
                o.host = true;
            } else if starts(h, b"Accept:") {
                o.accept = true;
            } else if starts(h, b"User-Agent:") {
                o.user_agent = true;
            }
        }
        o
    }
}

/// Builds ab's request: returns the bytes (head then body) and the head's length.
pub fn build(spec: &RequestSpec) -> (Vec<u8>, usize) {
    let body_len = spec.body.as_ref().map_or(0, |(data, _)| data.len());
    let mut out = Vec::with_capacity(512 + body_len);
    out.extend_from_slice(&spec.method);
    out.push(b' ');
    out.extend_from_slice(&spec.target);
    out.extend_from_slice(b" HTTP/1.0\r\n");
    if spec.keepalive {
        out.extend_from_slice(b"Connection: Keep-Alive\r\n");
    }
    if let Some(cookie) = &spec.cookie {
        out.extend_from_slice(b"Cookie: ");
        out.extend_from_slice(cookie);
        out.extend_from_slice(b"\r\n");
    }
    for credential in &spec.credentials {
        let (name, value): (&[u8], &[u8]) = match credential {
            Credential::Www(v) => (b"Authorization: Basic ", v),
            Credential::Proxy(v) => (b"Proxy-Authorization: Basic ", v),
        };
        out.extend_from_slice(name);
        // apr_base64_encode: the standard alphabet, padded.
        out.extend_from_slice(base64::engine::general_purpose::STANDARD.encode(value).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if let Some((data, content_type)) = &spec.body {
        // ab's spelling, lowercase "length" and "type".
        out.extend_from_slice(format!("Content-length: {}\r\n", data.len()).as_bytes());
        out.extend_from_slice(b"Content-type: ");
        out.extend_from_slice(content_type);
        out.extend_from_slice(b"\r\n");
    }
    for header in &spec.headers {
        out.extend_from_slice(header);
        out.extend_from_slice(b"\r\n");
    }
    let overrides = Overrides::scan(&spec.headers);
    if !overrides.host {
        out.extend_from_slice(b"Host: ");
        out.extend_from_slice(&spec.host);
        out.extend_from_slice(b"\r\n");
    }
    if !overrides.user_agent {
        out.extend_from_slice(b"User-Agent: ");
        out.extend_from_slice(USER_AGENT.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !overrides.accept {
        out.extend_from_slice(b"Accept: */*\r\n");
    }
    out.extend_from_slice(b"\r\n");
    let head_len = out.len();
    if let Some((data, _)) = &spec.body {
        out.extend_from_slice(data);
    }
    (out, head_len)
}
