-- herd results store, schema version 7.
--
-- `repetition.failure_kind`: which step of a failed run failed (herd_store::RunFailureKind
-- as text: setup, server-not-ready, server-exited, path-unreachable, verify, client-failed,
-- client-timed-out, no-response), beside its reason, so a report can count failures by
-- kind. NULL exactly when the outcome is ok. The set of kinds is checked where the text is
-- read, not here: a CHECK added to a column cannot be changed later without rebuilding the
-- table.
ALTER TABLE repetition ADD COLUMN failure_kind TEXT;

-- Failed runs stored before version 7 get the kind their reason's words show, as the lab
-- of schema 6 wrote them; the others `unknown`. The order matters: a path's check wraps the
-- reason of the probe that failed ("through the routed path from the client's host: …"),
-- and a process that exited is named as such inside it.
UPDATE repetition SET failure_kind = CASE
    WHEN failure_reason LIKE '% exited at start (%'
      OR failure_reason LIKE '% exited during the run (%' THEN 'server-exited'
    WHEN failure_reason LIKE 'through the % path from the client''s host: %' THEN 'path-unreachable'
    WHEN failure_reason LIKE 'verify: %' THEN 'verify'
    WHEN failure_reason LIKE '% did not become ready %' THEN 'server-not-ready'
    WHEN failure_reason LIKE 'the client ran past % and was stopped%'
      OR failure_reason LIKE 'the warm-up run of % ran past its time limit (%' THEN 'client-timed-out'
    WHEN failure_reason LIKE 'the warm-up run of % failed (%'
      OR failure_reason LIKE 'client % (%): %' THEN 'client-failed'
    WHEN failure_reason LIKE 'cannot %'
      OR failure_reason LIKE 'no programs for this server'
      OR failure_reason LIKE 'no program located for %'
      OR failure_reason LIKE 'no expected answer for this workload'
      OR failure_reason LIKE 'no user % on this machine'
      OR failure_reason LIKE 'the driver started no process' THEN 'setup'
    ELSE 'unknown'
END
WHERE outcome = 'failed';
