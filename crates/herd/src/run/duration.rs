//! Durations in herd run's flags (`-d`, `--timeout`, `--warmup`): the same spellings as the
//! lab's experiment files, parsed by `herd_stats::units`.

pub(crate) use herd_stats::units::parse_duration as parse;
