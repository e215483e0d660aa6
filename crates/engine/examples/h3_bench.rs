//! Micro-benchmark of the QUIC driver (not wired into herd run yet): one HTTP/3 connection
//! from this thread to a local server, N requests for a 13-byte file at m streams, and the
//! client's CPU time per request (this thread's, from getrusage), with the kernel's UDP
//! offloads (GSO/GRO) on and off. The servers are started as the tests start them
//! (tests/quic_util): Debian's ngtcp2 example server and caddy.
//!
//! ```sh
//! cargo run --release -p herd-engine --example h3_bench            # both servers
//! cargo run --release -p herd-engine --example h3_bench -- ngtcp2 20000
//! cargo run --release -p herd-engine --example h3_bench -- ngtcp2 trace [HOLD_MS]
//! ```
//!
//! `trace` sends three requests on a fresh connection and prints each one's time to first
//! byte: the first request's delay on ngtcp2-server (BENCHMARKS.md) shows there, and
//! holding the first request HOLD ms after the handshake shows it belongs to the time
//! since the handshake, not to the request.
//!
//! A benchmark, not a test: it prints figures and judges nothing. The machine is shared;
//! run it a few times and read the ratios.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/quic_util/mod.rs"]
mod quic_util;

use std::time::Duration;

use herd_engine::quic::Offload;
use quic_util::{run, Plan, Server, SMALL};

fn thread_cpu() -> Duration {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rusage to fill for this thread.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map(String::as_str).unwrap_or("all");
    let base: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(20_000);
    if args.get(1).map(String::as_str) == Some("trace") {
        // One connection, three requests one after the other (the first held HOLD ms after
        // the handshake), between two markers that
        // `strace -tt -e trace=write,sendmsg,sendmmsg,recvmmsg` shows.
        let server = if which == "caddy" { Server::caddy() } else { Server::ngtcp2() };
        let hold = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(0);
        let plan = Plan {
            requests: 3,
            streams: 1,
            hold_first: Duration::from_millis(hold),
            ..Plan::new(&server, "/small.txt")
        };
        eprintln!("MARK start");
        let out = run(server.addr, &plan);
        eprintln!("MARK end");
        println!(
            "handshake {:?} first bytes {:?} latencies {:?}",
            out.handshake, out.first_byte, out.latency
        );
        return;
    }
    let mut servers = Vec::new();
    if which == "all" || which == "ngtcp2" {
        servers.push(Server::ngtcp2());
    }
    if which == "all" || which == "caddy" {
        servers.push(Server::caddy());
    }
    println!(
        "{:<7} {:>4} {:<8} {:>7} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}",
        "server",
        "-m",
        "offload",
        "reqs",
        "req/s",
        "cpu/req",
        "dgr-in",
        "dgr-out",
        "per-recv",
        "handshake",
        "1st-ttfb",
        "2nd-ttfb"
    );
    let big = quic_util::large();
    for server in &servers {
        // Bulk: 200 KB bodies (about 140 datagrams each), where GRO has something to merge.
        for (name, offload) in
            [("gso+gro", Offload::default()), ("none", Offload { gso: false, gro: false })]
        {
            let requests = (base / 40).max(1);
            let plan = Plan {
                requests,
                streams: 4,
                limit: Duration::from_secs(120),
                ..Plan::new(server, "/large.bin")
            }
            .offload(offload);
            let cpu = thread_cpu();
            let out = run(server.addr, &plan);
            let cpu = thread_cpu() - cpu;
            assert!(out.failures.is_empty() && out.closed.is_none(), "{out:?}");
            assert_eq!(out.body_bytes, (big.len() * requests) as u64);
            let s = out.stats;
            println!(
                "{:<7} bulk {:<8} {:>7} {:>7.0} MB/s {:>6.2}µs/datagram in, {:>6.0}µs/request, {:.2} datagrams a receive",
                server.name,
                name,
                requests,
                out.body_bytes as f64 / out.elapsed.as_secs_f64() / 1e6,
                cpu.as_secs_f64() * 1e6 / s.datagrams_received as f64,
                cpu.as_secs_f64() * 1e6 / requests as f64,
                s.datagrams_per_recv,
            );
        }
        for streams in [1, 10, 100] {
            for (name, offload) in
                [("gso+gro", Offload::default()), ("none", Offload { gso: false, gro: false })]
            {
                let requests = if streams == 1 { base } else { base * 5 / 2 };
                // Bodies are counted, not gathered: the tests check them byte for byte.
                let plan = Plan {
                    requests,
                    streams,
                    limit: Duration::from_secs(120),
                    ..Plan::new(server, "/small.txt")
                }
                .offload(offload);
                let cpu = thread_cpu();
                let out = run(server.addr, &plan);
                let cpu = thread_cpu() - cpu;
                assert!(out.failures.is_empty() && out.closed.is_none(), "{out:?}");
                assert_eq!(out.ok, requests);
                assert_eq!(out.body_bytes, (SMALL.len() * requests) as u64);
                let s = out.stats;
                let n = requests as f64;
                println!(
                    "{:<7} {:>4} {:<8} {:>7} {:>9.0} {:>7.2}µs {:>8.3} {:>8.3} {:>8.2} {:>7.2}ms {:>7.2}ms {:>7.2}ms",
                    server.name,
                    streams,
                    name,
                    requests,
                    n / out.elapsed.as_secs_f64(),
                    cpu.as_secs_f64() * 1e6 / n,
                    s.datagrams_received as f64 / n,
                    s.datagrams_sent as f64 / n,
                    s.datagrams_per_recv,
                    out.handshake.unwrap_or_default().as_secs_f64() * 1e3,
                    out.first_byte[0].as_secs_f64() * 1e3,
                    out.first_byte.get(1).copied().unwrap_or_default().as_secs_f64() * 1e3,
                );
            }
        }
    }
}
