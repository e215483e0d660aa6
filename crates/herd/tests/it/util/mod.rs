//! Helpers for the herd binary's integration tests: a real nginx on a free loopback port,
//! the real ab, the herd binary, ab-report comparison, and `herd serve` (`Serve`).
#![allow(dead_code, unreachable_pub)]
#![allow(clippy::disallowed_methods)] // tests start the servers and tools they check

pub mod browser;
pub mod json_schema;
pub mod ssh_hosts;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// The herd binary under test.
pub fn herd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_herd"))
}

/// `herd lab run FILE` with its run directories under `dir` (TMPDIR) and its store
/// `dir/r.db`, no progress bar.
pub fn lab_run(dir: &Path, file: &Path) -> Command {
    let mut cmd = herd();
    cmd.env("TMPDIR", dir)
        .args(["lab", "run", "--no-progress", "--store"])
        .arg(dir.join("r.db"))
        .arg(file);
    cmd
}

/// The report's table of every row's figures (after the matrix), to the end.
pub fn rows_table(report: &str) -> &str {
    let at = report.find("\nevery row's figures").unwrap_or_else(|| panic!("{report}"));
    &report[at..]
}

/// That table's header line and its rows, up to the first blank line.
pub fn rows_of(report: &str) -> (String, Vec<String>) {
    let mut lines = rows_table(report).lines().skip_while(|l| !l.starts_with("server "));
    let header = lines.next().unwrap_or_else(|| panic!("no header: {report}")).to_owned();
    (header, lines.take_while(|l| !l.trim().is_empty()).map(str::to_owned).collect())
}

/// Where `heading` starts in `header`, in characters (the tables hold `±`, `µ`, `≠`).
pub fn column_at(header: &str, heading: &str) -> usize {
    let (h, n): (Vec<char>, Vec<char>) = (header.chars().collect(), heading.chars().collect());
    h.windows(n.len())
        .position(|w| w == n.as_slice())
        .unwrap_or_else(|| panic!("no {heading:?} in {header}"))
}

/// The right-aligned figure under `heading` (it ends where its heading ends).
pub fn figure_ending_under(header: &str, line: &str, heading: &str) -> String {
    let end = column_at(header, heading) + heading.chars().count();
    let upto: String = line.chars().take(end).collect();
    upto.split_whitespace().last().unwrap_or("").to_owned()
}

/// The left-aligned word under `heading` (it starts where its heading starts).
pub fn word_starting_under(header: &str, line: &str, heading: &str) -> String {
    let from: String = line.chars().skip(column_at(header, heading)).collect();
    from.split_whitespace().next().unwrap_or("").to_owned()
}

/// The figure under `heading` on the first row of every row's figures that contains `row`.
pub fn figure_under(report: &str, row: &str, heading: &str) -> String {
    let (header, rows) = rows_of(report);
    let line = rows
        .iter()
        .find(|l| l.contains(row))
        .unwrap_or_else(|| panic!("no row with {row}: {report}"));
    figure_ending_under(&header, line, heading)
}

/// The real ApacheBench. Never skipped: a missing ab fails with what to install.
pub fn real_ab() -> Command {
    let path = Path::new("/usr/bin/ab");
    assert!(path.exists(), "the real ab is missing: apt-get install apache2-utils");
    Command::new(path)
}

pub use herd_testutil::ports::free_port;

/// The namespaces of lab run `pid` still in /run/netns.
pub fn namespaces_of(pid: u32) -> Vec<String> {
    let prefix = format!("herd-{pid}-");
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// A new directory under the system temp dir, unique within this test process and
/// across processes (pid), for tests that run in parallel.
pub fn tempdir(tag: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("herd-test-{tag}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A lab run of `e` in this process, herd's executable being `herd_exe` (a stand-in, for
/// tests that make a phase fail for real), stored in `store`, its run directory under
/// `dir`, silent. Preflight and the run must both succeed.
pub fn lab_in_process(
    e: &herd_lab::experiment::Experiment,
    herd_exe: PathBuf,
    store: &mut herd_store::Store,
    dir: &Path,
) -> herd_lab::runner::Finished {
    use herd_lab::runner::{self, progress::Silent, LabRun};
    let checked = runner::preflight(e, &herd_exe).unwrap();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let run = LabRun {
        experiment: e,
        store,
        herd_exe,
        herd_version: "test".into(),
        tmp: dir.to_path_buf(),
        plan: String::new(),
        cancel: &cancel,
        progress: &mut Silent,
        resume: None,
        metrics: None,
        live_series: None,
    };
    runner::run(checked, run).unwrap()
}

/// Held around every `herd lab clean` and `herd lab run --resume` a test runs (a resume
/// cleans first): clean removes each `herd-*` namespace whose maker is gone, whichever test's
/// lab made it, so a test that kills a lab and holds its clean to name what the kill left
/// takes this before the kill, and no other test's clean can sweep those first — in this
/// binary or another (herd_testutil::sweep: herd-topo's tests sweep too).
pub fn clean_lock() -> herd_testutil::sweep::SweepLock {
    herd_testutil::sweep::lock()
}

/// Fails the test unless it runs as root: it builds network namespaces (CI runs as root).
pub fn require_root() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "these tests build network namespaces and need root: run them as root (CI does)"
    );
}

/// Waits for `child` to exit, asking every 20 ms; fails the test with `what` (what did not
/// happen) after `limit`. How it exited.
pub fn exit_within(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(t.elapsed() < limit, "{what} (after {limit:?})");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `cond` holds, asking every 20 ms; fails the test naming `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A real nginx, one worker, serving `root` on 127.0.0.1; stopped (by its PID) on drop.
pub struct Nginx {
    pub port: u16,
    /// The https port, when started with [`Nginx::start_tls`].
    pub tls_port: Option<u16>,
    /// A PEM file with a client certificate and its key that nginx trusts (`-E`).
    pub client_pem: Option<PathBuf>,
    /// nginx also listens on this Unix-domain socket (plain HTTP).
    pub unix: PathBuf,
    /// HTTP/2 in the clear with prior knowledge (`listen … http2` without ssl), the same
    /// files; on `h2c_short_port` a connection carries at most 50 requests (then GOAWAY).
    pub h2c_port: u16,
    pub h2c_short_port: u16,
    /// https with ALPN h2 and http/1.1, when started with [`Nginx::start_tls`].
    pub h2_port: Option<u16>,
    pub root: PathBuf,
    dir: PathBuf,
    child: Child,
}

impl Nginx {
    /// Starts nginx with files: `f6397.html` (6397 bytes), `small.html` (13 bytes).
    pub fn start() -> Nginx {
        Nginx::start_with(false)
    }

    /// Also serves https (self-signed P-256 certificate for localhost) on `tls_port`;
    /// `/private.html` answers 403 unless the client presented [`Nginx::client_pem`].
    pub fn start_tls() -> Nginx {
        Nginx::start_with(true)
    }

    fn start_with(tls: bool) -> Nginx {
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .map(Path::new)
            .find(|p| p.exists())
            .expect("nginx is missing: apt-get install nginx-light");
        let dir = tempdir("nginx");
        let root = dir.join("www");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("f6397.html"), "x".repeat(6397)).unwrap();
        std::fs::write(root.join("small.html"), "hello, herd!\n").unwrap();
        // Requests under /counted/ are logged, one line each: the server's own count.
        std::fs::create_dir_all(root.join("counted")).unwrap();
        std::fs::write(root.join("counted/small.html"), "hello, herd!\n").unwrap();
        // Under /traced/ each request's traceparent is logged, one line each.
        std::fs::create_dir_all(root.join("traced")).unwrap();
        std::fs::write(root.join("traced/small.html"), "hello, herd!\n").unwrap();
        // World-readable, for nginx's worker user.
        for p in [&dir, &root, &root.join("counted"), &root.join("traced")] {
            let _ =
                std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755));
        }
        let (tls_conf, client_pem) = if tls { tls_files(&dir) } else { (String::new(), None) };
        for attempt in 0..5 {
            let port = free_port();
            let tls_port = free_port();
            let (h2c_port, h2c_short_port, h2_port) = (free_port(), free_port(), free_port());
            let conf = format!(
                "worker_processes 1;\n\
                 error_log {dir}/error.log;\n\
                 pid {dir}/nginx.pid;\n\
                 events {{ worker_connections 4096; }}\n\
                 http {{\n\
                   access_log off;\n\
                   log_format tls '$ssl_session_reused';\n\
                   log_format trace '$http_traceparent';\n\
                   sendfile on;\n\
                   keepalive_requests 100000;\n\
                   client_body_temp_path {dir}/body;\n\
                   proxy_temp_path {dir}/proxy;\n\
                   fastcgi_temp_path {dir}/fastcgi;\n\
                   uwsgi_temp_path {dir}/uwsgi;\n\
                   scgi_temp_path {dir}/scgi;\n\
                   server {{\n\
                     listen 127.0.0.1:{port};\n\
                     listen unix:{dir}/nginx.sock;\n\
                     root {root};\n\
                     location = /echo {{ return 200 \"posted\\n\"; }}\n\
                     location = /herd-fixture {{ return 200 \"{dir}\"; }}\n\
                     location /counted/ {{ access_log {dir}/counted.log; }}\n\
                     location /traced/ {{ access_log {dir}/traced.log trace; }}\n\
                   }}\n\
                   server {{\n\
                     listen 127.0.0.1:{h2c_port} http2;\n\
                     root {root};\n\
                     location = /echo {{ return 200 \"posted\\n\"; }}\n\
                     location /counted/ {{ access_log {dir}/counted.log; }}\n\
                     location /traced/ {{ access_log {dir}/traced.log trace; }}\n\
                   }}\n\
                   server {{\n\
                     listen 127.0.0.1:{h2c_short_port} http2;\n\
                     keepalive_requests 50;\n\
                     root {root};\n\
                   }}\n\
                   {tls}\n\
                 }}\n",
                tls = tls_conf
                    .replace("H2_PORT", &h2_port.to_string())
                    .replace("TLS_PORT", &tls_port.to_string()),
                dir = dir.display(),
                root = root.display(),
            );
            let conf_path = dir.join("nginx.conf");
            std::fs::write(&conf_path, conf).unwrap();
            let child = Command::new(nginx)
                .arg("-c")
                .arg(&conf_path)
                .arg("-p")
                .arg(&dir)
                .arg("-g")
                .arg("daemon off; master_process off;")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("cannot start nginx");
            let mut n = Nginx {
                port,
                tls_port: tls.then_some(tls_port),
                client_pem: client_pem.clone(),
                unix: dir.join("nginx.sock"),
                h2c_port,
                h2c_short_port,
                h2_port: tls.then_some(h2_port),
                root: root.clone(),
                dir: dir.clone(),
                child,
            };
            if n.wait_ready() {
                return n;
            }
            let _ = n.child.kill();
            let _ = n.child.wait();
            eprintln!("nginx did not start on port {port} (attempt {attempt}), retrying");
        }
        panic!("nginx did not start; see {}", dir.join("error.log").display());
    }

    fn wait_ready(&mut self) -> bool {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if self.answers_as_itself() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Whether the server on `port` is this nginx: free_port() only picks a port that was free a
    /// moment ago, so a test running beside this one may have started its own nginx there (this
    /// one then fails to bind and exits, possibly after a connect already succeeded).
    fn answers_as_itself(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else { return false };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        if s.write_all(b"GET /herd-fixture HTTP/1.0\r\n\r\n").is_err() {
            return false;
        }
        let mut all = Vec::new();
        let _ = s.read_to_end(&mut all);
        all.ends_with(format!("\r\n\r\n{}", self.dir.display()).as_bytes())
    }

    pub fn https_url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.tls_port.expect("started without TLS"))
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Of the requests nginx answered over TLS under `/counted/` (on `tls_port`), how many
    /// came on a resumed TLS session (nginx's `$ssl_session_reused`), and how many in all.
    pub fn tls_resumed(&self) -> (usize, usize) {
        let log = std::fs::read_to_string(self.dir.join("tls.log")).unwrap_or_default();
        (log.lines().filter(|l| l.trim() == "r").count(), log.lines().count())
    }

    /// Requests nginx has answered under `/counted/`, by its own access log.
    pub fn counted(&self) -> usize {
        std::fs::read_to_string(self.dir.join("counted.log")).map_or(0, |t| t.lines().count())
    }

    /// The `traceparent` of each request under /traced/, in the order nginx logged them
    /// (`-` for a request without one).
    pub fn traced(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("traced.log"))
            .map(|t| t.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// The self-signed certificate of its https listeners (to give as `--ca-file`).
    pub fn server_cert(&self) -> PathBuf {
        self.dir.join("server.pem")
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `herd run ARGS --json FILE`, which must succeed; returns the JSON.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    run_json_exiting(args, 0).0
}

/// `herd run ARGS --json FILE`, which must exit with `code`: the document and the output.
pub fn run_json_exiting(args: &[&str], code: i32) -> (serde_json::Value, Output) {
    let dir = tempdir("run-json");
    let path = dir.join("out.json");
    let out = run(herd().arg("run").args(args).arg("--json").arg(&path));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // stderr first: it says why, and a CI log may keep only a long message's head and tail.
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}\n{stdout}");
    let doc = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (doc, out)
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).output().expect("cannot run command")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The report part of an ab-style stdout: everything after the banner's blank line, with
/// SANE warning lines (which depend on timing noise) removed.
pub fn report_lines(stdout: &str) -> Vec<String> {
    let mut lines: Vec<String> = stdout.lines().skip(4).map(str::to_string).collect();
    let mut out = Vec::new();
    let mut skip_next = false;
    for l in lines.drain(..) {
        if skip_next {
            skip_next = false;
            continue;
        }
        if l.starts_with("WARNING: The median") || l.starts_with("ERROR: The median") {
            skip_next = true;
            continue;
        }
        out.push(l);
    }
    out
}

/// Fields whose value must be identical between ab and herd ab.
pub const EXACT_FIELDS: &[&str] = &[
    "Server Software:",
    "Server Hostname:",
    "Server Port:",
    "Document Path:",
    "Document Length:",
    "Concurrency Level:",
    "Complete requests:",
    "Failed requests:",
    "   (Connect:",
    "Write errors:",
    "Non-2xx responses:",
    "Keep-Alive requests:",
    "Total transferred:",
    "Total body sent:",
    "HTML transferred:",
];

/// Compares two ab reports: same lines in the same order; exact values for
/// [`EXACT_FIELDS`]; timing lines present with the same shape.
pub fn assert_same_report(ab: &str, herd: &str, case: &str) {
    let a = report_lines(ab);
    let h = report_lines(herd);
    let show = || format!("--- ab ({case})\n{}\n--- herd ab\n{}", a.join("\n"), h.join("\n"));
    assert_eq!(a.len(), h.len(), "{case}: different line counts\n{}", show());
    for (la, lh) in a.iter().zip(&h) {
        if EXACT_FIELDS.iter().any(|f| la.starts_with(f)) {
            assert_eq!(la, lh, "{case}: field differs\n{}", show());
        } else {
            assert_eq!(
                shape(la),
                shape(lh),
                "{case}: line shape differs: {la:?} vs {lh:?}\n{}",
                show()
            );
        }
    }
}

/// A line with every run of digits (and decimal points between them) replaced by `#`, and
/// runs of spaces folded: the label and units of a timing line, not its values.
pub fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut in_num = false;
    for ch in line.chars() {
        if ch.is_ascii_digit() || (in_num && ch == '.') {
            if !in_num {
                out.push('#');
                in_num = true;
            }
        } else {
            in_num = false;
            if ch == ' ' && out.ends_with(' ') {
                continue;
            }
            out.push(ch);
        }
    }
    out
}

/// Writes `data` to a new file in `dir` and returns its path.
pub fn file(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(data).unwrap();
    p
}

/// Writes a server certificate and key and a client certificate (trusted by nginx) into
/// `dir`; returns the nginx server block (with `TLS_PORT` to fill in) and the client PEM.
fn tls_files(dir: &Path) -> (String, Option<PathBuf>) {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    std::fs::write(dir.join("server.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("server.key"), key.serialize_pem()).unwrap();
    let ckey = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["herd-client".into()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ccert = params.self_signed(&ckey).unwrap();
    std::fs::write(dir.join("client-ca.pem"), ccert.pem()).unwrap();
    let client = dir.join("client.pem");
    std::fs::write(&client, format!("{}{}", ccert.pem(), ckey.serialize_pem())).unwrap();
    let conf = format!(
        "server {{ listen 127.0.0.1:TLS_PORT ssl; root {root};\n\
           ssl_certificate {d}/server.pem; ssl_certificate_key {d}/server.key;\n\
           ssl_client_certificate {d}/client-ca.pem; ssl_verify_client optional;\n\
           location = /private.html {{ if ($ssl_client_verify != SUCCESS) {{ return 403; }} }}\n\
           location /counted/ {{ access_log {d}/tls.log tls; }}\n\
         }}\n\
         server {{ listen 127.0.0.1:H2_PORT ssl http2; root {root};\n\
           ssl_certificate {d}/server.pem; ssl_certificate_key {d}/server.key;\n\
         }}",
        root = dir.join("www").display(),
        d = dir.display()
    );
    (conf, Some(client))
}

/// A `herd serve` child on a free loopback port; killed (by its PID) on drop.
pub struct Serve {
    pub child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The rest of its stdout (the access log, when on).
    pub stdout: Option<BufReader<ChildStdout>>,
}

impl Serve {
    /// `herd serve` with `extra` flags, on `--listen 127.0.0.1:0` unless they say where.
    pub fn start(extra: &[&str]) -> Serve {
        let listen: &[&str] =
            if extra.contains(&"--listen") { &[] } else { &["--listen", "127.0.0.1:0"] };
        // A process group of its own, as a server started apart from its client has: the
        // lab reads an external server's CPU time as its group's.
        let mut child = herd()
            .arg("serve")
            .args(listen)
            .args(extra)
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let addr = line
            .strip_prefix("listening on http://")
            .or_else(|| line.strip_prefix("listening on https://"))
            .unwrap_or_else(|| panic!("first line: {line:?}"))
            .trim()
            .to_owned();
        Serve { child, addr, stdout: Some(stdout) }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `/herd/stats`, parsed.
    pub fn stats(&self) -> serde_json::Value {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"GET /herd/stats HTTP/1.0\r\n\r\n").unwrap();
        let mut all = String::new();
        s.read_to_string(&mut all).unwrap();
        let body = all.split_once("\r\n\r\n").unwrap().1;
        serde_json::from_str(body).unwrap()
    }
}

impl Drop for Serve {
    /// SIGTERM, as a user stops it, so that it removes what it made (its /include texts'
    /// directory under TMPDIR); SIGKILL after 5 s.
    fn drop(&mut self) {
        // SAFETY: kill has no memory preconditions; the PID is this test's own unreaped child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.wait();
    }
}

/// Two cells of about a second each, three repetitions: six runs to interrupt (the Ctrl-C
/// and --resume tests).
pub const SLOW: &str = r#"
name = "slow"
[matrix]
server = ["herd"]
workload = ["page"]
load = ["d1", "d1b"]
[workloads.page]
kind = "static"
size = 100
[loads.d1]
duration = "400ms"
concurrency = 2
keep_alive = true
[loads.d1b]
duration = "400ms"
concurrency = 3
keep_alive = true
[repetitions]
min = 3
max = 3
# Other tests leave TIME_WAIT sockets behind; draining is not what these tests are about.
[runner]
time_wait_below = 1000000
"#;
