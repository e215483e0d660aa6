//! What a repetition's server command lines and configuration files have of their own: the
//! directory it ran in and the port its server listened on. Written as placeholders
//! (`<run-dir>`, `<port>`), they let the disclosure show each configuration and command
//! line once, with the repetitions that used it, where the texts as stored differ in every
//! repetition (nginx.conf names its pid file, its logs and its port).
//!
//! Knows nothing of the lab's layout. A repetition's directory is the shallowest directory
//! of the paths its command lines name that no other repetition's name: every repetition's
//! files are under a directory of its own, and what they share (the document root, the
//! program) is not its own. Its port is the one its client's URL names, replaced only where
//! a text gives it as a port (after `:`, `port`, `=` of a port setting, or `-p`), never a
//! number that happens to be equal.

use std::collections::{BTreeMap, BTreeSet};

use herd_store::{RepetitionRecord, StoredExperiment};

/// The placeholder of a repetition's own directory.
pub(crate) const RUN_DIR: &str = "<run-dir>";
/// The placeholder of the port a repetition's server listened on.
pub(crate) const PORT: &str = "<port>";

/// A repetition's own values; none where they cannot be told (a lone repetition has
/// nothing to tell them from).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Own {
    pub(crate) dir: Option<String>,
    pub(crate) port: Option<u16>,
}

/// Every repetition's own values, by its place in the experiment (cell, then repetition, as
/// `exp.cells` holds them).
pub(crate) fn of_experiment(exp: &StoredExperiment) -> Vec<Vec<Own>> {
    let records: Vec<Vec<&RepetitionRecord>> =
        exp.cells.iter().map(|c| c.repetitions.iter().map(|r| &r.record).collect()).collect();
    let dirs: Vec<Vec<BTreeSet<String>>> =
        records.iter().map(|c| c.iter().map(|r| directories(r)).collect()).collect();
    // How many repetitions name each directory.
    let mut named: BTreeMap<&str, usize> = BTreeMap::new();
    for d in dirs.iter().flatten().flatten() {
        *named.entry(d.as_str()).or_default() += 1;
    }
    let alone = records.iter().map(Vec::len).sum::<usize>() < 2;
    records
        .iter()
        .zip(&dirs)
        .map(|(cell, cell_dirs)| {
            cell.iter()
                .zip(cell_dirs)
                .map(|(r, ds)| {
                    if alone {
                        return Own::default();
                    }
                    Own { dir: own_dir(ds, &named), port: client_port(r) }
                })
                .collect()
        })
        .collect()
}

impl Own {
    /// `text` with this repetition's own values as placeholders.
    pub(crate) fn generalise(&self, text: &str) -> String {
        let mut out = match &self.dir {
            Some(dir) => replace_dir(text, dir),
            None => text.to_owned(),
        };
        if let Some(port) = self.port {
            out = replace_port(&out, port, PORT);
        }
        out
    }

    /// What the placeholders stand for in this repetition (`<run-dir> = /tmp/…`), if any.
    pub(crate) fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(dir) = &self.dir {
            parts.push(format!("{RUN_DIR} = {dir}"));
        }
        if let Some(port) = self.port {
            parts.push(format!("{PORT} = {port}"));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// Of a repetition's directories `ds`, the shallowest that no other repetition names (its
/// own, `named` once): where several are (its files in two places), the one that holds
/// most of the others.
fn own_dir(ds: &BTreeSet<String>, named: &BTreeMap<&str, usize>) -> Option<String> {
    let own: Vec<&String> = ds.iter().filter(|d| named.get(d.as_str()) == Some(&1)).collect();
    let under = |d: &str, of: &str| d.strip_prefix(of).is_some_and(|r| r.starts_with('/'));
    let shallowest = own.iter().filter(|d| !own.iter().any(|o| under(d, o)));
    // Ties go to the first in order: the same store gives the same page.
    let mut best: Option<(&String, usize)> = None;
    for d in shallowest {
        let holds = own.iter().filter(|o| under(o, d)).count();
        if best.is_none_or(|(_, n)| holds > n) {
            best = Some((d, holds));
        }
    }
    best.map(|(d, _)| d.clone())
}

/// The directories (not the paths themselves) of every absolute path the repetition's
/// command lines name, the client's and the servers'.
fn directories(r: &RepetitionRecord) -> BTreeSet<String> {
    let argv = r.client.argv.iter().chain(r.servers.iter().flat_map(|s| &s.argv));
    let mut dirs = BTreeSet::new();
    for arg in argv {
        // `/a/b`, or an option's value: `--json=/a/b`.
        let path = match arg.split_once("=/") {
            Some((_, rest)) if !arg.starts_with('/') => format!("/{rest}"),
            _ if arg.starts_with('/') => arg.clone(),
            _ => continue,
        };
        let mut end = 0;
        while let Some(slash) = path[end + 1..].find('/') {
            end += 1 + slash;
            dirs.insert(path[..end].to_owned());
        }
    }
    dirs
}

/// The port of the first URL in the client's command line.
fn client_port(r: &RepetitionRecord) -> Option<u16> {
    crate::run_definition::port_of(&r.client.argv)
}

/// `text` with `dir` replaced where it is a whole directory: followed by `/` or by what
/// ends a path, never as the start of a longer name (`/x/r1` in `/x/r10`).
fn replace_dir(text: &str, dir: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(dir) {
        let after = &rest[at + dir.len()..];
        let whole = after.chars().next().is_none_or(|c| !is_name_char(c));
        out.push_str(&rest[..at]);
        out.push_str(if whole { RUN_DIR } else { dir });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A character that continues a file name.
fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || "-_.".contains(c)
}

/// `text` with `port` replaced by `with` where the text gives it as a port, as a whole number
/// (the comparison's definitions use it too, with the dry run's `$PORT`).
pub(crate) fn replace_port(text: &str, port: u16, with: &str) -> String {
    let digits = port.to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&digits) {
        let (before, after) = (&rest[..at], &rest[at + digits.len()..]);
        let whole = !before.ends_with(|c: char| c.is_ascii_digit())
            && !after.starts_with(|c: char| c.is_ascii_digit());
        out.push_str(before);
        out.push_str(if whole && given_as_port(&out) { with } else { &digits });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Whether what precedes a number makes it a port: `host:`, `port:`, `port =`, `Port `,
/// `-p `.
fn given_as_port(before: &str) -> bool {
    let b = before.trim_end_matches([' ', '\t']);
    if b.ends_with(':') && !b.ends_with("::") {
        return true;
    }
    let b = b.strip_suffix('=').unwrap_or(b).trim_end_matches([' ', '\t']);
    let word = b.rsplit(|c: char| c.is_whitespace() || c == '.').next().unwrap_or("");
    let word = word.to_ascii_lowercase();
    word.ends_with("port") || word.ends_with("ports") || word == "-p"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(dir: &str, port: u16) -> Own {
        Own { dir: Some(dir.into()), port: Some(port) }
    }

    #[test]
    fn a_repetitions_directory_and_port_become_placeholders() {
        let o = own("/tmp/lab/cells/000-r0", 19539);
        let conf = "pid /tmp/lab/cells/000-r0/nginx/run/nginx.pid;\n\
                    listen 127.0.0.1:19539;\nroot /tmp/lab/www;\nworker_connections 19539;";
        assert_eq!(
            o.generalise(conf),
            "pid <run-dir>/nginx/run/nginx.pid;\nlisten 127.0.0.1:<port>;\nroot /tmp/lab/www;\n\
             worker_connections 19539;"
        );
        // A longer name that starts with the directory's is another directory.
        assert_eq!(o.generalise("/tmp/lab/cells/000-r01/x"), "/tmp/lab/cells/000-r01/x");
        assert_eq!(o.generalise("-c /tmp/lab/cells/000-r0"), "-c <run-dir>");
    }

    #[test]
    fn ports_are_told_by_what_names_them() {
        let o = Own { dir: None, port: Some(8080) };
        for (text, want) in [
            ("server.port = 8080", "server.port = <port>"),
            ("  port: 8080", "  port: <port>"),
            ("smb ports = 8080", "smb ports = <port>"),
            ("http://:8080 {", "http://:<port> {"),
            ("mini_httpd -D -p 8080 -h 127.0.0.1", "mini_httpd -D -p <port> -h 127.0.0.1"),
            ("Listen 127.0.0.1:8080", "Listen 127.0.0.1:<port>"),
            ("--listen=127.0.0.1:8080", "--listen=127.0.0.1:<port>"),
            ("keepalive 8080; 18080 80801 :80800", "keepalive 8080; 18080 80801 :80800"),
        ] {
            assert_eq!(o.generalise(text), want, "{text}");
        }
    }

    #[test]
    fn what_each_placeholder_stands_for_is_said() {
        assert_eq!(own("/r", 1).describe().as_deref(), Some("<run-dir> = /r, <port> = 1"));
        assert_eq!(Own::default().describe(), None);
    }
}
