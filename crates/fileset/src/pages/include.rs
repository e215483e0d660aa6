//! The frame of `/include`'s page: HTML around the four texts, which are joined between `<hr>`
//! separators. herd serve streams these pieces around the files it reads on every request;
//! [`join`] assembles the same page in memory, for [`crate::expected::include`].

/// What comes before the first text.
pub const TOP: &[u8] = b"<html>\n<head>\n<title>herd include</title>\n</head>\n<body>\n";
/// What comes between two texts.
pub const SEPARATOR: &[u8] = b"<p><hr><p>\n";
/// What comes after the last text.
pub const BOTTOM: &[u8] = b"</body>\n</html>\n";

/// The page for these four texts, as herd serve sends it.
pub fn join(texts: [&[u8]; 4]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(TOP);
    for (i, t) in texts.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(SEPARATOR);
        }
        out.extend_from_slice(t);
    }
    out.extend_from_slice(BOTTOM);
    out
}
