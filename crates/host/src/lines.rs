//! Lines read with a bound: `BufRead::read_line` keeps reading until a newline, so one endless
//! line (a stuck peer, a hostile one) would take all memory. Here a line longer than its bound
//! is read through to its newline and thrown away, and the caller is told, so the helper can
//! answer it with an error and go on serving.

use std::io::{self, BufRead};

/// One read of [`read_line`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A whole line, without its newline (and without a `\r` before it).
    Text(String),
    /// A line of bytes that are not UTF-8.
    NotUtf8,
    /// A line longer than the bound; `len` bytes were read and dropped.
    TooLong { len: usize },
    /// The input ended (a last line without a newline is still returned first).
    End,
}

/// The next line of `input`, at most `max` bytes (the newline not counted).
pub fn read_line(input: &mut impl BufRead, max: usize) -> io::Result<Line> {
    let mut line: Vec<u8> = Vec::new();
    let mut len = 0usize;
    let mut any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if !any {
                return Ok(Line::End);
            }
            break;
        }
        any = true;
        let (part, done) = match memchr_newline(buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        len += part.len();
        if len <= max {
            line.extend_from_slice(part);
        } else if !line.is_empty() {
            line = Vec::new(); // dropped: keep no more than the bound in memory
        }
        let used = done.unwrap_or(buf.len());
        input.consume(used);
        if done.is_some() {
            break;
        }
    }
    if len > max {
        return Ok(Line::TooLong { len });
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(String::from_utf8(line).map_or(Line::NotUtf8, Line::Text))
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn all(input: &[u8], max: usize, cap: usize) -> Vec<Line> {
        let mut r = BufReader::with_capacity(cap, input);
        let mut out = Vec::new();
        loop {
            let l = read_line(&mut r, max).unwrap();
            let end = l == Line::End;
            out.push(l);
            if end {
                return out;
            }
        }
    }

    #[test]
    fn lines_are_split_bounded_and_checked() {
        let text = |s: &str| Line::Text(s.to_owned());
        let input = b"one\r\n\n12345\n123456\n\xff\xfe\nlast";
        for cap in [1, 2, 3, 7, 64] {
            assert_eq!(
                all(input, 5, cap),
                vec![
                    text("one"),
                    text(""),
                    text("12345"),
                    Line::TooLong { len: 6 },
                    Line::NotUtf8,
                    text("last"),
                    Line::End
                ],
                "buffer of {cap}"
            );
        }
        assert_eq!(all(b"", 5, 8), vec![Line::End]);
    }

    /// A line of 10 MiB with a bound of 1 KiB: refused, and the next line still read.
    #[test]
    fn an_endless_line_is_dropped_not_kept() {
        let mut input = vec![b'x'; 10 << 20];
        input.extend_from_slice(b"\n{\"kind\":\"hello\"}\n");
        let lines = all(&input, 1024, 8192);
        assert_eq!(lines[0], Line::TooLong { len: 10 << 20 });
        assert_eq!(lines[1], Line::Text("{\"kind\":\"hello\"}".into()));
    }
}
