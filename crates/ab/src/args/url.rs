//! ab's `parse_url` and `-X proxy:port`, with herd refusing up front what ab would only
//! trip over later (a host named `ftp:` or `user@host`, a proxy on port 0).

use std::net::{Ipv4Addr, Ipv6Addr};

use super::num::atoi;
use crate::config::AbUrl;

/// Splits a URL the way ab's `parse_url` does; the error is the reason, for
/// `ArgsError::InvalidUrl`.
///
/// ab: the scheme is optional (`127.0.0.1/` is http), matched case-sensitively and only when
/// something follows it (`strlen(url) > 7`); a `/` must follow the host ("invalid URL"
/// otherwise); host and port go through `apr_parse_addr_port`, which takes `[v6]` in brackets,
/// refuses scope ids, port 0 and ports over 65535.
pub(crate) fn parse_url(raw: &[u8]) -> Result<AbUrl, String> {
    let full = String::from_utf8_lossy(raw).into_owned();
    let (rest, tls) = if raw.len() > 7 && raw.starts_with(b"http://") {
        (&raw[7..], false)
    } else if raw.len() > 8 && raw.starts_with(b"https://") {
        (&raw[8..], true)
    } else {
        (raw, false)
    };
    let slash = rest.iter().position(|&b| b == b'/');
    let authority = &rest[..slash.unwrap_or(rest.len())];
    if rest.len() == raw.len() && contains(raw, b"://") {
        // ab would take "ftp:" or "HTTP:" as the host name and fail to resolve it.
        return Err("the scheme must be http:// or https:// (lowercase), or left out".into());
    }
    let Some(slash) = slash else {
        return Err("no path after the host: add at least \"/\" (ab requires it)".into());
    };
    let path = &rest[slash..];
    if authority.contains(&b'@') {
        return Err("user:password@ in the URL is not supported; use -A user:password".into());
    }
    let (host, port) = parse_addr_port(authority)?;
    let port = match port {
        Some(p) => p,
        None if tls => 443,
        None => 80,
    };
    Ok(AbUrl {
        tls,
        hostname: String::from_utf8_lossy(host).into_owned(),
        port,
        path: String::from_utf8_lossy(path).into_owned(),
        full,
    })
}

/// The `Host:` value ab sends by default: `host_field` then `colonhost` — the host (IPv6 back
/// in brackets) and `:port` unless the port is the scheme's default.
pub(crate) fn host_header(url: &AbUrl) -> String {
    let host = if url.hostname.contains(':') {
        // Only a bracketed IPv6 literal gets here: parse_url refuses other colons.
        format!("[{}]", url.hostname)
    } else {
        url.hostname.clone()
    };
    let default_port = if url.tls { 443 } else { 80 };
    if url.port == default_port {
        host
    } else {
        format!("{host}:{}", url.port)
    }
}

/// `-X proxy:port`. ab splits at the first ':' and reads the port with atoi, and never
/// complains: a missing port means port 0 and a failed connection at run time. herd takes the
/// same form, also `[v6]:port`, and refuses a missing host or a port outside 1..65535.
pub(crate) fn parse_proxy(value: &[u8]) -> Result<(String, u16), String> {
    let (host, port_text) = if let Some(rest) = value.strip_prefix(b"[") {
        let close = rest
            .iter()
            .position(|&b| b == b']')
            .ok_or_else(|| "unterminated '[' in an IPv6 proxy address".to_string())?;
        let after = &rest[close + 1..];
        let Some(port) = after.strip_prefix(b":") else {
            return Err("no port: ab needs one (it would connect to port 0)".into());
        };
        (&rest[..close], port)
    } else {
        let Some(colon) = value.iter().position(|&b| b == b':') else {
            return Err("no port: ab needs one (it would connect to port 0)".into());
        };
        (&value[..colon], &value[colon + 1..])
    };
    if host.is_empty() {
        return Err("no proxy host".into());
    }
    let port = u16::try_from(atoi(port_text)).ok().filter(|&p| p != 0).ok_or_else(|| {
        format!("bad port \"{}\": use 1 to 65535", String::from_utf8_lossy(port_text))
    })?;
    Ok((String::from_utf8_lossy(host).into_owned(), port))
}

/// Whether `apr_ipsubnet_create(&ip, name, NULL)` succeeds, which is ab's test for "IP not
/// allowed in TLS SNI extension": IPv4 and IPv6 literals (not IPv4-mapped ones, which APR
/// refuses), and the legacy partial IPv4 forms `10`, `10.1`, `10.1.2.` that APR takes for
/// networks.
pub(crate) fn apr_is_ip(name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    if name.contains(':') {
        return match name.parse::<Ipv6Addr>() {
            Ok(v6) => v6.to_ipv4_mapped().is_none(),
            Err(_) => false,
        };
    }
    if !name.bytes().all(|b| b == b'.' || b.is_ascii_digit()) {
        return false;
    }
    if name.parse::<Ipv4Addr>().is_ok() {
        return true;
    }
    // APR's parse_network: up to four dot-terminated decimal octets, each 0..255.
    if name.len() > "255.255.255.255".len() {
        return false;
    }
    let mut octets = 0;
    let mut rest = name;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        if atoi(&rest.as_bytes()[..digits]) > 255 {
            return false;
        }
        octets += 1;
        if octets > 4 {
            return false;
        }
        rest = &rest[digits..];
        if let Some(after_dot) = rest.strip_prefix('.') {
            rest = after_dot;
        }
    }
    true
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `apr_parse_addr_port` for what ab accepts, plus herd's refusals of hosts that only look
/// valid to APR (`host:abc`, an empty host, an unbracketed IPv6 address).
///
/// Returns the host (without brackets) and the port if one was given.
fn parse_addr_port(s: &[u8]) -> Result<(&[u8], Option<u16>), String> {
    // APR: trailing digits preceded by ':' are the port; all digits is a port without host.
    let digits = s.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (addr, port) = if digits == 0 {
        (s, None)
    } else if digits == s.len() {
        return Err("no host name before the port".into());
    } else if s[s.len() - digits - 1] == b':' {
        let port_text = &s[s.len() - digits..];
        let port = atoi(port_text);
        let port = u16::try_from(port).ok().filter(|&p| p != 0).ok_or_else(|| {
            format!("bad port {}: use 1 to 65535", String::from_utf8_lossy(port_text))
        })?;
        (&s[..s.len() - digits - 1], Some(port))
    } else {
        (s, None)
    };
    if let Some(inner) = addr.strip_prefix(b"[") {
        let Some(inner) = inner.strip_suffix(b"]") else {
            return Err("unterminated or misplaced ']' in an IPv6 address".into());
        };
        if inner.contains(&b'%') {
            // APR parses the scope id and ab then refuses any ("|| scope_id").
            return Err("IPv6 scope ids (%name) are not supported".into());
        }
        let text = std::str::from_utf8(inner).map_err(|_| "bad IPv6 address".to_string())?;
        if text.parse::<Ipv6Addr>().is_err() {
            return Err(format!("[{text}] is not an IPv6 address"));
        }
        return Ok((inner, port));
    }
    if addr.is_empty() {
        return Err("no host name".into());
    }
    if addr.contains(&b':') {
        let text = String::from_utf8_lossy(addr);
        let whole = String::from_utf8_lossy(s);
        if whole.parse::<Ipv6Addr>().is_ok() || text.parse::<Ipv6Addr>().is_ok() {
            return Err(format!("an IPv6 address needs brackets: [{whole}]"));
        }
        // APR keeps "host:abc" whole as the host name; ab then fails to resolve it.
        return Err(format!("bad port in \"{whole}\": use host:1 to host:65535"));
    }
    Ok((addr, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> AbUrl {
        match parse_url(s.as_bytes()) {
            Ok(u) => u,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn http_with_port() {
        let u = url("http://example.com:8080/a?b=c");
        assert_eq!(
            (u.tls, u.hostname.as_str(), u.port, u.path.as_str()),
            (false, "example.com", 8080, "/a?b=c")
        );
        assert_eq!(u.full, "http://example.com:8080/a?b=c");
    }

    #[test]
    fn https_default_port() {
        let u = url("https://example.com/");
        assert_eq!((u.tls, u.port), (true, 443));
    }

    #[test]
    fn no_scheme_is_http() {
        let u = url("127.0.0.1/x");
        assert_eq!(
            (u.tls, u.hostname.as_str(), u.port, u.path.as_str()),
            (false, "127.0.0.1", 80, "/x")
        );
        assert_eq!(u.full, "127.0.0.1/x");
    }

    #[test]
    fn ipv6_brackets() {
        let u = url("http://[::1]:8080/");
        assert_eq!((u.hostname.as_str(), u.port), ("::1", 8080));
        assert_eq!(host_header(&u), "[::1]:8080");
        assert_eq!(host_header(&url("http://[::1]/")), "[::1]");
    }

    #[test]
    fn host_header_omits_default_port_only() {
        assert_eq!(host_header(&url("http://h:80/")), "h");
        assert_eq!(host_header(&url("https://h:80/")), "h:80");
        assert_eq!(host_header(&url("https://h:443/")), "h");
        assert_eq!(host_header(&url("http://h:443/")), "h:443");
    }

    #[test]
    fn port_with_leading_zeros() {
        assert_eq!(url("http://h:0080/").port, 80);
    }

    #[test]
    fn path_is_kept_raw() {
        assert_eq!(url("http://h/a b#frag").path, "/a b#frag");
    }

    #[test]
    fn errors() {
        for bad in [
            "http://h",
            "h",
            "http:///",
            "http://:80/",
            "http://8080/",
            "http://h:0/",
            "http://h:65536/",
            "http://h:abc/",
            "http://h:/",
            "http://u:p@h/",
            "http://[::1/",
            "http://[fe80::1%eth0]/",
            "http://[1.2.3.4]/",
            "http://::1/",
            "ftp://h/",
            "HTTP://h/",
            "http://",
        ] {
            assert!(parse_url(bad.as_bytes()).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn proxy_forms() {
        assert_eq!(parse_proxy(b"p:3128"), Ok(("p".into(), 3128)));
        assert_eq!(parse_proxy(b"p:3128abc"), Ok(("p".into(), 3128)));
        assert_eq!(parse_proxy(b"[::1]:3128"), Ok(("::1".into(), 3128)));
        for bad in [&b"p"[..], b"p:", b"p:0", b"p:70000", b":80", b"[::1]", b"[::1"] {
            assert!(parse_proxy(bad).is_err());
        }
    }

    #[test]
    fn sni_ip_test() {
        for ip in ["127.0.0.1", "::1", "10", "10.1", "10.1.2.", "0"] {
            assert!(apr_is_ip(ip), "{ip}");
        }
        for name in
            ["", "example.com", "[::1]", "::ffff:1.2.3.4", "256", "1.2.3.4.5", "1..2", "h:1"]
        {
            assert!(!apr_is_ip(name), "{name}");
        }
    }
}
