//! What a path's links do to packets: a rate limit (tc tbf), and a delay and a loss rate (tc
//! netem, where the kernel has sch_netem). Written in an experiment's `link` axis as
//! `100mbit`, `100mbit,delay=20ms`, `delay=50ms,loss=0.5%` — no spaces, because the value is
//! part of a cell's key.

use std::fmt;
use std::time::Duration;

use herd_stats::units::BitRate;

/// How every link of a path is shaped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shaping {
    /// The rate (tbf); None: the link's own speed.
    pub rate: Option<BitRate>,
    /// Added to every packet each way (netem), so a round trip gains twice this.
    pub delay: Option<Duration>,
    /// Packets dropped at random, in parts per million (netem), each way.
    pub loss_ppm: Option<u32>,
}

/// Longest delay a link may add: beyond it, a run measures mostly waiting.
const MAX_DELAY: Duration = Duration::from_secs(10);

impl Shaping {
    /// Parses `100mbit`, `1.5mbit,delay=20ms`, `delay=500us,loss=0.1%` …: a rate as every
    /// bit rate herd reads is written (`herd_stats::units::BitRate`), `delay=` as every
    /// duration, `loss=` in percent.
    pub fn parse(text: &str) -> Result<Shaping, String> {
        let t = text.trim();
        if t.contains(char::is_whitespace) {
            return Err(format!(
                "`{text}`: write the parts with commas and no spaces, e.g. 100mbit,delay=20ms,loss=0.1%"
            ));
        }
        let mut s = Shaping { rate: None, delay: None, loss_ppm: None };
        for part in t.split(',') {
            let twice = |what: &str| format!("`{text}` gives the {what} twice");
            if let Some(d) = part.strip_prefix("delay=") {
                if s.delay.replace(delay(text, d)?).is_some() {
                    return Err(twice("delay"));
                }
            } else if let Some(l) = part.strip_prefix("loss=") {
                if s.loss_ppm.replace(loss(text, l)?).is_some() {
                    return Err(twice("loss"));
                }
            } else if let Some((key, _)) = part.split_once('=') {
                return Err(format!(
                    "`{text}`: `{key}` is not a link setting: a link takes a rate (100mbit), delay= and loss="
                ));
            } else if s.rate.replace(rate(text, part)?).is_some() {
                return Err(twice("rate"));
            }
        }
        Ok(s)
    }

    /// Whether it needs tc netem (a delay or a loss rate), which not every kernel has.
    pub fn needs_netem(&self) -> bool {
        self.delay.is_some() || self.loss_ppm.is_some()
    }

    /// The rate as tc reads it, in the largest whole unit (`BitRate`'s own spelling).
    pub fn rate_text(&self) -> Option<String> {
        self.rate.map(|r| r.to_string())
    }

    /// The rate in bits per second.
    pub fn rate_bits(&self) -> Option<u64> {
        self.rate.map(BitRate::bits_per_second)
    }

    /// The netem arguments after `netem`: `delay 20ms loss 0.5%`, as tc reads them.
    pub fn netem_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(d) = self.delay {
            out.extend(["delay".to_owned(), format!("{}us", d.as_micros())]);
        }
        if let Some(ppm) = self.loss_ppm {
            out.extend(["loss".to_owned(), percent(ppm)]);
        }
        out
    }
}

/// `100mbit, delay 20ms, loss 0.5%`, for people.
impl fmt::Display for Shaping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(r) = self.rate_text() {
            parts.push(r);
        }
        if let Some(d) = self.delay {
            parts.push(format!("delay {:?}", d));
        }
        if let Some(ppm) = self.loss_ppm {
            parts.push(format!("loss {}", percent(ppm)));
        }
        f.write_str(&parts.join(", "))
    }
}

fn percent(ppm: u32) -> String {
    let text = format!("{:.4}", f64::from(ppm) / 10_000.0);
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

/// Most a link is shaped to: tc's tbf takes rates up to 400 gbit/s here.
const MAX_RATE_BITS: u64 = 400_000_000_000;

fn rate(text: &str, part: &str) -> Result<BitRate, String> {
    let rate: BitRate = part.parse().map_err(|why: String| {
        format!("`{text}`: {why}; a link also takes delay=20ms and loss=0.1%")
    })?;
    if rate.bits_per_second() > MAX_RATE_BITS {
        return Err(format!("`{text}`: `{part}` is beyond 400gbit"));
    }
    Ok(rate)
}

/// A delay as every duration herd reads is written (`herd_stats::units`: `20ms`, `0.5ms`,
/// `250us`), to netem's microsecond.
fn delay(text: &str, d: &str) -> Result<Duration, String> {
    // A bare number would be seconds, as elsewhere; for a link's delay that is a typo.
    if d.ends_with(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "`{text}`: delay=`{d}` is not a delay: give its unit, e.g. delay=20ms"
        ));
    }
    let delay = herd_stats::units::parse_duration(d)
        .map_err(|why| format!("`{text}`: delay=`{d}`: {why}"))?;
    if delay.as_micros() == 0 || delay > MAX_DELAY {
        return Err(format!(
            "`{text}`: delay must be at least 1us and at most {}s",
            MAX_DELAY.as_secs()
        ));
    }
    Ok(Duration::from_micros(delay.as_micros() as u64))
}

fn loss(text: &str, l: &str) -> Result<u32, String> {
    let bad = || {
        format!("`{text}`: loss=`{l}` is not a loss rate: write a percentage above 0 and below 100, e.g. loss=0.1%")
    };
    let p: f64 = l.strip_suffix('%').ok_or_else(bad)?.parse().map_err(|_| bad())?;
    if !(p > 0.0 && p < 100.0) {
        return Err(bad());
    }
    // Parts per million: netem's own resolution is finer, a benchmark's need is not. A
    // finer rate is refused, not rounded: the cell's key keeps the text as written.
    let ppm = p * 10_000.0;
    if ppm.fract() != 0.0 && (ppm - ppm.round()).abs() > 1e-6 {
        return Err(format!(
            "`{text}`: loss=`{l}` is finer than herd sets it: give at most four decimals, e.g. loss=0.0001%"
        ));
    }
    Ok(ppm.round() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_as_tc_writes_them() {
        assert_eq!(Shaping::parse("100mbit").unwrap().rate_bits(), Some(100_000_000));
        assert_eq!(Shaping::parse("1gbit").unwrap().rate_text().as_deref(), Some("1gbit"));
        assert_eq!(Shaping::parse("1500kbit").unwrap().rate_text().as_deref(), Some("1500kbit"));
        // As every bit rate herd reads: `--bandwidth 1.5mbit` and `link = "1.5mbit"` agree.
        assert_eq!(Shaping::parse("1.5mbit").unwrap().rate_text().as_deref(), Some("1500kbit"));
        assert_eq!(
            Shaping::parse("1.5mbit").unwrap().rate,
            Some("1.5mbit".parse::<BitRate>().unwrap())
        );
        assert!(Shaping::parse("401gbit").unwrap_err().contains("beyond 400gbit"));
        assert!(!Shaping::parse("100mbit").unwrap().needs_netem());
        for bad in ["100", "100Mbps", "mbit", "0mbit", "-5mbit", "999999gbit", ""] {
            assert!(Shaping::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn delay_and_loss_are_netem_arguments() {
        let s = Shaping::parse("100mbit,delay=20ms,loss=0.5%").unwrap();
        assert_eq!(s.rate_bits(), Some(100_000_000));
        assert_eq!(s.delay, Some(Duration::from_millis(20)));
        assert_eq!(s.loss_ppm, Some(5_000));
        assert!(s.needs_netem());
        assert_eq!(s.netem_args(), ["delay", "20000us", "loss", "0.5%"]);
        assert_eq!(s.to_string(), "100mbit, delay 20ms, loss 0.5%");
        let d = Shaping::parse("delay=250us").unwrap();
        assert_eq!((d.rate_bits(), d.netem_args()), (None, vec!["delay".into(), "250us".into()]));
        assert_eq!(Shaping::parse("loss=0.0001%").unwrap().netem_args(), ["loss", "0.0001%"]);
    }

    #[test]
    fn bad_parts_say_what_is_accepted() {
        let cases = [
            ("100mbit delay 20ms", "commas and no spaces"),
            ("delay=20", "not a delay"),
            ("delay=0ms", "must be more than zero"),
            ("delay=0.1us", "at least 1us"),
            ("delay=fast", "delay=`fast`: "),
            ("delay=11000ms", "at most 10s"),
            ("loss=1", "not a loss rate"),
            ("loss=100%", "not a loss rate"),
            ("loss=0%", "not a loss rate"),
            ("100mbit,1gbit", "gives the rate twice"),
            ("delay=1ms,delay=2ms", "gives the delay twice"),
            (
                "jitter=5ms",
                "`jitter` is not a link setting: a link takes a rate (100mbit), delay= and loss=",
            ),
            ("loss=0.00001%", "finer than herd sets it"),
        ];
        for (text, want) in cases {
            let e = Shaping::parse(text).unwrap_err();
            assert!(e.contains(want), "{text}: want {want:?} in {e}");
        }
    }
}
