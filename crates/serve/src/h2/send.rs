//! DATA: the response bodies of the open streams in frames of at most the client's
//! SETTINGS_MAX_FRAME_SIZE, each within both the stream's and the connection's send window
//! (RFC 9113 §6.9), taken round-robin one frame per stream so that a large body does not hold
//! back the small ones behind it, until the output reaches its high-water mark. Bodies come from
//! the stream's buffer, then from a file (`pread` into the frame) or the generated pattern.
//!
//! And the other direction's credit: request bytes consumed (dropped at once, or an echo's once
//! sent) are given back with WINDOW_UPDATE when half a window has been used, so a client that
//! uploads is neither stalled nor sent a WINDOW_UPDATE per frame.

use std::os::unix::fs::FileExt;

use herd_fileset::pattern;
use herd_proto::h2::{encode, ErrorCode, FRAME_HEADER_LEN};

use super::conn::{to_u32, H2Conn, Phase, HIGH_WATER};
use super::stream::{Recv, Send};
use super::{CONNECTION_WINDOW, INITIAL_WINDOW_SIZE};
use crate::request_body::Sink;
use crate::worker::Ctx;
use crate::write_queue::Body;

impl H2Conn {
    /// Queues DATA frames while the windows and the output allow.
    pub(super) fn pump(&mut self, ctx: &mut Ctx<'_>) {
        if self.phase == Phase::Closing || self.streams.is_empty() {
            return;
        }
        let start = self.cursor % self.streams.len();
        self.cursor = self.cursor.wrapping_add(1);
        let mut sent = true;
        while sent && self.out_pending() < HIGH_WATER {
            sent = false;
            let n = self.streams.len();
            for k in 0..n {
                if self.out_pending() >= HIGH_WATER {
                    break;
                }
                // A reset while sending closes a stream and moves the last one to its place.
                let i = (start + k) % n;
                if i < self.streams.len() && self.send_frame(i) {
                    sent = true;
                }
            }
        }
        if sent {
            self.last_progress = ctx.now;
        }
    }

    /// Queues one DATA frame of the stream at `i`, if it has something it may send; returns
    /// whether it did.
    fn send_frame(&mut self, i: usize) -> bool {
        let max_frame = u64::from(self.peer_settings.max_frame_size);
        let conn_window = self.send_window;
        let s = self.streams.get_mut(i);
        if s.send != Send::Body {
            return false;
        }
        let buffered = (s.body.len() - s.body_pos) as u64;
        let streamed = match &s.streamed {
            Some(Body::File { remaining, .. } | Body::Generated { remaining, .. }) => *remaining,
            None => 0,
        };
        let available = buffered + streamed;
        if available == 0 {
            if s.body_open() {
                // An echo waiting for the request's next bytes.
                return false;
            }
            encode::data_header(&mut self.out, s.id, 0, true);
            s.send = Send::Done;
            return true;
        }
        let window = s.send_window.min(conn_window).max(0) as u64;
        let len = available.min(window).min(max_frame);
        if len == 0 {
            return false;
        }
        let end = len == available && !s.body_open();
        let frame_start = self.out.len();
        encode::data_header(&mut self.out, s.id, to_u32(len as usize), end);
        let from_buf = len.min(buffered) as usize;
        self.out.extend_from_slice(&s.body[s.body_pos..s.body_pos + from_buf]);
        s.body_pos += from_buf;
        let mut left = len - from_buf as u64;
        let mut failed = false;
        if left > 0 {
            match &mut s.streamed {
                Some(Body::Generated { pos, remaining }) => {
                    while left > 0 {
                        let chunk = pattern::slice(*pos, left);
                        self.out.extend_from_slice(chunk);
                        *pos += chunk.len() as u64;
                        *remaining -= chunk.len() as u64;
                        left -= chunk.len() as u64;
                    }
                }
                Some(Body::File { file, offset, remaining }) => {
                    let at = self.out.len();
                    self.out.resize(at + left as usize, 0);
                    match file.read_exact_at(&mut self.out[at..], *offset) {
                        Ok(()) => {
                            *offset += left;
                            *remaining -= left;
                        }
                        // The file shrank under us: the promised length cannot be kept.
                        Err(_) => failed = true,
                    }
                }
                None => failed = true,
            }
            if matches!(
                s.streamed,
                Some(Body::Generated { remaining: 0, .. } | Body::File { remaining: 0, .. })
            ) {
                s.streamed = None;
            }
        }
        let id = s.id;
        if failed {
            self.out.truncate(frame_start);
            self.reset(id, ErrorCode::INTERNAL_ERROR);
            return false;
        }
        debug_assert_eq!(self.out.len() - frame_start, FRAME_HEADER_LEN + len as usize);
        s.send_window -= len as i64;
        self.send_window -= len as i64;
        if end {
            s.send = Send::Done;
        }
        if s.body_pos == s.body.len() {
            s.compact_body();
        } else if s.body_pos > s.body.len() / 2 {
            // An echo's buffer keeps growing at its end: drop the sent front.
            s.body.drain(..s.body_pos);
            s.body_pos = 0;
        }
        if s.sink == Sink::Echo && s.echo_unsent > 0 {
            let echoed = s.echo_unsent.min(len);
            s.echo_unsent -= echoed;
            self.release(i, echoed);
        }
        true
    }

    /// `n` request bytes of the stream at `i` are consumed: credit them back to the client.
    pub(super) fn release(&mut self, i: usize, n: u64) {
        let s = self.streams.get_mut(i);
        if n > 0 && matches!(s.recv, Recv::Open { .. }) {
            s.recv_unacked = s.recv_unacked.saturating_add(to_u32(n as usize));
            if s.recv_unacked >= INITIAL_WINDOW_SIZE / 2 {
                encode::window_update(&mut self.out, s.id, s.recv_unacked);
                s.recv_window += i64::from(s.recv_unacked);
                s.recv_unacked = 0;
            }
        }
        self.release_connection(n);
    }

    /// `n` request bytes are consumed on the connection (of a stream, or of one since closed).
    pub(super) fn release_connection(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        self.recv_unacked = self.recv_unacked.saturating_add(to_u32(n as usize));
        if self.recv_unacked >= CONNECTION_WINDOW / 2 {
            encode::window_update(&mut self.out, 0, self.recv_unacked);
            self.recv_window += i64::from(self.recv_unacked);
            self.recv_unacked = 0;
        }
    }
}
