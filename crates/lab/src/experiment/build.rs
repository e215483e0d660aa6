//! From the file as written to a checked [`Experiment`]: names resolve, values are in range,
//! combinations make sense. Each refusal points at the line of the value and lists what is
//! accepted.

use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroU32;
use std::time::Duration;

use herd_engine::{IoChoice, IoError};
use herd_stats::repetitions::Bounds;
use herd_stats::units::parse_duration;
use herd_stats::Protocol;
use herd_store::CALIBRATION_SERVER;
use herd_topo::net::{Path, Shaping};
use herd_topo::CpuSet;
use toml::Spanned;

use super::error::{choices, Errors};
use super::raw::{RawExclude, RawExperiment, RawLoad, RawWorkload};
use super::server::{self, ServerDef};
use super::workload::{WorkloadDef, WorkloadKind};
use super::{
    Axis, AxisName, Experiment, ExperimentError, Placement, Profiler, Repetitions, RunnerSettings,
};
use crate::client::Tool;
use crate::load::{Load, Shape, Warmup};

/// Workloads that need no table.
const BUILTIN_WORKLOADS: &[(&str, WorkloadKind)] =
    &[("9x9", WorkloadKind::NineByNine), ("include", WorkloadKind::Include)];
const WORKLOAD_KINDS: &[&str] =
    &["static", "sweep", "specweb", "9x9", "include", "post", "netbench"];
/// Largest sweep: a typo must not ask for thousands of cells.
const MAX_SWEEP_SIZES: usize = 40;
/// Bounds that keep every cell finite and sane on one machine.
const MAX_REQUESTS: i64 = 100_000_000;
const MAX_CONCURRENCY: i64 = 100_000;
const MAX_LOAD_TIME: Duration = Duration::from_secs(3600);
/// Most requests at once on one connection (`herd run --streams` takes no more).
const MAX_STREAMS: u32 = herd_run::protocol::MAX_STREAMS;

pub(super) fn build(text: &str, source: &str) -> Result<Experiment, ExperimentError> {
    let errs = Errors { source_name: source, text };
    let raw: RawExperiment = toml::from_str(text).map_err(|e| errs.toml(&e))?;

    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(errs.at(
            raw.name.span(),
            "`name` must be letters, digits, - and _ (it names the results)",
        ));
    }

    let servers = servers(&errs, &raw, source)?;
    let workloads = workloads(&errs, &raw)?;
    let loads = loads(&errs, &raw)?;

    // The axes, each value resolved.
    let mut axes = Vec::new();
    let m = &raw.matrix;
    if let Some(c) = m.server.get_ref().iter().find(|s| s.get_ref() == CALIBRATION_SERVER) {
        return Err(errs.at(
            c.span(),
            format!("`{CALIBRATION_SERVER}` is the server herd adds itself to experiments with network paths (herd serve as a null server): remove it from [matrix] server"),
        ));
    }
    let server_names = names(
        &errs,
        "server",
        &m.server,
        |n| servers.contains_key(n),
        || {
            let mut known: Vec<String> =
                super::builtin_servers().into_iter().map(|s| s.name).collect();
            known.extend(raw.servers.keys().cloned());
            known
        },
    )?;
    let mut servers = servers;
    let server_names = calibration(&errs, &raw, server_names, &mut servers)?;
    axes.push(Axis { name: AxisName::Server, values: server_names });
    if let Some(protocols) = &m.protocol {
        for p in protocols.get_ref() {
            p.get_ref().parse::<Protocol>().map_err(|e| errs.at(p.span(), e.to_string()))?;
        }
        let values = names(&errs, "protocol", protocols, |_| true, Vec::new)?;
        axes.push(Axis { name: AxisName::Protocol, values });
    }
    let mut workload_values = Vec::new();
    for w in m.workload.get_ref() {
        let expanded: Vec<&String> =
            workloads.keys().filter(|k| herd_store::names_value(w.get_ref(), k)).collect();
        if expanded.is_empty() {
            let mut known: Vec<String> =
                BUILTIN_WORKLOADS.iter().map(|w| w.0.to_string()).collect();
            known.extend(raw.workloads.keys().cloned());
            return Err(errs.at(
                w.span(),
                format!(
                    "unknown workload `{}`: define [workloads.{}] or use {}",
                    w.get_ref(),
                    w.get_ref(),
                    choices(&known)
                ),
            ));
        }
        // A sweep's sizes in ascending order (BTreeMap order is textual).
        let mut expanded: Vec<&WorkloadDef> =
            expanded.into_iter().filter_map(|k| workloads.get(k)).collect();
        expanded.sort_by_key(|w| match w.kind {
            WorkloadKind::Static { size } => size,
            _ => 0,
        });
        workload_values.extend(expanded.into_iter().map(|w| w.name.clone()));
    }
    no_duplicates(&errs, "workload", &m.workload, &workload_values)?;
    axes.push(Axis { name: AxisName::Workload, values: workload_values });
    let load_names = names(
        &errs,
        "load",
        &m.load,
        |n| loads.contains_key(n),
        || raw.loads.keys().cloned().collect(),
    )?;
    axes.push(Axis { name: AxisName::Load, values: load_names });
    if let Some(clients) = &m.client {
        for c in clients.get_ref() {
            c.get_ref().parse::<Tool>().map_err(|e| errs.at(c.span(), e.to_string()))?;
        }
        let values = names(&errs, "client", clients, |_| true, Vec::new)?;
        axes.push(Axis { name: AxisName::Client, values });
    }
    if let Some(cpus) = &m.server_cpus {
        for c in cpus.get_ref() {
            CpuSet::parse(c.get_ref()).map_err(|e| errs.at(c.span(), e.to_string()))?;
        }
        let values = names(&errs, "server_cpus", cpus, |_| true, Vec::new)?;
        axes.push(Axis { name: AxisName::ServerCpus, values });
    }

    if let Some(paths) = &m.path {
        for p in paths.get_ref() {
            p.get_ref().parse::<Path>().map_err(|e| errs.at(p.span(), e))?;
        }
        let values = names(&errs, "path", paths, |_| true, Vec::new)?;
        axes.push(Axis { name: AxisName::Path, values });
    }
    if let Some(links) = &m.link {
        if m.path.is_none() {
            return Err(errs.at(
                links.span(),
                "[matrix] link shapes the links of a network path: add [matrix] path (e.g. [\"direct\"])",
            ));
        }
        for l in links.get_ref() {
            if l.get_ref() != super::UNSHAPED {
                Shaping::parse(l.get_ref()).map_err(|e| {
                    errs.at(l.span(), format!("{e}; or `{}` for a link as it is", super::UNSHAPED))
                })?;
            }
        }
        let values = names(&errs, "link", links, |_| true, Vec::new)?;
        axes.push(Axis { name: AxisName::Link, values });
    }

    let client_cpus = match &raw.client.cpus {
        Some(c) => CpuSet::parse(c.get_ref())
            .map_err(|e| errs.at(c.span(), format!("[client] cpus: {e}")))?,
        None => CpuSet::All,
    };
    let router_cpus = match &raw.router.cpus {
        Some(c) if m.path.is_none() => {
            return Err(errs.at(
                c.span(),
                "[router] cpus places a network path's router program: add [matrix] path",
            ))
        }
        Some(c) => CpuSet::parse(c.get_ref())
            .map_err(|e| errs.at(c.span(), format!("[router] cpus: {e}")))?,
        None => CpuSet::All,
    };
    let client_threads = match &raw.client.threads {
        Some(t) => Some(int_in(&errs, t, "[client] threads", 1, 256)? as u32),
        None => None,
    };
    let client_io = match &raw.client.io {
        Some(io) => io.get_ref().parse::<IoChoice>().map_err(|_| {
            errs.at(
                io.span(),
                format!(
                    "[client] io = \"{}\" is not an I/O backend: give \"auto\" (io_uring where \
                     it runs and was measured faster, else epoll), \"epoll\" or \"uring\"",
                    io.get_ref()
                ),
            )
        })?,
        None => IoChoice::Auto,
    };
    let client_agents = match &raw.client.agents {
        Some(a) => {
            let max = i64::from(herd_topo::net::plan::MAX_AGENTS);
            Some(int_in(&errs, a, "[client] agents", 1, max)? as u8).filter(|&n| n > 1)
        }
        None => None,
    };

    let repetitions = repetitions(&errs, &raw)?;
    let runner = runner(&errs, &raw)?;
    let exclude = exclude(&errs, &raw.exclude, &axes)?;
    let reference = raw.reference.as_ref().map(|r| r.get_ref().clone());

    // Keep only what the matrix uses.
    let used = |axis: AxisName| -> BTreeSet<String> {
        axes.iter()
            .find(|a| a.name == axis)
            .map(|a| a.values.iter().cloned().collect())
            .unwrap_or_default()
    };
    let (su, wu, lu) = (used(AxisName::Server), used(AxisName::Workload), used(AxisName::Load));
    let mut experiment = Experiment {
        title: raw.title.clone().unwrap_or_else(|| name.clone()),
        name,
        description: raw.description.clone(),
        reference,
        published: None,
        report: herd_store::ReportDefaults::default(),
        source: source.to_string(),
        text: text.to_string(),
        axes,
        servers: servers.into_iter().filter(|(k, _)| su.contains(k)).collect(),
        workloads: workloads.into_iter().filter(|(k, _)| wu.contains(k)).collect(),
        loads: loads.into_iter().filter(|(k, _)| lu.contains(k)).collect(),
        client_cpus,
        server_cpus: CpuSet::All,
        client_threads,
        client_io,
        client_trace: raw.client.trace_context.unwrap_or(false),
        client_agents,
        router_cpus,
        repetitions,
        runner,
        exclude,
        hosts: super::hosts::build(&errs, &raw, source)?,
    };
    check_cells(&errs, &raw, &experiment)?;
    experiment.published = super::published::build(&errs, &raw, &experiment)?;
    experiment.report = super::report::build(&errs, &raw, &experiment)?;
    experiment.runner.controls = super::control::build(&errs, &raw, &experiment)?;
    experiment.runner.server_count = super::server_count::build(&errs, &raw, &experiment)?;
    Ok(experiment)
}

/// With network paths (and unless `[runner] calibrate = false`), herd serve joins the
/// server axis as [`CALIBRATION_SERVER`]: a null server through every path, whose rate is
/// the path's own ceiling (and, over `direct`, the client's).
fn calibration(
    errs: &Errors<'_>,
    raw: &RawExperiment,
    mut names: Vec<String>,
    servers: &mut BTreeMap<String, ServerDef>,
) -> Result<Vec<String>, ExperimentError> {
    let wanted = raw.runner.calibrate.as_ref();
    if let Some(s) = raw.servers.get(CALIBRATION_SERVER).map(|s| s.driver.span()) {
        return Err(errs.at(
            s,
            format!("the server name `{CALIBRATION_SERVER}` is herd's, for the path calibration cells: choose another name"),
        ));
    }
    match (&raw.matrix.path, wanted.map(|w| (*w.get_ref(), w.span()))) {
        (None, Some((true, span))) => {
            return Err(errs.at(
                span,
                "[runner] calibrate runs herd serve through every network path: add [matrix] path",
            ))
        }
        (Some(_), None | Some((true, _))) => {
            names.push(CALIBRATION_SERVER.to_owned());
            servers.insert(
                CALIBRATION_SERVER.to_owned(),
                ServerDef {
                    name: CALIBRATION_SERVER.to_owned(),
                    kind: herd_drivers::ServerKind::Herd,
                    php: None,
                    workers: None,
                    binary: None,
                    config: None,
                    external: None,
                    keepalive_requests: None,
                    sendfile: None,
                },
            );
        }
        _ => {}
    }
    Ok(names)
}

/// Why `cell` cannot spread its client over `n` agents, if it cannot.
fn agents_refusal(cell: &crate::matrix::Cell, n: u8) -> Option<String> {
    if cell.client != crate::client::Tool::Herd {
        return Some(format!(
            "only herd's own client spreads over agents; {} runs as one process: leave `agents` \
             out, or make herd the client",
            cell.client
        ));
    }
    if cell.workload.is_netbench() {
        return Some("NetBench's clients are smbtorture's, not herd's agents".into());
    }
    if cell.path.is_some() && cell.link.is_some() {
        return Some(format!(
            "{n} agents on a shaped link: each would have a link of its own, not the one link \
             the cell names; leave `link` out of this experiment, or run one agent"
        ));
    }
    None
}

/// Every cell that runs: its server can serve its workload, its load's `streams` go with
/// its protocol, and its client can run its load. (A cell whose protocol its server, client
/// or path cannot carry is refused on its own, not the file: `crate::refusal`.)
fn check_cells(
    errs: &Errors<'_>,
    raw: &RawExperiment,
    e: &Experiment,
) -> Result<(), ExperimentError> {
    for cell in crate::matrix::runnable(e) {
        if let (Some(n), Some(a)) = (e.client_agents, &raw.client.agents) {
            if let Some(reason) = agents_refusal(&cell, n) {
                return Err(
                    errs.at(a.span(), format!("[client] agents: cell {}: {reason}", cell.key))
                );
            }
        }
        if let (Some(io), crate::client::Tool::Herd) = (&raw.client.io, cell.client) {
            if let Err(reason) = io_refusal(e.client_io, cell.protocol) {
                return Err(errs.at(
                    io.span(),
                    format!("[client] io = \"{}\": cell {}: {reason}", e.client_io, cell.key),
                ));
            }
        }
        if cell.workload.is_netbench() {
            // smbtorture's steps, not an HTTP request: the load is all there is to check.
            if let Err(reason) = crate::client::smbtorture::steps(&cell.load) {
                return Err(errs.at(raw.matrix.load.span(), format!("cell {}: {reason}", cell.key)));
            }
            continue;
        }
        if let Some(streams) = raw.loads.get(&cell.load_name).and_then(|l| l.streams.as_ref()) {
            if !cell.protocol.is_multiplexed() {
                return Err(errs.at(
                    streams.span(),
                    format!(
                        "[loads.{load}] streams: cell {key} speaks {protocol} ({described}), \
                         one request at a time on a connection; `streams` is for h2, h2c and \
                         h3: leave the pair out with [[exclude]] protocol = \"{protocol}\", \
                         load = \"{load}\"",
                        load = cell.load_name,
                        key = cell.key,
                        protocol = cell.protocol,
                        described = cell.protocol.describe(),
                    ),
                ));
            }
        }
        // The docroot is a placeholder: only the request's shape matters here.
        let Some(request) = cell.request(std::path::Path::new("."), None) else {
            return Err(errs.at(
                raw.matrix.workload.span(),
                format!(
                    "{}; or leave the pair out with [[exclude]] server = \"{}\", workload = \"{}\"",
                    cell.workload.unsupported_reason(&cell.server),
                    cell.server.name,
                    cell.workload.name
                ),
            ));
        };
        if let Err(reason) = crate::client::supports(
            cell.client,
            cell.protocol,
            &cell.load,
            &request,
            e.client_threads,
        ) {
            return Err(errs.at(raw.matrix.load.span(), format!("cell {}: {reason}", cell.key)));
        }
    }
    Ok(())
}

/// Why herd's client cannot run `protocol` on the backend `io` names, whatever the machine (a
/// protocol without its worker on it yet); whether the machine allows it is the run's to say.
fn io_refusal(io: IoChoice, protocol: Protocol) -> Result<(), String> {
    use herd_engine::io_choice::{check_protocol, WireKind};
    let kind = match protocol {
        Protocol::H1 | Protocol::H1Tls => WireKind::Http1,
        Protocol::H2 | Protocol::H2c => WireKind::Http2,
        Protocol::H3 => WireKind::Http3,
    };
    check_protocol(io, kind).map_err(|e| match e {
        IoError::NotForProtocol { backend, protocol, .. } => format!(
            "herd's {backend} backend does not carry {protocol} yet: give io = \"auto\" (which \
             says so and measures on epoll) or \"epoll\""
        ),
        other => other.to_string(),
    })
}

fn servers(
    errs: &Errors<'_>,
    raw: &RawExperiment,
    source: &str,
) -> Result<BTreeMap<String, ServerDef>, ExperimentError> {
    let mut out: BTreeMap<String, ServerDef> = BTreeMap::new();
    // With a `[hosts]` server, a binary is a path on that host, located there when the run
    // reaches it (`runner::server_host`), not on this machine.
    let on_host = raw.hosts.as_ref().is_some_and(|h| h.get_ref().server.is_some());
    for def in super::builtin_servers() {
        out.insert(def.name.clone(), def);
    }
    for (name, s) in &raw.servers {
        let kind = server::kind(s.driver.get_ref(), s.mpm.as_ref().map(|m| m.get_ref().as_str()))
            .map_err(|e| {
            errs.at(
                s.mpm.as_ref().map_or(s.driver.span(), |m| m.span()),
                format!("[servers.{name}] {e}"),
            )
        })?;
        let external = external(errs, name, kind, s, raw, source)?;
        let php = match &s.php {
            Some(p) => Some(
                server::php(kind, p.get_ref())
                    .map_err(|e| errs.at(p.span(), format!("[servers.{name}] {e}")))?,
            ),
            None => None,
        };
        let workers = match &s.workers {
            Some(w) if !kind.takes_workers() => {
                return Err(errs.at(
                    w.span(),
                    format!(
                        "[servers.{name}] workers: {kind} forks one process per connection and takes no worker count; remove `workers`"
                    ),
                ))
            }
            Some(w) => {
                NonZeroU32::new(
                    int_in(errs, w, &format!("[servers.{name}] workers"), 1, 1024)? as u32
                )
            }
            None => None,
        };
        let binary = match &s.binary {
            Some(b) => Some(binary(errs, name, b, source, on_host)?),
            None => None,
        };
        let config = match &s.config {
            Some(c) => Some(user_config(errs, name, kind, c, source)?),
            None => None,
        };
        let (keepalive_requests, sendfile) = settings(errs, name, kind, s, config.is_some())?;
        out.insert(
            name.clone(),
            ServerDef {
                name: name.clone(),
                kind,
                php,
                workers,
                binary,
                config,
                external,
                keepalive_requests,
                sendfile,
            },
        );
    }
    Ok(out)
}

/// The most `keepalive_requests` takes: lighttpd's setting is 16 bits.
const KEEPALIVE_REQUESTS_MAX: i64 = 65_535;

/// `keepalive_requests` and `sendfile`: each refused at its line by a driver that has no such
/// setting (with the driver's reason), and beside `config`, where the user's own file decides
/// them. An external server refuses them in `external`, with its other keys.
fn settings(
    errs: &Errors<'_>,
    name: &str,
    kind: herd_drivers::ServerKind,
    s: &super::raw::RawServer,
    own_config: bool,
) -> Result<(Option<NonZeroU32>, Option<bool>), ExperimentError> {
    let at = |span: std::ops::Range<usize>, why: String| {
        errs.at(span, format!("[servers.{name}] {why}"))
    };
    let checks = [
        (
            "keepalive_requests",
            s.keepalive_requests.as_ref().map(|v| v.span()),
            kind.takes_keepalive_requests(),
        ),
        ("sendfile", s.sendfile.as_ref().map(|v| v.span()), kind.takes_sendfile()),
    ];
    for (key, span, takes) in checks {
        let Some(span) = span else { continue };
        if let Err(why) = takes {
            return Err(at(span, format!("{key}: {kind} cannot take it: {why}; remove `{key}`")));
        }
        if own_config {
            return Err(at(
                span,
                format!(
                    "{key}: the server reads your own `config` file, which decides this; set \
                     it there and remove `{key}`"
                ),
            ));
        }
    }
    let keepalive_requests = match &s.keepalive_requests {
        Some(n) if *n.get_ref() == 0 => {
            return Err(at(
                n.span(),
                "keepalive_requests = 0: give at least 1 (the servers read 0 differently: \
                 Apache as no limit, nginx and lighttpd as no keep-alive at all)"
                    .into(),
            ))
        }
        // lighttpd keeps the count in 16 bits; one bound for every driver.
        Some(n) => NonZeroU32::new(int_in(
            errs,
            n,
            &format!("[servers.{name}] keepalive_requests"),
            1,
            KEEPALIVE_REQUESTS_MAX,
        )? as u32),
        None => None,
    };
    Ok((keepalive_requests, s.sendfile.as_ref().map(|v| *v.get_ref())))
}

/// `driver = "external"`: its `url` (and `pid`, `ca_file`), nothing a started server takes;
/// the other drivers take neither. The URL's address must be one herd may load: loopback,
/// its own 198.18.0.0/15, or (checked when the hosts are reached) the `[hosts]` server's.
fn external(
    errs: &Errors<'_>,
    name: &str,
    kind: herd_drivers::ServerKind,
    s: &super::raw::RawServer,
    raw: &RawExperiment,
    source: &str,
) -> Result<Option<super::External>, ExperimentError> {
    let at = |span: std::ops::Range<usize>, why: String| {
        errs.at(span, format!("[servers.{name}] {why}"))
    };
    if kind != herd_drivers::ServerKind::External {
        if let Some(u) = &s.url {
            return Err(at(u.span(), "url: only an external server (driver = \"external\") takes a URL; herd gives the servers it starts their address".into()));
        }
        if let Some(p) = &s.pid {
            return Err(at(p.span(), "pid: only an external server (driver = \"external\") takes a pid; herd knows the servers it starts".into()));
        }
        if let Some(c) = &s.ca_file {
            return Err(at(c.span(), "ca_file: only an external server (driver = \"external\") takes one; herd makes the certificates of the servers it starts".into()));
        }
        return Ok(None);
    }
    for (key, span) in [
        ("php", s.php.as_ref().map(|v| v.span())),
        ("workers", s.workers.as_ref().map(|v| v.span())),
        ("binary", s.binary.as_ref().map(|v| v.span())),
        ("config", s.config.as_ref().map(|v| v.span())),
        ("keepalive_requests", s.keepalive_requests.as_ref().map(|v| v.span())),
        ("sendfile", s.sendfile.as_ref().map(|v| v.span())),
    ] {
        if let Some(span) = span {
            return Err(at(span, format!("{key}: herd does not start an external server, so it takes no {key}: set it in the server itself")));
        }
    }
    let Some(url) = &s.url else {
        return Err(at(
            s.driver.span(),
            "an external server needs `url = \"http://ADDRESS:PORT\"`: where it answers".into(),
        ));
    };
    let text = url.get_ref();
    let (tls, rest) = match (text.strip_prefix("http://"), text.strip_prefix("https://")) {
        (Some(r), _) => (false, r),
        (_, Some(r)) => (true, r),
        _ => {
            return Err(at(
                url.span(),
                format!("url `{text}`: give http://ADDRESS:PORT or https://ADDRESS:PORT"),
            ))
        }
    };
    let addr: std::net::SocketAddr = rest.trim_end_matches('/').parse().map_err(|_| {
        at(url.span(), format!("url `{text}`: give an IP address and a port (http://198.18.3.2:8080, http://[::1]:8080), no path: herd adds each workload's"))
    })?;
    let server_host = raw.hosts.as_ref().is_some_and(|h| h.get_ref().server.is_some());
    if herd_engine::check_allowed(addr.ip()).is_err() && !server_host {
        return Err(at(url.span(), format!("url `{text}`: herd sends load only to 127.0.0.0/8, ::1 and its own 198.18.0.0/15; to load a machine of yours, name it as [hosts] server (docs/hosts.md)")));
    }
    let pid = match &s.pid {
        Some(p) => {
            Some(int_in(errs, p, &format!("[servers.{name}] pid"), 1, i64::from(i32::MAX))? as u32)
        }
        None => None,
    };
    let ca_file = match (&s.ca_file, tls) {
        (Some(c), true) => {
            let written = std::path::Path::new(c.get_ref());
            let path = if written.is_absolute() {
                written.to_path_buf()
            } else {
                std::path::Path::new(source).parent().unwrap_or(std::path::Path::new("")).join(written)
            };
            if !path.is_file() {
                return Err(at(c.span(), format!("ca_file: no file {} (a relative path is read from the experiment file's directory)", path.display())));
            }
            Some(path)
        }
        (Some(c), false) => {
            return Err(at(c.span(), "ca_file: the url is http://, which has no certificate to verify".into()))
        }
        (None, true) => {
            return Err(at(url.span(), "an https:// url needs `ca_file`: the CA that signed the server's certificate, which the client and the verification check it against".into()))
        }
        (None, false) => None,
    };
    Ok(Some(super::External { addr, tls, ca_file, pid }))
}

/// `[servers.NAME] config`: the user's file (beside the experiment file when relative), read
/// and its placeholders checked now; refused for a server started with arguments alone.
fn user_config(
    errs: &Errors<'_>,
    name: &str,
    kind: herd_drivers::ServerKind,
    c: &Spanned<String>,
    source: &str,
) -> Result<crate::server_config::UserConfig, ExperimentError> {
    use herd_drivers::ServerKind as K;
    if matches!(kind, K::Herd | K::MiniHttpd | K::Thttpd | K::Samba | K::Tbench) {
        return Err(errs.at(
            c.span(),
            format!(
                "[servers.{name}] config: {kind} takes its settings as arguments, with no config                  file to replace"
            ),
        ));
    }
    let written = std::path::Path::new(c.get_ref());
    let path = if written.is_absolute() {
        written.to_path_buf()
    } else {
        std::path::Path::new(source).parent().unwrap_or(std::path::Path::new("")).join(written)
    };
    crate::server_config::UserConfig::read(&path)
        .map_err(|e| errs.at(c.span(), format!("[servers.{name}] config: {e}")))
}

/// `[servers.NAME] binary`: as written when absolute, else beside the experiment file; an
/// executable file, checked now so that a typo fails at its line, not at the first run.
/// With a server host (`on_host`) it is a path on that host: absolute, as nothing here
/// says where a relative one would start there, and checked there when the run reaches
/// the host (before the store opens), not here.
fn binary(
    errs: &Errors<'_>,
    name: &str,
    b: &Spanned<String>,
    source: &str,
    on_host: bool,
) -> Result<std::path::PathBuf, ExperimentError> {
    use std::os::unix::fs::PermissionsExt as _;
    let written = std::path::Path::new(b.get_ref());
    if on_host {
        if !written.is_absolute() {
            return Err(errs.at(
                b.span(),
                format!(
                    "[servers.{name}] binary: with a [hosts] server, the binary is a path on \
                     that host: write it absolute (not {})",
                    written.display()
                ),
            ));
        }
        return Ok(written.to_path_buf());
    }
    let path = if written.is_absolute() {
        written.to_path_buf()
    } else {
        std::path::Path::new(source).parent().unwrap_or(std::path::Path::new("")).join(written)
    };
    let path = std::path::absolute(&path).unwrap_or(path);
    let executable =
        std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if !executable {
        return Err(errs.at(
            b.span(),
            format!(
                "[servers.{name}] binary: {} is not an executable file (a relative path is read \
                 from the experiment file's directory)",
                path.display()
            ),
        ));
    }
    Ok(path)
}

fn workloads(
    errs: &Errors<'_>,
    raw: &RawExperiment,
) -> Result<BTreeMap<String, WorkloadDef>, ExperimentError> {
    let mut out = BTreeMap::new();
    for (name, kind) in BUILTIN_WORKLOADS {
        out.insert(name.to_string(), WorkloadDef { name: name.to_string(), kind: *kind });
    }
    for (name, w) in &raw.workloads {
        if name.contains(':') {
            return Err(
                errs.at(w.kind.span(), format!("workload name `{name}` must not contain `:`"))
            );
        }
        for def in workload(errs, name, w)? {
            out.insert(def.name.clone(), def);
        }
    }
    Ok(out)
}

fn workload(
    errs: &Errors<'_>,
    name: &str,
    w: &RawWorkload,
) -> Result<Vec<WorkloadDef>, ExperimentError> {
    let kind = w.kind.get_ref().as_str();
    let ctx = format!("[workloads.{name}]");
    let allowed: &[&str] = match kind {
        "static" | "post" => &["size"],
        "sweep" => &["from", "to", "factor"],
        "specweb" => &["dirs"],
        "9x9" | "include" | "netbench" => &[],
        other => {
            return Err(errs.at(
                w.kind.span(),
                format!("{ctx} unknown kind `{other}`: use {}", choices(WORKLOAD_KINDS)),
            ))
        }
    };
    let given = [
        ("size", w.size.as_ref().map(|s| s.span())),
        ("from", w.from.as_ref().map(|s| s.span())),
        ("to", w.to.as_ref().map(|s| s.span())),
        ("factor", w.factor.as_ref().map(|s| s.span())),
        ("dirs", w.dirs.as_ref().map(|s| s.span())),
    ];
    for (key, span) in given {
        if let Some(span) = span {
            if !allowed.contains(&key) {
                return Err(errs.at(
                    span,
                    format!(
                        "{ctx} `{key}` does not apply to kind = \"{kind}\" (it takes {})",
                        choices(allowed)
                    ),
                ));
            }
        }
    }
    let one = |k: WorkloadKind| Ok(vec![WorkloadDef { name: name.to_string(), kind: k }]);
    let need = |v: &Option<Spanned<toml::Value>>, key: &str| -> Result<u64, ExperimentError> {
        match v {
            Some(v) => size(errs, v, &format!("{ctx} {key}")),
            None => Err(errs.at(
                w.kind.span(),
                format!("{ctx} kind = \"{kind}\" needs `{key}` (bytes, e.g. 6397 or \"1Mi\")"),
            )),
        }
    };
    match kind {
        "static" => one(WorkloadKind::Static { size: need(&w.size, "size")? }),
        "post" => one(WorkloadKind::Post { size: need(&w.size, "size")? }),
        "9x9" => one(WorkloadKind::NineByNine),
        "include" => one(WorkloadKind::Include),
        "netbench" => one(WorkloadKind::Netbench),
        "specweb" => {
            let dirs = match &w.dirs {
                Some(d) => int_in(
                    errs,
                    d,
                    &format!("{ctx} dirs"),
                    1,
                    herd_fileset::MAX_SPECWEB_DIRS as i64,
                )? as u32,
                None => {
                    return Err(errs.at(
                        w.kind.span(),
                        format!(
                            "{ctx} kind = \"specweb\" needs `dirs` (directories of ~4.9 MB each)"
                        ),
                    ))
                }
            };
            one(WorkloadKind::Specweb { dirs })
        }
        _ => {
            // sweep
            let from = need(&w.from, "from")?;
            let to = need(&w.to, "to")?;
            let factor = match &w.factor {
                Some(f) => int_in(errs, f, &format!("{ctx} factor"), 2, 1024)? as u64,
                None => 4,
            };
            if from == 0 || from > to {
                let span = w.from.as_ref().map_or(w.kind.span(), |f| f.span());
                return Err(errs.at(
                    span,
                    format!("{ctx} needs 1 <= from <= to (got from = {from}, to = {to})"),
                ));
            }
            let mut sizes = vec![from];
            while let Some(&last) = sizes.last() {
                match last.checked_mul(factor) {
                    Some(next) if next <= to => sizes.push(next),
                    _ => break,
                }
                if sizes.len() > MAX_SWEEP_SIZES {
                    return Err(errs.at(w.kind.span(), format!("{ctx} gives more than {MAX_SWEEP_SIZES} sizes: raise `factor` or narrow from..to")));
                }
            }
            Ok(sizes
                .into_iter()
                .map(|size| WorkloadDef {
                    name: herd_store::sweep_label(name, size),
                    kind: WorkloadKind::Static { size },
                })
                .collect())
        }
    }
}

fn loads(
    errs: &Errors<'_>,
    raw: &RawExperiment,
) -> Result<BTreeMap<String, Load>, ExperimentError> {
    raw.loads.iter().map(|(name, l)| Ok((name.clone(), load(errs, name, l)?))).collect()
}

fn load(errs: &Errors<'_>, name: &str, l: &RawLoad) -> Result<Load, ExperimentError> {
    let ctx = format!("[loads.{name}]");
    let dur = |d: &Spanned<String>, key: &str| -> Result<Duration, ExperimentError> {
        let v = parse_duration(d.get_ref())
            .map_err(|e| errs.at(d.span(), format!("{ctx} {key} {e}")))?;
        if v > MAX_LOAD_TIME {
            return Err(
                errs.at(d.span(), format!("{ctx} {key} is over an hour: split the experiment"))
            );
        }
        Ok(v)
    };
    let concurrency_given = l.concurrency.as_ref().map(|c| c.span());
    let concurrency = match &l.concurrency {
        Some(c) => int_in(errs, c, &format!("{ctx} concurrency"), 1, MAX_CONCURRENCY)? as u32,
        None => 1,
    };
    let shapes =
        [l.requests.is_some(), l.rate.is_some(), l.steps.is_some(), l.rate_steps.is_some()];
    let anchor = l
        .requests
        .as_ref()
        .map(|r| r.span())
        .or(l.rate.as_ref().map(|r| r.span()))
        .or(l.steps.as_ref().map(|r| r.span()))
        .or(l.rate_steps.as_ref().map(|r| r.span()))
        .or(l.duration.as_ref().map(|r| r.span()))
        .unwrap_or(0..0);
    if shapes.iter().filter(|&&b| b).count() > 1 {
        return Err(errs.at(
            anchor,
            format!("{ctx} give one of `requests`, `rate`, `steps` or `rate_steps`, not several"),
        ));
    }
    let shape = if let Some(n) = &l.requests {
        if let Some(d) = &l.duration {
            return Err(errs.at(d.span(), format!("{ctx} `requests` and `duration` together: a cell stops on one of them, give one")));
        }
        Shape::Requests {
            n_requests: int_in(errs, n, &format!("{ctx} requests"), 1, MAX_REQUESTS)? as u64,
            concurrency,
        }
    } else if let Some(r) = &l.rate {
        // The one rule for a request rate (herd_stats::units), as `herd run --rate` has it.
        let per_second = herd_stats::units::RequestRate::new(*r.get_ref())
            .ok_or_else(|| {
                errs.at(
                    r.span(),
                    format!(
                        "{ctx} rate must be more than 0 and at most 10000000 requests per second"
                    ),
                )
            })?
            .per_second();
        let Some(d) = &l.duration else {
            return Err(errs.at(
                r.span(),
                format!("{ctx} `rate` needs a `duration`, e.g. duration = \"10s\""),
            ));
        };
        let connections = match &l.connections {
            Some(c) => int_in(errs, c, &format!("{ctx} connections"), 1, MAX_CONCURRENCY)? as u32,
            None => concurrency.max(64),
        };
        Shape::Rate { per_second, duration: dur(d, "duration")?, connections }
    } else if let Some(steps) = &l.steps {
        let mut clients = Vec::new();
        for &c in steps.get_ref() {
            if !(1..=MAX_CONCURRENCY).contains(&c) {
                return Err(errs.at(
                    steps.span(),
                    format!("{ctx} steps: {c} clients is out of range 1..={MAX_CONCURRENCY}"),
                ));
            }
            clients.push(c as u32);
        }
        if clients.is_empty() {
            return Err(errs.at(
                steps.span(),
                format!("{ctx} steps is empty: list the clients per step, e.g. [1, 2, 4, 8]"),
            ));
        }
        let Some(step) = &l.step else {
            return Err(errs.at(
                steps.span(),
                format!("{ctx} `steps` needs `step`, the time per step, e.g. step = \"5s\""),
            ));
        };
        Shape::Steps { clients, step: dur(step, "step")? }
    } else if let Some(rates) = &l.rate_steps {
        rate_steps(errs, &ctx, l, rates, concurrency_given)?
    } else if let Some(d) = &l.duration {
        Shape::Duration { duration: dur(d, "duration")?, concurrency }
    } else {
        return Err(errs.file(format!(
            "{ctx} says neither how many requests nor how long: give `requests` (ab's -n), \
             `duration`, `rate` + `duration`, `steps` + `step`, or `rate_steps` + `step`"
        )));
    };
    if l.connections.is_some() && !matches!(shape, Shape::Rate { .. } | Shape::RateSteps { .. }) {
        let span = l.connections.as_ref().map_or(0..0, |c| c.span());
        return Err(errs.at(
            span,
            format!(
                "{ctx} `connections` is for `rate` and `rate_steps` loads; closed loops use \
                 `concurrency`"
            ),
        ));
    }
    if l.step.is_some() && !matches!(shape, Shape::Steps { .. } | Shape::RateSteps { .. }) {
        let span = l.step.as_ref().map_or(0..0, |c| c.span());
        return Err(errs.at(span, format!("{ctx} `step` goes with `steps` or `rate_steps`")));
    }
    let warmup = match (&l.warmup, &l.warmup_requests) {
        (Some(w), Some(_)) => {
            return Err(errs.at(
                w.span(),
                format!("{ctx} give `warmup` (a time) or `warmup_requests`, not both"),
            ))
        }
        (Some(w), None) => Warmup::Duration(dur(w, "warmup")?),
        (None, Some(n)) => {
            Warmup::Requests(
                int_in(errs, n, &format!("{ctx} warmup_requests"), 1, MAX_REQUESTS)? as u64
            )
        }
        (None, None) => Warmup::None,
    };
    let timeout = match &l.timeout {
        Some(t) => dur(t, "timeout")?,
        None => Duration::from_secs(30),
    };
    let streams = match &l.streams {
        Some(s) => {
            NonZeroU32::new(
                int_in(errs, s, &format!("{ctx} streams"), 1, i64::from(MAX_STREAMS))? as u32
            )
        }
        None => None,
    };
    // Connections are kept alive unless the file says otherwise, as every browser and modern
    // client does; a new connection per request (ab without -k) is asked for in so many words,
    // `keep_alive = false`, so that no HTTP/2 or HTTP/3 cell opens one per request by default.
    Ok(Load { shape, keep_alive: l.keep_alive.unwrap_or(true), warmup, timeout, streams })
}

/// `rate_steps = [1000, 2000, 4000]` with `step`: an open loop at each offered rate in turn,
/// over `connections` (as a `rate` load's, 64 by default). A closed loop's `concurrency` and
/// a total `duration` would say something else of the same load, so both are refused.
fn rate_steps(
    errs: &Errors<'_>,
    ctx: &str,
    l: &RawLoad,
    rates: &Spanned<Vec<f64>>,
    concurrency_given: Option<std::ops::Range<usize>>,
) -> Result<Shape, ExperimentError> {
    if let Some(span) = concurrency_given {
        return Err(errs.at(
            span,
            format!(
                "{ctx} `rate_steps` is an open loop: give its `connections`, not a closed \
                 loop's `concurrency`"
            ),
        ));
    }
    if let Some(d) = &l.duration {
        return Err(errs.at(
            d.span(),
            format!(
                "{ctx} `rate_steps` runs each rate for `step`, not `duration`: write step = \
                 \"{}\"",
                d.get_ref()
            ),
        ));
    }
    let mut per_second = Vec::new();
    for &r in rates.get_ref() {
        // The one rule for a request rate (herd_stats::units), as `herd run --rate-steps`.
        let Some(rate) = herd_stats::units::RequestRate::new(r) else {
            return Err(errs.at(
                rates.span(),
                format!(
                    "{ctx} rate_steps: {r} is not a rate: each must be more than 0 and at most \
                     10000000 requests per second"
                ),
            ));
        };
        per_second.push(rate.per_second());
    }
    if per_second.is_empty() {
        return Err(errs.at(
            rates.span(),
            format!(
                "{ctx} rate_steps is empty: list the offered rates in requests/s, e.g. \
                 [1000, 2000, 4000]"
            ),
        ));
    }
    let Some(step) = &l.step else {
        return Err(errs.at(
            rates.span(),
            format!("{ctx} `rate_steps` needs `step`, the time per rate, e.g. step = \"5s\""),
        ));
    };
    let step = match parse_duration(step.get_ref()) {
        Ok(d) if d <= MAX_LOAD_TIME => d,
        Ok(_) => {
            return Err(
                errs.at(step.span(), format!("{ctx} step is over an hour: split the experiment"))
            )
        }
        Err(e) => return Err(errs.at(step.span(), format!("{ctx} step {e}"))),
    };
    let connections = match &l.connections {
        Some(c) => int_in(errs, c, &format!("{ctx} connections"), 1, MAX_CONCURRENCY)? as u32,
        None => 64,
    };
    Ok(Shape::RateSteps { rates: per_second, step, connections })
}

fn repetitions(errs: &Errors<'_>, raw: &RawExperiment) -> Result<Repetitions, ExperimentError> {
    let r = &raw.repetitions;
    let min = match &r.min {
        // Fewer than 3 give no spread to judge a figure by: allowed for a smoke run of the
        // file (the lab says so before it starts, the tables show no interval), the only use.
        Some(m) => int_in(errs, m, "[repetitions] min", 1, 100)? as u32,
        None => 3,
    };
    let max = match &r.max {
        Some(m) => {
            let v = int_in(errs, m, "[repetitions] max", 1, 100)? as u32;
            if v < min {
                return Err(
                    errs.at(m.span(), format!("[repetitions] max ({v}) is below min ({min})"))
                );
            }
            v
        }
        None => min.max(6),
    };
    let percent = |given: &Option<Spanned<f64>>, name: &str| match given {
        Some(s) => {
            let v = *s.get_ref();
            if !(v.is_finite() && v > 0.0 && v <= 100.0) {
                return Err(errs.at(
                    s.span(),
                    format!("[repetitions] {name} must be more than 0 and at most 100"),
                ));
            }
            Ok(Some(v))
        }
        None => Ok(None),
    };
    let mut bounds = Bounds {
        max_spread_percent: percent(&r.max_spread_percent, "max_spread_percent")?,
        max_interval_percent: percent(&r.max_interval_percent, "max_interval_percent")?,
    };
    if bounds == (Bounds { max_spread_percent: None, max_interval_percent: None }) {
        bounds.max_spread_percent = Some(5.0);
    }
    let time_budget = match &r.time_budget {
        Some(d) => Some(
            parse_duration(d.get_ref())
                .map_err(|e| errs.at(d.span(), format!("[repetitions] time_budget {e}")))?,
        ),
        None => None,
    };
    Ok(Repetitions { min, max, bounds, time_budget })
}

fn runner(errs: &Errors<'_>, raw: &RawExperiment) -> Result<RunnerSettings, ExperimentError> {
    let r = &raw.runner;
    let dur = |d: &Option<Spanned<String>>,
               key: &str,
               default: u64|
     -> Result<Duration, ExperimentError> {
        match d {
            Some(d) => parse_duration(d.get_ref())
                .map_err(|e| errs.at(d.span(), format!("[runner] {key} {e}"))),
            None => Ok(Duration::from_secs(default)),
        }
    };
    Ok(RunnerSettings {
        seed: match &r.seed {
            Some(s) => Some(int_in(errs, s, "[runner] seed", 0, i64::MAX)? as u64),
            None => None,
        },
        // Unset: the runner uses half of this machine's tcp_max_tw_buckets (timewait.rs).
        time_wait_below: match &r.time_wait_below {
            Some(t) => Some(int_in(errs, t, "[runner] time_wait_below", 1, 10_000_000)? as u64),
            None => None,
        },
        drain_timeout: dur(&r.drain_timeout, "drain_timeout", 90)?,
        ready_timeout: dur(&r.ready_timeout, "ready_timeout", 15)?,
        placement: placement(errs, raw)?,
        profile: profile(errs, raw)?,
        // Resolved against the matrix once it is built (`control.rs`).
        controls: None,
        // Checked against the servers and workloads once they are built (`server_count.rs`).
        server_count: false,
    })
}

/// `[runner] profile`: only `perf` is known. NetBench's servers (Samba, tbench) are not
/// HTTP servers the profiled run knows how to load, so an experiment with a NetBench
/// workload is refused here, once, rather than cell by cell.
fn profile(errs: &Errors<'_>, raw: &RawExperiment) -> Result<Option<Profiler>, ExperimentError> {
    let Some(p) = &raw.runner.profile else { return Ok(None) };
    if p.get_ref() != "perf" {
        return Err(errs.at(
            p.span(),
            format!("[runner] profile `{}`: expected \"perf\" (perf record -g on the servers' processes)", p.get_ref()),
        ));
    }
    if let Some((name, _)) = raw.workloads.iter().find(|(_, w)| w.kind.get_ref() == "netbench") {
        return Err(errs.at(
            p.span(),
            format!("[runner] profile = \"perf\" cannot follow NetBench's servers (workload `{name}`): profile HTTP servers only"),
        ));
    }
    Ok(Some(Profiler::Perf))
}

/// `[runner] placement`: `apart` chooses the servers' and the client's CPUs itself, so it
/// cannot stand beside a file that chooses them.
fn placement(errs: &Errors<'_>, raw: &RawExperiment) -> Result<Placement, ExperimentError> {
    let Some(p) = &raw.runner.placement else { return Ok(Placement::AsWritten) };
    match p.get_ref().as_str() {
        "as-written" => Ok(Placement::AsWritten),
        "apart" => {
            if let Some(c) = &raw.client.cpus {
                return Err(errs.at(
                    c.span(),
                    "[client] cpus places the client, and [runner] placement = \"apart\" places it too: keep one",
                ));
            }
            if let Some(c) = &raw.matrix.server_cpus {
                return Err(errs.at(
                    c.span(),
                    "[matrix] server_cpus places the servers, and [runner] placement = \"apart\" places them too: keep one",
                ));
            }
            Ok(Placement::Apart)
        }
        other => Err(errs.at(
            p.span(),
            format!("[runner] placement `{other}`: expected \"apart\" (servers and client on CPUs apart) or \"as-written\" (the default)"),
        )),
    }
}

fn exclude(
    errs: &Errors<'_>,
    raw: &[Spanned<RawExclude>],
    axes: &[Axis],
) -> Result<Vec<Vec<(AxisName, String)>>, ExperimentError> {
    let mut out = Vec::new();
    for x in raw {
        let e = x.get_ref();
        let pairs = [
            (AxisName::Server, &e.server),
            (AxisName::Protocol, &e.protocol),
            (AxisName::Workload, &e.workload),
            (AxisName::Load, &e.load),
            (AxisName::Client, &e.client),
            (AxisName::ServerCpus, &e.server_cpus),
            (AxisName::Path, &e.path),
            (AxisName::Link, &e.link),
        ];
        let mut rule = Vec::new();
        for (axis, value) in pairs {
            let Some(value) = value else { continue };
            axis_value(axes, axis.as_str(), value)
                .map_err(|why| errs.at(x.span(), format!("[[exclude]] {why}")))?;
            rule.push((axis, value.clone()));
        }
        if rule.is_empty() {
            return Err(errs.at(
                x.span(),
                "[[exclude]] is empty: name the axis values to leave out, e.g. server = \"nginx\"",
            ));
        }
        out.push(rule);
    }
    Ok(out)
}

/// The axis called `axis`, when `value` names one of its values ([`herd_store::names_value`]:
/// a value, or a sweep's name for all its sizes); Err says what the matrix offers instead.
pub(super) fn axis_value(axes: &[Axis], axis: &str, value: &str) -> Result<AxisName, String> {
    let Some(a) = axes.iter().find(|a| a.name.as_str() == axis) else {
        let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
        return Err(format!("`{axis}` is not an axis of [matrix]: use {}", choices(&names)));
    };
    if !a.values.iter().any(|v| herd_store::names_value(value, v)) {
        return Err(format!(
            "{axis} = \"{value}\" is not a value of that axis: use {}",
            choices(&a.values)
        ));
    }
    Ok(a.name)
}

/// `[section] key = { axis = "value" }`, which must name exactly one value of one axis (a
/// baseline, what a percentage is of): not a sweep's name, which stands for several.
pub(super) fn one_axis_value(
    errs: &Errors<'_>,
    e: &Experiment,
    table: &Spanned<BTreeMap<String, String>>,
    section: &str,
    key: &str,
) -> Result<(String, String), ExperimentError> {
    let what = format!("[{section}] {key}");
    let mut pairs = table.get_ref().iter();
    let (Some((axis, value)), None) = (pairs.next(), pairs.next()) else {
        return Err(errs.at(
            table.span(),
            format!("{what} names one axis value, e.g. {key} = {{ path = \"direct\" }}"),
        ));
    };
    let name = axis_value(&e.axes, axis, value)
        .map_err(|why| errs.at(table.span(), format!("{what}: {why}")))?;
    if !e.axes.iter().any(|a| a.name == name && a.values.contains(value)) {
        return Err(errs.at(
            table.span(),
            format!("{what}: {axis} = \"{value}\" names several values; name one of them"),
        ));
    }
    Ok((name.as_str().to_owned(), value.clone()))
}

/// The names of one axis; each must resolve.
fn names(
    errs: &Errors<'_>,
    axis: &str,
    list: &Spanned<Vec<Spanned<String>>>,
    known: impl Fn(&str) -> bool,
    choices_for: impl Fn() -> Vec<String>,
) -> Result<Vec<String>, ExperimentError> {
    if list.get_ref().is_empty() {
        return Err(
            errs.at(list.span(), format!("[matrix] {axis} is empty: give at least one value"))
        );
    }
    let mut out = Vec::new();
    for n in list.get_ref() {
        if !known(n.get_ref()) {
            let name = n.get_ref();
            let known = choices_for();
            let what = if known.is_empty() {
                format!("define [{axis}s.{name}]")
            } else {
                format!("use {} or define [{axis}s.{name}]", choices(&known))
            };
            return Err(errs.at(n.span(), format!("unknown {axis} `{name}`: {what}")));
        }
        if out.contains(n.get_ref()) {
            return Err(errs.at(n.span(), format!("[matrix] {axis} lists `{}` twice", n.get_ref())));
        }
        out.push(n.get_ref().clone());
    }
    Ok(out)
}

fn no_duplicates(
    errs: &Errors<'_>,
    axis: &str,
    list: &Spanned<Vec<Spanned<String>>>,
    values: &[String],
) -> Result<(), ExperimentError> {
    let mut seen = BTreeSet::new();
    for v in values {
        if !seen.insert(v) {
            return Err(errs.at(list.span(), format!("[matrix] {axis} gives `{v}` twice")));
        }
    }
    Ok(())
}

/// An integer in `lo..=hi`, or an error at its line.
fn int_in(
    errs: &Errors<'_>,
    v: &Spanned<i64>,
    what: &str,
    lo: i64,
    hi: i64,
) -> Result<i64, ExperimentError> {
    let x = *v.get_ref();
    if (lo..=hi).contains(&x) {
        Ok(x)
    } else {
        Err(errs.at(v.span(), format!("{what} = {x} is out of range: use {lo} to {hi}")))
    }
}

/// A size in bytes: an integer, or a string as every size herd reads is written
/// (`herd_stats::units::ByteSize`: `"1Mi"`, `"4Ki"`).
fn size(errs: &Errors<'_>, v: &Spanned<toml::Value>, what: &str) -> Result<u64, ExperimentError> {
    let bytes = match v.get_ref() {
        toml::Value::Integer(i) if *i >= 0 => *i as u64,
        toml::Value::String(s) => s
            .parse::<herd_stats::units::ByteSize>()
            .map_err(|e| errs.at(v.span(), format!("{what}: {e}")))?
            .bytes(),
        _ => {
            return Err(errs.at(
                v.span(),
                format!(
                "{what}: give bytes as a number (6397) or a string with k/Ki, M/Mi, G/Gi (\"1Mi\")"
            ),
            ))
        }
    };
    if bytes > herd_fileset::MAX_FILE_BYTES {
        return Err(errs.at(v.span(), format!("{what}: {bytes} bytes is more than 64 GiB")));
    }
    Ok(bytes)
}
