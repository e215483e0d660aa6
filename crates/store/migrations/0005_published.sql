-- herd results store, schema version 5.
--
-- The figures an article published, which the experiment re-runs (herd_store::Published
-- as JSON), so a report can show them beside today's. NULL when the experiment has none,
-- and in older stores.
ALTER TABLE experiment ADD COLUMN published_json TEXT;
