//! The lab's errors: what stops a lab run before or between cells (a cell's own failure is a
//! result, stored with its reason, not an error).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error(transparent)]
    Experiment(#[from] crate::experiment::ExperimentError),
    #[error("missing programs:\n  {}\nhint: run `herd doctor` for everything this machine lacks", .0.join("\n  "))]
    Missing(Vec<String>),
    #[error("this machine cannot run this experiment (nothing ran):\n  {}\nhint: run `herd doctor` for what this machine has", .0.join("\n  "))]
    Unsupported(Vec<String>),
    /// What the runner does not run between `[hosts]`, said before anything starts.
    #[error("this experiment cannot run on its [hosts] (nothing ran): {0}")]
    OnHosts(String),
    #[error("{0}")]
    Cpus(String),
    #[error("{0}")]
    Setup(String),
    #[error("cannot prepare {path}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] herd_store::StoreError),
    /// `herd lab run --resume` refused or stopped.
    #[error(transparent)]
    Resume(#[from] crate::runner::resume::ResumeError),
    #[error("the matrix has no cells: every combination is excluded")]
    NoCells,
    /// Every cell's protocol is one its server, client or path cannot carry.
    #[error("every cell of the matrix is refused (nothing ran):\n  {}\nhint: `herd lab run --dry-run` lists the cells", .0.join("\n  "))]
    AllRefused(Vec<String>),
}

pub(crate) use herd_stats::with_causes;

#[cfg(test)]
mod tests {
    use super::*;
    use herd_testutil::causes::assert_cause_once;

    /// Before: `Io` printed its OS error twice, and `Experiment` the whole experiment error
    /// twice (`{0}` and `#[from]`).
    #[test]
    fn each_cause_is_printed_once() {
        let os = std::io::Error::from_raw_os_error(libc::EACCES);
        let text = os.to_string();
        let printed = assert_cause_once(&LabError::Io { path: "/tmp/x".into(), source: os }, &text);
        assert_eq!(printed, format!("cannot prepare /tmp/x: {text}"));
        let refused = crate::experiment::ExperimentError {
            source_name: "a.toml".into(),
            line: Some(3),
            message: "unknown key `sever`".into(),
        };
        let text = refused.to_string();
        let printed = assert_cause_once(&LabError::Experiment(refused), &text);
        assert_eq!(printed, "a.toml: line 3: unknown key `sever`");
    }

    #[test]
    fn with_causes_is_the_printed_chain() {
        let os = std::io::Error::from_raw_os_error(libc::ENOENT);
        let text = os.to_string();
        let err = LabError::Io { path: "/x".into(), source: os };
        assert_eq!(with_causes(&err), format!("cannot prepare /x: {text}"));
        assert_eq!(with_causes(&err), herd_testutil::causes::chain(&err));
    }
}
