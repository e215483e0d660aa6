//! Binding, stopping, idle and slow clients, and many clients at once.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use herd_serve::{ServeError, Server, StopHandle};

use crate::harness::{config, Client, TempDir, TestServer};

#[test]
fn port_zero_is_resolved_at_bind() {
    let server = Server::bind(config(None)).unwrap();
    assert_eq!(server.local_addr().ip().to_string(), "127.0.0.1");
    assert_ne!(server.local_addr().port(), 0);
    assert_eq!(server.n_workers(), 2);
}

#[test]
fn a_port_in_use_is_reported() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut cfg = config(None);
    cfg.listen = taken.local_addr().unwrap();
    assert!(
        matches!(Server::bind(cfg), Err(ServeError::AddrInUse { addr }) if addr == taken.local_addr().unwrap())
    );
}

#[test]
fn a_second_herd_serve_on_the_same_port_is_refused() {
    // SO_REUSEPORT would let it in silently; the probe bind must catch it.
    let first = Server::bind(config(None)).unwrap();
    let mut cfg = config(None);
    cfg.listen = first.local_addr();
    assert!(matches!(Server::bind(cfg), Err(ServeError::AddrInUse { .. })));
}

#[test]
fn root_problems_are_reported() {
    let dir = TempDir::new();
    let missing = dir.path().join("missing");
    assert!(
        matches!(Server::bind(config(Some(&missing))), Err(ServeError::RootMissing { path }) if path == missing)
    );
    let file = dir.write("file", b"x");
    assert!(matches!(Server::bind(config(Some(&file))), Err(ServeError::RootNotDirectory { .. })));
    let mut cfg = config(None);
    cfg.max_head_bytes = 10;
    assert!(matches!(
        Server::bind(cfg),
        Err(ServeError::InvalidConfig { name: "max_head_bytes", .. })
    ));
}

#[test]
fn stop_returns_promptly_with_open_connections() {
    let server = TestServer::start(None);
    let mut idle = server.client();
    idle.send(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n");
    idle.response(false);
    let _half = {
        let mut c = server.client();
        c.send(b"GET /bytes/1 HTTP/1.1\r\n");
        c
    };
    let started = Instant::now();
    let stats = server.stop();
    assert!(started.elapsed() < Duration::from_secs(1), "stop took {:?}", started.elapsed());
    assert_eq!(stats.n_requests, 1);
    // The server closed the idle connection on its way out.
    assert!(idle.is_closed());
}

#[test]
fn a_stopped_handle_makes_run_return_at_once() {
    let server = Server::bind(config(None)).unwrap();
    let stop = StopHandle::new();
    stop.stop();
    let started = Instant::now();
    let stats = server.run(stop).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(stats.n_connections, 0);
}

#[test]
fn a_slow_client_does_not_block_others() {
    // One worker, so both clients share its event loop.
    let mut cfg = config(None);
    cfg.threads = 1;
    let server = TestServer::start_with(cfg);
    let mut slow = server.client();
    slow.send(b"G");
    let started = Instant::now();
    for _ in 0..3 {
        assert_eq!(server.get("/bytes/2").body, b"01");
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    // The slow client is still served when it finishes.
    slow.send(b"ET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(slow.response(false).body, b"012");
}

#[test]
fn a_client_that_does_not_read_does_not_block_others() {
    let mut cfg = config(None);
    cfg.threads = 1;
    let server = TestServer::start_with(cfg);
    let mut stuck = server.client();
    // 64 MiB it never reads: the server's writes block on this socket only.
    stuck.send(b"GET /bytes/67108864 HTTP/1.1\r\nHost: t\r\n\r\n");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(server.get("/bytes/2").body, b"01");
}

#[test]
fn idle_connections_are_closed() {
    let mut cfg = config(None);
    cfg.idle_timeout = Duration::from_millis(200);
    let server = TestServer::start_with(cfg);
    let mut c = server.client();
    c.send(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n");
    c.response(false);
    let started = Instant::now();
    assert!(c.is_closed());
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(150) && waited < Duration::from_secs(2), "{waited:?}");
}

#[test]
fn a_head_dribbled_line_by_line_is_cut_off() {
    // Bytes of an unfinished head are not progress: a slowloris client is closed after the
    // idle timeout however steadily it sends.
    let mut cfg = config(None);
    cfg.idle_timeout = Duration::from_millis(200);
    let server = TestServer::start_with(cfg);
    let mut c = server.client();
    c.send(b"GET / HTTP/1.1\r\n");
    let deadline = Instant::now() + Duration::from_millis(600);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        if c.try_send(b"X-A: b\r\n").is_err() {
            return; // the server closed the connection
        }
    }
    assert!(c.is_closed(), "the dribbling client was not closed");
}

#[test]
fn many_clients_on_many_workers() {
    let mut cfg = config(None);
    cfg.threads = 4;
    let server = TestServer::start_with(cfg);
    let addr = server.addr();
    let clients: Vec<_> = (0..16)
        .map(|i| {
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                for j in 0..20 {
                    let n = (i * 20 + j) % 300;
                    c.send(format!("GET /bytes/{n} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
                    assert_eq!(c.response(false).body.len(), n);
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    let stats = server.stop();
    assert_eq!(stats.n_requests, 320);
    assert_eq!(stats.n_connections, 16);
}
