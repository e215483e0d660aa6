-- herd results store, schema version 11.
--
-- The trace id herd's client sent in every request's `traceparent` (issue 36: `[client]
-- trace_context = true`, `herd run --trace-context`): 32 hex digits, a new one each
-- repetition, to join a server's traces and logs to the repetition that caused them. NULL for
-- clients that send none (ab, wrk, h2load), for runs without it, and in older stores.
ALTER TABLE repetition ADD COLUMN client_trace_id TEXT;
