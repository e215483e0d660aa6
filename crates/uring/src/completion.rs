//! What the ring hands its caller for each completion ([`Completion`]), and how a ring entry
//! names whose it is: the operation, the token (the caller's connection index) and the
//! token's generation, packed in the entry's 64-bit `user_data`. The generation is what
//! lets a token be closed and reused at once: completions of the old connection still
//! arrive after the close, carry the old generation, and are dropped (their buffers given
//! back) instead of reaching the caller as the new connection's.

use std::io;

/// One completion, for the connection `token`.
#[derive(Debug)]
pub struct Completion<'a> {
    pub token: u32,
    pub event: Event<'a>,
}

/// What happened.
#[derive(Debug)]
pub enum Event<'a> {
    /// Bytes received, in order; the buffer goes back to the ring when the callback returns.
    Received(&'a [u8]),
    /// The receive ended: `None` at the end of the stream (the peer's FIN, after all its
    /// data), else the error. Reported once; the receive is not re-armed.
    RecvEnded(Option<io::Error>),
    /// Everything sent on the token so far went out.
    Sent,
    /// A send failed; what was queued and not sent is dropped.
    SendFailed(io::Error),
    /// The connect finished.
    Connected(io::Result<()>),
    /// A polled socket is ready ([`super::Ops::poll_in`], [`super::Ops::poll_out`]): the
    /// `poll` events it reported (POLLERR for a poll that failed).
    Polled(u32),
}

/// The operation an entry carries, the top byte of its `user_data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Op {
    Recv = 1,
    Send = 2,
    Connect = 3,
    Close = 4,
    Cancel = 5,
    /// A watched descriptor became readable ([`super::Ops::watch`]): it only wakes the wait.
    Wake = 6,
    /// A token's socket polled, once, for reading or for writing.
    PollIn = 7,
    PollOut = 8,
}

/// Generations wrap at 24 bits: an old completion is mistaken for a new one only if its
/// token is reopened 16 million times while the old operation is still in flight.
pub(super) const GEN_MASK: u32 = (1 << 24) - 1;

/// `op` (8 bits), `generation` (24 bits), `token` (32 bits).
#[inline]
pub(super) fn user_data(op: Op, generation: u32, token: u32) -> u64 {
    (op as u64) << 56 | u64::from(generation & GEN_MASK) << 32 | u64::from(token)
}

/// The operation, generation and token of a `user_data`; None for one this ring never made.
#[inline]
pub(super) fn decode(user_data: u64) -> Option<(Op, u32, u32)> {
    let op = match (user_data >> 56) as u8 {
        1 => Op::Recv,
        2 => Op::Send,
        3 => Op::Connect,
        4 => Op::Close,
        5 => Op::Cancel,
        6 => Op::Wake,
        7 => Op::PollIn,
        8 => Op::PollOut,
        _ => return None,
    };
    Some((op, (user_data >> 32) as u32 & GEN_MASK, user_data as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_round_trips_and_generations_wrap() {
        for op in [
            Op::Recv,
            Op::Send,
            Op::Connect,
            Op::Close,
            Op::Cancel,
            Op::Wake,
            Op::PollIn,
            Op::PollOut,
        ] {
            for (generation, token) in [(0, 0), (1, u32::MAX), (GEN_MASK, 7)] {
                let ud = user_data(op, generation, token);
                assert_eq!(decode(ud), Some((op, generation, token)));
            }
        }
        assert_eq!(decode(user_data(Op::Send, GEN_MASK + 1, 3)), Some((Op::Send, 0, 3)));
        assert_eq!(decode(0), None);
        assert_eq!(decode(u64::MAX), None);
    }
}
