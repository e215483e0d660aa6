//! [`VersionProbe`]: how to ask a program for its version and read the answer, so that every
//! result records exactly which server build it measured. The parse functions live with their
//! drivers; this file holds the type and the small text helpers they share.

use std::ffi::OsString;

/// Runs `argv` and reads the version from what it printed.
#[derive(Debug, Clone)]
pub struct VersionProbe {
    /// [`Program::name`](crate::Program::name).
    pub program: String,
    pub argv: Vec<OsString>,
    /// Gets stdout and stderr concatenated (some programs print their version on stderr);
    /// returns e.g. `nginx/1.22.1`, `Apache/2.4.66 (Debian)`, `PHP 8.2.36 (fpm-fcgi)`, or
    /// `None` when the output has no version in the expected form.
    pub parse: fn(&str) -> Option<String>,
}

impl VersionProbe {
    /// The program named `program` ([`Program::name`](crate::Program::name)), found at `exe`,
    /// asked with the one argument `flag` (`-v`, `--version`). By name, not by `Program`, so
    /// that this file stays below the program table (programs.rs and the specs it reads).
    pub(crate) fn new(
        program: &str,
        exe: impl Into<OsString>,
        flag: &str,
        parse: fn(&str) -> Option<String>,
    ) -> VersionProbe {
        VersionProbe { program: program.to_owned(), argv: vec![exe.into(), flag.into()], parse }
    }
}

/// The first whitespace-separated word that starts with `prefix` and has a digit right after
/// it: `word_with_prefix("nginx version: nginx/1.22.1", "nginx/")` is `nginx/1.22.1`.
pub(crate) fn word_with_prefix<'a>(output: &'a str, prefix: &str) -> Option<&'a str> {
    output.split_whitespace().find(|w| {
        w.strip_prefix(prefix).is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// The word after `marker` when it starts with a digit: `word_after("h2o version 2.2.5",
/// "h2o version")` is `2.2.5`.
pub(crate) fn word_after<'a>(output: &'a str, marker: &str) -> Option<&'a str> {
    let (_, rest) = output.split_once(marker)?;
    rest.split_whitespace().next().filter(|w| w.starts_with(|c: char| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_asks_the_program_with_one_flag() {
        let p = VersionProbe::new(crate::NGINX.name, "/usr/sbin/nginx", "-v", |_| None);
        assert_eq!(p.program, "nginx");
        assert_eq!(p.argv, ["/usr/sbin/nginx", "-v"]);
    }

    #[test]
    fn helpers() {
        assert_eq!(
            word_with_prefix("nginx version: nginx/1.22.1\n", "nginx/"),
            Some("nginx/1.22.1")
        );
        assert_eq!(word_with_prefix("nginx/ x", "nginx/"), None);
        assert_eq!(word_after("h2o version 2.2.5\nOpenSSL", "h2o version"), Some("2.2.5"));
        assert_eq!(word_after("h2o version unknown", "h2o version"), None);
        assert_eq!(word_after("", "h2o version"), None);
    }
}
