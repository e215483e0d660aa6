//! Why a client's command line could not be built, or its output not read. Messages name the
//! tool and what was wrong; an unreadable output is quoted (its end, where tools put their
//! errors) so that the message alone says what happened.

use std::io;
use std::path::PathBuf;

use super::Tool;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("unknown client `{name}`, expected one of herd, ab, wrk, h2load, smbtorture")]
    UnknownTool { name: String },
    /// The tool cannot run this load; `instead` says what can.
    #[error("{tool} cannot {what}: {why}; {instead}")]
    Unsupported { tool: Tool, what: String, why: String, instead: String },
    /// The load itself makes no sense (a zero count or duration, a path without `/`).
    #[error("{tool}: {problem}")]
    InvalidLoad { tool: Tool, problem: String },
    /// The base URL is not an allowed plain-HTTP address.
    #[error("refusing to send load to {url}: {reason}")]
    NotAllowed { url: String, reason: String },
    #[error("cannot write {}", path.display())]
    WriteFile { path: PathBuf, source: io::Error },
    /// The tool's output (stdout, stderr or a file it wrote) is not what it should be.
    #[error("{tool} {problem}")]
    Output { tool: Tool, problem: String },
}

impl ClientError {
    pub(super) fn output(tool: Tool, problem: impl Into<String>) -> ClientError {
        ClientError::Output { tool, problem: problem.into() }
    }
}

/// The end of a tool's stdout and stderr, quoted, for an error message.
pub(super) fn excerpt(stdout: &str, stderr: &str) -> String {
    format!("its stdout: {:?}; its stderr: {:?}", last_bytes(stdout), last_bytes(stderr))
}

/// At most the last [`TAIL`] bytes of `text` (on a character boundary), marked when cut.
fn last_bytes(text: &str) -> String {
    let text = text.trim_end();
    if text.len() <= TAIL {
        return text.to_owned();
    }
    let mut from = text.len() - TAIL;
    while !text.is_char_boundary(from) {
        from += 1;
    }
    format!("…{}", &text[from..])
}

/// Enough for ab's or wrk's error lines and the report lines around them.
const TAIL: usize = 600;

#[cfg(test)]
mod tests {
    use super::*;

    /// Before: the OS error was printed twice (in the message and as the source).
    #[test]
    fn a_file_that_cannot_be_written_prints_its_cause_once() {
        let os = io::Error::from_raw_os_error(libc::ENOSPC);
        let text = os.to_string();
        let err = ClientError::WriteFile { path: "/run/urls.txt".into(), source: os };
        herd_testutil::causes::assert_cause_once(&err, &text);
    }

    #[test]
    fn excerpt_keeps_the_end() {
        assert_eq!(excerpt("a\n", ""), r#"its stdout: "a"; its stderr: """#);
        let long = format!("{}é end", "x".repeat(1000));
        let t = last_bytes(&long);
        assert!(t.starts_with('…') && t.ends_with("é end"), "{t}");
        assert!(t.len() <= TAIL + '…'.len_utf8());
        // A cut inside a multi-byte character moves to its end.
        let tricky = format!("{}{}", "é".repeat(400), "abc");
        assert!(last_bytes(&tricky).ends_with("éabc"));
    }
}
