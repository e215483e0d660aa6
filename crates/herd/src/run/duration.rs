//! Reads durations as users type them: `10s`, `500ms`, `2m`, `1h`, `250us`, `1.5s`; a bare
//! number is seconds. Used by clap for `-d`, `--timeout` and `--warmup`.

use std::time::Duration;

/// Parses `s`; the error says what is accepted.
pub(crate) fn parse(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("`{s}`: use a number with s, ms, us, m or h (e.g. 10s, 500ms)")),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{s}`: use a number with s, ms, us, m or h (e.g. 10s)"))?;
    let secs = value * scale;
    if !(secs.is_finite() && secs > 0.0 && secs <= 365.0 * 86_400.0) {
        return Err(format!("`{s}`: must be more than zero and at most a year"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("250us"), Ok(Duration::from_micros(250)));
        for bad in ["", "s", "10x", "-1s", "0", "1e3", "..s", "9999999h"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
