//! Natural order of axis values: runs of digits compared as numbers, so that `c50` < `c100`
//! < `c1000` and `page-6397` sorts by size. Cells are ordered by the values' declared order
//! first (schema 6); this order breaks ties and is the only one in older stores, which do
//! not know the experiment file's order (the order cells ran in is shuffled on purpose).

use std::cmp::Ordering;

/// Compares two labels with digit runs as numbers; ties fall back to plain byte order so
/// that distinct labels never compare equal (`c07` and `c7`).
pub(crate) fn compare(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let (dx, rx) = split_digits(x);
                let (dy, ry) = split_digits(y);
                let (nx, ny) = (trim_zeros(dx), trim_zeros(dy));
                // More significant digits is the larger number; equal lengths compare as text.
                let by_value = nx.len().cmp(&ny.len()).then_with(|| nx.cmp(ny));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                (x, y) = (rx, ry);
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
    s.split_at(n)
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let n = digits.iter().take_while(|&&b| b == b'0').count();
    &digits[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(sorted: &[&str]) {
        let mut shuffled: Vec<&str> = sorted.iter().rev().copied().collect();
        shuffled.sort_by(|a, b| compare(a, b));
        assert_eq!(shuffled, sorted);
    }

    #[test]
    fn numbers_inside_labels_sort_by_value() {
        check(&["c5", "c50", "c100", "c1000"]);
        check(&["page-100", "page-6397", "page-65536"]);
        check(&["rate-1k", "rate-10k", "rate-100k"]);
    }

    #[test]
    fn text_sorts_as_text() {
        check(&["apache", "herd-serve", "lighttpd", "nginx"]);
        check(&["", "a", "a1", "ab"]);
    }

    #[test]
    fn leading_zeros_tie_break_but_never_equal() {
        assert_eq!(compare("c7", "c07"), "c7".cmp("c07"));
        assert_ne!(compare("c7", "c07"), Ordering::Equal);
        check(&["c1", "c002", "c3"]);
    }

    #[test]
    fn huge_numbers_do_not_overflow() {
        check(&["n99999999999999999999999", "n100000000000000000000000"]);
    }
}
