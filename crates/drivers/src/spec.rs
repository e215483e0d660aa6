//! What the lab asks a driver for: which server ([`ServerKind`], with Apache's [`Mpm`]), how it
//! runs PHP ([`Php`]), which protocol it serves ([`Protocol`]), and where it listens, serves
//! from and keeps its files ([`ServerSpec`]). Also the table of PHP setups that exist
//! ([`php_choices`]) and which protocols each server speaks ([`ServerKind::supports`]).
//! Renders nothing itself.

use std::fmt;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;

use herd_stats::Protocol;

use crate::error::DriverError;
use crate::programs::Programs;

/// A server the lab can measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerKind {
    /// `herd serve`, the reference server (the lab's own executable).
    Herd,
    Nginx,
    /// Apache 2.4 with the given multi-processing module.
    Apache(Mpm),
    Lighttpd,
    H2o,
    MiniHttpd,
    /// thttpd, as sthttpd 2.27 (its maintained fork), built by `scripts/build-thttpd.sh`:
    /// seed 002's server, one process with one thread.
    Thttpd,
    /// Caddy 2: the one server in Debian 12 with HTTP/3.
    Caddy,
    /// Samba's smbd: files over SMB for the netbench workloads, no HTTP at all.
    Samba,
    /// dbench's `tbench_srv`: the answers to the NetBench trace over plain TCP, no file
    /// system and no SMB: the calibration of a netbench cell's path (the network-only
    /// ceiling of the same trace). No HTTP either.
    Tbench,
    /// A server herd does not start, render or stop: the user's own, already running at a
    /// URL the experiment gives (`driver = "external"`). Not in [`ServerKind::ALL`]: it has
    /// no name of its own to be asked for by.
    External,
}

/// Apache's multi-processing module: how connections map to processes and threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mpm {
    /// Threads, with idle keep-alive connections parked in a listener thread (Debian's default).
    Event,
    /// Threads, one per connection for the connection's whole life.
    Worker,
    /// One single-threaded process per connection.
    Prefork,
}

/// How PHP pages are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Php {
    /// A php-fpm pool of persistent workers, reached over FastCGI on a Unix socket.
    Fpm,
    /// A new php-cgi process for every request (CGI).
    Cgi,
}

/// Everything a driver needs to know about one server instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub kind: ServerKind,
    /// What the server speaks on `listen` (see [`ServerKind::supports`]). With TLS (`h1-tls`,
    /// `h2`, `h3`) the launch carries a certificate made for it ([`Launch::tls`]), whose CA
    /// the client trusts.
    ///
    /// [`Launch::tls`]: crate::Launch::tls
    pub protocol: Protocol,
    /// `None` for static files only. See [`php_choices`] for the setups that exist; any other
    /// is [`DriverError::PhpNotSupported`].
    pub php: Option<Php>,
    /// Where the server listens, e.g. `127.0.0.1:43117`, or `198.18.2.2:80` inside a network
    /// namespace. Port 0 is refused: a server that picks its own port cannot tell the lab which.
    pub listen: SocketAddr,
    /// The directory served, absolute. The lab has written the files (and [`READY_FILE`],
    /// and the PHP pages of [`php_pages`] when `php` is set) before starting the server.
    ///
    /// [`READY_FILE`]: crate::READY_FILE
    /// [`php_pages`]: crate::php_pages
    pub docroot: PathBuf,
    /// This server's own directory, absolute, existing and empty: configs, pid files, logs,
    /// temporary files and sockets all go under it, never under /var or /run. When `user` is
    /// set, it and its parents must be searchable by that user (nginx's workers reach the
    /// php-fpm socket and their temporary files through it).
    pub run_dir: PathBuf,
    /// Worker processes or threads. `None` keeps the server's own default: nginx `auto` (one
    /// per CPU), Debian's MPM settings for Apache, one lighttpd process, one h2o thread per CPU,
    /// one `herd serve` thread per core, Go's one running thread per CPU for caddy (`n` is its
    /// `GOMAXPROCS`). For Apache, `n` is the number of child processes (of Debian's 25 threads
    /// each for event and worker). mini_httpd forks per connection and thttpd is one process:
    /// both refuse a count.
    /// php-fpm keeps Debian's pool either way.
    pub workers: Option<NonZeroU32>,
    /// `Some("www-data")` when the lab runs as root: whom the unprivileged workers run as
    /// (nginx `user`, Apache `User`/`Group`, lighttpd `server.username`, h2o `user`, php-fpm's
    /// pool, mini_httpd's and thttpd's `-u`; herd serve and caddy have no user switch and run
    /// as the lab), with the group of the same name (Debian's convention, and nginx's rule).
    /// `None` when the lab is not root: no user directive is written, and the servers keep
    /// the lab's user.
    pub user: Option<String>,
    /// The user the lab runs as, by name (None: it has none in the user database): whom every
    /// server runs as that does not switch users. Read by samba alone: without `user`, its
    /// guests must be that account (smbd cannot switch to another).
    pub runs_as: Option<String>,
    /// Absolute paths of the programs [`programs_needed`](crate::programs_needed) names.
    pub programs: Programs,
    /// Whether the server writes an access log ([`Launch::access_log`]): false in the lab,
    /// which measures servers, not their logging; true where a client's counts are checked
    /// against the server's own.
    ///
    /// [`Launch::access_log`]: crate::Launch::access_log
    pub access_log: bool,
    /// The most requests the server serves on one kept-alive connection before it closes it
    /// (nginx `keepalive_requests`, Apache `MaxKeepAliveRequests`, lighttpd
    /// `server.max-keep-alive-requests`). `None` keeps what the driver renders without it:
    /// nginx's 1000, Debian's 100 for Apache, lighttpd's 1000. Never 0, which the servers
    /// read differently (Apache: no limit; nginx and lighttpd: no keep-alive). The other
    /// servers refuse it ([`ServerKind::takes_keepalive_requests`]).
    pub keepalive_requests: Option<NonZeroU32>,
    /// Whether static files go out with sendfile(2) (nginx `sendfile`, Apache
    /// `EnableSendfile`, lighttpd `server.network-backend` "sendfile" or "writev"). `None`
    /// and `Some(true)` render the same: on, as the lab runs every server that has the
    /// setting. The other servers refuse it ([`ServerKind::takes_sendfile`]).
    pub sendfile: Option<bool>,
}

/// The PHP setups `kind` supports, in the order a user would try them.
pub fn php_choices(kind: ServerKind) -> &'static [Php] {
    match kind {
        ServerKind::Nginx => &[Php::Fpm],
        ServerKind::Apache(_) => &[Php::Fpm, Php::Cgi],
        ServerKind::Lighttpd => &[Php::Cgi],
        ServerKind::Herd
        | ServerKind::H2o
        | ServerKind::MiniHttpd
        | ServerKind::Thttpd
        | ServerKind::Caddy
        | ServerKind::Samba
        | ServerKind::Tbench
        | ServerKind::External => &[],
    }
}

/// Why samba refuses every HTTP protocol, page and workload.
pub(crate) const SAMBA_IS_NOT_HTTP: &str =
    "samba serves files over SMB, not HTTP; it runs netbench workloads only";

/// Why tbench_srv refuses every HTTP protocol.
pub(crate) const TBENCH_IS_NOT_HTTP: &str =
    "tbench_srv answers the NetBench trace over plain TCP, not HTTP: the calibration of netbench cells";

/// Why samba and tbench_srv refuse the HTTP servers' settings.
const NOT_HTTP_SETTING: &str = "it speaks no HTTP";

/// Why an external server refuses the settings herd renders for the servers it starts.
const EXTERNAL_SETTING: &str =
    "herd does not start an external server, so it renders no config: set it in the server";

/// Every supported server + PHP pairing, in words, for error messages.
pub(crate) const PHP_SETUPS: &str = "nginx + php-fpm, apache (any MPM) + php-fpm, \
     apache (any MPM) + php-cgi, lighttpd + php-cgi";

/// `Ok` when `kind` can run PHP through `php` (or `php` is `None`).
pub fn check_php(kind: ServerKind, php: Option<Php>) -> Result<(), DriverError> {
    match php {
        Some(php) if !php_choices(kind).contains(&php) => {
            Err(DriverError::PhpNotSupported { server: kind, php })
        }
        _ => Ok(()),
    }
}

/// `Ok` when `kind` can serve `protocol`; otherwise [`DriverError::ProtocolNotSupported`] with
/// the reason ([`ServerKind::supports`]).
pub fn check_protocol(kind: ServerKind, protocol: Protocol) -> Result<(), DriverError> {
    kind.supports(protocol).map_err(|why| DriverError::ProtocolNotSupported {
        server: kind.name().to_owned(),
        protocol,
        why,
    })
}

impl ServerKind {
    /// Every server, Apache once per MPM, in the order lists of them are shown. The one list:
    /// names are read back through it ([`ServerKind::from_name`]), and the lab derives the
    /// servers an experiment may name from it.
    pub const ALL: [ServerKind; 12] = [
        ServerKind::Herd,
        ServerKind::Nginx,
        ServerKind::Apache(Mpm::Event),
        ServerKind::Apache(Mpm::Worker),
        ServerKind::Apache(Mpm::Prefork),
        ServerKind::Lighttpd,
        ServerKind::H2o,
        ServerKind::MiniHttpd,
        ServerKind::Thttpd,
        ServerKind::Caddy,
        ServerKind::Samba,
        ServerKind::Tbench,
    ];

    /// The server whose [`name`](ServerKind::name) is `name`.
    pub fn from_name(name: &str) -> Option<ServerKind> {
        ServerKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The driver that renders it: its name, but `apache` for every MPM (which a driver's
    /// settings choose).
    pub fn driver(self) -> &'static str {
        match self {
            ServerKind::Apache(_) => "apache",
            other => other.name(),
        }
    }

    /// A short name for file names, logs and reports: `herd`, `nginx`, `apache-event`,
    /// `apache-worker`, `apache-prefork`, `lighttpd`, `h2o`, `mini_httpd`, `thttpd`, `caddy`,
    /// `samba`, `tbench`.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Herd => "herd",
            ServerKind::Nginx => "nginx",
            ServerKind::Apache(Mpm::Event) => "apache-event",
            ServerKind::Apache(Mpm::Worker) => "apache-worker",
            ServerKind::Apache(Mpm::Prefork) => "apache-prefork",
            ServerKind::Lighttpd => "lighttpd",
            ServerKind::H2o => "h2o",
            ServerKind::MiniHttpd => "mini_httpd",
            ServerKind::Thttpd => "thttpd",
            ServerKind::Caddy => "caddy",
            ServerKind::Samba => "samba",
            ServerKind::Tbench => "tbench",
            ServerKind::External => "external",
        }
    }

    /// `Ok` when this server (as Debian 12 ships it) can serve `protocol`; otherwise why not,
    /// in words for a user who asked for it.
    pub fn supports(self, protocol: Protocol) -> Result<(), &'static str> {
        use Protocol::{H1Tls, H2c, H1, H2, H3};
        match (self, protocol) {
            (ServerKind::Samba, _) => Err(SAMBA_IS_NOT_HTTP),
            (ServerKind::Tbench, _) => Err(TBENCH_IS_NOT_HTTP),
            // What it speaks is the user's to know; the verification asks it.
            (ServerKind::External, _) => Ok(()),
            (_, H1) => Ok(()),
            (ServerKind::Herd, H3) => Err("herd serve has no HTTP/3: use caddy"),
            (ServerKind::Herd, _) => Ok(()),
            (ServerKind::MiniHttpd, H1Tls) => Ok(()),
            (ServerKind::MiniHttpd, _) => Err("mini_httpd speaks HTTP/1.1 only"),
            (ServerKind::Thttpd, _) => {
                Err("thttpd (sthttpd 2.27) speaks HTTP/1.1 in the clear: no TLS and no HTTP/2")
            }
            (ServerKind::Apache(Mpm::Prefork), H2 | H2c) => {
                Err("mod_http2 does not run under the prefork MPM (Apache turns HTTP/2 off there, \
                 AH10034): use the event or worker MPM")
            }
            (ServerKind::Caddy, _) => Ok(()),
            (ServerKind::Nginx, H3) => {
                Err("nginx 1.22 has no HTTP/3 (its http_v3_module came in 1.25): use caddy")
            }
            (ServerKind::Apache(_), H3) => Err("Apache httpd has no HTTP/3: use caddy"),
            (ServerKind::Lighttpd, H3) => Err("lighttpd 1.4.69 has no HTTP/3: use caddy"),
            (ServerKind::H2o, H3) => Err("h2o 2.2 has no HTTP/3 (it came in 2.3): use caddy"),
            (
                ServerKind::Nginx | ServerKind::Apache(_) | ServerKind::Lighttpd | ServerKind::H2o,
                _,
            ) => Ok(()),
        }
    }

    /// The requests one HTTP/2 connection may carry before this server ends it with a
    /// GOAWAY, as its driver renders it with `keepalive_requests` (None: its default), where
    /// it has such a limit. Measured here with h2load over 3 s at -c 8 -m 10: only nginx
    /// (`keepalive_requests` 1000, applied to HTTP/2 streams since 1.19.7) sent one; h2o,
    /// Apache (its `MaxKeepAliveRequests` 100), lighttpd, caddy and herd serve carried 20,000
    /// and more on a connection.
    pub fn h2_requests_per_connection(self, keepalive_requests: Option<NonZeroU32>) -> Option<u64> {
        match self {
            ServerKind::Nginx => Some(keepalive_requests.map_or(1000, |n| u64::from(n.get()))),
            _ => None,
        }
    }

    /// `Ok` when the driver can set the requests one kept-alive connection carries
    /// ([`ServerSpec::keepalive_requests`]); otherwise why not, in words for a user who asked.
    pub fn takes_keepalive_requests(self) -> Result<(), &'static str> {
        match self {
            ServerKind::Nginx | ServerKind::Apache(_) | ServerKind::Lighttpd => Ok(()),
            ServerKind::Herd => Err("herd serve keeps a connection alive without a request \
                 limit and has no option for one"),
            ServerKind::H2o => Err("h2o 2.2 has no limit on the requests of a connection (only \
                 idle timeouts)"),
            ServerKind::Caddy => Err("caddy 2.6 (Go's net/http) has no limit on the requests \
                 of a connection"),
            ServerKind::MiniHttpd => {
                Err("mini_httpd has no keep-alive: it closes every connection after one request")
            }
            ServerKind::Thttpd => {
                Err("thttpd has no keep-alive: it closes every connection after one request")
            }
            ServerKind::Samba | ServerKind::Tbench => Err(NOT_HTTP_SETTING),
            ServerKind::External => Err(EXTERNAL_SETTING),
        }
    }

    /// `Ok` when the driver can turn sendfile(2) on or off ([`ServerSpec::sendfile`]);
    /// otherwise why not, in words for a user who asked.
    pub fn takes_sendfile(self) -> Result<(), &'static str> {
        match self {
            ServerKind::Nginx | ServerKind::Apache(_) | ServerKind::Lighttpd => Ok(()),
            ServerKind::Herd => Err("herd serve sends files above 16 KiB with sendfile on plain \
                 TCP and has no option to stop it"),
            ServerKind::H2o => Err("h2o 2.2 has no sendfile: it reads files into its buffers"),
            ServerKind::Caddy => Err("caddy 2.6 has no setting for it"),
            ServerKind::MiniHttpd => Err("mini_httpd has no setting for it"),
            ServerKind::Thttpd => {
                Err("thttpd (sthttpd 2.27) has no setting for it: it maps files into memory")
            }
            ServerKind::Samba | ServerKind::Tbench => Err(NOT_HTTP_SETTING),
            ServerKind::External => Err(EXTERNAL_SETTING),
        }
    }

    /// The protocols this server can serve, in [`Protocol::ALL`]'s order.
    pub fn protocols(self) -> Vec<Protocol> {
        Protocol::ALL.iter().copied().filter(|&p| self.supports(p).is_ok()).collect()
    }

    /// Whether a worker count can be set (mini_httpd, samba's smbd and tbench_srv fork one
    /// process per connection; thttpd is one process with one thread).
    pub fn takes_workers(self) -> bool {
        !matches!(
            self,
            ServerKind::MiniHttpd
                | ServerKind::Thttpd
                | ServerKind::Samba
                | ServerKind::Tbench
                | ServerKind::External
        )
    }

    /// Whether this server speaks HTTP at all (every one but samba, which serves SMB, and
    /// tbench_srv, which answers the NetBench trace over plain TCP).
    pub fn speaks_http(self) -> bool {
        !matches!(self, ServerKind::Samba | ServerKind::Tbench)
    }

    /// The port this server always listens on, where it cannot be told another: tbench_srv's
    /// 7003 (dbench 4.0's `TCP_PORT`; tbench has no option for it either).
    pub fn fixed_port(self) -> Option<u16> {
        match self {
            ServerKind::Tbench => Some(crate::tbench::PORT),
            _ => None,
        }
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Mpm {
    /// Every MPM, Debian's default first.
    pub const ALL: [Mpm; 3] = [Mpm::Event, Mpm::Worker, Mpm::Prefork];

    /// Debian's: what Apache runs when no MPM is chosen.
    pub const DEFAULT: Mpm = Mpm::Event;

    /// The module's own name: `event`, `worker`, `prefork` (Apache's `mpm_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Mpm::Event => "event",
            Mpm::Worker => "worker",
            Mpm::Prefork => "prefork",
        }
    }

    /// The MPM whose [`name`](Mpm::name) is `name`.
    pub fn from_name(name: &str) -> Option<Mpm> {
        Mpm::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl Php {
    /// Every way to run PHP.
    pub const ALL: [Php; 2] = [Php::Fpm, Php::Cgi];

    /// `php-fpm` or `php-cgi`.
    pub fn name(self) -> &'static str {
        match self {
            Php::Fpm => "php-fpm",
            Php::Cgi => "php-cgi",
        }
    }
}

impl fmt::Display for Php {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_pairs() {
        let ok = [
            (ServerKind::Nginx, Php::Fpm),
            (ServerKind::Apache(Mpm::Event), Php::Fpm),
            (ServerKind::Apache(Mpm::Worker), Php::Cgi),
            (ServerKind::Apache(Mpm::Prefork), Php::Cgi),
            (ServerKind::Lighttpd, Php::Cgi),
        ];
        for (kind, php) in ok {
            assert!(check_php(kind, Some(php)).is_ok(), "{kind} + {php}");
        }
        for kind in [ServerKind::Herd, ServerKind::H2o, ServerKind::MiniHttpd, ServerKind::Nginx] {
            assert!(check_php(kind, None).is_ok());
        }
    }

    #[test]
    fn unsupported_pairs_name_the_valid_choices() {
        let bad = [
            (ServerKind::Nginx, Php::Cgi),
            (ServerKind::Herd, Php::Fpm),
            (ServerKind::Herd, Php::Cgi),
            (ServerKind::MiniHttpd, Php::Cgi),
            (ServerKind::H2o, Php::Fpm),
            (ServerKind::Lighttpd, Php::Fpm),
        ];
        for (kind, php) in bad {
            let err = check_php(kind, Some(php)).unwrap_err();
            match &err {
                DriverError::PhpNotSupported { server, php: p } => {
                    assert_eq!((*server, *p), (kind, php));
                }
                other => panic!("{other:?}"),
            }
            let msg = err.to_string();
            assert!(msg.starts_with(&format!("{kind} + {php} ")), "{msg}");
            assert!(msg.contains("nginx + php-fpm") && msg.contains("lighttpd + php-cgi"), "{msg}");
        }
    }

    #[test]
    fn every_server_is_read_back_from_its_name() {
        for kind in ServerKind::ALL {
            assert_eq!(ServerKind::from_name(kind.name()), Some(kind), "{kind}");
        }
        // Names are unique: a second server of the same name would read back as the first.
        assert_eq!(ServerKind::from_name("apache"), None, "a driver, not a server");
        assert_eq!(ServerKind::from_name("Nginx"), None);
        assert_eq!(ServerKind::from_name(""), None);
    }

    #[test]
    fn drivers_are_names_less_the_mpm() {
        assert_eq!(ServerKind::Apache(Mpm::Prefork).driver(), "apache");
        assert_eq!(ServerKind::MiniHttpd.driver(), "mini_httpd");
        for kind in ServerKind::ALL.into_iter().filter(|k| !matches!(k, ServerKind::Apache(_))) {
            assert_eq!(kind.driver(), kind.name());
        }
    }

    #[test]
    fn every_mpm_is_read_back_from_its_name() {
        for mpm in Mpm::ALL {
            assert_eq!(Mpm::from_name(mpm.name()), Some(mpm));
            assert_eq!(ServerKind::Apache(mpm).name(), format!("apache-{}", mpm.name()));
        }
        assert_eq!(Mpm::DEFAULT, Mpm::Event);
        assert_eq!(Mpm::from_name("apache-event"), None);
    }

    #[test]
    fn names() {
        assert_eq!(ServerKind::Apache(Mpm::Prefork).to_string(), "apache-prefork");
        assert_eq!(ServerKind::MiniHttpd.name(), "mini_httpd");
        assert_eq!(ServerKind::Samba.to_string(), "samba");
        assert_eq!(Php::Fpm.to_string(), "php-fpm");
    }
}
