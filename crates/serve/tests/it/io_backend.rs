//! `--io`: which backend the workers turn, and that the io_uring one serves what epoll does
//! (the whole suite also runs with `HERD_AUTO_IO=uring` in the test command's io_uring pass;
//! these tests name the backend themselves, so they check it in either pass).

use herd_serve::{
    AppProtocol, Backend, IoChoice, ServeConfig, ServeError, Server, TlsConfig, TlsIdentity,
};

use crate::harness::{config, TestServer};

fn on(io: IoChoice) -> ServeConfig {
    ServeConfig { threads: 1, io, ..config(None) }
}

#[test]
fn epoll_asked_is_epoll() {
    let server = Server::bind(on(IoChoice::Epoll)).unwrap();
    assert_eq!(server.io().backend, Backend::Epoll);
    assert_eq!(server.io().to_string(), "epoll");
}

/// On a kernel that refuses io_uring the refusal is what is checked: its reason, and that
/// nothing was served on epoll instead.
#[test]
fn uring_asked_serves_keep_alive_pipelined_large_and_closing_or_is_refused_saying_why() {
    let server = match Server::bind(on(IoChoice::Uring)) {
        Ok(server) => server,
        Err(e @ ServeError::IoUringRefused { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("io_uring is refused here") && text.contains("--io epoll"),
                "{text}"
            );
            return;
        }
        Err(e) => panic!("--io uring: {e}"),
    };
    assert_eq!(server.io().backend, Backend::Uring);
    assert_eq!(server.io().to_string(), "io_uring");
    drop(server);
    let server = TestServer::start_with(on(IoChoice::Uring));
    let mut c = server.client();
    for _ in 0..3 {
        c.send(b"GET /bytes/6397 HTTP/1.1\r\nHost: t\r\n\r\n");
        let r = c.response(false);
        assert_eq!((r.status, r.body.len()), (200, 6397));
    }
    // Three requests in one write: answered in order.
    c.send(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\nGET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\nGET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n");
    for want in [&b"0"[..], b"01", b"012"] {
        assert_eq!(c.response(false).body, want);
    }
    // Larger than the ring's high-water mark, many times over: sent whole, in order.
    c.send(b"GET /bytes/3000000 HTTP/1.1\r\nHost: t\r\n\r\n");
    let big = c.response(false);
    assert_eq!(big.body.len(), 3_000_000);
    let pattern = herd_fileset::GENERATED_PATTERN;
    assert!(big.body.iter().enumerate().all(|(i, b)| *b == pattern[i % pattern.len()]));
    // The response before a close arrives whole, then the close.
    c.send(b"GET /9x9 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assert_eq!(c.response(false).body.len(), 1692);
    assert!(c.is_closed());
    let stats = server.stop();
    assert_eq!(stats.n_requests, 8);
    assert_eq!(stats.n_connections, 1);
}

#[test]
fn uring_with_tls_is_refused_and_auto_with_tls_says_why_it_stays_on_epoll() {
    let tls = || {
        Some(TlsConfig {
            identity: TlsIdentity::SelfSigned { write_ca: None },
            alpn: AppProtocol::ALL.to_vec(),
        })
    };
    let refused = Server::bind(ServeConfig { tls: tls(), ..on(IoChoice::Uring) }).unwrap_err();
    assert!(matches!(refused, ServeError::IoUringTls), "{refused}");
    assert!(refused.to_string().contains("plain TCP only"), "{refused}");
    let auto = Server::bind(ServeConfig { tls: tls(), ..on(IoChoice::Auto) }).unwrap();
    assert_eq!(auto.io().backend, Backend::Epoll);
    assert_eq!(auto.io().to_string(), "epoll (auto: herd serve's io_uring carries plain TCP only)");
}
