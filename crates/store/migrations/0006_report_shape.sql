-- herd results store, schema version 6.
--
-- What a report needs to show an experiment in its own shape:
-- - each axis's values in the order the experiment declared them (sweeps expanded, the
--   lab's calibration server last), so tables list `direct` before `routed` as the file
--   did, and "the first value of the first axis" means what the file says. Stores before
--   version 6 have none; reports fall back to the values' natural order.
-- - the experiment's own choice of baseline (`[report] baseline`, an axis and one of its
--   values) and of the measure its tables show (`[report] measure`, a herd_store::Measure
--   key). NULL where it made none, and in older stores.
CREATE TABLE experiment_axis_value (
    experiment_id INTEGER NOT NULL REFERENCES experiment (id) ON DELETE CASCADE,
    axis_position INTEGER NOT NULL,
    position      INTEGER NOT NULL,
    label         TEXT NOT NULL,
    PRIMARY KEY (experiment_id, axis_position, position),
    UNIQUE (experiment_id, axis_position, label)
) STRICT;

ALTER TABLE experiment ADD COLUMN report_baseline_axis TEXT;
ALTER TABLE experiment ADD COLUMN report_baseline_value TEXT;
ALTER TABLE experiment ADD COLUMN report_measure TEXT;
