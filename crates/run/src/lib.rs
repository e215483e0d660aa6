//! `herd run` as a library: a validated [`RunPlan`], [`prepare`] and [`execute`] it, and the
//! typed result, [`RunReport`] (*is* `herd.run.v1`). Beside them, what a run keeps and says
//! about itself (the per-worker recorder and its per-second cut are herd-record's): the merge
//! of the workers' seconds, the `--series` and `--hlog` writers, the client health judge, `--fail-if`
//! thresholds, and the text summary. The binary keeps the flags (clap), the live line,
//! Ctrl-C and exit codes; the lab runs `herd run` as a process (namespaces, pinning, its own
//! CPU time) with arguments from [`RunPlan::to_args`] and reads its `--json` back as a
//! [`RunReport`].
//!
//! Data flow: `RunPlan` → [`prepare`] (reads the files it names, resolves the target under
//! the safety rule, builds the requests once) → [`execute`]: per step, `herd_engine::run` with
//! one `RunRecorder` per worker → merged → [`StepReport`] (health judged) → [`RunReport`].
//! While it runs, each worker's seconds go to [`Outputs`] (one writer thread).

mod cgroup_cpu;
mod client_usage;
mod error;
mod execute;
mod health;
pub mod hlog;
mod merge;
pub mod metrics;
mod outputs;
pub mod plan;
pub mod plan_files;
mod process_cpu;
pub mod protocol;
pub mod report;
mod request;
mod run_info;
pub mod series;
mod server_usage;
pub mod spread;
mod steal;
mod step_result;
pub mod summary;
pub mod threshold;
mod timer_probe;
pub mod units;
pub mod url;
mod url_list;
mod workload;

pub use error::RunError;
pub use execute::{execute, prepare, Prepared, RunSetup, Spread};
pub use health::LATE_SHARE_SUSPECT;
pub use herd_record::Seconds;
pub use herd_record::{Interval, LATE_SEND};
pub use merge::RunSecond;
pub use outputs::{Outputs, SecondObserver, WorkerSeconds};
pub use plan::{PlanError, RunPlan};
pub use report::{RunReport, StepReport};
pub use threshold::Threshold;
pub use url::RunUrl;
