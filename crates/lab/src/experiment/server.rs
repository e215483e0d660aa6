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
    /// `binary`: the server program to start instead of the one the driver finds (a build of
    /// one's own beside the distribution's), absolute: as written, or beside the experiment
    /// file. Its config is the driver's as for the found one; its version is asked of it.
    pub binary: Option<std::path::PathBuf>,
    /// `config`: the user's own config file, with herd's placeholders, in place of the one
    /// the driver writes (`server_config.rs`).
    pub config: Option<crate::server_config::UserConfig>,
    /// `driver = "external"`: the user's own server, already running; herd neither starts
    /// nor stops it.
    pub external: Option<External>,
    /// `keepalive_requests`: the most requests the server serves on one kept-alive
    /// connection ([`ServerSpec::keepalive_requests`]); only drivers that have the setting.
    ///
    /// [`ServerSpec::keepalive_requests`]: herd_drivers::ServerSpec::keepalive_requests
    pub keepalive_requests: Option<NonZeroU32>,
    /// `sendfile`: whether static files go out with sendfile(2)
    /// ([`ServerSpec::sendfile`]); only drivers that have the setting.
    ///
    /// [`ServerSpec::sendfile`]: herd_drivers::ServerSpec::sendfile
    pub sendfile: Option<bool>,
}

/// A server herd does not start (`driver = "external"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct External {
    /// Where it answers: an IP address and port (a host name would need a resolver, and
    /// could change between the check and the run).
    pub addr: std::net::SocketAddr,
    /// Over TLS (`https://`): its certificate is verified against `ca_file`.
    pub tls: bool,
    /// The CA that signed its certificate (`ca_file`, for an `https://` URL).
    pub ca_file: Option<std::path::PathBuf>,
    /// Its main process on this machine: its process group's CPU time is the server's.
    pub pid: Option<u32>,
}

impl External {
    /// The URL as written back: `http://198.18.3.2:8080`.
    pub fn url(&self) -> String {
        format!("{}://{}", if self.tls { "https" } else { "http" }, self.addr)
    }
}

/// The servers an experiment may name: every one the drivers know ([`ServerKind::ALL`]) but
/// tbench_srv, which the lab adds itself as the calibration of NetBench cells (matrix.rs).
fn nameable() -> impl Iterator<Item = ServerKind> {
    ServerKind::ALL.into_iter().filter(|&k| k != ServerKind::Tbench)
}

/// The servers an experiment may name without defining them, in [`ServerKind::ALL`]'s order:
/// each by its own name (`nginx`, `apache-event`), and after a driver's servers, its default
/// one with each PHP setup it takes (`nginx-fpm`, `apache-fpm`, `apache-cgi`, `lighttpd-cgi`).
pub fn builtin_servers() -> Vec<ServerDef> {
    let def = |name: String, kind, php| ServerDef {
        name,
        kind,
        php,
        workers: None,
        binary: None,
        config: None,
        external: None,
        keepalive_requests: None,
        sendfile: None,
    };
    let mut out = Vec::new();
    let mut kinds = nameable().peekable();
    while let Some(kind) = kinds.next() {
        out.push(def(kind.name().to_owned(), kind, None));
        let last_of_its_driver = kinds.peek().is_none_or(|next| next.driver() != kind.driver());
        if last_of_its_driver {
            let default = default_kind(kind.driver()).unwrap_or(kind);
            for &php in herd_drivers::php_choices(default) {
                out.push(def(format!("{}-{}", kind.driver(), php_word(php)), default, Some(php)));
            }
        }
    }
    out
}

/// Driver names a `[servers.NAME]` table may give, in [`ServerKind::ALL`]'s order.
fn drivers() -> Vec<&'static str> {
    let mut drivers: Vec<&str> = nameable().map(ServerKind::driver).collect();
    drivers.dedup();
    drivers.push(ServerKind::External.driver());
    drivers
}

/// The server a driver runs when its table chooses nothing: Apache with Debian's MPM; None
/// for a driver that is one server.
fn default_kind(driver: &str) -> Option<ServerKind> {
    let apache = ServerKind::Apache(Mpm::DEFAULT);
    (driver == apache.driver()).then_some(apache)
}

/// The kind for a driver name and an optional MPM; Err names the accepted values.
pub(crate) fn kind(driver: &str, mpm: Option<&str>) -> Result<ServerKind, String> {
    if driver == ServerKind::External.driver() {
        return match mpm {
            Some(_) => Err(format!("`mpm` is for the apache driver only, not {driver}")),
            None => Ok(ServerKind::External),
        };
    }
    if default_kind(driver).is_some() {
        let name = mpm.unwrap_or(Mpm::DEFAULT.name());
        return Mpm::from_name(name).map(ServerKind::Apache).ok_or_else(|| {
            format!("unknown mpm `{name}`: use {}", super::error::choices(&Mpm::ALL.map(Mpm::name)))
        });
    }
    let kind = nameable().find(|k| k.driver() == driver).ok_or_else(|| {
        format!("unknown driver `{driver}`: use {}", super::error::choices(&drivers()))
    })?;
    match mpm {
        Some(_) => Err(format!("`mpm` is for the apache driver only, not {driver}")),
        None => Ok(kind),
    }
}

/// How an experiment file spells a PHP setup: `php = "fpm"`, and the built-in servers'
/// `-fpm`, `-cgi`.
fn php_word(php: Php) -> &'static str {
    match php {
        Php::Fpm => "fpm",
        Php::Cgi => "cgi",
    }
}

/// The PHP setting; which servers take which is checked against the driver.
pub(crate) fn php(kind: ServerKind, text: &str) -> Result<Php, String> {
    let Some(php) = Php::ALL.into_iter().find(|&p| php_word(p) == text) else {
        let words = Php::ALL.map(php_word);
        return Err(format!("unknown php `{text}`: use {}", super::error::choices(&words)));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The names experiments have always been able to use, each with its server, in the
    /// order error messages list them.
    #[test]
    fn the_built_in_servers_are_the_names_experiments_use() {
        let want = [
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
            ("thttpd", ServerKind::Thttpd, None),
            ("caddy", ServerKind::Caddy, None),
            ("samba", ServerKind::Samba, None),
        ];
        let got: Vec<_> =
            builtin_servers().into_iter().map(|s| (s.name, s.kind, s.php, s.workers)).collect();
        let want: Vec<_> = want.map(|(n, k, p)| (n.to_owned(), k, p, None)).into();
        assert_eq!(got, want);
    }

    #[test]
    fn the_drivers_are_the_names_tables_use() {
        assert_eq!(
            drivers(),
            [
                "herd",
                "nginx",
                "apache",
                "lighttpd",
                "h2o",
                "mini_httpd",
                "thttpd",
                "caddy",
                "samba",
                "external"
            ]
        );
    }

    #[test]
    fn every_server_is_found_by_its_driver_and_mpm() {
        for server in nameable() {
            let mpm = match server {
                ServerKind::Apache(m) => Some(m.name()),
                _ => None,
            };
            assert_eq!(kind(server.driver(), mpm), Ok(server), "{server}");
        }
        assert_eq!(kind("apache", None), Ok(ServerKind::Apache(Mpm::Event)));
    }

    #[test]
    fn unknown_drivers_and_mpms_name_the_choices() {
        assert_eq!(
            kind("tbench", None),
            Err("unknown driver `tbench`: use `herd`, `nginx`, `apache`, `lighttpd`, `h2o`, \
                 `mini_httpd`, `thttpd`, `caddy`, `samba` or `external`"
                .to_owned())
        );
        assert_eq!(
            kind("apache", Some("threads")),
            Err("unknown mpm `threads`: use `event`, `worker` or `prefork`".to_owned())
        );
        assert_eq!(
            kind("nginx", Some("event")),
            Err("`mpm` is for the apache driver only, not nginx".to_owned())
        );
    }

    #[test]
    fn php_words() {
        assert_eq!(php(ServerKind::Nginx, "fpm"), Ok(Php::Fpm));
        assert_eq!(php(ServerKind::Lighttpd, "cgi"), Ok(Php::Cgi));
        assert_eq!(
            php(ServerKind::Nginx, "mod_php"),
            Err("unknown php `mod_php`: use `fpm` or `cgi`".to_owned())
        );
        assert!(php(ServerKind::Nginx, "cgi").is_err_and(|e| e.contains("does not go with")));
    }
}
