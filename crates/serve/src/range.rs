//! The `Range` request header: which single byte range of a representation of known size to send.
//! Only `bytes=a-b`, `bytes=a-` and `bytes=-n` are honoured. A list of ranges is ignored (the whole
//! representation is sent with 200, which RFC 9110 §14.2 allows), and so is anything malformed.
//! Does not check `If-Range` or the method (static_files.rs does), and does not build
//! multipart/byteranges bodies.

/// What to send for a `Range` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RangeSpec {
    /// Ignore the header: send everything with 200.
    Whole,
    /// Send bytes `first..=last` with 206.
    Part { first: u64, last: u64 },
    /// No byte of the range exists: 416 with `Content-Range: bytes */size`.
    Unsatisfiable,
}

/// Resolves a `Range` header value against a representation of `size` bytes.
pub(crate) fn resolve(header: &[u8], size: u64) -> RangeSpec {
    let header = header.trim_ascii();
    let Some(spec) = header.get(..6).filter(|unit| unit.eq_ignore_ascii_case(b"bytes=")) else {
        return RangeSpec::Whole;
    };
    let spec = header[spec.len()..].trim_ascii();
    if spec.contains(&b',') {
        return RangeSpec::Whole;
    }
    let Some(dash) = spec.iter().position(|&b| b == b'-') else {
        return RangeSpec::Whole;
    };
    let (first, last) = (spec[..dash].trim_ascii(), spec[dash + 1..].trim_ascii());
    match (first.is_empty(), last.is_empty()) {
        // bytes=-n: the last n bytes.
        (true, false) => match number(last) {
            Some(0) => RangeSpec::Unsatisfiable,
            Some(_) if size == 0 => RangeSpec::Unsatisfiable,
            Some(n) => RangeSpec::Part { first: size.saturating_sub(n), last: size - 1 },
            None => RangeSpec::Whole,
        },
        // bytes=a- : from a to the end.
        (false, true) => match number(first) {
            Some(a) if a < size => RangeSpec::Part { first: a, last: size - 1 },
            Some(_) => RangeSpec::Unsatisfiable,
            None => RangeSpec::Whole,
        },
        // bytes=a-b
        (false, false) => match (number(first), number(last)) {
            (Some(a), Some(b)) if a > b => RangeSpec::Whole,
            (Some(a), Some(b)) if a < size => RangeSpec::Part { first: a, last: b.min(size - 1) },
            (Some(_), Some(_)) => RangeSpec::Unsatisfiable,
            // A last position too large for u64 still means "to the end".
            (Some(a), None) if a < size && is_digits(last) => {
                RangeSpec::Part { first: a, last: size - 1 }
            }
            _ => RangeSpec::Whole,
        },
        (true, true) => RangeSpec::Whole,
    }
}

fn is_digits(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_digit)
}

/// A decimal number; `None` if empty, not digits, or too large for u64.
fn number(s: &[u8]) -> Option<u64> {
    if !is_digits(s) {
        return None;
    }
    s.iter().try_fold(0u64, |n, &b| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use RangeSpec::*;

    fn check(header: &str, size: u64, expect: RangeSpec) {
        assert_eq!(resolve(header.as_bytes(), size), expect, "{header} of {size}");
    }

    #[test]
    fn single_ranges() {
        check("bytes=0-4", 10, Part { first: 0, last: 4 });
        check("bytes=5-", 10, Part { first: 5, last: 9 });
        check("bytes=-3", 10, Part { first: 7, last: 9 });
        check("bytes=-30", 10, Part { first: 0, last: 9 });
        check("bytes=8-100", 10, Part { first: 8, last: 9 });
        check("bytes=9-9", 10, Part { first: 9, last: 9 });
        check("BYTES = 1-2", 10, Whole);
        check("Bytes=1-2", 10, Part { first: 1, last: 2 });
        check(" bytes= 1 - 2 ", 10, Part { first: 1, last: 2 });
        check("bytes=1-99999999999999999999999", 10, Part { first: 1, last: 9 });
    }

    #[test]
    fn unsatisfiable() {
        check("bytes=10-", 10, Unsatisfiable);
        check("bytes=10-20", 10, Unsatisfiable);
        check("bytes=-0", 10, Unsatisfiable);
        check("bytes=0-", 0, Unsatisfiable);
        check("bytes=-5", 0, Unsatisfiable);
    }

    #[test]
    fn ignored() {
        check("bytes=0-1,3-4", 10, Whole);
        check("bytes=5-2", 10, Whole);
        check("bytes=-", 10, Whole);
        check("bytes=a-b", 10, Whole);
        check("bytes=+1-2", 10, Whole);
        check("bytes=1", 10, Whole);
        check("items=0-1", 10, Whole);
        check("bytes=99999999999999999999999-", 10, Whole);
        check("", 10, Whole);
    }
}
