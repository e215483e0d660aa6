//! Splits a `herd run` URL into scheme, host, port and request target. Only `http://` and
//! `https://`; IPv6 literals in brackets; the port defaults to 80 or 443; the target keeps the
//! path and query as given (no normalisation: load tools send what they are told) and is `/`
//! when empty. A fragment is dropped, as browsers and curl do. Does not resolve names (the
//! engine's `Target::resolve` does, with the safety rule).

/// A parsed URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunUrl {
    /// As given.
    pub text: String,
    pub tls: bool,
    /// As written, without brackets for IPv6.
    pub host: String,
    pub port: u16,
    /// Path and query, starting with `/`.
    pub target: String,
    /// The Host header's value: host, bracketed for IPv6, with the port unless default.
    pub authority: String,
}

/// Parses `raw`, or says what is wrong with it.
pub fn parse(raw: &str) -> Result<RunUrl, String> {
    let (tls, rest) = if let Some(r) = strip_scheme(raw, "http://") {
        (false, r)
    } else if let Some(r) = strip_scheme(raw, "https://") {
        (true, r)
    } else {
        return Err(format!("`{raw}`: the URL must start with http:// or https://"));
    };
    let rest = rest.split('#').next().unwrap_or_default();
    let (authority, target) = match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('/') => (&rest[..i], rest[i..].to_owned()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_owned()),
    };
    if authority.contains('@') {
        return Err(format!("`{raw}`: user names and passwords in URLs are not supported"));
    }
    let default_port = if tls { 443 } else { 80 };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("`{raw}`: an IPv6 address needs its closing `]`"))?;
        match after {
            "" => (host, default_port),
            p => (host, port_of(raw, p.strip_prefix(':').unwrap_or("?"))?),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, port_of(raw, p)?),
            None => (authority, default_port),
        }
    };
    if host.is_empty() {
        return Err(format!("`{raw}`: the URL has no host"));
    }
    let bracketed = if host.contains(':') { format!("[{host}]") } else { host.to_owned() };
    let authority = if port == default_port { bracketed } else { format!("{bracketed}:{port}") };
    Ok(RunUrl { text: raw.to_owned(), tls, host: host.to_owned(), port, target, authority })
}

impl std::str::FromStr for RunUrl {
    type Err = String;

    fn from_str(s: &str) -> Result<RunUrl, String> {
        parse(s)
    }
}

impl std::fmt::Display for RunUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn strip_scheme<'a>(raw: &'a str, scheme: &str) -> Option<&'a str> {
    let head = raw.get(..scheme.len())?;
    head.eq_ignore_ascii_case(scheme).then(|| &raw[scheme.len()..])
}

fn port_of(raw: &str, p: &str) -> Result<u16, String> {
    match p.parse::<u16>() {
        Ok(port) if port > 0 => Ok(port),
        _ => Err(format!("`{raw}`: `{p}` is not a port (1 to 65535)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = parse("http://127.0.0.1:8080/a?b=1#frag").unwrap();
        assert_eq!(
            (u.tls, u.host.as_str(), u.port, u.target.as_str()),
            (false, "127.0.0.1", 8080, "/a?b=1")
        );
        assert_eq!(u.authority, "127.0.0.1:8080");
        let u = parse("HTTPS://localhost").unwrap();
        assert_eq!(
            (u.tls, u.port, u.target.as_str(), u.authority.as_str()),
            (true, 443, "/", "localhost")
        );
        let u = parse("http://[::1]:9/x").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.authority.as_str()), ("::1", 9, "[::1]:9"));
        assert_eq!(parse("http://h?q").unwrap().target, "/?q");
    }

    #[test]
    fn bad_urls_say_why() {
        for (raw, why) in [
            ("ftp://h/", "must start with http"),
            ("127.0.0.1/", "must start with http"),
            ("http:///x", "has no host"),
            ("http://h:0/", "is not a port"),
            ("http://h:99999/", "is not a port"),
            ("http://h:x/", "is not a port"),
            ("http://[::1/", "closing"),
            ("http://u:p@h/", "passwords"),
        ] {
            let e = parse(raw).unwrap_err();
            assert!(e.contains(why), "{raw}: {e}");
        }
    }
}
