//! Reading: the list of experiments, and one experiment with everything recorded for it.
//!
//! Each read runs in one read transaction, so it sees one consistent snapshot even while
//! the lab records repetitions (WAL lets both go on at once). Values that cannot have been
//! written by this crate (a negative count, an unknown status, a histogram blob that does
//! not decode) make the store [`StoreError::Corrupt`], never a panic.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Row};

use herd_stats::{
    ClientJudgement, ClientVerdict, Failure, HealthFacts, LatencySeries, Measurement,
};

use crate::error::StoreError;
use crate::natural_order;
use crate::profile::ProfileRecord;
use crate::record::{
    ClientIo, ClientRecord, ExperimentId, ExperimentStatus, NewExperiment, Outcome, RepetitionId,
    RepetitionRecord, ReportDefaults, ServerRecord,
};
use crate::run_failure::UnknownRunFailureKind;
use crate::store::Store;
use crate::stored::{ExperimentSummary, StoredCell, StoredExperiment, StoredRepetition};
use crate::{Measure, NetworkFacts};

impl Store {
    /// Every experiment in the store, oldest first, with counts of its cells and of its
    /// ok and failed repetitions.
    pub fn experiments(&self) -> Result<Vec<ExperimentSummary>, StoreError> {
        let tx = self.read_transaction()?;
        let reader = Reader { conn: &tx, path: &self.path, context: String::from("experiments") };
        let rows = reader.list(
            "SELECT e.id, e.name, e.title, e.status, e.started_at, e.finished_at,
                (SELECT count(*) FROM cell c WHERE c.experiment_id = e.id),
                (SELECT count(*) FROM repetition r JOIN cell c ON c.id = r.cell_id
                    WHERE c.experiment_id = e.id AND r.outcome = 'ok'),
                (SELECT count(*) FROM repetition r JOIN cell c ON c.id = r.cell_id
                    WHERE c.experiment_id = e.id AND r.outcome = 'failed')
             FROM experiment e ORDER BY e.id",
            [],
            |row| {
                let status: String = row.get(3)?;
                let summary = ExperimentSummary {
                    id: ExperimentId(row.get(0)?),
                    name: row.get(1)?,
                    title: row.get(2)?,
                    status: ExperimentStatus::Running, // decoded from `status` below
                    started_at: row.get(4)?,
                    finished_at: row.get(5)?,
                    n_cells: row.get(6)?,
                    n_repetitions_ok: row.get(7)?,
                    n_repetitions_failed: row.get(8)?,
                };
                Ok((summary, status))
            },
        )?;
        let mut summaries = Vec::with_capacity(rows.len());
        for (mut summary, status) in rows {
            summary.status = reader.status(&status)?;
            summaries.push(summary);
        }
        Ok(summaries)
    }

    /// The experiment with every cell, repetition and measurement, as written; cells in
    /// declared axis order (see [`StoredExperiment::cells`]), repetitions by index,
    /// measurements by step.
    pub fn load_experiment(&self, id: ExperimentId) -> Result<StoredExperiment, StoreError> {
        let tx = self.read_transaction()?;
        let reader = Reader { conn: &tx, path: &self.path, context: format!("experiment {id}") };
        reader.experiment(id)
    }

    /// The experiment begun last, if any.
    pub fn latest_experiment(&self) -> Result<Option<ExperimentId>, StoreError> {
        self.conn
            .query_row("SELECT max(id) FROM experiment", [], |row| row.get::<_, Option<i64>>(0))
            .map(|id| id.map(ExperimentId))
            .map_err(|e| StoreError::from_sqlite(&self.path, "find the latest experiment", e))
    }

    fn read_transaction(&self) -> Result<rusqlite::Transaction<'_>, StoreError> {
        self.conn
            .unchecked_transaction()
            .map_err(|e| StoreError::from_sqlite(&self.path, "begin a read transaction", e))
    }
}

/// Reads one experiment's rows inside a read transaction.
struct Reader<'a> {
    conn: &'a Connection,
    path: &'a Path,
    /// Where in the store we are, for messages.
    context: String,
}

impl Reader<'_> {
    fn experiment(&self, id: ExperimentId) -> Result<StoredExperiment, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT name, title, source, definition, plan, started_at, herd_version,
                    methodology_version, reference, status, finished_at, note, published_json,
                    report_baseline_axis, report_baseline_value, report_measure
                 FROM experiment WHERE id = ?1",
                [id.0],
                |row| {
                    let experiment = NewExperiment {
                        name: row.get(0)?,
                        title: row.get(1)?,
                        source: row.get(2)?,
                        definition: row.get(3)?,
                        plan: row.get(4)?,
                        started_at: row.get(5)?,
                        herd_version: row.get(6)?,
                        methodology_version: row.get(7)?,
                        axes: Vec::new(),
                        environment: Vec::new(),
                        reference: row.get(8)?,
                        published_json: row.get(12)?,
                        axis_values: Vec::new(),
                        report: ReportDefaults::default(),
                    };
                    let status: String = row.get(9)?;
                    let finished_at: Option<String> = row.get(10)?;
                    let note: Option<String> = row.get(11)?;
                    let baseline: (Option<String>, Option<String>) = (row.get(13)?, row.get(14)?);
                    let measure: Option<String> = row.get(15)?;
                    Ok((experiment, status, finished_at, note, baseline, measure))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((mut experiment, status, finished_at, note, baseline, measure)) = row else {
            return Err(StoreError::UnknownExperiment { path: self.path.to_path_buf(), id });
        };
        experiment.report = ReportDefaults {
            baseline: match baseline {
                (Some(axis), Some(value)) => Some((axis, value)),
                (None, None) => None,
                _ => {
                    return Err(
                        self.corrupt("a report baseline with an axis or a value alone".to_owned())
                    )
                }
            },
            measure: match measure {
                None => None,
                Some(key) => Some(Measure::from_key(&key).ok_or_else(|| {
                    self.corrupt(format!("report measure {key:?} is not one herd knows"))
                })?),
            },
        };
        experiment.axes = self.list(
            "SELECT name FROM experiment_axis WHERE experiment_id = ?1 ORDER BY position",
            [id.0],
            |row| row.get(0),
        )?;
        let values: Vec<(usize, String)> = self.list(
            "SELECT axis_position, label FROM experiment_axis_value WHERE experiment_id = ?1
             ORDER BY axis_position, position",
            [id.0],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        if !values.is_empty() {
            experiment.axis_values = vec![Vec::new(); experiment.axes.len()];
            for (axis, label) in values {
                let Some(list) = experiment.axis_values.get_mut(axis) else {
                    return Err(self
                        .corrupt(format!("a value {label:?} of axis {axis}, which is not there")));
                };
                list.push(label);
            }
        }
        experiment.environment = self.list(
            "SELECT key, value FROM experiment_environment WHERE experiment_id = ?1
             ORDER BY position",
            [id.0],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;

        let cell_rows: Vec<(i64, String, Option<String>)> = self.list(
            "SELECT id, key, control_of FROM cell WHERE experiment_id = ?1",
            [id.0],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )?;
        let mut cells = Vec::with_capacity(cell_rows.len());
        for (cell_id, key, control_of) in cell_rows {
            cells.push(self.cell(id, cell_id, (key, control_of), &experiment.axes)?);
        }
        // Axis by axis: the value's place among those the experiment declared (one it did
        // not declare after them), then natural order, the only order of stores older than
        // schema 6.
        let places: Vec<Vec<usize>> = cells
            .iter()
            .map(|c| {
                c.axes
                    .iter()
                    .map(|(axis, value)| {
                        experiment.value_position(axis, value).unwrap_or(usize::MAX)
                    })
                    .collect()
            })
            .collect();
        let mut order: Vec<usize> = (0..cells.len()).collect();
        order.sort_by(|&i, &j| {
            let (a, b) = (&cells[i], &cells[j]);
            places[i]
                .iter()
                .zip(&places[j])
                .zip(a.axes.iter().zip(&b.axes))
                .map(|((pa, pb), ((_, va), (_, vb)))| {
                    pa.cmp(pb).then_with(|| natural_order::compare(va, vb))
                })
                .find(|o| o.is_ne())
                .unwrap_or_else(|| a.key.cmp(&b.key))
        });
        let mut cells: Vec<Option<StoredCell>> = cells.into_iter().map(Some).collect();
        let cells: Vec<StoredCell> = order.into_iter().filter_map(|i| cells[i].take()).collect();
        Ok(StoredExperiment {
            id,
            experiment,
            status: self.status(&status)?,
            finished_at,
            note,
            cells,
        })
    }

    fn cell(
        &self,
        exp: ExperimentId,
        cell_id: i64,
        (key, control_of): (String, Option<String>),
        axes: &[String],
    ) -> Result<StoredCell, StoreError> {
        let values: Vec<String> = self.list(
            "SELECT value FROM cell_axis WHERE cell_id = ?1 ORDER BY position",
            [cell_id],
            |row| row.get(0),
        )?;
        if values.len() != axes.len() {
            return Err(self.corrupt(format!(
                "cell {key:?} has {} axis values for {} axes",
                values.len(),
                axes.len()
            )));
        }
        let axes: Vec<(String, String)> = axes.iter().cloned().zip(values).collect();
        let rows = self.list(
            "SELECT id, idx, position, started_at, finished_at, outcome, failure_reason,
                client_tool, client_version, client_argv, client_cpus, client_verdict,
                client_verdict_reason, client_health_json, server_cpu_seconds,
                time_wait_before, drain_seconds, network_json, failure_kind, client_io,
                client_io_fallback, client_trace_id
             FROM repetition WHERE cell_id = ?1 ORDER BY idx",
            [cell_id],
            RepetitionRow::from_row,
        )?;
        let mut repetitions = Vec::with_capacity(rows.len());
        for row in rows {
            repetitions.push(self.repetition(row, (&key, control_of.as_deref()), &axes)?);
        }
        let profile = self.profile(exp, &key)?;
        Ok(StoredCell { key, axes, control_of, repetitions, profile })
    }

    fn repetition(
        &self,
        row: RepetitionRow,
        (cell_key, control_of): (&str, Option<&str>),
        axes: &[(String, String)],
    ) -> Result<StoredRepetition, StoreError> {
        let outcome = match (row.outcome.as_str(), row.failure_kind, row.failure_reason) {
            ("ok", None, None) => Outcome::Ok,
            ("failed", Some(kind), Some(reason)) => {
                let kind = kind.parse().map_err(|e: UnknownRunFailureKind| {
                    self.corrupt(format!("repetition {}: {e}", row.id))
                })?;
                Outcome::Failed { kind, reason }
            }
            (other, _, _) => {
                return Err(self.corrupt(format!(
                    "repetition {} has outcome {other:?} and a failure kind or reason that does not match it",
                    row.id
                )))
            }
        };
        let server_rows: Vec<(i64, ServerRecord, String)> = self.list(
            "SELECT id, name, program, version, argv, cpus, cpu_seconds
             FROM server WHERE repetition_id = ?1 ORDER BY position",
            [row.id],
            |r| {
                let server = ServerRecord {
                    name: r.get(1)?,
                    program: r.get(2)?,
                    version: r.get(3)?,
                    argv: Vec::new(),
                    cpus: r.get(5)?,
                    cpu_seconds: r.get(6)?,
                    configs: Vec::new(),
                };
                Ok((r.get(0)?, server, r.get(4)?))
            },
        )?;
        let mut servers = Vec::with_capacity(server_rows.len());
        for (server_id, mut server, argv) in server_rows {
            server.argv = self.argv(&argv)?;
            server.configs = self.list(
                "SELECT path, text FROM server_config WHERE server_id = ?1 ORDER BY position",
                [server_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            servers.push(server);
        }
        type Judged = (Option<String>, Option<String>);
        let measurement_rows: Vec<(i64, Measurement, Judged)> = self.list(
            "SELECT id, step, label, concurrency, rate, duration_s, completed, failed, non_2xx,
                bytes_total, bytes_body, warmup_requests, client_verdict, client_verdict_reason
             FROM measurement WHERE repetition_id = ?1 ORDER BY step",
            [row.id],
            |r| {
                let m = Measurement {
                    step: r.get(1)?,
                    label: r.get(2)?,
                    concurrency: r.get(3)?,
                    rate: r.get(4)?,
                    duration_s: r.get(5)?,
                    completed: r.get(6)?,
                    failed: r.get(7)?,
                    failures: Vec::new(),
                    statuses: Vec::new(),
                    non_2xx: r.get(8)?,
                    bytes_total: r.get(9)?,
                    bytes_body: r.get(10)?,
                    warmup_requests: r.get(11)?,
                    histograms: Vec::new(),
                    reported: Vec::new(),
                    judgement: None,
                };
                Ok((r.get(0)?, m, (r.get(12)?, r.get(13)?)))
            },
        )?;
        let mut measurements = Vec::with_capacity(measurement_rows.len());
        for (measurement_id, mut m, (verdict, reason)) in measurement_rows {
            m.judgement =
                self.judgement(verdict, reason, &format!("measurement {measurement_id}"))?;
            measurements.push(self.measurement_details(measurement_id, m)?);
        }
        let what = format!("repetition {}", row.id);
        let judgement = self.judgement(row.client_verdict, row.client_verdict_reason, &what)?;
        let health = row
            .client_health_json
            .map(|text| HealthFacts::from_json(&text))
            .transpose()
            .map_err(|e| self.corrupt(format!("{what}: {e}")))?;
        let network = row
            .network_json
            .map(|text| NetworkFacts::from_json(&text))
            .transpose()
            .map_err(|e| self.corrupt(format!("{what}: {e}")))?;
        let record = RepetitionRecord {
            cell_key: cell_key.to_owned(),
            axes: axes.to_vec(),
            control_of: control_of.map(str::to_owned),
            repetition: row.repetition,
            position: row.position,
            started_at: row.started_at,
            finished_at: row.finished_at,
            outcome,
            client: ClientRecord {
                tool: row.client_tool,
                version: row.client_version,
                argv: self.argv(&row.client_argv)?,
                cpus: row.client_cpus,
                judgement,
                health,
                io: row
                    .client_io
                    .map(|backend| ClientIo { backend, fallback: row.client_io_fallback }),
                trace_id: row.client_trace_id,
            },
            servers,
            server_cpu_seconds: row.server_cpu_seconds,
            time_wait_before: row.time_wait_before,
            drain_seconds: row.drain_seconds,
            network,
            measurements,
        };
        Ok(StoredRepetition { id: RepetitionId(row.id), record })
    }

    fn measurement_details(&self, id: i64, mut m: Measurement) -> Result<Measurement, StoreError> {
        let failures: Vec<(String, u64)> = self.list(
            "SELECT kind, count FROM measurement_failure WHERE measurement_id = ?1
             ORDER BY position",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        for (kind, count) in failures {
            let kind: Failure =
                kind.parse().map_err(|e| self.corrupt(format!("measurement {id}: {e}")))?;
            m.failures.push((kind, count));
        }
        m.statuses = self.list(
            "SELECT status, count FROM measurement_status WHERE measurement_id = ?1
             ORDER BY position",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let blobs: Vec<(String, Vec<u8>)> = self.list(
            "SELECT name, data FROM histogram WHERE measurement_id = ?1 ORDER BY position",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        for (name, blob) in blobs {
            let series: LatencySeries =
                name.parse().map_err(|e| self.corrupt(format!("measurement {id}: {e}")))?;
            let histogram = herd_stats::hdr::decode(&blob).map_err(|e| {
                self.corrupt(format!("histogram {name:?} of measurement {id} does not decode: {e}"))
            })?;
            m.histograms.push((series, histogram));
        }
        m.reported = self.list(
            "SELECT name, value FROM measurement_reported WHERE measurement_id = ?1
             ORDER BY position",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(m)
    }

    /// A stored verdict and its reason, read back: a verdict herd does not know is a
    /// corrupted row, named by `what`.
    fn judgement(
        &self,
        verdict: Option<String>,
        reason: Option<String>,
        what: &str,
    ) -> Result<Option<ClientJudgement>, StoreError> {
        let Some(verdict) = verdict else { return Ok(None) };
        let verdict: ClientVerdict =
            verdict.parse().map_err(|e| self.corrupt(format!("{what}: {e}")))?;
        Ok(Some(ClientJudgement { verdict, reason }))
    }

    /// The cell's profiled run, if it has one.
    fn profile(&self, exp: ExperimentId, key: &str) -> Result<Option<ProfileRecord>, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT tool, recorded_at, weight, requests_per_second, folded
                 FROM profile WHERE experiment_id = ?1 AND cell_key = ?2",
                rusqlite::params![exp.0, key],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, Option<f64>>(3)?,
                        r.get::<_, String>(4)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((tool, recorded_at, weight, requests_per_second, folded)) = row else {
            return Ok(None);
        };
        let weight = u64::try_from(weight)
            .map_err(|_| self.corrupt(format!("profile of cell {key:?}: weight {weight}")))?;
        Ok(Some(ProfileRecord {
            cell_key: key.to_string(),
            tool,
            recorded_at,
            weight,
            requests_per_second,
            folded,
        }))
    }

    /// All rows of a query.
    fn list<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        f: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let rows = stmt.query_map(params, f).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<T>>>().map_err(|e| self.err(e))
    }

    fn status(&self, text: &str) -> Result<ExperimentStatus, StoreError> {
        ExperimentStatus::from_stored(text)
            .ok_or_else(|| self.corrupt(format!("unknown experiment status {text:?}")))
    }

    fn argv(&self, json: &str) -> Result<Vec<String>, StoreError> {
        serde_json::from_str(json)
            .map_err(|e| self.corrupt(format!("command line {json:?} is not a JSON list: {e}")))
    }

    fn corrupt(&self, detail: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.to_path_buf(),
            detail: format!("{}: {detail}", self.context),
        }
    }

    /// A value of the wrong type or range is damage to the store; anything else is SQLite's.
    fn err(&self, e: rusqlite::Error) -> StoreError {
        match e {
            rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::InvalidColumnType(..) => self.corrupt(e.to_string()),
            e => StoreError::from_sqlite(self.path, format!("read {}", self.context), e),
        }
    }
}

/// A repetition's own columns, before its outcome and command line are decoded.
struct RepetitionRow {
    id: i64,
    repetition: u32,
    position: u32,
    started_at: String,
    finished_at: String,
    outcome: String,
    failure_reason: Option<String>,
    client_tool: String,
    client_version: String,
    client_argv: String,
    client_cpus: Option<String>,
    client_verdict: Option<String>,
    client_verdict_reason: Option<String>,
    client_health_json: Option<String>,
    server_cpu_seconds: Option<f64>,
    time_wait_before: Option<u64>,
    drain_seconds: f64,
    network_json: Option<String>,
    failure_kind: Option<String>,
    client_io: Option<String>,
    client_io_fallback: Option<String>,
    client_trace_id: Option<String>,
}

impl RepetitionRow {
    fn from_row(row: &Row<'_>) -> rusqlite::Result<RepetitionRow> {
        Ok(RepetitionRow {
            id: row.get(0)?,
            repetition: row.get(1)?,
            position: row.get(2)?,
            started_at: row.get(3)?,
            finished_at: row.get(4)?,
            outcome: row.get(5)?,
            failure_reason: row.get(6)?,
            client_tool: row.get(7)?,
            client_version: row.get(8)?,
            client_argv: row.get(9)?,
            client_cpus: row.get(10)?,
            client_verdict: row.get(11)?,
            client_verdict_reason: row.get(12)?,
            client_health_json: row.get(13)?,
            server_cpu_seconds: row.get(14)?,
            time_wait_before: row.get(15)?,
            drain_seconds: row.get(16)?,
            network_json: row.get(17)?,
            failure_kind: row.get(18)?,
            client_io: row.get(19)?,
            client_io_fallback: row.get(20)?,
            client_trace_id: row.get(21)?,
        })
    }
}
