//! One host as the experiment file names it, `ssh://[user@]host[:port]`, read strictly: the
//! user and host become ssh's arguments, so neither may start with `-` (it would be read as
//! an option) nor hold anything but the characters user and host names have.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A host reached over SSH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostUrl {
    /// None: ssh's own choice (the ssh_config's `User`, else the local user's name).
    pub user: Option<String>,
    /// A name or an address, IPv6 without its brackets.
    pub host: String,
    /// None: ssh's own choice (the ssh_config's `Port`, else 22).
    pub port: Option<u16>,
}

/// Why a host URL was refused; the message says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{url}`: {why}; write ssh://[user@]host[:port]")]
pub struct UrlError {
    pub url: String,
    pub why: String,
}

impl HostUrl {
    /// The same machine as `other`: the same host and port, whoever logs in.
    pub fn same_machine(&self, other: &HostUrl) -> bool {
        self.host.eq_ignore_ascii_case(&other.host)
            && self.port.unwrap_or(22) == other.port.unwrap_or(22)
    }
}

impl FromStr for HostUrl {
    type Err = UrlError;

    fn from_str(url: &str) -> Result<HostUrl, UrlError> {
        let err = |why: &str| UrlError { url: url.to_owned(), why: why.to_owned() };
        let rest = url.strip_prefix("ssh://").ok_or_else(|| {
            err(if url.contains("://") {
                "only ssh:// hosts are supported"
            } else {
                "not an ssh:// URL"
            })
        })?;
        if rest.contains(['/', '?', '#']) {
            return Err(err("a host has no path, query or fragment"));
        }
        let (user, hostport) = match rest.split_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        if let Some(u) = user {
            let ok = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
            if u.is_empty() || u.starts_with('-') || !u.chars().all(ok) {
                return Err(err(
                    "the user must be letters, digits, ., _ and -, not starting with -",
                ));
            }
        }
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (addr, after) =
                v6.split_once(']').ok_or_else(|| err("an IPv6 address lacks its ]"))?;
            addr.parse::<Ipv6Addr>().map_err(|_| err("not an IPv6 address between [ and ]"))?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| err("text after the IPv6 address"))?),
            };
            (addr, port)
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty() {
            return Err(err("no host"));
        }
        if !hostport.starts_with('[') && host.parse::<Ipv4Addr>().is_err() && !is_hostname(host) {
            return Err(err("the host must be a name (letters, digits, - and .) or an address"));
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u32>() {
                Ok(n @ 1..=65535) => Some(n as u16),
                Ok(n) => return Err(err(&format!("port {n} is out of range 1-65535"))),
                Err(_) => return Err(err(&format!("port `{p}` is not a number"))),
            },
        };
        Ok(HostUrl { user: user.map(str::to_owned), host: host.to_owned(), port })
    }
}

/// A DNS name or an alias of the user's ssh_config: labels of letters, digits and `-`,
/// joined by dots, none starting with `-`.
fn is_hostname(host: &str) -> bool {
    host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
}

impl fmt::Display for HostUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ssh://")?;
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(url: &str) -> HostUrl {
        url.parse().unwrap_or_else(|e| panic!("{url}: {e}"))
    }

    fn refused(url: &str) -> String {
        url.parse::<HostUrl>().expect_err(url).to_string()
    }

    #[test]
    fn reads_user_host_and_port() {
        let h = ok("ssh://bench@198.18.10.2:2222");
        assert_eq!(
            (h.user.as_deref(), h.host.as_str(), h.port),
            (Some("bench"), "198.18.10.2", Some(2222))
        );
        let h = ok("ssh://lab-server.example.org");
        assert_eq!((h.user, h.host.as_str(), h.port), (None, "lab-server.example.org", None));
        let h = ok("ssh://root@[fd00::2]:22");
        assert_eq!((h.host.as_str(), h.port), ("fd00::2", Some(22)));
        for url in ["ssh://bench@198.18.10.2:2222", "ssh://a", "ssh://root@[fd00::2]:22"] {
            assert_eq!(ok(url).to_string(), url, "printed as written");
        }
    }

    #[test]
    fn refuses_what_is_not_an_ssh_host() {
        assert!(refused("bench@198.18.10.2").contains("not an ssh:// URL"));
        assert!(refused("http://198.18.10.2").contains("only ssh://"));
        assert!(refused("ssh://h:0").contains("port 0 is out of range 1-65535"));
        assert!(refused("ssh://h:65536").contains("port 65536 is out of range"));
        assert!(refused("ssh://h:ssh").contains("port `ssh` is not a number"));
        assert!(refused("ssh://h/path").contains("no path"));
        assert!(refused("ssh://").contains("no host"));
        assert!(refused("ssh://u@").contains("no host"));
        assert!(refused("ssh://[fd00::2").contains("lacks its ]"));
        assert!(refused("ssh://[nonsense]").contains("not an IPv6 address"));
        // Words ssh would read as options, or a shell as more than a name.
        assert!(refused("ssh://-oProxyCommand=x").contains("must be a name"));
        assert!(refused("ssh://-l@h").contains("the user must be"));
        assert!(refused("ssh://a b").contains("must be a name"));
        assert!(refused("ssh://u;x@h").contains("the user must be"));
        assert!(refused("ssh://a@b@c").contains("must be a name"));
        assert!(refused("ssh://u@h:22:1").contains("not a number"));
    }

    #[test]
    fn the_same_machine_is_the_same_host_and_port() {
        assert!(ok("ssh://a@h").same_machine(&ok("ssh://b@H:22")));
        assert!(!ok("ssh://h:2222").same_machine(&ok("ssh://h")));
        assert!(!ok("ssh://h1").same_machine(&ok("ssh://h2")));
    }
}
