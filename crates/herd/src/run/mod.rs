//! The parts of `herd run` below its command (run_cmd.rs): URL, duration and unit parsing,
//! the requests and workload (URL lists, SPECweb99 mixes), the per-worker recorder, the text
//! and JSON summaries, `--fail-if` thresholds, the outputs that show the run over time
//! (`--series`, `--hlog`, the live line, written second by second by one writer thread), and
//! the client health verdict (the client's own usage, its errors, and the judgement on them).

pub(crate) mod cgroup_cpu;
pub(crate) mod client_errors;
pub(crate) mod client_usage;
pub(crate) mod duration;
pub(crate) mod health;
pub(crate) mod hlog;
pub(crate) mod hlog_encoding;
pub(crate) mod interval;
pub(crate) mod json;
pub(crate) mod live;
pub(crate) mod merge;
pub(crate) mod outputs;
pub(crate) mod process_cpu;
pub(crate) mod recorder;
pub(crate) mod request;
pub(crate) mod series;
pub(crate) mod summary;
pub(crate) mod threshold;
pub(crate) mod units;
pub(crate) mod url;
pub(crate) mod url_list;
pub(crate) mod workload;
