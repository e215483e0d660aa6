//! The files a run reads (`--body-file`, `--urls`, `--specweb`, `--ca-file`, `--cert`),
//! named by their paths on the machine that made the plan. Two things need them as a set:
//! `herd cluster run --ssh` copies each to the agents' hosts and gives every agent the plan
//! with the copies' paths ([`RunPlan::with_files`]), and the agents' config hash compares
//! what each file holds, not where it is ([`content_key`]), so that an agent reading a copy
//! hashes equal to the coordinator and one whose copy differs is still refused.
//!
//! `--specweb DIR` reads one file, the set's manifest ([`file_read`] finds it as the run
//! does); the set's files themselves are the server's, never read by the client.

use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::plan::{Body, RunPlan, Source};

/// The flag that names a file a run reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFlag {
    BodyFile,
    Urls,
    Specweb,
    CaFile,
    Cert,
}

impl ReadFlag {
    /// Its spelling on `herd run`'s command line.
    pub fn flag(self) -> &'static str {
        match self {
            ReadFlag::BodyFile => "--body-file",
            ReadFlag::Urls => "--urls",
            ReadFlag::Specweb => "--specweb",
            ReadFlag::CaFile => "--ca-file",
            ReadFlag::Cert => "--cert",
        }
    }
}

impl RunPlan {
    /// Each file this run reads, with the flag that names it, in [`RunPlan::to_args`]'s
    /// order. `--unix-socket` is not one: a socket is not read, it is connected to.
    pub fn files_read(&self) -> Vec<(ReadFlag, &Path)> {
        let mut files = Vec::new();
        if let Body::File(p) = &self.requests.body {
            files.push((ReadFlag::BodyFile, p.as_path()));
        }
        match &self.requests.source {
            Source::Url => {}
            Source::List(p) => files.push((ReadFlag::Urls, p.as_path())),
            Source::Specweb(p) => files.push((ReadFlag::Specweb, p.as_path())),
        }
        if let Some(p) = &self.tls.ca_file {
            files.push((ReadFlag::CaFile, p.as_path()));
        }
        if let Some(p) = &self.tls.cert {
            files.push((ReadFlag::Cert, p.as_path()));
        }
        files
    }

    /// This plan with each file it reads named `rename(flag, path)` instead.
    pub fn with_files(&self, mut rename: impl FnMut(ReadFlag, &Path) -> PathBuf) -> RunPlan {
        let mut plan = self.clone();
        if let Body::File(p) = &mut plan.requests.body {
            *p = rename(ReadFlag::BodyFile, p);
        }
        match &mut plan.requests.source {
            Source::Url => {}
            Source::List(p) => *p = rename(ReadFlag::Urls, p),
            Source::Specweb(p) => *p = rename(ReadFlag::Specweb, p),
        }
        if let Some(p) = &mut plan.tls.ca_file {
            *p = rename(ReadFlag::CaFile, p);
        }
        if let Some(p) = &mut plan.tls.cert {
            *p = rename(ReadFlag::Cert, p);
        }
        plan
    }
}

/// The file the run reads for `flag` at `path`: `path` itself, or for `--specweb` the
/// manifest found there as the run finds it (an error names the directory and what to give).
pub fn file_read(flag: ReadFlag, path: &Path) -> Result<PathBuf, String> {
    match flag {
        ReadFlag::Specweb => crate::workload::find_manifest(path),
        _ => Ok(path.to_path_buf()),
    }
}

/// What stands for the file of `flag` at `path` in the agents' config hash: a digest of the
/// bytes the run reads there, or, when they cannot be read, the path as given (the run
/// itself then fails reading it, with its own message). SHA-256 because the workspace has it
/// already and it reads a few hundred MB/s; the files are a CA, a body, a list, a manifest.
pub(crate) fn content_key(flag: ReadFlag, path: &Path) -> PathBuf {
    let digest = file_read(flag, path).ok().and_then(|read| digest(&read).ok());
    match digest {
        // Not a path anyone would give: a path cannot be mistaken for a digest.
        Some(d) => PathBuf::from(format!("sha256:{d}")),
        None => path.to_path_buf(),
    }
}

/// The SHA-256 of the file at `path`, in hex, read in parts.
fn digest(path: &Path) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;
    use crate::plan::{Load, Pace, Stop, DEFAULT_DURATION};

    fn plan() -> RunPlan {
        let url = "https://127.0.0.1:1/".parse().expect("a URL");
        let connections = NonZeroU32::new(8).expect("not zero");
        let stop = Stop::After(DEFAULT_DURATION);
        RunPlan::new(url, Load::Single { connections, stop, pace: Pace::Closed { think: None } })
    }

    #[test]
    fn every_file_read_is_listed_and_renamed() {
        let mut p = plan();
        p.requests.body = Body::File("b".into());
        p.requests.source = Source::List("u".into());
        p.tls.ca_file = Some("ca".into());
        p.tls.cert = Some("c".into());
        p.unix_socket = Some("s".into());
        let flags: Vec<_> = p.files_read().into_iter().map(|(f, p)| (f, p.to_owned())).collect();
        let want = [
            (ReadFlag::BodyFile, "b"),
            (ReadFlag::Urls, "u"),
            (ReadFlag::CaFile, "ca"),
            (ReadFlag::Cert, "c"),
        ]
        .map(|(f, p)| (f, PathBuf::from(p)));
        assert_eq!(flags, want);
        let moved = p.with_files(|f, path| Path::new("/there").join(f.flag()).join(path));
        let moved: Vec<_> = moved.files_read().into_iter().map(|(_, p)| p.to_owned()).collect();
        let want = ["--body-file/b", "--urls/u", "--ca-file/ca", "--cert/c"]
            .map(|p| Path::new("/there").join(p));
        assert_eq!(moved, want);
        // What is not a file read stays as it was.
        let moved = p.with_files(|_, _| PathBuf::from("x"));
        assert_eq!(moved.unix_socket, p.unix_socket);
        assert_eq!(RunPlan { requests: p.requests.clone(), tls: p.tls.clone(), ..moved }, p);
    }

    #[test]
    fn specweb_reads_its_manifest() {
        let mut p = plan();
        p.requests.source = Source::Specweb("set".into());
        assert_eq!(p.files_read(), [(ReadFlag::Specweb, Path::new("set"))]);
        let dir = std::env::temp_dir().join(format!("herd-plan-files-{}", std::process::id()));
        let nested = dir.join("specweb");
        std::fs::create_dir_all(&nested).expect("a directory");
        let manifest = nested.join(herd_fileset::MANIFEST_FILE);
        std::fs::write(&manifest, "x").expect("written");
        assert_eq!(file_read(ReadFlag::Specweb, &dir), Ok(manifest.clone()));
        assert_eq!(file_read(ReadFlag::Specweb, &manifest), Ok(manifest.clone()));
        let missing = file_read(ReadFlag::Specweb, &dir.join("none")).expect_err("no manifest");
        assert!(missing.contains("no manifest.toml there"), "{missing}");
        // The directory and the manifest itself stand for the same bytes.
        assert_eq!(content_key(ReadFlag::Specweb, &dir), content_key(ReadFlag::Cert, &manifest));
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
