-- herd results store, schema version 5.
--
-- The figures an article published, which the experiment re-runs (herd_store::Published
-- as JSON), so a report can show them beside today's. NULL when the experiment has none,
-- and in older stores. (The `reference` column of 0001 holds the comparison's key, such as
-- `seed001`, not its figures, whatever 0001's comment says.)
ALTER TABLE experiment ADD COLUMN published_json TEXT;
