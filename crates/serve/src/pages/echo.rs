//! `/echo`: answers 200 with the request's body, its Content-Type (default
//! `application/octet-stream`) and, for a body sent with Content-Length, the same length. A
//! chunked request body is echoed chunked: its length is not known until it ends, and the
//! response starts before then. Only the head is written here; the body streams from the
//! request to the response as it arrives (request_body.rs, conn.rs), so any size is echoed with
//! bounded memory and a client that sends without reading is throttled by its own window.

use crate::request::{BodyFraming, RequestHead};
use crate::request_body::Sink;
use crate::response::{Reply, Responder, Status};

/// Answers `/echo` (GET, HEAD, POST, PUT).
pub(crate) fn serve(req: &RequestHead<'_>, r: &mut Responder<'_>) -> Reply {
    let content_type = req.content_type.unwrap_or(b"application/octet-stream");
    let mut head = r.head(Status::Ok);
    head.header("Content-Type", content_type).header("Cache-Control", b"no-store");
    let (length, sink) = match req.body {
        BodyFraming::None => {
            head.header_u64("Content-Length", 0);
            (0, Sink::Discard)
        }
        BodyFraming::Length(n) => {
            head.header_u64("Content-Length", n);
            (n, Sink::Echo)
        }
        BodyFraming::Chunked => {
            // The access log and counters get 0 for the body: its size is not known yet.
            head.header("Transfer-Encoding", b"chunked");
            (0, Sink::EchoChunked)
        }
    };
    head.finish();
    if r.head_only {
        return Reply { status: Status::Ok, body_bytes: 0 };
    }
    r.body_sink = sink;
    Reply { status: Status::Ok, body_bytes: length }
}
