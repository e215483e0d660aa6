//! Generated content, no disk needed: `/bytes/N` answers N deterministic bytes, the repeating
//! 64-byte [`GENERATED_PATTERN`], streamed from one static block so that no request allocates N
//! bytes. Dynamic pages (`/9x9`, `/cpu`, …) are a later slice and will live in their own files.

use crate::response::{Reply, Responder, Status};
use crate::write_queue::{Body, COPY_BODY_MAX};

/// The bytes of `/bytes/N`: byte `i` of the body is `GENERATED_PATTERN[i % 64]`. Printable, so a
/// body is readable in a terminal, and ending in a newline.
pub const GENERATED_PATTERN: &[u8; 64] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n";

/// Largest N for `/bytes/N` (1 GiB); larger is answered 400, so that a typo cannot start a
/// transfer of exabytes.
pub const MAX_GENERATED_BYTES: u64 = 1 << 30;

/// The pattern repeated over 64 KiB: one `send` (or a file set's `write`) takes up to this much.
pub(crate) const BLOCK_LEN: usize = 64 * 1024;
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
pub(crate) fn slice(pos: u64, len: u64) -> &'static [u8] {
    // BLOCK_LEN is a multiple of the pattern length, so the block read from `pos % 64` continues
    // the body correctly to its end.
    let start = (pos % GENERATED_PATTERN.len() as u64) as usize;
    let n = usize::try_from(len).unwrap_or(usize::MAX).min(BLOCK_LEN - start);
    &BLOCK[start..start + n]
}

/// Answers `/bytes/<rest>`.
pub(crate) fn serve_bytes(rest: &[u8], r: &mut Responder<'_>) -> Reply {
    let Some(n) = parse_count(rest) else {
        return r.error(Status::BadRequest, &[]);
    };
    let mut head = r.head(Status::Ok);
    head.header("Content-Type", b"application/octet-stream").header_u64("Content-Length", n);
    head.finish();
    if r.head_only || n == 0 {
        return Reply { status: Status::Ok, body_bytes: 0 };
    }
    if n <= COPY_BODY_MAX {
        r.wq.append_generated(0, n);
    } else {
        r.wq.set_body(Body::Generated { pos: 0, remaining: n });
    }
    Reply { status: Status::Ok, body_bytes: n }
}

/// N: decimal digits only, at most [`MAX_GENERATED_BYTES`].
fn parse_count(s: &[u8]) -> Option<u64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = s.iter().try_fold(0u64, |n, &b| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))?;
    (n <= MAX_GENERATED_BYTES).then_some(n)
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

    #[test]
    fn counts() {
        assert_eq!(parse_count(b"0"), Some(0));
        assert_eq!(parse_count(b"007"), Some(7));
        assert_eq!(parse_count(b"1073741824"), Some(MAX_GENERATED_BYTES));
        for bad in [&b""[..], b"1073741825", b"-1", b"+1", b"1k", b"1 ", b"99999999999999999999999"]
        {
            assert_eq!(parse_count(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
