//! ab, wrk and h2load on a `[hosts]` client host: the client phase of `client_run.rs`, run
//! on client 1 through its helper instead of here. These tools cannot spread one run over
//! hosts as herd's agents do, so they run on the first client host alone.
//!
//! Each run's job names the host's files: its output directory is `client/PHASE` in the
//! helper's run directory (made anew, the same each run, so that a long experiment leaves
//! one set of files there, and its outputs emptied first so that a stale one is never read),
//! the files the command reads (wrk's Lua script, a POST body) are written there first, and
//! the tool is started through the helper with its stdout in the helper's log and its
//! stderr in a file of its own (`sh -c 'exec "$@" 2>FILE'`). herd polls the helper until it
//! ends (within the same time limit as here; Ctrl-C stops it there), then reads stdout,
//! stderr and the files the tool's parser reads (ab's `-g` TSV) back into the run's local
//! directory, so that `client::parse` reads local copies as it does for a run here. The
//! stored command line names the host: its program is `ssh://HOST:/usr/bin/ab`.
//!
//! Not here: locating the tools there and asking their versions (`client_hosts.rs`).

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use herd_host::protocol::{StartSpec, MAX_READ_BYTES};
use herd_topo::proc::Finished;

use super::cell::CellRun;
use super::client_hosts::ClientHosts;
use super::client_run::{output_tail, time_limit, ClientRun, CLIENT_GRACE};
use super::failure::{Phase, RunFailure, Stop};
use super::log_tail::last_lines;
use super::watched::Started;
use crate::client;
use crate::error::with_causes;
use crate::load::{Load, Method, Request};

/// How often the helper is asked whether the tool has ended.
const POLL: Duration = Duration::from_millis(25);
/// The POST body's copy on the host, in the run's output directory.
const BODY_FILE: &str = "post-body";

impl CellRun<'_> {
    /// Runs the cell's client (ab, wrk, h2load) once with `load` on client 1 of `hosts`;
    /// `dir` is the run's local directory for its output. Fails as a run here does, naming
    /// the host.
    pub(super) fn run_tool_on_host(
        &mut self,
        hosts: &ClientHosts,
        phase: Phase,
        load: &Load,
        request: &Request,
        started: &Started,
        dir: PathBuf,
    ) -> Result<ClientRun, Stop> {
        let tool = self.cell.client;
        let Some(first) = hosts.first() else {
            return Err(RunFailure::Setup("[hosts] names no client host".to_owned()).into());
        };
        let url = first.url.to_string();
        let on = |why: String| RunFailure::Setup(format!("client host {url}: {why}"));
        let run_dir = PathBuf::from(&first.hello.run_dir);
        let rel = format!("client/{}", phase.name());
        let out_dir = run_dir.join(&rel);
        hosts.call(|l| l.make_dir(&rel, Some(0o755), None)).map_err(on)?;
        // The files the job names must be the host's: a POST body is copied there.
        let mut there = request.clone();
        if let Method::Post { body_file, content_type } = &request.method {
            let bytes = std::fs::read(body_file).map_err(|e| {
                RunFailure::Setup(format!("cannot read {}: {e}", body_file.display()))
            })?;
            let to = format!("{rel}/{BODY_FILE}");
            hosts.call(|l| l.write_file(&to, &bytes, 0o644)).map_err(on)?;
            let content_type = content_type.clone();
            there.method = Method::Post { body_file: out_dir.join(BODY_FILE), content_type };
        }
        let base_url = self.base_url();
        // ab, wrk and h2load verify no certificate: no CA file goes there.
        let job = self.job(load, &there, &base_url, None, &out_dir, &[])?;
        let setup = |err: client::ClientError| RunFailure::Setup(with_causes(&err));
        let cmd = client::command(&job).map_err(setup)?;
        for f in &cmd.files {
            let to = inside(&run_dir, &f.path).map_err(on)?;
            hosts.call(|l| l.write_file(&to, f.contents.as_bytes(), 0o644)).map_err(on)?;
        }
        for name in client::output_files(tool) {
            let to = format!("{rel}/{name}");
            hosts.call(|l| l.write_file(&to, b"", 0o644)).map_err(on)?;
        }
        let mut main: Vec<String> =
            cmd.main.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        if phase == Phase::Measure {
            let mut argv = main.clone();
            if let Some(program) = argv.first_mut() {
                *program = format!("{url}:{program}");
            }
            self.rec.client.argv = argv;
        }
        let id = format!("client-{}", phase.name());
        let log = format!("{id}.out");
        let stderr_file = format!("{rel}/stderr");
        let script = "e=$1; shift; exec \"$@\" 2>\"$e\"";
        let mut argv = vec!["/bin/sh".to_owned(), "-c".into(), script.into(), "sh".into()];
        argv.push(run_dir.join(&stderr_file).display().to_string());
        argv.append(&mut main);
        let spec = StartSpec {
            id: id.clone(),
            argv,
            env: Vec::new(),
            cwd: Some(out_dir.display().to_string()),
            cpus: hosts.start_cpus(),
            log: log.clone(),
        };
        let before = (phase == Phase::Measure).then(|| self.usage(started));
        let clock = Instant::now();
        hosts.call(|l| l.start(spec)).map_err(|why| on(format!("cannot start {tool}: {why}")))?;
        let limit = time_limit(load);
        let stop = |grace| hosts.call(|l| l.stop(&id, Some(grace)));
        let ending = loop {
            if self.cancelled() {
                let _ = stop(Duration::ZERO);
                return Err(Stop::Cancelled { client: true });
            }
            match hosts.call(|l| l.status(&id)) {
                Ok(Some(ending)) => break Some(ending),
                Ok(None) if clock.elapsed() >= limit => break None,
                Ok(None) => std::thread::sleep(POLL),
                Err(why) => {
                    let _ = stop(CLIENT_GRACE);
                    return Err(on(format!("{tool} was lost: {why}")).into());
                }
            }
        };
        let elapsed = clock.elapsed();
        let usage = before.map(|before| (before, self.usage(started)));
        let Some(ending) = ending else {
            let _ = stop(CLIENT_GRACE);
            let tail = match hosts.call(|l| l.read_file(&stderr_file, MAX_READ_BYTES)) {
                Ok(part) => last_lines(&part.text),
                Err(why) => format!("(not read: {why})"),
            };
            let failed = RunFailure::ClientTimedOut {
                tool,
                phase,
                limit,
                stderr_tail: format!("(on {url}) {tail}"),
            };
            return Err(started.exited(self.sup, self.ctx.remotes()).unwrap_or(failed).into());
        };
        // Its CPU time, where the host reads it from a cgroup kept until it is stopped.
        let cpu_seconds = hosts.call(|l| l.cpu(&id)).ok().map(|(s, _)| s);
        stop(CLIENT_GRACE).map_err(on)?;
        let mut back = vec![(log, dir.join("stdout")), (stderr_file, dir.join("stderr"))];
        for name in client::output_files(tool) {
            back.push((format!("{rel}/{name}"), dir.join(name)));
        }
        for (from, to) in back {
            let part = hosts.call(|l| l.read_file(&from, MAX_READ_BYTES)).map_err(on)?;
            if part.truncated {
                return Err(on(format!(
                    "{from} is {} bytes, over the {MAX_READ_BYTES} its helper reads back (ab's \
                     -g file has a line a request: run fewer requests)",
                    part.size
                ))
                .into());
            }
            std::fs::write(&to, part.text)
                .map_err(|e| RunFailure::Setup(format!("cannot write {}: {e}", to.display())))?;
        }
        let status = exit_status(ending.code, ending.signal);
        if phase == Phase::Warmup && !status.success() {
            let tail = output_tail(&dir.join("stdout"), &dir.join("stderr"));
            let failed = RunFailure::ClientFailed {
                tool,
                phase,
                status,
                problem: None,
                stderr_tail: Some(format!("(on {url}) {tail}")),
            };
            return Err(started.exited(self.sup, self.ctx.remotes()).unwrap_or(failed).into());
        }
        let finished =
            Finished { status, timed_out: false, cancelled: false, elapsed, cpu_seconds };
        Ok(ClientRun { finished, dir, usage })
    }
}

/// `path` on the host as its helper takes it: relative to its run directory `run_dir`.
fn inside(run_dir: &Path, path: &Path) -> Result<String, String> {
    path.strip_prefix(run_dir).map(|p| p.display().to_string()).map_err(|_| {
        format!("{} is outside the helper's run directory {}", path.display(), run_dir.display())
    })
}

/// The exit status the helper described: its code, or the signal that ended it.
fn exit_status(code: Option<i32>, signal: Option<i32>) -> ExitStatus {
    match (code, signal) {
        (Some(code), _) => ExitStatus::from_raw((code & 0xff) << 8),
        (None, Some(signal)) => ExitStatus::from_raw(signal & 0x7f),
        // Neither: the helper could not say; not taken for a success.
        (None, None) => ExitStatus::from_raw(0xff << 8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helpers_words_become_the_exit_status() {
        assert!(exit_status(Some(0), None).success());
        assert_eq!(exit_status(Some(22), None).code(), Some(22));
        assert_eq!(exit_status(None, Some(9)).signal(), Some(9));
        assert!(!exit_status(None, None).success());
    }

    #[test]
    fn a_host_path_is_taken_relative_to_the_run_directory() {
        let run = Path::new("/tmp/herd-host-1");
        assert_eq!(
            inside(run, &run.join("client/measure/wrk.lua")).unwrap(),
            "client/measure/wrk.lua"
        );
        let e = inside(run, Path::new("/etc/passwd")).unwrap_err();
        assert!(e.contains("outside the helper's run directory"), "{e}");
    }
}
