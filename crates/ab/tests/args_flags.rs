//! One small test per ab flag (and per herd long option): what `args::parse` makes of it,
//! checked against what ab does with the same flag (behaviours confirmed with ab 2.4.71).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use herd_ab::args::{self, ArgsError, Parsed};
use herd_ab::config::{AbConfig, TlsProtocol};
use herd_ab::results::HtmlAttributes;

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn parse(args: &[&str]) -> Result<Parsed, ArgsError> {
    args::parse(&os(args))
}

/// Parses `flags` followed by a URL and returns the config.
fn cfg(flags: &[&str]) -> AbConfig {
    let mut all = flags.to_vec();
    all.push("http://127.0.0.1:8080/p");
    match parse(&all) {
        Ok(Parsed::Run(c)) => *c,
        other => panic!("{flags:?}: {other:?}"),
    }
}

fn head(c: &AbConfig) -> String {
    String::from_utf8(c.request[..c.request_head_len].to_vec()).unwrap()
}

fn temp_file(name: &str, data: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("herd-args-flags-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path).unwrap().write_all(data).unwrap();
    path
}

const PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n\
                   -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";

#[test]
fn defaults() {
    let c = cfg(&[]);
    assert_eq!(c.requests, 1);
    assert_eq!(c.concurrency, 1);
    assert_eq!(c.time_limit, None);
    assert_eq!(c.timeout, Duration::from_secs(30));
    assert_eq!(c.window_size, None);
    assert_eq!(c.bind, None);
    assert_eq!(c.method, "GET");
    assert!(!c.head);
    assert_eq!(c.body, None);
    assert_eq!(c.verbosity, 0);
    assert_eq!(c.html, None);
    assert!(!c.keepalive);
    assert!(c.show_percentiles && c.show_confidence && c.show_progress);
    assert!(!c.variable_length && !c.receive_errors_ok);
    assert_eq!((c.gnuplot.as_ref(), c.csv.as_ref(), c.proxy.as_ref()), (None, None, None));
    assert!(c.tls.sni);
    assert_eq!(c.tls.protocol, TlsProtocol::All);
    assert_eq!(c.tls.cipher_suites, None);
    assert_eq!(c.tls.client_cert, None);
    assert_eq!((c.threads, c.json.as_ref(), c.html_page.as_ref()), (None, None, None));
    assert_eq!(c.io, herd_engine::IoChoice::Auto);
    assert_eq!(
        head(&c),
        "GET /p HTTP/1.0\r\nHost: 127.0.0.1:8080\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
    );
    assert_eq!(c.request.len(), c.request_head_len);
}

#[test]
fn n_requests() {
    assert_eq!(cfg(&["-n", "100"]).requests, 100);
}

#[test]
fn n_attached_value() {
    assert_eq!(cfg(&["-n100"]).requests, 100);
}

#[test]
fn n_atoi_trailing_garbage() {
    assert_eq!(cfg(&["-n", "10abc"]).requests, 10);
}

#[test]
fn n_atoi_leading_space_and_plus() {
    assert_eq!(cfg(&["-n", "  +7"]).requests, 7);
}

#[test]
fn n_beyond_int_wraps_like_ab() {
    // ab 2.4.71 ran exactly 1 request for -n 4294967297.
    assert_eq!(cfg(&["-n", "4294967297"]).requests, 1);
}

#[test]
fn n_last_one_wins() {
    assert_eq!(cfg(&["-n", "5", "-n", "9"]).requests, 9);
}

#[test]
fn c_concurrency() {
    assert_eq!(cfg(&["-n", "10", "-c", "4"]).concurrency, 4);
}

#[test]
fn c_equal_to_requests() {
    assert_eq!(cfg(&["-n", "4", "-c", "4"]).concurrency, 4);
}

#[test]
fn c_max() {
    assert_eq!(cfg(&["-n", "300000", "-c", "200000"]).concurrency, 200_000);
}

#[test]
fn t_time_limit_implies_50000_requests() {
    let c = cfg(&["-t", "5"]);
    assert_eq!(c.time_limit, Some(Duration::from_secs(5)));
    assert_eq!(c.requests, 50_000);
}

#[test]
fn t_overrides_earlier_n() {
    assert_eq!(cfg(&["-n", "3", "-t", "1", "-c", "5"]).requests, 50_000);
}

#[test]
fn n_after_t_wins() {
    let c = cfg(&["-t", "1", "-n", "2"]);
    assert_eq!(c.requests, 2);
    assert_eq!(c.time_limit, Some(Duration::from_secs(1)));
}

#[test]
fn t_zero_means_no_limit_but_still_50000() {
    let c = cfg(&["-t", "0"]);
    assert_eq!(c.time_limit, None);
    assert_eq!(c.requests, 50_000);
}

#[test]
fn t_negative_is_an_expired_limit() {
    assert_eq!(cfg(&["-t", "-1"]).time_limit, Some(Duration::ZERO));
}

#[test]
fn s_timeout() {
    assert_eq!(cfg(&["-s", "5"]).timeout, Duration::from_secs(5));
}

#[test]
fn s_zero_times_out_at_once() {
    // ab -s 0: "apr_pollset_poll: The timeout specified has expired (70007)".
    assert_eq!(cfg(&["-s", "0"]).timeout, Duration::ZERO);
}

#[test]
fn s_negative_never_times_out() {
    assert_eq!(cfg(&["-s", "-1"]).timeout, args::NO_TIMEOUT);
}

#[test]
fn s_garbage_is_zero() {
    assert_eq!(cfg(&["-s", "abc"]).timeout, Duration::ZERO);
}

#[test]
fn b_window_size() {
    assert_eq!(cfg(&["-b", "65536"]).window_size, Some(65536));
}

#[test]
fn b_zero_is_os_default() {
    assert_eq!(cfg(&["-b", "0"]).window_size, None);
}

#[test]
fn b_negative_keeps_the_int_bits() {
    assert_eq!(cfg(&["-b", "-1"]).window_size, Some(u32::MAX));
}

#[test]
fn big_b_bind_address() {
    assert_eq!(cfg(&["-B", "127.0.0.2"]).bind.as_deref(), Some("127.0.0.2"));
}

#[test]
fn p_post_file() {
    let f = temp_file("post", b"a=1&b=2");
    let c = cfg(&["-p", f.to_str().unwrap()]);
    assert_eq!(c.method, "POST");
    let body = c.body.as_ref().unwrap();
    assert_eq!(body.data, b"a=1&b=2");
    assert_eq!(body.content_type, "text/plain");
    assert!(head(&c).contains("Content-length: 7\r\nContent-type: text/plain\r\n"));
    assert_eq!(&c.request[c.request_head_len..], b"a=1&b=2");
}

#[test]
fn p_empty_file() {
    let f = temp_file("empty", b"");
    let c = cfg(&["-p", f.to_str().unwrap()]);
    assert!(head(&c).contains("Content-length: 0\r\n"));
    assert_eq!(c.request.len(), c.request_head_len);
}

#[test]
fn u_put_file() {
    let f = temp_file("put", b"xyz");
    let c = cfg(&["-u", f.to_str().unwrap()]);
    assert_eq!(c.method, "PUT");
    assert_eq!(c.body.as_ref().unwrap().data, b"xyz");
    assert!(head(&c).starts_with("PUT /p HTTP/1.0\r\n"));
}

#[test]
fn big_t_content_type() {
    let f = temp_file("post-t", b"{}");
    let c = cfg(&["-T", "application/json", "-p", f.to_str().unwrap()]);
    assert_eq!(c.body.as_ref().unwrap().content_type, "application/json");
    assert!(head(&c).contains("Content-type: application/json\r\n"));
}

#[test]
fn big_t_without_body_is_unused() {
    assert!(!head(&cfg(&["-T", "a/b"])).contains("Content-type"));
}

#[test]
fn v_verbosity() {
    assert_eq!(cfg(&["-v", "4"]).verbosity, 4);
}

#[test]
fn v_negative_is_zero() {
    assert_eq!(cfg(&["-v", "-3"]).verbosity, 0);
}

#[test]
fn w_html() {
    assert_eq!(cfg(&["-w"]).html, Some(HtmlAttributes::default()));
}

#[test]
fn x_table_attributes_imply_w() {
    let html = cfg(&["-x", "border=1"]).html.unwrap();
    assert_eq!(html.table, "border=1");
    assert_eq!(html.td, "bgcolor=white");
}

#[test]
fn y_tr_attributes_imply_w() {
    assert_eq!(cfg(&["-y", "class=r"]).html.unwrap().tr, "class=r");
}

#[test]
fn z_td_attributes_imply_w() {
    assert_eq!(cfg(&["-z", "align=left"]).html.unwrap().td, "align=left");
}

#[test]
fn i_head() {
    let c = cfg(&["-i"]);
    assert_eq!(c.method, "HEAD");
    assert!(c.head);
    assert!(head(&c).starts_with("HEAD /p HTTP/1.0\r\n"));
}

#[test]
fn big_c_cookie() {
    assert!(head(&cfg(&["-C", "a=1"])).contains("\r\nCookie: a=1\r\n"));
}

#[test]
fn big_c_replaces_earlier_cookie() {
    let h = head(&cfg(&["-C", "a=1", "-C", "b=2"]));
    assert!(h.contains("Cookie: b=2\r\n"));
    assert!(!h.contains("a=1"));
}

#[test]
fn big_h_header() {
    let h = head(&cfg(&["-H", "X-A: 1", "-H", "X-B: 2"]));
    assert!(h.contains("X-A: 1\r\nX-B: 2\r\nHost: 127.0.0.1:8080\r\n"));
}

#[test]
fn big_h_host_overrides_default() {
    let c = cfg(&["-H", "host: example.com"]);
    let h = head(&c);
    assert!(h.contains("host: example.com\r\n"));
    assert!(!h.contains("Host: 127.0.0.1"));
}

#[test]
fn big_h_user_agent_overrides_default() {
    let h = head(&cfg(&["-H", "User-Agent: me"]));
    assert!(h.contains("User-Agent: me\r\n"));
    assert!(!h.contains("ApacheBench"));
}

#[test]
fn big_h_accept_overrides_default() {
    let h = head(&cfg(&["-H", "ACCEPT: text/html"]));
    assert!(h.contains("ACCEPT: text/html\r\n"));
    assert!(!h.contains("*/*"));
}

#[test]
fn big_h_leading_space_does_not_override() {
    let h = head(&cfg(&["-H", " Host: x"]));
    assert!(h.contains("Host: 127.0.0.1:8080\r\n"));
}

#[test]
fn big_a_basic_auth() {
    assert!(head(&cfg(&["-A", "user:pass"])).contains("Authorization: Basic dXNlcjpwYXNz\r\n"));
}

#[test]
fn big_a_skips_leading_whitespace() {
    assert!(head(&cfg(&["-A", " \t user:pass"])).contains("Authorization: Basic dXNlcjpwYXNz\r\n"));
}

#[test]
fn big_p_proxy_auth() {
    assert!(head(&cfg(&["-P", "u:p"])).contains("Proxy-Authorization: Basic dTpw\r\n"));
}

#[test]
fn big_a_and_big_p_in_flag_order() {
    let h = head(&cfg(&["-P", "u:p", "-A", "a:b", "-A", "c:d"]));
    assert!(h.contains(
        "Proxy-Authorization: Basic dTpw\r\nAuthorization: Basic YTpi\r\nAuthorization: Basic Yzpk\r\n"
    ));
}

#[test]
fn big_x_proxy() {
    let c = cfg(&["-X", "proxy.local:3128"]);
    assert_eq!(c.proxy, Some(("proxy.local".to_string(), 3128)));
    assert!(head(&c).starts_with("GET http://127.0.0.1:8080/p HTTP/1.0\r\n"));
}

#[test]
fn big_x_ipv6_proxy() {
    assert_eq!(cfg(&["-X", "[::1]:3128"]).proxy, Some(("::1".to_string(), 3128)));
}

#[test]
fn big_x_sends_url_as_given() {
    let c = match parse(&["-X", "p:1", "example.test/x"]).unwrap() {
        Parsed::Run(c) => c,
        other => panic!("{other:?}"),
    };
    assert!(head(&c).starts_with("GET example.test/x HTTP/1.0\r\n"));
}

#[test]
fn big_v_version() {
    assert_eq!(parse(&["-V"]).unwrap(), Parsed::Version);
}

#[test]
fn big_v_ignores_what_follows() {
    assert_eq!(parse(&["-V", "-n", "0", "a", "b"]).unwrap(), Parsed::Version);
}

#[test]
fn h_help() {
    assert_eq!(parse(&["-h"]).unwrap(), Parsed::Help);
    assert_eq!(args::HELP_EXIT_CODE, 22);
}

#[test]
fn h_usage_text() {
    let u = args::usage();
    assert!(
        u.starts_with("Usage: herd ab [options] [http[s]://]hostname[:port]/path\nOptions are:\n")
    );
    for flag in [
        "-n",
        "-c",
        "-t",
        "-s",
        "-b",
        "-B",
        "-p",
        "-u",
        "-T",
        "-v",
        "-w",
        "-i",
        "-x",
        "-y",
        "-z",
        "-C",
        "-H",
        "-A",
        "-P",
        "-X",
        "-V",
        "-k",
        "-d",
        "-S",
        "-q",
        "-l",
        "-g",
        "-e",
        "-r",
        "-m",
        "-h",
        "-I",
        "-Z",
        "-f",
        "-E",
        "--threads",
        "--io",
        "--json",
        "--html",
    ] {
        assert!(u.contains(&format!("\n    {flag} ")), "{flag} missing from usage");
    }
}

#[test]
fn k_keepalive() {
    let c = cfg(&["-k"]);
    assert!(c.keepalive);
    assert!(head(&c).starts_with("GET /p HTTP/1.0\r\nConnection: Keep-Alive\r\n"));
}

#[test]
fn d_no_percentiles() {
    assert!(!cfg(&["-d"]).show_percentiles);
}

#[test]
fn big_s_no_confidence() {
    assert!(!cfg(&["-S"]).show_confidence);
}

#[test]
fn q_no_progress() {
    assert!(!cfg(&["-q"]).show_progress);
}

#[test]
fn l_variable_length() {
    assert!(cfg(&["-l"]).variable_length);
}

#[test]
fn g_gnuplot_file() {
    assert_eq!(cfg(&["-g", "out.tsv"]).gnuplot, Some(PathBuf::from("out.tsv")));
}

#[test]
fn e_csv_file() {
    assert_eq!(cfg(&["-e", "out.csv"]).csv, Some(PathBuf::from("out.csv")));
}

#[test]
fn r_receive_errors_ok() {
    assert!(cfg(&["-r"]).receive_errors_ok);
}

#[test]
fn m_method() {
    let c = cfg(&["-m", "PATCH"]);
    assert_eq!(c.method, "PATCH");
    assert!(head(&c).starts_with("PATCH /p HTTP/1.0\r\n"));
}

#[test]
fn m_head_is_not_i() {
    // ab's "method != HEAD" tests see CUSTOM_METHOD.
    assert!(!cfg(&["-m", "HEAD"]).head);
}

#[test]
fn m_empty_method() {
    assert!(head(&cfg(&["-m", ""])).starts_with(" /p HTTP/1.0\r\n"));
}

#[test]
fn m_after_p_keeps_the_body() {
    let f = temp_file("post-m", b"body");
    let c = cfg(&["-p", f.to_str().unwrap(), "-m", "PATCH"]);
    assert_eq!(c.method, "PATCH");
    assert_eq!(&c.request[c.request_head_len..], b"body");
    assert!(head(&c).starts_with("PATCH /p HTTP/1.0\r\nContent-length: 4\r\n"));
}

#[test]
fn m_after_i_replaces_head() {
    let c = cfg(&["-i", "-m", "GET"]);
    assert_eq!(c.method, "GET");
    assert!(!c.head);
}

#[test]
fn big_i_no_sni() {
    let c = cfg(&["-I"]);
    assert!(!c.tls.sni);
    assert_eq!(c.tls.server_name, None);
}

#[test]
fn sni_is_url_host() {
    let c = match parse(&["https://example.com/"]).unwrap() {
        Parsed::Run(c) => c,
        other => panic!("{other:?}"),
    };
    assert_eq!(c.tls.server_name.as_deref(), Some("example.com"));
}

#[test]
fn sni_never_an_ip() {
    assert_eq!(cfg(&[]).tls.server_name, None);
}

#[test]
fn sni_from_last_host_header() {
    let c = cfg(&["-H", "Host: a.test", "-H", "host:  b.test  "]);
    assert_eq!(c.tls.server_name.as_deref(), Some("b.test"));
}

#[test]
fn f_tls12() {
    assert_eq!(cfg(&["-f", "TLS1.2"]).tls.protocol, TlsProtocol::Tls12);
}

#[test]
fn f_tls13_any_case() {
    assert_eq!(cfg(&["-f", "tls1.3"]).tls.protocol, TlsProtocol::Tls13);
}

#[test]
fn f_all() {
    assert_eq!(cfg(&["-f", "ALL"]).tls.protocol, TlsProtocol::All);
}

#[test]
fn f_prefix_match_like_strncasecmp() {
    assert_eq!(cfg(&["-f", "TLS1.2-please"]).tls.protocol, TlsProtocol::Tls12);
}

#[test]
fn f_unknown_value_is_all_as_in_ab() {
    assert_eq!(cfg(&["-f", "bogus"]).tls.protocol, TlsProtocol::All);
}

#[test]
fn f_ssl2_and_ssl3_are_all_as_in_this_ab() {
    assert_eq!(cfg(&["-f", "SSL2"]).tls.protocol, TlsProtocol::All);
    assert_eq!(cfg(&["-f", "SSL3"]).tls.protocol, TlsProtocol::All);
}

#[test]
fn f_last_one_wins() {
    assert_eq!(cfg(&["-f", "TLS1.1", "-f", "TLS1.3"]).tls.protocol, TlsProtocol::Tls13);
}

#[test]
fn big_z_openssl_name_maps_to_rustls() {
    assert_eq!(
        cfg(&["-f", "TLS1.2", "-Z", "ECDHE-RSA-AES128-GCM-SHA256"]).tls.cipher_suites,
        Some(vec!["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".to_string()])
    );
}

#[test]
fn big_z_with_all_keeps_every_tls13_suite() {
    assert_eq!(
        cfg(&["-Z", "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-AES256-GCM-SHA384"]).tls.cipher_suites,
        Some(
            [
                "TLS13_AES_256_GCM_SHA384",
                "TLS13_AES_128_GCM_SHA256",
                "TLS13_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            ]
            .map(String::from)
            .to_vec()
        )
    );
}

#[test]
fn big_z_tls13_names_with_f_tls13() {
    assert_eq!(
        cfg(&["-f", "TLS1.3", "-Z", "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"])
            .tls
            .cipher_suites,
        Some(vec![
            "TLS13_CHACHA20_POLY1305_SHA256".to_string(),
            "TLS13_AES_128_GCM_SHA256".to_string()
        ])
    );
}

#[test]
fn big_z_iana_and_rustls_names_too() {
    assert_eq!(
        cfg(&["-f", "TLS1.2", "-Z", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]).tls.cipher_suites,
        cfg(&["-f", "TLS1.2", "-Z", "ecdhe-rsa-aes128-gcm-sha256"]).tls.cipher_suites
    );
    assert_eq!(
        cfg(&["-f", "TLS1.3", "-Z", "TLS13_AES_256_GCM_SHA384"]).tls.cipher_suites,
        Some(vec!["TLS13_AES_256_GCM_SHA384".to_string()])
    );
}

#[test]
fn big_z_before_f_uses_final_protocol() {
    assert_eq!(
        cfg(&["-Z", "TLS_AES_128_GCM_SHA256", "-f", "TLS1.3"]).tls.cipher_suites,
        Some(vec!["TLS13_AES_128_GCM_SHA256".to_string()])
    );
}

#[test]
fn big_e_client_cert() {
    let f = temp_file("client.pem", PEM.as_bytes());
    assert_eq!(cfg(&["-E", f.to_str().unwrap()]).tls.client_cert, Some(f));
}

#[test]
fn https_url() {
    let c = match parse(&["https://example.com:8443/x"]).unwrap() {
        Parsed::Run(c) => c,
        other => panic!("{other:?}"),
    };
    assert!(c.url.tls);
    assert_eq!(c.url.port, 8443);
    assert!(head(&c).contains("Host: example.com:8443\r\n"));
}

#[test]
fn url_without_scheme_is_http() {
    let c = match parse(&["127.0.0.1/x"]).unwrap() {
        Parsed::Run(c) => c,
        other => panic!("{other:?}"),
    };
    assert!(!c.url.tls);
    assert_eq!(c.url.port, 80);
    assert!(head(&c).contains("Host: 127.0.0.1\r\n"));
}

#[test]
fn ipv6_url() {
    let c = match parse(&["http://[::1]:8080/"]).unwrap() {
        Parsed::Run(c) => c,
        other => panic!("{other:?}"),
    };
    assert_eq!(c.url.hostname, "::1");
    assert!(head(&c).contains("Host: [::1]:8080\r\n"));
}

#[test]
fn default_port_omitted_from_host() {
    let c = match parse(&["http://example.test:80/"]).unwrap() {
        Parsed::Run(c) => c,
        other => panic!("{other:?}"),
    };
    assert!(head(&c).contains("Host: example.test\r\n"));
}

#[test]
fn bundled_flags() {
    let c = cfg(&["-kqdS"]);
    assert!(c.keepalive && !c.show_progress && !c.show_percentiles && !c.show_confidence);
}

#[test]
fn bundled_flags_then_value() {
    let c = cfg(&["-kn100"]);
    assert!(c.keepalive);
    assert_eq!(c.requests, 100);
}

#[test]
fn separate_value_may_start_with_dash() {
    assert!(head(&cfg(&["-H", "-x"])).contains("\r\n-x\r\n"));
}

#[test]
fn double_dash_ends_options() {
    let c = match parse(&["-n", "2", "--", "127.0.0.1/"]).unwrap() {
        Parsed::Run(c) => c,
        other => panic!("{other:?}"),
    };
    assert_eq!(c.requests, 2);
}

#[test]
fn threads_long_option() {
    assert_eq!(cfg(&["--threads", "4"]).threads, Some(4));
}

#[test]
fn threads_with_equals() {
    assert_eq!(cfg(&["--threads=2"]).threads, Some(2));
}

#[test]
fn io_long_option() {
    use herd_engine::IoChoice;
    assert_eq!(cfg(&["--io", "epoll"]).io, IoChoice::Epoll);
    assert_eq!(cfg(&["--io=uring"]).io, IoChoice::Uring);
    assert_eq!(cfg(&["-k", "--io", "auto", "-n", "3"]).io, IoChoice::Auto);
}

#[test]
fn json_long_option() {
    assert_eq!(cfg(&["--json", "r.json"]).json, Some(PathBuf::from("r.json")));
}

#[test]
fn tui_long_option() {
    assert!(cfg(&["--tui"]).tui);
    assert!(!cfg(&[]).tui);
    assert!(cfg(&["-k", "--tui", "-n", "5"]).tui);
}

#[test]
fn json_with_equals() {
    assert_eq!(cfg(&["--json=r.json"]).json, Some(PathBuf::from("r.json")));
}

#[test]
fn html_page_is_herds_long_option_not_ab_w() {
    let c = cfg(&["--html", "run.html", "-w"]);
    assert_eq!(c.html_page, Some(PathBuf::from("run.html")));
    assert!(c.html.is_some(), "-w stays ab's own HTML report");
    assert_eq!(cfg(&["--html=r.html"]).html_page, Some(PathBuf::from("r.html")));
}

#[test]
fn long_options_between_ab_options() {
    let c = cfg(&["-n", "10", "--threads", "2", "-c", "5", "--json", "x.json", "-k"]);
    assert_eq!((c.requests, c.concurrency, c.threads), (10, 5, Some(2)));
    assert!(c.keepalive);
}
