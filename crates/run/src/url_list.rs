//! `--urls FILE`: the requests of a weighted mix, one per line.
//!
//! ```text
//! # weight  [method]  target
//! 70  /index.html
//! 25  /bytes/16384
//! 5   POST /echo
//! /about          # no weight: 1
//! ```
//!
//! A target is a path (`/…`, sent to the run's URL's host) or a full URL on that same scheme,
//! host and port: one run loads one server. Blank lines and `#` comments are skipped. Every
//! mistake names its line.

use crate::url::{self, RunUrl};

/// One line of the list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UrlEntry {
    pub(crate) weight: f64,
    /// None: the run's method (`-m`).
    pub(crate) method: Option<String>,
    /// Path and query, starting with `/`.
    pub(crate) target: String,
}

/// Most entries a list may have: each is prebuilt, twice at most.
pub(crate) const MAX_ENTRIES: usize = 100_000;

/// Parses the text of a URL list for a run whose URL is `base`.
pub(crate) fn parse(text: &str, base: &RunUrl) -> Result<Vec<UrlEntry>, String> {
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let at = |msg: String| format!("line {line_no}: {msg}");
        let mut words: Vec<&str> = line.split_whitespace().collect();
        let weight = match words.first().map(|w| w.parse::<f64>()) {
            Some(Ok(w)) => {
                if !(w.is_finite() && w >= 0.0) {
                    return Err(at(format!("weight `{}` must be a number ≥ 0", words[0])));
                }
                words.remove(0);
                w
            }
            _ => 1.0,
        };
        let (method, target) = match words.as_slice() {
            [t] => (None, *t),
            [m, t] => {
                if !m.bytes().all(|b| b.is_ascii_uppercase()) {
                    return Err(at(format!("`{m}` is not a method (GET, POST, … in capitals)")));
                }
                (Some((*m).to_owned()), *t)
            }
            [] => return Err(at("a weight needs a target after it".to_owned())),
            _ => {
                return Err(at(format!(
                    "`{line}`: expected `[weight] [METHOD] target`, e.g. `10 GET /index.html`"
                )))
            }
        };
        let target = resolve(target, base).map_err(at)?;
        out.push(UrlEntry { weight, method, target });
        if out.len() > MAX_ENTRIES {
            return Err(format!("more than {MAX_ENTRIES} entries; herd prebuilds each request"));
        }
    }
    if out.is_empty() {
        return Err("the list has no URL (lines are `[weight] [METHOD] target`)".to_owned());
    }
    if out.iter().all(|e| e.weight == 0.0) {
        return Err("every weight is 0: at least one must be more".to_owned());
    }
    Ok(out)
}

fn resolve(target: &str, base: &RunUrl) -> Result<String, String> {
    if target.starts_with('/') {
        if target.bytes().any(|b| b.is_ascii_control()) {
            return Err(format!("`{target}` contains control characters"));
        }
        return Ok(target.to_owned());
    }
    let u = url::parse(target)?;
    if u.tls != base.tls || u.host != base.host || u.port != base.port {
        return Err(format!(
            "`{target}` is not on the run's server {}://{}: one run loads one server; \
             give paths or URLs on that server",
            if base.tls { "https" } else { "http" },
            base.authority
        ));
    }
    Ok(u.target)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> RunUrl {
        url::parse("http://127.0.0.1:8080/").unwrap()
    }

    #[test]
    fn weights_methods_and_targets() {
        let text = "# a mix\n70 /index.html\n\n25\t/bytes/16384 # big\n5 POST /echo\n/about\n\
                    2 http://127.0.0.1:8080/x?y=1\n";
        let got = parse(text, &base()).unwrap();
        let w: Vec<f64> = got.iter().map(|e| e.weight).collect();
        assert_eq!(w, [70.0, 25.0, 5.0, 1.0, 2.0]);
        assert_eq!(got[2].method.as_deref(), Some("POST"));
        assert_eq!(got[2].target, "/echo");
        assert_eq!(got[3].method, None);
        assert_eq!(got[4].target, "/x?y=1");
    }

    #[test]
    fn mistakes_name_their_line() {
        let b = base();
        let e = parse("/a\n-3 /b\n", &b).unwrap_err();
        assert!(e.starts_with("line 2:") && e.contains("≥ 0"), "{e}");
        let e = parse("/a\n\n1 get /b\n", &b).unwrap_err();
        assert!(e.starts_with("line 3:") && e.contains("method"), "{e}");
        let e = parse("1 http://127.0.0.2:8080/\n", &b).unwrap_err();
        assert!(e.contains("one run loads one server"), "{e}");
        let e = parse("1 GET /a extra\n", &b).unwrap_err();
        assert!(e.contains("[weight] [METHOD] target"), "{e}");
        let e = parse("5\n", &b).unwrap_err();
        assert!(e.contains("needs a target"), "{e}");
        assert!(parse("# nothing\n\n", &b).unwrap_err().contains("no URL"));
        assert!(parse("0 /a\n0 /b\n", &b).unwrap_err().contains("every weight is 0"));
        assert!(parse("1 index.html\n", &b).unwrap_err().contains("http://"));
    }
}
