//! The files a spread run reads (`--body-file`, `--urls`, `--specweb`, `--ca-file`,
//! `--cert`), taken to agents on other machines (`herd cluster run --ssh`, docs/cluster.md):
//! a path on this machine means nothing on another. Each file is read here once, before any
//! host is reached (one that cannot be read fails the run at once), written by each host's
//! helper into its run directory (`files/<flag>/<name>`, mode 0600: a client certificate
//! holds its key), and each agent is given the plan with the copies' paths. The agents' config
//! hash compares the files' bytes, not their paths (herd-run's `plan_files`), so the copies
//! hash as the originals do.
//!
//! `--specweb DIR` is one file too: the client reads only the set's manifest (the set's files
//! are the server's), so the manifest is copied and the agents are given its path.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context as _};
use herd_host::protocol::MAX_WRITE_FILE;
use herd_run::plan_files::{file_read, ReadFlag};
use herd_run::RunPlan;

/// Where the copies go, in a helper's run directory.
const DIR: &str = "files";
/// Only the agent, run by the same user, reads them.
const MODE: u32 = 0o600;

/// One file the run reads: its flag, its name under the run directory, its bytes.
struct Copy {
    flag: ReadFlag,
    name: String,
    bytes: Vec<u8>,
}

/// The files a run reads, read here.
pub(crate) struct RunFiles(Vec<Copy>);

impl RunFiles {
    /// Reads each file `plan` reads, as the run would find it; an error names the flag and
    /// the file.
    pub(crate) fn read(plan: &RunPlan) -> anyhow::Result<RunFiles> {
        let mut copies = Vec::new();
        for (flag, path) in plan.files_read() {
            let read = file_read(flag, path).map_err(|e| anyhow!(e))?;
            let f = flag.flag();
            let meta = std::fs::metadata(&read)
                .with_context(|| format!("{f}: cannot read {}", read.display()))?;
            if meta.len() > MAX_WRITE_FILE {
                bail!(
                    "{f} {}: {} bytes, over the {MAX_WRITE_FILE} herd copies to each --ssh host; \
                     give a smaller file",
                    read.display(),
                    meta.len()
                );
            }
            let bytes = std::fs::read(&read)
                .with_context(|| format!("{f}: cannot read {}", read.display()))?;
            // The file's own name, so that an agent's message about its copy is recognised.
            let base = read.file_name().and_then(|n| n.to_str()).unwrap_or("file");
            let name = format!("{DIR}/{}/{base}", f.trim_start_matches('-'));
            copies.push(Copy { flag, name, bytes });
        }
        Ok(RunFiles(copies))
    }

    /// Writes each file with `write(name, bytes, mode)` (a helper's `write_file`, `name`
    /// under its run directory `run_dir`) and gives `plan` with the copies' paths there.
    pub(crate) fn place(
        &self,
        plan: &RunPlan,
        run_dir: &str,
        mut write: impl FnMut(&str, &[u8], u32) -> anyhow::Result<()>,
    ) -> anyhow::Result<RunPlan> {
        for c in &self.0 {
            write(&c.name, &c.bytes, MODE)
                .with_context(|| format!("copying the file of {} to the host", c.flag.flag()))?;
        }
        Ok(plan.with_files(|flag, path| self.copy_of(flag, run_dir).unwrap_or(path.to_owned())))
    }

    /// Where the copy of `flag`'s file is under `run_dir` (a flag names one file at most).
    fn copy_of(&self, flag: ReadFlag, run_dir: &str) -> Option<PathBuf> {
        let c = self.0.iter().find(|c| c.flag == flag)?;
        Some(Path::new(run_dir).join(&c.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_run::plan::{Body, Load, Pace, Source, Stop, DEFAULT_DURATION};
    use std::num::NonZeroU32;

    fn plan() -> RunPlan {
        let url = "https://127.0.0.1:1/".parse().expect("a URL");
        let connections = NonZeroU32::new(2).expect("not zero");
        let stop = Stop::After(DEFAULT_DURATION);
        RunPlan::new(url, Load::Single { connections, stop, pace: Pace::Closed { think: None } })
    }

    #[test]
    fn each_file_is_written_and_its_copy_named_in_the_plan() {
        let dir = std::env::temp_dir().join(format!("herd-cluster-files-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("set/specweb")).unwrap();
        std::fs::write(dir.join("ca.pem"), "CA").unwrap();
        std::fs::write(dir.join("body"), "BODY").unwrap();
        std::fs::write(dir.join("set/specweb/manifest.toml"), "M").unwrap();
        let mut p = plan();
        p.tls.ca_file = Some(dir.join("ca.pem"));
        p.requests.body = Body::File(dir.join("body"));
        p.requests.source = Source::Specweb(dir.join("set"));
        let files = RunFiles::read(&p).unwrap();
        let mut written = Vec::new();
        let placed = files
            .place(&p, "/run/h", |name, bytes, mode| {
                written.push((name.to_owned(), bytes.to_vec(), mode));
                Ok(())
            })
            .unwrap();
        let want = [
            ("files/body-file/body", "BODY"),
            ("files/specweb/manifest.toml", "M"),
            ("files/ca-file/ca.pem", "CA"),
        ]
        .map(|(n, b)| (n.to_owned(), b.as_bytes().to_vec(), 0o600));
        assert_eq!(written, want);
        assert_eq!(placed.tls.ca_file.as_deref(), Some(Path::new("/run/h/files/ca-file/ca.pem")));
        assert_eq!(placed.requests.body, Body::File("/run/h/files/body-file/body".into()));
        let manifest = PathBuf::from("/run/h/files/specweb/manifest.toml");
        assert_eq!(placed.requests.source, Source::Specweb(manifest));

        // A file that cannot be read fails here, named with its flag.
        p.tls.cert = Some(dir.join("no-cert.pem"));
        let e = format!("{:#}", RunFiles::read(&p).err().expect("refused"));
        assert!(e.starts_with("--cert: cannot read ") && e.contains("no-cert.pem"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
