-- Written by herd's lab (crates/lab/src/client/wrk_script.rs) for one run of wrk.

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
