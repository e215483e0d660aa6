//! `/include`: a page that joins four text files read from disk on every request, like seed
//! 003's include test (PHP's `include`, ASP's `#include`): open, stat, read and close each of
//! `1.txt` … `4.txt` in the include directory (`<root>/include/` if the root has one, otherwise
//! herd's own texts, include_texts.rs), then answer HTML with the four texts between `<hr>`
//! separators (the frame is herd-fileset's `pages::include`, which the lab's check of the answer
//! uses too). The files are stat'ed before the head is written, so the length is known and
//! sent as Content-Length. Does not cache anything between requests: the disk path is the point.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use herd_fileset::pages::include::{BOTTOM, SEPARATOR, TOP};
use herd_fileset::pages::include_texts::NAMES;

use crate::response::{Reply, Responder, Status};
use crate::root::{OpenError, Root};

/// Largest text file joined, so a stray large file cannot make one response hold it in memory.
const MAX_PART_BYTES: u64 = 1 << 20;

/// Answers `/include`, reading from `dir`.
pub(crate) fn serve(dir: &Root, r: &mut Responder<'_>) -> Reply {
    let mut parts: [Option<(File, u64)>; 4] = [None, None, None, None];
    for (part, name) in parts.iter_mut().zip(NAMES) {
        let opened = dir.open_file(Path::new(name)).map_err(|e| match e {
            OpenError::Exhausted => Status::ServiceUnavailable,
            _ => Status::InternalServerError,
        });
        let file = match opened {
            Ok(file) => file,
            Err(status) => return r.text(status, "herd serve: /include cannot open its texts\n"),
        };
        let size = match file.metadata() {
            Ok(meta) if meta.is_file() && meta.size() <= MAX_PART_BYTES => meta.size(),
            _ => {
                return r.text(
                    Status::InternalServerError,
                    "herd serve: /include needs four regular files of at most 1 MiB\n",
                )
            }
        };
        *part = Some((file, size));
    }
    let texts: u64 = parts.iter().flatten().map(|(_, size)| size).sum();
    let length = (TOP.len() + 3 * SEPARATOR.len() + BOTTOM.len()) as u64 + texts;

    let mark = r.wq.mark();
    let mut head = r.head(Status::Ok);
    head.header("Content-Type", b"text/html")
        .header_u64("Content-Length", length)
        .header("Cache-Control", b"no-store");
    head.finish();
    if r.head_only {
        return Reply { status: Status::Ok, body_bytes: 0 };
    }
    r.wq.buf_mut().extend_from_slice(TOP);
    for (i, (file, size)) in parts.iter().flatten().enumerate() {
        if i > 0 {
            r.wq.buf_mut().extend_from_slice(SEPARATOR);
        }
        // Sizes are at most 1 MiB: they fit in usize.
        if r.wq.append_file(file, 0, *size as usize).is_err() {
            // A text shrank or failed since fstat: take the head back and say so.
            r.wq.truncate(mark);
            return r
                .text(Status::InternalServerError, "herd serve: /include could not read a text\n");
        }
    }
    r.wq.buf_mut().extend_from_slice(BOTTOM);
    Reply { status: Status::Ok, body_bytes: length }
}
