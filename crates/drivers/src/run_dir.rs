//! Where a server's files go and how paths are written into config files. Every driver uses
//! the same layout under its run_dir:
//!
//! ```text
//! conf/   config files                    logs/  error logs, <process>.out (stdout+stderr)
//! run/    pid files, sockets, mutexes     tmp/   request bodies and other temporary files
//! tls/    a TLS listener's certificate, key and CA (crate::tls)
//! ```
//!
//! [`Places`] checks the run_dir, the docroot and the user once, so that drivers can paste
//! them into nginx, Apache, lighttpd, h2o (YAML) and php-fpm (ini) syntax without quoting
//! rules of their own: a path must be absolute, UTF-8, and made of characters none of those
//! languages gives a meaning to.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::DriverError;
use crate::launch::ProcessSpec;
use crate::spec::ServerSpec;

/// The checked places of one spec.
#[derive(Debug)]
pub(crate) struct Places {
    run_dir: PathBuf,
    run_text: String,
    /// The docroot as config text, without a trailing slash; empty for a program that serves
    /// no files (a proxy on the router).
    pub(crate) docroot: String,
    /// The user, checked to be a plain name.
    pub(crate) user: Option<String>,
}

impl Places {
    pub(crate) fn new(spec: &ServerSpec) -> Result<Places, DriverError> {
        let docroot = conf_path("docroot", &spec.docroot)?;
        Ok(Places { docroot, ..Places::for_run_dir(&spec.run_dir, spec.user.as_deref())? })
    }

    /// The places of a program with no docroot (a proxy on the router).
    pub(crate) fn for_run_dir(run_dir: &Path, user: Option<&str>) -> Result<Places, DriverError> {
        let run_text = conf_path("run_dir", run_dir)?;
        if let Some(user) = user {
            check_user(user)?;
        }
        Ok(Places {
            run_dir: PathBuf::from(&run_text),
            run_text,
            docroot: String::new(),
            user: user.map(str::to_owned),
        })
    }

    /// The run_dir as config text, without a trailing slash.
    pub(crate) fn run(&self) -> &str {
        &self.run_text
    }

    /// `run_dir/rel`.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.run_dir.join(rel)
    }

    /// `run_dir/rel` as config text (`rel` is one of the drivers' own constant names).
    pub(crate) fn text(&self, rel: &str) -> String {
        if self.run_text == "/" {
            format!("/{rel}")
        } else {
            format!("{}/{rel}", self.run_text)
        }
    }

    /// The layout's directories that `names` lists (`conf`, `logs`, `run`, `tmp`, or deeper).
    pub(crate) fn dirs(&self, names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(|n| self.path(n)).collect()
    }

    /// A process whose output goes to `logs/<name>.out`, stopped by SIGTERM.
    pub(crate) fn process(&self, name: &str, argv: Vec<OsString>) -> ProcessSpec {
        ProcessSpec {
            name: name.to_owned(),
            argv,
            env: Vec::new(),
            ready: None,
            log: self.path(&format!("logs/{name}.out")),
            stop_signal: libc::SIGTERM,
            detached: Vec::new(),
        }
    }
}

/// `path` as text for a config file: absolute, UTF-8, made of safe characters only, without
/// a trailing slash (except `/` itself).
pub(crate) fn conf_path(what: &'static str, path: &Path) -> Result<String, DriverError> {
    let Some(text) = path.to_str() else {
        return Err(DriverError::PathNotUtf8 { what, path: path.to_owned() });
    };
    if !path.is_absolute() {
        return Err(DriverError::RelativePath { what, path: path.to_owned() });
    }
    if let Some(ch) = text.chars().find(|&c| !is_safe(c)) {
        return Err(DriverError::UnsafePath { what, path: path.to_owned(), ch });
    }
    let trimmed = text.trim_end_matches('/');
    Ok(if trimmed.is_empty() { "/".to_owned() } else { trimmed.to_owned() })
}

/// Letters (any script), digits and `/ . _ - + @ , = : ~`. Left out on purpose: quotes and
/// backslashes (every language), `$` (nginx and Apache variables), `;` `{` `}` `#` (nginx,
/// comments everywhere), `*` `?` `[` `]` (Apache's wildcard `<Directory>`), `%` and blanks.
fn is_safe(c: char) -> bool {
    c.is_alphanumeric() || "/._-+@,=:~".contains(c)
}

fn check_user(user: &str) -> Result<(), DriverError> {
    let plain = !user.is_empty()
        && !user.starts_with('-')
        && user.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if plain {
        Ok(())
    } else {
        Err(DriverError::UnsafeUser { user: user.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str) -> Result<String, DriverError> {
        conf_path("docroot", Path::new(path))
    }

    #[test]
    fn safe_paths_pass_without_trailing_slash() {
        assert_eq!(check("/tmp/herd-lab.x1/run_dir/").unwrap(), "/tmp/herd-lab.x1/run_dir");
        assert_eq!(check("/srv/www-1/été").unwrap(), "/srv/www-1/été");
        assert_eq!(check("/").unwrap(), "/");
    }

    #[test]
    fn unsafe_paths_are_refused() {
        assert!(matches!(check("docroot"), Err(DriverError::RelativePath { .. })));
        for (path, ch) in [
            ("/a b", ' '),
            ("/a\"b", '"'),
            ("/a$b", '$'),
            ("/a;b", ';'),
            ("/a{b", '{'),
            ("/a#b", '#'),
            ("/a*b", '*'),
            ("/a\nb", '\n'),
            ("/a\\b", '\\'),
        ] {
            match check(path) {
                Err(DriverError::UnsafePath { ch: got, .. }) => assert_eq!(got, ch, "{path:?}"),
                other => panic!("{path:?}: {other:?}"),
            }
        }
        let err = check("/a b").unwrap_err().to_string();
        assert!(err.starts_with("docroot \"/a b\" contains ' '"), "{err}");
    }

    #[test]
    fn non_utf8_is_refused() {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"/a\xffb"));
        assert!(matches!(conf_path("run_dir", path), Err(DriverError::PathNotUtf8 { .. })));
    }

    #[test]
    fn users() {
        assert!(check_user("www-data").is_ok());
        assert!(check_user("debian-h2o").is_ok());
        for bad in ["", "-x", "a b", "a\"", "a;b", "a$"] {
            assert!(matches!(check_user(bad), Err(DriverError::UnsafeUser { .. })), "{bad:?}");
        }
    }
}
