//! The small value syntaxes of `herd run`'s flags beyond the units of `herd_stats::units`:
//! ranges of counts (`5-15`), think times (`1s`, `exp:1s`) and lists of source addresses
//! (`127.0.0.2-127.0.0.50,::1`). Each parser's error says what is accepted; each has its
//! inverse in `plan.rs`'s argv builder.

use std::net::{IpAddr, Ipv4Addr};

use herd_engine::Think;
use herd_stats::units::TimeSpan;

/// `N` or `LO-HI` (inclusive), each at least 1.
pub fn parse_range(s: &str) -> Result<(u32, u32), String> {
    let help = || format!("`{s}`: a count (10) or a range (5-15), at least 1");
    let (lo, hi) = match s.split_once('-') {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (s.trim(), s.trim()),
    };
    let lo: u32 = lo.parse().map_err(|_| help())?;
    let hi: u32 = hi.parse().map_err(|_| help())?;
    if lo == 0 || hi < lo {
        return Err(help());
    }
    Ok((lo, hi))
}

/// `DURATION` (fixed) or `exp:DURATION` (exponentially distributed with that mean).
pub fn parse_think(s: &str) -> Result<Think, String> {
    let t = s.trim();
    match t.strip_prefix("exp:") {
        Some(mean) => mean.parse::<TimeSpan>().map(|d| Think::Exponential(d.get())),
        None => t.parse::<TimeSpan>().map(|d| Think::Fixed(d.get())),
    }
    .map_err(|e| format!("{e}; a think time is a duration (1s) or exp:MEAN (exp:1s)"))
}

/// Most source addresses `--bind` takes.
pub const MAX_BIND: usize = 65_536;

/// The source addresses of `--bind` (a newtype, so that clap takes the list as one value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindList(pub Vec<IpAddr>);

/// `ADDR[,ADDR…]`, where an IPv4 item may be a range `127.0.0.2-127.0.0.50`.
pub fn parse_bind(s: &str) -> Result<BindList, String> {
    parse_bind_list(s).map(BindList)
}

fn parse_bind_list(s: &str) -> Result<Vec<IpAddr>, String> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b): (Ipv4Addr, Ipv4Addr) = match (a.trim().parse(), b.trim().parse()) {
                    (Ok(a), Ok(b)) => (a, b),
                    _ => {
                        return Err(format!(
                            "`{item}`: a range is two IPv4 addresses, e.g. 127.0.0.2-127.0.0.50"
                        ))
                    }
                };
                let (lo, hi) = (u32::from(a), u32::from(b));
                if hi < lo {
                    return Err(format!("`{item}`: the range runs backwards"));
                }
                if (hi - lo) as usize >= MAX_BIND {
                    return Err(format!("`{item}`: at most {MAX_BIND} addresses"));
                }
                out.extend((lo..=hi).map(|v| IpAddr::V4(Ipv4Addr::from(v))));
            }
            None => out.push(item.parse().map_err(|_| {
                format!("`{item}` is not an IP address (e.g. 127.0.0.2, or 127.0.0.2-127.0.0.50)")
            })?),
        }
        if out.len() > MAX_BIND {
            return Err(format!("at most {MAX_BIND} source addresses"));
        }
    }
    if out.is_empty() {
        return Err("give at least one source address, e.g. 127.0.0.2-127.0.0.50".to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("10"), Ok((10, 10)));
        assert_eq!(parse_range("5-15"), Ok((5, 15)));
        assert!(parse_range("0").is_err());
        assert!(parse_range("9-3").is_err());
        assert!(parse_range("a-b").unwrap_err().contains("5-15"));
    }

    #[test]
    fn think_times() {
        use std::time::Duration;
        assert_eq!(parse_think("200ms"), Ok(Think::Fixed(Duration::from_millis(200))));
        assert_eq!(parse_think("exp:1s"), Ok(Think::Exponential(Duration::from_secs(1))));
        assert!(parse_think("exp:").unwrap_err().contains("exp:MEAN"));
    }

    #[test]
    fn bind_lists() {
        let v = parse_bind_list("127.0.0.2-127.0.0.4,::1, 127.0.0.9").unwrap();
        let s: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(s, ["127.0.0.2", "127.0.0.3", "127.0.0.4", "::1", "127.0.0.9"]);
        assert_eq!(parse_bind_list("127.0.0.2-127.0.0.50").unwrap().len(), 49);
        assert!(parse_bind_list("127.0.0.5-127.0.0.2").unwrap_err().contains("backwards"));
        assert!(parse_bind_list("localhost").unwrap_err().contains("not an IP address"));
        assert!(parse_bind_list(",").is_err());
        assert!(parse_bind_list("0.0.0.0-255.255.255.255").unwrap_err().contains("at most"));
    }
}
