//! A worker's buffers for QUIC I/O, shared by all of its connections: the receive pool
//! datagrams are carved from, and the buffer transmits are built in. Per connection they
//! would cost 64 KiB and more each; a worker handles one connection at a time, and nothing
//! in them outlives the call that filled them (a received datagram's bytes may, inside
//! quinn, until their stream is read: the pool is then not reclaimed, and the next receive
//! takes a fresh buffer, freed when quinn lets go of the old one).

use bytes::BytesMut;

/// Room for one GSO transmit: the kernel's 64 KiB.
const SEND: usize = 64 * 1024;

pub struct IoBuffers {
    pub(super) pool: BytesMut,
    pub(super) datagrams: Vec<BytesMut>,
    pub(super) send: Vec<u8>,
    /// Without GSO: one buffer per datagram of a `sendmmsg` batch (quinn builds each
    /// transmit from the start of its buffer).
    pub(super) sends: Vec<Vec<u8>>,
    /// For quinn's replies to datagrams of no connection (stateless resets); dropped.
    pub(super) scratch: Vec<u8>,
}

impl IoBuffers {
    pub fn new() -> IoBuffers {
        IoBuffers {
            // Grown by the first receive to what a batch needs (512 KiB with GRO).
            pool: BytesMut::new(),
            datagrams: Vec::with_capacity(64),
            send: Vec::with_capacity(SEND),
            sends: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

impl Default for IoBuffers {
    fn default() -> Self {
        IoBuffers::new()
    }
}
