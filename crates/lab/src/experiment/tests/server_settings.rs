//! `[servers.NAME] keepalive_requests` and `sendfile`: read for the drivers that render them,
//! refused at their line (with the driver's reason) by the others, beside a user's own
//! `config`, and for an external server.

use std::num::NonZeroU32;

use super::{err, GOOD};
use crate::experiment::parse;

/// GOOD with a `[servers.x]` of `table`'s keys, measured by the matrix.
fn with_server(table: &str) -> String {
    let text = GOOD.replacen(
        "server = [\"herd\", \"nginx-fpm\", \"apache-prefork\"]",
        "server = [\"herd\", \"nginx-fpm\", \"apache-prefork\", \"x\"]",
        1,
    );
    // Without PHP, x serves no dynamic page.
    format!("{text}\n[[exclude]]\nserver = \"x\"\nworkload = \"9x9\"\n\n[servers.x]\n{table}")
}

/// The line `needle` is on in `text`, 1-based.
fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).unwrap()].matches('\n').count() + 1
}

#[test]
fn the_drivers_that_have_them_take_both() {
    for driver in ["nginx", "apache", "lighttpd"] {
        let text = with_server(&format!(
            "driver = \"{driver}\"\nkeepalive_requests = 10\nsendfile = false\n"
        ));
        let e = parse(&text, "x.toml").unwrap_or_else(|e| panic!("{driver}: {e}"));
        let s = &e.servers["x"];
        assert_eq!(s.keepalive_requests, NonZeroU32::new(10), "{driver}");
        assert_eq!(s.sendfile, Some(false), "{driver}");
        // The cells carry them to the spec the driver renders.
        let cells = crate::matrix::cells(&e);
        let cell = cells.iter().find(|c| c.server.name == "x").unwrap();
        assert_eq!(cell.server.keepalive_requests, NonZeroU32::new(10));
    }
    let e = parse(&with_server("driver = \"nginx\"\nsendfile = true\n"), "x.toml").unwrap();
    assert_eq!((e.servers["x"].keepalive_requests, e.servers["x"].sendfile), (None, Some(true)));
    // Without them, what the drivers rendered before: nothing set.
    let e = parse(&with_server("driver = \"nginx\"\n"), "x.toml").unwrap();
    assert_eq!((e.servers["x"].keepalive_requests, e.servers["x"].sendfile), (None, None));
    for def in crate::experiment::builtin_servers() {
        assert_eq!((def.keepalive_requests, def.sendfile), (None, None), "{}", def.name);
    }
}

#[test]
fn a_driver_without_the_setting_refuses_it_at_its_line_with_why() {
    let cases = [
        (
            "herd",
            "keepalive_requests = 10",
            "herd serve keeps a connection alive without a request limit",
        ),
        ("herd", "sendfile = false", "herd serve sends files above 16 KiB with sendfile"),
        ("h2o", "keepalive_requests = 10", "h2o 2.2 has no limit on the requests of a connection"),
        ("h2o", "sendfile = false", "h2o 2.2 has no sendfile"),
        ("caddy", "keepalive_requests = 10", "caddy 2.6 (Go's net/http) has no limit"),
        ("caddy", "sendfile = true", "caddy 2.6 has no setting for it"),
        ("mini_httpd", "keepalive_requests = 10", "mini_httpd has no keep-alive"),
        ("mini_httpd", "sendfile = false", "mini_httpd has no setting for it"),
        ("thttpd", "keepalive_requests = 10", "thttpd has no keep-alive"),
        ("thttpd", "sendfile = false", "maps files into memory"),
    ];
    for (driver, key_line, why) in cases {
        let text = with_server(&format!("driver = \"{driver}\"\n{key_line}\n"));
        let e = err(&text);
        let key = key_line.split(' ').next().unwrap();
        let server = if driver == "herd" { "herd" } else { driver };
        let line = format!("line {}", line_of(&text, key_line));
        let said = format!("[servers.x] {key}: {server} cannot take it: ");
        assert!(e.contains(&line) && e.contains(&said) && e.contains(why), "{driver}: {e}");
        assert!(e.contains(&format!("remove `{key}`")), "{e}");
    }
}

#[test]
fn zero_and_too_many_requests_are_refused_at_the_line() {
    let text = with_server("driver = \"nginx\"\nkeepalive_requests = 0\n");
    let e = err(&text);
    let line = format!("line {}", line_of(&text, "keepalive_requests = 0"));
    assert!(e.contains(&line) && e.contains("give at least 1"), "{e}");
    assert!(e.contains("Apache as no limit, nginx and lighttpd as no keep-alive"), "{e}");
    let e = err(&with_server("driver = \"apache\"\nkeepalive_requests = 65536\n"));
    assert!(e.contains("keepalive_requests = 65536 is out of range: use 1 to 65535"), "{e}");
    let text = with_server("driver = \"lighttpd\"\nsendfile = \"on\"\n");
    let e = err(&text);
    let line = format!("line {}", line_of(&text, "sendfile = \"on\""));
    assert!(e.contains(&line) && e.contains("expected a boolean"), "{e}");
}

#[test]
fn beside_a_users_own_config_they_are_refused() {
    let dir = std::env::temp_dir().join(format!("herd-lab-settings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("my-nginx.conf");
    std::fs::write(&conf, "events {}\nhttp { server { listen {{listen}}; } }\n").unwrap();
    for key_line in ["keepalive_requests = 10", "sendfile = false"] {
        let table = format!("driver = \"nginx\"\nconfig = \"{}\"\n{key_line}\n", conf.display());
        let text = with_server(&table);
        let e = err(&text);
        let line = format!("line {}", line_of(&text, key_line));
        assert!(e.contains(&line), "{e}");
        assert!(e.contains("the server reads your own `config` file, which decides this"), "{e}");
    }
    // The file alone is taken.
    let table = format!("driver = \"nginx\"\nconfig = \"{}\"\n", conf.display());
    assert!(parse(&with_server(&table), "x.toml").is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_external_server_takes_neither() {
    for key_line in ["keepalive_requests = 10", "sendfile = true"] {
        let text = with_server(&format!(
            "driver = \"external\"\nurl = \"http://127.0.0.1:8080\"\n{key_line}\n"
        ));
        let e = err(&text);
        let line = format!("line {}", line_of(&text, key_line));
        assert!(e.contains(&line) && e.contains("herd does not start an external server"), "{e}");
    }
}
