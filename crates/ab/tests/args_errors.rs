//! Every way `args::parse` refuses a command line, each with the exit code ab uses in the
//! same situation (observed with ab 2.4.71: usage errors 22, `err()` paths 1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use herd_ab::args::{self, ArgsError};

fn err(args: &[&str]) -> ArgsError {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    match args::parse(&args) {
        Err(e) => e,
        Ok(p) => panic!("{args:?} parsed: {p:?}"),
    }
}

/// Asserts the exit code and that the message is one line mentioning `needle`.
fn check(args: &[&str], code: i32, needle: &str) {
    let e = err(args);
    let msg = e.to_string();
    assert_eq!(e.exit_code(), code, "{args:?}: {msg}");
    assert!(msg.contains(needle), "{args:?}: {msg:?} lacks {needle:?}");
    assert!(!msg.contains('\n'), "{msg:?}");
}

const URL: &str = "http://127.0.0.1/";

fn temp_file(name: &str, data: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("herd-args-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path).unwrap().write_all(data).unwrap();
    path
}

#[test]
fn unknown_option() {
    check(&["-Q", URL], 22, "unknown option -Q; run \"herd ab -h\" for the list");
}

#[test]
fn unknown_option_in_a_bundle() {
    check(&["-kQ", URL], 22, "-Q");
}

#[test]
fn colon_is_not_an_option() {
    check(&["-:", URL], 22, "unknown option -:");
}

#[test]
fn unknown_long_option() {
    check(&["--foo", URL], 22, "unknown option --foo");
}

#[test]
fn missing_value() {
    check(&["-n"], 22, "option -n needs a value");
}

#[test]
fn missing_long_value() {
    check(&["--json"], 22, "--json needs a value");
    check(&["--html"], 22, "--html needs a value");
    check(&["--tui=yes", URL], 22, "option --tui takes no value");
}

#[test]
fn missing_url() {
    check(&[], 22, "missing URL");
    check(&["-n", "2"], 22, "missing URL");
}

#[test]
fn option_after_url() {
    check(&[URL, "-n", "2"], 22, "options must come before the URL");
}

#[test]
fn two_urls() {
    check(&[URL, URL], 22, "found 2 arguments");
}

#[test]
fn options_after_double_dash_are_arguments() {
    check(&["--", "-n", "2", URL], 22, "found 3 arguments");
}

#[test]
fn lone_dash_is_an_argument() {
    check(&["-", URL], 22, "found 2 arguments");
}

/// ab's own words (herd ab prints them as ab does), the value as given kept beside them.
fn check_requests(args: &[&str], value: &str) {
    check(args, 1, "Invalid number of requests");
    assert!(
        matches!(err(args), ArgsError::InvalidRequests(v) if v == value),
        "{args:?}: not -n {value:?}"
    );
    assert!(err(args).is_abs_own());
}

#[test]
fn n_zero() {
    check_requests(&["-n", "0", URL], "0");
}

#[test]
fn n_letters() {
    check_requests(&["-n", "abc", URL], "abc");
}

#[test]
fn n_negative() {
    check_requests(&["-n", "-5", URL], "-5");
}

#[test]
fn n_beyond_long_is_minus_one() {
    check(&["-n", "99999999999999999999", URL], 1, "Invalid number of requests");
}

#[test]
fn n_takes_the_url_as_its_value() {
    // ab -n http://... : atoi("http://...") is 0.
    check(&["-n", URL], 1, "Invalid number of requests");
}

#[test]
fn n_error_comes_before_later_options() {
    check(&["-n", "0", "-Q", URL], 1, "Invalid number of requests");
}

#[test]
fn c_zero() {
    check(&["-c", "0", URL], 22, "-c 0 is not a valid concurrency: use 1 to 200000");
}

#[test]
fn c_negative() {
    check(&["-c", "-1", URL], 22, "-c -1 is not a valid concurrency");
}

#[test]
fn c_over_max() {
    check(&["-n", "300000", "-c", "200001", URL], 22, "use 1 to 200000");
}

#[test]
fn c_over_requests() {
    check(&["-c", "2", URL], 22, "-c 2 is more than the 1 requests");
}

#[test]
fn c_over_requests_after_t_then_n() {
    check(&["-t", "1", "-n", "3", "-c", "5", URL], 22, "more than the 3 requests");
}

#[test]
fn i_twice() {
    check(&["-i", "-i", URL], 1, "cannot mix HEAD (-i) with other methods");
}

#[test]
fn i_after_p() {
    let f = temp_file("p", b"x");
    check(&["-p", f.to_str().unwrap(), "-i", URL], 1, "cannot mix HEAD");
}

#[test]
fn p_after_i() {
    let f = temp_file("p2", b"x");
    check(&["-i", "-p", f.to_str().unwrap(), URL], 1, "cannot mix POST (-p)");
}

#[test]
fn p_after_m() {
    let f = temp_file("p3", b"x");
    check(&["-m", "PATCH", "-p", f.to_str().unwrap(), URL], 1, "cannot mix POST");
}

#[test]
fn u_after_p() {
    let f = temp_file("p4", b"x");
    let f = f.to_str().unwrap();
    check(&["-p", f, "-u", f, URL], 1, "cannot mix PUT (-u)");
}

#[test]
fn p_after_u() {
    let f = temp_file("p5", b"x");
    let f = f.to_str().unwrap();
    check(&["-u", f, "-p", f, URL], 1, "cannot mix POST");
}

#[test]
fn i_after_m() {
    check(&["-m", "GET", "-i", URL], 1, "cannot mix HEAD");
}

#[test]
fn p_unreadable() {
    check(
        &["-p", "/nonexistent/herd-post", URL],
        1,
        "could not read the -p data file \"/nonexistent/herd-post\"",
    );
    // The OS error once, after the message (before: twice, in the message and as the source).
    let e = err(&["-p", "/nonexistent/herd-post", URL]);
    let enoent = std::io::Error::from_raw_os_error(2).to_string();
    let printed = herd_testutil::causes::assert_cause_once(&e, &enoent);
    assert!(printed.ends_with(&format!("herd-post\": {enoent}")), "{printed}");
}

#[test]
fn u_unreadable() {
    check(&["-u", "/nonexistent/herd-put", URL], 1, "-u data file");
}

#[test]
fn credentials_too_long() {
    let long = "a".repeat(766);
    check(&["-A", &long, URL], 1, "-A credentials are too long");
    check(&["-P", &long, URL], 1, "-P credentials are too long");
}

#[test]
fn credentials_at_the_limit() {
    let ok = format!("  {}", "a".repeat(765));
    let args: Vec<OsString> = ["-A", ok.as_str(), URL].iter().map(OsString::from).collect();
    assert!(args::parse(&args).is_ok());
}

#[test]
fn request_too_long() {
    let h = format!("X: {}", "a".repeat(8200));
    check(&["-H", &h, URL], 1, "over ab's 8191-byte buffer");
}

#[test]
fn request_head_of_8191_bytes_is_fine() {
    // "GET / HTTP/1.0\r\n" + line + "\r\n" + "Host: 127.0.0.1\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
    let fixed = "GET / HTTP/1.0\r\n\r\nHost: 127.0.0.1\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n".len();
    let h = format!("X: {}", "a".repeat(8191 - fixed - 3));
    let args: Vec<OsString> = ["-H", h.as_str(), URL].iter().map(OsString::from).collect();
    match args::parse(&args) {
        Ok(args::Parsed::Run(c)) => assert_eq!(c.request_head_len, 8191),
        other => panic!("{other:?}"),
    }
    let h = format!("X: {}", "a".repeat(8192 - fixed - 3));
    check(&["-H", &h, URL], 1, "8192 bytes");
}

#[test]
fn url_without_path() {
    check(&["http://127.0.0.1"], 22, "invalid URL \"http://127.0.0.1\": no path after the host");
}

#[test]
fn url_bare_word() {
    check(&["foo"], 22, "invalid URL \"foo\"");
    check(&["foo"], 22, "expected http[s]://host[:port]/path");
}

#[test]
fn url_user_info() {
    check(&["http://u:p@host/"], 22, "use -A user:password");
}

#[test]
fn url_bad_port() {
    check(&["http://host:0/"], 22, "bad port 0");
    check(&["http://host:65536/"], 22, "bad port 65536");
    check(&["http://host:abc/"], 22, "bad port");
}

#[test]
fn url_unbracketed_ipv6() {
    check(&["http://::1/"], 22, "needs brackets");
}

#[test]
fn url_scope_id() {
    check(&["http://[fe80::1%eth0]/"], 22, "scope");
}

#[test]
fn url_other_scheme() {
    check(&["ftp://host/"], 22, "http:// or https://");
    check(&["HTTP://host/"], 22, "lowercase");
}

#[test]
fn url_empty_host() {
    check(&["http:///x"], 22, "no host name");
}

#[test]
fn url_checked_before_concurrency() {
    check(&["-c", "5", "foo"], 22, "invalid URL");
}

#[test]
fn proxy_without_port() {
    check(&["-X", "proxy", URL], 22, "invalid proxy \"-X proxy\": no port");
}

#[test]
fn proxy_bad_port() {
    check(&["-X", "proxy:0", URL], 22, "bad port");
    check(&["-X", "proxy:70000", URL], 22, "bad port");
}

#[test]
fn proxy_without_host() {
    check(&["-X", ":3128", URL], 22, "no proxy host");
}

#[test]
fn f_tls11_refused() {
    check(
        &["-f", "TLS1.1", URL],
        1,
        "-f TLS1.1 asks for TLS 1.1, which herd cannot speak: rustls only speaks TLS 1.2 and 1.3",
    );
}

#[test]
fn f_tls1_refused() {
    check(&["-f", "TLS1", URL], 1, "TLS 1.0");
    check(&["-f", "tls1.0", URL], 1, "TLS 1.0");
}

#[test]
fn z_keyword_refused() {
    check(&["-Z", "HIGH:!aNULL", URL], 1, "\"HIGH\" is not a cipher suite herd supports");
}

#[test]
fn z_unknown_suite_refused_and_supported_listed() {
    check(&["-Z", "BOGUS", URL], 1, "ECDHE-RSA-AES128-GCM-SHA256");
}

#[test]
fn z_cbc_suite_refused() {
    check(&["-Z", "ECDHE-RSA-AES128-SHA256", URL], 1, "ECDHE-RSA-AES128-SHA256");
}

#[test]
fn z_empty_refused() {
    check(&["-Z", "", URL], 1, "no cipher suite given");
}

#[test]
fn z_tls13_only_without_f_tls13() {
    // ab: "error setting ciphersuite list [TLS_AES_128_GCM_SHA256]", exit 1.
    check(&["-Z", "TLS_AES_128_GCM_SHA256", URL], 1, "use -f TLS1.3");
}

#[test]
fn z_tls12_with_f_tls13() {
    // ab: set_ciphersuites "no cipher match", exit 1.
    check(&["-f", "TLS1.3", "-Z", "ECDHE-RSA-AES128-GCM-SHA256", URL], 1, "TLS 1.3 suites only");
}

#[test]
fn e_missing_file() {
    check(
        &["-E", "/nonexistent/herd.pem", URL],
        1,
        "cannot use the client certificate file \"/nonexistent/herd.pem\" (-E)",
    );
}

#[test]
fn e_not_pem() {
    let f = temp_file("not.pem", b"hello\n");
    check(&["-E", f.to_str().unwrap(), URL], 1, "no PEM certificate");
}

#[test]
fn e_without_key() {
    let f = temp_file(
        "cert-only.pem",
        b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    );
    check(&["-E", f.to_str().unwrap(), URL], 1, "no PEM private key");
}

#[test]
fn threads_zero() {
    check(&["--threads", "0", URL], 22, "--threads 0 is not valid");
}

#[test]
fn threads_not_a_number() {
    check(&["--threads=x", URL], 22, "--threads x");
}

#[test]
fn io_not_a_backend() {
    check(&["--io", "io_uring", URL], 22, "--io io_uring is not valid: give auto, epoll or uring");
    check(&["--io=EPOLL", URL], 22, "--io EPOLL is not valid");
    check(&["--io"], 22, "option --io needs a value");
}

#[test]
fn help_after_error_loses() {
    check(&["-n", "0", "-h"], 1, "Invalid number of requests");
}
