//! A decimal number as typed (`12`, `1.5`, `0.25`), read exactly: its digits as an integer
//! and the count of digits after the point. Units scale it by integer arithmetic, so no
//! value passes through `f64` on the way to a count of nanoseconds or bits.

/// `digits / 10^scale`, exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decimal {
    digits: u128,
    scale: u32,
}

/// Most digits after the point: beyond this a value is finer than any unit herd counts in.
const MAX_SCALE: u32 = 18;

impl Decimal {
    /// `12`, `1.5`, `.5`, `5.`; no sign, no exponent, at least one digit.
    pub(crate) fn parse(text: &str) -> Option<Decimal> {
        let (whole, frac) = match text.split_once('.') {
            Some((w, f)) => (w, f),
            None => (text, ""),
        };
        if whole.is_empty() && frac.is_empty() {
            return None;
        }
        if !whole.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let frac = frac.trim_end_matches('0');
        let scale = u32::try_from(frac.len()).ok().filter(|&s| s <= MAX_SCALE)?;
        let digits = whole
            .bytes()
            .chain(frac.bytes())
            .try_fold(0u128, |n, d| n.checked_mul(10)?.checked_add(u128::from(d - b'0')))?;
        Some(Decimal { digits, scale })
    }

    /// The value times `unit` (a count of the base unit per one of this), rounded to the
    /// nearest base unit (halves up); None beyond `u128`.
    pub(crate) fn times(self, unit: u128) -> Option<u128> {
        let n = self.digits.checked_mul(unit)?;
        let div = 10u128.pow(self.scale);
        Some(n / div + u128::from(n % div >= div.div_ceil(2) && div > 1))
    }
}

/// Splits `text` into its number and the unit after it: `1.5mbit` → (`1.5`, `mbit`).
pub(crate) fn split_unit(text: &str) -> (&str, &str) {
    let at = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    text.split_at(at)
}

/// `value` in the largest of `units` (name, size in base units; largest first) that holds it
/// exactly: 1500 ms is `1500ms`, 2000 ms is `2s`. The last unit must be 1.
pub(crate) fn largest_exact(value: u128, units: &[(&str, u128)]) -> String {
    for &(name, size) in units {
        if value % size == 0 {
            return format!("{}{name}", value / size);
        }
    }
    // Unreachable when the last unit is 1; the base unit's count is still a true answer.
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_digits_exactly() {
        let d = |s| Decimal::parse(s);
        assert_eq!(d("12"), Some(Decimal { digits: 12, scale: 0 }));
        assert_eq!(d("1.50"), Some(Decimal { digits: 15, scale: 1 }));
        assert_eq!(d(".5"), Some(Decimal { digits: 5, scale: 1 }));
        assert_eq!(d("5."), Some(Decimal { digits: 5, scale: 0 }));
        for bad in ["", ".", "-1", "1e3", "1.2.3", "1,5", " 1", "0.0000000000000000001"] {
            assert_eq!(d(bad), None, "{bad:?}");
        }
        assert_eq!(d("1.1").and_then(|d| d.times(1_000_000_000)), Some(1_100_000_000));
        assert_eq!(d("0.0000000015").and_then(|d| d.times(1_000_000_000)), Some(2), "halves up");
        assert_eq!(d("0.0000000014").and_then(|d| d.times(1_000_000_000)), Some(1));
    }

    #[test]
    fn largest_exact_unit() {
        let units = [("s", 1000), ("ms", 1)];
        assert_eq!(largest_exact(2000, &units), "2s");
        assert_eq!(largest_exact(1500, &units), "1500ms");
        assert_eq!(largest_exact(0, &units), "0s");
    }
}
