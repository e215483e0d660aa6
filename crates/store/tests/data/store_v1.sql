-- A results store as herd 0.1.0 wrote it at schema version 1: run after
-- migrations/0001_init.sql, and nothing later. tests/it/upgrade.rs opens it with today's
-- code, which must migrate it and read every value below back.
--
-- The histogram blob holds 40 × 95 µs, 55 × 130 µs and 5 × 2000 µs (HdrHistogram V2 +
-- DEFLATE, 1 µs to 1 h, 3 significant digits).

PRAGMA user_version = 1;
INSERT INTO store_meta (key, value) VALUES ('herd_version', '0.1.0');

INSERT INTO experiment (id, name, title, source, definition, plan, started_at, finished_at,
    status, herd_version, methodology_version, reference)
VALUES (7, 'lighttpd-2009', 'lighttpd against nginx, as in 2009', 'experiments/lighttpd.toml',
    '[experiment]
name = "lighttpd-2009"
', 'server=lighttpd load=c10
server=nginx load=c10
', '2025-12-24T08:00:00Z', '2025-12-24T08:04:30Z', 'done', '0.1.0', 1, NULL);

INSERT INTO experiment_axis VALUES (7, 0, 'server'), (7, 1, 'load');
INSERT INTO experiment_environment VALUES (7, 0, 'kernel', '6.1.0-18-amd64'), (7, 1, 'n_cpus', '2');

INSERT INTO cell (id, experiment_id, key) VALUES
    (1, 7, 'server=nginx load=c10'),
    (2, 7, 'server=lighttpd load=c10');
INSERT INTO cell_axis VALUES (1, 0, 'nginx'), (1, 1, 'c10'), (2, 0, 'lighttpd'), (2, 1, 'c10');

INSERT INTO repetition (id, cell_id, idx, position, started_at, finished_at, outcome,
    failure_reason, client_tool, client_version, client_argv, client_cpus, client_verdict,
    client_verdict_reason, client_health_json, server_cpu_seconds, time_wait_before,
    drain_seconds)
VALUES
    (1, 1, 0, 1, '2025-12-24T08:01:00Z', '2025-12-24T08:01:10Z', 'ok', NULL, 'ab', '2.3',
     '["ab","-n","100","-c","10","http://198.18.0.2/"]', '1', NULL, NULL, NULL, 0.5, 12, 1.5),
    (2, 1, 1, 0, '2025-12-24T08:02:00Z', '2025-12-24T08:02:01Z', 'failed',
     'nginx did not become ready on 198.18.0.2:80 within 5s', 'ab', '2.3', '[]', NULL, NULL,
     NULL, NULL, NULL, NULL, 0.0),
    (3, 2, 0, 0, '2025-12-24T08:03:00Z', '2025-12-24T08:03:10Z', 'ok', NULL, 'wrk', '4.2.0',
     '["wrk","-c","10","-d","10s"]', NULL, 'client-bound', 'client CPU at 98 %', '{"cpu":0.98}',
     0.75, NULL, 0.0);

INSERT INTO server (id, repetition_id, position, name, program, version, argv, cpus, cpu_seconds)
VALUES
    (1, 1, 0, 'nginx', '/usr/sbin/nginx', '1.22.1', '["nginx","-g","daemon off;"]', '0', 0.5),
    (2, 3, 0, 'lighttpd', '/usr/sbin/lighttpd', '1.4.69', '["lighttpd","-D"]', NULL, NULL);
INSERT INTO server_config VALUES (1, 0, '/tmp/herd/nginx.conf', 'worker_processes 1;
');

INSERT INTO measurement (id, repetition_id, step, label, concurrency, rate, duration_s,
    completed, failed, non_2xx, bytes_total, bytes_body, warmup_requests)
VALUES
    (1, 1, 0, 'c10', 10, NULL, 0.25, 100, 2, 1, 661700, 639700, 0),
    (2, 3, 0, 'c10', 10, NULL, 10.0, 250000, 0, 0, 1654250000, 1599250000, 0);
INSERT INTO measurement_failure VALUES (1, 0, 'length', 2);
INSERT INTO measurement_status VALUES (1, 0, 200, 99), (1, 1, 404, 1);
INSERT INTO histogram VALUES (1, 0, 'total',
    X'1C8493140000003B789C013000CFFF1C849313000000080000000000000003000000000000000100000000D693A4003FF0000000000000BD0150436E991D0A833F070E');
INSERT INTO measurement_reported VALUES (2, 0, 'latency_p50_us', 310.0), (2, 1, 'latency_p99_us', 2900.0);
