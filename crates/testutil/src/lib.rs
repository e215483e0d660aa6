//! Helpers shared by herd's tests, and only by tests (every other crate but herd-run and
//! herd-stats takes it as a dev-dependency; nothing shipped links it).
//!
//! - [`golden`]: compare rendered output with a file under `tests/golden/`, byte for byte;
//!   `UPDATE_GOLDEN=1` rewrites the files instead (review the diff like code).
//! - [`corpus`]: a corpus folder's files, and deterministic mutations of them through a
//!   fuzz entry point.
//! - [`causes`]: an error chain names each cause once, whether built in a unit test or read
//!   from a command's stderr.
//! - [`procs`]: the processes a test started, found by a path they carry, to see them gone.
//! - [`not_run`]: what a test could not run on this kernel, listed at the end of the test
//!   command.
//! - [`ports`]: free loopback ports for servers started by tests, each handed out once.
//! - [`alloc`]: a counting global allocator for the no-allocation tests.
//! - [`sweep`]: one lock, across test binaries, around what sweeps herd's leftovers
//!   machine-wide (`herd lab clean`, a resume, `registry::clean`).
//! - [`hiccups`]: how late the machine wakes a sleeping thread while a test runs, for time
//!   bounds judged against what the machine showed.
//! - `launch` (feature `launch`): a rendered server prepared and started as the lab does,
//!   stopped by PID.

pub mod alloc;
pub mod causes;
pub mod corpus;
pub mod golden;
pub mod hiccups;
#[cfg(feature = "launch")]
pub mod launch;
pub mod not_run;
pub mod ports;
pub mod procs;
pub mod sweep;
