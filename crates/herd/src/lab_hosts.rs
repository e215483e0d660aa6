//! `herd lab hosts check FILE` and `herd lab hosts install FILE`: the experiment's `[hosts]`
//! reached over SSH (herd-lab's `hosts`), one line per host, and the exit code. Check exits
//! 0 only when every host answers, has this very build and every program the file's cells
//! need there (a line each under the host's); install copies this binary to the hosts that
//! lack it and exits 0 only when every host then has it.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use herd_lab::hosts::check::{self, HostCheck, Installed};
use herd_lab::hosts::install::{self, Done};
use herd_lab::hosts::session::HostSession;
use herd_lab::hosts::ssh::Ssh;
use herd_lab::hosts::{build_id, Hosts, Role};
use herd_lab::matrix::Cell;

#[derive(Debug, Subcommand)]
pub(crate) enum HostsCommand {
    /// Connect to every host of the file: reachable or why not, its kernel and CPUs, which
    /// herd build its cache holds, and the programs the file's cells need there.
    Check(HostsArgs),
    /// Copy this herd to every host's ~/.cache/herd/ (nothing system-wide), then check that
    /// it runs there.
    Install(HostsArgs),
}

#[derive(Debug, Args)]
pub(crate) struct HostsArgs {
    /// An experiment file with a [hosts] section.
    #[arg(value_name = "EXPERIMENT")]
    experiment: String,
    /// How long ssh may take to connect to a host (ssh's ConnectTimeout, whole seconds).
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = connect_timeout)]
    connect_timeout: Duration,
}

const VERSION: &str = env!("HERD_VERSION");

pub(crate) fn main(cmd: HostsCommand) -> ExitCode {
    let result = match cmd {
        HostsCommand::Check(a) => check(&a),
        HostsCommand::Install(a) => install(&a),
    };
    result.unwrap_or_else(|e| {
        eprintln!("herd lab hosts: {e:#}");
        ExitCode::FAILURE
    })
}

fn connect_timeout(text: &str) -> Result<Duration, String> {
    let d = herd_stats::units::parse_duration(text).map_err(|e| e.to_string())?;
    if d < Duration::from_secs(1) || d.subsec_nanos() != 0 {
        return Err(format!(
            "`{text}`: ssh's ConnectTimeout counts whole seconds: give 1s or more"
        ));
    }
    Ok(d)
}

/// The file's hosts and a transport for them.
fn open(a: &HostsArgs) -> anyhow::Result<(Hosts, Ssh)> {
    let (hosts, ssh, _) = open_with_cells(a)?;
    Ok((hosts, ssh))
}

/// [`open`], with the cells of the file a run would run (the refused ones left out).
fn open_with_cells(a: &HostsArgs) -> anyhow::Result<(Hosts, Ssh, Vec<Cell>)> {
    let e = crate::lab_cmd::load(&a.experiment)?;
    let cells: Vec<Cell> =
        herd_lab::matrix::cells(&e).into_iter().filter(|c| c.refused.is_none()).collect();
    let hosts = e.hosts.with_context(|| {
        format!("{} has no [hosts]: docs/hosts.md says how to name your machines", a.experiment)
    })?;
    let ssh = Ssh::new(hosts.ssh_config.as_deref(), a.connect_timeout, &std::env::temp_dir())
        .context("cannot make a private directory for ssh's control sockets")?;
    Ok((hosts, ssh, cells))
}

/// `herd lab clean --hosts FILE`: each host's helper, started for it, stops what helpers
/// killed there left (their programs, cgroups and run directories); a line per host. Exits
/// non-zero when some host could not be reached or cleaned.
pub(crate) fn clean(file: &str) -> anyhow::Result<ExitCode> {
    let args = HostsArgs { experiment: file.to_owned(), connect_timeout: Duration::from_secs(10) };
    let (hosts, ssh) = open(&args)?;
    let all = hosts.each();
    let width = label_width(&all);
    let mut failed = 0;
    for (role, url) in &all {
        let label = format!("{role}:");
        let line = match clean_one(&ssh, url) {
            Ok(said) => format!("{label:<width$} {url}: {said}"),
            Err(e) => {
                failed += 1;
                format!("{label:<width$} {e}")
            }
        };
        write_stdout(&format!("{line}\n"))?;
    }
    if failed > 0 {
        eprintln!("herd lab clean: {failed} of {} hosts not cleaned", all.len());
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// One host's clean, in words: `stopped 1 program (4242 server), removed 1 run directory`.
fn clean_one(ssh: &Ssh, url: &herd_lab::hosts::HostUrl) -> anyhow::Result<String> {
    let session = HostSession::open(ssh, url, VERSION)?;
    let c = session.with(|l| l.clean()).map_err(|e| anyhow::anyhow!("{e}"))?;
    session.bye().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut said = format!(
        "stopped {} program(s){}, removed {} run director{} and {} cgroup(s)",
        c.stopped.len(),
        if c.stopped.is_empty() { String::new() } else { format!(" ({})", c.stopped.join(", ")) },
        c.dirs.len(),
        if c.dirs.len() == 1 { "y" } else { "ies" },
        c.cgroups.len()
    );
    if !c.in_use.is_empty() {
        said.push_str(&format!("; left {} of helpers still running", c.in_use.join(", ")));
    }
    if !c.errors.is_empty() {
        anyhow::bail!("{url}: {said}; could not remove: {}", c.errors.join("; "));
    }
    Ok(said)
}

fn check(a: &HostsArgs) -> anyhow::Result<ExitCode> {
    let (hosts, ssh, cells) = open_with_cells(a)?;
    let all = hosts.each();
    let checks = check::check(&ssh, &all, &cells, VERSION);
    let width = label_width(&all);
    let mut out = String::new();
    for c in &checks {
        out.push_str(&check_line(c, width, &a.experiment));
        out.push('\n');
        out.push_str(&needs_lines(c, width));
    }
    write_stdout(&out)?;
    for c in &checks {
        for n in c.missing() {
            let why = n.found.as_ref().err().map_or("", String::as_str);
            eprintln!("herd lab hosts: {} {}: {}: {why}", c.role, c.url, n.what);
        }
    }
    let not_ready = checks.iter().filter(|c| !c.ready()).count();
    if not_ready > 0 {
        eprintln!(
            "herd lab hosts: {not_ready} of {} hosts not ready for herd {VERSION}",
            checks.len()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn install(a: &HostsArgs) -> anyhow::Result<ExitCode> {
    let (hosts, ssh) = open(a)?;
    let exe = std::env::current_exe().context("cannot find herd's own executable")?;
    let all = hosts.each();
    let done = install::install(&ssh, &all, &exe, VERSION);
    let width = label_width(&all);
    let id = build_id(VERSION);
    let mut out = String::new();
    for d in &done {
        let label = format!("{}:", d.role);
        let line = match &d.result {
            Ok(Done::Installed) => {
                format!("{label:<width$} {}: installed ~/.cache/herd/herd-{id}, and it runs", d.url)
            }
            Ok(Done::AlreadyThere) => {
                format!("{label:<width$} {}: same build there already (herd-{id})", d.url)
            }
            Err(e) => format!("{label:<width$} {e}"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    write_stdout(&out)?;
    let failed = done.iter().filter(|d| d.result.is_err()).count();
    if failed > 0 {
        eprintln!("herd lab hosts: {failed} of {} hosts without herd {VERSION}", done.len());
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// `server:   ssh://bench@198.18.3.2: reachable, Linux 6.1.0, 4 CPUs; herd: same build;
/// helper: CPUs 0-3, server CPU from cgroup-v2; AMD EPYC 7B13, 8 GiB`.
fn check_line(c: &HostCheck, width: usize, file: &str) -> String {
    let label = format!("{}:", c.role);
    match &c.result {
        Ok(f) => {
            let herd = match &f.installed {
                Installed::None => format!("none: `herd lab hosts install {file}`"),
                Installed::Other(_) => {
                    format!("{}: `herd lab hosts install {file}`", f.installed)
                }
                other => other.to_string(),
            };
            let helper = match &f.helper {
                None => String::new(),
                Some(Ok(h)) => {
                    let machine = |key: &str| {
                        h.machine.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
                    };
                    let mut said =
                        format!("; helper: CPUs {}, server CPU from {}", h.online, h.accounting);
                    let memory = machine("memory_total").map(memory_in_gib);
                    let facts: Vec<String> =
                        machine("cpu_model").map(str::to_owned).into_iter().chain(memory).collect();
                    if !facts.is_empty() {
                        said.push_str(&format!("; {}", facts.join(", ")));
                    }
                    said
                }
                Some(Err(e)) => format!("; helper: does not answer: {e}"),
            };
            format!(
                "{label:<width$} {}: reachable, {}, {} CPUs; herd: {herd}{helper}",
                c.url, f.kernel, f.cpus
            )
        }
        Err(e) => format!("{label:<width$} {e}"),
    }
}

/// What the cells need on the host, a line each under its own line, indented past the
/// label: `          server nginx: nginx /usr/sbin/nginx`, or `…: missing: …` with the
/// package.
fn needs_lines(c: &HostCheck, width: usize) -> String {
    let Ok(f) = &c.result else { return String::new() };
    let mut out = String::new();
    for n in &f.needs {
        let said = match &n.found {
            Ok(there) => there.clone(),
            Err(why) => format!("missing: {why}"),
        };
        out.push_str(&format!("{:width$} {}: {said}\n", "", n.what));
    }
    out
}

fn label_width(all: &[(Role, &herd_lab::hosts::HostUrl)]) -> usize {
    all.iter().map(|(r, _)| r.to_string().len() + 1).max().unwrap_or(0)
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).context("cannot write to stdout")
}

/// /proc/meminfo's `24683568 kB` as `23.5 GiB`; anything else as it is.
fn memory_in_gib(meminfo: &str) -> String {
    match meminfo.strip_suffix(" kB").and_then(|k| k.trim().parse::<u64>().ok()) {
        Some(kib) => format!("{:.1} GiB", kib as f64 / (1024.0 * 1024.0)),
        None => meminfo.to_owned(),
    }
}

#[cfg(test)]
mod memory_tests {
    #[test]
    fn meminfo_is_said_in_gib() {
        assert_eq!(super::memory_in_gib("24683568 kB"), "23.5 GiB");
        assert_eq!(super::memory_in_gib("unknown"), "unknown");
    }
}
