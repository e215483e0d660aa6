//! The generated content: the repeating 64-byte [`GENERATED_PATTERN`] that is herd serve's
//! `/bytes/N` body and every file of a set, and one static 64 KiB block of it that both stream
//! from ([`slice()`]), so that neither a response nor a file of any size is held in memory. Here
//! rather than in the server so that a set written here and a body served there are the same
//! bytes by construction, and so that a client checking either needs no server code.

/// The bytes of `/bytes/N`: byte `i` of the body is `GENERATED_PATTERN[i % 64]`. Printable, so a
/// body is readable in a terminal, and ending in a newline.
pub const GENERATED_PATTERN: &[u8; 64] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n";

/// The pattern repeated over 64 KiB: one `send` (or a file set's `write`) takes up to this much.
pub const BLOCK_LEN: usize = 64 * 1024;
static BLOCK: [u8; BLOCK_LEN] = block();

const fn block() -> [u8; BLOCK_LEN] {
    let mut block = [0; BLOCK_LEN];
    let mut i = 0;
    while i < BLOCK_LEN {
        block[i] = GENERATED_PATTERN[i % GENERATED_PATTERN.len()];
        i += 1;
    }
    block
}

/// The longest run of the body starting at position `pos`, at most `len` bytes (and at least one
/// if `len > 0`).
// Inline: the server calls it on every send of a generated body, from another crate.
#[inline]
pub fn slice(pos: u64, len: u64) -> &'static [u8] {
    // BLOCK_LEN is a multiple of the pattern length, so the block read from `pos % 64` continues
    // the body correctly to its end.
    let start = (pos % GENERATED_PATTERN.len() as u64) as usize;
    let n = usize::try_from(len).unwrap_or(usize::MAX).min(BLOCK_LEN - start);
    &BLOCK[start..start + n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_continue_the_pattern() {
        let mut body = Vec::new();
        let mut pos = 0;
        while pos < 200_000 {
            let s = slice(pos, 200_000 - pos);
            assert!(!s.is_empty());
            body.extend_from_slice(s);
            pos += s.len() as u64;
        }
        assert!(body.iter().enumerate().all(|(i, &b)| b == GENERATED_PATTERN[i % 64]));
        assert_eq!(slice(65, 3), b"123");
    }
}
