//! How to ask each tool its version, and what to read in the answer, so that every result
//! records the exact client that produced it. Each tool has its own way: `herd --version`,
//! `ab -V`, `h2load --version`, and `wrk -v`, which prints its version and usage and exits
//! with status 1 (do not treat that as a failure).

use std::ffi::OsString;
use std::path::Path;

use super::Tool;

/// The command line that prints `tool`'s version (program first). Its stdout and stderr
/// together go to [`parse_version`]; wrk exits 1 after printing it.
pub fn version_argv(tool: Tool, program: &Path) -> Vec<OsString> {
    let flag = match tool {
        Tool::Herd => "--version",
        Tool::Ab => "-V",
        Tool::Wrk => "-v",
        Tool::H2load => "--version",
        Tool::Smbtorture => return smbtorture_version_argv(program),
        // It has no version flag; its help starts `dbench version 4.00 - …`.
        Tool::Tbench => "--help",
    };
    vec![program.as_os_str().to_owned(), flag.into()]
}

/// The version in `output`: `0.1.0` from `herd 0.1.0`; `2.3` from ab's `This is
/// ApacheBench, Version 2.3 <$Revision: 1903618 $>` (`2.3 r1903618` when the revision is a
/// number; Debian's build prints a bare `$Revision$`); `debian/4.1.0-3+b2` from wrk's
/// `wrk debian/4.1.0-3+b2 [epoll] Copyright (C) 2012 Will Glozer`; `1.52.0` from h2load's
/// `h2load nghttp2/1.52.0`. None when the output is not the tool's.
pub fn parse_version(tool: Tool, output: &str) -> Option<String> {
    match tool {
        Tool::Herd => {
            output.lines().find_map(|l| l.trim().strip_prefix("herd ")).map(str::to_owned)
        }
        Tool::Ab => {
            let rest = output.lines().find_map(|l| l.split_once("ApacheBench, Version "))?.1;
            let version = rest.split_whitespace().next()?;
            let revision = rest
                .split_once("$Revision:")
                .and_then(|(_, r)| r.split_whitespace().next())
                .filter(|r| r.bytes().all(|b| b.is_ascii_digit()));
            Some(match revision {
                Some(r) => format!("{version} r{r}"),
                None => version.to_owned(),
            })
        }
        Tool::Wrk => output
            .lines()
            .find_map(|l| l.strip_prefix("wrk "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_owned),
        Tool::H2load => output
            .lines()
            .find_map(|l| l.trim().strip_prefix("h2load nghttp2/"))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_owned),
        Tool::Smbtorture => parse_smbtorture_version(output),
        Tool::Tbench => output
            .lines()
            .find_map(|l| l.trim().strip_prefix("dbench version "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(|v| format!("dbench {v}")),
    }
}

/// The command line that prints smbtorture's version: `smbtorture --version`, which prints
/// `Version 4.17.12-Debian` and exits 0. ([`Tool::Smbtorture`] runs NBENCH, not
/// HTTP), so it has its own pair of functions.
pub fn smbtorture_version_argv(program: &Path) -> Vec<OsString> {
    vec![program.as_os_str().to_owned(), "--version".into()]
}

/// The version in smbtorture's output: `4.17.12-Debian` from `--version`'s `Version
/// 4.17.12-Debian`, or from `smbtorture 4.17.12-Debian`, the first line of every run. None
/// when the output is not smbtorture's.
pub fn parse_smbtorture_version(output: &str) -> Option<String> {
    output
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("Version ").or_else(|| l.strip_prefix("smbtorture ")))
        .and_then(|rest| rest.split_whitespace().next())
        .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_per_tool() {
        let p = Path::new("/usr/bin/x");
        assert_eq!(version_argv(Tool::Herd, p), ["/usr/bin/x", "--version"]);
        assert_eq!(version_argv(Tool::Ab, p), ["/usr/bin/x", "-V"]);
        assert_eq!(version_argv(Tool::Wrk, p), ["/usr/bin/x", "-v"]);
        assert_eq!(version_argv(Tool::H2load, p), ["/usr/bin/x", "--version"]);
    }

    #[test]
    fn versions_as_the_tools_print_them() {
        // Captured on Debian 12 (apache2-utils 2.4, wrk 4.1.0-3+b2) and from herd itself.
        let ab = "This is ApacheBench, Version 2.3 <$Revision$>\n\
                  Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n";
        assert_eq!(parse_version(Tool::Ab, ab).as_deref(), Some("2.3"));
        let upstream_ab = "This is ApacheBench, Version 2.3 <$Revision: 1903618 $>\n";
        assert_eq!(parse_version(Tool::Ab, upstream_ab).as_deref(), Some("2.3 r1903618"));
        let wrk = "wrk debian/4.1.0-3+b2 [epoll] Copyright (C) 2012 Will Glozer\n\
                   Usage: wrk <options> <url>                            \n";
        assert_eq!(parse_version(Tool::Wrk, wrk).as_deref(), Some("debian/4.1.0-3+b2"));
        assert_eq!(parse_version(Tool::Herd, "herd 0.1.0\n").as_deref(), Some("0.1.0"));
        let h2load = "h2load nghttp2/1.52.0\n";
        assert_eq!(parse_version(Tool::H2load, h2load).as_deref(), Some("1.52.0"));
        for tool in Tool::ALL {
            assert_eq!(parse_version(tool, "command not found\n"), None, "{tool}");
        }
    }

    #[test]
    fn smbtorture_version() {
        let p = Path::new("/usr/bin/smbtorture");
        assert_eq!(smbtorture_version_argv(p), ["/usr/bin/smbtorture", "--version"]);
        // Captured on Debian 12 (samba-testsuite 2:4.17.12): `--version`, and a run's first
        // line.
        let v = Some("4.17.12-Debian");
        assert_eq!(parse_smbtorture_version("Version 4.17.12-Debian\n").as_deref(), v);
        let run = "smbtorture 4.17.12-Debian\nUsing seed 1795791798\n";
        assert_eq!(parse_smbtorture_version(run).as_deref(), v);
        assert_eq!(parse_smbtorture_version("\r\nVersion 4.17.12-Debian\r\n").as_deref(), v);
        for other in ["", "command not found\n", "Version \n", "smbtorture: unknown option\n"] {
            assert_eq!(parse_smbtorture_version(other), None, "{other:?}");
        }
    }
}
