-- A results store at schema version 6 (run after migrations 0001 to 0006, nothing later)
-- holding one failed run for each way the lab of that version worded a failure, in its own
-- words, and one ok run. tests/it/upgrade.rs migrates it: migration 0007 must give each
-- failed run the kind its reason shows, `unknown` where none does, and none to the ok run.

PRAGMA user_version = 6;
INSERT INTO store_meta (key, value) VALUES ('herd_version', '0.1.0');

INSERT INTO experiment (id, name, title, source, definition, plan, started_at, finished_at,
    status, herd_version, methodology_version, reference)
VALUES (3, 'failures', 'every failure of schema 6', 'failures.toml', 'name = "failures"
', 'server=nginx load=c1
', '2026-10-01T08:00:00Z', '2026-10-01T08:10:00Z', 'done', '0.1.0', 1, NULL);
INSERT INTO experiment_axis VALUES (3, 0, 'server'), (3, 1, 'load');
INSERT INTO experiment_axis_value VALUES (3, 0, 0, 'nginx'), (3, 1, 0, 'c1');

INSERT INTO cell (id, experiment_id, key) VALUES (1, 3, 'server=nginx load=c1');
INSERT INTO cell_axis VALUES (1, 0, 'nginx'), (1, 1, 'c1');

-- idx: the kind migration 0007 must find (see upgrade.rs), in this order.
INSERT INTO repetition (id, cell_id, idx, position, started_at, finished_at, outcome,
    failure_reason, client_tool, client_version, client_argv, drain_seconds)
VALUES
    (1, 1, 0, 0, 't', 't', 'ok', NULL, 'herd', '0.1.0', '[]', 0.0),
    (2, 1, 1, 0, 't', 't', 'failed',
     'nginx did not become ready within 15s (cannot connect to 127.0.0.1:4000: Connection refused (os error 111)); its log: (empty)',
     'herd', '0.1.0', '[]', 0.0),
    (3, 1, 2, 0, 't', 't', 'failed',
     'php-fpm exited at start (exit status: 78): ERROR: unable to bind listening socket',
     'herd', '0.1.0', '[]', 0.0),
    (4, 1, 3, 0, 't', 't', 'failed',
     'nginx exited during the run (signal 9 (SIGKILL)): worker process exited',
     'herd', '0.1.0', '[]', 0.0),
    (5, 1, 4, 0, 't', 't', 'failed',
     'through the routed path from the client''s host: nginx did not become ready within 15s (cannot connect to 198.18.0.2:80: No route to host (os error 113)); its log: (empty)',
     'herd', '0.1.0', '[]', 0.0),
    (6, 1, 5, 0, 't', 't', 'failed',
     'through the haproxy-http path from the client''s host: haproxy exited at start (exit status: 1): [ALERT] cannot bind',
     'herd', '0.1.0', '[]', 0.0),
    (7, 1, 6, 0, 't', 't', 'failed',
     'verify: nginx answered GET /9x9.php with status 404 instead of 200 (body starts: "<html>")',
     'herd', '0.1.0', '[]', 0.0),
    (8, 1, 7, 0, 't', 't', 'failed',
     'the client ran past 70s and was stopped; stderr: (empty)',
     'herd', '0.1.0', '[]', 0.0),
    (9, 1, 8, 0, 't', 't', 'failed',
     'the warm-up run of ab ran past its time limit (signal 9 (SIGKILL)): (empty)',
     'ab', '2.3', '[]', 0.0),
    (10, 1, 9, 0, 't', 't', 'failed',
     'the warm-up run of ab failed (exit status: 22): apr_socket_recv: Connection refused (111)',
     'ab', '2.3', '[]', 0.0),
    (11, 1, 10, 0, 't', 't', 'failed',
     'client wrk (exit status: 1): wrk gave no summary; stderr: unable to connect',
     'wrk', '4.2.0', '[]', 0.0),
    (12, 1, 11, 0, 't', 't', 'failed',
     'cannot configure nginx: template nginx.conf: no value for @WORKERS@',
     'herd', '0.1.0', '[]', 0.0),
    (13, 1, 12, 0, 't', 't', 'failed',
     'no user www-data on this machine',
     'herd', '0.1.0', '[]', 0.0),
    (14, 1, 13, 0, 't', 't', 'failed',
     'Resource temporarily unavailable (os error 11)',
     'herd', '0.1.0', '[]', 0.0);
