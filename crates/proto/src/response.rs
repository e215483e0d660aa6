//! Incremental HTTP/1.x response parsing: status line, headers, and body framing by
//! Content-Length, chunked transfer coding (with trailers) or connection close; the HEAD,
//! 1xx, 204 and 304 rules. Interim 1xx responses (other than 101) are skipped.
//!
//! It does no I/O and keeps no body: body bytes are counted, and handed to a caller that
//! asks for them ([`ResponseParser::feed_body`]). Header fields are looked at once, for
//! framing, connection reuse and (on request) `Server`; nothing else of them is kept. After
//! a 101 the bytes that follow belong to another protocol and are left alone.

use std::mem::MaybeUninit;

use thiserror::Error;

use crate::chunked::ChunkedDecoder;

/// Bounds on what a server may make the parser hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest response head (status line + headers + blank line) accepted, in bytes.
    pub max_head_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_head_bytes: 64 * 1024 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Http10,
    Http11,
}

/// How the end of the body is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body at all (HEAD request, 1xx, 204, 304).
    Empty,
    /// Exactly this many body bytes follow the head.
    Length(u64),
    /// Chunked transfer coding; ends at the last chunk and its trailers.
    Chunked,
    /// The body runs until the server closes the connection.
    UntilClose,
}

/// The parts of a final (non-1xx) response head that the engine and reports use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub version: Version,
    pub status: u16,
    pub framing: Framing,
    /// The server allows this connection to carry another request, by HTTP rules:
    /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    /// Always false with [`Framing::UntilClose`].
    pub reusable: bool,
    /// Bytes of this head, plus those of any interim 1xx heads before it.
    pub head_bytes: usize,
}

/// What one call to [`ResponseParser::feed`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feed {
    /// Bytes of the input that belong to this response. When `complete` is true, any
    /// remaining input is not part of it (a pipelined response or stray bytes).
    pub consumed: usize,
    /// The response is complete.
    pub complete: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtoError {
    #[error("invalid status line")]
    InvalidStatusLine,
    #[error("invalid header")]
    InvalidHeader,
    #[error("response head larger than {limit} bytes")]
    HeadTooLarge { limit: usize },
    #[error("invalid Content-Length")]
    InvalidContentLength,
    #[error("invalid chunk")]
    InvalidChunk,
    #[error("connection closed before the response was complete")]
    Truncated,
}

/// An incremental response parser; one per connection, reused for every response on it.
///
/// Head parsing has a fast path and a slow path. When a whole head arrives in one `feed`
/// (the common case) it is parsed straight from the caller's slice: nothing is copied and
/// nothing allocated. Only a head split across feeds is gathered in a buffer that is kept
/// (never shrunk) across responses. Its end (an empty line, CRLF or bare LF) is searched
/// incrementally, so a server trickling one byte per read costs O(n), not O(n²); `httparse`
/// runs on the whole head once its end is found. Before that, the status line and then each
/// completed field line are checked once, so a peer that is not speaking HTTP/1.x is
/// rejected without waiting for a blank line that may never come.
///
/// Results do not depend on how the input is split: the head is what `httparse` makes of
/// the bytes up to the first empty line, and a head that has no such line within
/// `max_head_bytes + 1` bytes is [`ProtoError::HeadTooLarge`] unless those bytes already
/// hold a syntax error, which is then reported instead. Likewise at end of stream a partial
/// head that already holds a syntax error reports it rather than `Truncated`. (How soon an
/// error is noticed may depend on the split; what is reported does not.)
///
/// More than 64 header fields are accepted: the head is parsed again with a heap array
/// sized for it (a rare, allocating slow path) rather than rejected.
///
/// Content-Length is only checked when it frames the body: beside chunked coding, and for
/// HEAD, 1xx, 204 and 304 responses, it is ignored. In a chunked body a size line longer
/// than `max_head_bytes` is [`ProtoError::InvalidChunk`], a trailer section longer than that
/// is [`ProtoError::HeadTooLarge`]; a bare LF is accepted wherever CRLF is expected, in the
/// head as in chunk framing.
#[derive(Debug)]
pub struct ResponseParser {
    limits: Limits,
    head_request: bool,
    capture: bool,
    /// The captured `Server` value; its capacity is reused.
    server: Vec<u8>,
    server_found: bool,
    state: State,
    head: Option<Head>,
    /// Bytes of the interim 1xx heads skipped in the current response.
    interim_bytes: usize,
    body_bytes: u64,
    started: bool,
    /// A head that is split across feeds, gathered up to its end.
    buf: Vec<u8>,
    /// How far the end of the buffered head has been searched.
    scan: Scan,
    /// The buffered status line has been checked by `httparse` (see `feed_head`).
    status_checked: bool,
    /// Buffered lines before this offset have been checked.
    checked_upto: usize,
    chunked: ChunkedDecoder,
}

impl ResponseParser {
    pub fn new(limits: Limits) -> Self {
        ResponseParser {
            limits,
            head_request: false,
            capture: false,
            server: Vec::new(),
            server_found: false,
            state: State::Head,
            head: None,
            interim_bytes: 0,
            body_bytes: 0,
            started: false,
            buf: Vec::new(),
            scan: Scan::Leading,
            status_checked: false,
            checked_upto: 0,
            chunked: ChunkedDecoder::new(limits.max_head_bytes),
        }
    }

    /// Prepares for the next response. `head_request`: the request was HEAD, so the
    /// response has no body whatever its headers say.
    pub fn reset(&mut self, head_request: bool) {
        self.head_request = head_request;
        self.state = State::Head;
        self.head = None;
        self.interim_bytes = 0;
        self.body_bytes = 0;
        self.started = false;
        self.buf.clear();
        self.scan = Scan::Leading;
        self.status_checked = false;
        self.checked_upto = 0;
        self.chunked.reset();
    }

    /// Asks the parser to keep the value of the next head's `Server` header (ab reports the
    /// first response's). Off by default, so the hot path copies nothing.
    ///
    /// While on, every final head replaces the captured value (or clears it if the head has
    /// no `Server` field); turning it off keeps the last value.
    pub fn capture_server(&mut self, on: bool) {
        self.capture = on;
    }

    /// The captured `Server` value: ab's rule, the bytes after `Server:` and its white
    /// space up to the first byte <= 0x20. `None` if not captured or absent.
    ///
    /// At most 1023 bytes are kept, as ab does.
    pub fn server(&self) -> Option<&[u8]> {
        if self.server_found {
            Some(&self.server)
        } else {
            None
        }
    }

    /// Consumes bytes of the response. Call again with more bytes while `complete` is false.
    ///
    /// After an error the parser stays failed (every call returns the same error) until
    /// [`ResponseParser::reset`]. After completion further input is not consumed.
    pub fn feed(&mut self, input: &[u8]) -> Result<Feed, ProtoError> {
        self.feed_inner(input, None)
    }

    /// [`ResponseParser::feed`], handing every piece of the decoded body to `body` as it is
    /// consumed (chunk framing and trailers taken out), in order, for a caller that checks
    /// the content. The parser keeps none of it; the engine, which only counts, calls
    /// `feed`.
    pub fn feed_body(
        &mut self,
        input: &[u8],
        body: &mut dyn FnMut(&[u8]),
    ) -> Result<Feed, ProtoError> {
        self.feed_inner(input, Some(body))
    }

    // The sink is a runtime `Option` of a `dyn`, not a generic, and the chunked decoder
    // knows nothing of it (`feed_chunked_body`): the engine's `feed` then compiles to the
    // loop it had before the sink existed. (A sink passed into the decoder cost the engine
    // 80 to 150 instructions per chunked response, callgrind.)
    fn feed_inner(
        &mut self,
        input: &[u8],
        mut body: Option<&mut BodySink<'_>>,
    ) -> Result<Feed, ProtoError> {
        if !input.is_empty() && !matches!(self.state, State::Complete | State::Failed(_)) {
            self.started = true;
        }
        let mut pos = 0usize;
        loop {
            let rest = input.get(pos..).unwrap_or(&[]);
            match self.state {
                State::Failed(ref e) => return Err(e.clone()),
                State::Complete => return Ok(Feed { consumed: pos, complete: true }),
                State::Head => {
                    if rest.is_empty() {
                        return Ok(Feed { consumed: pos, complete: false });
                    }
                    match self.feed_head(rest) {
                        // Cannot happen with a non-empty `rest`; guards against a loop.
                        Ok(0) => return Ok(Feed { consumed: pos, complete: false }),
                        Ok(n) => pos = pos.saturating_add(n),
                        Err(e) => return Err(self.fail(e)),
                    }
                }
                State::Length(remaining) => {
                    let avail = u64::try_from(rest.len()).unwrap_or(u64::MAX);
                    let take = remaining.min(avail);
                    self.body_bytes = self.body_bytes.saturating_add(take);
                    let n = usize::try_from(take).unwrap_or(rest.len());
                    if let Some(body) = body.as_mut() {
                        body(rest.get(..n).unwrap_or(rest));
                    }
                    pos = pos.saturating_add(n);
                    let left = remaining.saturating_sub(take);
                    if left == 0 {
                        self.state = State::Complete;
                    } else {
                        self.state = State::Length(left);
                        return Ok(Feed { consumed: pos, complete: false });
                    }
                }
                State::Chunked => {
                    let decoded = match body.as_deref_mut() {
                        Some(body) => self.feed_chunked_body(rest, body),
                        None => self.chunked.decode(rest, &mut self.body_bytes),
                    };
                    match decoded {
                        Ok((n, done)) => {
                            pos = pos.saturating_add(n);
                            if done {
                                self.state = State::Complete;
                            } else {
                                return Ok(Feed { consumed: pos, complete: false });
                            }
                        }
                        Err(e) => return Err(self.fail(e)),
                    }
                }
                State::UntilClose => {
                    let n = u64::try_from(rest.len()).unwrap_or(u64::MAX);
                    self.body_bytes = self.body_bytes.saturating_add(n);
                    if let Some(body) = body.as_mut() {
                        body(rest);
                    }
                    return Ok(Feed { consumed: input.len(), complete: false });
                }
            }
        }
    }

    /// The chunked part of [`ResponseParser::feed_body`]: `input` fed to the plain path in
    /// pieces, framing a byte at a time and each run of chunk data whole, so that the body
    /// bytes of each piece are the piece itself, handed to `body`. Slower than `feed`; only a
    /// caller that checks content asks for the body. (Through `feed_inner`, not the decoder
    /// directly: the decoder keeps a single caller, and the engine's `feed` its inlining.)
    #[inline(never)]
    fn feed_chunked_body(
        &mut self,
        input: &[u8],
        body: &mut dyn FnMut(&[u8]),
    ) -> Result<(usize, bool), ProtoError> {
        let mut pos = 0usize;
        while pos < input.len() {
            let rest = input.get(pos..).unwrap_or(&[]);
            let ahead = match self.chunked.data_ahead() {
                Some(n) => usize::try_from(n).map_or(rest.len(), |n| n.min(rest.len())),
                None => 1,
            };
            let piece = rest.get(..ahead).unwrap_or(rest);
            let before = self.body_bytes;
            let fed = self.feed_inner(piece, None)?;
            if self.body_bytes > before {
                body(piece.get(..fed.consumed).unwrap_or(piece));
            }
            pos = pos.saturating_add(fed.consumed);
            if fed.complete {
                return Ok((pos, true));
            }
        }
        Ok((pos, false))
    }

    /// The connection reached end of stream. `Ok(true)` when that completes the response
    /// (a close-delimited body); `Err(Truncated)` if the response was cut short;
    /// `Ok(false)` if no byte of a response had arrived (an idle keep-alive connection
    /// closed by the server).
    ///
    /// A response that was already complete stays complete (`Ok(true)`); a failed parser
    /// returns its error again.
    pub fn finish(&mut self) -> Result<bool, ProtoError> {
        match self.state {
            State::Failed(ref e) => Err(e.clone()),
            State::Complete => Ok(true),
            State::UntilClose => {
                self.state = State::Complete;
                Ok(true)
            }
            _ if !self.started => Ok(false),
            State::Head => {
                // The whole-input fast path reports a syntax error in an unfinished head at
                // once; a head gathered piece by piece is only fully checked at its end. Check
                // now, so the outcome does not depend on how the bytes were split.
                let e = syntax_error(&self.buf).unwrap_or(ProtoError::Truncated);
                Err(self.fail(e))
            }
            _ => Err(self.fail(ProtoError::Truncated)),
        }
    }

    /// The final head, once parsed.
    pub fn head(&self) -> Option<&Head> {
        self.head.as_ref()
    }

    /// Decoded body bytes so far (chunk framing and trailers excluded).
    pub fn body_bytes(&self) -> u64 {
        self.body_bytes
    }

    /// True once any byte of the current response has been fed.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Parses (part of) a head from `input`, which is not empty. Returns the bytes of
    /// `input` that belong to the head; the state moves on once a head is complete.
    fn feed_head(&mut self, input: &[u8]) -> Result<usize, ProtoError> {
        let cap = self.limits.max_head_bytes.saturating_add(1);
        let mut checked = false;
        if self.buf.is_empty() && self.scan == Scan::Leading {
            // Fast path: the whole head is usually in this one slice.
            let window = input.get(..cap).unwrap_or(input);
            match self.parse_head(window, None)? {
                Parsed::Complete(n) => {
                    self.head_done();
                    return Ok(n);
                }
                Parsed::Partial if window.len() >= cap => {
                    return Err(self.too_large());
                }
                Parsed::Partial => checked = true,
            }
        }

        let room = cap.saturating_sub(self.buf.len());
        let window = input.get(..room).unwrap_or(input);
        let mut line_ended = false;
        let found = self.scan.run(window, &mut line_ended);
        let take = found.unwrap_or(window.len());
        self.buf.extend_from_slice(window.get(..take).unwrap_or(window));

        if found.is_some() || self.buf.len() >= cap {
            // The head is whole, or as long as the limit allows: decide now.
            let expect = if found.is_some() { self.buf.len() } else { usize::MAX };
            let buf = std::mem::take(&mut self.buf);
            let parsed = self.parse_head(&buf, Some(expect));
            self.buf = buf;
            return match parsed? {
                Parsed::Complete(_) => {
                    self.head_done();
                    Ok(take)
                }
                Parsed::Partial if self.buf.len() >= cap => Err(self.too_large()),
                // The end was found but httparse wants more: it disagrees on the framing.
                Parsed::Partial => Err(ProtoError::InvalidHeader),
            };
        }

        // A peer that does not speak HTTP/1.x, or sends a bad field, may never send a blank
        // line; report it as soon as the bytes show it, as the fast path does. Linear work:
        // the status line is checked (with at most EARLY_CHECK_BYTES tiny parses before it
        // ends), then each field line once, when it is complete.
        if !self.status_checked {
            if !checked && (line_ended || self.buf.len() <= EARLY_CHECK_BYTES) {
                if let Some(e) = syntax_error(&self.buf) {
                    return Err(e);
                }
            }
            if line_ended {
                // Everything up to the last line end has just been checked.
                self.status_checked = true;
                self.checked_upto = last_line_end(&self.buf, 0);
            }
        } else if line_ended {
            let from = self.checked_upto;
            let to = last_line_end(&self.buf, from);
            if let Some(e) = field_lines_error(self.buf.get(from..to).unwrap_or(&[])) {
                return Err(e);
            }
            self.checked_upto = to;
        }
        Ok(take)
    }

    /// Runs httparse on `bytes` (starting at a head) and, if a head is complete, applies
    /// it. `expect`: the length the head must have (the slow path already knows where the
    /// blank line is).
    fn parse_head(&mut self, bytes: &[u8], expect: Option<usize>) -> Result<Parsed, ProtoError> {
        // Uninitialised slots: httparse writes each one it uses, so the 1 KiB the array
        // would take to zero is not written for every response (callgrind: ~60 instructions
        // of memset per response on the engine's hot path).
        let mut headers = [const { MaybeUninit::uninit() }; STACK_HEADERS];
        match self.parse_with(bytes, expect, &mut headers) {
            Err(Attempt::TooManyHeaders) => {}
            Err(Attempt::Failed(e)) => return Err(e),
            Ok(p) => return Ok(p),
        }
        // Every field needs a line of its own, so this many slots always suffice.
        let lines = memchr::memchr_iter(b'\n', bytes).count().saturating_add(1);
        let mut headers = vec![MaybeUninit::uninit(); lines];
        match self.parse_with(bytes, expect, &mut headers) {
            Err(Attempt::TooManyHeaders) => Err(ProtoError::InvalidHeader),
            Err(Attempt::Failed(e)) => Err(e),
            Ok(p) => Ok(p),
        }
    }

    fn parse_with<'b>(
        &mut self,
        bytes: &'b [u8],
        expect: Option<usize>,
        headers: &mut [MaybeUninit<httparse::Header<'b>>],
    ) -> Result<Parsed, Attempt> {
        let mut resp = httparse::Response::new(&mut []);
        match httparse::ParserConfig::default()
            .parse_response_with_uninit_headers(&mut resp, bytes, headers)
        {
            Ok(httparse::Status::Complete(n)) => {
                if n > self.limits.max_head_bytes {
                    return Err(Attempt::Failed(self.too_large()));
                }
                if expect.is_some_and(|e| e != n) {
                    return Err(Attempt::Failed(ProtoError::InvalidHeader));
                }
                let head = bytes.get(..n).unwrap_or(bytes);
                self.apply_head(&resp, head).map(|()| Parsed::Complete(n)).map_err(Attempt::Failed)
            }
            Ok(httparse::Status::Partial) => Ok(Parsed::Partial),
            Err(httparse::Error::TooManyHeaders) => Err(Attempt::TooManyHeaders),
            Err(_) => Err(Attempt::Failed(error_kind(&resp))),
        }
    }

    /// Takes in a complete head: an interim one is counted and skipped, a final one
    /// decides the framing and the state.
    fn apply_head(
        &mut self,
        resp: &httparse::Response<'_, '_>,
        head: &[u8],
    ) -> Result<(), ProtoError> {
        let (Some(code), Some(minor)) = (resp.code, resp.version) else {
            return Err(ProtoError::InvalidStatusLine);
        };
        if !(100..=999).contains(&code) {
            return Err(ProtoError::InvalidStatusLine);
        }
        let version = match minor {
            0 => Version::Http10,
            1 => Version::Http11,
            _ => return Err(ProtoError::InvalidStatusLine),
        };
        if (100..200).contains(&code) && code != SWITCHING_PROTOCOLS {
            self.interim_bytes = self.interim_bytes.saturating_add(head.len());
            return Ok(());
        }

        let mut fields = Fields::default();
        for h in resp.headers.iter() {
            fields.add(h.name.as_bytes(), h.value);
        }
        let no_body = self.head_request || code < 200 || code == 204 || code == 304;
        let framing = if no_body {
            Framing::Empty
        } else if fields.transfer_encoding {
            // RFC 9112 6.3: a non-chunked final coding is delimited by close.
            if fields.chunked {
                Framing::Chunked
            } else {
                Framing::UntilClose
            }
        } else if fields.bad_length {
            return Err(ProtoError::InvalidContentLength);
        } else if let Some(n) = fields.content_length {
            Framing::Length(n)
        } else {
            Framing::UntilClose
        };
        let reusable = match (framing, version) {
            (Framing::UntilClose, _) => false,
            _ if code == SWITCHING_PROTOCOLS => false,
            (_, Version::Http11) => !fields.close,
            (_, Version::Http10) => fields.keep_alive && !fields.close,
        };

        if self.capture {
            self.server.clear();
            self.server_found = fields.server.is_some();
            if let Some(v) = fields.server {
                self.server.extend_from_slice(server_token(v));
            }
        }

        self.head = Some(Head {
            version,
            status: code,
            framing,
            reusable,
            head_bytes: self.interim_bytes.saturating_add(head.len()),
        });
        self.state = match framing {
            Framing::Empty | Framing::Length(0) => State::Complete,
            Framing::Length(n) => State::Length(n),
            Framing::Chunked => {
                self.chunked.reset();
                State::Chunked
            }
            Framing::UntilClose => State::UntilClose,
        };
        Ok(())
    }

    /// A head (interim or final) was taken; the next one starts from scratch.
    fn head_done(&mut self) {
        self.buf.clear();
        self.scan = Scan::Leading;
        self.status_checked = false;
        self.checked_upto = 0;
    }

    fn too_large(&self) -> ProtoError {
        ProtoError::HeadTooLarge { limit: self.limits.max_head_bytes }
    }

    fn fail(&mut self, e: ProtoError) -> ProtoError {
        self.state = State::Failed(e.clone());
        e
    }
}

/// What [`ResponseParser::feed_body`] hands each piece of the body to.
type BodySink<'a> = dyn FnMut(&[u8]) + 'a;

/// The most bytes of a `Server` value that [`ResponseParser::server`] keeps (as ab does).
const MAX_SERVER_BYTES: usize = 1023;

/// Header slots on the stack; more fields take the allocating slow path. Real responses
/// carry 5 to 20 fields; every response pays for initialising these slots.
const STACK_HEADERS: usize = 32;

/// While the buffered head is at most this long, every feed re-checks its syntax.
const EARLY_CHECK_BYTES: usize = 64;

const SWITCHING_PROTOCOLS: u16 = 101;

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Head,
    Length(u64),
    Chunked,
    UntilClose,
    Complete,
    Failed(ProtoError),
}

enum Parsed {
    Complete(usize),
    Partial,
}

enum Attempt {
    TooManyHeaders,
    Failed(ProtoError),
}

/// Incremental search for the blank line ending a head, mirroring what httparse accepts:
/// empty lines before the status line are skipped, a line ends at LF (CRLF or bare LF),
/// and the head ends at the first empty line after the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// Before the status line, skipping empty lines.
    Leading,
    /// Inside a line.
    Line,
    /// Right after a line's LF.
    Lf,
    /// After a line's LF and a CR.
    LfCr,
}

impl Scan {
    /// Scans `input`, continuing from where the last call stopped. Returns the offset just
    /// past the head's end if it is in `input`. `line_ended` is set when a line ends.
    fn run(&mut self, input: &[u8], line_ended: &mut bool) -> Option<usize> {
        let mut i = 0usize;
        while let Some(&b) = input.get(i) {
            match *self {
                Scan::Line => {
                    let rest = input.get(i..).unwrap_or(&[]);
                    let p = memchr::memchr(b'\n', rest)?;
                    i = i.saturating_add(p).saturating_add(1);
                    *self = Scan::Lf;
                    *line_ended = true;
                    continue;
                }
                Scan::Leading => {
                    if b != b'\r' && b != b'\n' {
                        *self = Scan::Line;
                    }
                }
                Scan::Lf => match b {
                    b'\n' => {
                        *self = Scan::Leading;
                        return Some(i.saturating_add(1));
                    }
                    b'\r' => *self = Scan::LfCr,
                    _ => *self = Scan::Line,
                },
                Scan::LfCr => {
                    if b == b'\n' {
                        *self = Scan::Leading;
                        return Some(i.saturating_add(1));
                    }
                    *self = Scan::Line;
                }
            }
            i = i.saturating_add(1);
        }
        None
    }
}

/// What the final head's fields say about framing and the connection.
#[derive(Default)]
struct Fields<'a> {
    content_length: Option<u64>,
    bad_length: bool,
    transfer_encoding: bool,
    chunked: bool,
    close: bool,
    keep_alive: bool,
    server: Option<&'a [u8]>,
}

impl<'a> Fields<'a> {
    fn add(&mut self, name: &[u8], value: &'a [u8]) {
        // Most fields of a response are none of the four we read; their name's length
        // alone rules them out, before any case-insensitive comparison (this runs for
        // every field of every response on the engine's hot path).
        let is = |want: &[u8]| name.eq_ignore_ascii_case(want);
        match name.len() {
            14 if is(b"content-length") => match parse_content_length(value) {
                Some(n) if self.content_length.is_none_or(|c| c == n) => {
                    self.content_length = Some(n);
                }
                _ => self.bad_length = true,
            },
            17 if is(b"transfer-encoding") => {
                // The final coding is the last one listed, across all such fields.
                self.transfer_encoding = true;
                self.chunked =
                    tokens(value).last().is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
            }
            10 if is(b"connection") => {
                for t in tokens(value) {
                    self.close |= t.eq_ignore_ascii_case(b"close");
                    self.keep_alive |= t.eq_ignore_ascii_case(b"keep-alive");
                }
            }
            6 if self.server.is_none() && is(b"server") => self.server = Some(value),
            _ => {}
        }
    }
}

/// Maps an httparse syntax error to ours: `reason` is only set once the whole status line
/// was accepted, so its absence places the error in the status line.
fn error_kind(resp: &httparse::Response<'_, '_>) -> ProtoError {
    if resp.reason.is_none() {
        ProtoError::InvalidStatusLine
    } else {
        ProtoError::InvalidHeader
    }
}

/// The syntax error in an incomplete head, if its bytes so far already show one.
fn syntax_error(bytes: &[u8]) -> Option<ProtoError> {
    let mut headers = [httparse::EMPTY_HEADER; STACK_HEADERS];
    match syntax_error_with(bytes, &mut headers) {
        Err(Attempt::TooManyHeaders) => {}
        Err(Attempt::Failed(e)) => return Some(e),
        Ok(()) => return None,
    }
    // As in `parse_head`: more fields than stack slots must not hide a later error.
    let lines = memchr::memchr_iter(b'\n', bytes).count().saturating_add(1);
    let mut headers = vec![httparse::EMPTY_HEADER; lines];
    match syntax_error_with(bytes, &mut headers) {
        Err(Attempt::TooManyHeaders) => Some(ProtoError::InvalidHeader),
        Err(Attempt::Failed(e)) => Some(e),
        Ok(()) => None,
    }
}

fn syntax_error_with<'b>(
    bytes: &'b [u8],
    headers: &mut [httparse::Header<'b>],
) -> Result<(), Attempt> {
    let mut resp = httparse::Response::new(headers);
    match resp.parse(bytes) {
        Ok(_) => Ok(()),
        Err(httparse::Error::TooManyHeaders) => Err(Attempt::TooManyHeaders),
        Err(_) => Err(Attempt::Failed(error_kind(&resp))),
    }
}

/// All digits, at least one, and fits a `u64`; no sign, no list.
fn parse_content_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

/// Non-empty elements of a comma-separated list, with surrounding whitespace removed.
fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(trim_ows).filter(|t| !t.is_empty())
}

fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// ab's cut of the `Server` value: from the first non-blank byte to the next byte <= 0x20.
fn server_token(value: &[u8]) -> &[u8] {
    let start = value.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(value.len());
    let v = value.get(start..).unwrap_or(&[]);
    let end = v.iter().position(|&b| b <= 0x20).unwrap_or(v.len()).min(MAX_SERVER_BYTES);
    v.get(..end).unwrap_or(v)
}

/// The offset just past the last LF in `buf[from..]`, or `from` if there is none.
fn last_line_end(buf: &[u8], from: usize) -> usize {
    let rest = buf.get(from..).unwrap_or(&[]);
    memchr::memrchr(b'\n', rest).map_or(from, |p| from.saturating_add(p).saturating_add(1))
}

/// The error in complete header field lines (no status line, no final empty line), if any.
/// Field lines are independent in httparse's grammar, so checking them a few at a time
/// finds what a parse of the whole head would.
fn field_lines_error(lines: &[u8]) -> Option<ProtoError> {
    let mut headers = [httparse::EMPTY_HEADER; STACK_HEADERS];
    match httparse::parse_headers(lines, &mut headers) {
        // Too many lines at once for the stack array: leave them to the final parse.
        Ok(_) | Err(httparse::Error::TooManyHeaders) => None,
        Err(_) => Some(ProtoError::InvalidHeader),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzing::{transcript_all_splits, Options};

    /// Parses `input` (one connection's stream, ended by EOF) in every split and compares the
    /// one-line summary; see `fuzzing::Transcript`'s `Display` for the format.
    fn check(input: &str, expected: &str) {
        check_with(Options::default(), input, expected);
    }

    fn check_with(options: Options, input: &str, expected: &str) {
        let got = transcript_all_splits(input.as_bytes(), &options).to_string();
        assert_eq!(got, expected, "input {input:?}");
    }

    fn head_request() -> Options {
        Options { head_request: true, ..Options::default() }
    }

    fn capture() -> Options {
        Options { capture_server: true, ..Options::default() }
    }

    fn limit(max_head_bytes: usize) -> Options {
        Options { limits: Limits { max_head_bytes }, ..Options::default() }
    }

    #[test]
    fn content_length_and_reuse() {
        check(
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            "1.1 200 len5 reuse h38 b5; idle",
        );
        check(
            "HTTP/1.1 200 OK\r\ncontent-length:5\r\n\r\nhello",
            "1.1 200 len5 reuse h37 b5; idle",
        );
        check("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "1.1 200 len0 reuse h38 b0; idle");
        check(
            "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello",
            "1.0 200 len5 reuse h62 b5; idle",
        );
        check(
            "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            "1.0 200 len5 close h38 b5; idle",
        );
        check(
            "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi",
            "1.1 200 len2 close h57 b2; idle",
        );
        check(
            "HTTP/1.1 200 OK\r\nConnection: Upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 close h66 b0; idle",
        );
        check(
            "HTTP/1.0 200 OK\r\nConnection: TE,Keep-Alive \r\nContent-Length: 0\r\n\r\n",
            "1.0 200 len0 reuse h66 b0; idle",
        );
        check(
            "HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n",
            "1.0 200 len0 close h69 b0; idle",
        );
        check(
            "HTTP/1.0 200 OK\r\nConnection: keep-alives\r\nContent-Length: 0\r\n\r\n",
            "1.0 200 len0 close h63 b0; idle",
        );
        check(
            "HTTP/1.1 200 OK\r\nConnection: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 close h72 b0; idle",
        );
        check(
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
            "1.1 200 len3 reuse h57 b3; idle",
        );
        check(
            "HTTP/1.1 200 OK\r\nContent-Length: 007\r\n\r\n1234567",
            "1.1 200 len7 reuse h40 b7; idle",
        );
        check("HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx", "1.1 200 len1 reuse h35 b1; idle");
        check(
            "HTTP/1.1 999 Whatever\r\nContent-Length: 1\r\n\r\nx",
            "1.1 999 len1 reuse h44 b1; idle",
        );
        check(
            "HTTP/1.1 404 Not Found\r\nContent-Length: 1\r\n\r\nx",
            "1.1 404 len1 reuse h45 b1; idle",
        );
    }

    #[test]
    fn pipelined_responses() {
        check(
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 404 Nope\r\nContent-Length: 2\r\n\r\nbc",
            "1.1 200 len1 reuse h38 b1; 1.1 404 len2 reuse h40 b2; idle",
        );
        check(
            "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n\r\nrest",
            "1.1 204 empty reuse h27 b0; 1.1 200 chunked reuse h47 b1; 1.1 200 eof close h19 b4; closed",
        );
    }

    #[test]
    fn chunked() {
        let te = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        check(&format!("{te}5\r\nhello\r\n0\r\n\r\n"), "1.1 200 chunked reuse h47 b5; idle");
        check(
            &format!("{te}5;ext=1;q=\"a b\"\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\nX-Other: 2\r\n\r\n"),
            "1.1 200 chunked reuse h47 b11; idle",
        );
        check(
            &format!("{te}A \t;x\r\n0123456789\r\n0\r\n\r\n"),
            "1.1 200 chunked reuse h47 b10; idle",
        );
        check(&format!("{te}0\r\n\r\n"), "1.1 200 chunked reuse h47 b0; idle");
        check(
            "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n2\r\nzz\r\n0\r\n\r\n",
            "1.1 200 chunked reuse h73 b2; idle",
        );
        check(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "1.1 200 chunked reuse h72 b0; idle",
        );
        // chunked is not the final coding: the body runs until close (RFC 9112 6.3).
        check(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
            "1.1 200 eof close h53 b5; closed",
        );
        // An invalid Content-Length is irrelevant when chunked frames the body.
        check(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: nope\r\n\r\n0\r\n\r\n",
            "1.1 200 chunked reuse h69 b0; idle",
        );
        check(
            &format!("{te}3\r\nabc\r\n0\r\n\r\nHTTP"),
            "1.1 200 chunked reuse h47 b3; err Truncated",
        );
    }

    #[test]
    fn invalid_chunks() {
        let te = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        check(&format!("{te}zz\r\n"), "err InvalidChunk");
        check(&format!("{te}-1\r\n"), "err InvalidChunk");
        check(&format!("{te}\r\n"), "err InvalidChunk");
        check(&format!("{te}00000000000000001\r\nx\r\n"), "err InvalidChunk");
        check(&format!("{te}3\r\nabcX0\r\n\r\n"), "err InvalidChunk");
        check(&format!("{te}3\r\nabc\rX"), "err InvalidChunk");
        check(&format!("{te}3\rX"), "err InvalidChunk");
        check(&format!("{te}3;\x01\r\n"), "err InvalidChunk");
        check(&format!("{te}0\r\n\rX"), "err InvalidChunk");
    }

    #[test]
    fn no_body_statuses_and_head() {
        check("HTTP/1.1 204 No Content\r\n\r\n", "1.1 204 empty reuse h27 b0; idle");
        check(
            "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n",
            "1.1 204 empty reuse h47 b0; idle",
        );
        check(
            "HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n",
            "1.1 304 empty reuse h50 b0; idle",
        );
        check(
            "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n",
            "1.1 304 empty reuse h57 b0; idle",
        );
        check_with(
            head_request(),
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
            "1.1 200 empty reuse h38 b0; idle",
        );
        check_with(
            head_request(),
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            "1.1 200 empty reuse h47 b0; idle",
        );
        check_with(head_request(), "HTTP/1.0 200 OK\r\n\r\n", "1.0 200 empty close h19 b0; idle");
        check_with(
            head_request(),
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
            "1.1 200 empty reuse h38 b0; 1.1 200 empty reuse h19 b0; idle",
        );
    }

    #[test]
    fn interim_responses() {
        check(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            "1.1 200 len2 reuse h63 b2; idle",
        );
        check(
            "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 reuse h95 b0; idle",
        );
        check(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            "1.1 204 empty reuse h79 b0; idle",
        );
        // Interim heads do not count for ab's token: only the final head does.
        check(
            "HTTP/1.1 100 Continue\r\nX: keep-alive\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 reuse h78 b0; idle",
        );
        // Interim responses come before a HEAD response too.
        check_with(
            head_request(),
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n",
            "1.1 200 empty reuse h63 b0; idle",
        );
        check("HTTP/1.1 100 Continue\r\n\r\n", "err Truncated");
        check("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n", "err Truncated");
    }

    #[test]
    fn switching_protocols_is_final() {
        check(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            "1.1 101 empty close h77 b0; idle",
        );
        // What follows a 101 is another protocol; it is left to the caller.
        check(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n\0\0\x12\x04",
            "1.1 101 empty close h50 b0; err InvalidStatusLine",
        );
    }

    #[test]
    fn until_close() {
        check("HTTP/1.1 200 OK\r\n\r\nabc", "1.1 200 eof close h19 b3; closed");
        check("HTTP/1.1 200 OK\r\n\r\n", "1.1 200 eof close h19 b0; closed");
        check(
            "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nbody",
            "1.0 200 eof close h43 b4; closed",
        );
        check(
            "HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 eof close h19 b38; closed",
        );
    }

    #[test]
    fn idle_and_truncated() {
        check("", "idle");
        check("H", "err Truncated");
        check("HTTP/1.1 200 OK\r\nContent-Len", "err Truncated");
        check("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r", "err Truncated");
        check("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "err Truncated");
        check(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
            "err Truncated",
        );
        check(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nA: b\r\n",
            "err Truncated",
        );
        check(
            "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nabc",
            "err Truncated",
        );
        check(
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nH",
            "1.1 200 len0 reuse h38 b0; err Truncated",
        );
    }

    #[test]
    fn content_length_errors() {
        for value in [
            "5\r\nContent-Length: 6",
            "abc",
            "-1",
            "+5",
            "5, 5",
            "0x10",
            "1 2",
            "",
            "18446744073709551616",
            "99999999999999999999999",
        ] {
            check(
                &format!("HTTP/1.1 200 OK\r\nContent-Length: {value}\r\n\r\n"),
                "err InvalidContentLength",
            );
        }
    }

    #[test]
    fn invalid_status_lines() {
        for input in [
            "HTTP/2 200 OK\r\n\r\n",
            "HTTP/2.0 200 OK\r\n\r\n",
            "HTTP/1.2 200 OK\r\n\r\n",
            "HTTP/1.1 20 OK\r\n\r\n",
            "HTTP/1.1 2000 OK\r\n\r\n",
            "HTTP/1.1 099 Too Low\r\n\r\n",
            "HTTP/1.1 000\r\n\r\n",
            "HTTP/1.1 abc OK\r\n\r\n",
            "HTTP/1.1  200 OK\r\n\r\n",
            "HTTP/1.1\r\n\r\n",
            "http/1.1 200 OK\r\n\r\n",
            "ICY 200 OK\r\n\r\n",
            "garbage\r\n\r\n",
            "HTTP/1.1 200 OK\rX\r\n\r\n",
            "HTTP/1.1 200 O\0K\r\n\r\n",
            " HTTP/1.1 200 OK\r\n\r\n",
            "\r\r\nHTTP/1.1 200 OK\r\n\r\n",
            // No blank line ever comes: still rejected, from the first line or bytes.
            "SSH-2.0-OpenSSH_8.9\r\n",
            "\0\0\x12\x04\0\0\0\0\0",
            "<html>",
        ] {
            check(input, "err InvalidStatusLine");
        }
    }

    #[test]
    fn invalid_headers() {
        for input in [
            "HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n",
            "HTTP/1.1 200 OK\r\n: no name\r\n\r\n",
            "HTTP/1.1 200 OK\r\nNoColon\r\n\r\n",
            "HTTP/1.1 200 OK\r\nName : spaced\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: a\r\n\rX",
            "HTTP/1.1 200 OK\r\nX\u{e9}: y\r\n\r\n",
        ] {
            check(input, "err InvalidHeader");
        }
    }

    #[test]
    fn head_size_limit() {
        let long = format!("HTTP/1.1 200 OK\r\nX-Pad: {}\r\n\r\n", "p".repeat(100));
        check_with(limit(64), &long, "err HeadTooLarge { limit: 64 }");
        check_with(limit(64), &long[..70], "err HeadTooLarge { limit: 64 }");
        check_with(limit(64), &"\r\n".repeat(40), "err HeadTooLarge { limit: 64 }");
        // Exactly at the limit is accepted; one byte more is not.
        let exact = format!("HTTP/1.1 200 OK\r\nX-Pad: {}\r\n\r\n", "p".repeat(36));
        assert_eq!(exact.len(), 64);
        check_with(limit(64), &exact, "1.1 200 eof close h64 b0; closed");
        let over = format!("HTTP/1.1 200 OK\r\nX-Pad: {}\r\n\r\n", "p".repeat(37));
        check_with(limit(64), &over, "err HeadTooLarge { limit: 64 }");
        // A syntax error within the limit is reported as such, not as size.
        let bad = format!("HTTP/1.1 200 OK\r\nBad Header: {}\r\n\r\n", "p".repeat(100));
        check_with(limit(64), &bad, "err InvalidHeader");
        check_with(limit(0), "HTTP/1.1 200 OK\r\n\r\n", "err HeadTooLarge { limit: 0 }");
        // Trailers share the head limit.
        let trailers = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: {}\r\n\r\n",
            "t".repeat(70)
        );
        check_with(limit(64), &trailers, "err HeadTooLarge { limit: 64 }");
        let ext = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;{}\r\nx\r\n0\r\n\r\n",
            "e".repeat(70)
        );
        check_with(limit(64), &ext, "err InvalidChunk");
    }

    #[test]
    fn server_capture() {
        check_with(
            capture(),
            "HTTP/1.1 200 OK\r\nServer: Apache/2.4.41 (Ubuntu)\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 reuse h70 b0 srv=Apache/2.4.41; idle",
        );
        check_with(
            capture(),
            "HTTP/1.1 200 OK\r\nserver:\tnginx\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 reuse h53 b0 srv=nginx; 1.1 200 len0 reuse h38 b0; idle",
        );
        check_with(
            capture(),
            "HTTP/1.1 200 OK\r\nServer: \r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 reuse h48 b0 srv=; idle",
        );
        check_with(
            capture(),
            "HTTP/1.1 100 Continue\r\nServer: early\r\n\r\nHTTP/1.1 200 OK\r\nServer: late\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 reuse h92 b0 srv=late; idle",
        );
        // Not captured unless asked.
        check(
            "HTTP/1.1 200 OK\r\nServer: Apache\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 reuse h54 b0; idle",
        );
        let long = format!("HTTP/1.1 200 OK\r\nServer: {}\r\n\r\n", "s".repeat(2000));
        let t = transcript_all_splits(long.as_bytes(), &capture());
        let server = t.responses.first().and_then(|r| r.server.clone());
        assert_eq!(server, Some(vec![b's'; 1023]));
    }

    #[test]
    fn line_endings_and_leading_empty_lines() {
        check("HTTP/1.1 200 OK\nContent-Length: 2\n\nok", "1.1 200 len2 reuse h35 b2; idle");
        check("HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\nok", "1.1 200 len2 reuse h37 b2; idle");
        check("HTTP/1.1 200 OK\nContent-Length: 2\r\n\nok", "1.1 200 len2 reuse h36 b2; idle");
        check(
            "\r\n\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 reuse h41 b0; idle",
        );
        check(
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            "1.1 200 len0 reuse h38 b0; 1.1 200 len0 reuse h40 b0; idle",
        );
        // Stray line ends after a response and then a close: bytes arrived, so truncated.
        check(
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n\r\n",
            "1.1 200 len0 reuse h38 b0; err Truncated",
        );
    }

    #[test]
    fn many_headers_take_the_slow_path() {
        let fields: String = (0..200).map(|i| format!("X-{i}: v\r\n")).collect();
        let input = format!("HTTP/1.1 200 OK\r\n{fields}Content-Length: 1\r\n\r\nx");
        let t = transcript_all_splits(input.as_bytes(), &Options::default());
        let head_len = input.len() - 1;
        assert_eq!(t.to_string(), format!("1.1 200 len1 reuse h{head_len} b1; idle"));
    }

    #[test]
    fn feed_reports_consumed_and_leaves_the_rest() {
        let first = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
        let mut input = first.to_vec();
        input.extend_from_slice(b"HTTP/1.1 204 No Content\r\n\r\n");
        let mut p = ResponseParser::new(Limits::default());
        assert!(!p.started());
        assert_eq!(p.feed(&input), Ok(Feed { consumed: first.len(), complete: true }));
        assert_eq!(p.head().map(|h| h.status), Some(200));
        assert_eq!(p.body_bytes(), 3);
        // Completed: more input is not taken.
        assert_eq!(p.feed(b"xyz"), Ok(Feed { consumed: 0, complete: true }));
        assert_eq!(p.finish(), Ok(true));
        p.reset(false);
        assert!(!p.started());
        assert_eq!(p.head(), None);
        assert_eq!(p.body_bytes(), 0);
        let rest = &input[first.len()..];
        assert_eq!(p.feed(rest), Ok(Feed { consumed: rest.len(), complete: true }));
        assert_eq!(p.head().map(|h| h.status), Some(204));
        p.reset(false);
        assert_eq!(p.feed(b""), Ok(Feed { consumed: 0, complete: false }));
        assert!(!p.started());
        assert_eq!(p.finish(), Ok(false));
    }

    #[test]
    fn split_head_then_body_in_later_feeds() {
        let mut p = ResponseParser::new(Limits::default());
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Le"),
            Ok(Feed { consumed: 27, complete: false })
        );
        assert!(p.started());
        assert_eq!(p.head(), None);
        assert_eq!(p.feed(b"ngth: 4\r\n\r\nab"), Ok(Feed { consumed: 13, complete: false }));
        let head = p.head().cloned();
        assert_eq!(
            head,
            Some(Head {
                version: Version::Http11,
                status: 200,
                framing: Framing::Length(4),
                reusable: true,
                head_bytes: 38,
            })
        );
        assert_eq!(p.body_bytes(), 2);
        assert_eq!(p.feed(b"cdHTTP"), Ok(Feed { consumed: 2, complete: true }));
        assert_eq!(p.body_bytes(), 4);
    }

    #[test]
    fn errors_are_sticky_until_reset() {
        let mut p = ResponseParser::new(Limits::default());
        assert_eq!(p.feed(b"HTTP/9"), Err(ProtoError::InvalidStatusLine));
        assert_eq!(p.feed(b"HTTP/1.1 200 OK\r\n\r\n"), Err(ProtoError::InvalidStatusLine));
        assert_eq!(p.finish(), Err(ProtoError::InvalidStatusLine));
        p.reset(false);
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(p.feed(ok), Ok(Feed { consumed: ok.len(), complete: true }));
        p.reset(false);
        assert_eq!(p.feed(b"HTTP/1.1 2"), Ok(Feed { consumed: 10, complete: false }));
        assert_eq!(p.finish(), Err(ProtoError::Truncated));
        assert_eq!(p.finish(), Err(ProtoError::Truncated));
    }

    #[test]
    fn server_capture_toggles() {
        let mut p = ResponseParser::new(Limits::default());
        let with = b"HTTP/1.1 200 OK\r\nServer: a/1 b\r\nContent-Length: 0\r\n\r\n";
        let without = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert!(p.feed(with).is_ok_and(|f| f.complete));
        assert_eq!(p.server(), None, "off by default");
        p.capture_server(true);
        p.reset(false);
        assert!(p.feed(with).is_ok_and(|f| f.complete));
        assert_eq!(p.server(), Some(&b"a/1"[..]));
        p.capture_server(false);
        p.reset(false);
        assert!(p.feed(without).is_ok_and(|f| f.complete));
        assert_eq!(p.server(), Some(&b"a/1"[..]), "kept while off");
        p.capture_server(true);
        p.reset(false);
        assert!(p.feed(without).is_ok_and(|f| f.complete));
        assert_eq!(p.server(), None, "absent in the latest captured head");
    }

    #[test]
    fn non_http_peers_are_rejected_before_eof() {
        for input in [
            &b"SSH-2.0-OpenSSH_8.9\r\n"[..],
            b"\0\0\x12\x04\0\0\0\0\0",
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nBad Header: x\r\n",
        ] {
            let mut p = ResponseParser::new(Limits::default());
            let failed = input.iter().any(|b| p.feed(std::slice::from_ref(b)).is_err());
            assert!(failed, "{:?} was not rejected", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn trickled_large_head_is_linear() {
        // 60 KB fed one byte at a time: quadratic rescans would take minutes here.
        let fields: String = (0..2000).map(|i| format!("X-{i:05}: 0123456789abcdef\r\n")).collect();
        let input = format!("HTTP/1.1 200 OK\r\n{fields}Content-Length: 0\r\n\r\n");
        let mut p = ResponseParser::new(Limits::default());
        let mut done = false;
        for (i, b) in input.as_bytes().iter().enumerate() {
            let f = p.feed(std::slice::from_ref(b));
            assert_eq!(f, Ok(Feed { consumed: 1, complete: i + 1 == input.len() }));
            done = f.is_ok_and(|f| f.complete);
        }
        assert!(done);
        assert_eq!(p.head().map(|h| h.head_bytes), Some(input.len()));
    }

    /// The body `feed_body` hands out, feeding `input` in pieces of `piece` bytes, and
    /// whether the response completed (at end of stream for a close-delimited body).
    fn body_of(input: &[u8], piece: usize) -> (Vec<u8>, bool) {
        let mut p = ResponseParser::new(Limits::default());
        let mut body = Vec::new();
        let mut pos = 0;
        while pos < input.len() {
            let end = (pos + piece).min(input.len());
            let feed = p.feed_body(&input[pos..end], &mut |b| body.extend_from_slice(b)).unwrap();
            pos += feed.consumed;
            if feed.complete {
                return (body, true);
            }
        }
        let done = p.finish() == Ok(true);
        assert_eq!(p.body_bytes(), body.len() as u64, "every counted byte is handed out");
        (body, done)
    }

    #[test]
    fn feed_body_hands_out_the_decoded_body_however_it_is_split() {
        let cases: [(&[u8], &[u8]); 4] = [
            (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1", b"hello"),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nhel\r\n2\r\nlo\r\n0\r\nT: 1\r\n\r\nnext",
                b"hello",
            ),
            (b"HTTP/1.0 200 OK\r\n\r\nhello", b"hello"),
            (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", b""),
        ];
        for (input, want) in cases {
            for piece in 1..=input.len() {
                let (body, done) = body_of(input, piece);
                assert!(done, "{:?} in pieces of {piece}", String::from_utf8_lossy(input));
                assert_eq!(body, want, "{:?} in pieces of {piece}", String::from_utf8_lossy(input));
            }
        }
    }
}
