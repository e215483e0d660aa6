//! One QUIC connection, driven by hand: a quinn-proto `Endpoint` and `Connection` (sans-IO)
//! over one connected UDP socket, opened by socket.rs and handed over. The owner calls
//! [`QuicConn::recv`] when the socket is readable, [`QuicConn::flush`] after anything that may
//! have queued packets (received datagrams, stream writes, timers), and
//! [`QuicConn::on_timeout`] at [`QuicConn::poll_timeout`], which the worker's timer heap will
//! own. Events come from [`QuicConn::poll`]; streams are quinn's, through [`QuicConn::quinn`].
//!
//! One endpoint per connection costs a little memory and spares a map from connection IDs
//! to connections: the connected socket only ever carries this connection's datagrams.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use quinn_proto::{Connection, ConnectionHandle, DatagramEvent, Endpoint, Event, VarInt};

use super::buffers::IoBuffers;
use super::config::QuicClient;
use super::failure::QuicFailure;
use super::stats::{IoCounters, QuicRtt, QuicStats};
use super::udp::{Sent, UdpSocket, MAX_GSO_SEGMENTS};
use super::udp_sys::MAX_BATCH;

pub struct QuicConn {
    socket: UdpSocket,
    endpoint: Endpoint,
    handle: ConnectionHandle,
    conn: Connection,
    peer: SocketAddr,
    started: Instant,
    /// While the handshake runs: when it fails for taking too long.
    handshake_deadline: Option<Instant>,
    handshake_timeout: Duration,
    handshake: Option<Duration>,
    /// Datagrams quinn built that the socket could not take yet (its buffer was full),
    /// sent first when it is writable again. Empty, and unallocated, almost always.
    blocked: Vec<(Vec<u8>, Option<usize>)>,
    /// How the connection ended, once it has: the first reason wins.
    failure: Option<QuicFailure>,
    io: IoCounters,
}

impl QuicConn {
    /// Starts the handshake with the server `socket` is connected to (socket.rs's
    /// `connect_udp` opened it, from its source address); its first flight leaves at the
    /// first [`QuicConn::flush`].
    pub(crate) fn connect(
        client: &QuicClient,
        socket: UdpSocket,
        now: Instant,
    ) -> Result<QuicConn, QuicFailure> {
        let peer = socket.peer();
        // quinn would seed its generator itself and panic if the system's failed.
        let mut seed = [0u8; 32];
        rustls::crypto::ring::default_provider().secure_random.fill(&mut seed).map_err(|_| {
            QuicFailure::Socket { op: "seed", message: "no system randomness".into(), errno: None }
        })?;
        let mut endpoint = Endpoint::new(client.endpoint.clone(), None, socket.mtud(), Some(seed));
        let (handle, conn) = endpoint
            .connect(now, client.client.clone(), peer, &client.server_name)
            .map_err(|e| QuicFailure::Transport(e.to_string()))?;
        Ok(QuicConn {
            socket,
            endpoint,
            handle,
            conn,
            peer,
            started: now,
            handshake_deadline: Some(now + client.handshake_timeout),
            handshake_timeout: client.handshake_timeout,
            handshake: None,
            blocked: Vec::new(),
            failure: None,
            io: IoCounters::default(),
        })
    }

    /// The socket, to register with the worker's mio registry or have the ring poll it.
    pub fn socket(&mut self) -> &mut (impl mio::event::Source + std::os::fd::AsRawFd) {
        &mut self.socket
    }

    /// The socket's descriptor (the ring polls it).
    pub(crate) fn socket_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.socket.as_raw_fd()
    }

    /// quinn's connection: streams, and everything else the HTTP/3 layer asks of it.
    pub fn quinn(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// How the connection ended, once it has.
    pub fn failure(&self) -> Option<&QuicFailure> {
        self.failure.as_ref()
    }

    /// The handshake's duration, once it has completed.
    pub fn handshake(&self) -> Option<Duration> {
        self.handshake
    }

    pub fn started(&self) -> Instant {
        self.started
    }

    /// Reads one batch of datagrams from the socket into quinn. Returns how many there
    /// were: 0 when nothing was waiting (call until then: mio is edge-triggered).
    pub fn recv(&mut self, now: Instant, io: &mut IoBuffers) -> usize {
        io.datagrams.clear();
        let batch = match self.socket.recv(&mut io.pool, &mut io.datagrams) {
            Ok(batch) => batch,
            Err(e) => {
                self.fail(now, QuicFailure::socket("receive", &e));
                return 0;
            }
        };
        if batch.messages == 0 {
            return 0;
        }
        self.io.recv_calls += 1;
        self.io.datagrams_in += batch.datagrams as u64;
        self.io.gro_messages += u64::from(batch.datagrams > batch.messages);
        self.io.truncated += batch.truncated as u64;
        for datagram in io.datagrams.drain(..) {
            io.scratch.clear();
            match self.endpoint.handle(now, self.peer, None, None, datagram, &mut io.scratch) {
                Some(DatagramEvent::ConnectionEvent(handle, event)) if handle == self.handle => {
                    self.conn.handle_event(event);
                }
                // A stateless reset or version negotiation reply for a datagram of no
                // connection, or a server's attempt to connect to us: nothing to answer.
                _ => {}
            }
        }
        self.pump_endpoint(now);
        batch.datagrams
    }

    /// Sends every packet quinn has ready, until it has none or the socket is full.
    pub fn flush(&mut self, now: Instant, io: &mut IoBuffers) {
        if !self.send_blocked() {
            return;
        }
        let gso = self.socket.gso();
        loop {
            if gso {
                io.send.clear();
                let Some(t) = self.conn.poll_transmit(now, MAX_GSO_SEGMENTS, &mut io.send) else {
                    break;
                };
                let buf = &io.send[..t.size];
                match self.socket.send_segments(buf, t.segment_size) {
                    Ok(Sent::All) => self.io.send_calls += 1,
                    Ok(Sent::Blocked(k)) => {
                        let size = t.segment_size.unwrap_or(buf.len());
                        let rest = buf.get(k * size..).unwrap_or_default();
                        self.blocked.push((rest.to_vec(), t.segment_size));
                        break;
                    }
                    Err(e) => {
                        self.fail(now, QuicFailure::socket("send", &e));
                        return;
                    }
                }
            } else {
                // One datagram per transmit without GSO: gather a batch for one sendmmsg.
                let mut n = 0;
                while n < MAX_BATCH {
                    if io.sends.len() == n {
                        io.sends.push(Vec::with_capacity(1500));
                    }
                    io.sends[n].clear();
                    let Some(t) = self.conn.poll_transmit(now, 1, &mut io.sends[n]) else {
                        break;
                    };
                    io.sends[n].truncate(t.size);
                    n += 1;
                }
                if n == 0 {
                    break;
                }
                let mut batch: [&[u8]; MAX_BATCH] = [&[]; MAX_BATCH];
                for (slot, d) in batch.iter_mut().zip(&io.sends[..n]) {
                    *slot = d;
                }
                match self.socket.send_batch(&batch[..n]) {
                    Ok(Sent::All) => self.io.send_calls += 1,
                    Ok(Sent::Blocked(k)) => {
                        self.blocked.extend(batch[k..n].iter().map(|d| (d.to_vec(), None)));
                        break;
                    }
                    Err(e) => {
                        self.fail(now, QuicFailure::socket("send", &e));
                        return;
                    }
                }
                if n < MAX_BATCH {
                    break;
                }
            }
        }
        self.pump_endpoint(now);
    }

    /// True while packets wait for the socket to be writable.
    pub fn wants_writable(&self) -> bool {
        !self.blocked.is_empty()
    }

    /// Sends what the socket refused before; false while it still refuses.
    fn send_blocked(&mut self) -> bool {
        while let Some((buf, segment)) = self.blocked.first() {
            match self.socket.send_segments(buf, *segment) {
                Ok(Sent::All) => {
                    self.io.send_calls += 1;
                    self.blocked.remove(0);
                }
                Ok(Sent::Blocked(k)) => {
                    let size = segment.unwrap_or(buf.len());
                    let rest = buf.get(k * size..).unwrap_or_default().to_vec();
                    self.blocked[0].0 = rest;
                    return false;
                }
                Err(_) => {
                    // Given up: quinn will find these packets lost and send them again.
                    self.blocked.clear();
                }
            }
        }
        true
    }

    /// When [`QuicConn::on_timeout`] is due next: quinn's timers, and the handshake's
    /// deadline while it runs.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        let quinn = self.conn.poll_timeout();
        match (quinn, self.handshake_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs the timers due at `now`; [`QuicConn::flush`] after it.
    pub fn on_timeout(&mut self, now: Instant) {
        self.conn.handle_timeout(now);
        if let Some(deadline) = self.handshake_deadline {
            if now >= deadline && self.conn.is_handshaking() {
                self.handshake_deadline = None;
                self.fail(now, QuicFailure::HandshakeTimeout(self.handshake_timeout));
            }
        }
        self.pump_endpoint(now);
    }

    /// The next event; the connection's end is also recorded as its
    /// [`QuicConn::failure`].
    pub fn poll(&mut self, now: Instant) -> Option<Event> {
        let event = self.conn.poll()?;
        match &event {
            Event::Connected => {
                self.handshake_deadline = None;
                self.handshake = Some(now.saturating_duration_since(self.started));
            }
            Event::ConnectionLost { reason } if self.failure.is_none() => {
                self.failure = Some(QuicFailure::from_quinn(reason));
            }
            _ => {}
        }
        Some(event)
    }

    /// Ends the connection with `failure` (the first reason is kept), telling the server
    /// with a CONNECTION_CLOSE whose HTTP/3 error code is `code` ([`QuicConn::flush`] sends
    /// it).
    pub fn close(&mut self, now: Instant, code: u64, failure: QuicFailure) {
        if self.failure.is_none() {
            self.failure = Some(failure);
        }
        if !self.conn.is_closed() {
            let code = VarInt::from_u64(code).unwrap_or(VarInt::from_u32(0));
            self.conn.close(now, code, bytes::Bytes::new());
        }
    }

    fn fail(&mut self, now: Instant, failure: QuicFailure) {
        // H3_INTERNAL_ERROR: nothing the server did wrong that herd can name.
        self.close(now, herd_proto::h3::code::H3_INTERNAL_ERROR, failure);
    }

    /// True once the connection is closed (by either side, or by a failure).
    pub fn is_closed(&self) -> bool {
        self.conn.is_closed() || self.failure.is_some()
    }

    /// Hands quinn's endpoint events (new connection IDs, retirements, the end) to the
    /// endpoint, and its answers back.
    fn pump_endpoint(&mut self, _now: Instant) {
        while let Some(event) = self.conn.poll_endpoint_events() {
            if let Some(answer) = self.endpoint.handle_event(self.handle, event) {
                self.conn.handle_event(answer);
            }
        }
    }

    pub fn stats(&self) -> QuicStats {
        let s = self.conn.stats();
        let recv_calls = self.io.recv_calls;
        // quinn keeps no count of its RTT samples: it takes one from an ACK that newly
        // acknowledges the largest packet, and the first ACK frame received acknowledges the
        // client's first Initial (ack-eliciting, never acknowledged before). Without one,
        // its path figures are the initial guess (333 ms), not a measurement.
        let rtt =
            (s.frame_rx.acks > 0).then_some(QuicRtt { min: s.path.min_rtt, smoothed: s.path.rtt });
        QuicStats {
            rtt,
            packets_sent: s.path.sent_packets,
            packets_lost: s.path.lost_packets,
            datagrams_sent: s.udp_tx.datagrams,
            datagrams_received: s.udp_rx.datagrams,
            bytes_sent: s.udp_tx.bytes,
            bytes_received: s.udp_rx.bytes,
            send_calls: self.io.send_calls,
            recv_calls,
            datagrams_per_recv: if recv_calls == 0 {
                0.0
            } else {
                self.io.datagrams_in as f64 / recv_calls as f64
            },
            gro_messages: self.io.gro_messages,
            truncated: self.io.truncated,
            gso: self.socket.gso(),
            gro: self.socket.gro(),
            congestion_window: s.path.cwnd,
            congestion_events: s.path.congestion_events,
            mtu: s.path.current_mtu,
            handshake: self.handshake,
        }
    }
}
