//! SSH hosts made of network namespaces, for the lab's `[hosts]` tests: herd's own path of
//! four client hosts and a server on one bridge (`Plan::for_agents`, `direct`, 198.18.3.0/24),
//! built and removed by herd-topo (`apply`, `Topology`'s Drop), as every root test's hosts
//! are. herd runs in the first client host; each other host runs its own `sshd -D -e` on a
//! config in the test's directory (a host key of its own, the test's authorized key, a HOME
//! of its own so that every host has its own ~/.cache/herd), started and stopped by PID by
//! herd-topo's `Supervisor`. One host has no sshd: an address that refuses. The client side
//! is an ssh_config in the same directory: the test's key, the hosts' keys as known hosts,
//! strict checking. Nothing outside the namespaces and the directory is touched, but
//! `/run/sshd`, the empty directory sshd requires for its privilege separation. A host may
//! lack programs this machine has (`HostSetup::hidden`: covered in a mount namespace of its
//! sshd's own).
#![allow(clippy::disallowed_methods)] // tests start the tools they check

use std::ffi::OsString;
use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use herd_topo::net::{apply, netns, Host, Path as NetPath, Plan, Topology};
use herd_topo::{CpuSet, Spawn, Supervisor};

/// How one host is to be set up; the default is a host that lets the test in.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostSetup {
    /// Its authorized_keys lacks the test's key: the key is refused.
    pub key_refused: bool,
    /// known_hosts has another key for its address: host key verification fails.
    pub wrong_known_key: bool,
    /// Programs (absolute paths) this host lacks: its sshd runs in a mount namespace of its
    /// own where each is covered by an empty file that is not executable, so that what a
    /// login there runs finds it missing, as on a machine without its package. The hosts
    /// share this machine's file system otherwise.
    pub hidden: &'static [&'static str],
}

/// One sshd host.
#[derive(Debug)]
pub struct SshHost {
    pub addr: Ipv4Addr,
    /// Its user's home: where `herd lab hosts install` puts herd (`.cache/herd/`).
    pub home: PathBuf,
}

/// Up to three sshd hosts and one host without sshd, torn down on Drop.
pub struct SshHosts {
    pub dir: PathBuf,
    pub hosts: Vec<SshHost>,
    /// An address of a host where nothing listens on port 22.
    pub unserved: Ipv4Addr,
    /// The client side's ssh_config (`[hosts] ssh_config`).
    pub ssh_config: PathBuf,
    /// Where herd runs: the first client host's namespace.
    pub netns: String,
    // Dropped in order: the sshds, then the namespaces.
    sshd: Supervisor,
    topo: Topology,
}

/// The hosts that get an sshd, in order, and the one that does not.
const SERVED: [Host; 3] = [Host::Server, Host::Client2, Host::Client3];
const UNSERVED: Host = Host::Client4;
/// Each host's address on the plan's bridge (plan.rs: the server, then agents at .11 on).
const ADDRS: [Ipv4Addr; 3] =
    [Ipv4Addr::new(198, 18, 3, 2), Ipv4Addr::new(198, 18, 3, 11), Ipv4Addr::new(198, 18, 3, 12)];

impl SshHosts {
    /// Builds the path tagged `herd-<pid>-<id>` (an id no other test uses) and starts an
    /// sshd for each of `setups` (one to three).
    pub fn start(id: &str, dir: &Path, setups: &[HostSetup]) -> SshHosts {
        assert!((1..=3).contains(&setups.len()), "one to three sshd hosts");
        std::fs::create_dir_all("/run/sshd").expect("sshd's privilege separation directory");
        let tag = format!("herd-{}-{id}", std::process::id());
        let plan = Plan::for_agents(&tag, NetPath::Direct, 80, None, 4).unwrap();
        let topo = apply(&plan, None, dir).unwrap();
        let key = keygen(dir, "user");
        let mut known = String::new();
        let mut sshd = Supervisor::new(None);
        let mut hosts = Vec::new();
        let mut logs = Vec::new();
        for (i, setup) in setups.iter().enumerate() {
            let (h, addr) = (SERVED[i], ADDRS[i]);
            let hdir = dir.join(format!("host{i}"));
            let home = hdir.join("home");
            std::fs::create_dir_all(&home).unwrap();
            // Each host's own temporary directory, as each machine has its own /tmp: one
            // test's helpers (run directories, clean) never meet another's.
            let tmp = hdir.join("tmp");
            std::fs::create_dir_all(&tmp).unwrap();
            let host_key = keygen(&hdir, "host");
            let authorized = hdir.join("authorized_keys");
            let pubkey = std::fs::read_to_string(key.with_extension("pub")).unwrap();
            std::fs::write(&authorized, if setup.key_refused { String::new() } else { pubkey })
                .unwrap();
            let known_key =
                if setup.wrong_known_key { keygen(&hdir, "other") } else { host_key.clone() };
            let public = std::fs::read_to_string(known_key.with_extension("pub")).unwrap();
            let mut words = public.split_whitespace();
            known.push_str(&format!(
                "{addr} {} {}\n",
                words.next().unwrap(),
                words.next().unwrap()
            ));
            let config = hdir.join("sshd_config");
            std::fs::write(
                &config,
                format!(
                    "HostKey {}\nListenAddress {addr}\nAuthorizedKeysFile {}\n\
                     PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\n\
                     PidFile none\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                     SetEnv HOME={} TMPDIR={}\nLogLevel VERBOSE\n",
                    host_key.display(),
                    authorized.display(),
                    home.display(),
                    tmp.display()
                ),
            )
            .unwrap();
            let log = hdir.join("sshd.log");
            let mut argv: Vec<OsString> =
                ["/usr/sbin/sshd", "-D", "-e", "-f", config.to_str().unwrap()]
                    .iter()
                    .map(OsString::from)
                    .collect();
            if !setup.hidden.is_empty() {
                argv = hiding(&hdir, setup.hidden, argv);
            }
            let ns = plan.netns(h);
            sshd.start(&Spawn {
                name: "sshd",
                argv: &argv,
                env: &[],
                stdout: &log,
                stderr: &log,
                cpus: &CpuSet::All,
                netns: Some(&ns),
            })
            .unwrap();
            logs.push(log);
            hosts.push(SshHost { addr, home });
        }
        let known_hosts = dir.join("known_hosts");
        std::fs::write(&known_hosts, known).unwrap();
        let ssh_config = dir.join("lab.ssh_config");
        std::fs::write(
            &ssh_config,
            format!(
                "Host *\n  User root\n  IdentityFile {}\n  IdentitiesOnly yes\n\
                 UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n\
                 StrictHostKeyChecking yes\n  LogLevel ERROR\n",
                key.display(),
                known_hosts.display()
            ),
        )
        .unwrap();
        // Ready when each says it listens.
        let deadline = Instant::now() + Duration::from_secs(10);
        for log in &logs {
            while !std::fs::read_to_string(log).unwrap_or_default().contains("Server listening") {
                assert!(Instant::now() < deadline, "sshd did not start: {}", log.display());
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let netns = plan.netns(Host::Client);
        assert!(plan.hosts.contains(&UNSERVED));
        let unserved = Ipv4Addr::new(198, 18, 3, 13);
        // Ready when the path carries: a new bridge drops the first packets for about a
        // second, which a test with a connect timeout of one second would take for a host
        // that does not answer. Each sshd accepts, and the host without one refuses.
        for addr in hosts.iter().map(|h| h.addr).chain([unserved]) {
            let answered = netns::within(&netns, || {
                while Instant::now() < deadline {
                    let at = SocketAddr::from((addr, 22));
                    match TcpStream::connect_timeout(&at, Duration::from_millis(200)) {
                        Ok(_) => return true,
                        Err(e) if e.kind() == ErrorKind::ConnectionRefused => return true,
                        Err(_) => std::thread::sleep(Duration::from_millis(20)),
                    }
                }
                false
            })
            .unwrap();
            assert!(answered, "{addr}:22 does not answer from {netns}");
        }
        SshHosts { dir: dir.to_path_buf(), hosts, unserved, ssh_config, netns, sshd, topo }
    }

    /// `herd ARGS` run in the client host, where the hosts are reachable.
    pub fn herd(&self) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.netns, env!("CARGO_BIN_EXE_herd")]);
        cmd.env("TMPDIR", &self.dir);
        cmd
    }

    /// `herd lab hosts install FILE` from the client host, which must succeed.
    pub fn install(&self, file: &Path) {
        let out = self.herd().args(["lab", "hosts", "install"]).arg(file).output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "herd lab hosts install: {said}");
    }

    /// This build in every sshd host's cache, where `herd lab hosts install` puts it: the
    /// hosts share this machine's file system, so a copy does what install does over ssh,
    /// faster (install's own tests are `lab_hosts.rs`'s).
    pub fn place_herd(&self) {
        use std::os::unix::fs::PermissionsExt as _;
        let out = Command::new(env!("CARGO_BIN_EXE_herd")).arg("--version").output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        let id = herd_lab::hosts::build_id(said.trim().strip_prefix("herd ").unwrap());
        for h in &self.hosts {
            let to = h.home.join(herd_lab::hosts::CACHE_DIR).join(format!("herd-{id}"));
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(env!("CARGO_BIN_EXE_herd"), &to).unwrap();
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    /// `herd lab run --no-progress --store STORE FILE` from the client host, as a command
    /// to run or spawn.
    pub fn lab_run(&self, file: &Path, store: &Path) -> Command {
        let mut cmd = self.herd();
        cmd.args(["lab", "run", "--no-progress", "--store"]).arg(store).arg(file);
        cmd
    }

    /// An experiment file in the test's directory with `[hosts]` as given (and the fixture's
    /// ssh_config), running herd serve as the server.
    pub fn experiment(&self, hosts: &str) -> PathBuf {
        let file = self.dir.join("hosts.toml");
        std::fs::write(
            &file,
            format!(
                "name = \"hosts\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"9x9\"]\n\
                 load = [\"a\"]\n[loads.a]\nrequests = 10\nconcurrency = 1\n\
                 [hosts]\n{hosts}ssh_config = \"lab.ssh_config\"\n"
            ),
        )
        .unwrap();
        file
    }

    /// What the sshd of host `i` logged (for a failing test's message).
    pub fn sshd_log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("host{i}/sshd.log"))).unwrap_or_default()
    }

    /// The PIDs of the sshds, still running.
    pub fn sshd_pids(&self) -> Vec<u32> {
        self.sshd.running().iter().map(|r| r.pid).collect()
    }

    /// The network namespace of sshd host `i` (a test starts its server there).
    pub fn host_netns(&self, i: usize) -> String {
        self.topo.netns(SERVED[i])
    }

    /// herd serve on `port` of sshd host 0 (198.18.3.2) with `more` flags, writing its
    /// access log (a line per response) to its log, started by `sup` (stopped by its PID
    /// when `sup` drops); its log, once it listens.
    pub fn serve_herd(&self, sup: &mut Supervisor, port: u16, more: &[OsString]) -> PathBuf {
        let log = self.dir.join(format!("serve-{port}.log"));
        let listen = format!("{}:{port}", self.hosts[0].addr);
        let mut argv: Vec<OsString> = [
            env!("CARGO_BIN_EXE_herd"),
            "serve",
            "--listen",
            &listen,
            "--threads",
            "1",
            "--access-log",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        argv.extend(more.iter().cloned());
        let ns = self.host_netns(0);
        sup.start(&Spawn {
            name: "herd serve",
            argv: &argv,
            env: &[],
            stdout: &log,
            stderr: &log,
            cpus: &CpuSet::All,
            netns: Some(&ns),
        })
        .unwrap();
        let t = Instant::now();
        while !std::fs::read_to_string(&log).unwrap_or_default().contains("listening on") {
            assert!(t.elapsed() < Duration::from_secs(10), "herd serve did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        log
    }

    /// What herd serve on `port` of sshd host 0 counted on `route` (`/herd/stats`), asked
    /// from the client host.
    pub fn served(&self, port: u16, route: &str) -> u64 {
        use std::io::{Read as _, Write as _};
        let addr = (self.hosts[0].addr, port);
        let all = netns::within(&self.netns, move || {
            let mut s = TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            s.write_all(b"GET /herd/stats HTTP/1.0\r\n\r\n").unwrap();
            let mut all = String::new();
            s.read_to_string(&mut all).unwrap();
            all
        })
        .unwrap();
        let body = all.split_once("\r\n\r\n").unwrap().1;
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        v["routes"][route].as_u64().unwrap_or(0)
    }

    /// What herd started on sshd host `i` and left there: processes whose command line names
    /// the host's home or temporary directory (helpers, servers, agents: only the tests
    /// start programs there), and what its temporary directory holds (helpers' run
    /// directories).
    pub fn left_on(&self, i: usize) -> Vec<String> {
        let tmp = self.dir.join(format!("host{i}/tmp"));
        let home = &self.hosts[i].home;
        let mut left: Vec<String> = std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .map(|e| format!("directory {}", e.path().display()))
            .collect();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else { continue };
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let zombie = stat.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z'));
            let ours =
                cmd.contains(&*tmp.to_string_lossy()) || cmd.contains(&*home.to_string_lossy());
            if ours && !zombie {
                left.push(format!("process {name}: {cmd}"));
            }
        }
        left
    }

    /// The namespaces' tag, for checking that nothing is left.
    pub fn tag(&self) -> &str {
        &self.topo.plan().tag
    }

    /// Cuts sshd host `i` off the network without a word: every link of its namespace but
    /// loopback set down, as a pulled cable or a host's network gone would (no FIN, no RST).
    pub fn cut_off(&self, i: usize) {
        let ns = self.topo.netns(SERVED[i]);
        let out = Command::new("ip").args(["-n", &ns, "-o", "link", "show"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            // `2: eth0@if7: <BROADCAST,…> …`: the name before `@` or `:`.
            let Some(name) = line.split(": ").nth(1) else { continue };
            let name = name.split('@').next().unwrap_or(name);
            if name != "lo" {
                let down = Command::new("ip")
                    .args(["-n", &ns, "link", "set", "dev", name, "down"])
                    .output()
                    .unwrap();
                assert!(down.status.success(), "{}", String::from_utf8_lossy(&down.stderr));
            }
        }
    }
}

/// `argv` (sshd) run in a mount namespace of its own (private: nothing leaves it) where each
/// of `hidden` is covered by an empty file of mode 0644 in `dir`: `unshare` makes the
/// namespace and execs a shell that binds the file over each path, then execs sshd, so the
/// supervisor's PID is sshd's. A path that is not there is left alone.
fn hiding(dir: &Path, hidden: &[&str], argv: Vec<OsString>) -> Vec<OsString> {
    let empty = dir.join("hidden-program");
    std::fs::write(&empty, "").unwrap();
    std::fs::set_permissions(&empty, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let script = "e=$1; shift; while [ \"$1\" != -- ]; do \
                  if [ -e \"$1\" ]; then mount --bind \"$e\" \"$1\" || exit 1; fi; shift; done; \
                  shift; exec \"$@\"";
    let mut words: Vec<OsString> =
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
            .iter()
            .map(OsString::from)
            .collect();
    words.push(empty.into_os_string());
    words.extend(hidden.iter().map(OsString::from));
    words.push("--".into());
    words.extend(argv);
    words
}

/// An ed25519 key pair `dir/name` (and `.pub`), no passphrase.
fn keygen(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let key = dir.join(name);
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen (apt-get install openssh-client)");
    assert!(out.status.success(), "ssh-keygen: {}", String::from_utf8_lossy(&out.stderr));
    key
}
