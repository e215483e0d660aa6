//! A list of header fields (name, value) in one buffer, reused from message to message: the
//! fields of a response as the handlers write them (response.rs's HTTP/2 head), and the
//! fields of a request as HPACK decodes them. Names are stored lowercase, as HTTP/2 requires
//! (RFC 9113 §8.2.1); the handlers' `Content-Type` becomes `content-type` here, so they stay
//! written once for both protocols.

use std::fmt;
use std::io::Write as _;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct FieldList {
    bytes: Vec<u8>,
    /// Per field: where its name ends and where its value ends in `bytes` (the name starts
    /// where the previous value ended).
    ends: Vec<(u32, u32)>,
}

/// Fields a server must not send in HTTP/2 (RFC 9113 §8.2.2): the connection's business is
/// framing's, and chunking has no meaning. The HTTP/1 handlers may still write them.
const CONNECTION_SPECIFIC: [&str; 5] =
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"];

impl FieldList {
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Starts a response's fields: `:status`, then whatever is pushed.
    pub(crate) fn start_response(&mut self, status: u16) {
        self.clear();
        let digits = [
            b'0' + (status / 100 % 10) as u8,
            b'0' + (status / 10 % 10) as u8,
            b'0' + (status % 10) as u8,
        ];
        self.push_raw(b":status", &digits);
    }

    /// Adds a field from a handler: the name lowercased, connection-specific ones dropped.
    pub(crate) fn push(&mut self, name: &str, value: &[u8]) {
        if self.start_name(name) {
            self.bytes.extend_from_slice(value);
            self.end_value();
        }
    }

    pub(crate) fn push_fmt(&mut self, name: &str, value: fmt::Arguments<'_>) {
        if self.start_name(name) {
            // Writing into a Vec cannot fail.
            let _ = self.bytes.write_fmt(value);
            self.end_value();
        }
    }

    /// Adds a field as it is (a decoded request's, already lowercase or to be judged).
    pub(crate) fn push_raw(&mut self, name: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(name);
        let name_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ends.push((to_u32(name_end), to_u32(self.bytes.len())));
    }

    fn start_name(&mut self, name: &str) -> bool {
        if CONNECTION_SPECIFIC.iter().any(|c| c.eq_ignore_ascii_case(name)) {
            return false;
        }
        self.bytes.extend(name.bytes().map(|b| b.to_ascii_lowercase()));
        let name_end = self.bytes.len();
        self.ends.push((to_u32(name_end), 0));
        true
    }

    fn end_value(&mut self) {
        let end = to_u32(self.bytes.len());
        if let Some(last) = self.ends.last_mut() {
            last.1 = end;
        }
    }

    /// The fields, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let mut start = 0usize;
        self.ends.iter().map(move |&(name_end, value_end)| {
            let (n, v) = (name_end as usize, value_end as usize);
            let field = (&self.bytes[start..n], &self.bytes[n..v]);
            start = v;
            field
        })
    }
}

/// Field lists are bounded by the header list limit (64 KiB by default), far below 4 GiB.
fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(f: &FieldList) -> Vec<(String, String)> {
        f.iter()
            .map(|(n, v)| {
                (String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned())
            })
            .collect()
    }

    #[test]
    fn response_fields_are_lowercase_and_http2_only() {
        let mut f = FieldList::default();
        f.start_response(404);
        f.push("Content-Type", b"text/html");
        f.push("Transfer-Encoding", b"chunked");
        f.push_fmt("Content-Length", format_args!("{}", 12));
        f.push("Connection", b"close");
        assert_eq!(
            pairs(&f),
            [(":status", "404"), ("content-type", "text/html"), ("content-length", "12")]
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
        );
        f.start_response(200);
        assert_eq!(pairs(&f), [(":status".to_owned(), "200".to_owned())]);
    }

    #[test]
    fn raw_fields_keep_their_bytes_and_empty_values() {
        let mut f = FieldList::default();
        f.push_raw(b":path", b"/a");
        f.push_raw(b"x", b"");
        f.push_raw(b"", b"v");
        assert_eq!(
            f.iter().collect::<Vec<_>>(),
            [(&b":path"[..], &b"/a"[..]), (b"x", b""), (b"", b"v")]
        );
    }
}
