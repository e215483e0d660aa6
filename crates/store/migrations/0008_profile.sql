-- herd results store, schema version 8.
--
-- `profile`: the folded stacks (`a;b;c 12` lines, as inferno and FlameGraph read them) of
-- one profiled run of a cell (`[runner] profile = "perf"`). That run is not a repetition:
-- it is kept here, apart, so that no figure, interval or spread can include a run slowed by
-- the profiler; its requests per second are kept beside it only to show what profiling cost.
-- `weight` is what the stacks' counts add up to (each sample weighs its event's period).
-- Keyed by the cell's key, as a resumed lab run finds the cells still to profile.
CREATE TABLE profile (
    experiment_id       INTEGER NOT NULL REFERENCES experiment (id) ON DELETE CASCADE,
    cell_key            TEXT NOT NULL,
    tool                TEXT NOT NULL,
    recorded_at         TEXT NOT NULL,
    weight              INTEGER NOT NULL CHECK (weight >= 0),
    requests_per_second REAL,
    folded              TEXT NOT NULL,
    PRIMARY KEY (experiment_id, cell_key)
) STRICT;
