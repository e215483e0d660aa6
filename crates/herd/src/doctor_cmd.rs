//! `herd doctor`: prints herd-lab's machine checks, one line each, and exits 0 when nothing
//! is missing, 1 otherwise (warnings alone do not fail). With `--json`, the checks and the
//! machine's disclosure (herd-lab's `environment::record`, what a lab run stores with its
//! results) as one object, format `herd.doctor.v1`: a lab host's helper (`herd host`) sends
//! it, so that every host of an experiment is disclosed as this machine is.

use std::process::ExitCode;

use herd_lab::doctor::{self, Status};

pub(crate) fn main(json: bool) -> ExitCode {
    let herd_exe = std::env::current_exe().unwrap_or_else(|_| "herd".into());
    let scratch = std::env::temp_dir().join(format!("herd-doctor-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&scratch) {
        eprintln!("herd doctor: cannot create {}: {e}", scratch.display());
        return ExitCode::FAILURE;
    }
    let mut checks = doctor::checks(&herd_exe, &scratch);
    // herd serve's own choice, beside the client's io_uring line (herd-lab does not link the
    // server).
    let after_uring =
        checks.iter().position(|c| c.what == "io_uring").map_or(checks.len(), |i| i + 1);
    checks.insert(after_uring, serve_io());
    let _ = std::fs::remove_dir_all(&scratch);
    let missing = checks.iter().any(|c| c.status == Status::Missing);
    if json {
        println!("{}", as_json(&checks));
        return if missing { ExitCode::FAILURE } else { ExitCode::SUCCESS };
    }
    let mut n_missing = 0;
    for c in &checks {
        let tag = match c.status {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Missing => {
                n_missing += 1;
                "MISS"
            }
        };
        println!("{tag}  {}: {}", c.what, c.detail);
    }
    if n_missing > 0 {
        println!(
            "\n{n_missing} missing: experiments that need them cannot run (herd lab refuses them before they start); install what each line names"
        );
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// What `herd serve --io auto` takes here, plain and with TLS: `epoll (auto: io_uring not
/// yet measured faster for h2c) for plain TCP; epoll (auto: …) with TLS`.
fn serve_io() -> doctor::Check {
    let say = |tls| match herd_serve::io_auto_takes(tls) {
        Ok(r) => r.to_string(),
        Err(e) => e.to_string(),
    };
    doctor::Check {
        status: Status::Ok,
        what: "herd serve --io auto".into(),
        detail: format!("{} for plain TCP; {} with TLS", say(false), say(true)),
    }
}

/// The checks and the machine's disclosure as one JSON object.
fn as_json(checks: &[doctor::Check]) -> serde_json::Value {
    let status = |s: Status| match s {
        Status::Ok => "ok",
        Status::Warn => "warn",
        Status::Missing => "missing",
    };
    let environment: serde_json::Map<String, serde_json::Value> =
        herd_lab::environment::record(env!("HERD_VERSION"))
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::String(v)))
            .collect();
    serde_json::json!({
        "format": "herd.doctor.v1",
        "checks": checks
            .iter()
            .map(|c| serde_json::json!({
                "what": c.what,
                "status": status(c.status),
                "detail": c.detail,
            }))
            .collect::<Vec<_>>(),
        "environment": environment,
    })
}
