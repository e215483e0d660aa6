//! herd ab over TLS against nginx, side by side with the real ab: the TLS report lines,
//! `-f`, `-Z`, `-E` (client certificate) and `-I` (no SNI).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use util::{assert_same_report, herd, real_ab, run, text, Nginx};

fn both(args: &[&str]) -> (String, String) {
    let ab = run(real_ab().args(args));
    let h = run(herd().arg("ab").args(args));
    assert_eq!(
        ab.status.code(),
        h.status.code(),
        "ab: {}\nherd: {}",
        text(&ab.stderr),
        text(&h.stderr)
    );
    assert!(h.status.success(), "{}", text(&h.stderr));
    (text(&ab.stdout), text(&h.stdout))
}

fn line<'a>(out: &'a str, label: &str) -> Option<&'a str> {
    out.lines().find(|l| l.starts_with(label))
}

#[test]
fn https_report_matches_ab() {
    let nginx = Nginx::start_tls();
    let url = nginx.https_url("localhost", "/small.html");
    let (ab, h) = both(&["-n", "20", "-c", "2", &url]);
    assert_same_report(&ab, &h, "https");
    for label in ["SSL/TLS Protocol:", "Server Temp Key:", "TLS Server Name:"] {
        assert_eq!(line(&ab, label), line(&h, label), "{label}\n{ab}\n{h}");
    }
    assert_eq!(line(&h, "TLS Server Name:"), Some("TLS Server Name:        localhost"));
}

#[test]
fn https_keep_alive() {
    let nginx = Nginx::start_tls();
    let url = nginx.https_url("127.0.0.1", "/f6397.html");
    let (ab, h) = both(&["-k", "-n", "200", "-c", "4", &url]);
    assert_same_report(&ab, &h, "https -k");
    // No SNI for an IP address.
    assert_eq!(line(&h, "TLS Server Name:"), None);
}

#[test]
fn protocol_choice() {
    let nginx = Nginx::start_tls();
    let url = nginx.https_url("localhost", "/small.html");
    let (ab, h) = both(&["-f", "TLS1.2", "-n", "5", &url]);
    assert!(line(&h, "SSL/TLS Protocol:").unwrap().contains("TLSv1.2"), "{h}");
    assert_eq!(line(&ab, "SSL/TLS Protocol:"), line(&h, "SSL/TLS Protocol:"));
}

#[test]
fn cipher_suite_choice() {
    let nginx = Nginx::start_tls();
    let url = nginx.https_url("localhost", "/small.html");
    let (ab, h) = both(&["-f", "TLS1.2", "-Z", "ECDHE-ECDSA-AES128-GCM-SHA256", "-n", "5", &url]);
    assert!(
        line(&h, "SSL/TLS Protocol:").unwrap().contains("ECDHE-ECDSA-AES128-GCM-SHA256"),
        "{h}"
    );
    assert_eq!(line(&ab, "SSL/TLS Protocol:"), line(&h, "SSL/TLS Protocol:"));
}

#[test]
fn client_certificate() {
    let nginx = Nginx::start_tls();
    let url = nginx.https_url("localhost", "/private.html");
    std::fs::write(nginx.root.join("private.html"), "secret\n").unwrap();
    let pem = nginx.client_pem.clone().unwrap();
    let (ab, h) = both(&["-E", pem.to_str().unwrap(), "-n", "5", &url]);
    assert_same_report(&ab, &h, "-E");
    assert!(line(&h, "Non-2xx").is_none(), "{h}");
    let (_, h) = both(&["-n", "5", &url]);
    assert!(line(&h, "Non-2xx responses:      5").is_some(), "{h}");
}

#[test]
fn no_sni() {
    let nginx = Nginx::start_tls();
    let url = nginx.https_url("localhost", "/small.html");
    let (ab, h) = both(&["-I", "-n", "5", &url]);
    assert_eq!(line(&h, "TLS Server Name:"), None);
    assert_eq!(line(&ab, "TLS Server Name:"), line(&h, "TLS Server Name:"));
}
