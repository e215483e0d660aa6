//! herd's built-in reference HTTP/1.x and HTTP/2 server, the target behind `herd serve`, the
//! quick start and the tests.
//!
//! # Brief overview
//!
//! [`Server::bind`] takes a [`ServeConfig`] and binds one listening socket per worker thread, so
//! the caller can read [`Server::local_addr`] at once (also with port 0). [`Server::run`] blocks,
//! serving HTTP/1.0 and 1.1 with keep-alive and pipelining, and HTTP/2 (with prior knowledge,
//! on the same port), over TCP or TLS ([`TlsConfig`]: PEM files or a certificate made at
//! start-up, ALPN), until a [`StopHandle`] is stopped,
//! then returns the exact per-worker counters merged into [`ServeStats`]. Start-up failures are
//! [`ServeError`]s; per-request failures are answered (400, 404, 414, 431, …) and counted, never
//! returned.
//!
//! What it serves: static files under `root` (GET and HEAD, conditional requests, one byte range,
//! `index.html` for directories, a directory asked without its slash redirected to it),
//! `/bytes/N` (N deterministic bytes, see [`herd_fileset::GENERATED_PATTERN`]), the computed
//! pages of the seeds (`/9x9`, `/include`) and of the tests (`/cpu`, `/sleep`, `/stall`,
//! `/status/N`, `/echo`), and `/herd/stats` (the counters as JSON). docs/serve.md is the user's
//! reference for every endpoint.
//!
//! # Module map
//!
//! - `config`, `error`, `stop`, `server`: the public surface above.
//! - `listener`: the per-worker `SO_REUSEPORT` sockets; `worker`: one event loop per thread,
//!   on epoll (mio) or, `io_backend` choosing, on io_uring (`worker/ring_loop`, each
//!   connection's bytes in a `ring_stream`);
//!   `conn`: one HTTP/1 connection's read → answer → write state machine, which every
//!   connection starts as; `h2/`: the HTTP/2 one it becomes when its first bytes are the
//!   preface; `connection`: either, as a worker holds them; `transport`: TCP or TLS under
//!   them; `tls`: the rustls server configuration (PEM files, or `tls/self_signed`).
//! - `read_buf` finds request heads and enforces size limits; `request` parses them;
//!   `request_body` reads bodies (Content-Length or chunked; skipped or echoed); `route` names
//!   the routes and `router` picks the handler; `static_files`, `generated`, `pages/` and
//!   `stats` answer (`static_files` with `preconditions` for the conditional headers and
//!   `redirect` for directories asked without their slash); `response` writes heads and error
//!   pages; `write_queue` sends them (`send`,
//!   `sendfile`) and holds back a delayed response until the worker's timer releases it.
//! - `path` (target → safe relative path), `root` (opening files that cannot escape the root),
//!   `file_cache` (a worker's open files, revalidated by one `statat` per request),
//!   `range`, `date` (formatting dates), `http_date` (reading them, in all three forms),
//!   `mime`, `access_log`, `sys` (raw system calls).
//!
//! Not here: HTTP/2 server push, HTTP/3, directory listings, compression, multiple ranges. Nor
//! the file sets of `herd serve --generate`, the bytes of `/bytes/N`, `/9x9` and `/include`, or
//! those pages' expected bodies: they are herd-fileset's, which the server sends from, so that
//! the client and the lab can use them without linking the server.

mod access_log;
mod config;
mod conn;
mod connection;
mod date;
mod error;
mod file_cache;
pub mod fuzzing;
mod generated;
mod h2;
mod http_date;
mod io_backend;
mod listener;
mod mime;
mod pages;
mod path;
mod preconditions;
mod range;
mod read_buf;
mod redirect;
mod request;
mod request_body;
mod response;
mod ring_stream;
mod root;
mod route;
mod router;
mod server;
mod static_files;
mod stats;
mod stop;
mod sys;
mod tls;
mod transport;
mod worker;
mod write_queue;

pub use config::{AppProtocol, IoChoice, ServeConfig, TlsConfig, TlsIdentity, UnknownAppProtocol};
pub use error::ServeError;
pub use generated::MAX_GENERATED_BYTES;
pub use herd_uring::choice::{Backend, BadIoChoice, Resolved};
pub use server::Server;
pub use stats::ServeStats;
pub use stop::StopHandle;

/// What `--io auto` settles on here for a plain listener (`tls` false) or a TLS one, and
/// why: the line `herd doctor` shows, by the rules a starting server follows.
pub fn io_auto_takes(tls: bool) -> Result<Resolved, ServeError> {
    io_backend::resolve(IoChoice::Auto, tls)
}
