//! An error names each cause once. herd prints an error with its chain of causes
//! (`{err:#}`: the error, then each `source()`, joined by ": "), so an error type that writes
//! its cause into its own message *and* returns it from `source()` prints it twice:
//! "cannot read /x: No such file or directory (os error 2): No such file or directory (os
//! error 2)". These helpers catch that, on a typed error ([`assert_cause_once`]) and on what a
//! command printed ([`assert_no_repeated_cause`]).

use std::error::Error;

/// The error and its causes, each level's own message joined by ": ", as anyhow's `{:#}`
/// and herd's binary print them.
pub fn chain(err: &(dyn Error + 'static)) -> String {
    levels(err).join(": ")
}

/// Panics unless `cause` (the text of the underlying error, e.g. an `io::Error`'s) appears
/// exactly once in `err`'s printed chain, and no level's message appears twice. Returns the
/// chain, for further checks.
pub fn assert_cause_once(err: &(dyn Error + 'static), cause: &str) -> String {
    let printed = chain(err);
    assert!(!cause.is_empty(), "an empty cause proves nothing");
    let n = printed.matches(cause).count();
    assert!(n == 1, "the cause {cause:?} is printed {n} times in: {printed}");
    for level in levels(err) {
        let n = printed.matches(level.as_str()).count();
        assert!(n == 1, "{level:?} is printed {n} times in: {printed}");
    }
    printed
}

/// Panics when a line of `output` (a command's stderr) names one cause twice: an OS error
/// (`(os error N)`) more than once, or a ": "-separated part of twelve characters or more
/// that appears again in the same line.
pub fn assert_no_repeated_cause(output: &str) {
    for line in output.lines() {
        let os_errors = line.matches("(os error ").count();
        assert!(os_errors <= 1, "this line names {os_errors} OS errors:\n{line}\nin:\n{output}");
        for part in line.split(": ").skip(1).map(str::trim) {
            if part.chars().count() >= 12 {
                let n = line.matches(part).count();
                assert!(
                    n == 1,
                    "{part:?} is printed {n} times in this line:\n{line}\nin:\n{output}"
                );
            }
        }
    }
}

/// Each level's own message, the error first.
fn levels(err: &(dyn Error + 'static)) -> Vec<String> {
    let mut out = vec![err.to_string()];
    let mut next = err.source();
    while let Some(e) = next {
        out.push(e.to_string());
        next = e.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// An error that prints its cause and also returns it: the defect.
    #[derive(Debug)]
    struct Doubled(io::Error);

    impl std::fmt::Display for Doubled {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "cannot read /x: {}", self.0)
        }
    }

    impl Error for Doubled {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    /// The same error done right: the cause is only the source.
    #[derive(Debug)]
    struct Once(io::Error);

    impl std::fmt::Display for Once {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("cannot read /x")
        }
    }

    impl Error for Once {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    fn enoent() -> io::Error {
        io::Error::from_raw_os_error(2)
    }

    #[test]
    fn a_doubled_cause_is_caught() {
        let cause = enoent().to_string();
        let doubled = std::panic::catch_unwind(|| assert_cause_once(&Doubled(enoent()), &cause));
        assert!(doubled.is_err());
        let printed = assert_cause_once(&Once(enoent()), &cause);
        assert_eq!(printed, format!("cannot read /x: {cause}"));
    }

    #[test]
    fn a_lost_cause_is_caught() {
        #[derive(Debug)]
        struct Lost;
        impl std::fmt::Display for Lost {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("cannot read /x")
            }
        }
        impl Error for Lost {}
        let cause = enoent().to_string();
        assert!(std::panic::catch_unwind(|| assert_cause_once(&Lost, &cause)).is_err());
    }

    #[test]
    fn a_line_that_repeats_a_cause_is_caught() {
        let doubled = format!("herd run: {}", chain(&Doubled(enoent())));
        assert!(std::panic::catch_unwind(|| assert_no_repeated_cause(&doubled)).is_err());
        let advice = "herd: cannot create `/x`: Permission denied (os error 13); choose another: \
                      Permission denied (os error 13)";
        assert!(std::panic::catch_unwind(|| assert_no_repeated_cause(advice)).is_err());
        let text = "herd: no such file or directory here: no such file or directory here";
        assert!(std::panic::catch_unwind(|| assert_no_repeated_cause(text)).is_err());
        assert_no_repeated_cause(&format!("herd run: {}\nhint: x", chain(&Once(enoent()))));
        assert_no_repeated_cause("herd lab: cannot open the results store /x: no store at /x");
    }
}
