-- herd results store, schema version 10.
--
-- Which event-loop backend herd's client measured with (issue 35: `--io auto|epoll|uring`,
-- the lab's `[client] io`): `client_io` is `epoll` or `io_uring`, and `client_io_fallback`
-- the one line saying why `auto` did not take io_uring (NULL when nothing fell back). Both
-- NULL for clients that do not say (ab, wrk, h2load, a failed run), and in older stores.
ALTER TABLE repetition ADD COLUMN client_io TEXT;
ALTER TABLE repetition ADD COLUMN client_io_fallback TEXT;
