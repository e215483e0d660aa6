//! `io` of a herd.run.v1 run object: which event-loop backend measured (`--io`, issue 35),
//! and why `auto` fell back to epoll. The engine's `Resolved` in the document's own words, so
//! that the wire format stays what docs/run-json.md says whatever the engine's types become.

use std::fmt;

use herd_engine::{Backend, IoChoice, Resolved};
use serde::{Deserialize, Serialize};

/// Which event-loop backend measured a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoReport {
    /// What `--io` asked: `auto`, `epoll` or `uring`.
    pub asked: IoAsked,
    /// What measured: `epoll` or `io_uring`.
    pub backend: IoBackend,
    /// Why `auto` did not take io_uring, in one line; null when nothing fell back.
    pub fallback: Option<String>,
}

/// `--io` as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoAsked {
    Auto,
    Epoll,
    Uring,
}

/// The backend that measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoBackend {
    Epoll,
    IoUring,
}

impl IoBackend {
    /// `epoll` or `io_uring`, as the document writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            IoBackend::Epoll => "epoll",
            IoBackend::IoUring => "io_uring",
        }
    }
}

impl From<&Resolved> for IoReport {
    fn from(r: &Resolved) -> IoReport {
        IoReport {
            asked: match r.asked {
                IoChoice::Auto => IoAsked::Auto,
                IoChoice::Epoll => IoAsked::Epoll,
                IoChoice::Uring => IoAsked::Uring,
            },
            backend: match r.backend {
                Backend::Epoll => IoBackend::Epoll,
                Backend::Uring => IoBackend::IoUring,
            },
            fallback: r.why.clone(),
        }
    }
}

impl IoReport {
    /// The engine's words for it, which the summaries print.
    pub fn resolved(&self) -> Resolved {
        Resolved {
            asked: match self.asked {
                IoAsked::Auto => IoChoice::Auto,
                IoAsked::Epoll => IoChoice::Epoll,
                IoAsked::Uring => IoChoice::Uring,
            },
            backend: match self.backend {
                IoBackend::Epoll => Backend::Epoll,
                IoBackend::IoUring => Backend::Uring,
            },
            why: self.fallback.clone(),
        }
    }

    /// The backend's name.
    pub fn backend_name(&self) -> &'static str {
        self.backend.as_str()
    }
}

impl fmt::Display for IoReport {
    /// `epoll`, `io_uring (auto)` or `epoll (auto: io_uring not yet for HTTP/1)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.resolved().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine answer goes to the document and back unchanged, in the documented words.
    #[test]
    fn each_resolution_round_trips_in_the_documents_words() {
        for asked in IoChoice::ALL {
            for backend in [Backend::Epoll, Backend::Uring] {
                for why in [None, Some("io_uring not yet for HTTP/2".to_owned())] {
                    let r = Resolved { asked, backend, why };
                    let report = IoReport::from(&r);
                    assert_eq!(report.resolved(), r);
                    let json = serde_json::to_value(&report).unwrap();
                    assert_eq!(json["asked"], asked.as_str());
                    assert_eq!(json["backend"], backend.as_str());
                    assert_eq!(report.backend_name(), backend.as_str());
                    assert_eq!(serde_json::from_value::<IoReport>(json).unwrap(), report);
                    assert_eq!(report.to_string(), r.to_string());
                }
            }
        }
        let bad = r#"{"asked": "auto", "backend": "kqueue", "fallback": null}"#;
        assert!(serde_json::from_str::<IoReport>(bad).is_err());
    }
}
