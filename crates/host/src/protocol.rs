//! What herd and its helper on a host (`herd host`) say to each other: one JSON object per
//! line, a request from herd, then exactly one reply from the helper, over the SSH channel's
//! stdin and stdout (no port is opened on any host). Every request is tagged by `kind`;
//! every reply by `result` (`ok`, with the `kind` of its answer, or `error`, with a message
//! that names what was wrong). The hello carries [`PROTOCOL`]: a helper of another version
//! is another build of herd, which `herd lab hosts check` refuses before anything starts.
//!
//! Unknown fields are refused, not ignored: both ends are the same build, so a field one of
//! them does not know is a mistake worth an error (a `timeout` meant as `timeout_ms` would
//! otherwise fall back to the default in silence).

use serde::{Deserialize, Serialize};

/// The protocol's name and version, said first in every hello.
pub const PROTOCOL: &str = "herd.host.v1";

/// The longest line either end reads of a request: a request is a command line and a few
/// names, so anything longer is a mistake (or hostile) and is refused unread.
pub const MAX_REQUEST_LINE: usize = 1 << 20;
/// The most bytes one `write_file` carries: their base64 (4/3 as long) and the request
/// around it stay within [`MAX_REQUEST_LINE`].
pub const MAX_WRITE_PART: usize = 512 << 10;
/// The largest file `write_file` makes, its parts together.
pub const MAX_WRITE_FILE: u64 = 1 << 30;

/// The longest reply line herd reads (a file read back is the largest reply).
pub const MAX_REPLY_LINE: usize = 64 << 20;

/// The most bytes one [`Request::ReadFile`] returns, whatever it asks.
pub const MAX_READ_BYTES: u64 = 16 << 20;

/// One request from herd.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Who the helper is: [`Answer::Hello`].
    Hello,
    /// Starts a program: [`Answer::Started`].
    Start(StartSpec),
    /// Waits until a started program accepts connections: [`Answer::Ready`].
    Ready { id: String, probe: Probe, timeout_ms: u64 },
    /// CPU time of a started program and everything it forked: [`Answer::Cpu`].
    Cpu { id: String },
    /// CPU time of a process group herd did not start there (a user's own server, whose
    /// main process `pid` the experiment names), its live threads and reaped children:
    /// [`Answer::GroupCpu`].
    GroupCpu { pid: u32 },
    /// Whether a started program still runs, and if not how it ended: [`Answer::Status`].
    /// A server that dies mid-run fails that run, named, with the end of its log.
    Status { id: String },
    /// Stops a started program: SIGTERM to its process group, SIGKILL after `grace_ms`
    /// (default [`DEFAULT_GRACE_MS`]), its cgroup removed: [`Answer::Stopped`].
    Stop {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grace_ms: Option<u64>,
    },
    /// A file inside the helper's run directory (a server's log), at most `max_bytes` from
    /// its start: [`Answer::File`].
    ReadFile { path: String, max_bytes: u64 },
    /// Writes a file inside the helper's run directory (a server's rendered config, its
    /// certificate, its document root's files), its directories made: `base64` is the bytes,
    /// a part of at most [`MAX_WRITE_PART`] of them; `append` adds a part to what earlier
    /// requests wrote (a file over a line's worth comes in parts): [`Answer::Written`].
    WriteFile {
        path: String,
        base64: String,
        #[serde(default)]
        append: bool,
        /// Unix permission bits (0o644 when None).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    /// Makes a directory inside the run directory, its parents too (a server's log and
    /// temporary directories, which no file written makes): `mode` its permission bits
    /// (0o755 when None), `owner` a user to give it to (the user a server's workers run as
    /// after dropping root's rights; only a helper running as root can): [`Answer::Made`].
    MakeDir {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<String>,
    },
    /// The sockets in TIME_WAIT on the host, and the bound herd keeps them under there
    /// (half its `tcp_max_tw_buckets`): [`Answer::TimeWait`]. A server that closes first
    /// leaves them on its host, where herd's own count cannot see them.
    TimeWait,
    /// The network card the host sends to `toward` from (an address of the host's own:
    /// the card holding it), with its driver, speed, MTU and state: [`Answer::Nic`].
    Nic { toward: String },
    /// The host's disclosure, as `herd doctor --json` prints it there: [`Answer::Doctor`].
    Doctor,
    /// Stops what earlier helpers of this user left (helpers killed with their programs
    /// still running) and removes their run directories: [`Answer::Cleaned`].
    Clean,
    /// Nothing but a sign of life: [`Answer::Pong`]. A helper started with an idle time
    /// ends (stopping everything) when no request comes within it, so herd sends these
    /// while it holds the link and has nothing else to ask (`keeper.rs`): a link dropped
    /// without a close (a cable, a host's network down) then ends the helper too.
    Ping,
    /// Stops everything, removes the run directory and ends: [`Answer::Bye`], written once
    /// that is done.
    Bye,
}

/// The grace between SIGTERM and SIGKILL when a [`Request::Stop`] gives none.
pub const DEFAULT_GRACE_MS: u64 = 3000;

/// A program to start on the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartSpec {
    /// herd's name for it in later requests (`server`, `php-fpm`); unique while it runs.
    pub id: String,
    /// Program and arguments; the program is an absolute path or looked up in PATH.
    pub argv: Vec<String>,
    /// Added to the helper's environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
    /// Its working directory; the helper's own when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The CPUs it may run on, as herd writes a CPU set (`0`, `0-1`, `0,2`, `all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// Its standard output and error go to this file of the run directory (a plain name).
    pub log: String,
}

/// How the helper knows a program is ready: a connection it accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Probe {
    /// A TCP address (`127.0.0.1:8080`, `[::1]:8443`).
    Tcp(String),
    /// A Unix socket's path.
    UnixSocket(String),
}

/// One reply of the helper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Reply {
    Ok(Answer),
    /// The request could not be done; `message` says what was wrong with what.
    Error {
        message: String,
    },
}

impl Reply {
    pub fn error(message: impl Into<String>) -> Reply {
        Reply::Error { message: message.into() }
    }

    /// The reply as one line (no newline): what the helper writes.
    pub fn to_line(&self) -> String {
        // A reply holds strings, numbers and lists only: it always serialises.
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"result":"error","message":"cannot write the reply: {e}"}}"#)
        })
    }
}

/// What an ok reply carries, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Answer {
    Hello(Hello),
    Started {
        id: String,
        pid: u32,
        /// How [`Request::Cpu`] reads its CPU time (`cgroup-v1`, `cgroup-v2`, `per-process`).
        accounting: String,
        /// Its log, a path inside the run directory as [`Request::ReadFile`] takes it.
        log: String,
    },
    Ready(Readiness),
    Cpu {
        id: String,
        seconds: f64,
        accounting: String,
    },
    Status {
        id: String,
        /// None while it runs; how it ended once it has.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ended: Option<Ending>,
    },
    Made {
        path: String,
    },
    TimeWait {
        count: u64,
        bound: u64,
    },
    /// `eth0 (198.18.3.2): driver virtio_net, 10000 Mbit/s, MTU 1500, up`.
    Nic {
        nic: String,
    },
    GroupCpu {
        pid: u32,
        /// The group's leader's (the process group of `pid`).
        pgid: u32,
        seconds: f64,
    },
    Stopped {
        id: String,
        /// How it ended, in words (`exit status 0`, `killed by signal 9`).
        how: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
    },
    File {
        path: String,
        /// The bytes read, as text (invalid UTF-8 replaced).
        text: String,
        /// The file's whole size; `truncated` when more than was read.
        size: u64,
        truncated: bool,
    },
    Doctor {
        /// What `herd doctor --json` printed there.
        text: String,
        /// How it ended: None when it exited 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<String>,
    },
    Cleaned(Cleaned),
    Written {
        path: String,
        /// The file's size now.
        size: u64,
    },
    Pong,
    Bye {
        /// Programs that still ran and were stopped.
        stopped: usize,
        /// Whether the run directory went (else the helper's stderr says why).
        removed: bool,
    },
}

impl Answer {
    /// The kind's name as it is on the wire (`started`, `ready`): for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Answer::Hello(_) => "hello",
            Answer::Started { .. } => "started",
            Answer::Ready(_) => "ready",
            Answer::Cpu { .. } => "cpu",
            Answer::Status { .. } => "status",
            Answer::Made { .. } => "made",
            Answer::TimeWait { .. } => "time_wait",
            Answer::Nic { .. } => "nic",
            Answer::GroupCpu { .. } => "group_cpu",
            Answer::Stopped { .. } => "stopped",
            Answer::File { .. } => "file",
            Answer::Doctor { .. } => "doctor",
            Answer::Cleaned(_) => "cleaned",
            Answer::Written { .. } => "written",
            Answer::Pong => "pong",
            Answer::Bye { .. } => "bye",
        }
    }
}

impl Request {
    /// The kind's name as it is on the wire: for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Request::Hello => "hello",
            Request::Start(_) => "start",
            Request::Ready { .. } => "ready",
            Request::Cpu { .. } => "cpu",
            Request::Status { .. } => "status",
            Request::MakeDir { .. } => "make_dir",
            Request::TimeWait => "time_wait",
            Request::Nic { .. } => "nic",
            Request::GroupCpu { .. } => "group_cpu",
            Request::Stop { .. } => "stop",
            Request::ReadFile { .. } => "read_file",
            Request::WriteFile { .. } => "write_file",
            Request::Doctor => "doctor",
            Request::Clean => "clean",
            Request::Ping => "ping",
            Request::Bye => "bye",
        }
    }

    /// The request as one line (no newline): what herd writes.
    pub fn to_line(&self) -> String {
        // Strings, numbers and lists only: it always serialises.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A request read from one line, or the error reply's message that says why it is not
    /// one.
    pub fn parse(line: &str) -> Result<Request, String> {
        serde_json::from_str(line).map_err(|e| {
            let kind = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_owned));
            match kind {
                Some(kind) => format!("not a {PROTOCOL} request of kind {kind:?}: {e}"),
                None => format!("not a {PROTOCOL} request: {e}"),
            }
        })
    }
}

/// Who a helper is: what `herd lab hosts check` compares and the disclosure records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    /// [`PROTOCOL`].
    pub protocol: String,
    /// `herd --version` there (`herd 0.1.0 (commit 1a2b3c4d5e6f)`).
    pub herd: String,
    pub hostname: String,
    /// CPUs the helper may use.
    pub cpus: usize,
    /// The host's online CPUs as a CPU set (`0-3`): what a `start`'s `cpus` may name.
    pub online: String,
    /// The kernel's release (`uname -r`).
    pub kernel: String,
    /// How started programs' CPU time is read (`cgroup-v1`, `cgroup-v2`, `per-process`).
    pub accounting: String,
    /// The helper's PID and its run directory, where programs' logs go.
    pub pid: u32,
    pub run_dir: String,
}

/// Whether a program became ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case", deny_unknown_fields)]
pub enum Readiness {
    /// It accepted a connection this long after the request.
    Ready { after_ms: u64 },
    /// It ended first: how, and the end of its log.
    Exited { how: String, log_tail: String },
    /// It neither accepted a connection nor ended in the time given.
    TimedOut { after_ms: u64 },
}

/// How a started program ended, as [`Answer::Status`] says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ending {
    /// In words (`exit status 1`, `killed by signal 9`).
    pub how: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The end of its log.
    pub log_tail: String,
}

/// What a [`Request::Clean`] found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cleaned {
    /// Run directories of gone helpers, removed.
    pub dirs: Vec<String>,
    /// Processes stopped: `PID name`.
    pub stopped: Vec<String>,
    /// Cgroups removed.
    pub cgroups: Vec<String>,
    /// Run directories of helpers that still run, left alone.
    pub in_use: Vec<String>,
    /// What could not be removed, and why.
    pub errors: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_request() -> Vec<Request> {
        vec![
            Request::Hello,
            Request::Start(StartSpec {
                id: "server".into(),
                argv: vec!["/usr/sbin/nginx".into(), "-c".into(), "a b.conf".into()],
                env: vec![("LANG".into(), "C".into())],
                cwd: Some("/srv".into()),
                cpus: Some("0-1".into()),
                log: "server.log".into(),
            }),
            Request::Start(StartSpec {
                id: "s".into(),
                argv: vec!["true".into()],
                env: vec![],
                cwd: None,
                cpus: None,
                log: "s.log".into(),
            }),
            Request::Ready {
                id: "server".into(),
                probe: Probe::Tcp("127.0.0.1:8080".into()),
                timeout_ms: 5000,
            },
            Request::Ready {
                id: "fpm".into(),
                probe: Probe::UnixSocket("/run/x.sock".into()),
                timeout_ms: 1,
            },
            Request::Cpu { id: "server".into() },
            Request::Status { id: "server".into() },
            Request::TimeWait,
            Request::Nic { toward: "198.18.3.11".into() },
            Request::GroupCpu { pid: 4242 },
            Request::MakeDir { path: "cells/1/logs".into(), mode: None, owner: None },
            Request::MakeDir {
                path: "tmp".into(),
                mode: Some(0o700),
                owner: Some("www-data".into()),
            },
            Request::Stop { id: "server".into(), grace_ms: None },
            Request::Stop { id: "server".into(), grace_ms: Some(100) },
            Request::ReadFile { path: "server.log".into(), max_bytes: 4096 },
            Request::WriteFile {
                path: "conf/nginx.conf".into(),
                base64: "d29ya2VyX3Byb2Nlc3NlcyAxOwo=".into(),
                append: false,
                mode: Some(0o600),
            },
            Request::Doctor,
            Request::Clean,
            Request::Ping,
            Request::Bye,
        ]
    }

    fn every_reply() -> Vec<Reply> {
        let hello = Hello {
            protocol: PROTOCOL.into(),
            herd: "herd 0.1.0 (commit 1a2b3c4d5e6f)".into(),
            hostname: "bench-1".into(),
            cpus: 4,
            online: "0-3".into(),
            kernel: "6.1.0-13-amd64".into(),
            accounting: "cgroup-v2".into(),
            pid: 4242,
            run_dir: "/tmp/herd-host-4242-00c0ffee".into(),
        };
        let answers = vec![
            Answer::Hello(hello),
            Answer::Started {
                id: "server".into(),
                pid: 77,
                accounting: "per-process".into(),
                log: "server.log".into(),
            },
            Answer::Ready(Readiness::Ready { after_ms: 12 }),
            Answer::Ready(Readiness::Exited {
                how: "exit status 1".into(),
                log_tail: "bind: address in use\n".into(),
            }),
            Answer::Ready(Readiness::TimedOut { after_ms: 5000 }),
            Answer::Cpu { id: "server".into(), seconds: 0.125, accounting: "cgroup-v1".into() },
            Answer::Status { id: "server".into(), ended: None },
            Answer::Status {
                id: "server".into(),
                ended: Some(Ending {
                    how: "exit status 1".into(),
                    code: Some(1),
                    signal: None,
                    log_tail: "bind() failed".into(),
                }),
            },
            Answer::Made { path: "tmp".into() },
            Answer::TimeWait { count: 28_000, bound: 131_072 },
            Answer::Nic { nic: "eth0 (198.18.3.2): driver veth, MTU 1500, up".into() },
            Answer::GroupCpu { pid: 4242, pgid: 4240, seconds: 1.5 },
            Answer::Stopped {
                id: "server".into(),
                how: "exit status 0".into(),
                code: Some(0),
                signal: None,
            },
            Answer::Stopped {
                id: "server".into(),
                how: "killed by signal 9".into(),
                code: None,
                signal: Some(9),
            },
            Answer::File {
                path: "server.log".into(),
                text: "GET / 200\n\u{fffd}".into(),
                size: 10,
                truncated: true,
            },
            Answer::Doctor { text: "ok  nginx\n".into(), failure: None },
            Answer::Doctor { text: "MISS ab\n".into(), failure: Some("exit status 1".into()) },
            Answer::Cleaned(Cleaned {
                dirs: vec!["/tmp/herd-host-1-0".into()],
                stopped: vec!["12 server".into()],
                cgroups: vec![],
                in_use: vec!["/tmp/herd-host-2-0".into()],
                errors: vec!["/tmp/x: Permission denied".into()],
            }),
            Answer::Written { path: "conf/nginx.conf".into(), size: 20 },
            Answer::Pong,
            Answer::Bye { stopped: 2, removed: true },
        ];
        let mut replies: Vec<Reply> = answers.into_iter().map(Reply::Ok).collect();
        replies.push(Reply::error("no program started as \"x\""));
        replies
    }

    #[test]
    fn the_largest_write_part_fits_in_a_request_line() {
        use base64::Engine as _;
        let part = vec![0xffu8; MAX_WRITE_PART];
        let request = Request::WriteFile {
            path: "p".repeat(255),
            base64: base64::engine::general_purpose::STANDARD.encode(&part),
            append: true,
            mode: Some(0o777),
        };
        assert!(request.to_line().len() < MAX_REQUEST_LINE, "{}", request.to_line().len());
    }

    #[test]
    fn every_request_round_trips_through_one_line() {
        for r in every_request() {
            let line = r.to_line();
            assert!(!line.contains('\n'), "{line}");
            assert_eq!(Request::parse(&line), Ok(r.clone()), "{line}");
            let kind = serde_json::from_str::<serde_json::Value>(&line).unwrap()["kind"].clone();
            assert_eq!(kind, r.kind(), "{line}");
        }
    }

    #[test]
    fn every_reply_round_trips_through_one_line() {
        for r in every_reply() {
            let line = r.to_line();
            assert!(!line.contains('\n'), "{line}");
            let back: Reply = serde_json::from_str(&line).unwrap();
            assert_eq!(back, r, "{line}");
            let v = serde_json::from_str::<serde_json::Value>(&line).unwrap();
            match &r {
                Reply::Ok(a) => {
                    assert_eq!(v["result"], "ok", "{line}");
                    assert_eq!(v["kind"], a.kind(), "{line}");
                }
                Reply::Error { .. } => assert_eq!(v["result"], "error", "{line}"),
            }
        }
    }

    /// What a hello is on the wire, byte for byte: the fields `herd lab hosts check` reads.
    #[test]
    fn a_hello_is_its_golden_line() {
        let hello = every_reply().remove(0);
        let golden = herd_testutil::golden::Goldens::of(env!("CARGO_MANIFEST_DIR"));
        golden.check("hello.json", format!("{}\n", hello.to_line()));
    }

    #[test]
    fn malformed_requests_are_errors_that_say_what_was_wrong() {
        let cases: &[(&str, &str)] = &[
            ("", "not a herd.host.v1 request: EOF"),
            ("{", "not a herd.host.v1 request: EOF"),
            ("[1,2]", "not a herd.host.v1 request"),
            ("\"hello\"", "not a herd.host.v1 request"),
            (r#"{"kind":"launch"}"#, "unknown variant `launch`"),
            (r#"{"kind":"launch"}"#, r#"of kind "launch""#),
            (r#"{"kind":"cpu"}"#, "missing field `id`"),
            (r#"{"kind":"cpu","id":7}"#, "invalid type: integer `7`"),
            (r#"{"kind":"ready","id":"s","probe":{"tcp":"x"},"timeout":5}"#, "unknown field"),
            (r#"{"kind":"ready","id":"s","probe":{"udp":"x"},"timeout_ms":5}"#, "udp"),
            (r#"{"kind":"start","id":"s","argv":[],"log":"l","user":"root"}"#, "`user`"),
            (r#"{"kind":"read_file","path":"x","max_bytes":-1}"#, "invalid value"),
            (r#"{"id":"s"}"#, "missing field `kind`"),
        ];
        for (line, says) in cases {
            let Err(message) = Request::parse(line) else {
                panic!("{line:?} was taken as a request")
            };
            assert!(message.contains(says), "{line:?}: {message:?} does not say {says:?}");
        }
    }
}
