//! Servers an experiment can name: the built-in names (`nginx`, `apache-event`,
//! `lighttpd-cgi` …) and `[servers.NAME]` tables that choose a driver, an Apache MPM, a way
//! to run PHP and a worker count.

use std::num::NonZeroU32;

use herd_drivers::{Mpm, Php, ServerKind};

/// A server as a cell starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerDef {
    pub name: String,
    pub kind: ServerKind,
    pub php: Option<Php>,
    pub workers: Option<NonZeroU32>,
}

/// The servers an experiment may name without defining them.
pub const BUILTIN_SERVERS: &[(&str, ServerKind, Option<Php>)] = &[
    ("herd", ServerKind::Herd, None),
    ("nginx", ServerKind::Nginx, None),
    ("nginx-fpm", ServerKind::Nginx, Some(Php::Fpm)),
    ("apache-event", ServerKind::Apache(Mpm::Event), None),
    ("apache-worker", ServerKind::Apache(Mpm::Worker), None),
    ("apache-prefork", ServerKind::Apache(Mpm::Prefork), None),
    ("apache-fpm", ServerKind::Apache(Mpm::Event), Some(Php::Fpm)),
    ("apache-cgi", ServerKind::Apache(Mpm::Event), Some(Php::Cgi)),
    ("lighttpd", ServerKind::Lighttpd, None),
    ("lighttpd-cgi", ServerKind::Lighttpd, Some(Php::Cgi)),
    ("h2o", ServerKind::H2o, None),
    ("mini_httpd", ServerKind::MiniHttpd, None),
    ("caddy", ServerKind::Caddy, None),
    ("samba", ServerKind::Samba, None),
];

/// Driver names a `[servers.NAME]` table may give.
pub(crate) const DRIVERS: &[&str] =
    &["herd", "nginx", "apache", "lighttpd", "h2o", "mini_httpd", "caddy", "samba"];

/// The built-in server called `name`.
pub(crate) fn builtin(name: &str) -> Option<ServerDef> {
    BUILTIN_SERVERS.iter().find(|(n, _, _)| *n == name).map(|&(n, kind, php)| ServerDef {
        name: n.to_string(),
        kind,
        php,
        workers: None,
    })
}

/// The kind for a driver name and an optional MPM; Err names the accepted values.
pub(crate) fn kind(driver: &str, mpm: Option<&str>) -> Result<ServerKind, String> {
    let kind = match driver {
        "herd" => ServerKind::Herd,
        "nginx" => ServerKind::Nginx,
        "lighttpd" => ServerKind::Lighttpd,
        "h2o" => ServerKind::H2o,
        "mini_httpd" => ServerKind::MiniHttpd,
        "caddy" => ServerKind::Caddy,
        "samba" => ServerKind::Samba,
        "apache" => {
            let mpm = match mpm.unwrap_or("event") {
                "event" => Mpm::Event,
                "worker" => Mpm::Worker,
                "prefork" => Mpm::Prefork,
                other => {
                    return Err(format!(
                        "unknown mpm `{other}`: use {}",
                        super::error::choices(&["event", "worker", "prefork"])
                    ))
                }
            };
            return Ok(ServerKind::Apache(mpm));
        }
        other => {
            return Err(format!("unknown driver `{other}`: use {}", super::error::choices(DRIVERS)))
        }
    };
    match mpm {
        Some(_) => Err(format!("`mpm` is for the apache driver only, not {driver}")),
        None => Ok(kind),
    }
}

/// The PHP setting; which servers take which is checked against the driver.
pub(crate) fn php(kind: ServerKind, text: &str) -> Result<Php, String> {
    let php = match text {
        "fpm" => Php::Fpm,
        "cgi" => Php::Cgi,
        other => return Err(format!("unknown php `{other}`: use `fpm` or `cgi`")),
    };
    if herd_drivers::php_choices(kind).contains(&php) {
        Ok(php)
    } else {
        Err(format!(
            "php = \"{text}\" does not go with this driver: PHP runs through php-fpm behind nginx or \
             apache, and as CGI under apache or lighttpd (herd serves its own 9x9 and include pages)"
        ))
    }
}
