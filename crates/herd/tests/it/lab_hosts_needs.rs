//! `herd lab hosts check FILE` says, per role, what the file's cells need on each host, over
//! real OpenSSH (sshd in namespace hosts of herd's own, `util::ssh_hosts`; root: CI runs as
//! root): on the server host each server's programs, on client 1 ab and h2load, found or
//! missing with their package. A host lacking one is not ready and the check exits non-zero
//! naming it, as the lab run of that file fails before its store exists. The hosts lack
//! programs this machine has through `HostSetup::hidden`.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // tests start the tools they check

use std::path::PathBuf;

use crate::util::ssh_hosts::{HostSetup, SshHosts};
use crate::util::{require_root, tempdir, text};

/// An experiment in the fixture's directory: `servers` × `clients` × a static file, ten
/// requests,
/// host 0 the server and hosts 1 and 2 the clients.
fn experiment(hosts: &SshHosts, name: &str, servers: &str, clients: &str) -> PathBuf {
    let [s, c1, c2] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let file = hosts.dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            "name = \"{name}\"\n[matrix]\nserver = [{servers}]\nclient = [{clients}]\n\
             workload = [\"s\"]\nload = [\"a\"]\n[workloads.s]\nkind = \"static\"\nsize = 100\n\
             [loads.a]\nrequests = 10\nconcurrency = 1\n\
             [hosts]\nserver = \"ssh://{s}\"\nclients = [\"ssh://{c1}\", \"ssh://{c2}\"]\n\
             ssh_config = \"lab.ssh_config\"\n"
        ),
    )
    .unwrap();
    file
}

/// The line of the check's output that starts with `start` (its indent dropped).
fn line_of(stdout: &str, start: &str) -> String {
    stdout
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line `{start}`: {stdout}"))
        .to_owned()
}

#[test]
fn the_check_names_what_each_role_needs_and_the_host_that_lacks_it() {
    require_root();
    let dir = tempdir("lab-hosts-needs");
    let server = HostSetup { hidden: &["/usr/sbin/nginx"], ..HostSetup::default() };
    let client = HostSetup { hidden: &["/usr/bin/h2load"], ..HostSetup::default() };
    let hosts = SshHosts::start("850", &dir, &[server, client, HostSetup::default()]);
    let [s, c1, c2] = [0, 1, 2].map(|i| hosts.hosts[i].addr);
    let file = experiment(&hosts, "needs", "\"herd\", \"nginx\"", "\"herd\", \"ab\", \"h2load\"");
    hosts.place_herd();
    let out = hosts.herd().args(["lab", "hosts", "check"]).arg(&file).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let line = |start: &str| line_of(&stdout, start);
    // The server host: herd serve is this build there; nginx is hidden there.
    let home = hosts.hosts[0].home.display().to_string();
    assert!(line("server herd: ").starts_with(&format!("server herd: herd {home}/.cache/herd/")));
    let nginx = line("server nginx: ");
    assert!(
        nginx.starts_with("server nginx: missing: nginx is not installed")
            && nginx.contains("apt-get install nginx-light"),
        "{nginx}"
    );
    // Client 1 runs ab and h2load: ab with its version, h2load missing there.
    let ab = line("client ab: ");
    assert!(ab.starts_with("client ab: /usr/bin/ab 2.3"), "{ab}");
    assert_eq!(
        line("client h2load: "),
        "client h2load: missing: not installed there (apt-get install nghttp2-client); ab, wrk \
         and h2load run on client 1"
    );
    // Client 2 runs herd's agent alone, which needs nothing but herd: its line is the last.
    assert!(stdout.lines().last().unwrap().starts_with(&format!("client 2: ssh://{c2}: ")));
    assert!(!stdout.contains("client herd"), "{stdout}");
    // Each missing program once on stderr, with its host and package.
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with(&format!("herd lab hosts: server ssh://{s}: server nginx: "))
                && l.contains("apt-get install nginx-light")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "herd lab hosts: client 1 ssh://{c1}: client h2load: not installed there (apt-get \
             install nghttp2-client)"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("2 of 3 hosts not ready"), "{stderr}");

    // The lab run of the file fails as the check said, before its store exists.
    let store = dir.join("r.db");
    let run = hosts.lab_run(&file, &store).output().unwrap();
    let said = text(&run.stderr);
    assert!(!run.status.success(), "{said}");
    assert!(said.contains(&format!("ssh://{s}: server nginx: nginx is not installed")), "{said}");
    assert!(said.contains("apt-get install nginx-light"), "{said}");
    assert!(!store.exists());

    // Cells that need what the hosts have: every host ready.
    let file = experiment(&hosts, "has", "\"herd\"", "\"herd\", \"ab\"");
    let out = hosts.herd().args(["lab", "hosts", "check"]).arg(&file).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("client ab: /usr/bin/ab 2.3"), "{stdout}");
    assert!(!stdout.contains("missing") && !stdout.contains("h2load"), "{stdout}");
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The router host's line says each proxy path's program there; one it lacks makes it not
/// ready, and the lab run fails naming the host and the package before its store exists.
#[test]
fn the_check_names_the_router_hosts_programs() {
    require_root();
    let dir = tempdir("lab-hosts-needs-router");
    let router = HostSetup { hidden: &["/usr/sbin/haproxy"], ..HostSetup::default() };
    let hosts = SshHosts::start("854", &dir, &[HostSetup::default(), router]);
    let [s, r] = [0, 1].map(|i| hosts.hosts[i].addr);
    let file = dir.join("router.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"router\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"s\"]\nload = [\"a\"]\n\
             path = [\"haproxy-tcp\", \"nginx-proxy\"]\n\
             [workloads.s]\nkind = \"static\"\nsize = 100\n[loads.a]\nrequests = 10\n\
             concurrency = 1\n[hosts]\nserver = \"ssh://{s}\"\nrouter = \"ssh://{r}\"\n\
             ssh_config = \"lab.ssh_config\"\n"
        ),
    )
    .unwrap();
    hosts.place_herd();
    let out = hosts.herd().args(["lab", "hosts", "check"]).arg(&file).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let line = |start: &str| line_of(&stdout, start);
    assert_eq!(line("path nginx-proxy: "), "path nginx-proxy: nginx /usr/sbin/nginx");
    let haproxy = line("path haproxy-tcp: ");
    assert!(
        haproxy.starts_with("path haproxy-tcp: missing: haproxy is not installed")
            && haproxy.contains("apt-get install haproxy"),
        "{haproxy}"
    );
    assert!(stderr.contains("1 of 2 hosts not ready"), "{stderr}");
    let store = dir.join("r.db");
    let run = hosts.lab_run(&file, &store).output().unwrap();
    let said = text(&run.stderr);
    assert!(!run.status.success(), "{said}");
    assert!(
        said.contains(&format!("ssh://{r}: path haproxy-tcp: haproxy is not installed")),
        "{said}"
    );
    assert!(!store.exists());
    drop(hosts);
    let _ = std::fs::remove_dir_all(&dir);
}
