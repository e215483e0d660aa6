//! The bytes of `/9x9`: the multiplication table of seed 003, made with two nested loops, as
//! the PHP and ASP pages of that comparison did. The page is 1692 bytes, the size `bench/`
//! compares it against as a static file; its exact bytes are pinned by a golden file
//! (crates/serve/tests/golden/9x9.html) and reproduced by crates/drivers/src/php/9x9.php, so that
//! herd's page and PHP's carry the same bytes. herd serve computes it on every request with
//! [`render`]; [`crate::expected::nine_by_nine`] gives it to checkers.

const TOP: &[u8] = b"<html>\n<head>\n<title>herd 9x9</title>\n</head>\n<body>\n<table border=1>\n";
const BOTTOM: &[u8] = b"</table>\n</body>\n</html>\n";

/// Appends the page to `out`.
pub fn render(out: &mut Vec<u8>) {
    out.extend_from_slice(TOP);
    for x in 1..=9u8 {
        out.extend_from_slice(b"<tr>");
        for y in 1..=9u8 {
            // "<td>x x y = p</td>", digits written by hand: this is the page's whole work, and
            // going through `fmt` would measure Rust's formatting machinery instead.
            out.extend_from_slice(b"<td>");
            out.extend_from_slice(&[b'0' + x, b' ', b'x', b' ', b'0' + y, b' ', b'=', b' ']);
            let p = x * y;
            if p >= 10 {
                out.push(b'0' + p / 10);
            }
            out.push(b'0' + p % 10);
            out.extend_from_slice(b"</td>");
        }
        out.extend_from_slice(b"</tr>");
    }
    out.extend_from_slice(BOTTOM);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_size_and_cells() {
        let mut page = Vec::new();
        render(&mut page);
        assert_eq!(page.len(), 1692);
        let page = String::from_utf8(page).unwrap();
        assert!(page.contains("<tr><td>1 x 1 = 1</td><td>1 x 2 = 2</td>"));
        assert!(page.contains("<td>9 x 9 = 81</td></tr></table>"));
        assert_eq!(page.matches("<td>").count(), 81);
    }
}
