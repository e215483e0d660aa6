//! An error and its causes as text, written once for every crate that keeps an error as text
//! rather than printing it: a lab cell's failure reason, a supervised program that could not
//! run (herd-topo), an agent's failure sent to its coordinator (herd-run). Here because this
//! is the lowest crate all of them depend on.
//!
//! herd's error types never repeat their `source()` in their own message (herd-testutil's
//! `causes` checks that), so the chain is each level's message once, joined by ": ", exactly
//! as the binary prints an error with anyhow's `{err:#}`: an error sent or stored as text reads
//! the same as the one printed.

use std::error::Error;

/// `err`, then each of its causes (`source()`, then the source's source…), outermost first.
pub fn causes(err: &dyn Error) -> impl Iterator<Item = &dyn Error> {
    std::iter::successors(Some(err), |&e| e.source().map(|s| s as &dyn Error))
}

/// `err` and its causes in one line, each level's message joined by ": ".
pub fn with_causes(err: &dyn Error) -> String {
    let mut text = String::new();
    for (i, e) in causes(err).enumerate() {
        if i > 0 {
            text.push_str(": ");
        }
        text.push_str(&e.to_string());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt;

    /// A level of a chain: its own message, and its cause.
    #[derive(Debug)]
    struct Level(&'static str, Option<Box<Level>>);

    impl fmt::Display for Level {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Level {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|l| l as &(dyn Error + 'static))
        }
    }

    fn chain(messages: &[&'static str]) -> Level {
        let mut level: Option<Box<Level>> = None;
        for m in messages.iter().rev() {
            level = Some(Box::new(Level(m, level)));
        }
        match level {
            Some(l) => *l,
            None => Level("", None),
        }
    }

    #[test]
    fn three_causes_in_order_each_once() {
        let err = chain(&["cannot start nginx", "cannot prepare /run/x", "disk full", "EIO"]);
        assert_eq!(causes(&err).count(), 4);
        assert_eq!(with_causes(&err), "cannot start nginx: cannot prepare /run/x: disk full: EIO");
    }

    #[test]
    fn an_error_without_a_cause_is_its_message() {
        assert_eq!(with_causes(&chain(&["the matrix has no cells"])), "the matrix has no cells");
        let os = std::io::Error::from_raw_os_error(2);
        assert_eq!(with_causes(&os), os.to_string());
    }

    /// Nothing is dropped: a cause whose text the message already holds is written again. An
    /// error type that repeats its source is the defect herd-testutil's `causes` catches, not
    /// something to hide here; and a short cause inside a longer message ("timed out" in "the
    /// handshake timed out") is no repeat. The same text as anyhow's `{:#}`.
    #[test]
    fn nothing_is_dropped() {
        let err = chain(&["the handshake timed out", "timed out", "timed out"]);
        assert_eq!(with_causes(&err), "the handshake timed out: timed out: timed out");
    }
}
