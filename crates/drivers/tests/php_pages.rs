//! The PHP pages carry herd serve's bytes: the real php-cgi runs `9x9.php`, `include.php` and
//! `echo.php` from `herd_drivers::php_pages` in a temporary docroot, and the output must equal
//! herd serve's page byte for byte. No server is started.
//!
//! - `/9x9`: herd serve's own golden, crates/serve/tests/golden/9x9.html (1692 bytes).
//! - `/include`: tests/golden/herd-serve-include.html, produced from herd serve once, by hand,
//!   and checked here against the texts `herd_fileset::write_include_texts` writes and against
//!   the bytes of the renderer herd serve answers with (`herd_fileset::expected::include`), so
//!   a change to either shows:
//!
//!   ```text
//!   herd serve --generate DIR --sizes 1        # writes DIR/include/1.txt … 4.txt
//!   herd serve --root DIR --listen 127.0.0.1:PORT --threads 1 &
//!   curl -s http://127.0.0.1:PORT/include -o tests/golden/herd-serve-include.html
//!   ```
//!   (28106 bytes; sha256 7b1cd05e4c70893384b98546c98f9907d4ea892ae43764839d54c751645b8756.)
//! - `/echo`: the body sent, unchanged, whatever its bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

mod util;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use herd_drivers::{php_pages, Php, ServerKind};
use util::{located, tempdir};

fn php_cgi() -> PathBuf {
    located(ServerKind::Lighttpd, Some(Php::Cgi)).get("php-cgi").unwrap().to_owned()
}

/// A docroot with the three PHP pages and the include texts.
fn docroot() -> PathBuf {
    let dir = tempdir("php-pages");
    for (name, source) in php_pages::FILES {
        std::fs::write(dir.join(name), source).unwrap();
    }
    herd_fileset::write_include_texts(&dir).unwrap();
    dir
}

/// `php-cgi -q page`: the page's output without CGI headers.
fn run_quiet(page: &Path) -> Vec<u8> {
    let out = Command::new(php_cgi()).arg("-q").arg(page).env_clear().output().unwrap();
    assert!(out.status.success(), "{}: {}", page.display(), String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}: {}", page.display(), String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// POSTs `body` to `page` as a web server's CGI would; returns (headers, body).
fn post(page: &Path, body: &[u8], content_type: Option<&str>) -> (String, Vec<u8>) {
    let mut cmd = Command::new(php_cgi());
    cmd.env_clear()
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .env("REQUEST_METHOD", "POST")
        .env("SCRIPT_FILENAME", page)
        .env("REDIRECT_STATUS", "200")
        .env("CONTENT_LENGTH", body.len().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(t) = content_type {
        cmd.env("CONTENT_TYPE", t);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let body_owned = body.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&body_owned).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let split = out.stdout.windows(4).position(|w| w == b"\r\n\r\n").expect("CGI header end");
    let head = String::from_utf8(out.stdout[..split].to_vec()).unwrap();
    (head, out.stdout[split + 4..].to_vec())
}

#[test]
fn nine_by_nine_is_herd_serves_page() {
    let dir = docroot();
    let want =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../serve/tests/golden/9x9.html"))
            .unwrap();
    assert_eq!(want.len(), 1692);
    let got = run_quiet(&dir.join("9x9.php"));
    assert!(got == want, "9x9.php:\n{}", String::from_utf8_lossy(&got));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn include_is_herd_serves_page() {
    let dir = docroot();
    let want = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/herd-serve-include.html"),
    )
    .unwrap();
    // The hand-made golden still holds today's texts, in order, and nothing else but
    // herd serve's fixed markup (head 57, three separators of 11, foot 16: 106 bytes).
    let mut at = 0;
    let mut texts = 0;
    for i in 1..=4 {
        let text = std::fs::read(dir.join(format!("include/{i}.txt"))).unwrap();
        let found = want[at..].windows(text.len()).position(|w| w == text).expect("text in golden");
        at += found + text.len();
        texts += text.len();
    }
    assert_eq!(want.len() - texts, 106);
    // And it is what herd serve's renderer makes of those texts today.
    let written = herd_fileset::expected::include_texts();
    let rendered = herd_fileset::expected::include(written.each_ref().map(Vec::as_slice));
    assert!(rendered == want, "the golden is no longer herd serve's /include");

    let got = run_quiet(&dir.join("include.php"));
    assert!(got == want, "include.php:\n{}", String::from_utf8_lossy(&got));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn echo_returns_the_body_unchanged() {
    let dir = docroot();
    let page = dir.join("echo.php");
    // Every byte value, CRLFs, NULs, and PHP's own open tag: nothing is interpreted.
    let mut body: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    body.extend_from_slice(b"\r\n\r\n<?php echo 1; ?>\0\0 tail");
    let (head, echoed) = post(&page, &body, Some("application/octet-stream"));
    assert!(echoed == body, "echo.php changed the body ({} bytes back)", echoed.len());
    assert!(head.to_ascii_lowercase().contains("content-type: application/octet-stream"), "{head}");

    // Without a Content-Type: herd serve's default.
    let (head, echoed) = post(&page, b"plain", None);
    assert_eq!(echoed, b"plain");
    assert!(head.to_ascii_lowercase().contains("content-type: application/octet-stream"), "{head}");

    // A form body is still echoed raw (php://input), whatever PHP parses from it.
    let (_, echoed) = post(&page, b"a=1&b=%41", Some("application/x-www-form-urlencoded"));
    assert_eq!(echoed, b"a=1&b=%41");

    // An empty body.
    let (_, echoed) = post(&page, b"", Some("application/octet-stream"));
    assert!(echoed.is_empty());
    std::fs::remove_dir_all(dir).unwrap();
}
