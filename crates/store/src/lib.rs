//! herd's results store: every experiment the lab ran, in one SQLite file.
//!
//! Brief overview:
//! - [`Store`] is an open store: [`Store::open`] creates or upgrades a file,
//!   [`Store::open_existing`] opens one that must already be there, [`Store::open_read_only`]
//!   opens one for a report (never writes; refuses an older schema), [`Store::migrate_file`]
//!   upgrades one after keeping a copy ([`Migration`]), [`Store::in_memory`] is for tests. The lab writes through [`Store::begin_experiment`],
//!   [`Store::record_repetition`] (one transaction per repetition, so an interrupted run
//!   leaves only whole repetitions) and [`Store::finish_experiment`]; reports read through
//!   [`Store::experiments`] and [`Store::load_experiment`].
//! - What is written: [`NewExperiment`], [`RepetitionRecord`] with its [`ClientRecord`],
//!   [`ServerRecord`]s and [`MeasurementRecord`]s (counters, failures by kind, statuses,
//!   latency histograms as HdrHistogram blobs, so any percentile can be recomputed).
//! - [`Published`]: the figures an article published, stored with the experiment that
//!   re-runs them ([`NewExperiment::published`]), for a report's "then and now".
//! - What is read back: [`StoredExperiment`] → [`StoredCell`] → [`StoredRepetition`], every
//!   field as written; derived figures such as requests per second are computed on read
//!   ([`MeasurementRecord::requests_per_second`]), never stored.
//! - [`StoreError`] says what is wrong with a file in words a user can act on: not SQLite,
//!   another program's database, a store from a newer herd, a corrupted store.
//!
//! The schema is a numbered list of SQL migrations (`migrations/*.sql`), tracked by
//! `PRAGMA user_version`; herd's files carry `PRAGMA application_id` [`APPLICATION_ID`].
//! A file that is not a herd store is never written to. This crate measures nothing and
//! prints nothing.

mod axes;
mod error;
mod histogram_blob;
mod migrate;
mod natural_order;
mod open;
mod published;
mod read;
mod record;
mod store;
mod stored;
mod write;

pub use axes::{is_sibling, names_value, sweep_label, sweep_size};
pub use error::StoreError;
pub use migrate::SCHEMA_VERSION;
pub use open::{Migration, APPLICATION_ID};
pub use published::{Measure, Published, PublishedFigure};
pub use record::{
    ClientRecord, ExperimentId, ExperimentStatus, MeasurementRecord, NewExperiment, Outcome,
    RepetitionId, RepetitionRecord, ReportDefaults, ServerRecord, CALIBRATION_SERVER,
    FINDING_LINK_BOUND, HISTOGRAM_CONNECT, HISTOGRAM_FIRST_BYTE, HISTOGRAM_QUEUED, HISTOGRAM_TOTAL,
    HISTOGRAM_TOTAL_FROM_SEND, REPORTED_LATENCY_P50_US, REPORTED_LATENCY_P99_US,
    REPORTED_TIMER_RESOLUTION_S,
};
pub use store::Store;
pub use stored::{ExperimentSummary, StoredCell, StoredExperiment, StoredRepetition};
