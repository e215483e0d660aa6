//! A size in bytes, as file sizes and sweeps are given.

use std::fmt;
use std::str::FromStr;

/// A count of bytes: digits with an optional binary suffix, `k`, `K` or `Ki` (1,024), `M` or
/// `Mi` (1,024²), `G` or `Gi` (1,024³): `6397`, `4Ki`, `1Mi`. Lower-case `m` and `g` are
/// refused rather than guessed (`m` reads as milli), and so are decimals (`1.5Mi`: say
/// `1536Ki`). Displays in the largest binary unit that holds it exactly (`4Ki`, `1692`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(u64);

/// What is accepted, quoted by every error.
const BYTE_SIZE_SYNTAX: &str = "a whole number of bytes with an optional suffix k, K or Ki \
                                    (1024), M or Mi (1024²), G or Gi (1024³), e.g. 6397, 4Ki, 1Mi";

impl ByteSize {
    pub const fn new(bytes: u64) -> ByteSize {
        ByteSize(bytes)
    }

    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl From<u64> for ByteSize {
    fn from(bytes: u64) -> ByteSize {
        ByteSize(bytes)
    }
}

/// Why a text is not a [`ByteSize`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ByteSizeError {
    #[error("`{0}` is not a size: {BYTE_SIZE_SYNTAX}")]
    NotASize(String),
    #[error("`{0}` is more bytes than 64 bits count")]
    TooLarge(String),
}

impl FromStr for ByteSize {
    type Err = ByteSizeError;

    fn from_str(s: &str) -> Result<ByteSize, ByteSizeError> {
        let text = s.trim();
        let bad = || ByteSizeError::NotASize(text.to_owned());
        let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (digits, suffix) = text.split_at(digits_end);
        if digits.is_empty() {
            return Err(bad());
        }
        let unit: u64 = match suffix {
            "" => 1,
            "k" | "K" | "Ki" => 1 << 10,
            "M" | "Mi" => 1 << 20,
            "G" | "Gi" => 1 << 30,
            _ => return Err(bad()),
        };
        digits
            .bytes()
            .try_fold(0u64, |n, d| n.checked_mul(10)?.checked_add(u64::from(d - b'0')))
            .and_then(|n| n.checked_mul(unit))
            .map(ByteSize)
            .ok_or_else(|| ByteSizeError::TooLarge(text.to_owned()))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (suffix, shift) in [("Gi", 30), ("Mi", 20), ("Ki", 10)] {
            if n != 0 && n % (1 << shift) == 0 {
                return write!(f, "{}{suffix}", n >> shift);
            }
        }
        write!(f, "{n}")
    }
}

super::serde_as_text!(ByteSize, "a size such as 6397, 4Ki or 1Mi");

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn bytes(s: &str) -> Result<u64, String> {
        s.parse::<ByteSize>().map(ByteSize::bytes).map_err(|e| e.to_string())
    }

    #[test]
    fn spellings() {
        assert_eq!(bytes("6397"), Ok(6397));
        assert_eq!(bytes("0"), Ok(0));
        assert_eq!(bytes("4k"), Ok(4096));
        assert_eq!(bytes("4K"), Ok(4096));
        assert_eq!(bytes("4Ki"), Ok(4096));
        assert_eq!(bytes("1M"), Ok(1 << 20));
        assert_eq!(bytes("1Mi"), Ok(1 << 20));
        assert_eq!(bytes("2Gi"), Ok(2 << 30));
        for bad in ["", "Ki", "1m", "1g", "1.5Mi", "1KB", "-1", "1 Ki"] {
            assert!(bytes(bad).unwrap_err().contains("is not a size"), "{bad}");
        }
        assert!(bytes("99999999999Gi").unwrap_err().contains("64 bits"));
    }

    #[test]
    fn displays_in_the_largest_exact_unit() {
        let show = |n| ByteSize::new(n).to_string();
        assert_eq!(show(1692), "1692");
        assert_eq!(show(4096), "4Ki");
        assert_eq!(show(1 << 20), "1Mi");
        assert_eq!(show(3 << 30), "3Gi");
        assert_eq!(show(1536 << 10), "1536Ki");
        assert_eq!(show(0), "0");
    }

    proptest! {
        #[test]
        fn display_round_trips(n in any::<u64>()) {
            let b = ByteSize::new(n);
            prop_assert_eq!(b.to_string().parse::<ByteSize>(), Ok(b));
        }

        #[test]
        fn any_text_parses_or_explains(s in "\\PC{0,12}") {
            if let Ok(b) = s.parse::<ByteSize>() {
                prop_assert_eq!(b.to_string().parse::<ByteSize>(), Ok(b));
            }
        }
    }
}
