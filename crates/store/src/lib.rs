//! herd's results store: every experiment the lab ran, in one SQLite file.
//!
//! Brief overview:
//! - [`Store`] is an open store: [`Store::open`] creates or upgrades a file,
//!   [`Store::open_existing`] opens one that must already be there, [`Store::open_read_only`]
//!   opens one for a report (never writes; refuses an older schema), [`Store::migrate_file`]
//!   upgrades one after keeping a copy ([`Migration`]), [`Store::in_memory`] is for tests. The lab writes through [`Store::begin_experiment`],
//!   [`Store::record_repetition`] (one transaction per repetition, so an interrupted run
//!   leaves only whole repetitions) and [`Store::finish_experiment`], and a resumed run
//!   through [`Store::reopen_experiment`]; reports read through
//!   [`Store::experiments`] and [`Store::load_experiment`].
//! - What is written: [`NewExperiment`], [`RepetitionRecord`] with its [`ClientRecord`],
//!   [`ServerRecord`]s and [`herd_stats::Measurement`]s (counters, failures by kind, statuses,
//!   latency histograms as HdrHistogram blobs, so any percentile can be recomputed).
//! - [`Outcome`]: a repetition ok, or failed with its [`RunFailureKind`] (which step of the
//!   run failed) and its reason.
//! - [`Published`]: the figures an article published, stored with the experiment that
//!   re-runs them ([`NewExperiment::published`]), for a report's "then and now".
//! - What is read back: [`StoredExperiment`] → [`StoredCell`] → [`StoredRepetition`], every
//!   field as written; derived figures such as requests per second are computed on read
//!   ([`herd_stats::Measurement::requests_per_second`]), never stored.
//! - [`StoreError`] says what is wrong with a file in words a user can act on: not SQLite,
//!   another program's database, a store from a newer herd, a corrupted store.
//!
//! The schema is a numbered list of SQL migrations (`migrations/*.sql`), tracked by
//! `PRAGMA user_version`; herd's files carry `PRAGMA application_id` [`APPLICATION_ID`].
//! A file that is not a herd store is never written to. This crate measures nothing and
//! prints nothing.

mod axes;
mod error;
mod migrate;
mod natural_order;
mod network;
mod open;
mod profile;
mod published;
mod read;
mod record;
mod run_failure;
mod store;
mod stored;
mod write;

pub use axes::{is_sibling, names_value, sweep_label, sweep_size};
pub use error::StoreError;
pub use migrate::SCHEMA_VERSION;
pub use network::{Conntrack, NetworkFacts};
pub use open::{Migration, APPLICATION_ID};
pub use profile::ProfileRecord;
pub use published::{Measure, Published, PublishedFigure};
pub use record::{
    ClientIo, ClientRecord, ExperimentId, ExperimentStatus, NewExperiment, Outcome, RepetitionId,
    RepetitionRecord, ReportDefaults, ServerRecord, CALIBRATION_SERVER, FINDING_LINK_BOUND,
};
pub use run_failure::{RunFailureKind, UnknownRunFailureKind};
pub use store::Store;
pub use stored::{ExperimentSummary, StoredCell, StoredExperiment, StoredRepetition};
