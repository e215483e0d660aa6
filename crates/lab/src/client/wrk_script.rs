//! The Lua script every lab run of wrk loads (`-s out_dir/wrk.lua`): a `done` function that
//! prints wrk's totals as `herd-wrk KEY VALUE` lines after its report, so that they are read
//! exactly instead of from wrk's rounded, unit-scaled text ("1.23k", "4.56MB"); and, for a
//! POST, the method, body (read from the file when wrk loads the script) and content type,
//! which wrk's command line cannot give.
//!
//! The script defines no `request` or `response` function: with either, wrk builds every
//! request or parses every response in Lua, which slows it down and would make it a
//! different client from the wrk people run. So it cannot count statuses one by one.

use std::fmt::Write as _;
use std::path::Path;

/// The prefix of every line the script prints.
pub(super) const PREFIX: &str = "herd-wrk ";

/// The script's keys, in the order `done` prints them. Counts, then latencies in µs
/// (wrk's `latency` is per request, in µs).
pub(super) const KEYS: [&str; 18] = [
    "requests",
    "bytes",
    "duration_us",
    "errors_connect",
    "errors_read",
    "errors_write",
    "errors_status",
    "errors_timeout",
    "latency_min_us",
    "latency_max_us",
    "latency_mean_us",
    "latency_stdev_us",
    "latency_p50_us",
    "latency_p75_us",
    "latency_p90_us",
    "latency_p99_us",
    "latency_p99.9_us",
    "requests_per_thread_mean",
];

/// The script: the POST body (file, content type) if any, then `done`.
pub(super) fn script(post: Option<(&Path, &str)>) -> String {
    let mut s = String::from(
        "-- Written by herd's lab (crates/lab/src/client/wrk_script.rs) for one run of wrk.\n",
    );
    if let Some((file, content_type)) = post {
        // Exit at once if the body cannot be read: wrk reports a script error and then runs
        // anyway, sending GETs.
        let _ = write!(
            s,
            r#"local body_file, err = io.open({file}, "rb")
if not body_file then
  io.stderr:write("herd-wrk: cannot read the body file: ", tostring(err), "\n")
  os.exit(2)
end
wrk.method = "POST"
wrk.body = body_file:read("*a")
body_file:close()
wrk.headers["Content-Type"] = {content_type}
"#,
            file = lua_string(file.as_os_str().as_encoded_bytes()),
            content_type = lua_string(content_type.as_bytes()),
        );
    }
    s.push_str(DONE);
    s
}

/// Prints the totals; `%.0f` for counts because LuaJIT's `%d` truncates beyond 32 bits.
const DONE: &str = r#"
function done(summary, latency, requests)
  local function line(key, format, value)
    io.write("herd-wrk ", key, " ", string.format(format, value), "\n")
  end
  local e = summary.errors
  line("requests", "%.0f", summary.requests)
  line("bytes", "%.0f", summary.bytes)
  line("duration_us", "%.0f", summary.duration)
  line("errors_connect", "%.0f", e.connect)
  line("errors_read", "%.0f", e.read)
  line("errors_write", "%.0f", e.write)
  line("errors_status", "%.0f", e.status)
  line("errors_timeout", "%.0f", e.timeout)
  line("latency_min_us", "%.0f", latency.min)
  line("latency_max_us", "%.0f", latency.max)
  line("latency_mean_us", "%.3f", latency.mean)
  line("latency_stdev_us", "%.3f", latency.stdev)
  for _, p in ipairs({ "50", "75", "90", "99", "99.9" }) do
    line("latency_p" .. p .. "_us", "%.0f", latency:percentile(tonumber(p)))
  end
  line("requests_per_thread_mean", "%.3f", requests.mean)
end
"#;

/// `bytes` as a Lua string literal: printable ASCII as is (but `"` and `\`), everything else
/// as a decimal escape, so that any path (any bytes) survives.
fn lua_string(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    for &b in bytes {
        if (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\' {
            s.push(char::from(b));
        } else {
            let _ = write!(s, "\\{b:03}");
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lua_strings_escape_what_lua_would_read_otherwise() {
        assert_eq!(lua_string(b"/tmp/a b.txt"), r#""/tmp/a b.txt""#);
        assert_eq!(lua_string(b"q\"\\\n\xff"), r#""q\034\092\010\255""#);
    }

    #[test]
    fn every_key_is_printed_by_done() {
        for key in KEYS {
            let printed = match key.strip_prefix("latency_p") {
                // The percentile lines are built in a loop.
                Some(rest) => DONE.contains(&format!("\"{}\"", rest.trim_end_matches("_us"))),
                None => DONE.contains(&format!("line(\"{key}\"")),
            };
            assert!(printed, "{key}");
        }
        assert!(DONE.contains(PREFIX));
    }

    #[test]
    fn a_get_script_is_only_done() {
        let s = script(None);
        assert!(!s.contains("wrk.method"));
        assert!(s.contains("function done(summary, latency, requests)"));
    }

    #[test]
    fn a_post_script_reads_its_body() {
        let s = script(Some((Path::new("/data/post body.bin"), "application/json")));
        assert!(s.contains(r#"io.open("/data/post body.bin", "rb")"#), "{s}");
        assert!(s.contains(r#"wrk.headers["Content-Type"] = "application/json""#), "{s}");
        assert!(s.contains("os.exit(2)"));
    }
}
