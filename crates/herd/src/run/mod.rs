//! The parts of `herd run` below its command (run_cmd.rs): URL and duration parsing, the
//! per-worker recorder, the text and JSON summaries, and `--fail-if` thresholds.

pub(crate) mod duration;
pub(crate) mod json;
pub(crate) mod recorder;
pub(crate) mod summary;
pub(crate) mod threshold;
pub(crate) mod url;
