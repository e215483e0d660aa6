//! herd's lab: a comparison as an experiment file, run as a matrix against real servers.
//!
//! Brief overview:
//! - [`experiment::parse`] reads an experiment file into a checked [`experiment::Experiment`];
//!   [`matrix::cells`] expands it into [`matrix::Cell`]s.
//! - [`load::Load`] is how hard and how long a cell pushes (ab-style `-n`/`-c`, a duration,
//!   a fixed rate, client steps); [`load::Request`] is what each request is.
//! - [`client`] turns a cell's load into a client command line (herd run, the real ab or
//!   wrk) and that client's output back into measurements.

pub mod client;
pub mod experiment;
pub mod load;
pub mod matrix;
