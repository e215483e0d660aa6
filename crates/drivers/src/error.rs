//! [`DriverError`]: why a server cannot be rendered (a PHP setup that does not exist, a missing
//! program, a path that cannot go into a config file). Each message names the bad value and,
//! where there is one, the way out.

use std::net::SocketAddr;
use std::path::PathBuf;

use herd_stats::Protocol;

use crate::programs::Install;
use crate::spec::{Php, ServerKind, PHP_SETUPS};

/// Why a driver could not render a server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// The server cannot run PHP that way.
    #[error(
        "{server} + {php} is not a PHP setup herd knows; the valid choices are {setups}",
        setups = PHP_SETUPS
    )]
    PhpNotSupported { server: ServerKind, php: Php },

    /// The server or proxy cannot speak the protocol asked for.
    #[error("{server} cannot serve {protocol} ({described}): {why}", described = protocol.describe())]
    ProtocolNotSupported { server: String, protocol: Protocol, why: &'static str },

    /// The certificate for a TLS listener could not be made.
    #[error("cannot make the TLS certificate for {server}: {why}")]
    Certificate { server: String, why: String },

    /// None of a program's candidate paths is an executable file.
    #[error("{program} is not installed (looked for {looked}): {install}", looked = paths(looked))]
    ProgramMissing { program: &'static str, looked: Vec<PathBuf>, install: Install },

    /// The spec's [`Programs`](crate::Programs) lack a program this server or proxy needs.
    #[error(
        "no path for {program}, which {needed_by} needs, in the spec's programs: build them \
         with Programs::locate(&programs_needed(..)) or proxy_programs_needed(..)"
    )]
    ProgramNotLocated { program: &'static str, needed_by: String },

    /// An external server is the user's, already running: there is nothing to render.
    #[error("an external server is not started by herd: there is no launch to render")]
    External,

    /// The server or proxy has no notion of a worker count.
    #[error("{server} cannot take a worker count ({workers} asked): {why}; leave workers unset")]
    WorkersNotSupported { server: String, workers: u32, why: &'static str },

    /// The server has no such setting (`keepalive_requests`, `sendfile`).
    #[error("{server} cannot take {setting}: {why}; leave {setting} unset")]
    SettingNotSupported { server: String, setting: &'static str, why: &'static str },

    /// A proxy with no server to forward to.
    #[error("{proxy} has no backend to forward to: give it at least one server address")]
    NoBackends { proxy: &'static str },

    /// sslh and nginx-proxy forward to one address (they do not balance).
    #[error("{proxy} forwards to one server ({given} given): balance with haproxy-tcp or nft-numgen instead")]
    OneBackendOnly { proxy: &'static str, given: usize },

    /// A server whose port is built in (tbench_srv's 7003) asked to listen on another.
    #[error("{server} listens on port {port} of every address, built in; {addr} was asked: give it port {port} in a namespace of its own")]
    FixedPort { server: String, port: u16, addr: SocketAddr },

    /// Port 0: the server would pick a port and nobody could tell which.
    #[error(
        "listen address {addr} has port 0: the lab must choose the port, since the server \
         cannot report the one it picks"
    )]
    PortZero { addr: SocketAddr },

    /// A path that must be absolute is not.
    #[error("{what} {path:?} is not an absolute path")]
    RelativePath { what: &'static str, path: PathBuf },

    /// A path is not UTF-8, so it cannot be written into a config file.
    #[error("{what} {path:?} is not UTF-8, so it cannot be written into a config file")]
    PathNotUtf8 { what: &'static str, path: PathBuf },

    /// A path holds a character that some config language would interpret.
    #[error(
        "{what} {path:?} contains {ch:?}, which cannot be written safely into every server's \
         config file (allowed: letters, digits and / . _ - + @ , = : ~)"
    )]
    UnsafePath { what: &'static str, path: PathBuf, ch: char },

    /// A template placeholder the driver gave no value: a bug in herd, refused before a
    /// config with `@NAME@` in it is written.
    #[error(
        "the {template} template's placeholder @{placeholder}@ was given no value: a bug in \
         herd's drivers (no config was written); please report it"
    )]
    UnfilledPlaceholder { template: &'static str, placeholder: String },

    /// The user name holds a character that some config language would interpret.
    #[error(
        "user name {user:?} is not a plain user name (letters, digits, _ . -, not starting with -)"
    )]
    UnsafeUser { user: String },

    /// A Unix socket the server makes under its run directory would have a path longer
    /// than the kernel takes (107 bytes).
    #[error(
        "{server}'s socket {path} would be {len} bytes long, and a Unix socket's path is at \
         most {max}: the run directory is too deep; set TMPDIR to a shorter directory (herd's \
         run directories go there)"
    )]
    SocketPathTooLong { server: String, path: String, len: usize, max: usize },
}

/// `/usr/bin/h2o, /usr/sbin/h2o`: where a program was looked for.
fn paths(looked: &[PathBuf]) -> String {
    looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}
