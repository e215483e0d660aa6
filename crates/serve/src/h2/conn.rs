//! One HTTP/2 connection's state machine, driven like the HTTP/1 one (conn.rs): write what is
//! queued, handle the frames already read, send DATA, read more, until the socket would block;
//! then tell the worker what to wait for. The frames' meaning is in frames.rs, answers in
//! respond.rs, DATA in send.rs; this file owns the buffers, the socket and the connection's end.
//!
//! Ends: a connection error queues GOAWAY with its code and closes once it is written; a
//! graceful end (the server stops, or the client sent GOAWAY) sends GOAWAY NO_ERROR, finishes
//! the streams already open and then closes. Either way the close lingers like HTTP/1's: our
//! side is shut down and what the client still sends is read and dropped until it closes, at
//! most [`LINGER`], so that the GOAWAY is not reset away by the client's unread bytes.

use std::io::{self, Read};
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use herd_proto::h2::hpack::Decoder;
use herd_proto::h2::{encode, ErrorCode, FrameDecoder, SettingId, DEFAULT_MAX_FRAME_SIZE};

use super::encoder::ResponseEncoder;
use super::frames::Head;
use super::stream::Streams;
use super::{FieldList, CONNECTION_WINDOW, INITIAL_WINDOW_SIZE, MAX_CONCURRENT_STREAMS};
use crate::conn::Drive;
use crate::read_buf::Limits;
use crate::sys;
use crate::transport::Transport;
use crate::worker::Ctx;
use crate::write_queue::WriteQueue;

/// Output queued before the connection stops reading requests and frames, until it is
/// written (HTTP/1's `HIGH_WATER` too).
pub(super) const HIGH_WATER: usize = 64 * 1024;

/// Read-and-answer rounds one `drive` may run before yielding to other connections.
const MAX_ROUNDS: usize = 16;

/// How long a closing connection reads and drops what the client still sends, at most.
const LINGER: Duration = Duration::from_secs(2);

/// The input buffer: a whole frame of the largest size herd serve accepts (it announces no
/// SETTINGS_MAX_FRAME_SIZE, so RFC 9113's 16,384) and its header, with room to read ahead.
const INPUT_BYTES: usize = 32 * 1024;

/// The client's settings that shape what the server sends.
#[derive(Debug, Clone, Copy)]
pub(super) struct PeerSettings {
    pub(super) initial_window: u32,
    pub(super) max_frame_size: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Open,
    /// GOAWAY NO_ERROR sent: no new streams; close once the open ones are done.
    Draining,
    /// GOAWAY (or nothing more) to write, then close.
    Closing,
    /// Our side is shut down; dropping input until the client closes or the deadline.
    Lingering {
        until: Instant,
    },
}

/// A header block arriving in HEADERS and CONTINUATION frames.
#[derive(Debug, Clone, Copy)]
pub(super) struct PendingBlock {
    pub(super) head: Head,
    pub(super) continuations: u32,
}

#[derive(Debug)]
pub(crate) struct H2Conn {
    pub(super) io: Transport,
    pub(super) peer: SocketAddr,
    pub(super) limits: Limits,
    input: Input,
    pub(super) out: Vec<u8>,
    out_pos: usize,
    pub(super) frames: FrameDecoder,
    pub(super) hpack: Decoder,
    pub(super) encoder: ResponseEncoder,
    pub(super) streams: Streams,
    /// The highest stream id the client has opened (or tried to).
    pub(super) last_stream: u32,
    /// The last stream id named in the GOAWAY NO_ERROR sent when the server began to stop: a
    /// later GOAWAY may not name a higher one (RFC 9113 §6.8), whatever the client opened
    /// since.
    goaway_last: Option<u32>,
    /// Preface bytes still to check.
    preface_left: usize,
    /// The client's SETTINGS have come (RFC 9113 §3.4: its first frame).
    pub(super) settings_seen: bool,
    pub(super) peer_settings: PeerSettings,
    /// Bytes the client still lets us send on the connection.
    pub(super) send_window: i64,
    /// Bytes the client may still send on the connection, and those consumed and not yet
    /// given back with a WINDOW_UPDATE.
    pub(super) recv_window: i64,
    pub(super) recv_unacked: u32,
    /// Payload bytes of the DATA frame being read (its pieces), for the echo's credit.
    pub(super) frame_data: u32,
    pub(super) block: Option<PendingBlock>,
    pub(super) block_buf: Vec<u8>,
    pub(super) phase: Phase,
    /// The client sent GOAWAY: close once the open streams are done.
    pub(super) peer_going_away: bool,
    /// Client resets allowed now (a token bucket), and when it was last filled.
    pub(super) reset_tokens: f64,
    pub(super) reset_filled: Instant,
    /// Round-robin position of the DATA scheduler.
    pub(super) cursor: usize,
    /// The worker has a timer for this instant (a held response).
    armed: Option<Instant>,
    pub(super) last_progress: Instant,
    peer_closed: bool,
    maybe_readable: bool,
    fin_reported: bool,
    /// A handler's output, reused: its body moves to the stream without a copy.
    pub(super) scratch: WriteQueue,
    /// A response's fields as the handler writes them, and a request's as decoded.
    pub(super) fields: FieldList,
    pub(super) request: FieldList,
    /// A header block being encoded, and the access log's request line.
    pub(super) block_out: Vec<u8>,
    pub(super) log_line: Vec<u8>,
}

/// The input buffer: bytes `start..end` of `buf` are not yet decoded.
#[derive(Debug, Default)]
struct Input {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The last read returned less than it had room for.
    drained: bool,
}

impl Input {
    fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Reads once into the free space, moving the undecoded bytes to the front first if
    /// the space is at the end is gone.
    fn fill(&mut self, io: &mut Transport) -> io::Result<usize> {
        if self.end == self.buf.len() && self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let room = self.buf.len() - self.end;
        if room == 0 {
            // Cannot happen: a frame the decoder waits for fits the buffer whole.
            return Err(io::Error::new(io::ErrorKind::OutOfMemory, "HTTP/2 input buffer full"));
        }
        let n = io.read(&mut self.buf[self.end..])?;
        self.end += n;
        self.drained = n < room;
        Ok(n)
    }
}

impl H2Conn {
    /// Takes over a connection whose first bytes (`read`, which may hold the preface and
    /// more) were read as HTTP/1, and queues the server's SETTINGS and connection window.
    pub(crate) fn new(
        io: Transport,
        peer: SocketAddr,
        read: &[u8],
        limits: Limits,
        now: Instant,
    ) -> H2Conn {
        let mut buf = vec![0; INPUT_BYTES.max(read.len())];
        buf[..read.len()].copy_from_slice(read);
        let mut conn = H2Conn {
            io,
            peer,
            limits,
            input: Input { buf, start: 0, end: read.len(), drained: false },
            out: Vec::with_capacity(4096),
            out_pos: 0,
            frames: FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE),
            hpack: Decoder::new(4096, to_u32(limits.max_head)),
            encoder: ResponseEncoder::new(4096),
            streams: Streams::default(),
            last_stream: 0,
            goaway_last: None,
            preface_left: herd_proto::h2::PREFACE.len(),
            settings_seen: false,
            peer_settings: PeerSettings {
                initial_window: 65_535,
                max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            },
            send_window: 65_535,
            recv_window: i64::from(CONNECTION_WINDOW),
            recv_unacked: 0,
            frame_data: 0,
            block: None,
            block_buf: Vec::new(),
            phase: Phase::Open,
            peer_going_away: false,
            reset_tokens: super::RESET_BURST,
            reset_filled: now,
            cursor: 0,
            armed: None,
            last_progress: now,
            peer_closed: false,
            maybe_readable: true,
            fin_reported: false,
            scratch: WriteQueue::new(),
            fields: FieldList::default(),
            request: FieldList::default(),
            block_out: Vec::new(),
            log_line: Vec::new(),
        };
        encode::settings(
            &mut conn.out,
            &[
                (SettingId::MAX_CONCURRENT_STREAMS, MAX_CONCURRENT_STREAMS),
                (SettingId::INITIAL_WINDOW_SIZE, INITIAL_WINDOW_SIZE),
                (SettingId::MAX_HEADER_LIST_SIZE, to_u32(limits.max_head)),
            ],
        );
        encode::window_update(&mut conn.out, 0, CONNECTION_WINDOW - 65_535);
        conn
    }

    /// Epoll reported the socket readable (and whether the peer closed or it is in error).
    pub(crate) fn readable_event(&mut self, closed_or_error: bool) {
        self.maybe_readable = true;
        self.fin_reported |= closed_or_error;
    }

    /// When the connection should be closed if nothing happens.
    pub(crate) fn deadline(&self, idle_timeout: Duration) -> Instant {
        match (self.phase, self.streams.next_release()) {
            (Phase::Lingering { until }, _) => until,
            (_, Some(release)) => release.max(self.last_progress) + idle_timeout,
            _ => self.last_progress + idle_timeout,
        }
    }

    /// Ends the connection gracefully (the server is stopping): GOAWAY NO_ERROR, the open
    /// streams finished, then the close.
    pub(crate) fn go_away(&mut self) {
        if self.phase == Phase::Open {
            encode::goaway(&mut self.out, self.last_stream, ErrorCode::NO_ERROR, b"");
            self.goaway_last = Some(self.last_stream);
            self.phase = Phase::Draining;
        }
    }

    /// Whether all that is left is waiting for the client to close.
    pub(crate) fn only_lingering(&self) -> bool {
        matches!(self.phase, Phase::Lingering { .. })
    }

    /// Makes all the progress the socket allows now.
    pub(crate) fn drive(&mut self, ctx: &mut Ctx<'_>) -> Drive {
        if self.armed.is_some_and(|t| t <= ctx.now) {
            self.armed = None;
        }
        for _ in 0..MAX_ROUNDS {
            if let Phase::Lingering { .. } = self.phase {
                return self.linger();
            }
            self.release_held(ctx);
            match self.flush(ctx) {
                Ok(true) => {}
                Ok(false) => return self.wait(),
                Err(_) => return Drive::Close,
            }
            if self.phase == Phase::Closing {
                return self.begin_close(ctx.now);
            }
            self.process_input(ctx);
            self.pump(ctx);
            self.streams.close_finished();
            if self.streams.is_empty()
                && (self.phase == Phase::Draining || self.peer_going_away)
                && self.phase != Phase::Closing
            {
                self.phase = Phase::Closing;
            }
            if self.out_pending() > 0 || self.phase == Phase::Closing {
                continue;
            }
            if self.peer_closed {
                // Nothing more will come: no request, no WINDOW_UPDATE. Only a held response
                // can still be sent.
                return if self.streams.next_release().is_some() {
                    self.wait()
                } else {
                    Drive::Close
                };
            }
            if !self.maybe_readable {
                return self.wait();
            }
            match self.input.fill(&mut self.io) {
                Ok(0) => self.peer_closed = true,
                Ok(_) => {
                    self.maybe_readable =
                        self.fin_reported || !self.input.drained || !self.io.short_read_drains();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.maybe_readable = false;
                    return self.wait();
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Drive::Close,
            }
        }
        Drive::Yield
    }

    /// Decodes and handles the frames read, while the output is below the high-water mark.
    fn process_input(&mut self, ctx: &mut Ctx<'_>) {
        // The frames borrow the buffer while their handlers change the connection.
        let mut input = std::mem::take(&mut self.input);
        while self.phase != Phase::Closing && self.out_pending() < HIGH_WATER {
            if self.preface_left > 0 {
                let preface = herd_proto::h2::PREFACE;
                let at = preface.len() - self.preface_left;
                let n = input.data().len().min(self.preface_left);
                if input.data()[..n] != preface[at..at + n] {
                    self.fail(ErrorCode::PROTOCOL_ERROR, "not the HTTP/2 connection preface");
                    break;
                }
                input.consume(n);
                self.preface_left -= n;
                if self.preface_left > 0 {
                    break;
                }
            }
            match self.frames.decode(input.data()) {
                Ok(None) => break,
                Ok(Some((frame, used))) => {
                    let handled = self.on_frame(frame, input.data(), ctx);
                    input.consume(used);
                    if let Err(e) = handled {
                        self.fail(e.code, &e.reason);
                        break;
                    }
                }
                Err(e) => match e.stream {
                    Some(stream) => {
                        self.reset(stream, e.code);
                        input.consume(e.used);
                    }
                    None => {
                        self.fail(e.code, &e.to_string());
                        break;
                    }
                },
            }
        }
        self.input = input;
    }

    /// A connection error: GOAWAY with `code` and the reason as debug data, then the close.
    pub(super) fn fail(&mut self, code: ErrorCode, reason: &str) {
        if self.phase == Phase::Closing {
            return;
        }
        let debug = reason.as_bytes();
        let last = self.goaway_last.unwrap_or(self.last_stream);
        encode::goaway(&mut self.out, last, code, &debug[..debug.len().min(256)]);
        self.phase = Phase::Closing;
    }

    pub(super) fn out_pending(&self) -> usize {
        self.out.len() - self.out_pos
    }

    /// Writes the queued frames: `Ok(true)` when all are written (TLS records included),
    /// `Ok(false)` when the socket is full.
    fn flush(&mut self, ctx: &mut Ctx<'_>) -> io::Result<bool> {
        let mut written = 0u64;
        let result = self.write_out(&mut written);
        if written > 0 {
            ctx.counters.add_bytes(written);
        }
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
            if self.out.capacity() > 4 * HIGH_WATER {
                self.out.shrink_to(HIGH_WATER);
            }
        }
        result
    }

    fn write_out(&mut self, written: &mut u64) -> io::Result<bool> {
        match &mut self.io {
            Transport::Plain(sock) => {
                while self.out_pos < self.out.len() {
                    match sys::send(sock.as_fd(), &self.out[self.out_pos..], false) {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => {
                            self.out_pos += n;
                            *written += n as u64;
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                        Err(e) => return Err(e),
                    }
                }
                Ok(true)
            }
            Transport::Tls(tls) => loop {
                if !tls.push()? {
                    return Ok(false);
                }
                if self.out_pos == self.out.len() {
                    return Ok(true);
                }
                let n = tls.write_plain(&self.out[self.out_pos..])?;
                if n == 0 {
                    return Ok(false);
                }
                self.out_pos += n;
                *written += n as u64;
            },
            // The ring sends it at the end of the turn: the buffer itself when the ring holds
            // nothing of ours (one buffer goes round), else a copy behind what it holds.
            Transport::Ring(r) => {
                // The ring still holds a high-water mark of ours: wait for its send, as for a
                // full socket (otherwise a client with wide windows that does not read would
                // have the streams' DATA pile up here).
                if r.unsent() >= HIGH_WATER {
                    return Ok(false);
                }
                let n = self.out.len() - self.out_pos;
                if self.out_pos == 0 && r.outbox.is_empty() {
                    std::mem::swap(&mut self.out, &mut r.outbox);
                } else {
                    r.outbox.extend_from_slice(&self.out[self.out_pos..]);
                }
                self.out.clear();
                self.out_pos = 0;
                *written += n as u64;
                Ok(true)
            }
        }
    }

    /// Waits for the socket, and asks for a timer if a held response is due before any the
    /// worker has.
    fn wait(&mut self) -> Drive {
        match self.streams.next_release() {
            Some(t) if self.armed.is_none_or(|armed| t < armed) => {
                self.armed = Some(t);
                Drive::Sleep(t)
            }
            _ => Drive::Wait,
        }
    }

    /// Everything is written and the connection must close; see the module doc.
    fn begin_close(&mut self, now: Instant) -> Drive {
        self.io.close_notify();
        if self.peer_closed {
            return Drive::Close;
        }
        if self.io.shutdown_write().is_err() {
            return Drive::Close;
        }
        self.phase = Phase::Lingering { until: now + LINGER };
        self.linger()
    }

    fn linger(&mut self) -> Drive {
        crate::conn::discard_input(&mut self.io)
    }

    /// The ring's stream under the connection, if it runs on an io_uring worker.
    pub(crate) fn ring_stream(&mut self) -> Option<&mut crate::transport::RingStream> {
        self.io.ring_stream()
    }

    /// The connection's transport, to close it through the ring.
    pub(crate) fn into_transport(self) -> Transport {
        self.io
    }
}

/// Sizes from the configuration, which are far below 4 GiB.
pub(super) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
