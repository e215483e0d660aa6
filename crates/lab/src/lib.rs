//! herd's lab: a comparison as an experiment file, run as a matrix against real servers.
//!
//! Brief overview:
//! - [`experiment::parse`] reads an experiment file into a checked [`experiment::Experiment`];
//!   [`matrix::cells`] expands it into [`matrix::Cell`]s.
//! - [`load::Load`] is how hard and how long a cell pushes (ab-style `-n`/`-c`, a duration,
//!   a fixed rate, client steps); [`load::Request`] is what each request is.
//! - [`client`] turns a cell's load into a client command line (herd run, the real ab, wrk
//!   or h2load; smbtorture or tbench for NetBench cells) and that client's output back into
//!   measurements.
//! - [`runner::run`] runs the matrix against real servers and writes every run to the store;
//!   [`plan::plan`] is the dry run. [`docroot`] writes what the servers serve and what each
//!   answer must be; [`verify`] checks an answer before a cell is measured.
//! - [`hosts`] reaches an experiment's `[hosts]` over SSH: checks them and installs herd.

pub mod bundled;
pub mod client;
pub mod docroot;
pub mod doctor;
pub mod environment;
pub mod error;
pub mod estimate;
pub mod experiment;
pub mod hosts;
pub mod load;
pub mod matrix;
pub mod netstat;
mod order;
pub mod plan;
pub mod refusal;
pub mod runner;
pub mod server_config;
pub mod timewait;
pub mod verify;
