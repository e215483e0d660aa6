//! Why an experiment file was refused: the file, the line, what was wrong and what is
//! accepted, in one line, plus a hint pointing at the reference.

use std::fmt;

/// A refused experiment file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExperimentError {
    /// The file as the user named it (or `bundled:NAME`).
    pub source_name: String,
    /// 1-based line of the offending value, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}: line {line}: {}", self.source_name, self.message),
            None => write!(f, "{}: {}", self.source_name, self.message),
        }
    }
}

impl std::error::Error for ExperimentError {}

/// Builds errors for one file, turning byte spans into line numbers.
pub(crate) struct Errors<'a> {
    pub source_name: &'a str,
    pub text: &'a str,
}

impl Errors<'_> {
    pub(crate) fn at(
        &self,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
    ) -> ExperimentError {
        ExperimentError {
            source_name: self.source_name.to_string(),
            line: Some(line_of(self.text, span.start)),
            message: message.into(),
        }
    }

    pub(crate) fn file(&self, message: impl Into<String>) -> ExperimentError {
        ExperimentError {
            source_name: self.source_name.to_string(),
            line: None,
            message: message.into(),
        }
    }

    /// A TOML syntax or shape error from the parser, reduced to its line and message.
    pub(crate) fn toml(&self, e: &toml::de::Error) -> ExperimentError {
        let message = e.message().trim().to_string();
        ExperimentError {
            source_name: self.source_name.to_string(),
            line: e.span().map(|s| line_of(self.text, s.start)),
            message,
        }
    }
}

/// The 1-based line holding byte `offset`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// "`a`, `b` or `c`", for messages that list the accepted choices.
pub(crate) fn choices<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("`{}`", s.as_ref())).collect();
    match quoted.split_last() {
        None => "nothing".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}
