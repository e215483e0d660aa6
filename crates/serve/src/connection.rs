//! What a worker's slot holds: a connection that speaks HTTP/1 (conn.rs), which every accepted
//! connection starts as, or HTTP/2 (h2/), which it becomes when it turns out to be one. The
//! worker drives either through the same few calls; the `match` costs HTTP/1 a branch.

use std::time::{Duration, Instant};

use crate::conn::{Conn, Drive};
use crate::h2::H2Conn;
use crate::worker::Ctx;

// HTTP/1 connections are the common case and stay inline: boxing them would cost an
// allocation per connection, which connection-per-request traffic pays for every request.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Connection {
    Http1(Conn),
    Http2(Box<H2Conn>),
}

impl Connection {
    pub(crate) fn readable_event(&mut self, closed_or_error: bool) {
        match self {
            Connection::Http1(c) => c.readable_event(closed_or_error),
            Connection::Http2(c) => c.readable_event(closed_or_error),
        }
    }

    /// The ring's stream under the connection, if it runs on an io_uring worker.
    pub(crate) fn ring_stream(&mut self) -> Option<&mut crate::transport::RingStream> {
        match self {
            Connection::Http1(c) => c.ring_stream(),
            Connection::Http2(c) => c.ring_stream(),
        }
    }

    /// The connection's transport, to close it through the ring.
    pub(crate) fn into_transport(self) -> crate::transport::Transport {
        match self {
            Connection::Http1(c) => c.into_transport(),
            Connection::Http2(c) => c.into_transport(),
        }
    }

    pub(crate) fn deadline(&self, idle_timeout: Duration) -> Instant {
        match self {
            Connection::Http1(c) => c.deadline(idle_timeout),
            Connection::Http2(c) => c.deadline(idle_timeout),
        }
    }

    pub(crate) fn drive(&mut self, ctx: &mut Ctx<'_>) -> Drive {
        match self {
            Connection::Http1(c) => c.drive(ctx),
            Connection::Http2(c) => c.drive(ctx),
        }
    }

    /// The server is stopping: whether the connection may finish what it started (HTTP/2:
    /// GOAWAY, then its open streams) rather than be closed now (HTTP/1).
    pub(crate) fn go_away(&mut self) -> bool {
        match self {
            Connection::Http1(_) => false,
            Connection::Http2(c) => {
                c.go_away();
                true
            }
        }
    }

    /// Whether all that is left is waiting for the client to close (a stopping server need
    /// not wait for that).
    pub(crate) fn only_lingering(&self) -> bool {
        match self {
            Connection::Http1(_) => false,
            Connection::Http2(c) => c.only_lingering(),
        }
    }
}
