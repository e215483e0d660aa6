//! The generated and dynamic pages, one file each, all computed on every request: `/9x9`
//! (nine_by_nine), `/include` (include, with its texts in include_texts), `/cpu` (cpu),
//! `/sleep` and `/stall` (delay), `/status/N` (status), `/echo` (echo); `query` reads their
//! parameters. `/bytes/N` lives in generated.rs and `/herd/stats` in stats.rs. Which page
//! answers which path is router.rs's decision, not theirs.

pub(crate) mod cpu;
pub(crate) mod delay;
pub(crate) mod echo;
pub(crate) mod include;
pub(crate) mod include_texts;
pub(crate) mod nine_by_nine;
pub(crate) mod query;
pub(crate) mod status;
