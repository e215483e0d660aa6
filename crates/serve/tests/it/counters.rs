//! `/herd/stats`: the server's counts agree exactly with what a client sent and received,
//! by route, by status and in bytes.

use crate::harness::TestServer;

fn json(server: &TestServer) -> serde_json::Value {
    let r = server.get("/herd/stats");
    assert_eq!(r.header("Content-Type"), Some("application/json"));
    serde_json::from_slice(&r.body).expect("valid JSON")
}

#[test]
fn stats_agree_with_the_client() {
    let server = TestServer::start(None);
    let mut c = server.client();
    let mut received = 0u64;
    let mut send = |c: &mut crate::harness::Client, req: &str, n: usize| {
        for _ in 0..n {
            c.send(req.as_bytes());
            let before = c.bytes_read();
            let _ = c.response(false);
            received += c.bytes_read() - before;
        }
    };
    send(&mut c, "GET /9x9 HTTP/1.1\r\nHost: t\r\n\r\n", 10);
    send(&mut c, "GET /bytes/100 HTTP/1.1\r\nHost: t\r\n\r\n", 5);
    send(&mut c, "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n", 3);
    send(&mut c, "GET /status/503 HTTP/1.1\r\nHost: t\r\n\r\n", 2);
    send(&mut c, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc", 4);
    send(&mut c, "GET /cpu HTTP/1.1\r\nHost: t\r\n\r\n", 1);
    // A malformed request: 400, unrouted, and the connection closes.
    c.send(b"GET / HTTP/9.9\r\n\r\n");
    let before = c.bytes_read();
    let bad = c.response(false);
    assert_eq!(bad.status, 400);
    let _ = c.read_all();
    received += c.bytes_read() - before;

    let s = json(&server);
    assert_eq!(s["connections"], 2, "{s}"); // this test's client and the stats request's
    assert_eq!(s["requests"], 26, "{s}");
    assert_eq!(s["bad_requests"], 2, "{s}"); // /cpu without n, and the malformed one
    assert_eq!(s["bytes_written"], received, "{s}");
    let routes = &s["routes"];
    for (route, n) in [
        ("/9x9", 10),
        ("/bytes", 5),
        ("static", 3),
        ("/status", 2),
        ("/echo", 4),
        ("/cpu", 1),
        ("unrouted", 1),
        ("/herd/stats", 0),
        ("/sleep", 0),
    ] {
        assert_eq!(routes[route], n, "route {route}: {s}");
    }
    let status = &s["status"];
    assert_eq!(
        (&status["200"], &status["404"], &status["503"], &status["400"]),
        (&19.into(), &3.into(), &2.into(), &2.into()),
        "{s}"
    );
    assert_eq!(s["responses"]["2xx"], 19);

    // The stats request itself is counted in the next snapshot, and in the final counters.
    let stats = server.stop();
    assert_eq!(stats.n_requests, 27);
    assert_eq!(stats.by_route["/herd/stats"], 1);
}

#[test]
fn stats_body_is_read_whole() {
    // The JSON is not truncated at any size of counters.
    let server = TestServer::start(None);
    for code in 200..260 {
        server.get(&format!("/status/{code}"));
    }
    let mut c = server.client();
    c.send(b"GET /herd/stats HTTP/1.0\r\n\r\n");
    let text = String::from_utf8(c.read_all()).unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap();
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["status"].as_object().unwrap().len(), 60);
}
