//! `/9x9`: the multiplication table of seed 003, computed on every request with two nested
//! loops, as the PHP and ASP pages of that comparison did. The page's bytes are made by
//! herd-fileset's `pages::nine_by_nine` (shared with the lab's check of the answer); this file
//! only answers with them.

use herd_fileset::pages::nine_by_nine::render;

use crate::response::{Reply, Responder, Status};

/// Answers `/9x9`.
pub(crate) fn serve(r: &mut Responder<'_>) -> Reply {
    r.body_with(Status::Ok, b"text/html", render)
}
