//! `herd lab up`: one server of an experiment up as the lab starts it, for runs by hand.
//! Real nginx over HTTP/2 with the certificate made for it: it says its URL and CA file, herd
//! run loads it through them, Ctrl-C (SIGINT) stops nginx by PID and removes its files. And
//! the errors that name what to use instead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{herd, tempdir};

const FILE: &str = r#"
name = "up"
[matrix]
server = ["nginx", "herd"]
workload = ["page"]
load = ["n"]
protocol = ["h1", "h2"]
[workloads.page]
kind = "static"
size = 2000
[loads.n]
requests = 10
"#;

#[test]
fn a_server_stays_up_for_runs_by_hand_until_ctrl_c() {
    let dir = tempdir("lab-up");
    let file = dir.join("up.toml");
    std::fs::write(&file, FILE).unwrap();
    let mut child = herd()
        .env("TMPDIR", &dir)
        .args(["lab", "up"])
        .arg(&file)
        .args(["--server", "nginx", "--protocol", "h2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    while !said.contains("  try: ") {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "lab up ended: {said}");
        said.push_str(&line);
    }
    let field = |name: &str| {
        said.lines()
            .find_map(|l| l.trim_start().strip_prefix(name))
            .map(|v| v.split_whitespace().next().unwrap_or("").to_owned())
            .unwrap_or_else(|| panic!("no {name} in {said}"))
    };
    assert!(said.starts_with("herd lab up: nginx over h2 at https://127.0.0.1:"), "{said}");
    let url = said.split(" at ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    let ca = field("trust:");
    let files = field("files:");
    let pid: u32 = said
        .split("nginx (pid ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    let run = herd()
        .args(["run", "--h2", "--ca-file", &ca, "-n", "50", "-c", "2"])
        .arg(format!("{url}herd-ready.txt"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{report}{}", String::from_utf8_lossy(&run.stderr));
    assert!(report.contains("50 completed, 0 failed"), "{report}");

    // SAFETY: kill has no memory preconditions; the pid is the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "lab up did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "nginx {pid} still runs");
    assert!(!Path::new(&files).exists(), "{files} left");

    // What to use instead, named.
    let out = herd().args(["lab", "up"]).arg(&file).args(["--server", "apache"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("no cell of the experiment runs server `apache`: use one of herd, nginx"),
        "{err}"
    );
    let out = herd()
        .args(["lab", "up"])
        .arg(&file)
        .args(["--server", "herd", "--protocol", "h3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("server `herd` runs in no cell over h3: the experiment has it over h1, h2"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
