//! The parts of `herd run` below its command (run_cmd.rs): URL and duration parsing, the
//! per-worker recorder, the text and JSON summaries, `--fail-if` thresholds, and the client
//! health verdict (the client's own usage, its errors, and the judgement on them).

pub(crate) mod cgroup_cpu;
pub(crate) mod client_errors;
pub(crate) mod client_usage;
pub(crate) mod duration;
pub(crate) mod health;
pub(crate) mod json;
pub(crate) mod process_cpu;
pub(crate) mod recorder;
pub(crate) mod summary;
pub(crate) mod threshold;
pub(crate) mod url;
