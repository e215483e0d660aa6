//! `herd cluster run --agents N` drives the user's kubectl: apply, wait for the Job, read
//! agent 0's result from its log, delete. Here `HERD_KUBECTL` is a script that answers as
//! kubectl would for a Job that completes, fails or runs on (and logs every call), so the
//! flow, its messages and its clean-up are checked in CI; a real cluster (control plane,
//! kubelets over containerd, CoreDNS) runs in the opt-in end-to-end script
//! (scripts/k8s-e2e.sh, docs/cluster.md). The
//! result it hands back is a real one: `herd cluster run --local 2` against nginx.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

use crate::util;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use util::{herd, run, tempdir, text, Nginx};

const FAKE: &str = r#"#!/bin/sh
# kubectl as a test needs it: every call logged; answers from FAKE_STATE and FAKE_RESULT.
echo "$*" >> "$FAKE_DIR/calls"
case "$*" in
  apply\ -f\ *) cp "$3" "$FAKE_DIR/applied.yaml"; echo "service/x created"; echo "job.batch/x created" ;;
  *"failedIndexes"*) echo "1" ;;
  *'@.type=="Failed"'*) echo "Container agent for pod default/herd-t-1-x failed with exit code 1 matching FailJob rule at index 1" ;;
  get\ job/*) case "$FAKE_STATE" in Complete) echo Complete ;; Failed) echo FailureTarget; echo Failed ;; *) : ;; esac ;;
  get\ pods*index=1*) printf herd-t-1-x ;;
  get\ pods*) printf herd-t-0-abcde ;;
  logs\ herd-t-0-abcde*) cat "$FAKE_RESULT" ;;
  logs\ herd-t-1-x*) echo "herd agent: agent 1 of 2: cannot resolve \"vm\": Temporary failure in name resolution"; echo ;;
  delete*) echo 'job.batch "herd-t" deleted' ;;
  *) echo "fake kubectl: unexpected $*" >&2; exit 1 ;;
esac
"#;

/// The fake kubectl in `dir`, and a real result for it to hand back.
fn setup(dir: &Path, nginx: &Nginx) -> (PathBuf, PathBuf) {
    let fake = dir.join("kubectl");
    std::fs::write(&fake, FAKE).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let result = dir.join("result.json");
    let out = run(herd()
        .args(["cluster", "run", "--local", "2", "--"])
        .arg(nginx.url("/small.html"))
        .args(["-n", "200", "-c", "2", "-t", "1", "--json"])
        .arg(&result));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    (fake, result)
}

fn calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn cluster_run(
    dir: &Path,
    fake: &Path,
    result: &Path,
    state: &str,
    url: &str,
) -> std::process::Command {
    let mut cmd = herd();
    cmd.env("HERD_KUBECTL", fake)
        .env("FAKE_DIR", dir)
        .env("FAKE_RESULT", result)
        .env("FAKE_STATE", state)
        .args(["cluster", "run", "--agents", "2", "--image", "herd:t", "--name", "herd-t", "--"])
        .arg(url)
        .args(["-n", "200", "-c", "2", "-t", "1"]);
    cmd
}

#[test]
fn a_completed_job_gives_its_result_and_is_deleted() {
    let nginx = Nginx::start();
    let dir = tempdir("kubectl-ok");
    let (fake, result) = setup(&dir, &nginx);
    let json = dir.join("out.json");
    let out = run(cluster_run(&dir, &fake, &result, "Complete", &nginx.url("/small.html"))
        .arg("--json")
        .arg(&json));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("200 requests in"), "{stdout}");
    assert!(stdout.contains("agent 1 "), "{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["requests"]["completed"], 200);
    assert_eq!(v["agents"].as_array().unwrap().len(), 2);
    let applied = std::fs::read_to_string(dir.join("applied.yaml")).unwrap();
    assert!(
        applied.contains("completionMode: Indexed") && applied.contains("name: herd-t"),
        "{applied}"
    );
    assert!(!applied.contains("--json"), "the pod writes no file: {applied}");
    let c = calls(&dir);
    let first = |prefix: &str| {
        c.iter().position(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix}: {c:?}"))
    };
    assert!(first("apply") < first("get job/herd-t"), "{c:?}");
    assert!(first("get job/herd-t") < first("logs herd-t-0-abcde"), "{c:?}");
    assert!(first("logs") < first("delete"), "{c:?}");
    assert!(c.last().unwrap().contains("herd.dev/run=herd-t"), "deleted by its label: {c:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_job_says_which_agent_and_is_deleted() {
    let nginx = Nginx::start();
    let dir = tempdir("kubectl-failed");
    let (fake, result) = setup(&dir, &nginx);
    let out = run(&mut cluster_run(&dir, &fake, &result, "Failed", &nginx.url("/small.html")));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the run failed (agents 1): Container agent for pod default/herd-t-1-x failed with exit code 1"),
        "{stderr}"
    );
    // The agent's own words, read from its pod before the objects were deleted.
    assert!(
        stderr.contains("; agent 1 said: herd agent: agent 1 of 2: cannot resolve \"vm\""),
        "{stderr}"
    );
    let c = calls(&dir);
    let at = |p: &str| c.iter().position(|l| l.starts_with(p)).unwrap_or(usize::MAX);
    assert!(at("logs herd-t-1-x") < at("delete"), "{c:?}");
    herd_testutil::causes::assert_no_repeated_cause(&stderr);
    assert!(calls(&dir).iter().any(|l| l.starts_with("delete")), "{:?}", calls(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_while_the_job_runs_deletes_it() {
    let nginx = Nginx::start();
    let dir = tempdir("kubectl-int");
    let (fake, result) = setup(&dir, &nginx);
    let child = cluster_run(&dir, &fake, &result, "Running", &nginx.url("/small.html"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !calls(&dir).iter().any(|l| l.starts_with("get job/")) {
        assert!(t.elapsed() < Duration::from_secs(20), "it never asked for the Job");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill(2) on the herd this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("interrupted: the run's objects (herd-t) are deleted"), "{stderr}");
    assert!(calls(&dir).iter().any(|l| l.starts_with("delete")), "{:?}", calls(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two pods against a port nothing listens on: for runs that must stop before any load.
const TWO_PODS: [&str; 8] =
    ["cluster", "run", "--agents", "2", "--image", "herd:t", "--", "http://127.0.0.1:1/"];

#[test]
fn a_missing_kubectl_is_named() {
    let dir = tempdir("kubectl-missing");
    let out = run(herd().env("HERD_KUBECTL", dir.join("no-such-kubectl")).args(TWO_PODS));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot create the run's objects"), "{stderr}");
    assert!(stderr.contains("no-such-kubectl"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files the Job cannot give back are refused before anything is created, each named.
#[test]
fn files_a_kubernetes_run_cannot_write_are_refused_before_it_starts() {
    let dir = tempdir("kubectl-files");
    let fake = dir.join("kubectl-never-called");
    let out = run(herd()
        .env("HERD_KUBECTL", &fake)
        .args(TWO_PODS)
        .args(["--series", "s.csv", "--html", "p.html"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--series and --html cannot be written from a Kubernetes run"),
        "{stderr}"
    );
    assert!(stderr.contains("--local N"), "{stderr}");
    assert!(!stderr.contains("kubectl-never-called"), "nothing was created: {stderr}");
    assert!(!dir.join("s.csv").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
