//! Pages that answer late without occupying the worker: `/sleep?ms=N` (every request waits N
//! ms) and `/stall?every=M&ms=N` (every M-th request to `/stall`, counted over the whole server,
//! waits N ms; the others answer at once), the fixture for coordinated-omission tests. The wait
//! is a hold on the connection's output (conn.rs, write_queue.rs): the response is computed now,
//! sent when the hold expires, and the connection reads no further request meanwhile, as a
//! server stuck in a slow handler would behave. Other connections are served as usual.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::pages::query;
use crate::response::{Reply, Responder, Status};

/// Longest wait a request can ask for: 10 minutes.
pub(crate) const MAX_MS: u64 = 600_000;

/// Answers `/sleep?<query>`.
pub(crate) fn sleep(query: &[u8], r: &mut Responder<'_>) -> Reply {
    let Ok(ms) = query::number(query, b"ms", 0, MAX_MS) else {
        return r.text(Status::BadRequest, "herd serve: /sleep needs ?ms=N, from 0 to 600000\n");
    };
    r.hold = Some(Duration::from_millis(ms));
    r.body(Status::Ok, b"text/plain", b"ok\n")
}

/// Answers `/stall?<query>`; `count` is the server's count of `/stall` requests.
pub(crate) fn stall(query: &[u8], count: &AtomicU64, r: &mut Responder<'_>) -> Reply {
    let every = query::number(query, b"every", 1, u64::from(u32::MAX));
    let ms = query::number(query, b"ms", 0, MAX_MS);
    let (Ok(every), Ok(ms)) = (every, ms) else {
        return r.text(
            Status::BadRequest,
            "herd serve: /stall needs ?every=M&ms=N: every M-th request (M >= 1) waits N ms \
             (0 to 600000)\n",
        );
    };
    let nth = count.fetch_add(1, Ordering::Relaxed) + 1;
    if nth % every == 0 {
        r.hold = Some(Duration::from_millis(ms));
    }
    // The same body either way: a client that checks lengths (ab) must not see a difference.
    r.body(Status::Ok, b"text/plain", b"ok\n")
}
