//! `[servers.NAME] config = "my-nginx.conf"`: a user's own config file in place of the one the
//! driver writes, with herd's placeholders for what each run sets — `{{listen}}` (address and
//! port), `{{address}}`, `{{port}}`, `{{docroot}}`, `{{dir}}` (the server's own directory:
//! pid file, logs, temporary files), `{{cert}}` and `{{key}}` over TLS, `{{user}}` (whom
//! workers run as, when the lab runs as root) and `{{workers}}`. The driver still renders its
//! launch (command line, probes, certificate); only the config file its server reads is the
//! user's, filled in. The file is read and its placeholders checked when the experiment is;
//! the server's own config test (`nginx -t` …) judges it before any run (preflight). The
//! table's `keepalive_requests` and `sendfile` are not placeholders: beside `config` they are
//! refused (the file decides them).

use std::path::{Path, PathBuf};

use herd_drivers::{render, Launch, ServerSpec};

/// A user's config file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserConfig {
    pub path: PathBuf,
    pub text: String,
}

/// Every placeholder, in the order the docs list them.
pub const PLACEHOLDERS: [&str; 9] =
    ["listen", "address", "port", "docroot", "dir", "cert", "key", "user", "workers"];

impl UserConfig {
    /// Reads `path` and checks its placeholders: each a known one, and the listen address
    /// given (`{{listen}}` or `{{port}}`), or the server would not listen where herd asks.
    pub fn read(path: &Path) -> Result<UserConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let used = placeholders(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if !used.iter().any(|p| p == "listen" || p == "port") {
            return Err(format!(
                "{}: has neither {{{{listen}}}} nor {{{{port}}}}: the server must listen where \
                 each run says",
                path.display()
            ));
        }
        Ok(UserConfig { path: path.to_path_buf(), text })
    }
}

/// The placeholders `text` uses, each checked; the first unknown or unclosed one is an error
/// with its line.
fn placeholders(text: &str) -> Result<Vec<String>, String> {
    let mut used = Vec::new();
    fill(text, |name| {
        used.push(name.to_owned());
        Ok(String::new())
    })?;
    Ok(used)
}

/// `text` with each `{{name}}` replaced by `value(name)`: the one scanner that checks a file
/// when it is read and fills it for each run. A name not in [`PLACEHOLDERS`], a `{{` left
/// open, or `value`'s own error is an error with its line.
fn fill(
    text: &str,
    mut value: impl FnMut(&str) -> Result<String, String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("{{") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let Some(end) = after.find("}}") else {
                return Err(format!("line {}: `{{{{` without `}}}}`", n + 1));
            };
            let name = after[..end].trim();
            if !PLACEHOLDERS.contains(&name) {
                return Err(format!(
                    "line {}: unknown placeholder {{{{{name}}}}}: use {}",
                    n + 1,
                    PLACEHOLDERS.map(|p| format!("{{{{{p}}}}}")).join(", ")
                ));
            }
            out.push_str(&value(name).map_err(|e| format!("line {}: {e}", n + 1))?);
            rest = &after[end + 2..];
        }
        out.push_str(rest);
    }
    Ok(out)
}

/// The launch of `spec` as its driver renders it, with `config`, filled in, as the config
/// file its front server reads.
pub fn render_with(spec: &ServerSpec, config: Option<&UserConfig>) -> Result<Launch, String> {
    let mut launch = render(spec).map_err(|e| herd_stats::with_causes(&e))?;
    let Some(config) = config else { return Ok(launch) };
    // experiment::parse refuses these beside `config` at their line; the file would drop them.
    if spec.keepalive_requests.is_some() || spec.sendfile.is_some() {
        return Err("keepalive_requests and sendfile are not rendered into your own config \
             file: set them there"
            .to_owned());
    }
    let front = launch.processes.last().ok_or("the driver starts no process")?;
    let reads =
        |f: &&mut herd_drivers::RenderedFile| front.argv.iter().any(|a| Path::new(a) == f.path);
    let tls = |name: &str| {
        launch.tls.as_ref().and_then(|t| {
            t.files.iter().map(|f| &f.path).find(|p| p.file_name().is_some_and(|n| n == name))
        })
    };
    let value = |name: &str| -> Result<String, String> {
        Ok(match name {
            "listen" => spec.listen.to_string(),
            "address" => spec.listen.ip().to_string(),
            "port" => spec.listen.port().to_string(),
            "docroot" => spec.docroot.display().to_string(),
            "dir" => spec.run_dir.display().to_string(),
            "cert" | "key" => {
                tls(&format!("{name}.pem")).map(|p| p.display().to_string()).ok_or_else(|| {
                    format!("{{{{{name}}}}} is for a protocol over TLS, not {}", spec.protocol)
                })?
            }
            "user" => spec.user.clone().unwrap_or_default(),
            "workers" => spec.workers.map(|w| w.to_string()).unwrap_or_else(|| "auto".to_owned()),
            // `fill` passes known names only.
            other => return Err(format!("{{{{{other}}}}} has no value")),
        })
    };
    let mut filled = fill(&config.text, value)?;
    let kind = spec.kind;
    if kind == herd_drivers::ServerKind::Nginx {
        filled = in_foreground(filled)?;
    }
    let file = launch.files.iter_mut().find(reads).ok_or_else(|| {
        format!("{kind} is started with no config file of its own: `config` has none to replace")
    })?;
    file.contents = filled;
    Ok(launch)
}

/// nginx started by the lab must stay its child (the lab stops it by PID, and takes an exit
/// for a failure): a config without a `daemon` directive gets `daemon off;` first, as the
/// driver's own config has it; one that asks for `daemon on` is refused.
fn in_foreground(config: String) -> Result<String, String> {
    let daemon = config.lines().map(str::trim).find(|l| {
        l.strip_prefix("daemon").is_some_and(|rest| rest.starts_with(char::is_whitespace))
    });
    match daemon {
        None => Ok(format!("daemon off; # herd: the lab keeps nginx in the foreground\n{config}")),
        Some(line) if line.trim_end_matches(';').split_whitespace().nth(1) == Some("off") => {
            Ok(config)
        }
        Some(line) => Err(format!(
            "`{line}`: the lab keeps nginx in the foreground, its child, to stop it by PID: \
             remove the daemon directive, or say `daemon off;`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_known_ones_with_their_line() {
        assert_eq!(
            placeholders("listen {{listen}};\nroot {{ docroot }};").unwrap(),
            ["listen", "docroot"]
        );
        assert_eq!(
            placeholders("a\nlisten {{lisen}};").unwrap_err(),
            "line 2: unknown placeholder {{lisen}}: use {{listen}}, {{address}}, {{port}}, \
             {{docroot}}, {{dir}}, {{cert}}, {{key}}, {{user}}, {{workers}}"
        );
        assert_eq!(placeholders("x {{port").unwrap_err(), "line 1: `{{` without `}}`");
        assert!(placeholders("server { location / { } }").unwrap().is_empty());
    }

    #[test]
    fn filling_replaces_each_placeholder_and_keeps_the_rest() {
        let v = |n: &str| Ok(if n == "port" { "8080".to_owned() } else { format!("<{n}>") });
        assert_eq!(
            fill("listen {{port}};\nroot {{ docroot }}; # {x}\n", v).unwrap(),
            "listen 8080;\nroot <docroot>; # {x}\n"
        );
        let no_tls = |_: &str| Err("{{cert}} is for a protocol over TLS, not h1".to_owned());
        assert_eq!(
            fill("a\nssl_certificate {{cert}};", no_tls).unwrap_err(),
            "line 2: {{cert}} is for a protocol over TLS, not h1"
        );
    }

    #[test]
    fn nginx_stays_in_the_foreground() {
        assert!(in_foreground("events {}\n".into()).unwrap().starts_with("daemon off;"));
        assert_eq!(
            in_foreground("daemon off;\nevents {}\n".into()).unwrap(),
            "daemon off;\nevents {}\n"
        );
        assert!(in_foreground("  daemon on;\n".into()).unwrap_err().contains("`daemon on;`"));
        // `daemon_x` is not the directive.
        assert!(in_foreground("daemonic x;\n".into()).unwrap().starts_with("daemon off;"));
    }
}
