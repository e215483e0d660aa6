//! The four text files `/include` joins when the root brings none of its own: deterministic
//! English-looking prose, 7,000 bytes each, so the page is about the 28 KB of seed 003's include
//! test (four licence texts). herd serve writes them at start-up into a private temporary
//! directory, `herd serve --generate` ([`crate::write_include_texts`]) into a file set, and the
//! lab into its document roots; this file only makes the bytes.

/// The file names, in page order.
pub const NAMES: [&str; 4] = ["1.txt", "2.txt", "3.txt", "4.txt"];

/// Size of each generated text.
pub const TEXT_BYTES: usize = 7000;

const WORDS: [&str; 32] = [
    "the",
    "software",
    "licence",
    "server",
    "request",
    "shall",
    "be",
    "granted",
    "to",
    "any",
    "user",
    "who",
    "agrees",
    "with",
    "terms",
    "of",
    "this",
    "agreement",
    "and",
    "copies",
    "may",
    "not",
    "exceed",
    "what",
    "is",
    "stated",
    "above",
    "in",
    "writing",
    "by",
    "herd",
    "product",
];

/// Text number `i` (0 to 3): a heading, then lines of at most 72 characters in paragraphs.
pub fn text(i: usize) -> Vec<u8> {
    let mut out = format!("Part {} of the herd include page\n\n", i + 1).into_bytes();
    // A linear congruential generator: the same words on every machine, for every build.
    let mut state = 0x2545_f491_4f6c_dd1du64.wrapping_mul(i as u64 + 1);
    let (mut line_len, mut lines) = (0, 0);
    while out.len() < TEXT_BYTES {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let word = WORDS[(state >> 59) as usize];
        if line_len + word.len() + 1 > 72 {
            out.push(b'\n');
            lines += 1;
            if lines % 8 == 0 {
                out.push(b'\n');
            }
            line_len = 0;
        } else if line_len > 0 {
            out.push(b' ');
            line_len += 1;
        }
        out.extend_from_slice(word.as_bytes());
        line_len += word.len();
    }
    out.truncate(TEXT_BYTES - 1);
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_fixed_size_distinct_lines() {
        let texts: Vec<Vec<u8>> = (0..4).map(text).collect();
        for t in &texts {
            assert_eq!(t.len(), TEXT_BYTES);
            assert!(t.split(|&b| b == b'\n').all(|line| line.len() <= 72));
            assert!(t.is_ascii());
        }
        assert_ne!(texts[0], texts[1]);
        assert_eq!(text(2), texts[2]);
    }
}
