//! The bytes of `herd run`'s requests: method, target, Host (unless the user gave one), the
//! user's headers, the body; and the variant a connection's last request is sent as, asking
//! the server to close so that TIME_WAIT stays on its side, as it would with a browser.

use herd_proto::Request;

/// What every request of a run shares: all but the method and target.
#[derive(Debug, Clone)]
pub(crate) struct RequestTemplate {
    pub(crate) http10: bool,
    /// Host first (unless given), then the user's headers, in order.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl RequestTemplate {
    /// Checks the user's `-H` headers and adds Host when they have none.
    pub(crate) fn new(
        raw_headers: &[String],
        authority: &str,
        body: Vec<u8>,
        http10: bool,
    ) -> Result<RequestTemplate, String> {
        let mut headers = Vec::new();
        let mut has_host = false;
        for h in raw_headers {
            let Some((name, value)) = h.split_once(':') else {
                return Err(format!("-H {h:?}: a header is `Name: value`"));
            };
            let name = name.trim();
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                return Err(format!("-H {h:?}: `{name}` is not a header name"));
            }
            if h.contains(['\r', '\n']) {
                return Err(format!("-H {h:?}: a header cannot contain line breaks"));
            }
            if name.eq_ignore_ascii_case("connection") {
                return Err(format!(
                    "-H {h:?}: herd sets Connection itself; use --no-keep-alive or \
                     --requests-per-conn to control how connections end"
                ));
            }
            has_host |= name.eq_ignore_ascii_case("host");
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
        if !has_host {
            headers.insert(0, ("Host".to_owned(), authority.to_owned()));
        }
        Ok(RequestTemplate { http10, headers, body })
    }

    /// One request. `closing`: ask the server to close after answering.
    pub(crate) fn encode(&self, method: &str, target: &str, closing: bool) -> Vec<u8> {
        let mut headers = self.headers.clone();
        let has_body = !self.body.is_empty()
            || method.eq_ignore_ascii_case("POST")
            || method.eq_ignore_ascii_case("PUT");
        if has_body {
            headers.push(("Content-Length".to_owned(), self.body.len().to_string()));
        }
        // HTTP/1.0 closes unless asked not to; HTTP/1.1 keeps alive unless asked to close.
        match (self.http10, closing) {
            (true, false) => headers.push(("Connection".to_owned(), "keep-alive".to_owned())),
            (false, true) => headers.push(("Connection".to_owned(), "close".to_owned())),
            _ => {}
        }
        let request = Request {
            method: method.to_owned(),
            target: target.to_owned(),
            version: if self.http10 { "HTTP/1.0" } else { "HTTP/1.1" },
            headers,
            body: if has_body { self.body.clone() } else { Vec::new() },
        };
        request.encode()
    }
}

/// Checks a method given with `-m` or in a URL list.
pub(crate) fn check_method(method: &str) -> Result<(), String> {
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(format!("-m {method:?}: a method is letters only (GET, POST, …)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(b: &[u8]) -> String {
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn host_headers_body_and_connection() {
        let t = RequestTemplate::new(&["X-A: 1".into()], "127.0.0.1:8080", b"hi".to_vec(), false)
            .unwrap();
        let r = text(&t.encode("POST", "/echo", false));
        assert_eq!(
            r,
            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-A: 1\r\nContent-Length: 2\r\n\r\nhi"
        );
        let r = text(&t.encode("GET", "/", true));
        assert!(r.contains("Connection: close\r\n"), "{r}");
        assert!(r.contains("Content-Length: 2"), "a body given is sent whatever the method");
        let t10 = RequestTemplate::new(&[], "h", Vec::new(), true).unwrap();
        assert!(text(&t10.encode("GET", "/", false)).contains("Connection: keep-alive"));
        assert!(!text(&t10.encode("GET", "/", true)).contains("Connection"));
        let t = RequestTemplate::new(&["host: other".into()], "h", Vec::new(), false).unwrap();
        assert_eq!(text(&t.encode("GET", "/", false)), "GET / HTTP/1.1\r\nhost: other\r\n\r\n");
    }

    #[test]
    fn bad_headers_and_methods() {
        let bad = |h: &str| RequestTemplate::new(&[h.to_owned()], "h", Vec::new(), false);
        assert!(bad("NoColon").unwrap_err().contains("Name: value"));
        assert!(bad(": x").unwrap_err().contains("not a header name"));
        assert!(bad("X: a\r\nY: b").unwrap_err().contains("line breaks"));
        assert!(bad("Connection: close").unwrap_err().contains("--no-keep-alive"));
        assert!(check_method("GET").is_ok());
        assert!(check_method("G ET").is_err());
        assert!(check_method("").is_err());
    }
}
