//! Integration tests of herd serve on real sockets: each test binds 127.0.0.1:0, talks raw HTTP
//! over std's TcpStream (with timeouts, so a bug fails a test instead of hanging the suite) and
//! checks status, headers and bytes. One test binary, one module per area. They do not measure
//! speed (bench/ does).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod counters;
mod delays;
mod echo;
mod generated;
mod h2;
mod h2_client;
mod h2_hostile;
mod h2_tls;
mod harness;
mod io_backend;
mod lifecycle;
mod limits;
mod nginx;
mod pages;
mod preconditions;
mod protocol;
mod redirects;
mod socket_options;
mod static_files;
mod tls;
mod tools;
mod traversal;
