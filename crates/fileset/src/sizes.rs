//! The size sweep's list of file sizes: parsing `--sizes` (`1,4Ki,1Mi`), its default (powers of
//! 4 from 1 B to 1 MiB, the log axis seed 002 swept) and its limits. Knows nothing about files
//! or directories; `generate` turns a [`SizeList`] into `sizes/<bytes>.html`.

use std::fmt;
use std::str::FromStr;

use herd_stats::units::{ByteSize, ByteSizeError};

/// Largest file of a size sweep: 64 GiB. Larger is refused, so that a typo (`1Gi0`, an extra
/// zero) cannot fill a disk; a set that must not fit in RAM needs many files, not one huge one.
pub const MAX_FILE_BYTES: u64 = 64 << 30;

/// The default sweep: 1, 4, 16, … 256 KiB, 1 MiB (powers of 4), used when `--generate` is given
/// without `--sizes` or `--specweb-dirs`.
pub const DEFAULT_SIZES: [u64; 11] =
    [1, 4, 16, 64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20];

/// What `--sizes` accepts, quoted by every parse error.
const SYNTAX: &str = "sizes are whole numbers of bytes with an optional suffix k, K or Ki (1024), \
                      M or Mi (1024²), G or Gi (1024³), separated by commas, e.g. 1,4Ki,1Mi";

/// File sizes in bytes: at least one, each at most [`MAX_FILE_BYTES`], ascending, no duplicates
/// (`1Ki,1024` is one size).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeList(Vec<u64>);

/// Why a size list was refused. Each message quotes the offending text and says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeListError {
    /// No size at all (an empty or blank list).
    #[error("the size list is empty: {SYNTAX}")]
    Empty,
    /// Two commas in a row, or a leading or trailing comma.
    #[error("`{list}` has an empty entry: {SYNTAX}")]
    EmptyEntry { list: String },
    /// An entry that is not a number with an accepted suffix (`1.5Mi`, `1KB`, `-1`, `1m`).
    #[error("`{token}` is not a size: {SYNTAX}")]
    BadToken { token: String },
    /// An entry above [`MAX_FILE_BYTES`].
    #[error("`{token}` is more than 64 GiB, the largest file herd generates")]
    TooLarge { token: String },
}

impl SizeList {
    /// The list of `sizes`, sorted and with duplicates merged.
    pub fn new(sizes: impl IntoIterator<Item = u64>) -> Result<SizeList, SizeListError> {
        let mut sizes: Vec<u64> = sizes.into_iter().collect();
        if sizes.is_empty() {
            return Err(SizeListError::Empty);
        }
        if let Some(&big) = sizes.iter().find(|&&b| b > MAX_FILE_BYTES) {
            return Err(SizeListError::TooLarge { token: big.to_string() });
        }
        sizes.sort_unstable();
        sizes.dedup();
        Ok(SizeList(sizes))
    }

    /// The default sweep, [`DEFAULT_SIZES`].
    pub fn sweep() -> SizeList {
        SizeList(DEFAULT_SIZES.to_vec())
    }

    /// The sizes in bytes, ascending.
    pub fn as_slice(&self) -> &[u64] {
        &self.0
    }
}

impl Default for SizeList {
    fn default() -> SizeList {
        SizeList::sweep()
    }
}

impl FromStr for SizeList {
    type Err = SizeListError;

    fn from_str(list: &str) -> Result<SizeList, SizeListError> {
        if list.trim().is_empty() {
            return Err(SizeListError::Empty);
        }
        let mut sizes = Vec::new();
        for token in list.split(',') {
            let token = token.trim();
            if token.is_empty() {
                return Err(SizeListError::EmptyEntry { list: list.to_owned() });
            }
            sizes.push(parse_size(token)?);
        }
        SizeList::new(sizes)
    }
}

impl fmt::Display for SizeList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, size) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{size}")?;
        }
        Ok(())
    }
}

/// One entry: a byte size as every size herd reads is written (`herd_stats::units::ByteSize`),
/// within [`MAX_FILE_BYTES`].
fn parse_size(token: &str) -> Result<u64, SizeListError> {
    let too_large = || SizeListError::TooLarge { token: token.to_owned() };
    let size: ByteSize = token.parse().map_err(|e| match e {
        ByteSizeError::TooLarge(_) => too_large(),
        ByteSizeError::NotASize(_) => SizeListError::BadToken { token: token.to_owned() },
    })?;
    if size.bytes() > MAX_FILE_BYTES {
        return Err(too_large());
    }
    Ok(size.bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(list: &str, expect: &[u64]) {
        assert_eq!(list.parse::<SizeList>().as_ref().map(SizeList::as_slice), Ok(expect), "{list}");
    }

    fn check_err(list: &str, expect: SizeListError) {
        assert_eq!(list.parse::<SizeList>(), Err(expect), "{list}");
    }

    fn bad(token: &str) -> SizeListError {
        SizeListError::BadToken { token: token.to_owned() }
    }

    fn too_large(token: &str) -> SizeListError {
        SizeListError::TooLarge { token: token.to_owned() }
    }

    #[test]
    fn plain_bytes() {
        check("1", &[1]);
        check("0", &[0]);
        check("6397", &[6397]);
        check("007", &[7]);
    }

    #[test]
    fn suffixes_are_binary() {
        for s in ["k", "K", "Ki"] {
            check(&format!("4{s}"), &[4096]);
        }
        for s in ["M", "Mi"] {
            check(&format!("3{s}"), &[3 << 20]);
        }
        for s in ["G", "Gi"] {
            check(&format!("2{s}"), &[2 << 30]);
        }
    }

    #[test]
    fn the_default_sweep_spelled_out() {
        check("1,4,16,64,256,1Ki,4Ki,16Ki,64Ki,256Ki,1Mi", &DEFAULT_SIZES);
        assert_eq!(SizeList::default().as_slice(), &DEFAULT_SIZES);
        assert_eq!(
            SizeList::sweep().to_string(),
            "1,4,16,64,256,1024,4096,16384,65536,262144,1048576"
        );
    }

    #[test]
    fn sorted_and_duplicates_merged() {
        check("1Mi,1,1Ki,1024,1", &[1, 1024, 1 << 20]);
        check(" 16 , 4 ", &[4, 16]);
    }

    #[test]
    fn limit_is_64_gib_inclusive() {
        check("64Gi", &[MAX_FILE_BYTES]);
        check("68719476736", &[MAX_FILE_BYTES]);
        check_err("68719476737", too_large("68719476737"));
        check_err("65Gi", too_large("65Gi"));
        check_err("1,65537M", too_large("65537M"));
        check_err("99999999999999999999999", too_large("99999999999999999999999"));
        check_err("18446744073709551615Gi", too_large("18446744073709551615Gi"));
        assert_eq!(SizeList::new([MAX_FILE_BYTES + 1]), Err(too_large("68719476737")));
    }

    #[test]
    fn empty_lists_and_entries() {
        check_err("", SizeListError::Empty);
        check_err("   ", SizeListError::Empty);
        assert_eq!(SizeList::new([]), Err(SizeListError::Empty));
        for list in ["1,,2", ",1", "1,", "1, ,2"] {
            check_err(list, SizeListError::EmptyEntry { list: list.to_owned() });
        }
    }

    #[test]
    fn bad_tokens() {
        for token in [
            "x", "Ki", "1.5Mi", "1KB", "1KiB", "1kb", "1m", "1g", "1T", "-1", "+1", "1 Ki", "1e3",
            "0x10", "１",
        ] {
            check_err(&format!("4,{token}"), bad(token));
        }
    }

    #[test]
    fn messages_quote_the_token_and_the_syntax() {
        let msg = "1,2x".parse::<SizeList>().unwrap_err().to_string();
        assert!(msg.starts_with("`2x` is not a size: "), "{msg}");
        assert!(msg.contains("Ki") && msg.contains("Mi") && msg.contains("Gi"), "{msg}");
        assert!(!msg.ends_with('.'), "{msg}");
        let msg = "65Gi".parse::<SizeList>().unwrap_err().to_string();
        assert_eq!(msg, "`65Gi` is more than 64 GiB, the largest file herd generates");
        let msg = "1,,2".parse::<SizeList>().unwrap_err().to_string();
        assert!(msg.starts_with("`1,,2` has an empty entry: "), "{msg}");
        let msg = "".parse::<SizeList>().unwrap_err().to_string();
        assert!(msg.starts_with("the size list is empty: "), "{msg}");
    }
}
