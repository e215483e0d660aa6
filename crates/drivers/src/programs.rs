//! The programs the drivers start: each [`Program`] with where Debian installs it and which
//! package brings it ([`Install`]; thttpd, which Debian 12 lacks, is built by
//! `scripts/build-thttpd.sh` into the cargo target directory, beside herd's own executable),
//! [`programs_needed`] for a server and PHP setup, and [`Programs`], the located absolute
//! paths a [`ServerSpec`](crate::ServerSpec) carries. Locating is the only thing in this crate
//! that looks at the file system; nothing here runs a program.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::DriverError;
use crate::spec::{php_choices, Php, ServerKind};

/// A program a driver starts or asks for its version.
#[derive(Debug, PartialEq, Eq)]
pub struct Program {
    /// The key in [`Programs`], and the program's name in messages.
    pub name: &'static str,
    /// Absolute paths to try, in order, after `beside_herd`. Empty for `herd`, which is the
    /// lab's own executable.
    pub candidates: &'static [&'static str],
    /// Paths relative to the directory of herd's executable, tried first: where this
    /// checkout's scripts build what Debian does not package (`../peers/bin/thttpd` is
    /// target/peers/bin/thttpd beside target/release/herd and target/debug/herd).
    pub beside_herd: &'static [&'static str],
    /// How to get it where it is missing.
    pub install: Install,
}

/// How to get a missing program: what its [`DriverError::ProgramMissing`] message says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// The Debian package that installs it.
    Apt(&'static str),
    /// The script in herd's source tree that builds it (Debian 12 does not package it).
    Build(&'static str),
}

impl std::fmt::Display for Install {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Install::Apt(package) => write!(f, "install it with `apt-get install {package}`"),
            Install::Build(script) => write!(
                f,
                "build it with `{script}` in herd's source tree (Debian 12 does not package it; \
                 scripts/test.sh runs that script too)"
            ),
        }
    }
}

/// `herd serve`: the lab passes its own executable.
pub static HERD: Program =
    Program { name: "herd", candidates: &[], beside_herd: &[], install: Install::Apt("herd") };
pub static NGINX: Program = Program {
    name: "nginx",
    candidates: &["/usr/sbin/nginx"],
    beside_herd: &[],
    install: Install::Apt("nginx-light"),
};
pub static APACHE2: Program = Program {
    name: "apache2",
    candidates: &["/usr/sbin/apache2"],
    beside_herd: &[],
    install: Install::Apt("apache2"),
};
pub static LIGHTTPD: Program = Program {
    name: "lighttpd",
    candidates: &["/usr/sbin/lighttpd"],
    beside_herd: &[],
    install: Install::Apt("lighttpd"),
};
pub static H2O: Program = Program {
    name: "h2o",
    candidates: &["/usr/bin/h2o", "/usr/sbin/h2o"],
    beside_herd: &[],
    install: Install::Apt("h2o"),
};
/// sthttpd 2.27, thttpd's maintained fork, as `scripts/build-thttpd.sh` builds it (into
/// target/peers/bin by default), else where `make install` or a distribution puts thttpd.
pub static THTTPD: Program = Program {
    name: "thttpd",
    candidates: &["/usr/sbin/thttpd", "/usr/local/sbin/thttpd", "/usr/local/bin/thttpd"],
    beside_herd: &["../peers/bin/thttpd"],
    install: Install::Build("scripts/build-thttpd.sh"),
};
pub static CADDY: Program = Program {
    name: "caddy",
    candidates: &["/usr/bin/caddy"],
    beside_herd: &[],
    install: Install::Apt("caddy"),
};
pub static MINI_HTTPD: Program = Program {
    name: "mini_httpd",
    candidates: &["/usr/sbin/mini_httpd"],
    beside_herd: &[],
    install: Install::Apt("mini-httpd"),
};
pub static PHP_FPM: Program = Program {
    name: "php-fpm8.2",
    candidates: &["/usr/sbin/php-fpm8.2"],
    beside_herd: &[],
    install: Install::Apt("php8.2-fpm"),
};
/// `/usr/bin/php-cgi` is Debian's alternatives link; the versioned binary is the fallback.
pub static PHP_CGI: Program = Program {
    name: "php-cgi",
    candidates: &["/usr/bin/php-cgi", "/usr/bin/php-cgi8.2"],
    beside_herd: &[],
    install: Install::Apt("php8.2-cgi"),
};

/// lighttpd's TLS module and the Debian package that brings it: without it lighttpd serves
/// HTTP/1.1 and h2c only (its config check then fails on `mod_openssl`).
pub static LIGHTTPD_TLS_MODULE: (&str, &str) =
    ("/usr/lib/lighttpd/mod_openssl.so", "lighttpd-mod-openssl");

/// Samba's file server, and its config checker (which `samba` depends on).
pub static SMBD: Program = Program {
    name: "smbd",
    candidates: &["/usr/sbin/smbd"],
    beside_herd: &[],
    install: Install::Apt("samba"),
};
pub static TESTPARM: Program = Program {
    name: "testparm",
    candidates: &["/usr/bin/testparm"],
    beside_herd: &[],
    install: Install::Apt("samba-common-bin"),
};

/// dbench's tbench server (the `dbench` package, which also brings the `tbench` client).
pub static TBENCH_SRV: Program = Program {
    name: "tbench_srv",
    candidates: &["/usr/bin/tbench_srv"],
    beside_herd: &[],
    install: Install::Apt("dbench"),
};

/// The router's programs (crate::proxy).
pub static HAPROXY: Program = Program {
    name: "haproxy",
    candidates: &["/usr/sbin/haproxy"],
    beside_herd: &[],
    install: Install::Apt("haproxy"),
};
/// Debian's `/usr/sbin/sslh` is sslh-fork.
pub static SSLH: Program = Program {
    name: "sslh",
    candidates: &["/usr/sbin/sslh"],
    beside_herd: &[],
    install: Install::Apt("sslh"),
};
pub static SSLH_SELECT: Program = Program {
    name: "sslh-select",
    candidates: &["/usr/sbin/sslh-select"],
    beside_herd: &[],
    install: Install::Apt("sslh"),
};

/// Every program a driver may need, for a doctor's check list.
pub static ALL_PROGRAMS: [&Program; 16] = [
    &HERD,
    &NGINX,
    &APACHE2,
    &LIGHTTPD,
    &H2O,
    &MINI_HTTPD,
    &THTTPD,
    &CADDY,
    &PHP_FPM,
    &PHP_CGI,
    &SMBD,
    &TESTPARM,
    &TBENCH_SRV,
    &HAPROXY,
    &SSLH,
    &SSLH_SELECT,
];

/// The programs `kind` with `php` needs: the server, then its PHP program. An unsupported PHP
/// setup adds nothing ([`render`](crate::render) refuses it with the valid choices).
pub fn programs_needed(kind: ServerKind, php: Option<Php>) -> Vec<&'static Program> {
    let server: &'static Program = match kind {
        ServerKind::Herd => &HERD,
        ServerKind::Nginx => &NGINX,
        ServerKind::Apache(_) => &APACHE2,
        ServerKind::Lighttpd => &LIGHTTPD,
        ServerKind::H2o => &H2O,
        ServerKind::MiniHttpd => &MINI_HTTPD,
        ServerKind::Thttpd => &THTTPD,
        ServerKind::Caddy => &CADDY,
        // Its config check is another program's.
        ServerKind::Samba => return vec![&SMBD, &TESTPARM],
        ServerKind::Tbench => &TBENCH_SRV,
        // Not herd's to start.
        ServerKind::External => return Vec::new(),
    };
    let mut needed = vec![server];
    match php {
        Some(php) if php_choices(kind).contains(&php) => needed.push(match php {
            Php::Fpm => &PHP_FPM,
            Php::Cgi => &PHP_CGI,
        }),
        _ => {}
    }
    needed
}

/// Located programs: name → absolute path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Programs {
    paths: BTreeMap<&'static str, PathBuf>,
}

impl Programs {
    /// Finds each program at its first candidate that is an executable file (links followed),
    /// those beside herd's executable first; `herd` is `herd_exe`. The first program with none
    /// is [`DriverError::ProgramMissing`], whose message says where it looked and how to get
    /// the program.
    pub fn locate(needed: &[&'static Program], herd_exe: &Path) -> Result<Programs, DriverError> {
        Programs::locate_with(needed, herd_exe, &is_executable)
    }

    /// [`Programs::locate`] on another machine: `executable` says which paths are
    /// executable files there (a lab's server host, asked over ssh once for every path of
    /// [`Program::candidates_for`]), `herd_exe` is herd's path there.
    pub fn locate_with(
        needed: &[&'static Program],
        herd_exe: &Path,
        executable: &dyn Fn(&Path) -> bool,
    ) -> Result<Programs, DriverError> {
        let mut paths = BTreeMap::new();
        for program in needed {
            let path = if program.candidates.is_empty() && program.beside_herd.is_empty() {
                herd_exe.to_owned()
            } else {
                let looked = candidates(program, herd_exe);
                match looked.iter().find(|p| executable(p)) {
                    Some(path) => path.clone(),
                    None => {
                        return Err(DriverError::ProgramMissing {
                            program: program.name,
                            looked,
                            install: program.install,
                        })
                    }
                }
            };
            paths.insert(program.name, path);
        }
        Ok(Programs { paths })
    }

    /// The path of program `name` ([`Program::name`]), if located.
    pub fn get(&self, name: &str) -> Option<&Path> {
        self.paths.get(name).map(PathBuf::as_path)
    }

    /// These, with program `name` at `path` (a server's `binary` of the user's own choosing).
    pub fn with(mut self, name: &'static str, path: PathBuf) -> Programs {
        self.paths.insert(name, path);
        self
    }

    /// Programs at fixed paths, as given (for golden tests and callers that know better).
    pub fn from_paths(pairs: impl IntoIterator<Item = (&'static str, PathBuf)>) -> Programs {
        Programs { paths: pairs.into_iter().collect() }
    }

    /// The path of `program`, or the error that says it was never located.
    /// `needed_by` names the server or proxy for the message.
    pub(crate) fn path(
        &self,
        program: &Program,
        needed_by: impl std::fmt::Display,
    ) -> Result<&Path, DriverError> {
        self.get(program.name).ok_or_else(|| DriverError::ProgramNotLocated {
            program: program.name,
            needed_by: needed_by.to_string(),
        })
    }
}

/// Where `program` is looked for, in order: beside herd's executable (`herd_exe`'s directory
/// joined with each of `beside_herd`, `..` resolved by hand so that the message shows a plain
/// path), then its absolute candidates.
impl Program {
    /// Every path [`Programs::locate`] would look at for this program, in its order, with
    /// herd at `herd_exe` (empty for herd itself).
    pub fn candidates_for(&self, herd_exe: &Path) -> Vec<PathBuf> {
        candidates(self, herd_exe)
    }
}

fn candidates(program: &Program, herd_exe: &Path) -> Vec<PathBuf> {
    let dir = herd_exe.parent().unwrap_or(Path::new("/"));
    let beside = program.beside_herd.iter().map(|rel| {
        let mut path = dir.to_path_buf();
        for part in Path::new(rel).components() {
            match part {
                std::path::Component::ParentDir => {
                    path.pop();
                }
                other => path.push(other),
            }
        }
        path
    });
    beside.chain(program.candidates.iter().map(PathBuf::from)).collect()
}

fn is_executable(path: &Path) -> bool {
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needed_programs() {
        let names =
            |kind, php| -> Vec<_> { programs_needed(kind, php).iter().map(|p| p.name).collect() };
        assert_eq!(names(ServerKind::Nginx, Some(Php::Fpm)), ["nginx", "php-fpm8.2"]);
        assert_eq!(
            names(ServerKind::Apache(crate::Mpm::Prefork), Some(Php::Cgi)),
            ["apache2", "php-cgi"]
        );
        assert_eq!(names(ServerKind::Herd, None), ["herd"]);
        assert_eq!(names(ServerKind::Samba, None), ["smbd", "testparm"]);
        // Unsupported: render says so; nothing extra is asked for.
        assert_eq!(names(ServerKind::MiniHttpd, Some(Php::Cgi)), ["mini_httpd"]);
    }

    static NOWHERE: Program = Program {
        name: "nowhere",
        candidates: &["/nonexistent/herd-test/nowhere"],
        beside_herd: &[],
        install: Install::Apt("nowhere-pkg"),
    };

    #[test]
    fn missing_program_names_its_package() {
        let err = Programs::locate(&[&NOWHERE], Path::new("/x/herd")).unwrap_err();
        assert!(matches!(err, DriverError::ProgramMissing { program: "nowhere", .. }));
        let msg = err.to_string();
        assert_eq!(
            msg,
            "nowhere is not installed (looked for /nonexistent/herd-test/nowhere): install it \
             with `apt-get install nowhere-pkg`"
        );
        let looked = candidates(&H2O, Path::new("/x/herd"));
        let known = DriverError::ProgramMissing { program: "h2o", looked, install: H2O.install };
        assert_eq!(
            known.to_string(),
            "h2o is not installed (looked for /usr/bin/h2o, /usr/sbin/h2o): install it with \
             `apt-get install h2o`"
        );
    }

    /// thttpd is looked for where scripts/build-thttpd.sh puts it, beside herd's executable,
    /// first; missing, the message says to build it.
    #[test]
    fn thttpd_is_looked_for_beside_herd_first() {
        static THTTPD_NOWHERE: Program =
            Program { candidates: &["/nonexistent/herd-test/sbin/thttpd"], ..THTTPD };
        let herd = Path::new("/nonexistent/herd-test/target/release/herd");
        let err = Programs::locate(&[&THTTPD_NOWHERE], herd).unwrap_err();
        assert_eq!(
            err.to_string(),
            "thttpd is not installed (looked for /nonexistent/herd-test/target/peers/bin/thttpd, \
             /nonexistent/herd-test/sbin/thttpd): build it with `scripts/build-thttpd.sh` in \
             herd's source tree (Debian 12 does not package it; scripts/test.sh runs that script \
             too)"
        );
        assert_eq!(
            candidates(&THTTPD, herd)[..2],
            [
                PathBuf::from("/nonexistent/herd-test/target/peers/bin/thttpd"),
                PathBuf::from("/usr/sbin/thttpd")
            ]
        );

        // Found there: a program built into a target directory of this test's own.
        let dir = std::env::temp_dir().join(format!("herd-programs-{}", std::process::id()));
        let bin = dir.join("target/peers/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("thttpd"), "#!/bin/sh\n").unwrap();
        let exec = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(bin.join("thttpd"), exec).unwrap();
        let p = Programs::locate(&[&THTTPD_NOWHERE], &dir.join("target/debug/herd")).unwrap();
        assert_eq!(p.get("thttpd"), Some(bin.join("thttpd").as_path()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn herd_is_the_given_executable_and_first_candidate_wins() {
        static SH: Program = Program {
            name: "sh",
            candidates: &["/nonexistent/sh", "/bin/sh"],
            beside_herd: &[],
            install: Install::Apt("dash"),
        };
        let p = Programs::locate(&[&HERD, &SH], Path::new("/opt/herd/bin/herd")).unwrap();
        assert_eq!(p.get("herd"), Some(Path::new("/opt/herd/bin/herd")));
        assert_eq!(p.get("sh"), Some(Path::new("/bin/sh")));
        assert_eq!(p.get("nginx"), None);
    }

    #[test]
    fn a_directory_or_plain_file_is_not_a_program() {
        static DIR: Program =
            Program { name: "d", candidates: &["/"], beside_herd: &[], install: Install::Apt("d") };
        static TEXT: Program = Program {
            name: "t",
            candidates: &[concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")],
            beside_herd: &[],
            install: Install::Apt("t"),
        };
        assert!(Programs::locate(&[&DIR], Path::new("/h")).is_err());
        assert!(Programs::locate(&[&TEXT], Path::new("/h")).is_err());
    }
}
