-- herd results store, schema version 3.
--
-- The client's verdict on each measurement: a stepped run is judged step by step (the
-- 1-client step can be ok while the 512-client step was client-bound). NULL where the
-- verdict is the repetition's only (stores of version 2, and clients judged on the whole
-- run): readers then use repetition.client_verdict.
ALTER TABLE measurement ADD COLUMN client_verdict TEXT;
ALTER TABLE measurement ADD COLUMN client_verdict_reason TEXT;
