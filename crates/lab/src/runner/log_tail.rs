//! The end of a process's log, in one line, for a failure's message: the last few non-blank
//! lines joined by ` | `. (The client adapters quote a tool's output by its last bytes
//! instead: `client::error`.)

use std::path::Path;

/// How many lines a message quotes: enough for a server's error and the line before it.
const LINES: usize = 5;

/// The last [`LINES`] non-blank lines of `text`, joined by ` | `; `(empty)` when it has none.
pub(super) fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(LINES);
    let joined = lines.get(start..).unwrap_or_default().join(" | ");
    if joined.is_empty() {
        "(empty)".into()
    } else {
        joined
    }
}

/// [`last_lines`] of the file at `path`; a file that cannot be read is `(empty)` too (a
/// process that never wrote has no log).
pub(super) fn last_lines_of(path: &Path) -> String {
    last_lines(&std::fs::read_to_string(path).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_five_non_blank_lines_in_one_line() {
        assert_eq!(last_lines(""), "(empty)");
        assert_eq!(last_lines("\n  \n"), "(empty)");
        assert_eq!(last_lines("one\n\ntwo\n"), "one | two");
        assert_eq!(last_lines("1\n2\n3\n4\n5\n6\n7\n"), "3 | 4 | 5 | 6 | 7");
        assert_eq!(last_lines_of(Path::new("/nonexistent/herd/log")), "(empty)");
    }
}
