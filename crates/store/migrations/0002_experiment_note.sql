-- herd results store, schema version 2.
--
-- `experiment.note`: why an experiment ended as it did ("interrupted after 37 of 120
-- cells", the error that failed it), written by finish_experiment and shown by the report.
-- Stores of version 1 get NULL, read back as no note.
ALTER TABLE experiment ADD COLUMN note TEXT;

-- One row per measurement with its experiment, cell and repetition, for people reading the
-- store with the sqlite3 shell. Requests per second are computed here, never stored.
CREATE VIEW measurement_row AS
SELECT
    e.id AS experiment_id,
    e.name AS experiment,
    c.key AS cell,
    r.idx AS repetition,
    r.outcome AS outcome,
    m.step AS step,
    m.label AS label,
    m.completed AS completed,
    m.failed AS failed,
    m.non_2xx AS non_2xx,
    m.duration_s AS duration_s,
    CASE WHEN m.duration_s > 0 THEN m.completed / m.duration_s END AS requests_per_second,
    r.server_cpu_seconds AS server_cpu_seconds,
    r.client_verdict AS client_verdict
FROM measurement m
JOIN repetition r ON r.id = m.repetition_id
JOIN cell c ON c.id = r.cell_id
JOIN experiment e ON e.id = c.experiment_id;
