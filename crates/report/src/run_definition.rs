//! What one stored run was told to do, with what every run chooses afresh put in words: its
//! run directory (`$RUN`), its cell's directory in it (`CELL`), its server's port (`$PORT`)
//! and its namespaces' names (`herd-PID-N`), as the dry run shows them. Two runs of the same
//! definition then read the same, and where two differ, the difference is what a reader must
//! see: a load's flags, keep-alive, a protocol, a server setting, a version.

use std::collections::BTreeSet;

use herd_store::RepetitionRecord;

/// A run's definition, comparable line by line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Definition {
    /// The client program.
    pub(crate) client: String,
    /// `program version` of the client and of each server: listed where they differ, but
    /// not a difference of definition (a new version is what a comparison often asks about).
    pub(crate) versions: Vec<String>,
    /// The client's command line, normalised.
    pub(crate) client_argv: Vec<String>,
    /// Each server process: `name: program`, its normalised command line and CPUs.
    pub(crate) servers: Vec<String>,
    /// Each configuration file: its normalised path and text.
    pub(crate) configs: Vec<(String, String)>,
}

impl Definition {
    pub(crate) fn of(r: &RepetitionRecord) -> Definition {
        let port = port_of(&r.client.argv);
        let norm = |t: &str| normalize(t, port);
        let mut versions = vec![format!("client {} {}", r.client.tool, r.client.version)];
        // Which backend herd's client measured with: `auto` takes what the machine allows,
        // so, as a version, it is listed where two runs differ, not a new definition.
        versions.extend(r.client.io.as_ref().map(|io| format!("client I/O {}", io.backend)));
        versions.extend(r.servers.iter().map(|s| format!("{} {}", s.program, s.version)));
        Definition {
            client: r.client.tool.clone(),
            versions,
            client_argv: r.client.argv.iter().map(|a| norm(a)).collect(),
            servers: r
                .servers
                .iter()
                .map(|s| {
                    let argv: Vec<String> = s.argv.iter().map(|a| norm(a)).collect();
                    format!(
                        "{}: {} `{}`{}",
                        s.name,
                        s.program,
                        argv.join(" "),
                        s.cpus.as_deref().map(|c| format!(" on cpus {c}")).unwrap_or_default()
                    )
                })
                .collect(),
            configs: r
                .servers
                .iter()
                .flat_map(|s| &s.configs)
                .map(|(p, t)| (norm(p), norm(t)))
                .collect(),
        }
    }
}

/// How two definitions differ, by part, in words; empty when they are the same.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Differences {
    /// The client program or its version.
    pub(crate) client: Vec<String>,
    /// The client's command line: what only one side has.
    pub(crate) load: Vec<String>,
    /// The servers' programs, versions, command lines, CPU sets.
    pub(crate) servers: Vec<String>,
    /// Configuration files that differ, or that one side has alone.
    pub(crate) configs: Vec<String>,
    /// Program versions that differ (listed; not a difference of definition).
    pub(crate) versions: Vec<String>,
}

impl Differences {
    pub(crate) fn between(a: &Definition, b: &Definition) -> Differences {
        let mut d = Differences::default();
        if a.client != b.client {
            d.client.push(format!("client {} → {}", a.client, b.client));
        }
        for v in a.versions.iter().filter(|v| !b.versions.contains(v)) {
            d.versions.push(format!("only A ran {v}"));
        }
        for v in b.versions.iter().filter(|v| !a.versions.contains(v)) {
            d.versions.push(format!("only B ran {v}"));
        }
        let (ta, tb): (BTreeSet<&String>, BTreeSet<&String>) =
            (a.client_argv.iter().collect(), b.client_argv.iter().collect());
        let only = |x: &BTreeSet<&String>, y: &BTreeSet<&String>| -> Vec<String> {
            x.difference(y).map(|s| s.to_string()).collect()
        };
        let (only_a, only_b) = (only(&ta, &tb), only(&tb, &ta));
        if !only_a.is_empty() || !only_b.is_empty() {
            d.load.push(format!(
                "client command line: A has {}, B has {}",
                words(&only_a),
                words(&only_b)
            ));
        }
        for s in a.servers.iter().filter(|s| !b.servers.contains(s)) {
            d.servers.push(format!("only A ran {s}"));
        }
        for s in b.servers.iter().filter(|s| !a.servers.contains(s)) {
            d.servers.push(format!("only B ran {s}"));
        }
        for (path, text) in &a.configs {
            match b.configs.iter().find(|(p, _)| p == path) {
                None => d.configs.push(format!("{path}: A's only")),
                Some((_, other)) if other != text => {
                    d.configs.push(format!("{path}: {}", first_difference(text, other)))
                }
                Some(_) => {}
            }
        }
        for (path, _) in b.configs.iter().filter(|(p, _)| !a.configs.iter().any(|(q, _)| q == p)) {
            d.configs.push(format!("{path}: B's only"));
        }
        d
    }

    /// What differs beyond what `axes` (the axes the comparison is about) govern: a new
    /// server changes the servers' lines and configs, a load the client's command line, and
    /// so on. These make a pair's change the definition's as much as the axis'.
    pub(crate) fn beyond(&self, axes: &[&str]) -> Vec<String> {
        let governs = |part: Part| axes.iter().any(|a| governed_by(a).contains(&part));
        let mut out = Vec::new();
        for (part, lines) in [
            (Part::Client, &self.client),
            (Part::Load, &self.load),
            (Part::Servers, &self.servers),
            (Part::Configs, &self.configs),
        ] {
            if !governs(part) {
                out.extend(lines.iter().cloned());
            }
        }
        out
    }
}

/// The parts of a definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Client,
    Load,
    Servers,
    Configs,
}

/// The parts an axis's value decides. An axis herd does not know decides them all.
fn governed_by(axis: &str) -> &'static [Part] {
    match axis {
        "server" => &[Part::Servers, Part::Configs],
        "client" => &[Part::Client, Part::Load],
        "load" => &[Part::Load],
        "server_cpus" => &[Part::Servers],
        "protocol" | "workload" | "path" | "link" => &[Part::Load, Part::Servers, Part::Configs],
        _ => &[Part::Client, Part::Load, Part::Servers, Part::Configs],
    }
}

/// `nothing`, or the items back-quoted and joined.
fn words(items: &[String]) -> String {
    if items.is_empty() {
        "nothing of its own".to_owned()
    } else {
        items.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(" ")
    }
}

/// The first line where `a` and `b` differ, both sides quoted.
fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let at = la.iter().zip(&lb).position(|(x, y)| x != y).unwrap_or(la.len().min(lb.len()));
    let line =
        |v: &[&str]| v.get(at).map_or_else(|| "(ends)".to_owned(), |l| format!("`{}`", l.trim()));
    format!("line {}: A {} , B {}", at + 1, line(&la), line(&lb)).replace(" , ", ", ")
}

/// The port of the first URL in a command line (the server's, which the run chose).
pub(crate) fn port_of(argv: &[String]) -> Option<u16> {
    argv.iter().find_map(|a| {
        let rest = a.split_once("://")?.1;
        let authority = rest.split('/').next()?;
        let (_, port) = authority.rsplit_once(':')?;
        port.parse().ok()
    })
}

/// `text` with the run's own choices in words, as the dry run writes them: the run directory
/// (`…/herd-lab-<pid>-<n>`) as `$RUN`, a cell's directory in it as `cells/CELL`, `port` (where
/// the text gives it as a port) as `$PORT`, and herd's namespaces `herd-<pid>-<n>` as
/// `herd-PID-N`. Unlike the disclosure's placeholders (placeholders.rs, one experiment's
/// repetitions told apart), these hold across experiments: two stores' runs compare.
pub(crate) fn normalize(text: &str, port: Option<u16>) -> String {
    let mut out = run_dirs(text);
    out = cell_dirs(&out);
    out = namespaces(&out);
    if let Some(port) = port {
        out = crate::placeholders::replace_port(&out, port, "$PORT");
    }
    out
}

/// Each path up to and including a `herd-lab-…` component, as `$RUN`.
fn run_dirs(text: &str) -> String {
    const MARK: &str = "herd-lab-";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        // Back to where the path starts: after a space, a quote, `=`, `(` or the start.
        let start = rest[..at]
            .rfind(|c: char| c.is_whitespace() || "\"'=(,:".contains(c))
            .map_or(0, |i| i + 1);
        let end = rest[at..]
            .find(|c: char| c == '/' || c.is_whitespace() || "\"',;)".contains(c))
            .map_or(rest.len(), |i| at + i);
        out.push_str(&rest[..start]);
        out.push_str("$RUN");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `cells/003-r1` as `cells/CELL`.
fn cell_dirs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("cells/") {
        out.push_str(&rest[..at + "cells/".len()]);
        rest = &rest[at + "cells/".len()..];
        let end = rest.find('/').unwrap_or(rest.len());
        let name = &rest[..end];
        let is_cell = name.split_once("-r").is_some_and(|(n, r)| {
            !n.is_empty()
                && n.chars().all(|c| c.is_ascii_digit())
                && !r.is_empty()
                && r.chars().all(|c| c.is_ascii_digit())
        });
        if is_cell {
            out.push_str("CELL");
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out
}

/// `herd-1234-7` (a namespace's tag) as `herd-PID-N`.
fn namespaces(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("herd-") {
        out.push_str(&rest[..at + "herd-".len()]);
        rest = &rest[at + "herd-".len()..];
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let pid = digits(rest);
        if pid > 0 && rest[pid..].starts_with('-') {
            let n = digits(&rest[pid + 1..]);
            if n > 0 {
                out.push_str("PID-N");
                rest = &rest[pid + 1 + n..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_own_choices_read_as_words() {
        let argv = [
            "/usr/bin/herd",
            "run",
            "http://127.0.0.1:41234/sizes/6397.html",
            "--json=/tmp/herd-lab-4242-3/cells/003-r1/client/run.json",
        ]
        .map(String::from);
        assert_eq!(port_of(&argv), Some(41234));
        let norm: Vec<String> = argv.iter().map(|a| normalize(a, Some(41234))).collect();
        assert_eq!(
            norm,
            [
                "/usr/bin/herd",
                "run",
                "http://127.0.0.1:$PORT/sizes/6397.html",
                "--json=$RUN/cells/CELL/client/run.json"
            ]
        );
        let conf = "listen 127.0.0.1:41234;\nroot \"/tmp/herd-lab-4242-3/www\";\nsize 412345;\n\
                    netns herd-4242-3-server\n";
        assert_eq!(
            normalize(conf, Some(41234)),
            "listen 127.0.0.1:$PORT;\nroot \"$RUN/www\";\nsize 412345;\nnetns herd-PID-N-server\n"
        );
    }

    /// Which backend herd's client measured with is listed as a version is: where two runs
    /// differ (auto took io_uring on one machine, epoll on another), not a new definition.
    #[test]
    fn the_clients_backend_differs_as_a_version_does() {
        let record = |backend: Option<&str>| herd_store::RepetitionRecord {
            cell_key: "load=c1".into(),
            axes: Vec::new(),
            control_of: None,
            repetition: 0,
            position: 0,
            started_at: String::new(),
            finished_at: String::new(),
            outcome: herd_store::Outcome::Ok,
            client: herd_store::ClientRecord {
                tool: "herd".into(),
                version: "0.1.0".into(),
                argv: vec!["herd".into(), "run".into()],
                cpus: None,
                judgement: None,
                health: None,
                io: backend.map(|b| herd_store::ClientIo { backend: b.into(), fallback: None }),
                trace_id: None,
            },
            servers: Vec::new(),
            server_cpu_seconds: None,
            time_wait_before: None,
            drain_seconds: 0.0,
            network: None,
            measurements: Vec::new(),
        };
        let (a, b) =
            (Definition::of(&record(Some("epoll"))), Definition::of(&record(Some("io_uring"))));
        assert_eq!(a.versions, ["client herd 0.1.0", "client I/O epoll"]);
        let d = Differences::between(&a, &b);
        assert_eq!(d.versions, ["only A ran client I/O epoll", "only B ran client I/O io_uring"]);
        assert!(d.load.is_empty() && d.client.is_empty(), "{d:?}");
        assert_eq!(Definition::of(&record(None)).versions, ["client herd 0.1.0"]);
    }

    #[test]
    fn differences_are_said_by_part() {
        let def = |argv: &[&str], conf: &str| Definition {
            client: "herd".into(),
            versions: vec!["client herd 0.1.0".into()],
            client_argv: argv.iter().map(|a| a.to_string()).collect(),
            servers: vec!["nginx: /usr/sbin/nginx `nginx -c $RUN/n.conf`".into()],
            configs: vec![("$RUN/n.conf".into(), conf.into())],
        };
        let a = def(&["herd", "run", "-c", "8", "--no-keep-alive"], "a\nkeepalive 100;\n");
        let same = Differences::between(&a, &a.clone());
        assert_eq!(same, Differences::default());
        let b = def(&["herd", "run", "-c", "8"], "a\nkeepalive 1000;\n");
        let d = Differences::between(&a, &b);
        assert_eq!(
            d.load,
            ["client command line: A has `--no-keep-alive`, B has nothing of its own"]
        );
        assert_eq!(d.configs, ["$RUN/n.conf: line 2: A `keepalive 100;`, B `keepalive 1000;`"]);
        assert!(d.client.is_empty() && d.servers.is_empty());
        // Comparing loads, the command line may differ; the config may not.
        assert_eq!(d.beyond(&["load"]), d.configs);
        assert_eq!(d.beyond(&["server"]), d.load);
        assert!(d.beyond(&["protocol"]).is_empty());
        assert_eq!(d.beyond(&[]).len(), 2);
        // A new version alone is listed, and no difference of definition.
        let newer = Definition { versions: vec!["client herd 0.2.0".into()], ..a.clone() };
        let d = Differences::between(&a, &newer);
        assert!(d.beyond(&[]).is_empty(), "{d:?}");
        assert_eq!(d.versions, ["only A ran client herd 0.1.0", "only B ran client herd 0.2.0"]);
    }
}
