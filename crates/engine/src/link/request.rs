//! A workload's requests as fields and a body, the terms HTTP/2 and HTTP/3 both send them in,
//! derived once per run from the HTTP/1 bytes the caller built (so herd run, herd ab's
//! builders and the lab need no second request builder): the pseudo-header fields, the other
//! fields lowercased without HTTP/1's connection-specific ones (RFC 9113 §8.2.2, RFC 9114
//! §4.2), and the body.

use crate::{EngineError, Target, Workload};

/// One request as HTTP/2 and HTTP/3 send it: its fields (HPACK or QPACK encodes them) and
/// its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestFields {
    /// `:method`, `:scheme`, `:authority`, `:path`, then the regular fields, lowercase.
    pub(crate) fields: Vec<(Vec<u8>, Vec<u8>)>,
    pub(crate) body: Vec<u8>,
    /// A HEAD request: its response has no body whatever content-length says.
    pub(crate) head: bool,
}

/// Index of `:path` in [`RequestFields::fields`].
pub(crate) const PATH_FIELD: usize = 3;

/// Fields HTTP/2 forbids: they describe an HTTP/1 connection (RFC 9113 §8.2.2).
const CONNECTION_SPECIFIC: [&[u8]; 5] =
    [b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"];

impl RequestFields {
    /// Every request of `workload`, for `target`.
    pub(crate) fn from_workload(
        workload: &Workload,
        target: &Target,
    ) -> Result<Vec<RequestFields>, EngineError> {
        Self::for_target(workload, target, target.tls.is_some())
    }

    /// As [`RequestFields::from_workload`], `tls` saying the scheme (HTTP/3 is always https).
    pub(crate) fn for_target(
        workload: &Workload,
        target: &Target,
        tls: bool,
    ) -> Result<Vec<RequestFields>, EngineError> {
        let scheme: &[u8] = if tls { b"https" } else { b"http" };
        let authority = default_authority(target, tls);
        workload
            .requests()
            .iter()
            .enumerate()
            .map(|(index, p)| {
                RequestFields::from_http1(&p.bytes, scheme, &authority, p.head)
                    .map_err(|reason| EngineError::Http2Request { index, reason })
            })
            .collect()
    }

    fn from_http1(
        bytes: &[u8],
        scheme: &[u8],
        authority: &[u8],
        head: bool,
    ) -> Result<RequestFields, &'static str> {
        let end = find(bytes, b"\r\n\r\n").ok_or("its head does not end with an empty line")?;
        let (head_bytes, body) = (&bytes[..end], &bytes[end + 4..]);
        let mut lines =
            head_bytes.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        let line = lines.next().ok_or("it has no request line")?;
        let mut parts = line.splitn(3, |&b| b == b' ');
        let method = parts.next().filter(|m| !m.is_empty()).ok_or("it has no method")?;
        let target = parts.next().filter(|t| !t.is_empty()).ok_or("it has no target")?;
        let path = origin_form(target);
        let mut regular = Vec::new();
        let mut host = None;
        for l in lines {
            let colon = l.iter().position(|&b| b == b':').ok_or("a header line has no colon")?;
            let name = l[..colon].to_ascii_lowercase();
            let value = trim(&l[colon + 1..]);
            if name == b"host" {
                host = Some(value.to_vec());
            } else if name == b"te" {
                // Only "trailers" may cross (RFC 9113 §8.2.2).
                if value.eq_ignore_ascii_case(b"trailers") {
                    regular.push((name, value.to_vec()));
                }
            } else if !CONNECTION_SPECIFIC.contains(&name.as_slice()) {
                regular.push((name, value.to_vec()));
            }
        }
        let mut fields = vec![
            (b":method".to_vec(), method.to_vec()),
            (b":scheme".to_vec(), scheme.to_vec()),
            (b":authority".to_vec(), host.unwrap_or_else(|| authority.to_vec())),
            (b":path".to_vec(), path.to_vec()),
        ];
        fields.extend(regular);
        Ok(RequestFields { fields, body: body.to_vec(), head })
    }

    /// The request's HTTP/3 stream: HEADERS (QPACK, static table only) and DATA for a body
    /// (RFC 9114 §4.1), built once per run; every request sends these bytes.
    pub(crate) fn h3_stream(&self) -> Vec<u8> {
        use herd_proto::h3::frame::{self, kind};
        let mut block = Vec::new();
        herd_proto::h3::qpack::encode_field_section(
            self.fields.iter().map(|(n, v)| (n.as_slice(), v.as_slice())),
            &mut block,
        );
        let mut out = Vec::with_capacity(block.len() + self.body.len() + 16);
        frame::encode(kind::HEADERS, &block, &mut out);
        if !self.body.is_empty() {
            frame::encode(kind::DATA, &self.body, &mut out);
        }
        out
    }

    /// The fields as the HPACK encoder takes them (built when a header block is encoded
    /// anew: a few times per connection, not per request).
    pub(crate) fn field_slices(&self) -> Vec<(&[u8], &[u8])> {
        self.fields.iter().map(|(n, v)| (n.as_slice(), v.as_slice())).collect()
    }
}

/// `host[:port]` when the request has no Host field (HTTP/1.0): the port only when it is not
/// the scheme's own.
fn default_authority(target: &Target, tls: bool) -> Vec<u8> {
    let default_port = if tls { 443 } else { 80 };
    let host = if target.host.contains(':') && !target.host.starts_with('[') {
        format!("[{}]", target.host)
    } else {
        target.host.clone()
    };
    match target.port {
        p if p == default_port => host.into_bytes(),
        p => format!("{host}:{p}").into_bytes(),
    }
}

/// An absolute-form target's path (`http://host/x?y` → `/x?y`); others as they are.
fn origin_form(target: &[u8]) -> &[u8] {
    let Some(after) = find(target, b"://").map(|i| &target[i + 3..]) else { return target };
    match after.iter().position(|&b| b == b'/') {
        Some(slash) => &after[slash..],
        None => b"/",
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn trim(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(v.len());
    let end = v.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &v[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(r: &RequestFields) -> Vec<(String, String)> {
        r.fields
            .iter()
            .map(|(n, v)| (String::from_utf8_lossy(n).into(), String::from_utf8_lossy(v).into()))
            .collect()
    }

    #[test]
    fn an_http1_request_becomes_pseudo_fields_and_lowercase_fields() {
        let raw = b"POST /a?b=1 HTTP/1.1\r\nHost: example.test:8080\r\nUser-Agent: herd\r\nConnection: keep-alive\r\nContent-Length: 3\r\nTE: trailers\r\n\r\nabc";
        let r = RequestFields::from_http1(raw, b"http", b"fallback", false).unwrap();
        let f = fields(&r);
        let want: Vec<(String, String)> = [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", "example.test:8080"),
            (":path", "/a?b=1"),
            ("user-agent", "herd"),
            ("content-length", "3"),
            ("te", "trailers"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(f, want);
        assert_eq!(r.body, b"abc");
        assert_eq!(r.fields[PATH_FIELD].0, b":path");
    }

    #[test]
    fn http10_without_host_takes_the_targets_authority_and_absolute_form_its_path() {
        let r =
            RequestFields::from_http1(b"GET http://h:1/x HTTP/1.0\r\n\r\n", b"https", b"h:1", true)
                .unwrap();
        assert_eq!(fields(&r)[2].1, "h:1");
        assert_eq!(fields(&r)[3].1, "/x");
        assert!(r.head && r.body.is_empty());
        assert_eq!(origin_form(b"http://h"), b"/");
    }

    #[test]
    fn broken_bytes_are_refused_with_the_reason() {
        assert!(RequestFields::from_http1(b"GET / HTTP/1.1\r\n", b"http", b"h", false)
            .unwrap_err()
            .contains("empty line"));
        assert!(RequestFields::from_http1(b"GET / HTTP/1.1\r\nbad\r\n\r\n", b"http", b"h", false)
            .unwrap_err()
            .contains("colon"));
    }
}
