//! `herd lab hosts install`: this very herd binary copied to each host's per-user cache,
//! `~/.cache/herd/herd-<build id>`, and nothing anywhere else (no root, no package, no
//! PATH). The copy is atomic: written to a dot-file beside it, made executable, then renamed,
//! so that a check never sees half a binary. Then it must run there and say this version.
//! A host that has this build already is left as it is.

use std::path::Path;
use std::time::Duration;

use super::check::{check_one, CheckError, Installed};
use super::ssh::Ssh;
use super::{build_id, HostUrl, Role, CACHE_DIR};

/// What happened on one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// Copied, and it runs there as this herd.
    Installed,
    /// The same build was there already.
    AlreadyThere,
}

/// How long one copy may take: a herd binary is tens of MB, over a slow link too.
pub const INSTALL_LIMIT: Duration = Duration::from_secs(600);

/// One host's outcome.
#[derive(Debug)]
pub struct HostInstall {
    pub role: Role,
    pub url: HostUrl,
    pub result: Result<Done, CheckError>,
}

/// Installs `exe` (this herd, whose `--version` is `version`) on every host at once.
pub fn install(
    ssh: &Ssh,
    hosts: &[(Role, &HostUrl)],
    exe: &Path,
    version: &str,
) -> Vec<HostInstall> {
    std::thread::scope(|s| {
        let handles: Vec<_> = hosts
            .iter()
            .map(|&(role, url)| s.spawn(move || (role, url, install_one(ssh, url, exe, version))))
            .collect();
        handles
            .into_iter()
            .zip(hosts)
            .map(|(h, &(role, url))| {
                let result = h.join().map(|(_, _, r)| r).unwrap_or_else(|_| {
                    Err(CheckError::Remote {
                        host: url.to_string(),
                        code: -1,
                        stderr: "the install panicked".into(),
                    })
                });
                HostInstall { role, url: url.clone(), result }
            })
            .collect()
    })
}

/// One host: checked, copied when needed, checked again.
pub fn install_one(
    ssh: &Ssh,
    url: &HostUrl,
    exe: &Path,
    version: &str,
) -> Result<Done, CheckError> {
    if check_one(ssh, url, version)?.installed == Installed::Same {
        return Ok(Done::AlreadyThere);
    }
    let out = ssh.run(url, &["sh", "-c", &script(&build_id(version))], Some(exe), INSTALL_LIMIT)?;
    if out.code != 0 {
        return Err(CheckError::Remote {
            host: url.to_string(),
            code: out.code,
            stderr: out.stderr.trim().to_owned(),
        });
    }
    match check_one(ssh, url, version)?.installed {
        Installed::Same => Ok(Done::Installed),
        other => Err(CheckError::Remote {
            host: url.to_string(),
            code: 0,
            stderr: format!(
                "copied, but the host says {other} (another CPU architecture or C library?)"
            ),
        }),
    }
}

/// The copy, for the host's shell: the binary arrives on standard input. `$$` keeps two
/// installs at once from writing one temporary file.
fn script(id: &str) -> String {
    format!(
        r#"set -e
d="$HOME/{CACHE_DIR}"
mkdir -p "$d"
t="$d/.herd-{id}.tmp.$$"
trap 'rm -f "$t"' EXIT
cat > "$t"
chmod 755 "$t"
mv -f "$t" "$d/herd-{id}"
trap - EXIT"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_lands_whole_and_executable_in_the_cache_alone() {
        let home = std::env::temp_dir().join(format!("herd-install-home-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        let input = home.join("input");
        std::fs::write(&input, b"#!/bin/sh\necho herd\n").unwrap();
        #[allow(clippy::disallowed_methods)] // the script alone, in a shell of the test's
        let out = std::process::Command::new("sh")
            .args(["-c", &script("0.1.0-abc")])
            .env("HOME", &home)
            .stdin(std::fs::File::open(&input).unwrap())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let cache = home.join(CACHE_DIR);
        let names: Vec<String> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["herd-0.1.0-abc"], "no temporary file is left");
        let installed = cache.join("herd-0.1.0-abc");
        assert_eq!(std::fs::read(&installed).unwrap(), std::fs::read(&input).unwrap());
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&installed).unwrap().permissions().mode() & 0o777, 0o755);
        let _ = std::fs::remove_dir_all(&home);
    }
}
