//! Generated content, no disk needed: `/bytes/N` answers N deterministic bytes, the repeating
//! 64-byte [`GENERATED_PATTERN`](herd_fileset::GENERATED_PATTERN), streamed from one static
//! block so that no request allocates N bytes. The pattern and its block are herd-fileset's
//! ([`herd_fileset::pattern`]), which writes the file sets from the same block; the dynamic
//! pages (`/9x9`, `/cpu`, …) are in pages/.

use crate::response::{Reply, Responder, Status};
use crate::write_queue::{Body, COPY_BODY_MAX};

/// Largest N for `/bytes/N` (1 GiB); larger is answered 400, so that a typo cannot start a
/// transfer of exabytes.
pub const MAX_GENERATED_BYTES: u64 = 1 << 30;

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
