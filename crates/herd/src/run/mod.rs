//! The parts of `herd run` below its command (run_cmd.rs): URL and duration parsing, the
//! per-worker recorder, and the text and JSON summaries.

pub(crate) mod duration;
pub(crate) mod json;
pub(crate) mod recorder;
pub(crate) mod summary;
pub(crate) mod url;
