//! Writing: an experiment begins, each repetition is recorded in one transaction, the
//! experiment finishes. A repetition is all or nothing: a record that fails anywhere (a
//! duplicate, a count too large for SQLite, a NaN) leaves no row of it behind, so a store
//! after Ctrl-C or a crash holds only whole repetitions.
//!
//! Uniqueness (a repetition index, a step, a failure kind or histogram given twice) is left
//! to the schema's constraints, which are the single place it is defined; their violations
//! are turned into errors that name the record.

use rusqlite::{ffi, params, OptionalExtension, Transaction, TransactionBehavior};

use herd_stats::Measurement;

use crate::error::StoreError;
use crate::record::{
    ExperimentId, ExperimentStatus, NewExperiment, Outcome, RepetitionId, RepetitionRecord,
    ServerRecord,
};
use crate::store::Store;

impl Store {
    /// Records a new experiment as `running` and returns its id.
    pub fn begin_experiment(&mut self, e: &NewExperiment) -> Result<ExperimentId, StoreError> {
        let what = || format!("experiment {:?}", e.name);
        let path: &std::path::Path = &self.path;
        let sqlite = |context: &'static str| move |err| StoreError::from_sqlite(path, context, err);
        if !e.axis_values.is_empty() && e.axis_values.len() != e.axes.len() {
            return Err(invalid(
                what(),
                format!("{} lists of axis values for {} axes", e.axis_values.len(), e.axes.len()),
            ));
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite("begin a transaction"))?;
        tx.execute(
            "INSERT INTO experiment (name, title, source, definition, plan, started_at, status,
                herd_version, methodology_version, reference, published_json,
                report_baseline_axis, report_baseline_value, report_measure)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                e.name,
                e.title,
                e.source,
                e.definition,
                e.plan,
                e.started_at,
                ExperimentStatus::Running.as_str(),
                e.herd_version,
                e.methodology_version,
                e.reference,
                e.published_json,
                e.report.baseline.as_ref().map(|(axis, _)| axis),
                e.report.baseline.as_ref().map(|(_, value)| value),
                e.report.measure.map(|m| m.key()),
            ],
        )
        .map_err(sqlite("insert the experiment"))?;
        let id = tx.last_insert_rowid();
        for (position, axis) in e.axes.iter().enumerate() {
            tx.execute(
                "INSERT INTO experiment_axis (experiment_id, position, name) VALUES (?1, ?2, ?3)",
                params![id, position, axis],
            )
            .map_err(|err| {
                unique_or(err, path, "insert an axis", || {
                    invalid(what(), format!("axis {axis:?} appears twice"))
                })
            })?;
        }
        for (axis_position, (axis, values)) in e.axes.iter().zip(&e.axis_values).enumerate() {
            for (position, label) in values.iter().enumerate() {
                tx.execute(
                    "INSERT INTO experiment_axis_value (experiment_id, axis_position, position,
                        label) VALUES (?1, ?2, ?3, ?4)",
                    params![id, axis_position, position, label],
                )
                .map_err(|err| {
                    unique_or(err, path, "insert an axis value", || {
                        invalid(what(), format!("axis {axis:?} lists {label:?} twice"))
                    })
                })?;
            }
        }
        for (position, (key, value)) in e.environment.iter().enumerate() {
            tx.execute(
                "INSERT INTO experiment_environment (experiment_id, position, key, value)
                 VALUES (?1, ?2, ?3, ?4)",
                params![id, position, key, value],
            )
            .map_err(sqlite("insert the environment"))?;
        }
        tx.commit().map_err(sqlite("commit the experiment"))?;
        Ok(ExperimentId(id))
    }

    /// Records one repetition of a cell in one transaction: the cell (found by
    /// `r.cell_key`, created on its first repetition), the repetition, its servers and
    /// their configs, and each measurement with its failures, statuses, histograms and
    /// reported figures. On any error nothing of it is kept.
    pub fn record_repetition(
        &mut self,
        exp: ExperimentId,
        r: &RepetitionRecord,
    ) -> Result<RepetitionId, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| StoreError::from_sqlite(&self.path, "begin a transaction", e))?;
        let mut w = RepetitionWriter { tx: &tx, path: &self.path, exp, r };
        let id = w.write()?;
        tx.commit().map_err(|e| StoreError::from_sqlite(&self.path, "commit the repetition", e))?;
        Ok(id)
    }

    /// Sets the experiment's final status, finishing time and note (why it ended so).
    pub fn finish_experiment(
        &mut self,
        exp: ExperimentId,
        status: ExperimentStatus,
        finished_at: &str,
        note: Option<&str>,
    ) -> Result<(), StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE experiment SET status = ?2, finished_at = ?3, note = ?4 WHERE id = ?1",
                params![exp.0, status.as_str(), finished_at, note],
            )
            .map_err(|e| StoreError::from_sqlite(&self.path, "finish the experiment", e))?;
        if changed == 0 {
            return Err(StoreError::UnknownExperiment { path: self.path.clone(), id: exp });
        }
        Ok(())
    }

    /// Opens an unfinished experiment again to run the rest of it (`herd lab run --resume`):
    /// its status goes back to `running`, its finishing time is cleared and its note becomes
    /// `note`; each of `environment`'s entries replaces the entry of the same key, or is
    /// added after the others. A `done` experiment is refused ([`StoreError::AlreadyDone`]),
    /// and nothing is changed.
    pub fn reopen_experiment(
        &mut self,
        exp: ExperimentId,
        note: &str,
        environment: &[(String, String)],
    ) -> Result<(), StoreError> {
        let path: &std::path::Path = &self.path;
        let sqlite = |context: &'static str| move |err| StoreError::from_sqlite(path, context, err);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite("begin a transaction"))?;
        let status: Option<String> = tx
            .query_row("SELECT status FROM experiment WHERE id = ?1", [exp.0], |row| row.get(0))
            .optional()
            .map_err(sqlite("look up the experiment"))?;
        match status.as_deref() {
            None => {
                return Err(StoreError::UnknownExperiment { path: path.to_path_buf(), id: exp })
            }
            Some(s) if s == ExperimentStatus::Done.as_str() => {
                return Err(StoreError::AlreadyDone { path: path.to_path_buf(), id: exp })
            }
            Some(_) => {}
        }
        tx.execute(
            "UPDATE experiment SET status = ?2, finished_at = NULL, note = ?3 WHERE id = ?1",
            params![exp.0, ExperimentStatus::Running.as_str(), note],
        )
        .map_err(sqlite("reopen the experiment"))?;
        for (key, value) in environment {
            let replaced = tx
                .execute(
                    "UPDATE experiment_environment SET value = ?3
                     WHERE experiment_id = ?1 AND key = ?2",
                    params![exp.0, key, value],
                )
                .map_err(sqlite("update the environment"))?;
            if replaced == 0 {
                tx.execute(
                    "INSERT INTO experiment_environment (experiment_id, position, key, value)
                     SELECT ?1, coalesce(max(position) + 1, 0), ?2, ?3
                     FROM experiment_environment WHERE experiment_id = ?1",
                    params![exp.0, key, value],
                )
                .map_err(sqlite("add to the environment"))?;
            }
        }
        tx.commit().map_err(sqlite("commit the reopened experiment"))
    }
}

/// One repetition's rows, written inside the caller's transaction.
struct RepetitionWriter<'a> {
    tx: &'a Transaction<'a>,
    path: &'a std::path::Path,
    exp: ExperimentId,
    r: &'a RepetitionRecord,
}

impl RepetitionWriter<'_> {
    fn write(&mut self) -> Result<RepetitionId, StoreError> {
        let cell_id = self.cell()?;
        let r = self.r;
        let (outcome, kind, reason) = match &r.outcome {
            Outcome::Ok => ("ok", None, None),
            Outcome::Failed { kind, reason } => {
                ("failed", Some(kind.as_str()), Some(reason.as_str()))
            }
        };
        let argv = self.json(&r.client.argv)?;
        let judgement = r.client.judgement.as_ref();
        let verdict = judgement.map(|j| j.verdict.as_str());
        let verdict_reason = judgement.and_then(|j| j.reason.as_deref());
        let health = r.client.health.as_ref().map(herd_stats::HealthFacts::to_json);
        let network = r.network.as_ref().map(crate::NetworkFacts::to_json);
        let server_cpu_seconds = self.real_opt(r.server_cpu_seconds, "server_cpu_seconds")?;
        let time_wait_before = self.int_opt(r.time_wait_before, "time_wait_before")?;
        let drain_seconds = self.real(r.drain_seconds, "drain_seconds")?;
        self.tx
            .prepare_cached(
                "INSERT INTO repetition (cell_id, idx, position, started_at, finished_at,
                    outcome, failure_reason, client_tool, client_version, client_argv,
                    client_cpus, client_verdict, client_verdict_reason, client_health_json,
                    server_cpu_seconds, time_wait_before, drain_seconds, network_json,
                    failure_kind, client_io, client_io_fallback, client_trace_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                    ?18, ?19, ?20, ?21, ?22)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    cell_id,
                    r.repetition,
                    r.position,
                    r.started_at,
                    r.finished_at,
                    outcome,
                    reason,
                    r.client.tool,
                    r.client.version,
                    argv,
                    r.client.cpus,
                    verdict,
                    verdict_reason,
                    health,
                    server_cpu_seconds,
                    time_wait_before,
                    drain_seconds,
                    network,
                    kind,
                    r.client.io.as_ref().map(|io| io.backend.as_str()),
                    r.client.io.as_ref().and_then(|io| io.fallback.as_deref()),
                    r.client.trace_id,
                ])
            })
            .map_err(|e| {
                unique_or(e, self.path, "insert the repetition", || {
                    StoreError::DuplicateRepetition {
                        experiment: self.exp,
                        cell_key: r.cell_key.clone(),
                        repetition: r.repetition,
                    }
                })
            })?;
        let repetition_id = self.tx.last_insert_rowid();
        for (position, server) in r.servers.iter().enumerate() {
            self.server(repetition_id, position, server)?;
        }
        for m in &r.measurements {
            self.measurement(repetition_id, m)?;
        }
        Ok(RepetitionId(repetition_id))
    }

    /// The cell's id, inserting the cell on its first repetition. The record's axes must
    /// be the experiment's, and a known cell's values must not change.
    fn cell(&self) -> Result<i64, StoreError> {
        let r = self.r;
        let axes: Vec<String> = self
            .tx
            .prepare_cached(
                "SELECT name FROM experiment_axis WHERE experiment_id = ?1 ORDER BY position",
            )
            .and_then(|mut stmt| stmt.query_map([self.exp.0], |row| row.get(0))?.collect())
            .map_err(|e| self.sqlite(e, "read the experiment's axes"))?;
        let exists: bool = self
            .tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM experiment WHERE id = ?1)",
                [self.exp.0],
                |row| row.get(0),
            )
            .map_err(|e| self.sqlite(e, "look up the experiment"))?;
        if !exists {
            return Err(StoreError::UnknownExperiment {
                path: self.path.to_path_buf(),
                id: self.exp,
            });
        }
        let names: Vec<&str> = r.axes.iter().map(|(n, _)| n.as_str()).collect();
        if names != axes {
            return Err(
                self.invalid(format!("its axes are {names:?}, the experiment's are {axes:?}"))
            );
        }
        let values: Vec<&str> = r.axes.iter().map(|(_, v)| v.as_str()).collect();

        let known: Option<i64> = self
            .tx
            .query_row(
                "SELECT id FROM cell WHERE experiment_id = ?1 AND key = ?2",
                params![self.exp.0, r.cell_key],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e, "look up the cell"))?;
        if let Some(cell_id) = known {
            let stored: Vec<String> = self
                .tx
                .prepare_cached("SELECT value FROM cell_axis WHERE cell_id = ?1 ORDER BY position")
                .and_then(|mut stmt| stmt.query_map([cell_id], |row| row.get(0))?.collect())
                .map_err(|e| self.sqlite(e, "read the cell's axes"))?;
            if stored != values {
                return Err(self.invalid(format!(
                    "the cell was recorded with axis values {stored:?}, this record has {values:?}"
                )));
            }
            let control_of: Option<String> = self
                .tx
                .query_row("SELECT control_of FROM cell WHERE id = ?1", [cell_id], |row| row.get(0))
                .map_err(|e| self.sqlite(e, "read the cell's control"))?;
            if control_of != r.control_of {
                return Err(self.invalid(format!(
                    "the cell was recorded as the control of {control_of:?}, this record as \
                     that of {:?}",
                    r.control_of
                )));
            }
            return Ok(cell_id);
        }
        self.tx
            .execute(
                "INSERT INTO cell (experiment_id, key, control_of) VALUES (?1, ?2, ?3)",
                params![self.exp.0, r.cell_key, r.control_of],
            )
            .map_err(|e| self.sqlite(e, "insert the cell"))?;
        let cell_id = self.tx.last_insert_rowid();
        for (position, value) in values.iter().enumerate() {
            self.tx
                .execute(
                    "INSERT INTO cell_axis (cell_id, position, value) VALUES (?1, ?2, ?3)",
                    params![cell_id, position, value],
                )
                .map_err(|e| self.sqlite(e, "insert the cell's axes"))?;
        }
        Ok(cell_id)
    }

    fn server(
        &self,
        repetition_id: i64,
        position: usize,
        s: &ServerRecord,
    ) -> Result<(), StoreError> {
        let argv = self.json(&s.argv)?;
        let cpu_seconds = self.real_opt(s.cpu_seconds, "server cpu_seconds")?;
        self.tx
            .prepare_cached(
                "INSERT INTO server (repetition_id, position, name, program, version, argv, cpus,
                    cpu_seconds)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    repetition_id,
                    position,
                    s.name,
                    s.program,
                    s.version,
                    argv,
                    s.cpus,
                    cpu_seconds,
                ])
            })
            .map_err(|e| self.sqlite(e, "insert a server"))?;
        let server_id = self.tx.last_insert_rowid();
        for (position, (path, text)) in s.configs.iter().enumerate() {
            self.tx
                .prepare_cached(
                    "INSERT INTO server_config (server_id, position, path, text)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .and_then(|mut stmt| stmt.execute(params![server_id, position, path, text]))
                .map_err(|e| self.sqlite(e, "insert a server config"))?;
        }
        Ok(())
    }

    fn measurement(&self, repetition_id: i64, m: &Measurement) -> Result<(), StoreError> {
        let step = m.step;
        let rate = self.real_opt(m.rate, "rate")?;
        let duration_s = self.real(m.duration_s, "duration_s")?;
        let counts = [
            self.int(m.completed, "completed")?,
            self.int(m.failed, "failed")?,
            self.int(m.non_2xx, "non_2xx")?,
            self.int(m.bytes_total, "bytes_total")?,
            self.int(m.bytes_body, "bytes_body")?,
            self.int(m.warmup_requests, "warmup_requests")?,
        ];
        let [completed, failed, non_2xx, bytes_total, bytes_body, warmup_requests] = counts;
        let verdict = m.judgement.as_ref().map(|j| j.verdict.as_str());
        let verdict_reason = m.judgement.as_ref().and_then(|j| j.reason.as_deref());
        self.tx
            .prepare_cached(
                "INSERT INTO measurement (repetition_id, step, label, concurrency, rate,
                    duration_s, completed, failed, non_2xx, bytes_total, bytes_body,
                    warmup_requests, client_verdict, client_verdict_reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    repetition_id,
                    step,
                    m.label,
                    m.concurrency,
                    rate,
                    duration_s,
                    completed,
                    failed,
                    non_2xx,
                    bytes_total,
                    bytes_body,
                    warmup_requests,
                    verdict,
                    verdict_reason,
                ])
            })
            .map_err(|e| {
                unique_or(e, self.path, "insert a measurement", || {
                    self.invalid(format!("step {step} appears twice"))
                })
            })?;
        let measurement_id = self.tx.last_insert_rowid();
        let twice =
            |what: String| move || self.invalid(format!("step {step}: {what} appears twice"));

        for (position, (kind, count)) in m.failures.iter().enumerate() {
            self.child(
                "INSERT INTO measurement_failure (measurement_id, position, kind, count)
                 VALUES (?1, ?2, ?3, ?4)",
                params![
                    measurement_id,
                    position,
                    kind.as_str(),
                    self.int(*count, "failure count")?
                ],
                twice(format!("failure kind {kind}")),
            )?;
        }
        for (position, (status, count)) in m.statuses.iter().enumerate() {
            self.child(
                "INSERT INTO measurement_status (measurement_id, position, status, count)
                 VALUES (?1, ?2, ?3, ?4)",
                params![measurement_id, position, status, self.int(*count, "status count")?],
                twice(format!("status {status}")),
            )?;
        }
        for (position, (series, histogram)) in m.histograms.iter().enumerate() {
            let blob = herd_stats::hdr::encode(histogram).map_err(|e| {
                self.invalid(format!("step {step}: histogram {series} cannot be encoded: {e}"))
            })?;
            self.child(
                "INSERT INTO histogram (measurement_id, position, name, data)
                 VALUES (?1, ?2, ?3, ?4)",
                params![measurement_id, position, series.as_str(), blob],
                twice(format!("histogram {series}")),
            )?;
        }
        for (position, (name, value)) in m.reported.iter().enumerate() {
            self.child(
                "INSERT INTO measurement_reported (measurement_id, position, name, value)
                 VALUES (?1, ?2, ?3, ?4)",
                params![measurement_id, position, name, self.real(*value, "reported value")?],
                twice(format!("reported figure {name:?}")),
            )?;
        }
        Ok(())
    }

    /// Inserts one row of a measurement's list; a unique violation is `on_duplicate`.
    fn child(
        &self,
        sql: &str,
        params: &[&dyn rusqlite::ToSql],
        on_duplicate: impl FnOnce() -> StoreError,
    ) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(sql)
            .and_then(|mut stmt| stmt.execute(params))
            .map(drop)
            .map_err(|e| unique_or(e, self.path, "insert a measurement's detail", on_duplicate))
    }

    fn what(&self) -> String {
        format!(
            "experiment {}, cell {:?}, repetition {}",
            self.exp, self.r.cell_key, self.r.repetition
        )
    }

    fn invalid(&self, detail: String) -> StoreError {
        invalid(self.what(), detail)
    }

    fn sqlite(&self, e: rusqlite::Error, context: &str) -> StoreError {
        StoreError::from_sqlite(self.path, format!("{}: {context}", self.what()), e)
    }

    /// A count as SQLite's INTEGER, which stops at `i64::MAX`.
    fn int(&self, v: u64, field: &str) -> Result<i64, StoreError> {
        i64::try_from(v).map_err(|_| self.invalid(format!("{field} {v} is above {}", i64::MAX)))
    }

    fn int_opt(&self, v: Option<u64>, field: &str) -> Result<Option<i64>, StoreError> {
        v.map(|v| self.int(v, field)).transpose()
    }

    /// A finite number: SQLite would store NaN as NULL and lose it.
    fn real(&self, v: f64, field: &str) -> Result<f64, StoreError> {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(self.invalid(format!("{field} is {v}, not a finite number")))
        }
    }

    fn real_opt(&self, v: Option<f64>, field: &str) -> Result<Option<f64>, StoreError> {
        v.map(|v| self.real(v, field)).transpose()
    }

    fn json(&self, argv: &[String]) -> Result<String, StoreError> {
        serde_json::to_string(argv)
            .map_err(|e| self.invalid(format!("a command line cannot be encoded: {e}")))
    }
}

fn invalid(what: String, detail: String) -> StoreError {
    StoreError::InvalidRecord { what, detail }
}

/// `on_duplicate()` for a UNIQUE or PRIMARY KEY violation, else the SQLite error.
fn unique_or(
    e: rusqlite::Error,
    path: &std::path::Path,
    context: &str,
    on_duplicate: impl FnOnce() -> StoreError,
) -> StoreError {
    let duplicate = e.sqlite_error().is_some_and(|err| {
        err.extended_code == ffi::SQLITE_CONSTRAINT_UNIQUE
            || err.extended_code == ffi::SQLITE_CONSTRAINT_PRIMARYKEY
    });
    if duplicate {
        on_duplicate()
    } else {
        StoreError::from_sqlite(path, context, e)
    }
}
