//! ab's number parsing: C `atoi` as glibc implements it, so `-n 10abc`, `-c " 5"` and
//! `-s abc` mean exactly what they mean to ab (10, 5 and 0).

/// `isspace` in the C locale, which `atoi` skips and `apr_isspace` tests: space, `\t`, `\n`,
/// `\v`, `\f`, `\r` (Rust's `is_ascii_whitespace` leaves out `\v`).
pub(crate) fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// C `atoi` as in glibc: `(int) strtol(s, NULL, 10)`.
///
/// Leading C whitespace is skipped, one optional sign is read, then decimal digits up to the
/// first non-digit; no digits gives 0. `strtol` saturates at the `long` (64-bit) limits and
/// the cast to `int` keeps the low 32 bits, so `"4294967297"` is 1 and `"99999999999999999999"`
/// is -1 — ab scripts get exactly that from ab, so herd reproduces it.
pub(crate) fn atoi(s: &[u8]) -> i32 {
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let mut negative = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        negative = s[i] == b'-';
        i += 1;
    }
    // Accumulate towards the sign so that i64::MIN is reachable, as strtol does.
    let mut value: i64 = 0;
    let mut saturated = false;
    while i < s.len() && s[i].is_ascii_digit() {
        if !saturated {
            let digit = i64::from(s[i] - b'0');
            let next = value.checked_mul(10).and_then(|v| {
                if negative {
                    v.checked_sub(digit)
                } else {
                    v.checked_add(digit)
                }
            });
            match next {
                Some(v) => value = v,
                None => {
                    saturated = true;
                    value = if negative { i64::MIN } else { i64::MAX };
                }
            }
        }
        i += 1;
    }
    // The (int) cast: keep the low 32 bits, as gcc does on every platform ab runs on.
    value as i32
}

#[cfg(test)]
mod tests {
    use super::atoi;

    #[test]
    fn plain_digits() {
        assert_eq!(atoi(b"100"), 100);
    }

    #[test]
    fn empty_is_zero() {
        assert_eq!(atoi(b""), 0);
    }

    #[test]
    fn letters_are_zero() {
        assert_eq!(atoi(b"abc"), 0);
    }

    #[test]
    fn stops_at_first_non_digit() {
        assert_eq!(atoi(b"10abc"), 10);
        assert_eq!(atoi(b"1.5"), 1);
        assert_eq!(atoi(b"1e3"), 1);
    }

    #[test]
    fn skips_leading_c_whitespace_including_vertical_tab() {
        assert_eq!(atoi(b" \t\n\x0b\x0c\r42"), 42);
    }

    #[test]
    fn trailing_whitespace_is_ignored() {
        assert_eq!(atoi(b"7 "), 7);
    }

    #[test]
    fn signs() {
        assert_eq!(atoi(b"+5"), 5);
        assert_eq!(atoi(b"-5"), -5);
        assert_eq!(atoi(b"-"), 0);
        assert_eq!(atoi(b"+-5"), 0);
        assert_eq!(atoi(b"--5"), 0);
    }

    #[test]
    fn whitespace_after_sign_stops() {
        assert_eq!(atoi(b"- 5"), 0);
    }

    #[test]
    fn leading_zeros() {
        assert_eq!(atoi(b"0010"), 10);
    }

    #[test]
    fn hex_is_not_understood() {
        assert_eq!(atoi(b"0x10"), 0);
    }

    #[test]
    fn int_limits() {
        assert_eq!(atoi(b"2147483647"), i32::MAX);
        assert_eq!(atoi(b"-2147483648"), i32::MIN);
    }

    #[test]
    fn beyond_int_keeps_low_32_bits() {
        assert_eq!(atoi(b"2147483648"), i32::MIN);
        assert_eq!(atoi(b"4294967297"), 1);
    }

    #[test]
    fn beyond_long_saturates_then_truncates() {
        // strtol gives LONG_MAX (0x7fff_ffff_ffff_ffff); its low 32 bits are -1.
        assert_eq!(atoi(b"99999999999999999999"), -1);
        // LONG_MIN's low 32 bits are 0.
        assert_eq!(atoi(b"-99999999999999999999"), 0);
    }
}
