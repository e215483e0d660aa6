//! `herd serve`: runs the built-in reference server (herd-serve) until Ctrl-C or SIGTERM. Turns
//! flags into a `ServeConfig`, prints the bound address on stdout first thing (scripts read it,
//! notably with `--listen 127.0.0.1:0`), and words start-up errors so the user knows what to
//! change. It serves nothing itself and keeps no state of its own. With `--generate DIR` nothing
//! is served: `serve_generate` writes benchmark file sets and the command exits.
//!
//! Output: stdout carries the `listening on http://ADDR` (`https://` with TLS) line and, with
//! `--access-log`, one
//! Common Log Format line per request; stderr carries the I/O backend's line after the
//! listening line (`herd serve: I/O epoll (auto: …)`) and the summary printed on stop. Exit code 0
//! after Ctrl-C/SIGTERM (stopping is the normal way to end a server), 1 on a start-up or server
//! error. A second Ctrl-C exits at once with 130.

use std::io::Write as _;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{anyhow, Context as _};
use herd_fileset::{SizeList, MAX_SPECWEB_DIRS};
use herd_serve::{
    AppProtocol, ServeConfig, ServeError, Server, StopHandle, TlsConfig, TlsIdentity,
};

use crate::run_args::IoArg;

/// Flags of `herd serve`.
#[derive(Debug, Clone, clap::Args)]
#[command(group = clap::ArgGroup::new("tls").args(["tls_cert", "tls_self_signed"]))]
pub(crate) struct ServeArgs {
    /// Address and port to listen on; port 0 picks a free port (the chosen one is printed)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub(crate) listen: SocketAddr,

    /// Directory to serve files from (and /include's texts, from DIR/include/ if present);
    /// without it only the computed pages (/bytes/N, /9x9, /include, /cpu, /sleep, /stall,
    /// /status/N, /echo, /herd/stats; see docs/serve.md) are served
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,

    /// Worker threads, each with its own event loop [default: one per core]
    #[arg(long, short = 't', value_name = "N")]
    pub(crate) threads: Option<NonZeroUsize>,

    /// Print one Common Log Format line per request on stdout
    #[arg(long)]
    pub(crate) access_log: bool,

    /// The workers' event-loop backend: auto (io_uring where this machine has it and it was
    /// measured faster, else epoll, saying why), epoll, or uring (plain TCP only: HTTP/1 and
    /// h2c; refused with TLS or where io_uring cannot run). See docs/io.md
    #[arg(long, value_enum, value_name = "BACKEND", default_value_t = IoArg::Auto)]
    pub(crate) io: IoArg,

    /// A test knob: spend N µs of CPU (a busy wait on the worker's thread) on every request
    /// before answering it, to make the server slower on purpose. Without it, the
    /// HERD_SERVE_SPEND_US environment variable gives N (so a lab run can slow the herd serve
    /// it starts) [default: 0]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub(crate) spend_us: Option<u32>,

    /// Serve TLS with this certificate chain (PEM, leaf first), and its private key unless
    /// --tls-key names another file
    #[arg(long, value_name = "FILE", conflicts_with = "tls_self_signed")]
    pub(crate) tls_cert: Option<PathBuf>,

    /// The private key (PEM: PKCS#8, PKCS#1 or SEC1) of --tls-cert [default: the --tls-cert
    /// file]
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,

    /// Serve TLS with a certificate made at start-up: P-256, for the listen address,
    /// localhost, 127.0.0.1 and ::1, signed by a CA made at the same time (see --tls-write-ca)
    #[arg(long)]
    pub(crate) tls_self_signed: bool,

    /// With --tls-self-signed: write the CA certificate to trust (PEM) to FILE before the
    /// listening line, for `curl --cacert FILE` or `herd run --ca-file FILE`
    #[arg(long, value_name = "FILE", requires = "tls_self_signed")]
    pub(crate) tls_write_ca: Option<PathBuf>,

    /// With TLS: the protocols ALPN offers, comma-separated, in order of preference
    /// [default: h2,http/1.1]
    #[arg(long, value_name = "LIST", value_delimiter = ',', requires = "tls")]
    pub(crate) alpn: Option<Vec<AppProtocol>>,

    /// Instead of serving, write benchmark file sets under DIR (created if missing; files
    /// already there with the right size are kept, nothing is removed), print one line per set
    /// and exit; `herd serve --root DIR` then serves them. Without --sizes or --specweb-dirs:
    /// the size sweep. See docs/fileset.md
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["root", "listen", "threads", "access_log", "tls", "io"]
    )]
    pub(crate) generate: Option<PathBuf>,

    /// With --generate: write DIR/sizes/<bytes>.html for each size of LIST, bytes with an
    /// optional suffix k, K or Ki (1024), M or Mi (1024²), G or Gi (1024³), at most 64Gi
    /// [default: 1,4,16,64,256,1Ki,4Ki,16Ki,64Ki,256Ki,1Mi]
    #[arg(long, value_name = "LIST", requires = "generate")]
    pub(crate) sizes: Option<SizeList>,

    /// With --generate: write a SPECweb99-like set of N directories (36 files, 4.88 MiB each)
    /// in DIR/specweb, with DIR/specweb/manifest.toml describing its access mix
    #[arg(
        long,
        value_name = "N",
        requires = "generate",
        value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SPECWEB_DIRS))
    )]
    pub(crate) specweb_dirs: Option<u32>,
}

/// The environment variable that gives `--spend-us` when the flag is not given.
const SPEND_US_ENV: &str = "HERD_SERVE_SPEND_US";

/// `--spend-us`, else HERD_SERVE_SPEND_US, else 0.
fn spend_us(flag: Option<u32>) -> anyhow::Result<u32> {
    if let Some(n) = flag {
        return Ok(n);
    }
    match std::env::var(SPEND_US_ENV) {
        Err(std::env::VarError::NotPresent) => Ok(0),
        Ok(text) => parse_spend_us(&text),
        Err(std::env::VarError::NotUnicode(_)) => {
            anyhow::bail!("{SPEND_US_ENV}: not a number of µs from 0 to 1000000")
        }
    }
}

fn parse_spend_us(text: &str) -> anyhow::Result<u32> {
    match text.trim().parse::<u32>() {
        Ok(n) if n <= 1_000_000 => Ok(n),
        _ => anyhow::bail!("{SPEND_US_ENV}={text:?}: not a number of µs from 0 to 1000000"),
    }
}

/// Runs `herd serve` until Ctrl-C or SIGTERM, or writes file sets with `--generate`.
pub(crate) fn run(args: ServeArgs) -> anyhow::Result<()> {
    if let Some(dir) = &args.generate {
        return crate::serve_generate::run(dir, args.sizes, args.specweb_dirs);
    }
    let config = ServeConfig {
        listen: args.listen,
        root: args.root,
        threads: args.threads.map_or(0, NonZeroUsize::get),
        access_log: args.access_log,
        tls: tls_config(
            args.tls_cert,
            args.tls_key,
            args.tls_self_signed,
            args.tls_write_ca,
            args.alpn,
        ),
        spend_per_request: Duration::from_micros(u64::from(spend_us(args.spend_us)?)),
        io: args.io.into(),
        ..ServeConfig::default()
    };
    let scheme = if config.tls.is_some() { "https" } else { "http" };
    let server = Server::bind(config).map_err(start_error)?;

    // The handler goes in before the address is printed: a script that reads the address and
    // interrupts at once must get a graceful stop (temporary files removed), not a killed process.
    let stop = StopHandle::new();
    let on_signal = stop.clone();
    let signalled = AtomicBool::new(false);
    ctrlc::set_handler(move || {
        // The first signal stops gracefully; a second one means the user does not want to wait.
        if signalled.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        on_signal.stop();
    })
    .context("cannot install the Ctrl-C/SIGTERM handler")?;

    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {scheme}://{}", server.local_addr())
        .and_then(|()| stdout.flush())
        .context("cannot write the listening address to stdout")?;
    drop(stdout);
    // Which backend serves is part of what a measurement of this server means: said once,
    // on stderr (stdout is the listening line's and the access log's).
    eprintln!("herd serve: I/O {}", server.io());

    let stats = server.run(stop).context("herd serve failed")?;
    eprintln!(
        "herd serve: stopped after {} requests ({} bad) on {} connections, {} bytes written",
        stats.n_requests, stats.n_bad_requests, stats.n_connections, stats.bytes_written
    );
    Ok(())
}

/// The TLS flags as a [`TlsConfig`]; `None` without --tls-cert or --tls-self-signed (clap
/// refuses the other TLS flags alone).
fn tls_config(
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    self_signed: bool,
    write_ca: Option<PathBuf>,
    alpn: Option<Vec<AppProtocol>>,
) -> Option<TlsConfig> {
    let identity = match cert {
        Some(cert) => TlsIdentity::Pem { key: key.unwrap_or_else(|| cert.clone()), cert },
        None if self_signed => TlsIdentity::SelfSigned { write_ca },
        None => return None,
    };
    Some(TlsConfig { identity, alpn: alpn.unwrap_or_else(|| AppProtocol::ALL.to_vec()) })
}

/// Start-up errors in the user's terms: which flag to change, and how.
fn start_error(err: ServeError) -> anyhow::Error {
    match &err {
        ServeError::AddrInUse { addr } => anyhow!(
            "{addr} is already in use: choose another --listen port, or 0 for any free port"
        ),
        ServeError::BindDenied { addr } => anyhow!(
            "permission denied listening on {addr}: ports below 1024 need root or \
             CAP_NET_BIND_SERVICE; choose a --listen port above 1023"
        ),
        ServeError::RootMissing { path } => {
            anyhow!("--root {}: no such directory", path.display())
        }
        ServeError::RootNotDirectory { path } => {
            anyhow!("--root {}: not a directory", path.display())
        }
        ServeError::RootDenied { path } => anyhow!(
            "--root {}: permission denied: the directory must be readable by this user",
            path.display()
        ),
        ServeError::TlsNoKey { .. } => {
            anyhow!("{err}: name the key's file with --tls-key FILE")
        }
        ServeError::TlsNoCertificate { .. } => {
            anyhow!("{err}: --tls-cert FILE takes the certificate chain, leaf first")
        }
        // They name the flag and what to give instead already.
        ServeError::IoUringTls | ServeError::IoUringRefused { .. } => anyhow!("{err}"),
        _ => anyhow::Error::new(err).context("cannot start herd serve"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spend_us_from_the_environment_is_checked() {
        assert_eq!(parse_spend_us("250").unwrap(), 250);
        assert_eq!(parse_spend_us(" 0 ").unwrap(), 0);
        for bad in ["", "-1", "1.5", "1000001", "many"] {
            let err = parse_spend_us(bad).unwrap_err().to_string();
            assert!(err.contains("HERD_SERVE_SPEND_US"), "{bad}: {err}");
        }
        assert_eq!(spend_us(Some(7)).unwrap(), 7);
    }
}
