//! What a QUIC connection did, h2load's QUIC rows and a few of herd's own: RTT, packets,
//! datagrams, and how well the kernel's batching worked.

use std::time::Duration;

/// One connection's QUIC figures, as [`super::QuicConn::stats`] reads them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QuicStats {
    /// The round-trip times measured; None before the first ACK from the server (no sample:
    /// quinn's figures are then its initial guess, 333 ms, which herd never reports).
    pub rtt: Option<QuicRtt>,
    pub packets_sent: u64,
    pub packets_lost: u64,
    /// UDP datagrams and their payload bytes (quinn counts a datagram once, whatever
    /// number of QUIC packets it coalesces; after the handshake that is one).
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Send and receive system calls (`sendmsg`/`sendmmsg`, `recvmmsg`) that moved data.
    pub send_calls: u64,
    pub recv_calls: u64,
    /// Datagrams received per receive call: above 1 when GRO or `recvmmsg` batched them.
    pub datagrams_per_recv: f64,
    /// Received messages GRO had coalesced from several datagrams.
    pub gro_messages: u64,
    /// Datagrams dropped for being larger than herd's receive slot.
    pub truncated: u64,
    /// The offloads in use at the end (GSO turns itself off on a device without it).
    pub gso: bool,
    pub gro: bool,
    pub congestion_window: u64,
    pub congestion_events: u64,
    /// The datagram size the path has been found to carry.
    pub mtu: u16,
    /// From the connection's start to the handshake's end, when it ended.
    pub handshake: Option<Duration>,
}

/// A connection's measured round-trip times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuicRtt {
    /// The lowest RTT seen (ACK delay left out).
    pub min: Duration,
    /// The smoothed RTT estimate.
    pub smoothed: Duration,
}

/// The driver's own I/O counters (quinn does not see system calls).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct IoCounters {
    pub(super) send_calls: u64,
    pub(super) recv_calls: u64,
    pub(super) datagrams_in: u64,
    pub(super) gro_messages: u64,
    pub(super) truncated: u64,
}
