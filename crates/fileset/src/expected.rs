//! The exact bytes of herd serve's pages, for checkers outside the server: the lab verifies
//! each cell's response (from herd serve, or from the same page in PHP) against these before
//! it measures anything. Built from the same code ([`crate::pages`], [`crate::pattern`]) that
//! the server sends the pages with, so they cannot drift.

use crate::pages;

/// The body of `/9x9`: 1692 bytes.
pub fn nine_by_nine() -> Vec<u8> {
    let mut out = Vec::with_capacity(2048);
    pages::nine_by_nine::render(&mut out);
    out
}

/// The body of `/include` given the four texts it joins, in order.
pub fn include(texts: [&[u8]; 4]) -> Vec<u8> {
    pages::include::join(texts)
}

/// The four texts herd writes into `include/` (`1.txt` … `4.txt`).
pub fn include_texts() -> [Vec<u8>; 4] {
    [0, 1, 2, 3].map(pages::include_texts::text)
}

/// `len` bytes of the generated content (`/bytes/N`, `--generate`'s files).
pub fn generated(len: usize) -> Vec<u8> {
    crate::GENERATED_PATTERN.iter().copied().cycle().take(len).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_have_their_documented_sizes() {
        assert_eq!(nine_by_nine().len(), 1692);
        let texts = include_texts();
        let page = include([&texts[0], &texts[1], &texts[2], &texts[3]]);
        assert_eq!(page.len(), 28_106);
        assert_eq!(&generated(70)[62..66], b"-\n01");
    }
}
