//! `driver = "external"`: a server herd does not start. The lab loads it at its URL, verifies
//! its answers, reads its CPU time from the process the file names, never stops it, and says
//! in the report that every repetition met the same process; its own count of what it
//! served equals the client's merged count plus the verification's one request a run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use herd_store::{ExperimentId, Outcome, Store};

use crate::util::{herd, tempdir, text, Serve};

fn experiment(servers: &str, defs: &str) -> String {
    format!(
        "name = \"external\"\n[matrix]\nserver = [{servers}]\nworkload = [\"9x9\"]\n\
         load = [\"a\"]\n[loads.a]\nrequests = 300\nconcurrency = 2\n\
         [repetitions]\nmin = 2\nmax = 2\n{defs}"
    )
}

#[test]
fn an_external_server_is_measured_as_it_runs_and_left_running() {
    let dir = tempdir("lab-external");
    let serve = Serve::start(&[]);
    let before = serve.stats()["routes"]["/9x9"].as_u64().unwrap();
    let file = dir.join("e.toml");
    let defs = format!(
        "[servers.mine]\ndriver = \"external\"\nurl = \"http://{}\"\npid = {}\n",
        serve.addr,
        serve.pid()
    );
    std::fs::write(&file, experiment("\"mine\", \"herd\"", &defs)).unwrap();
    let store = dir.join("r.db");
    let out = herd()
        .env("TMPDIR", &dir)
        .args(["lab", "run", "--no-progress", "--store"])
        .arg(&store)
        .arg(&file)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    // Its own count: two runs of 300, each verified with one request first.
    let served = serve.stats()["routes"]["/9x9"].as_u64().unwrap() - before;
    assert_eq!(served, 2 * (300 + 1), "{stdout}");
    let exp = Store::open_read_only(&store).unwrap().load_experiment(ExperimentId(1)).unwrap();
    let cell = exp.matrix_cells().find(|c| c.key.contains("server=mine")).unwrap();
    assert_eq!(cell.repetitions.len(), 2);
    for rep in &cell.repetitions {
        let r = &rep.record;
        assert_eq!(r.outcome, Outcome::Ok, "{stderr}");
        let completed: u64 = r.measurements.iter().map(|m| m.completed).sum();
        assert_eq!(completed, 300);
        let [s] = r.servers.as_slice() else { panic!("{:?}", r.servers) };
        assert_eq!(s.program, "external");
        assert_eq!(s.version, format!("external at http://{}: not started by herd", serve.addr));
        // Its process group's CPU time, read around the measured run.
        assert!(r.server_cpu_seconds.unwrap_or(0.0) > 0.0, "{r:?}");
    }
    let line = stdout.lines().find(|l| l.starts_with("external ")).unwrap_or_else(|| {
        panic!("the report says which server herd did not start: {stdout}");
    });
    assert!(
        line.contains(&format!(
            "mine at http://{}: not started by herd, nor restarted",
            serve.addr
        )),
        "{line}"
    );
    // Still running, untouched.
    let mut serve = serve;
    assert!(
        serve.child.try_wait().unwrap().is_none(),
        "herd lab stopped a server it did not start"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_external_server_is_refused_at_its_line_when_misdescribed() {
    let dir = tempdir("lab-external-bad");
    let file = dir.join("e.toml");
    for (defs, says) in [
        ("driver = \"external\"\n", "an external server needs `url = \"http://ADDRESS:PORT\"`"),
        (
            "driver = \"external\"\nurl = \"http://10.0.0.1:80\"\n",
            "url `http://10.0.0.1:80`: herd sends load only to 127.0.0.0/8, ::1 and its own \
             198.18.0.0/15; to load a machine of yours, name it as [hosts] server",
        ),
        (
            "driver = \"external\"\nurl = \"http://127.0.0.1:80/x\"\n",
            "give an IP address and a port",
        ),
        ("driver = \"external\"\nurl = \"ftp://127.0.0.1:80\"\n", "give http://ADDRESS:PORT"),
        (
            "driver = \"external\"\nurl = \"https://127.0.0.1:443\"\n",
            "an https:// url needs `ca_file`",
        ),
        (
            "driver = \"external\"\nurl = \"http://127.0.0.1:80\"\nworkers = 2\n",
            "workers: herd does not start an external server",
        ),
        ("driver = \"nginx\"\nurl = \"http://127.0.0.1:80\"\n", "url: only an external server"),
        ("driver = \"nginx\"\npid = 1\n", "pid: only an external server"),
    ] {
        std::fs::write(&file, experiment("\"mine\"", &format!("[servers.mine]\n{defs}"))).unwrap();
        let out = herd()
            .env("TMPDIR", &dir)
            .args(["lab", "run", "--no-progress", "--store"])
            .arg(dir.join("r.db"))
            .arg(&file)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{defs}: {stderr}");
        assert!(stderr.contains(says) && stderr.contains(" line "), "{defs}: {stderr}");
        assert!(!dir.join("r.db").exists(), "{defs}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
