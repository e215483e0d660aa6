//! The server's life cycle: `bind` checks the configuration, opens the root and binds one
//! listening socket per worker; `run` starts the workers, waits for all of them, and merges
//! their counters. Does not handle signals (the binary maps Ctrl-C to a [`StopHandle`]) and
//! does not serve anything itself (worker.rs).

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::thread;

use crate::config::{AppProtocol, ServeConfig};
use crate::error::ServeError;
use crate::io_backend;
use crate::listener;
use crate::pages::include_texts::TempTexts;
use crate::read_buf::Limits;
use crate::root::Root;
use crate::stats::{self, ServeStats, WorkerCounters};
use crate::stop::StopHandle;
use crate::tls;
use crate::transport::Transport;
use crate::worker;
use herd_uring::choice::Resolved;

/// A bound server, ready to [`run`](Server::run).
#[derive(Debug)]
pub struct Server {
    listeners: Vec<TcpListener>,
    local_addr: SocketAddr,
    /// Read by the fuzz entry points too, which drive connections without workers.
    pub(crate) shared: Shared,
}

/// What all workers read: the configuration, the root, the include texts' directory, and every
/// worker's counters (each written by its own worker only; read by all for `/herd/stats`).
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: ServeConfig,
    pub(crate) root: Option<Root>,
    pub(crate) counters: Box<[WorkerCounters]>,
    /// Where `/include` reads its four texts.
    pub(crate) include: Root,
    /// `/stall` requests so far, over all workers: every M-th one waits.
    pub(crate) stall_count: AtomicU64,
    /// The TLS configuration every connection's session is made from; `None` for plain TCP.
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    /// ALPN offers `h2`.
    pub(crate) h2_on_tls: bool,
    /// The backend the workers turn.
    pub(crate) io: Resolved,
    /// herd's own include texts, when the root has no `include/` directory; removed on drop.
    _include_texts: Option<TempTexts>,
}

impl Shared {
    /// Whether a connection over `io` may speak HTTP/2: always over TCP (with prior
    /// knowledge), over TLS when ALPN offers `h2`.
    pub(crate) fn h2_allowed(&self, io: &Transport) -> bool {
        match io {
            Transport::Plain(_) => true,
            Transport::Tls(_) => self.h2_on_tls,
            Transport::Ring(_) => true,
        }
    }

    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max_request_line: self.config.max_request_line_bytes,
            max_head: self.config.max_head_bytes,
        }
    }
}

/// Heads shorter than this cannot carry an ordinary browser request.
const MIN_HEAD_BYTES: usize = 1024;

/// Request lines shorter than this cannot carry an ordinary URL.
const MIN_REQUEST_LINE_BYTES: usize = 256;

impl Server {
    /// Checks `config`, opens the root and binds. The address is bound when this returns, so
    /// clients may connect before [`run`](Server::run) is called (they wait in the backlog).
    pub fn bind(config: ServeConfig) -> Result<Server, ServeError> {
        if config.max_head_bytes < MIN_HEAD_BYTES {
            return Err(ServeError::InvalidConfig {
                name: "max_head_bytes",
                value: config.max_head_bytes.to_string(),
                reason: "must be at least 1024",
            });
        }
        if config.max_request_line_bytes < MIN_REQUEST_LINE_BYTES {
            return Err(ServeError::InvalidConfig {
                name: "max_request_line_bytes",
                value: config.max_request_line_bytes.to_string(),
                reason: "must be at least 256",
            });
        }
        if config.idle_timeout.is_zero() {
            return Err(ServeError::InvalidConfig {
                name: "idle_timeout",
                value: format!("{:?}", config.idle_timeout),
                reason: "must be more than zero",
            });
        }
        if config.tls.as_ref().is_some_and(|t| t.alpn.is_empty()) {
            return Err(ServeError::InvalidConfig {
                name: "tls.alpn",
                value: "[]".into(),
                reason: "must offer at least one protocol",
            });
        }
        let threads = if config.threads == 0 {
            thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            config.threads
        };
        let io = io_backend::resolve(config.io, config.tls.is_some())?;
        let root = config.root.as_deref().map(Root::open).transpose()?;
        let (listeners, local_addr) = listener::bind(config.listen, threads)?;
        let tls = config.tls.as_ref().map(|t| tls::server_config(t, local_addr)).transpose()?;
        let h2_on_tls = config.tls.as_ref().is_some_and(|t| t.alpn.contains(&AppProtocol::H2));
        let counters = (0..listeners.len()).map(|_| WorkerCounters::default()).collect();
        let (include, include_texts) = include_dir(config.root.as_deref())?;
        Ok(Server {
            listeners,
            local_addr,
            shared: Shared {
                config,
                root,
                counters,
                include,
                stall_count: AtomicU64::new(0),
                tls,
                h2_on_tls,
                io,
                _include_texts: include_texts,
            },
        })
    }

    /// The bound address, with the actual port if port 0 was asked for.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The backend the workers turn, and why `auto` fell back if it did.
    pub fn io(&self) -> &Resolved {
        &self.shared.io
    }

    /// The number of worker threads `run` starts.
    pub fn n_workers(&self) -> usize {
        self.listeners.len()
    }

    /// Serves until `stop` is stopped, then returns the counters of all workers. HTTP/1
    /// connections still open are closed, and responses in flight are cut off; HTTP/2 ones
    /// get GOAWAY and a few seconds to finish their open streams. If a worker fails, the
    /// others are stopped and the first error is returned.
    pub fn run(self, stop: StopHandle) -> Result<ServeStats, ServeError> {
        let Server { listeners, shared, .. } = self;
        let shared = &shared;
        let results = thread::scope(|scope| {
            let mut handles = Vec::with_capacity(listeners.len());
            let mut results = Vec::new();
            for (id, listener) in listeners.into_iter().enumerate() {
                let worker_stop = stop.clone();
                let spawned = thread::Builder::new().name(format!("herd-serve-{id}")).spawn_scoped(
                    scope,
                    move || {
                        let result = worker::run(id, listener, shared, &worker_stop);
                        if result.is_err() {
                            // One failed worker stops all, rather than leaving the server
                            // silently running at reduced capacity.
                            worker_stop.stop();
                        }
                        result.map_err(|source| ServeError::Worker { worker: id, source })
                    },
                );
                match spawned {
                    Ok(handle) => handles.push((id, handle)),
                    Err(source) => {
                        stop.stop();
                        results.push(Err(ServeError::Spawn { worker: id, source }));
                        break;
                    }
                }
            }
            for (id, handle) in handles {
                results
                    .push(handle.join().unwrap_or(Err(ServeError::WorkerPanicked { worker: id })));
            }
            results
        });
        results.into_iter().collect::<Result<Vec<()>, ServeError>>()?;
        Ok(stats::total(&shared.counters))
    }
}

/// The directory `/include` reads: `<root>/include` if there is one, otherwise herd's own texts
/// written to a private temporary directory.
fn include_dir(root: Option<&Path>) -> Result<(Root, Option<TempTexts>), ServeError> {
    if let Some(dir) = root.map(|r| r.join("include")).filter(|d| d.is_dir()) {
        return Ok((Root::open(&dir)?, None));
    }
    let texts = TempTexts::create()
        .map_err(|source| ServeError::IncludeTexts { path: std::env::temp_dir(), source })?;
    Ok((Root::open(texts.path())?, Some(texts)))
}
