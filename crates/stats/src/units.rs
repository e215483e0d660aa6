//! Units as users type them in flags and experiment files. Durations: `10s`, `500ms`, `2m`,
//! `1h`, `250us`, `1.5s`; a bare number is seconds. Used by herd run's flags and by the lab's
//! experiment files, so both accept the same spellings.

use std::time::Duration;

/// Parses `s`; the error says what is accepted.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
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
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        for bad in ["", "s", "10x", "-1s", "0", "1e3", "..s", "9999999h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
