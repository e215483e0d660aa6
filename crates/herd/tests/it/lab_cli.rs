//! `herd lab` from the outside: a small experiment on herd serve runs to its table and store;
//! the dry run has no side effects; broken files, stores and names get clear errors; Ctrl-C
//! keeps finished runs and leaves no process (and no cgroup) behind; after a kill -9, `herd lab
//! clean` stops what was left, by PID, and removes the cgroups. Every process and cgroup check
//! reads the PIDs and directories from the run's own registry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::util;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use util::{herd, lab_run, tempdir, SLOW};

/// Runs herd with TMPDIR set to `tmp`, so that run directories land where the test looks.
fn herd_in(tmp: &Path) -> Command {
    let mut c = herd();
    c.env("TMPDIR", tmp);
    c
}

const SMALL: &str = r#"
name = "small"
[matrix]
server = ["herd"]
workload = ["page", "9x9", "sw"]
load = ["n200"]
[workloads.page]
kind = "static"
size = 6397
[workloads.sw]
kind = "specweb"
dirs = 1
[loads.n200]
requests = 200
concurrency = 4
warmup_requests = 20
[repetitions]
min = 3
max = 3
# Other tests leave TIME_WAIT sockets behind; draining is not what these tests are about.
[runner]
time_wait_below = 1000000
[report]
baseline = { workload = "9x9" }
measure = "seconds"
[published]
source = "seed 000, 2010"
[[published.figures]]
at = { workload = "page" }
ran = "lighttpd 1.4.25"
requests_per_second = 1018.85
kb_per_second = 6673.70
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn run_dirs(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("herd-lab-"))
        .collect()
}

/// (pid, start time) of every process the run recorded.
fn recorded(tmp: &Path) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    for d in run_dirs(tmp) {
        let text = std::fs::read_to_string(d.join("pids")).unwrap_or_default();
        for line in text.lines() {
            let mut it = line.split(' ');
            out.push((it.next().unwrap().parse().unwrap(), it.next().unwrap().parse().unwrap()));
        }
    }
    out
}

fn alive(pid: u32, started: u64) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..].split_whitespace().collect();
    fields[0] != "Z" && fields[19].parse::<u64>().unwrap() == started
}

use crate::util::wait_for;

fn spawn_lab(tmp: &Path, file: &Path, store: &Path, stderr: &Path) -> Child {
    herd_in(tmp)
        .args(["lab", "run", "--no-progress", "--store"])
        .arg(store)
        .arg(file)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

/// A lab run of SLOW caught in the middle: `finished` runs done and a server of the next
/// one up; `pids` are what its registry recorded by then.
struct MidRun {
    dir: PathBuf,
    store: PathBuf,
    log: PathBuf,
    child: Child,
    pids: Vec<(u32, u64)>,
    /// The cgroups made so far, where herd can make them (`lab_cgroup::expected`).
    cgroups: Vec<PathBuf>,
}

fn mid_run(tag: &str, finished: usize) -> MidRun {
    let dir = tempdir(tag);
    let file = write(&dir, "slow.toml", SLOW);
    let store = dir.join("r.db");
    let log = dir.join("stderr");
    let child = spawn_lab(&dir, &file, &store, &log);
    wait_for("finished runs", Duration::from_secs(60), || runs_logged(&log) >= finished);
    wait_for("a server of the next run", Duration::from_secs(30), || {
        recorded(&dir).iter().any(|&(p, s)| alive(p, s))
    });
    let pids = recorded(&dir);
    let cgroups = crate::lab_cgroup::recorded_cgroups(&dir);
    let made = cgroups.iter().any(|d| d.exists());
    assert_eq!(made, crate::lab_cgroup::expected().is_cgroup(), "{cgroups:?}");
    MidRun { dir, store, log, child, pids, cgroups }
}

fn runs_logged(stderr: &Path) -> usize {
    std::fs::read_to_string(stderr)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(" req/s, "))
        .count()
}

#[test]
fn a_small_experiment_runs_to_its_table_and_store() {
    let dir = tempdir("lab-small");
    let file = write(&dir, "small.toml", SMALL);
    let store = dir.join("r.db");
    let out = lab_run(&dir, &file).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("experiment  1 small"), "{stdout}");
    for w in ["page", "9x9", "sw"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("herd    {w} ")))
            .unwrap_or_else(|| panic!("{stdout}"));
        assert!(row.contains(" 3/3 "), "{row}");
    }
    assert_eq!(stderr.matches(" req/s, 0 failed").count(), 9, "{stderr}");
    // Before it starts, how long it will take.
    assert!(
        stderr.contains("herd lab: this takes about ")
            && stderr.contains("plus what the loads given as a request count take (n200)"),
        "{stderr}"
    );
    // Then and now: the published figure beside today's, for the page only; a KiB/s figure
    // today for every cell.
    let then_now = &stdout[stdout.find("then and now").unwrap_or_else(|| panic!("{stdout}"))..];
    assert!(then_now.contains("  published  seed 000, 2010\n"), "{then_now}");
    let row = |w: &str| -> Vec<&str> {
        let line = then_now.lines().find(|l| l.starts_with(&format!("{w} "))).unwrap_or("");
        line.split("  ").map(str::trim).filter(|s| !s.is_empty()).collect()
    };
    let page = row("page");
    assert_eq!(&page[..3], ["page", "lighttpd 1.4.25", "1018.85"], "{then_now}");
    assert_eq!((page.len(), page[4]), (6, "6673.7"), "{then_now}");
    for now in [page[3], page[5]] {
        // ! where the client judged itself the bottleneck (server and client share 2 CPUs).
        let figure = now.trim_end_matches('!');
        assert!(figure.parse::<f64>().is_ok_and(|v| v > 0.0), "{now}: {then_now}");
    }
    let nine = row("9x9");
    assert_eq!(nine.len(), 3, "no figures then, two now: {then_now}");
    assert!(run_dirs(&dir).is_empty(), "the run directory was removed");
    // The matrix as the file's [report] asks: seconds, percentages of the 9x9 page.
    assert!(
        stdout.contains("\nseconds by workload: median ±95 % confidence interval; in parentheses: speed (requests/s) as a percentage of workload=9x9's\nworkload  "),
        "{stdout}"
    );
    // The store reopens and reports the same table.
    let report = herd().args(["report"]).arg(&store).output().unwrap();
    assert!(report.status.success());
    assert_eq!(String::from_utf8_lossy(&report.stdout), stdout);
    // Other baselines and measures, Markdown and CSV, from the same store.
    let report = |args: &[&str]| {
        let out = herd().arg("report").arg(&store).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, md, _) =
        report(&["--md", "--baseline", "workload=page", "--measure", "kb_per_second"]);
    assert_eq!(code, Some(0));
    assert!(md.starts_with("## experiment 1 small\n"), "{md}");
    // The article's KiB/s for the page stands beside today's, marked as published.
    assert!(md.contains("### KiB/s by workload: median ±95 % confidence interval; in parentheses: percentage of workload=page's; then …: the article's published figure, not measured\n"), "{md}");
    assert!(md.contains("\n| workload | KiB/s |\n| --- | --: |\n| page | "), "{md}");
    let page_row = md.lines().find(|l| l.starts_with("| page | ")).unwrap_or_default();
    assert!(page_row.ends_with(r" \| then 6673.7 |"), "{page_row}");
    let (code, csv, _) = report(&["--csv"]);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "{csv}");
    for (line, workload) in lines[1..].iter().zip(["page", "9x9", "sw"]) {
        assert!(line.starts_with(&format!("1,herd,{workload},n200,,4,,3,3,0,seconds,")), "{csv}");
    }
    let (code, _, err) = report(&["--baseline", "path=direct"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--baseline path=direct: `path` is not an axis of experiment 1 (small): use `server`, `workload`, `load`"), "{err}");
    let (code, _, err) = report(&["--measure", "percent"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`percent` is not a figure the tables show"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A warm-up by time is a run of its own like one by count: the record says how many requests
/// it made (it said 0), and none of them is in the measured figures.
#[test]
fn a_warm_up_by_time_stores_the_requests_it_made() {
    let dir = tempdir("lab-warm");
    let text = SMALL
        .replace("workload = [\"page\", \"9x9\", \"sw\"]", "workload = [\"page\"]")
        .replace("warmup_requests = 20", "warmup = \"300ms\"")
        .replace("baseline = { workload = \"9x9\" }", "baseline = { workload = \"page\" }");
    let file = write(&dir, "warm.toml", &text);
    let out = lab_run(&dir, &file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = herd_store::Store::open_existing(&dir.join("r.db")).unwrap();
    let id = store.experiments().unwrap()[0].id;
    let exp = store.load_experiment(id).unwrap();
    let reps = &exp.cells[0].repetitions;
    assert_eq!(reps.len(), 3);
    for rep in reps {
        let m = &rep.record.measurements[0];
        assert_eq!(m.completed, 200, "{m:?}");
        // 300 ms against herd serve on loopback: hundreds of requests at least.
        assert!(m.warmup_requests >= 100, "{}", m.warmup_requests);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_dry_run_shows_everything_and_touches_nothing() {
    let dir = tempdir("lab-dry");
    let file = write(&dir, "small.toml", SMALL);
    let store = dir.join("r.db");
    let out = herd_in(&dir)
        .args(["lab", "run", "--dry-run", "--store"])
        .arg(&store)
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let plan = String::from_utf8_lossy(&out.stdout);
    for want in [
        "matrix: server (1) x workload (3) x load (1) = 3 cells; 3 to 3 repetitions",
        "start herd: /",
        "serve --root $RUN/www --listen 127.0.0.1:$PORT",
        "   ready when: GET /herd-ready.txt over h1 to 127.0.0.1:$PORT answers 200\n",
        "1. server=herd workload=page load=n200",
        "verify: GET /sizes/6397.html must answer 200",
        "verify: GET /9x9 must answer 200",
        " run http://127.0.0.1:$PORT/9x9 ",
        // Each load in words (a load that says nothing keeps connections alive), and the time.
        "loads:\n  n200: 200 requests, 4 at a time (closed loop); connections kept alive; a \
         warm-up of 20 requests before, discarded\n",
        "time: about ",
        " at 3 repetitions each, plus what the loads given as a request count take (n200): the \
         server's speed decides\n",
    ] {
        assert!(plan.contains(want), "{want:?} not in:\n{plan}");
    }
    // Sentences, not Rust's debug structures; no port a run would not use.
    for unwanted in ["Http {", "Some(", "8080"] {
        assert!(!plan.contains(unwanted), "{unwanted:?} in:\n{plan}");
    }
    assert!(!store.exists(), "the dry run created the store");
    assert!(run_dirs(&dir).is_empty(), "the dry run made a run directory");
    // Every bundled experiment has a plan too.
    for name in ["quickstart", "seed000-lighttpd", "seed003-dynamic"] {
        let out = herd_in(&dir).args(["lab", "run", "--dry-run", name]).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let list = herd().args(["lab", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("quickstart") && list.contains("seed003-dynamic"), "{list}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn broken_files_names_and_stores_get_clear_errors() {
    let dir = tempdir("lab-bad");
    let bad = write(&dir, "bad.toml", &SMALL.replace("server = [", "sever = ["));
    let out = herd_in(&dir).args(["lab", "run"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml: line 4: unknown field `sever`, expected one of `server`"),
        "{err}"
    );
    assert!(err.contains("hint: every key is in docs/experiment.md"), "{err}");

    let out = herd_in(&dir).args(["lab", "run", "no-such-experiment"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no bundled experiment of that name"));

    let junk = "not a database. ".repeat(8);
    let garbage = write(&dir, "garbage.db", &junk);
    for args in [vec!["report".to_string()], vec!["lab".into(), "run".into(), "--store".into()]] {
        let mut c = herd_in(&dir);
        c.args(&args).arg(&garbage);
        if args[0] == "lab" {
            c.arg(write(&dir, "small.toml", SMALL));
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is not a herd results store (not an SQLite database)"), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(&garbage).unwrap(),
        junk,
        "the foreign file was left as it was"
    );
    let out = herd().args(["report"]).arg(dir.join("missing.db")).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no results store at"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ctrl_c_keeps_finished_runs_and_stops_every_process() {
    let MidRun { dir, store, log, mut child, pids, cgroups } = mid_run("lab-int", 2);
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let err = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("herd: interrupted after "), "{err}");
    assert!(err.contains("results kept in"), "{err}");
    // It says how many it stopped, and a server was up: at least one.
    let stopped: usize =
        err.split("; stopped ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(stopped >= 1, "{err}");
    for (pid, started) in &pids {
        assert!(!alive(*pid, *started), "pid {pid} survived Ctrl-C");
    }
    for cg in &cgroups {
        assert!(!cg.exists(), "cgroup {} survived Ctrl-C", cg.display());
    }
    assert!(run_dirs(&dir).is_empty(), "run directory left behind");
    let kept = runs_logged(&log);
    let report = herd().args(["report"]).arg(&store).output().unwrap();
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(table.contains("status      interrupted"), "{table}");
    let reps: usize = table
        .lines()
        .filter(|l| l.starts_with("herd    page"))
        .map(|l| {
            l.split_whitespace()
                .find(|w| w.contains('/'))
                .unwrap()
                .split('/')
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(reps, kept, "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn after_kill_9_lab_clean_stops_what_was_left() {
    // From the kill on, its cgroups are a dead lab's: another test's clean would take them
    // (and stop the server this clean must name). Held from before the lab starts, so that
    // the kill comes right after a server of its is seen running, not a wait later.
    let sweep = crate::util::clean_lock();
    let MidRun { dir, store, mut child, .. } = mid_run("lab-kill", 1);
    child.kill().unwrap(); // SIGKILL: no cleanup possible
    child.wait().unwrap();
    // What it recorded up to its death.
    let cgroups = crate::lab_cgroup::recorded_cgroups(&dir);
    // Everything it started, up to its death.
    let pids = recorded(&dir);
    assert!(
        pids.iter().any(|&(p, s)| alive(p, s)),
        "a kill -9 mid-run should leave the server running: {pids:?}"
    );
    assert_eq!(run_dirs(&dir).len(), 1);
    let out = herd_in(&dir).args(["lab", "clean"]).output().unwrap();
    drop(sweep);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("removed 1 run directories"), "{said}");
    let live: Vec<&PathBuf> =
        cgroups.iter().filter(|d| said.contains(&*d.to_string_lossy())).collect();
    assert!(cgroups.is_empty() || !live.is_empty(), "no recorded cgroup removed: {said}");
    for cg in &cgroups {
        assert!(!cg.exists(), "cgroup {} left after herd lab clean", cg.display());
    }
    wait_for("leftovers to stop", Duration::from_secs(5), || {
        pids.iter().all(|&(p, s)| !alive(p, s))
    });
    assert!(run_dirs(&dir).is_empty());
    // The store holds the finished run.
    let report = herd().args(["report"]).arg(&store).output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn doctor_checks_the_machine_one_line_each() {
    let child = herd().arg("doctor").stdout(std::process::Stdio::piped()).spawn().unwrap();
    let doctor_pid = child.id();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "server CPU accounting: ",
        "open files limit: ",
        "net.core.somaxconn: ",
        "net.ipv4.ip_local_port_range: ",
        "net.ipv4.tcp_tw_reuse: ",
        "server program nginx (for nginx): /usr/sbin/nginx nginx/",
        "server program php-fpm8.2",
        "ab (client): /usr/bin/ab",
        "h2load (client): /usr/bin/h2load",
        "smbtorture (client): /usr/bin/smbtorture",
        "NetBench trace (netbench): /usr/share/dbench/client.txt",
        "server program smbd (for samba): /usr/sbin/smbd Samba 4.",
        "lighttpd TLS module (h1-tls, h2): /usr/lib/lighttpd/mod_openssl.so",
        "network namespaces: ",
        "IP_VS (LVS): ",
        "haproxy (path haproxy-http, haproxy-tcp): ",
        // herd serve's own choice, by its rules: TLS stays on epoll whatever the machine.
        "herd serve --io auto: ",
        " for plain TCP; epoll (auto: herd serve's io_uring carries plain TCP only) with TLS",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    // Every line is a verdict, a name and what it found or what to do.
    for line in text.lines().take_while(|l| !l.is_empty()) {
        assert!(["ok  ", "warn", "MISS"].iter().any(|t| line.starts_with(t)), "{line}");
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert!(text.contains("tc qdisc tbf: available"), "{text}");
        // This doctor's scratch namespace is gone.
        let probe = format!("herd-{doctor_pid}-probe");
        assert!(!Path::new("/run/netns").join(&probe).exists(), "{probe} left behind");
    }
    let missing = text.lines().filter(|l| l.starts_with("MISS")).count();
    assert_eq!(out.status.code(), Some(if missing > 0 { 1 } else { 0 }), "{text}");
}

/// `herd --version` names the commit herd was built from (what a history's change point is
/// attributed to), the commit this checkout is at: the build script builds again when HEAD
/// moves.
#[test]
#[allow(clippy::disallowed_methods)] // git rev-parse, which ends by itself
fn the_version_names_the_commit_built() {
    let out = herd().arg("--version").output().unwrap();
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let head = String::from_utf8(head.stdout).unwrap();
    assert_eq!(
        said.trim(),
        format!("herd {} (commit {})", env!("CARGO_PKG_VERSION"), head.trim()),
        "a checkout's build names its commit"
    );
}
