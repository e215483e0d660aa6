//! An HTTP/3 client connection: herd-proto's h3 layer on quinn's streams, shaped for the
//! engine's session seam (session.rs). A request is a pre-encoded stream (HEADERS, and
//! DATA for a body) written on a new bidirectional stream, then FIN; its response is read
//! by a [`ResponseReader`] that the stream's slot keeps from one request to the next.
//! herd's control stream opens once the handshake is done; the server's unidirectional
//! streams go to [`ServerStreams`] (ignored ones are stopped).
//!
//! What happens is told to the caller as [`H3Event`]s through a callback, in order: the
//! handshake's end, each request's first response byte (TTFB per request), its fields and
//! body pieces, its end (a [`Response`] or a [`QuicFailure`]), when more requests may start,
//! and the connection's end, after which every request still in flight has failed.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use herd_proto::h3::{
    client_control_stream, code, H3Error, Limits, Part, Response, ResponseReader, ServerStreams,
    UniKind,
};
use quinn_proto::{Dir, Event, ReadError, Side, StreamEvent, StreamId, VarInt};

use super::buffers::IoBuffers;
use super::config::QuicClient;
use super::conn::QuicConn;
use super::failure::QuicFailure;
use super::stats::QuicStats;
use super::udp::UdpSocket;
use crate::socket::connect_udp;

/// What an HTTP/3 connection tells its owner.
#[derive(Debug)]
pub enum H3Event<'a> {
    /// The handshake is done (it took `handshake`, from the first packet).
    Connected { handshake: Duration },
    /// The first byte of request `tag`'s response arrived.
    FirstByte { tag: u64 },
    /// A field, body piece or trailer of request `tag`'s response.
    Part { tag: u64, part: Part<'a> },
    /// Request `tag` ended: its response, whole, or why it failed.
    Response { tag: u64, result: Result<Response, QuicFailure> },
    /// More requests may be submitted now.
    Ready,
    /// The connection ended (after a `Response` failure for each request in flight).
    Closed(&'a QuicFailure),
}

/// Why [`H3Conn::submit`] did not take a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The handshake is not done yet.
    NotConnected,
    /// As many requests are in flight as allowed (herd's limit or the server's).
    Full,
    /// The server sent GOAWAY: no new request on this connection.
    Goaway,
    Closed,
}

/// One request stream's place, reused by the next request once its response has ended.
struct Slot {
    stream: Option<StreamId>,
    tag: u64,
    reader: ResponseReader,
    /// Request bytes quinn has not taken yet (its flow control was full).
    unsent: Bytes,
    first_byte: bool,
}

pub struct H3Conn {
    quic: QuicConn,
    control: Bytes,
    server: ServerStreams,
    limits: Limits,
    slots: Vec<Slot>,
    max_streams: usize,
    in_flight: usize,
    connected: bool,
    goaway: Option<u64>,
    /// The connection's end has been told.
    ended: bool,
}

impl H3Conn {
    /// Opens a connection to `peer` that will carry up to `max_streams` requests at once,
    /// from the source address the kernel chooses: its socket opened as a run's are
    /// (socket.rs), without a run's `--bind`. For callers outside a run (the lab's check of
    /// an HTTP/3 listener, the tests).
    pub fn connect(
        client: &QuicClient,
        peer: SocketAddr,
        max_streams: usize,
        now: Instant,
    ) -> Result<H3Conn, QuicFailure> {
        let socket = connect_udp(peer, None, client.datagram())
            .map_err(|e| QuicFailure::socket("open", &e))?;
        H3Conn::over(client, socket, max_streams, now)
    }

    /// As [`H3Conn::connect`], over `socket`, already opened and connected to the server
    /// (a run's: `socket::connect`, from its `--bind` source).
    pub(crate) fn over(
        client: &QuicClient,
        socket: UdpSocket,
        max_streams: usize,
        now: Instant,
    ) -> Result<H3Conn, QuicFailure> {
        let limits = Limits::default();
        Ok(H3Conn {
            quic: QuicConn::connect(client, socket, now)?,
            control: Bytes::from(client_control_stream(limits.max_field_section_size)),
            server: ServerStreams::new(limits),
            limits,
            slots: Vec::with_capacity(max_streams.max(1)),
            max_streams: max_streams.max(1),
            in_flight: 0,
            connected: false,
            goaway: None,
            ended: false,
        })
    }

    /// The QUIC connection under it: the socket to register, timers, stats.
    pub fn quic(&mut self) -> &mut QuicConn {
        &mut self.quic
    }

    pub fn quic_ref(&self) -> &QuicConn {
        &self.quic
    }

    pub fn stats(&self) -> QuicStats {
        self.quic.stats()
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    pub fn is_closed(&self) -> bool {
        self.ended || self.quic.is_closed()
    }

    /// Whether [`H3Conn::submit`] would take a request now (the server's stream limit
    /// aside, which only the attempt tells).
    pub fn can_submit(&self) -> bool {
        self.connected
            && !self.is_closed()
            && self.goaway.is_none()
            && self.in_flight < self.max_streams
    }

    /// Sends `request` (a request's whole stream, from `herd_proto::h3::encode_request`) on
    /// a new stream, finished after it; `head`: it is a HEAD request. Its packets leave at
    /// the next [`H3Conn::flush`].
    pub fn submit(&mut self, request: &Bytes, head: bool, tag: u64) -> Result<(), Refused> {
        if self.is_closed() {
            return Err(Refused::Closed);
        }
        if !self.connected {
            return Err(Refused::NotConnected);
        }
        if self.goaway.is_some() {
            return Err(Refused::Goaway);
        }
        if self.in_flight >= self.max_streams {
            return Err(Refused::Full);
        }
        let Some(id) = self.quic.quinn().streams().open(Dir::Bi) else {
            return Err(Refused::Full);
        };
        let i = match self.slots.iter().position(|s| s.stream.is_none()) {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    stream: None,
                    tag: 0,
                    reader: ResponseReader::new(self.limits),
                    unsent: Bytes::new(),
                    first_byte: false,
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[i];
        slot.stream = Some(id);
        slot.tag = tag;
        slot.first_byte = false;
        slot.reader.reset(head);
        // A clone of `Bytes` shares the bytes: no copy, no allocation per request.
        slot.unsent = request.clone();
        self.in_flight += 1;
        write_unsent(&mut self.quic, slot, id);
        Ok(())
    }

    /// Gives up request `tag` (its timeout passed): its stream is reset and stopped with
    /// H3_REQUEST_CANCELLED and its place freed, with no event. False if it was not in
    /// flight.
    pub fn cancel(&mut self, tag: u64) -> bool {
        let Some(i) = self.slots.iter().position(|s| s.stream.is_some() && s.tag == tag) else {
            return false;
        };
        if let Some(id) = self.slots[i].stream {
            let cancelled = VarInt::from_u32(code::H3_REQUEST_CANCELLED as u32);
            let _ = self.quic.quinn().recv_stream(id).stop(cancelled);
            let _ = self.quic.quinn().send_stream(id).reset(cancelled);
        }
        self.release(i);
        true
    }

    /// Reads everything the socket has, handling what it brings; then sends what is due.
    /// Call it on an error event too: the receive is what reads the socket's error (an
    /// ICMP port unreachable becomes [`QuicFailure::Refused`]).
    pub fn on_readable<F>(&mut self, now: Instant, io: &mut IoBuffers, mut on: F)
    where
        F: FnMut(H3Event<'_>),
    {
        // Each batch's streams are read before the next batch: that lets go of the receive
        // pool, which the next batch then reuses.
        while self.quic.recv(now, io) > 0 {
            self.process(now, &mut on);
        }
        self.process(now, &mut on);
        self.quic.flush(now, io);
    }

    /// The socket is writable again: sends what it refused before, and the rest.
    pub fn on_writable(&mut self, now: Instant, io: &mut IoBuffers) {
        self.quic.flush(now, io);
    }

    /// When [`H3Conn::on_timeout`] is due.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.quic.poll_timeout()
    }

    /// Runs the timers due at `now` (retransmissions, ACKs, the handshake's and the idle
    /// timeout), handling what they bring.
    pub fn on_timeout<F>(&mut self, now: Instant, io: &mut IoBuffers, mut on: F)
    where
        F: FnMut(H3Event<'_>),
    {
        self.quic.on_timeout(now);
        self.process(now, &mut on);
        self.quic.flush(now, io);
    }

    /// Sends what submits and reads have queued.
    pub fn flush(&mut self, now: Instant, io: &mut IoBuffers) {
        self.quic.flush(now, io);
    }

    /// Closes the connection (H3_NO_ERROR), failing what is in flight with
    /// [`QuicFailure::Closed`], and sends the CONNECTION_CLOSE.
    pub fn close<F>(&mut self, now: Instant, io: &mut IoBuffers, mut on: F)
    where
        F: FnMut(H3Event<'_>),
    {
        self.quic.close(now, code::H3_NO_ERROR, QuicFailure::Closed);
        self.process(now, &mut on);
        self.quic.flush(now, io);
    }

    /// Handles quinn's events, then tells the connection's end if it came.
    fn process<F>(&mut self, now: Instant, on: &mut F)
    where
        F: FnMut(H3Event<'_>),
    {
        while let Some(event) = self.quic.poll(now) {
            match event {
                Event::Connected => self.on_connected(now, on),
                Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = self.quic.quinn().streams().accept(Dir::Uni) {
                        self.read_uni(now, id, on);
                    }
                }
                Event::Stream(StreamEvent::Readable { id }) => {
                    if id.initiator() == Side::Client && id.dir() == Dir::Bi {
                        self.read_request(now, id, on);
                    } else {
                        self.read_uni(now, id, on);
                    }
                }
                Event::Stream(StreamEvent::Writable { id }) => {
                    if let Some(slot) = self.slots.iter_mut().find(|s| s.stream == Some(id)) {
                        write_unsent(&mut self.quic, slot, id);
                    }
                }
                Event::Stream(StreamEvent::Available { dir: Dir::Bi }) if self.can_submit() => {
                    on(H3Event::Ready);
                }
                // The server opens no request streams (herd allows none); a stopped or
                // finished request stream changes nothing about its response; a lost
                // connection is told below.
                _ => {}
            }
            if self.quic.failure().is_some() {
                break;
            }
        }
        if !self.ended {
            if let Some(failure) = self.quic.failure().cloned() {
                self.end(&failure, on);
            }
        }
    }

    fn on_connected<F>(&mut self, now: Instant, on: &mut F)
    where
        F: FnMut(H3Event<'_>),
    {
        // rustls refuses a server that picks no protocol when one was offered; this catches
        // one that picks another.
        let alpn = self
            .quic
            .quinn()
            .crypto_session()
            .handshake_data()
            .and_then(|d| d.downcast::<quinn_proto::crypto::rustls::HandshakeData>().ok())
            .and_then(|d| d.protocol);
        if alpn.as_deref() != Some(b"h3") {
            self.quic.close(now, code::H3_GENERAL_PROTOCOL_ERROR, QuicFailure::NoH3);
            return;
        }
        let Some(id) = self.quic.quinn().streams().open(Dir::Uni) else {
            let failure = QuicFailure::Transport("the server allows herd no control stream".into());
            self.quic.close(now, code::H3_STREAM_CREATION_ERROR, failure);
            return;
        };
        // A dozen bytes, always within the initial flow control window: written whole.
        let mut control = [self.control.clone()];
        let _ = self.quic.quinn().send_stream(id).write_chunks(&mut control);
        self.connected = true;
        let handshake = self.quic.handshake().unwrap_or_default();
        on(H3Event::Connected { handshake });
        on(H3Event::Ready);
    }

    /// Reads request stream `id`'s response bytes into its slot's reader.
    fn read_request<F>(&mut self, now: Instant, id: StreamId, on: &mut F)
    where
        F: FnMut(H3Event<'_>),
    {
        let Some(i) = self.slots.iter().position(|s| s.stream == Some(id)) else { return };
        let slot = &mut self.slots[i];
        let tag = slot.tag;
        let mut recv = self.quic.quinn().recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else { return };
        let mut end: Option<Result<Response, QuicFailure>> = None;
        let mut error: Option<H3Error> = None;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    if !slot.first_byte {
                        slot.first_byte = true;
                        on(H3Event::FirstByte { tag });
                    }
                    if let Err(e) =
                        slot.reader.feed(&chunk.bytes, |part| on(H3Event::Part { tag, part }))
                    {
                        error = Some(e);
                        break;
                    }
                }
                Ok(None) => {
                    end = Some(slot.reader.finish().map_err(QuicFailure::Protocol));
                    if let Some(Err(QuicFailure::Protocol(e))) = &end {
                        error = Some(*e);
                    }
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(code)) => {
                    let code = code.into_inner();
                    // Not processed: the server says so, or its GOAWAY already did.
                    let refused = code == code::H3_REQUEST_REJECTED
                        || self.goaway.is_some_and(|g| u64::from(id) >= g);
                    end = Some(Err(if refused {
                        QuicFailure::Goaway
                    } else {
                        QuicFailure::StreamReset(code)
                    }));
                    break;
                }
            }
        }
        let _ = chunks.finalize();
        if let Some(e) = error {
            if !e.is_stream_error() {
                // The connection's error: every request fails with it (`end`, below).
                self.quic.close(now, e.code(), QuicFailure::Protocol(e));
                return;
            }
            let code = VarInt::from_u64(e.code()).unwrap_or(VarInt::from_u32(0));
            let _ = self.quic.quinn().recv_stream(id).stop(code);
            let _ = self.quic.quinn().send_stream(id).reset(code);
            end = Some(Err(QuicFailure::Protocol(e)));
        }
        if let Some(result) = end {
            self.release(i);
            on(H3Event::Response { tag, result });
            if self.can_submit() {
                on(H3Event::Ready);
            }
        }
    }

    /// Reads a server's unidirectional stream: its control stream, QPACK's (drained),
    /// anything else stopped.
    fn read_uni<F>(&mut self, now: Instant, id: StreamId, on: &mut F)
    where
        F: FnMut(H3Event<'_>),
    {
        let key = u64::from(id);
        let mut recv = self.quic.quinn().recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else { return };
        let mut result = Ok(());
        let mut ignored = false;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => match self.server.on_data(key, &chunk.bytes) {
                    Ok(UniKind::Ignored(_)) => {
                        ignored = true;
                        break;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                },
                Ok(None) | Err(ReadError::Reset(_)) => {
                    result = self.server.on_finished(key);
                    break;
                }
                Err(ReadError::Blocked) => break,
            }
        }
        let _ = chunks.finalize();
        if ignored {
            // RFC 9114 §6.2: a stream of an unknown type is not read.
            let _ = self.server.on_finished(key);
            let code = VarInt::from_u32(code::H3_STREAM_CREATION_ERROR as u32);
            let _ = self.quic.quinn().recv_stream(id).stop(code);
        }
        if let Err(e) = result {
            self.quic.close(now, e.code(), QuicFailure::Protocol(e));
            return;
        }
        if let Some(goaway) = self.server.goaway() {
            if self.goaway != Some(goaway) {
                self.on_goaway(goaway, on);
            }
        }
    }

    /// The server will not process requests on stream `goaway` or later (RFC 9114 §5.2):
    /// those in flight there fail as not processed, and no new request starts here; the
    /// ones below it end as usual.
    fn on_goaway<F>(&mut self, goaway: u64, on: &mut F)
    where
        F: FnMut(H3Event<'_>),
    {
        self.goaway = Some(goaway);
        let cancelled = VarInt::from_u32(code::H3_REQUEST_CANCELLED as u32);
        for i in 0..self.slots.len() {
            let Some(id) = self.slots[i].stream.filter(|&id| u64::from(id) >= goaway) else {
                continue;
            };
            let tag = self.slots[i].tag;
            let _ = self.quic.quinn().recv_stream(id).stop(cancelled);
            let _ = self.quic.quinn().send_stream(id).reset(cancelled);
            self.release(i);
            on(H3Event::Response { tag, result: Err(QuicFailure::Goaway) });
        }
    }

    fn release(&mut self, i: usize) {
        if let Some(slot) = self.slots.get_mut(i) {
            if slot.stream.take().is_some() {
                self.in_flight -= 1;
            }
            slot.unsent = Bytes::new();
        }
    }

    /// Fails every request in flight with `failure`, then tells the connection's end.
    fn end<F>(&mut self, failure: &QuicFailure, on: &mut F)
    where
        F: FnMut(H3Event<'_>),
    {
        self.ended = true;
        for i in 0..self.slots.len() {
            let Some(id) = self.slots[i].stream else { continue };
            let tag = self.slots[i].tag;
            let refused = self.goaway.is_some_and(|g| u64::from(id) >= g);
            self.release(i);
            let result = Err(if refused { QuicFailure::Goaway } else { failure.clone() });
            on(H3Event::Response { tag, result });
        }
        on(H3Event::Closed(failure));
    }
}

/// Hands quinn as much of the slot's request as its flow control takes, and finishes the
/// stream when it has all of it.
fn write_unsent(quic: &mut QuicConn, slot: &mut Slot, id: StreamId) {
    if slot.unsent.is_empty() {
        return;
    }
    let mut send = quic.quinn().send_stream(id);
    let mut chunks = [std::mem::take(&mut slot.unsent)];
    if send.write_chunks(&mut chunks).is_err() {
        return;
    }
    let [rest] = chunks;
    if rest.is_empty() {
        let _ = send.finish();
    } else {
        slot.unsent = rest;
    }
}
