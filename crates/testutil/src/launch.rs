//! A rendered server ([`herd_drivers::Launch`]) started as the lab starts it, for the tests that
//! run real servers outside a lab run: [`prepare`] does what the lab does first (directories,
//! the user's directories, the shared ones, config and TLS files), and [`Running::start`]
//! starts the processes in order, each in a process group of its own and each waited for by
//! its probe, which the caller answers (a test has its own client). Only the processes started
//! here are signalled, by PID, last started first.

// Test code: a failure here is the test's, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herd_drivers::{Launch, Probe};

/// What the lab does before starting a launch: creates its directories, hands the user's
/// directories to `user`, opens the shared ones to everyone (1777), writes its files, and its
/// TLS files readable by their owner only.
pub fn prepare(launch: &Launch, user: Option<&str>) {
    for dir in &launch.dirs {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    if let Some(user) = user {
        let (uid, gid) = user_ids(user);
        for dir in &launch.user_dirs {
            std::os::unix::fs::chown(dir, Some(uid), Some(gid)).unwrap();
        }
    }
    for dir in &launch.shared_dirs {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    }
    for file in &launch.files {
        std::fs::write(&file.path, &file.contents).unwrap();
    }
    for file in launch.tls.iter().flat_map(|t| &t.files) {
        std::fs::write(&file.path, &file.contents).unwrap();
        std::fs::set_permissions(&file.path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

/// Whom the servers' workers run as, by the lab's rule: `www-data` when the tests run as
/// root, nobody else otherwise.
pub fn lab_user() -> Option<String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    root.then(|| "www-data".to_owned())
}

/// The uid and gid of `user`, from /etc/passwd.
pub fn user_ids(user: &str) -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() > 3 && f[0] == user)
        .map(|f| (f[2].parse().unwrap(), f[3].parse().unwrap()))
        .unwrap_or_else(|| panic!("no user {user} in /etc/passwd"))
}

/// A log file's text so far (empty if it is not there yet).
pub fn read_log(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Processes started by one test, stopped (by PID, in reverse order) when dropped.
pub struct Running {
    /// Name, child, stop signal; in start order.
    pub children: Vec<(String, Child, i32)>,
}

impl Running {
    /// Starts `launch`'s processes in order, each once `ready` says its probe answers (asked
    /// every 20 ms, for 15 s at most; a process that exits first fails the test with its log).
    pub fn start(launch: &Launch, ready: impl Fn(&Probe) -> bool) -> Running {
        let mut running = Running { children: Vec::new() };
        for p in &launch.processes {
            let log = File::options().create(true).append(true).open(&p.log).unwrap();
            // A process group of its own, as ProcessSpec asks: Apache prefork signals its whole
            // group when it stops, which would otherwise include this test.
            #[allow(clippy::disallowed_methods)] // a test's own server, stopped by PID below
            let child = Command::new(&p.argv[0])
                .process_group(0)
                .args(&p.argv[1..])
                .envs(p.env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", p.argv));
            running.children.push((p.name.clone(), child, p.stop_signal));
            if let Some(probe) = &p.ready {
                running.wait_ready(probe, &p.log, &ready);
            }
        }
        running
    }

    fn wait_ready(&mut self, probe: &Probe, log: &Path, ready: &impl Fn(&Probe) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if ready(probe) {
                return;
            }
            let (name, child, _) = self.children.last_mut().unwrap();
            if let Some(status) = child.try_wait().unwrap() {
                panic!("{name} exited ({status}) before {probe:?}; its log:\n{}", read_log(log));
            }
            assert!(
                Instant::now() < deadline,
                "{name}: {probe:?} not ready; its log:\n{}",
                read_log(log)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops every process with its stop signal, last started first; each must exit within
    /// 10 s. Returns the names of those that did not (killed then).
    pub fn stop(&mut self) -> Vec<String> {
        let mut stuck = Vec::new();
        while let Some((name, mut child, signal)) = self.children.pop() {
            let pid = child.id() as libc::pid_t;
            if child.try_wait().unwrap().is_none() {
                // SAFETY: kill has no memory preconditions; pid is our own unreaped child.
                unsafe { libc::kill(pid, signal) };
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().unwrap().is_none() {
                if Instant::now() > deadline {
                    stuck.push(name.clone());
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        stuck
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}
