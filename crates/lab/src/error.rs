//! The lab's errors: what stops a lab run before or between cells (a cell's own failure is a
//! result, stored with its reason, not an error).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("{0}")]
    Experiment(#[from] crate::experiment::ExperimentError),
    #[error("missing programs:\n  {}\nhint: run `herd doctor` for everything this machine lacks", .0.join("\n  "))]
    Missing(Vec<String>),
    #[error("this machine cannot run this experiment (nothing ran):\n  {}\nhint: run `herd doctor` for what this machine has", .0.join("\n  "))]
    Unsupported(Vec<String>),
    #[error("{0}")]
    Cpus(String),
    #[error("{0}")]
    Setup(String),
    #[error("cannot prepare {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] herd_store::StoreError),
    #[error("the matrix has no cells: every combination is excluded")]
    NoCells,
}
