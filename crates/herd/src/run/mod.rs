//! The parts of `herd run` below its command (run_cmd.rs): URL, duration and unit parsing,
//! the requests and workload (URL lists, SPECweb99 mixes), the per-worker recorder, the text
//! and JSON summaries, and `--fail-if` thresholds.

pub(crate) mod duration;
pub(crate) mod json;
pub(crate) mod recorder;
pub(crate) mod request;
pub(crate) mod summary;
pub(crate) mod threshold;
pub(crate) mod units;
pub(crate) mod url;
pub(crate) mod url_list;
pub(crate) mod workload;
