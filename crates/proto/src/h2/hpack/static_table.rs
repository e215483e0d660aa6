//! HPACK's static table (RFC 7541 Appendix A): the 61 entries every encoder and decoder
//! share, index 1 to 61. Data and a lookup used when a block is encoded, nothing else.

/// Entries 1..=61, at `index - 1`.
pub(crate) const STATIC_TABLE: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// The index of an entry equal to `(name, value)`, and failing that of the first entry with
/// that name, as `(index, value matches too)`.
pub(crate) fn find(name: &[u8], value: &[u8]) -> Option<(usize, bool)> {
    let mut by_name = None;
    for (i, (n, v)) in STATIC_TABLE.iter().enumerate() {
        if *n == name {
            if *v == value {
                return Some((i + 1, true));
            }
            by_name.get_or_insert((i + 1, false));
        }
    }
    by_name
}

/// The entry at a 1-based index, if it is one of the 61.
pub(crate) fn get(index: usize) -> Option<(&'static [u8], &'static [u8])> {
    STATIC_TABLE.get(index.checked_sub(1)?).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_match_the_rfc() {
        assert_eq!(get(1), Some((&b":authority"[..], &b""[..])));
        assert_eq!(get(2), Some((&b":method"[..], &b"GET"[..])));
        assert_eq!(get(8), Some((&b":status"[..], &b"200"[..])));
        assert_eq!(get(28), Some((&b"content-length"[..], &b""[..])));
        assert_eq!(get(61), Some((&b"www-authenticate"[..], &b""[..])));
        assert_eq!(get(0), None);
        assert_eq!(get(62), None);
    }

    #[test]
    fn find_prefers_a_full_match_then_the_first_name() {
        assert_eq!(find(b":method", b"POST"), Some((3, true)));
        assert_eq!(find(b":method", b"PUT"), Some((2, false)));
        assert_eq!(find(b":status", b"404"), Some((13, true)));
        assert_eq!(find(b"x-custom", b""), None);
    }
}
