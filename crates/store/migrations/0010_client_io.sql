-- herd results store, schema version 10.
--
-- Which event-loop backend herd's client measured with (issue 35: `--io auto|epoll|uring`,
-- the lab's `[client] io`): `client_io` is `epoll` or `io_uring`, and `client_io_fallback`
-- the one line saying why `auto` did not take io_uring (NULL when nothing fell back). Both
-- NULL for clients that do not say (ab, wrk, h2load, a failed run), and in older stores.
ALTER TABLE repetition ADD COLUMN client_io TEXT;
ALTER TABLE repetition ADD COLUMN client_io_fallback TEXT;

-- The sqlite3 shell's one row per measurement says it too, beside the client's verdict.
DROP VIEW measurement_row;
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
    r.client_verdict AS client_verdict,
    r.client_io AS client_io
FROM measurement m
JOIN repetition r ON r.id = m.repetition_id
JOIN cell c ON c.id = r.cell_id
JOIN experiment e ON e.id = c.experiment_id;
