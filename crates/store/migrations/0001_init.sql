-- herd results store, schema version 1: experiments, their cells, each cell's repetitions
-- and what each repetition measured.
--
-- Counts are INTEGER (u64 values above i64::MAX are refused by the code), times are RFC 3339
-- UTC text, lists keep their order in a `position` column, and command lines are JSON arrays
-- of strings. Derived figures (requests per second) are not stored; readers compute them.
-- Applied by herd_store::migrate inside one transaction, which also sets user_version.

PRAGMA application_id = 1751478884; -- 0x68657264, "herd"

-- Facts about the store itself. `herd_version` is the herd that last changed the schema, so
-- that an older herd can say which version a newer store needs.
CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE experiment (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: users quote ids
    name                TEXT NOT NULL,
    title               TEXT NOT NULL,
    source              TEXT NOT NULL,    -- file path, or "bundled:<name>"
    definition          TEXT NOT NULL,    -- the experiment's TOML text, as run
    plan                TEXT NOT NULL,    -- the dry-run listing
    started_at          TEXT NOT NULL,
    finished_at         TEXT,
    status              TEXT NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
    herd_version        TEXT NOT NULL,
    methodology_version INTEGER NOT NULL,
    reference           TEXT              -- published figures (TOML), if any
) STRICT;

CREATE TABLE experiment_axis (
    experiment_id INTEGER NOT NULL REFERENCES experiment (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    name          TEXT NOT NULL,
    PRIMARY KEY (experiment_id, position),
    UNIQUE (experiment_id, name)
) STRICT;

CREATE TABLE experiment_environment (
    experiment_id INTEGER NOT NULL REFERENCES experiment (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    key           TEXT NOT NULL,
    value         TEXT NOT NULL,
    PRIMARY KEY (experiment_id, position)
) STRICT;

-- One point of the experiment's matrix, found again by its key on every repetition.
CREATE TABLE cell (
    id            INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiment (id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    UNIQUE (experiment_id, key)
) STRICT;

-- The cell's value on each axis; the axis name is experiment_axis at the same position.
CREATE TABLE cell_axis (
    cell_id  INTEGER NOT NULL REFERENCES cell (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (cell_id, position)
) STRICT;

CREATE TABLE repetition (
    id                 INTEGER PRIMARY KEY,
    cell_id            INTEGER NOT NULL REFERENCES cell (id) ON DELETE CASCADE,
    idx                INTEGER NOT NULL,  -- repetition index, 0-based
    position           INTEGER NOT NULL,  -- place in that round's shuffled order
    started_at         TEXT NOT NULL,
    finished_at        TEXT NOT NULL,
    outcome            TEXT NOT NULL CHECK (outcome IN ('ok', 'failed')),
    failure_reason     TEXT,
    client_tool        TEXT NOT NULL,
    client_version     TEXT NOT NULL,
    client_argv        TEXT NOT NULL,     -- JSON array of strings
    client_cpus        TEXT,
    client_verdict     TEXT,              -- ok | suspect | client-bound
    client_verdict_reason TEXT,
    client_health_json TEXT,
    server_cpu_seconds REAL,              -- all server processes, measured part only
    time_wait_before   INTEGER,
    drain_seconds      REAL NOT NULL,
    UNIQUE (cell_id, idx),
    CHECK ((outcome = 'failed') = (failure_reason IS NOT NULL))
) STRICT;

CREATE TABLE server (
    id             INTEGER PRIMARY KEY,
    repetition_id  INTEGER NOT NULL REFERENCES repetition (id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    name           TEXT NOT NULL,
    program        TEXT NOT NULL,
    version        TEXT NOT NULL,
    argv           TEXT NOT NULL,         -- JSON array of strings
    cpus           TEXT,
    cpu_seconds    REAL,
    UNIQUE (repetition_id, position)
) STRICT;

CREATE TABLE server_config (
    server_id INTEGER NOT NULL REFERENCES server (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    path      TEXT NOT NULL,
    text      TEXT NOT NULL,
    PRIMARY KEY (server_id, position)
) STRICT;

-- One measured load level: the whole repetition, or one client step of it.
CREATE TABLE measurement (
    id              INTEGER PRIMARY KEY,
    repetition_id   INTEGER NOT NULL REFERENCES repetition (id) ON DELETE CASCADE,
    step            INTEGER NOT NULL,
    label           TEXT NOT NULL,
    concurrency     INTEGER,
    rate            REAL,
    duration_s      REAL NOT NULL,
    completed       INTEGER NOT NULL,
    failed          INTEGER NOT NULL,
    non_2xx         INTEGER NOT NULL,
    bytes_total     INTEGER NOT NULL,
    bytes_body      INTEGER NOT NULL,
    warmup_requests INTEGER NOT NULL,
    UNIQUE (repetition_id, step)
) STRICT;

CREATE TABLE measurement_failure (
    measurement_id INTEGER NOT NULL REFERENCES measurement (id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    count          INTEGER NOT NULL,
    PRIMARY KEY (measurement_id, position),
    UNIQUE (measurement_id, kind)
) STRICT;

CREATE TABLE measurement_status (
    measurement_id INTEGER NOT NULL REFERENCES measurement (id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    status         INTEGER NOT NULL,
    count          INTEGER NOT NULL,
    PRIMARY KEY (measurement_id, position),
    UNIQUE (measurement_id, status)
) STRICT;

-- Latency histograms in µs, HdrHistogram V2 + DEFLATE, so any percentile can be recomputed.
CREATE TABLE histogram (
    measurement_id INTEGER NOT NULL REFERENCES measurement (id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    name           TEXT NOT NULL,         -- total, total_from_send, connect, first_byte, queued
    data           BLOB NOT NULL,
    PRIMARY KEY (measurement_id, position),
    UNIQUE (measurement_id, name)
) STRICT;

-- Figures a tool reported itself when it gives no histogram (wrk's percentiles).
CREATE TABLE measurement_reported (
    measurement_id INTEGER NOT NULL REFERENCES measurement (id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    name           TEXT NOT NULL,
    value          REAL NOT NULL,
    PRIMARY KEY (measurement_id, position),
    UNIQUE (measurement_id, name)
) STRICT;
