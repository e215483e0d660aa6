//! Reads the numeric parameters of the dynamic pages from a query string such as
//! `every=10&ms=100`. Unknown parameters are ignored, so that cache-busting suffixes
//! (`&_=123`) work; a named parameter that is missing, repeated with another value, not a plain
//! decimal number or out of range is an error the page turns into a 400 that says what it
//! expected. Does not percent-decode: digits never need it.

/// Why a parameter could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamError {
    Missing,
    Invalid,
}

/// The value of `name` in `query`, a decimal number from `min` to `max`.
pub(crate) fn number(query: &[u8], name: &[u8], min: u64, max: u64) -> Result<u64, ParamError> {
    let mut found = None;
    for pair in query.split(|&b| b == b'&') {
        let (key, value) = match pair.iter().position(|&b| b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &b""[..]),
        };
        if key != name {
            continue;
        }
        let n = decimal(value).filter(|n| (min..=max).contains(n)).ok_or(ParamError::Invalid)?;
        if found.is_some_and(|m| m != n) {
            return Err(ParamError::Invalid);
        }
        found = Some(n);
    }
    found.ok_or(ParamError::Missing)
}

fn decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0u64, |n, &b| n * 10 + u64::from(b - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(number(b"n=5", b"n", 0, 10), Ok(5));
        assert_eq!(number(b"x=1&n=10&_=99", b"n", 0, 10), Ok(10));
        assert_eq!(number(b"n=3&n=3", b"n", 0, 10), Ok(3));
        assert_eq!(number(b"", b"n", 0, 10), Err(ParamError::Missing));
        assert_eq!(number(b"nn=3", b"n", 0, 10), Err(ParamError::Missing));
        for bad in
            [&b"n="[..], b"n", b"n=11", b"n=-1", b"n=1e3", b"n=3&n=4", b"n=99999999999999999999"]
        {
            assert_eq!(number(bad, b"n", 0, 10), Err(ParamError::Invalid), "{bad:?}");
        }
        assert_eq!(number(b"every=0", b"every", 1, 10), Err(ParamError::Invalid));
    }
}
