//! What `herd lab run` checks of a `[hosts]` server host's servers there, not here, over
//! real OpenSSH (sshd in namespace hosts of herd's own, `util::ssh_hosts`, root: CI runs as
//! root): a user's own config judged by the host's server and measured, a refused one named
//! with the host before the store exists; a `binary` that is a path on the host, located
//! there; a resumed experiment whose servers' versions are asked there. The namespace hosts
//! share this machine's file system: a host's own files are under `dir/hostN/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the tools they check

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use herd_store::{ExperimentId, ExperimentStatus, Outcome, Store, StoredExperiment};

use crate::util::ssh_hosts::{HostSetup, SshHosts};
use crate::util::{require_root, tempdir, text};

/// A user's own nginx config with herd's placeholders (as lab_servers.rs's).
const MINE: &str = "worker_processes {{workers}};\npid {{dir}}/mine.pid;\n\
                    events { worker_connections 512; }\n\
                    http {\n  access_log off;\n  default_type application/octet-stream;\n  \
                    server {\n    listen {{listen}};\n    root {{docroot}};\n  }\n}\n";

/// `dir/mine.toml`: server `nginx-mine` (the nginx driver with `key`) × a 6,397-byte page ×
/// `load`, `reps` runs, its server on `server`.
fn experiment(dir: &Path, key: &str, load: &str, reps: u32, server: &str) -> PathBuf {
    let file = dir.join("mine.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"mine\"\n[matrix]\nserver = [\"nginx-mine\"]\nworkload = [\"page\"]\n\
             load = [\"a\"]\n[servers.nginx-mine]\ndriver = \"nginx\"\n{key}\n\
             [workloads.page]\nkind = \"static\"\nsize = 6397\n[loads.a]\n{load}\n\
             [repetitions]\nmin = {reps}\nmax = {reps}\n\
             [hosts]\nserver = \"ssh://{server}\"\nssh_config = \"lab.ssh_config\"\n"
        ),
    )
    .unwrap();
    file
}

const QUICK_LOAD: &str = "requests = 300\nconcurrency = 2";

fn load(store: &Path) -> StoredExperiment {
    Store::open_read_only(store).unwrap().load_experiment(ExperimentId(1)).unwrap()
}

/// Every run of the experiment in `store` ok, each with `requests` completed.
fn all_ok(store: &Path, requests: u64, said: &str) -> StoredExperiment {
    let exp = load(store);
    for cell in exp.matrix_cells() {
        for rep in &cell.repetitions {
            let r = &rep.record;
            assert_eq!(r.outcome, Outcome::Ok, "{}: {said}", cell.key);
            let completed: u64 = r.measurements.iter().map(|m| m.completed).sum();
            let failed: u64 = r.measurements.iter().map(|m| m.failed).sum();
            assert!(completed >= requests && failed == 0, "{}: {completed} {failed}", cell.key);
        }
    }
    exp
}

/// What is left in the server host's own temporary directory (the helpers' run
/// directories).
fn left_on(dir: &Path) -> Vec<PathBuf> {
    let tmp = dir.join("host0/tmp");
    std::fs::read_dir(tmp).unwrap().flatten().map(|e| e.path()).collect()
}

#[test]
fn a_users_own_config_is_judged_and_served_on_the_server_host() {
    require_root();
    let dir = tempdir("lab-on-hosts-config");
    let hosts = SshHosts::start("824", &dir, &[HostSetup::default()]);
    let server = hosts.hosts[0].addr;
    std::fs::write(dir.join("mine.conf"), MINE).unwrap();
    let file = experiment(&dir, "config = \"mine.conf\"", QUICK_LOAD, 1, &server.to_string());
    hosts.install(&file);
    let host_tmp = dir.join("host0/tmp").display().to_string();

    let store = dir.join("r.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}\n{}", hosts.sshd_log(0));
    let exp = all_ok(&store, 300, &stderr);
    let [cell] = exp.cells.as_slice() else { panic!("one cell: {stdout}") };
    let [rep] = cell.repetitions.as_slice() else { panic!("one run") };
    // The user's config, filled in for the host: its address, the document root there.
    let front = rep.record.servers.last().unwrap();
    let (_, stored) = front.configs.iter().find(|(p, _)| p.ends_with("nginx.conf")).unwrap();
    assert!(stored.contains(&format!("listen {server}:18080;")), "{stored}");
    assert!(stored.contains(&format!("    root {host_tmp}/")), "{stored}");
    assert!(!stored.contains("{{"), "{stored}");
    assert_eq!(left_on(&dir), Vec::<PathBuf>::new(), "the config test's scratch went too");

    // One nginx refuses: judged there, by the host's nginx, before the store is opened.
    let typo = MINE.replace("listen {{listen}}", "lisen {{listen}}");
    std::fs::write(dir.join("mine.conf"), typo).unwrap();
    let store = dir.join("refused.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let says = format!(
        "[hosts] server ssh://{server}: server nginx-mine: its own config test \
         refused {} there (/usr/sbin/nginx -t -e ",
        dir.join("mine.conf").display()
    );
    assert!(stderr.contains(&says), "{stderr}");
    // nginx's own words, of the file it read on the host.
    assert!(stderr.contains("unknown directive \"lisen\" in "), "{stderr}");
    assert!(stderr.contains(&format!("in {host_tmp}/herd-host-")), "{stderr}");
    assert!(!store.exists(), "refused before the store was opened");
    assert!(text(&out.stdout).is_empty(), "{stderr}");
    // herd gone, the helper there removes its run directory (the scratch inside) itself.
    let t = Instant::now();
    while !left_on(&dir).is_empty() {
        assert!(t.elapsed() < Duration::from_secs(10), "left: {:?}", left_on(&dir));
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_servers_binary_is_a_path_on_the_server_host() {
    require_root();
    let dir = tempdir("lab-on-hosts-binary");
    let hosts = SshHosts::start("825", &dir, &[HostSetup::default()]);
    let server = hosts.hosts[0].addr.to_string();
    // The host's own build, in its own directory.
    let mine = dir.join("host0/home/build/sbin/nginx");
    std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
    std::fs::copy("/usr/sbin/nginx", &mine).unwrap();
    let key = |p: &Path| format!("binary = \"{}\"", p.display());
    let file = experiment(&dir, &key(&mine), QUICK_LOAD, 1, &server);
    hosts.install(&file);
    let store = dir.join("r.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    let exp = all_ok(&store, 300, &stderr);
    let front = exp.cells[0].repetitions[0].record.servers.last().unwrap();
    assert_eq!(front.argv[0], mine.display().to_string());
    assert!(front.version.starts_with("nginx/"), "asked there: {front:?}");

    // `herd lab up`: that server, over h2, up on the host until Ctrl-C.
    let up = dir.join("up.toml");
    let h1 = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&up, h1.replacen("[matrix]\n", "[matrix]\nprotocol = [\"h2\"]\n", 1)).unwrap();
    up_until_ctrl_c(&hosts, &up, &mine);

    // One the host lacks: not looked for here when the file is read (that would be this
    // machine's), but on the host, named with it, before the store is opened.
    let gone = dir.join("host0/home/build/sbin/ngnix");
    let file = experiment(&dir, &key(&gone), QUICK_LOAD, 1, &server);
    let store = dir.join("refused.db");
    let out = hosts.lab_run(&file, &store).output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let says = format!(
        "ssh://{server}: server nginx-mine: its binary {} is not an executable file there",
        gone.display()
    );
    assert!(stderr.contains(&says), "{stderr}");
    assert!(!stderr.contains("[servers.nginx-mine] binary:"), "not refused here: {stderr}");
    assert!(!store.exists(), "refused before the store was opened");
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `herd lab up FILE --server nginx-mine` (over h2): it starts `binary` on the host, says
/// the host's URL and a CA file here, `herd run` loads it from the client host through
/// them, and Ctrl-C stops it there and leaves nothing on the host.
fn up_until_ctrl_c(hosts: &SshHosts, file: &Path, binary: &Path) {
    use std::io::{BufRead as _, BufReader};
    let server = hosts.hosts[0].addr;
    let mut child = hosts
        .herd()
        .args(["lab", "up"])
        .arg(file)
        .args(["--server", "nginx-mine"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    while !said.contains("  try: ") {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            panic!("lab up ended: {said}{err}");
        }
        said.push_str(&line);
    }
    let at = format!("https://{server}:18080/");
    assert!(said.starts_with(&format!("herd lab up: nginx-mine over h2 at {at} ")), "{said}");
    let field = |name: &str| {
        said.lines()
            .find_map(|l| l.trim_start().strip_prefix(name))
            .map(|v| v.split_whitespace().next().unwrap_or("").to_owned())
            .unwrap_or_else(|| panic!("no {name} in {said}"))
    };
    let ca = field("trust:");
    let pid: u32 = said
        .split("nginx (pid ")
        .nth(1)
        .and_then(|r| r.split_once(&format!(" on ssh://{server})")))
        .and_then(|(pid, _)| pid.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    // It runs the host's binary, from the helper's run directory there.
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
    assert!(cmd.starts_with(&format!("nginx: master process {} ", binary.display())), "{cmd}");
    let host_tmp = hosts.dir.join("host0/tmp");
    assert!(cmd.contains(&format!(" -c {}/herd-host-", host_tmp.display())), "{cmd}");
    assert!(!left_on(&hosts.dir).is_empty());
    let run = hosts
        .herd()
        .args(["run", "--h2", "--ca-file", &ca, "-n", "50", "-c", "2"])
        .arg(format!("{at}herd-ready.txt"))
        .output()
        .unwrap();
    let report = text(&run.stdout);
    assert!(run.status.success(), "{report}{}", text(&run.stderr));
    assert!(report.contains("50 completed, 0 failed"), "{report}");

    // SAFETY: kill has no memory preconditions; the pid is the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status =
        crate::util::exit_within(&mut child, Duration::from_secs(15), "lab up did not stop");
    assert!(status.success(), "{status}");
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "nginx {pid} still runs");
    assert_eq!(left_on(&hosts.dir), Vec::<PathBuf>::new());
}

/// Every stored run: (cell, repetition).
fn runs(e: &StoredExperiment) -> Vec<(String, u32)> {
    let mut runs: Vec<(String, u32)> = e
        .cells
        .iter()
        .flat_map(|c| c.repetitions.iter().map(move |r| (c.key.clone(), r.record.repetition)))
        .collect();
    runs.sort();
    runs
}

#[test]
fn an_experiment_on_the_server_host_resumes_asking_its_servers_there() {
    require_root();
    let dir = tempdir("lab-on-hosts-resume");
    let hosts = SshHosts::start("826", &dir, &[HostSetup::default()]);
    let server = hosts.hosts[0].addr;
    // The host's nginx, wrapped to say where it is asked: the host's own HOME there, this
    // machine's here (the hosts share this file system, not their sessions' environment).
    let wrapper = dir.join("host0/home/build/sbin/nginx");
    std::fs::create_dir_all(wrapper.parent().unwrap()).unwrap();
    let home = hosts.hosts[0].home.display();
    let script = [
        "#!/bin/sh".to_owned(),
        "if [ \"$1\" = -v ]; then".to_owned(),
        format!("  case \"$HOME\" in {home}) v=1.22.1-on-host ;; *) v=1.22.1-here ;; esac"),
        "  echo \"nginx version: nginx/$v\" >&2".to_owned(),
        "  exit 0".to_owned(),
        "fi".to_owned(),
        "exec /usr/sbin/nginx \"$@\"".to_owned(),
    ];
    std::fs::write(&wrapper, script.join("\n") + "\n").unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let slow = "duration = \"400ms\"\nconcurrency = 2\nkeep_alive = true";
    let key = format!("binary = \"{}\"", wrapper.display());
    let file = experiment(&dir, &key, slow, 4, &server.to_string());
    hosts.install(&file);
    let store = dir.join("r.db");
    let log = dir.join("stderr");
    let mut cmd = hosts.herd();
    cmd.args(["lab", "run", "--no-progress", "--store"]).arg(&store).arg(&file);
    let mut child =
        cmd.stdout(Stdio::null()).stderr(std::fs::File::create(&log).unwrap()).spawn().unwrap();
    // `ip netns exec` execs herd: the child is herd itself. Ctrl-C after its first run.
    let t = Instant::now();
    while !std::fs::read_to_string(&log).unwrap_or_default().contains(" req/s, ") {
        assert!(t.elapsed() < Duration::from_secs(60), "no run finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    let before = load(&store);
    assert_eq!(before.status, ExperimentStatus::Interrupted);
    let kept = runs(&before);
    assert!((1..4).contains(&kept.len()), "{kept:?}");
    let asked = &before.cells[0].repetitions[0].record.servers.last().unwrap().version;
    assert_eq!(asked, "nginx/1.22.1-on-host", "each run asks its server's version on the host");

    let resume = |store: &Path| {
        let mut cmd = hosts.herd();
        cmd.args(["lab", "run", "--no-progress", "--store"]).arg(store).args(["--resume", "1"]);
        // A resume first cleans what dead runs left, as `herd lab clean` does.
        let _sweep = crate::util::clean_lock();
        cmd.output().unwrap()
    };
    // A copy whose nginx was another version: the host's nginx, asked there, refuses the
    // resume before a run is spent on it, and the copy is left as it was.
    let upgraded = dir.join("upgraded.db");
    {
        let conn = rusqlite::Connection::open(&store).unwrap();
        conn.execute("VACUUM INTO ?1", [upgraded.to_str().unwrap()]).unwrap();
        let conn = rusqlite::Connection::open(&upgraded).unwrap();
        let set = "UPDATE server SET version = 'nginx/0.0.1' WHERE name = 'nginx-mine'";
        assert!(conn.execute(set, []).unwrap() > 0);
    }
    let out = resume(&upgraded);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("cannot be resumed here: what it ran on changed since it began:\n"));
    assert!(
        said.contains("\n  server nginx-mine (nginx): nginx/0.0.1 → nginx/1.22.1-on-host\n"),
        "{said}"
    );
    assert_eq!(said.matches(" req/s, ").count(), 0, "nothing ran: {said}");
    assert_eq!(runs(&load(&upgraded)), kept);

    // As it was: the rest runs on the host (the path measured anew is no change).
    let out = resume(&store);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains(&format!("herd lab: server host ssh://{server} (")), "{said}");
    let after = all_ok(&store, 1, &said);
    assert_eq!(after.status, ExperimentStatus::Done);
    assert_eq!(runs(&after), (0..4).map(|r| (after.cells[0].key.clone(), r)).collect::<Vec<_>>());
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}
