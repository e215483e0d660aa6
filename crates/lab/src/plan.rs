//! The dry run: every cell, every command line and every rendered config of an experiment,
//! without running, writing or creating anything. Paths inside the run directory are shown
//! as `$RUN` and the port a cell's server gets as `$PORT` (the real one is chosen per run:
//! a free port no TIME_WAIT socket refers to), so that every server's configuration is
//! printed once, not once per cell. The programs are
//! shown where this machine has them (or says they are missing), and the worker user as
//! root would set it: the listing is this machine's.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use herd_drivers::{
    programs_needed, proxy_programs_needed, render_proxy, Programs, ProxyKind, ProxySpec,
    ServerSpec,
};
use herd_stats::units::TimeSpan;
use herd_stats::Protocol;
use herd_topo::net::{Host, Plan, PATH_PORT};

use crate::client::{self, ClientJob};
use crate::experiment::{Experiment, ServerDef};
use crate::load::{Method, Request};
use crate::matrix::cells;

/// The run directory as the plan shows it.
const RUN: &str = "$RUN";
/// The port a cell's server gets, as the plan shows it.
const PORT: &str = "$PORT";
/// The stand-in port the drivers render with (they take a number); shown as `$PORT`. One no
/// config or command line has for another reason.
const PLAN_PORT: u16 = 64999;
/// The absolute stand-in the drivers render with (they take absolute paths only); replaced
/// by `$RUN` in the text.
const RUN_PATH: &str = "/herd-lab-RUN";

/// The figure whose spread earns a cell more repetitions (`runner::cell::figure`): the
/// tables' measure where a run gives it, else req/s (Mbit/s for NetBench).
fn spread_of(e: &Experiment, all: &[crate::matrix::Cell]) -> &'static str {
    match e.report.measure {
        Some(m) if m.lower_is_better() && m != herd_store::Measure::Seconds => match m {
            herd_store::Measure::CpuPerRequest => "the server's CPU per request",
            herd_store::Measure::LatencyP50 => "p50",
            herd_store::Measure::LatencyP99 => "p99",
            _ => "p99.9",
        },
        _ if all.iter().any(|c| c.workload.is_netbench()) => "req/s (Mbit/s for netbench)",
        _ => "req/s",
    }
}

/// The plan of `e` as text.
/// Where `[hosts]` puts the roles, in one line: the dry run reaches no host, so it says the
/// paths and programs below as this machine would render them.
fn hosts_line(h: &crate::hosts::Hosts) -> String {
    let mut parts = Vec::new();
    if let Some(server) = &h.server {
        parts.push(format!("the servers start on {server}"));
    }
    match h.clients.as_slice() {
        [] => parts.push("the client runs here".to_owned()),
        [one] => parts.push(format!("the client runs on {one}")),
        [first, ..] => {
            let all: Vec<String> = h.clients.iter().map(|c| c.to_string()).collect();
            parts.push(format!(
                "herd's client runs as one agent on each of {}; ab, wrk and h2load on {first}",
                all.join(", ")
            ));
        }
    }
    if let Some(router) = &h.router {
        parts.push(format!("the proxy paths' programs start on {router}"));
    }
    format!(
        "hosts: {} (not reached by a dry run: configs and paths below are as this machine \
         would render them; `herd lab hosts check` reaches them)",
        parts.join("; ")
    )
}

pub fn plan(e: &Experiment, herd_exe: &Path) -> String {
    let mut s = String::new();
    let all = cells(e);
    let reps = &e.repetitions;
    let _ = writeln!(s, "experiment {} ({}): {}", e.name, e.source, e.title);
    let axes: Vec<String> =
        e.axes.iter().map(|a| format!("{} ({})", a.name.as_str(), a.values.len())).collect();
    let runs = all.iter().filter(|c| c.refused.is_none()).count();
    let refused = match all.len() - runs {
        0 => String::new(),
        n => format!(" ({n} refused, listed below with the reason: {runs} run)"),
    };
    let _ = writeln!(
        s,
        "matrix: {} = {} cells{refused}; {} to {} repetitions each (more while {}, or to stand in for a repetition that did not hold its rate), {} to {} runs",
        axes.join(" x "),
        all.len(),
        reps.min,
        reps.max,
        reps.bounds.words(spread_of(e, &all)),
        runs * reps.min as usize,
        runs * reps.max as usize
    );
    if let Some(h) = &e.hosts {
        let _ = writeln!(s, "{}", hosts_line(h));
    }
    if let (Some(c), Some(twin)) = (&e.runner.controls, crate::matrix::control_twin(e, &all)) {
        let n = c.runs as usize;
        let _ = writeln!(
            s,
            "A/A control: {} runs {n} more times as its own twin ({}), shuffled into rounds 1 \
             to {n} beside the others: the report's noise floor and smallest detectable \
             difference; {} to {} runs with it",
            c.of,
            twin.key,
            runs * reps.min as usize + n,
            runs * reps.max as usize + n
        );
    }
    if e.runner.profile.is_some() {
        let n = all.iter().filter(|c| c.refused.is_none() && !c.workload.is_netbench()).count();
        let _ = writeln!(
            s,
            "profile: after the repetitions, {n} more run(s), one a cell, under perf record -g \
             (kept apart: no figure includes them; a flame graph each on the page)"
        );
    }
    if e.runner.server_count {
        let _ = writeln!(s, "{SERVER_COUNT}");
    }
    if let Some(secs) = netbench_seconds(&all, reps.min) {
        let _ = writeln!(
            s,
            "netbench: the trace's runs alone take about {} at {} repetitions (each step its \
             time, a warm-up of a twentieth of it for smbtorture, a fifth for tbench, about \
             {}s of cleanup)",
            hours_minutes(secs),
            reps.min,
            crate::estimate::NBENCH_CLEANUP_S
        );
    }
    let _ = writeln!(s, "time: {}", crate::estimate::estimate(e).sentence());
    if let Some(smoke) = reps.smoke() {
        let _ = writeln!(s, "smoke run: {smoke}");
    }
    // Each load in words: above all, which open a new connection per request.
    let _ = writeln!(s, "loads:");
    for (name, load) in &e.loads {
        let _ = writeln!(s, "  {name}: {}", load.describe());
    }
    let seed = e.runner.seed.map_or("drawn at start".to_string(), |v| v.to_string());
    let bound = e
        .runner
        .time_wait_below
        .map_or("half of net.ipv4.tcp_max_tw_buckets".to_string(), |n| n.to_string());
    let _ = writeln!(
        s,
        "order: shuffled per repetition (seed {seed}); before each run: TIME_WAIT below {bound} (wait at most {}), the server on a port no TIME_WAIT socket refers to ($PORT below); servers restarted for every run, ready within {}",
        span(e.runner.drain_timeout),
        span(e.runner.ready_timeout)
    );
    // With client hosts, `[client] cpus` are each one's (all: every CPU there).
    let on_hosts = e.hosts.as_ref().is_some_and(|h| !h.clients.is_empty());
    let _ = writeln!(
        s,
        "client cpus: {}{}; run directory: {RUN} (a new herd-lab-* under the temporary directory)",
        e.client_cpus,
        if on_hosts { " of each client host" } else { "" }
    );
    match (&e.reference, &e.published) {
        (r, Some(p)) => {
            let with = all
                .iter()
                .filter(|c| p.figures.iter().any(|f| f.matches(&c.axis_values())))
                .count();
            let name = r.as_deref().map(|r| format!("{r}: ")).unwrap_or_default();
            let _ = writeln!(
                s,
                "published figures: {name}{} of them, beside {with} of {} cells in the report ({})",
                p.figures.len(),
                all.len(),
                p.source
            );
        }
        (Some(r), None) => {
            let _ = writeln!(s, "re-runs: {r} (no published figures given)");
        }
        (None, None) => {}
    }

    let _ = writeln!(s, "\nservers");
    // Whom the servers that cannot switch users run as (a Samba share's guests): asked once.
    let runs_as = herd_topo::user::current_user();
    let mut cas: BTreeMap<(String, Protocol), PathBuf> = BTreeMap::new();
    for name in e.servers.keys() {
        // The cells' own servers: the calibration server is herd serve in HTTP cells and
        // tbench_srv in NetBench ones.
        let running: Vec<&crate::matrix::Cell> =
            all.iter().filter(|c| c.refused.is_none() && c.server.name == *name).collect();
        if running.is_empty() {
            let _ = writeln!(s, "\n== server {name}: every cell of it is refused (see below)");
        }
        // Each server once per protocol its cells speak (the configs differ), in protocol
        // order.
        let mut shown: Vec<&crate::matrix::Cell> = Vec::new();
        for c in running {
            if !shown.iter().any(|o| o.server.kind == c.server.kind && o.protocol == c.protocol) {
                shown.push(c);
            }
        }
        shown.sort_by_key(|c| c.protocol);
        for c in shown {
            let (runs_as, logs) = (runs_as.as_deref(), e.runner.server_count);
            if let Some(ca) =
                write_server(&mut s, name, &c.server, c.protocol, herd_exe, runs_as, logs)
            {
                cas.insert((name.clone(), c.protocol), ca);
            }
        }
    }

    let router_cas = write_paths(&mut s, &all, herd_exe, e.client_agents.unwrap_or(1));

    let _ = writeln!(s, "\ncells");
    for c in &all {
        let _ = writeln!(s, "\n{:>4}. {}", c.index + 1, c.key);
        if let Some(why) = &c.refused {
            let _ = writeln!(s, "      refused, nothing runs: {why}");
            continue;
        }
        let what = if c.client == client::Tool::Tbench {
            "the NetBench trace over plain TCP (tbench against tbench_srv): the path's ceiling \
             for it, the calibration of the NetBench cells"
                .to_owned()
        } else {
            c.workload.describe()
        };
        let _ = writeln!(s, "      server {} on cpus {}: {what}", c.server.name, c.server_cpus);
        let mut hosts: Vec<(String, SocketAddr)> = Vec::new();
        let agents = e.client_agents.unwrap_or(1);
        let target = match c.path {
            None => SocketAddr::from(([127, 0, 0, 1], PLAN_PORT)),
            Some(p) => match Plan::for_agents(TAG, p, PATH_PORT, c.link.as_ref(), agents) {
                Ok(plan) => {
                    hosts = plan
                        .clients
                        .iter()
                        .map(|&(h, a)| (plan.netns(h), SocketAddr::from((a, PATH_PORT))))
                        .collect();
                    let clients: Vec<String> =
                        plan.clients.iter().map(|&(h, _)| plan.netns(h)).collect();
                    let _ = writeln!(
                        s,
                        "      path {p}{}: fresh namespaces for every run; the server in {}, the client{} in {}",
                        c.link.as_ref().map(|l| format!(" at {l}")).unwrap_or_default(),
                        plan.netns(Host::Server),
                        if clients.len() > 1 { "s" } else { "" },
                        clients.join(", ")
                    );
                    SocketAddr::from((plan.target, PATH_PORT))
                }
                Err(err) => {
                    let _ = writeln!(s, "      path {p}: cannot be built: {err}");
                    continue;
                }
            },
        };
        if c.workload.is_netbench() {
            if hosts.is_empty() {
                hosts.push((String::new(), target));
            }
            write_netbench(&mut s, c, &hosts, e, herd_exe);
            continue;
        }
        let base_url = client::base_url(c.protocol, target);
        let Some(request) = c.request(Path::new(&format!("{RUN_PATH}/www")), None) else {
            continue;
        };
        let path = &request.path;
        let over = match c.protocol {
            Protocol::H1 => String::new(),
            p if p.is_encrypted() => format!(" over {p}, trusting only the run's CA,"),
            p => format!(" over {p}"),
        };
        let _ = writeln!(
            s,
            "      verify: {} {path}{over} must answer 200 with the expected bytes (length and \
             SHA-256)",
            method_of(&request)
        );
        // Where it is installed here; where Debian puts it otherwise (the plan still shows it).
        let program = client::locate(c.client, herd_exe)
            .unwrap_or_else(|| PathBuf::from(format!("/usr/bin/{}", c.client.name())));
        let client_dir = PathBuf::from(format!("{RUN_PATH}/cells/CELL/client"));
        let main = c.load.measured();
        let warm_dir = client_dir.join("warmup");
        // With agents on a path: its client hosts, as the run names them.
        let agent_netns: Vec<String> = if agents > 1 && c.path.is_some() {
            hosts.iter().map(|(netns, _)| netns.clone()).collect()
        } else {
            Vec::new()
        };
        let runs = [
            ("warm-up (discarded)", c.load.warmup_run(), &warm_dir),
            ("client", Some(main), &client_dir),
        ];
        // On `[hosts] clients`: herd's client as agents there, ab, wrk and h2load on client 1.
        let client_hosts = e.hosts.as_ref().filter(|h| !h.clients.is_empty());
        let urls: Vec<String> = client_hosts
            .map(|h| h.clients.iter().map(ToString::to_string).collect())
            .unwrap_or_default();
        let agent_hosts =
            client_hosts.filter(|_| c.client == client::Tool::Herd).map(|h| client::AgentHosts {
                urls: &urls,
                ssh_config: h.ssh_config.as_deref(),
                idle: h.idle,
                cpus: &e.client_cpus,
            });
        let placed = match (client_hosts, urls.first()) {
            (Some(_), Some(first)) if c.client != client::Tool::Herd => {
                format!("on {first}, cpus {}", e.client_cpus)
            }
            (Some(_), _) => {
                format!("from here, agents on cpus {} of each client host", e.client_cpus)
            }
            _ => format!("on cpus {}", e.client_cpus),
        };
        for (what, load, out_dir) in runs {
            let Some(load) = load else { continue };
            let job = ClientJob {
                tool: c.client,
                program: &program,
                base_url: &base_url,
                protocol: c.protocol,
                ca_file: router_cas
                    .iter()
                    .find(|(k, _)| *k == (c.path, c.link.clone(), Some(c.protocol)))
                    .map(|(_, ca)| ca)
                    .or_else(|| cas.get(&(c.server.name.clone(), c.protocol)))
                    .map(PathBuf::as_path),
                request: &request,
                load: &load,
                threads: e.client_threads,
                io: e.client_io,
                trace: e.client_trace,
                out_dir,
                agents: e.client_agents.unwrap_or(1),
                agent_netns: &agent_netns,
                opt_in: None,
                agent_hosts,
            };
            match client::command(&job) {
                Ok(cmd) => {
                    let _ = writeln!(s, "      {what} {placed}: {}", join(&cmd.main));
                }
                Err(err) => {
                    let _ = writeln!(s, "      {what}: refused: {err}");
                }
            }
        }
    }
    placeholders(&s.replace(RUN_PATH, RUN))
}

/// `text` with the stand-in port, as a number of its own (not inside a longer one), shown as
/// `$PORT`.
fn placeholders(text: &str) -> String {
    let port = PLAN_PORT.to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&port) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + port.len()..].chars().next();
        let alone = !before.is_some_and(|c| c.is_ascii_digit())
            && !after.is_some_and(|c| c.is_ascii_digit());
        out.push_str(&rest[..at]);
        out.push_str(if alone { PORT } else { &port });
        rest = &rest[at + port.len()..];
    }
    out.push_str(rest);
    out
}

/// A duration as the experiment file writes it (`90s`, `500ms`).
fn span(d: std::time::Duration) -> String {
    TimeSpan::new(d).map_or_else(|| "0s".to_owned(), |t| t.to_string())
}

/// `4 h 52 min`, `38 min`: a long run's length as a person plans with it.
fn hours_minutes(secs: u64) -> String {
    let minutes = secs.div_ceil(60);
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m} min"),
        (h, m) => format!("{h} h {m} min"),
    }
}

/// How long the smbtorture runs of the runnable NetBench cells take at `reps` repetitions,
/// in seconds; None without any.
fn netbench_seconds(cells: &[crate::matrix::Cell], reps: u32) -> Option<u64> {
    let netbench: Vec<u64> = cells
        .iter()
        .filter(|c| c.refused.is_none() && c.workload.is_netbench())
        .map(crate::estimate::netbench_run_seconds)
        .collect();
    (!netbench.is_empty()).then(|| netbench.iter().sum::<u64>() * u64::from(reps))
}

/// A NetBench cell's client runs: one smbtorture per step (and its warm-up) and client host,
/// each the command line the runner starts (in the run's client directory, through `env
/// -C`). `hosts`: each client host's namespace (empty over loopback) and the address it
/// loads; a step's clients are spread over them as the runner spreads them.
fn write_netbench(
    s: &mut String,
    c: &crate::matrix::Cell,
    hosts: &[(String, SocketAddr)],
    e: &Experiment,
    herd_exe: &Path,
) {
    if c.path.is_some() {
        let _ = writeln!(s, "      path check: a TCP connection to the server through the path");
    }
    if hosts.len() > 1 {
        let _ = writeln!(
            s,
            "      each step's clients spread over {} client hosts, one {} each, side by side",
            hosts.len(),
            c.client
        );
    }
    let (clients, step) = match client::smbtorture::steps(&c.load) {
        Ok(steps) => steps,
        Err(why) => {
            let _ = writeln!(s, "      client: refused: {why}");
            return;
        }
    };
    let program = client::locate(c.client, herd_exe)
        .unwrap_or_else(|| PathBuf::from(format!("/usr/bin/{}", c.client.name())));
    let mut runs: Vec<(String, u32, std::time::Duration)> = Vec::new();
    if let crate::load::Warmup::Duration(d) = c.load.warmup {
        runs.push(("warm-up (discarded)".into(), clients.iter().copied().max().unwrap_or(1), d));
    }
    for (i, &n) in clients.iter().enumerate() {
        runs.push((format!("step {} of {}", i + 1, clients.len()), n, step));
    }
    for (what, n, limit) in runs {
        let spread = client::smbtorture::spread_clients(n, hosts.len());
        let spread = hosts.iter().zip(spread).enumerate();
        for (i, ((netns, server), n)) in spread {
            if n == 0 {
                continue;
            }
            // A calibration cell's client is tbench, against tbench_srv.
            let built = client::trace::TraceJob::new(c.client, &program, *server, i, n, limit)
                .and_then(|job| Ok((job.argv()?, job.kill_timeout())));
            let place = if hosts.len() > 1 { format!(" in {netns}") } else { String::new() };
            match built {
                Ok((argv, kill)) => {
                    let _ = writeln!(
                        s,
                        "      {what}{place} on cpus {} (killed after {}s): {}",
                        e.client_cpus,
                        kill.as_secs(),
                        join(&argv)
                    );
                }
                Err(err) => {
                    let _ = writeln!(s, "      {what}{place}: refused: {err}");
                }
            }
        }
    }
}

/// What the dry run says of `[runner] server_count`.
const SERVER_COUNT: &str = "server count: on ([runner] server_count): every run's server writes \
     its access log (which costs it time: its figures are not those of a server that does \
     not log), read once it has stopped; the lines of the workload's request must be what \
     the client sent (the verification, the warm-up and the measured run: exactly, for a \
     request count without failures), or the run fails (server count)";

/// The tag the listing names a path's namespaces with (the real one carries herd's PID and
/// the run's number).
const TAG: &str = "herd-PID-N";

/// One server as a cell of `protocol` starts it: its command lines, readiness, checks and
/// configs. Over TLS, where the CA its client trusts is (made for each run).
fn write_server(
    s: &mut String,
    name: &str,
    def: &ServerDef,
    protocol: Protocol,
    herd_exe: &Path,
    runs_as: Option<&str>,
    access_log: bool,
) -> Option<PathBuf> {
    let needed = programs_needed(def.kind, def.php);
    let (programs, missing) = match crate::matrix::server_programs(def, &needed, herd_exe) {
        Ok(p) => (p, None),
        Err(_) => located_or_shown(&needed, herd_exe),
    };
    let spec = ServerSpec {
        kind: def.kind,
        php: def.php,
        protocol,
        // A server with a built-in port (tbench_srv) has it here too.
        listen: SocketAddr::from(([127, 0, 0, 1], def.kind.fixed_port().unwrap_or(PLAN_PORT))),
        docroot: PathBuf::from(format!("{RUN_PATH}/www")),
        run_dir: PathBuf::from(format!("{RUN_PATH}/cells/CELL/{name}")),
        workers: def.workers,
        user: root_user(),
        runs_as: runs_as.map(str::to_owned),
        programs,
        // As the runs render it: with `[runner] server_count`, with the log it counts.
        access_log,
        keepalive_requests: def.keepalive_requests,
        sendfile: def.sendfile,
    };
    // HTTP/1.1 in the clear, the default, is not named: an experiment without a protocol
    // axis lists its servers as it always did.
    let over = if protocol == Protocol::H1 { String::new() } else { format!(" over {protocol}") };
    let _ = writeln!(s, "\n== server {name}{over}");
    if let Some(m) = missing {
        let _ = writeln!(s, "   NOT INSTALLED HERE: {m}");
    }
    // The settings the table gives (and the config below renders), named as written.
    let settings: Vec<String> = [
        def.keepalive_requests.map(|n| format!("keepalive_requests = {n}")),
        def.sendfile.map(|on| format!("sendfile = {on}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !settings.is_empty() {
        let _ = writeln!(s, "   settings: {}", settings.join(", "));
    }
    let launch = match crate::server_config::render_with(&spec, def.config.as_ref()) {
        Err(err) => {
            let _ = writeln!(s, "   cannot configure: {err}");
            return None;
        }
        Ok(launch) => launch,
    };
    for p in &launch.processes {
        let _ = writeln!(s, "   start {}: {}", p.name, join(&p.argv));
    }
    let _ = writeln!(s, "   ready when: {}", launch.ready);
    if let Some(tls) = &launch.tls {
        let _ = writeln!(
            s,
            "   tls: a certificate made for each run by a CA of its own; the client trusts {}",
            tls.ca.display()
        );
    }
    for v in &launch.validate {
        let _ = writeln!(s, "   config check: {}", join(v));
    }
    for v in &launch.versions {
        let _ = writeln!(s, "   version: {}", join(&v.argv));
    }
    for f in &launch.files {
        let _ = writeln!(s, "   --- {}", f.path.display());
        for line in f.contents.lines() {
            let _ = writeln!(s, "   | {line}");
        }
    }
    launch.tls.map(|t| t.ca)
}

/// A path (and its link), and the protocol its router program carries (None: a path
/// without one, the same for every protocol).
type PathKey = (Option<herd_topo::net::Path>, Option<herd_topo::net::Shaping>, Option<Protocol>);

/// Every (path, link) the cells use: the commands that build it, and remove it; a proxy
/// path's program once per protocol it carries. Returns the CA of each proxy that ends TLS
/// itself, which its cells' clients trust.
fn write_paths(
    s: &mut String,
    cells: &[crate::matrix::Cell],
    herd_exe: &Path,
    agents: u8,
) -> Vec<(PathKey, PathBuf)> {
    let mut seen = Vec::new();
    let mut cas = Vec::new();
    for c in cells.iter().filter(|c| c.refused.is_none()) {
        let Some(p) = c.path else { continue };
        let key: PathKey = (Some(p), c.link.clone(), c.proxy().map(|_| c.protocol));
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        let link = c.link.as_ref().map(|l| format!(", links: {l}")).unwrap_or_default();
        let over = match key.2 {
            Some(protocol) if protocol != Protocol::H1 => format!(", carrying {protocol}"),
            _ => String::new(),
        };
        let _ = writeln!(s, "\n== path {p}{link}{over}");
        match Plan::for_agents(TAG, p, PATH_PORT, c.link.as_ref(), agents) {
            Err(err) => {
                let _ = writeln!(s, "   cannot be built: {err}");
            }
            Ok(plan) => {
                for line in plan.commands() {
                    let _ = writeln!(s, "   {line}");
                }
                if let Some(kind) = c.proxy() {
                    if let Some(ca) = write_proxy(s, kind, c.protocol, &plan, herd_exe) {
                        cas.push((key.clone(), ca));
                    }
                }
                let _ = writeln!(s, "   (after the run: what still runs inside is stopped, then)");
                for line in plan.teardown_commands() {
                    let _ = writeln!(s, "   {line}");
                }
            }
        }
    }
    cas
}

/// The programs `needed`, where they are installed here, or where Debian puts them with the
/// reason they are not (the plan still shows them, marked NOT INSTALLED HERE).
fn located_or_shown(
    needed: &[&'static herd_drivers::Program],
    herd_exe: &Path,
) -> (Programs, Option<String>) {
    match Programs::locate(needed, herd_exe) {
        Ok(p) => (p, None),
        Err(err) => {
            let fallback = needed.iter().map(|p| {
                (p.name, p.candidates.first().map_or_else(|| PathBuf::from(p.name), PathBuf::from))
            });
            (Programs::from_paths(fallback), Some(err.to_string()))
        }
    }
}

/// The router program of a proxy path carrying `protocol`: its command line (in the
/// router's namespace) and config, as the runner renders them; the CA its clients trust
/// when it ends TLS itself.
fn write_proxy(
    s: &mut String,
    kind: ProxyKind,
    protocol: Protocol,
    plan: &Plan,
    herd_exe: &Path,
) -> Option<PathBuf> {
    let (programs, missing) = located_or_shown(&proxy_programs_needed(kind), herd_exe);
    if let Some(m) = missing {
        let _ = writeln!(s, "   NOT INSTALLED HERE: {m}");
    }
    let addr = |a| SocketAddr::from((a, PATH_PORT));
    let backends: Vec<SocketAddr> = plan.server_addrs.iter().map(|&a| addr(a)).collect();
    let spec = ProxySpec {
        kind,
        protocol,
        listen: addr(plan.target),
        backends,
        run_dir: PathBuf::from(format!("{RUN_PATH}/cells/CELL/router")),
        workers: None,
        user: root_user(),
        programs,
    };
    let launch = match render_proxy(&spec) {
        Err(err) => {
            let _ = writeln!(s, "   {kind} cannot be configured: {err}");
            return None;
        }
        Ok(launch) => launch,
    };
    for p in &launch.processes {
        let _ =
            writeln!(s, "   start {} in {}: {}", p.name, plan.netns(Host::Router), join(&p.argv));
    }
    if let Some(tls) = &launch.tls {
        let _ = writeln!(
            s,
            "   tls: {kind} ends TLS with a certificate made for each run; the client trusts {}",
            tls.ca.display()
        );
    }
    for f in &launch.files {
        let _ = writeln!(s, "   --- {}", f.path.display());
        for line in f.contents.lines() {
            let _ = writeln!(s, "   | {line}");
        }
    }
    launch.tls.map(|t| t.ca)
}

fn method_of(r: &Request) -> &'static str {
    match r.method {
        Method::Get => "GET",
        Method::Post { .. } => "POST",
    }
}

fn root_user() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    (unsafe { libc::geteuid() } == 0).then(|| "www-data".to_string())
}

/// A command line as a shell reads it back (`$RUN` is written in after, outside quotes).
fn join(argv: &[std::ffi::OsString]) -> String {
    argv.iter()
        .map(|a| herd_topo::net::shell_word(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_line_says_where_each_role_runs() {
        let u = |s: &str| s.parse::<crate::hosts::HostUrl>().unwrap();
        let mut h = crate::hosts::Hosts {
            server: Some(u("ssh://srv")),
            clients: Vec::new(),
            router: None,
            ssh_config: None,
            idle: std::time::Duration::from_secs(30),
        };
        assert!(hosts_line(&h)
            .starts_with("hosts: the servers start on ssh://srv; the client runs here ("));
        h.clients = vec![u("ssh://c1")];
        assert!(hosts_line(&h).contains("; the client runs on ssh://c1 ("));
        h.clients.push(u("ssh://c2"));
        assert!(hosts_line(&h).contains(
            "herd's client runs as one agent on each of ssh://c1, ssh://c2; ab, wrk and h2load on ssh://c1"
        ));
        h.router = Some(u("ssh://r"));
        assert!(hosts_line(&h).contains("; the proxy paths' programs start on ssh://r ("));
    }

    #[test]
    fn on_client_hosts_the_plan_shows_the_agents_run_and_the_tool_on_client_1() {
        let text = "name = \"dry\"\n[matrix]\nserver = [\"herd\"]\nclient = [\"herd\", \"ab\"]\n\
                    workload = [\"9x9\"]\nload = [\"n\"]\n[loads.n]\nrequests = 100\n\
                    concurrency = 2\n[client]\ncpus = \"1\"\n[hosts]\nserver = \"ssh://srv\"\n\
                    clients = [\"ssh://c1\", \"ssh://c2\"]\nidle_timeout = \"5s\"\n";
        let e = crate::experiment::parse(text, "dry.toml").unwrap();
        let p = plan(&e, Path::new("/opt/herd/herd"));
        assert!(
            p.contains(
                "      client from here, agents on cpus 1 of each client host: /opt/herd/herd \
                 cluster run --ssh ssh://c1,ssh://c2 --idle-timeout=5s --agent-cpus=1 -- "
            ),
            "{p}"
        );
        assert!(p.contains("      client on ssh://c1, cpus 1: "), "{p}");
    }

    fn bundled(name: &str) -> Experiment {
        crate::experiment::parse(crate::bundled::find(name).unwrap().text, name).unwrap()
    }

    #[test]
    fn netbench_time_is_every_step_with_its_warm_up_and_cleanup() {
        // 4 samba cells x 12 steps x (60 s + 3 s of warm-up + 15 s of cleanup) x 3
        // repetitions, and 2 tbench calibration cells x 12 x (60 + 12 + 15) x 3.
        let seed004 = netbench_seconds(&cells(&bundled("seed004-netbench")), 3);
        assert_eq!(seed004, Some(11_232 + 6_264));
        assert_eq!(hours_minutes(17_496), "4 h 52 min");
        assert_eq!(hours_minutes(60), "1 min");
        assert_eq!(hours_minutes(61), "2 min");
        // 5 s steps have no warm-up: 5 + 0 + 15.
        assert_eq!(netbench_seconds(&cells(&bundled("netbench-quick")), 3), Some(60));
        assert_eq!(netbench_seconds(&cells(&bundled("quickstart")), 3), None);
    }

    #[test]
    fn the_plan_names_the_figure_whose_spread_adds_repetitions() {
        let p = plan(&bundled("quickstart"), Path::new("/usr/bin/herd"));
        assert!(
            p.contains(
                "(more while the 95 % interval of the server's CPU per request is wider than \
                 ±4.5%, or to stand in for a repetition that did not hold its rate)"
            ),
            "{p}"
        );
        let p = plan(&bundled("seed000-lighttpd"), Path::new("/usr/bin/herd"));
        assert!(p.contains("(more while the spread of req/s is over"), "{p}");
    }

    #[test]
    fn the_plan_says_the_profiled_runs() {
        let mut e = bundled("quickstart");
        assert!(!plan(&e, Path::new("/usr/bin/herd")).contains("profile:"));
        e.runner.profile = Some(crate::experiment::Profiler::Perf);
        let p = plan(&e, Path::new("/usr/bin/herd"));
        assert!(p.contains("profile: after the repetitions, 5 more run(s), one a cell"), "{p}");
    }

    #[test]
    fn the_plan_says_the_server_count_check_and_shows_the_log_it_reads() {
        let mut e = bundled("quickstart");
        let off = plan(&e, Path::new("/usr/bin/herd"));
        assert!(!off.contains("server count:"), "{off}");
        assert!(!off.contains("--access-log"), "{off}");
        e.runner.server_count = true;
        let on = plan(&e, Path::new("/usr/bin/herd"));
        assert!(on.contains(&format!("\n{SERVER_COUNT}\n")), "{on}");
        // herd serve's command line as the runs render it, writing the log the check reads.
        assert!(on.contains(" --access-log"), "{on}");
    }

    #[test]
    fn the_plan_shows_a_servers_settings_and_their_lines_in_its_config() {
        let plain = bundled("quickstart");
        let p = plan(&plain, Path::new("/usr/bin/herd"));
        assert!(!p.contains("   settings: "), "{p}");
        let server = plain.text.lines().find(|l| l.starts_with("server = ")).unwrap();
        let text = plain.text.replacen(server, "server = [\"nginx-ka\"]", 1)
            + "\n[servers.nginx-ka]\ndriver = \"nginx\"\nkeepalive_requests = 10\n\
               sendfile = false\n";
        let e = crate::experiment::parse(&text, "x.toml").unwrap();
        let p = plan(&e, Path::new("/usr/bin/herd"));
        assert!(p.contains("\n== server nginx-ka\n"), "{p}");
        assert!(p.contains("\n   settings: keepalive_requests = 10, sendfile = false\n"), "{p}");
        assert!(p.contains("\n   |     keepalive_requests 10;\n"), "{p}");
        assert!(p.contains("\n   |     sendfile off;\n"), "{p}");
    }

    #[test]
    fn the_plan_counts_the_twins_runs() {
        let plain = bundled("quickstart");
        let text = plain.text.replacen("[runner]\n", "[runner]\ncontrols = 5\n", 1);
        let e = crate::experiment::parse(&text, "x.toml").unwrap();
        let p = plan(&e, Path::new("/usr/bin/herd"));
        let runs = cells(&e).iter().filter(|c| c.refused.is_none()).count();
        let (min, max) = (e.repetitions.min as usize, e.repetitions.max as usize);
        let line =
            p.lines().find(|l| l.starts_with("A/A control: ")).unwrap_or_else(|| panic!("{p}"));
        let of = &e.runner.controls.as_ref().unwrap().of;
        assert!(line.contains(&format!("{of} runs 5 more times")), "{line}");
        assert!(line.contains(&format!("({of} control=twin)")), "{line}");
        assert!(line.ends_with(&format!("{} to {} runs with it", runs * min + 5, runs * max + 5)));
        assert!(!plan(&plain, Path::new("/usr/bin/herd")).contains("A/A control"));
    }
}
