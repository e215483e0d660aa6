//! `/status/N`: answers with status N (200 to 599) and a short body naming it, for testing how
//! clients count non-2xx responses. 204 and 304 carry no body, as HTTP requires; 1xx codes are
//! refused, since they cannot end a response.

use crate::response::{Reply, Responder, Status};

/// Answers `/status/<rest>`.
pub(crate) fn serve(rest: &[u8], r: &mut Responder<'_>) -> Reply {
    let code = match rest {
        [a @ b'2'..=b'5', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
            u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0')
        }
        _ => {
            return r.text(
                Status::BadRequest,
                "herd serve: /status/N needs a three-digit status from 200 to 599\n",
            )
        }
    };
    let status = Status::from_code(code);
    if code == 204 || code == 304 {
        let mut head = r.head(status);
        head.header("Cache-Control", b"no-store");
        head.finish();
        return Reply { status, body_bytes: 0 };
    }
    let body: [u8; 4] = [rest[0], rest[1], rest[2], b'\n'];
    r.body(status, b"text/plain", &body)
}
