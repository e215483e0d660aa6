//! The client of a cell: herd's own engine (`herd run`), or the real ab, wrk or h2load so
//! that a cell can be compared tool to tool. Each client turns a [`ClientJob`] into command
//! lines ([`command`]) and its output back into measurements ([`parse`]); the lab runs the
//! commands (after [`ClientCommand::write_files`]) and hands their output back.
//!
//! The tools differ in what they can do, and [`command`] refuses what a tool cannot do, with
//! the reason and what to ask for instead, rather than approximate it: ab stops only after a
//! request count and has no open loop, wrk runs only for whole seconds and cannot stop after
//! N requests, h2load has no open loop, a SPECweb99 mix is herd's alone; ab and wrk speak
//! HTTP/1.1 only ([`speaks`]). So a cell that runs is the same load whatever the tool.
//!
//! Not here: running the processes, their time limits, storing results. One file per tool
//! (`herd.rs`, `ab.rs` with `ab_tsv.rs` for its `-g` file, `wrk.rs` with `wrk_script.rs`
//! for its Lua script, `h2load.rs` with `h2load_report.rs` for its report), `version.rs` for
//! `--version`, `error.rs` for [`ClientError`].
//!
//! Apart from these, [`smbtorture`] is the client of a NetBench (SMB) cell: Samba's
//! `smbtorture … bench.nbench`, with its own job, parser (`nbench_output.rs`) and errors
//! (`nbench_error.rs`), since an SMB trace replay is not an HTTP load.

mod ab;
mod ab_tsv;
mod cpu_verdict;
mod error;
mod h2load;
mod h2load_report;
pub(crate) mod herd;
mod nbench_error;
mod nbench_output;
pub mod smbtorture;
pub mod tbench;
pub mod trace;
mod version;
mod wrk;
mod wrk_script;

use std::ffi::OsString;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use hdrhistogram::Histogram;
use herd_stats::{ClientJudgement, HealthFacts, Measurement, Protocol};

use crate::load::{Load, Request, Shape, Warmup};

pub use ab::ab_failures;
pub use cpu_verdict::{judge as judge_by_cpu, ClientCpu};
pub use error::ClientError;
pub use version::{parse_version, version_argv};

/// A load generator the lab can run a cell with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tool {
    /// herd's own engine: `herd run … --json FILE`.
    Herd,
    /// ApacheBench 2.3 (Debian's apache2-utils).
    Ab,
    /// wrk 4 (Debian's wrk).
    Wrk,
    /// h2load (nghttp2 1.52, Debian's nghttp2-client): HTTP/2 with and without TLS, and
    /// HTTP/1.1.
    H2load,
    /// Samba's smbtorture (Debian's samba-testsuite) running NBENCH: dbench's NetBench trace
    /// over SMB1, the client of a `netbench` workload only. Its steps are run by the lab
    /// itself (`runner/netbench.rs`, through [`smbtorture::NbenchJob`]), not through
    /// [`command`] and [`parse`].
    Smbtorture,
    /// dbench's tbench (Debian's dbench): the same trace over plain TCP to tbench_srv, the
    /// client of a NetBench cell's calibration only (`matrix::cells` puts it there; an
    /// experiment file cannot name it, so it is not in [`Tool::ALL`]). Run by the lab like
    /// smbtorture, through [`tbench::TbenchJob`].
    Tbench,
}

/// One client run to build a command line for, or to read the output of.
#[derive(Debug, Clone, Copy)]
pub struct ClientJob<'a> {
    pub tool: Tool,
    /// The tool's executable: herd's own (`std::env::current_exe`), `/usr/bin/ab` or
    /// `/usr/bin/wrk`. The first element of every command line.
    pub program: &'a Path,
    /// `http://ADDR:PORT` (`https://` for a protocol over TLS or QUIC: [`base_url`]), no
    /// trailing slash; the request's path is appended. The address must be an IP literal in
    /// herd's allowed ranges (127.0.0.0/8, ::1, 198.18.0.0/15): herd checks that itself, ab
    /// and wrk do not, so the adapters do.
    pub base_url: &'a str,
    /// What the client speaks to the server ([`speaks`] says which tool speaks what).
    pub protocol: Protocol,
    /// The certificate (PEM) of the CA that signed the server's, for a protocol over TLS:
    /// herd verifies the server's certificate against it (`--ca-file`). ab, wrk and h2load
    /// do not verify certificates and do not need it.
    pub ca_file: Option<&'a Path>,
    pub request: &'a Request,
    /// The load; its `streams` are the requests at once per connection of a multiplexed
    /// protocol.
    pub load: &'a Load,
    /// Client threads (herd `-t`, wrk `-t`); None: the tool's default (herd: one per core, at
    /// most the connections; wrk: min(2, connections)). ab has one thread: only None or 1.
    pub threads: Option<u32>,
    /// herd only: the event-loop backend (`--io`); the other tools have their own.
    pub io: herd_engine::IoChoice,
    /// herd only: a `traceparent` on every request, a new trace id each run.
    pub trace: bool,
    /// An existing empty directory for the client's files: herd's `run.json`, ab's `-g`
    /// TSV, wrk's Lua script. [`parse`] reads them from here.
    pub out_dir: &'a Path,
    /// herd only: the run spread over this many agents (`herd cluster run --local N`); 1 is
    /// one `herd run`.
    pub agents: u8,
    /// With agents on a network path: each agent's client namespace, in agent order (empty:
    /// the agents share the client's place).
    pub agent_netns: &'a [String],
    /// The user's opt-in for one address outside the safety rule's ranges: the `[hosts]`
    /// server host the experiment file names. herd's client gets it as `HERD_ALLOW_TARGET`.
    pub opt_in: Option<IpAddr>,
    /// herd only: the agents on these SSH hosts instead, one each (`herd cluster run
    /// --ssh`, the `[hosts]` clients).
    pub agent_hosts: Option<AgentHosts<'a>>,
}

/// The environment variable in which the lab names itself to a herd it starts as a client,
/// which then stops when the lab dies (`PR_SET_PDEATHSIG`: crates/herd/src/parent_watch.rs).
pub const PARENT_VAR: &str = "HERD_PARENT_PID";

/// The `[hosts]` client hosts, as `herd cluster run --ssh` takes them.
#[derive(Debug, Clone, Copy)]
pub struct AgentHosts<'a> {
    /// `ssh://…` each, in file order.
    pub urls: &'a [String],
    pub ssh_config: Option<&'a Path>,
    /// How long each host's helper waits in silence before it stops its agent (`[hosts]
    /// idle_timeout`).
    pub idle: std::time::Duration,
    /// The CPUs of each host its agent runs on (`[client] cpus`); `All`: every one there.
    pub cpus: &'a herd_topo::CpuSet,
}

/// The command line of one job: a whole argv, the program then its arguments. A warm-up is
/// not the adapters' business: the runner runs the load's warm-up ([`Load::warmup_run`]) as
/// a job of its own, the same way for every tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCommand {
    /// The run; its stdout and stderr go to [`parse`].
    pub main: Vec<OsString>,
    /// Files the commands read (wrk's Lua script), to write before running either:
    /// [`ClientCommand::write_files`].
    pub files: Vec<ClientFile>,
}

/// A file a command needs, inside the job's `out_dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFile {
    pub path: PathBuf,
    pub contents: String,
}

/// What one client run measured.
#[derive(Debug, Clone)]
pub struct ClientOutcome {
    /// One measurement per step, in order; one for a run that is not stepped.
    pub steps: Vec<Measurement>,
    /// herd only: the client health verdict; for a stepped run, the worst step's.
    pub judgement: Option<ClientJudgement>,
    /// herd only: the figures its verdicts were judged on (each step's, in order).
    pub health: Option<HealthFacts>,
    /// herd only: which event-loop backend measured (`--io`), and why `auto` fell back.
    pub io: Option<herd_store::ClientIo>,
    /// herd only: the trace id its requests carried (`--trace-context`).
    pub trace_id: Option<String>,
}

/// The command line that runs `job`, or why its tool cannot run that load. Pure: nothing is
/// written or run ([`ClientCommand::files`] says what to write). The job's load carries no
/// warm-up: give the measured load ([`Load::measured`]) and run [`Load::warmup_run`] as a
/// job of its own.
pub fn command(job: &ClientJob) -> Result<ClientCommand, ClientError> {
    speaks(job.tool, job.protocol)?;
    check_job(job)?;
    if job.load.warmup != Warmup::None {
        return Err(job.invalid(
            "a client job carries no warm-up: the runner runs the load's warm-up as a job of its \
             own (Load::warmup_run) and measures Load::measured"
                .to_owned(),
        ));
    }
    match job.tool {
        Tool::Herd => herd::command(job),
        Tool::Ab => ab::command(job),
        Tool::Wrk => wrk::command(job),
        Tool::H2load => h2load::command(job),
        Tool::Smbtorture | Tool::Tbench => Err(not_http(job.tool)),
    }
}

/// Whether `tool` can run `load` sending `request` with `threads`, its warm-up included:
/// [`command`]'s refusal for the measured load and for the warm-up run, without a real job
/// (the address and directories are placeholders). For checking an experiment before
/// anything runs.
pub fn supports(
    tool: Tool,
    protocol: Protocol,
    load: &Load,
    request: &Request,
    threads: Option<u32>,
) -> Result<(), ClientError> {
    let measured = load.measured();
    let url = base_url(protocol, SocketAddr::from(([127, 0, 0, 1], 1)));
    let job = ClientJob {
        tool,
        program: Path::new(tool.name()),
        base_url: &url,
        protocol,
        ca_file: protocol.is_encrypted().then_some(Path::new("ca.pem")),
        request,
        load: &measured,
        threads,
        // Whether herd's backend runs here is the client's to say when it runs (its probe);
        // the command line is the same.
        io: herd_engine::IoChoice::Auto,
        trace: false,
        out_dir: Path::new("."),
        agents: 1,
        agent_netns: &[],
        opt_in: None,
        agent_hosts: None,
    };
    command(&job)?;
    if let Some(refusal) = warmup_refusal(&ClientJob { load, ..job }) {
        return Err(refusal);
    }
    if let Some(warm) = load.warmup_run() {
        command(&ClientJob { load: &warm, ..job })?;
    }
    Ok(())
}

/// Whether `tool` speaks `protocol`; the refusal says why not, and what does.
pub fn speaks(tool: Tool, protocol: Protocol) -> Result<(), ClientError> {
    let refuse = |why: &str, instead: &str| {
        Err(ClientError::Unsupported {
            tool,
            what: format!("speak {protocol}"),
            why: why.to_owned(),
            instead: instead.to_owned(),
        })
    };
    match (tool, protocol) {
        (Tool::Smbtorture | Tool::Tbench, _) => refuse(
            "it replays the NetBench trace (over SMB1, or plain TCP for tbench)",
            "give it a `netbench` workload, which has no HTTP protocol",
        ),
        (_, Protocol::H1 | Protocol::H1Tls) => Ok(()),
        (Tool::Herd, Protocol::H2 | Protocol::H2c | Protocol::H3) => Ok(()),
        (Tool::Ab | Tool::Wrk, Protocol::H3) => {
            refuse("it speaks HTTP/1.1 only (h1, h1-tls)", "use the herd client")
        }
        (Tool::Ab | Tool::Wrk, Protocol::H2 | Protocol::H2c) => {
            refuse("it speaks HTTP/1.1 only (h1, h1-tls)", "use the herd or h2load client")
        }
        (Tool::H2load, Protocol::H2 | Protocol::H2c) => Ok(()),
        (Tool::H2load, Protocol::H3) => refuse(
            "Debian's h2load 1.52 is built without ngtcp2 and has no --h3",
            "use the herd client",
        ),
    }
}

/// smbtorture asked to run an HTTP load: the refusal (the matrix refuses such cells before,
/// `crate::refusal`).
fn not_http(tool: Tool) -> ClientError {
    ClientError::Unsupported {
        tool,
        what: "run an HTTP load".to_owned(),
        why: "it replays the NetBench trace over SMB1".to_owned(),
        instead: "give it a `netbench` workload, or use herd, ab, wrk or h2load".to_owned(),
    }
}

/// The base URL of a server at `addr` for `protocol`: `https://` over TLS or QUIC.
pub fn base_url(protocol: Protocol, addr: SocketAddr) -> String {
    let scheme = if protocol.is_encrypted() { "https" } else { "http" };
    format!("{scheme}://{addr}")
}

/// Why `job.tool` cannot run the warm-up `job.load` asks for, in the tool's own terms.
fn warmup_refusal(job: &ClientJob) -> Option<ClientError> {
    match (job.tool, job.load.warmup) {
        (Tool::Ab, Warmup::Duration(_)) => Some(job.unsupported(
            "warm up for a duration",
            "its warm-up is a separate ab run, which stops after a request count",
            "give the warm-up as `warmup_requests`",
        )),
        (Tool::Wrk, Warmup::Requests(k)) if k > 0 => Some(job.unsupported(
            "warm up for a request count",
            "it runs for a duration and has no -n",
            "give the warm-up as `warmup = \"2s\"`",
        )),
        _ => None,
    }
}

/// What the run of `command(job)` measured, from its `main` run's stdout and stderr and the
/// files it left in `job.out_dir`.
/// What the run of `command(job)` measured, from its stdout and stderr and the files it left
/// in `job.out_dir`.
pub fn parse(job: &ClientJob, stdout: &str, stderr: &str) -> Result<ClientOutcome, ClientError> {
    match job.tool {
        Tool::Herd => herd::parse(job, stdout, stderr),
        Tool::Ab => ab::parse(job, stdout, stderr),
        Tool::Wrk => wrk::parse(job, stdout, stderr),
        Tool::H2load => h2load::parse(job, stdout, stderr),
        Tool::Smbtorture | Tool::Tbench => Err(not_http(job.tool)),
    }
}

/// Where `tool` is installed: herd is `herd_exe` itself; ab and wrk are looked for where
/// Debian (or a hand install) puts them. None: not installed ([`Tool::package`] says what
/// to install).
pub fn locate(tool: Tool, herd_exe: &Path) -> Option<PathBuf> {
    match tool {
        Tool::Herd => Some(herd_exe.to_path_buf()),
        Tool::Tbench => tbench::locate(),
        _ => candidates(tool).iter().map(PathBuf::from).find(|p| p.is_file()),
    }
}

/// Where Debian (or a hand install) puts `tool`, first found first: [`locate`] looks here
/// on this machine, the lab over ssh on a client host. Empty for herd (herd's own
/// executable) and tbench (found by `tbench::locate`).
pub fn candidates(tool: Tool) -> &'static [&'static str] {
    match tool {
        Tool::Herd | Tool::Tbench => &[],
        Tool::Ab => &["/usr/bin/ab", "/usr/sbin/ab", "/usr/local/bin/ab"],
        Tool::Wrk => &["/usr/bin/wrk", "/usr/local/bin/wrk"],
        Tool::H2load => &["/usr/bin/h2load", "/usr/local/bin/h2load"],
        Tool::Smbtorture => &["/usr/bin/smbtorture", "/usr/local/bin/smbtorture"],
    }
}

/// The files `tool` writes into the job's `out_dir` that [`parse`] reads (ab's `-g` TSV),
/// by name: what the lab copies back from a client host before parsing there.
pub fn output_files(tool: Tool) -> &'static [&'static str] {
    match tool {
        Tool::Ab => &[ab::TSV_FILE],
        Tool::Herd => &[herd::JSON_FILE],
        Tool::Wrk | Tool::H2load | Tool::Smbtorture | Tool::Tbench => &[],
    }
}

/// The threads an external client (ab, wrk) runs for `job`, for judging it by its CPU time;
/// None for herd, which judges itself.
pub fn external_threads(job: &ClientJob) -> Option<u32> {
    match job.tool {
        Tool::Ab => Some(1),
        Tool::Wrk => Some(wrk::threads(job, job.load.shape.max_connections())),
        Tool::H2load => Some(h2load::threads(job)),
        Tool::Herd | Tool::Smbtorture | Tool::Tbench => None,
    }
}

impl Tool {
    pub const ALL: [Tool; 5] = [Tool::Herd, Tool::Ab, Tool::Wrk, Tool::H2load, Tool::Smbtorture];
    /// The HTTP load generators: the tools [`command`] and [`parse`] serve.
    pub const HTTP: [Tool; 4] = [Tool::Herd, Tool::Ab, Tool::Wrk, Tool::H2load];

    /// The Debian package that installs it.
    pub fn package(self) -> &'static str {
        match self {
            Tool::Herd => "herd (this program)",
            Tool::Ab => "apache2-utils",
            Tool::Wrk => "wrk",
            Tool::H2load => "nghttp2-client",
            Tool::Smbtorture => "samba-testsuite",
            Tool::Tbench => "dbench",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tool::Herd => "herd",
            Tool::Ab => "ab",
            Tool::Wrk => "wrk",
            Tool::H2load => "h2load",
            Tool::Smbtorture => "smbtorture",
            Tool::Tbench => "tbench",
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tool {
    type Err = ClientError;

    fn from_str(s: &str) -> Result<Tool, ClientError> {
        Tool::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| ClientError::UnknownTool { name: s.to_owned() })
    }
}

impl ClientJob<'_> {
    /// The URL every request goes to: the base URL and the request's path.
    pub fn url(&self) -> String {
        format!("{}{}", self.base_url, self.request.path)
    }

    /// A file in the job's output directory.
    fn out_file(&self, name: &str) -> PathBuf {
        self.out_dir.join(name)
    }

    fn unsupported(&self, what: &str, why: &str, instead: &str) -> ClientError {
        ClientError::Unsupported {
            tool: self.tool,
            what: what.to_owned(),
            why: why.to_owned(),
            instead: instead.to_owned(),
        }
    }

    fn invalid(&self, problem: String) -> ClientError {
        ClientError::InvalidLoad { tool: self.tool, problem }
    }
}

impl ClientCommand {
    /// Writes [`ClientCommand::files`]; call it before running the commands.
    pub fn write_files(&self) -> Result<(), ClientError> {
        for f in &self.files {
            std::fs::write(&f.path, &f.contents)
                .map_err(|source| ClientError::WriteFile { path: f.path.clone(), source })?;
        }
        Ok(())
    }
}

/// What every tool needs: a URL to an allowed address, and a load that makes sense (counts
/// and durations above zero). Checked once here so that each tool's file only says what
/// that tool cannot do.
fn check_job(job: &ClientJob) -> Result<(), ClientError> {
    check_url(job.base_url, job.protocol, job.opt_in)?;
    if !job.request.path.starts_with('/') {
        return Err(
            job.invalid(format!("the request path `{}` must start with `/`", job.request.path))
        );
    }
    let load = job.load;
    let positive = |what: &str, d: Duration| {
        if d.is_zero() {
            Err(job.invalid(format!("{what} must be more than zero")))
        } else {
            Ok(())
        }
    };
    positive("the timeout", load.timeout)?;
    if let Warmup::Duration(d) = load.warmup {
        positive("the warm-up", d)?;
    }
    match &load.shape {
        Shape::Requests { n_requests, concurrency } => {
            at_least_one(job, "the request count", *n_requests)?;
            at_least_one(job, "the concurrency", u64::from(*concurrency))?;
        }
        Shape::Duration { duration, concurrency } => {
            positive("the duration", *duration)?;
            at_least_one(job, "the concurrency", u64::from(*concurrency))?;
        }
        Shape::Rate { per_second, duration, connections } => {
            if !(per_second.is_finite() && *per_second > 0.0) {
                return Err(
                    job.invalid(format!("the rate {per_second} must be a number more than zero"))
                );
            }
            positive("the duration", *duration)?;
            at_least_one(job, "the connections", u64::from(*connections))?;
        }
        Shape::Steps { clients, step } => {
            if clients.is_empty() {
                return Err(job.invalid("a stepped load needs at least one step".to_owned()));
            }
            for &c in clients {
                at_least_one(job, "every step's clients", u64::from(c))?;
            }
            positive("the step time", *step)?;
        }
        Shape::RateSteps { rates, step, connections } => {
            if rates.is_empty() {
                return Err(job.invalid("a stepped load needs at least one step".to_owned()));
            }
            if let Some(r) = rates.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
                return Err(job.invalid(format!("the rate {r} must be a number more than zero")));
            }
            positive("the step time", *step)?;
            at_least_one(job, "the connections", u64::from(*connections))?;
        }
    }
    if job.threads == Some(0) {
        return Err(job.invalid("the threads must be at least 1".to_owned()));
    }
    if load.streams.is_some() && !job.protocol.is_multiplexed() {
        return Err(job.invalid(format!(
            "`streams` is for a protocol that multiplexes requests (h2, h2c, h3); {} carries \
             one request at a time on a connection",
            job.protocol
        )));
    }
    Ok(())
}

fn at_least_one(job: &ClientJob, what: &str, n: u64) -> Result<(), ClientError> {
    if n == 0 {
        Err(job.invalid(format!("{what} must be at least 1")))
    } else {
        Ok(())
    }
}

/// The protocol's scheme (`http://`, `https://` over TLS or QUIC) and an IP literal in
/// herd's ranges: ab and wrk would send load anywhere, and a host name would need a
/// resolver here (and could change between the check and the run).
fn check_url(
    base_url: &str,
    protocol: Protocol,
    opt_in: Option<IpAddr>,
) -> Result<(), ClientError> {
    let refuse = |reason: String| ClientError::NotAllowed { url: base_url.to_owned(), reason };
    let scheme = if protocol.is_encrypted() { "https://" } else { "http://" };
    let Some(authority) = base_url.strip_prefix(scheme) else {
        return Err(refuse(format!("{protocol} ({}) goes to a {scheme} URL", protocol.describe())));
    };
    if authority.contains('/') {
        return Err(refuse("give the base URL without a path (the request adds it)".to_owned()));
    }
    // `[::1]:8080` or `127.0.0.1:8080`; the port is optional.
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map(|(h, _)| h).unwrap_or(rest),
        None => authority.split_once(':').map_or(authority, |(h, _)| h),
    };
    let ip: IpAddr = host
        .parse()
        .map_err(|_| refuse(format!("`{host}` is not an IP address; give one (e.g. 127.0.0.1)")))?;
    if opt_in == Some(ip) {
        return Ok(());
    }
    herd_engine::check_allowed(ip).map_err(|e| refuse(e.to_string()))
}

/// `d` in whole seconds, for ab's `-s` and wrk's `-d` and `--timeout`, which take nothing
/// finer.
fn whole_seconds(job: &ClientJob, what: &str, d: Duration) -> Result<u64, ClientError> {
    if d.subsec_nanos() == 0 && d.as_secs() > 0 {
        Ok(d.as_secs())
    } else {
        Err(ClientError::Unsupported {
            tool: job.tool,
            what: format!("run a {what} of {d:?}"),
            why: format!("{} takes whole seconds", job.tool),
            instead: "give a whole number of seconds".to_owned(),
        })
    }
}

/// The body's content type for a POST, or None for a GET.
fn post_body(request: &Request) -> Option<(&Path, &str)> {
    match &request.method {
        crate::load::Method::Get => None,
        crate::load::Method::Post { body_file, content_type } => {
            Some((body_file.as_path(), content_type.as_str()))
        }
    }
}

/// An argv from its parts.
fn argv<I, S>(parts: I) -> Vec<OsString>
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    parts.into_iter().map(Into::into).collect()
}

/// An empty histogram with herd's resolution (1 µs to an hour, 3 significant digits), so
/// that every tool's histograms merge with every other's.
fn empty_histogram(tool: Tool) -> Result<Histogram<u64>, ClientError> {
    Histogram::new_with_bounds(1, MAX_MICROS, 3).map_err(|e| ClientError::Output {
        tool,
        problem: format!("cannot make a histogram: {e:?}"),
    })
}

/// herd's histograms' top, an hour in µs; longer latencies are recorded as an hour.
const MAX_MICROS: u64 = 3_600_000_000;

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod nbench_fixture_tests;
#[cfg(test)]
mod tbench_fixture_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trace_captures;
