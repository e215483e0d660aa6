//! The words herd's crates share about a run's result: the client verdict, what a request
//! failed of in every tool's words, and the names of the latency series. Each is an enum with
//! one spelling (`as_str`, `Display`, `FromStr`, serde as that text), so the lab, the store and
//! the reports cannot rank or spell them differently; text exists only at the boundaries
//! (JSON, SQL, a page).

use std::fmt;
use std::str::FromStr;

use crate::FailureKind;

/// A name that is not one of a vocabulary's words: what it was, and the words there are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a {what}: use one of {choices}")]
pub struct UnknownName {
    pub what: &'static str,
    pub text: String,
    pub choices: String,
}

/// One spelling per word, both ways: `as_str`, `ALL`, `Display`, `FromStr` and serde as text.
macro_rules! words {
    ($(#[$doc:meta])* $t:ident, $what:literal { $($(#[$vdoc:meta])* $v:ident => $s:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $t {
            $($(#[$vdoc])* $v,)+
        }

        impl $t {
            /// Every word, in order (the order reports list them in; `Ord` agrees).
            pub const ALL: &'static [$t] = &[$($t::$v,)+];

            /// The one spelling (JSON, SQL, pages).
            pub fn as_str(self) -> &'static str {
                match self {
                    $($t::$v => $s,)+
                }
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $t {
            type Err = UnknownName;

            fn from_str(s: &str) -> Result<$t, UnknownName> {
                $t::ALL.iter().copied().find(|w| w.as_str() == s).ok_or_else(|| UnknownName {
                    what: $what,
                    text: s.to_owned(),
                    choices: $t::ALL.iter().map(|w| w.as_str()).collect::<Vec<_>>().join(", "),
                })
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

words! {
    /// Whether a result may say more about the client than about the server
    /// (docs/client-health.md). Ordered from best to worst: the worst of several is `max`.
    ClientVerdict, "client verdict" {
        /// Nothing in the client's own figures casts doubt on the result.
        Ok => "ok",
        /// The client was near a limit or held back now and then: check the result.
        Suspect => "suspect",
        /// The client was the limit: the figures say more about it than about the server.
        ClientBound => "client-bound",
    }
}

words! {
    /// Why a request counted as failed, in the words of every client the lab runs: herd's
    /// engine kinds ([`FailureKind`]), and what ab and wrk count that herd's engine does not.
    Failure, "failure kind" {
        Connect => "connect",
        Tls => "tls",
        Write => "write",
        Receive => "receive",
        Timeout => "timeout",
        Closed => "closed",
        Malformed => "malformed",
        HeadTooLarge => "head_too_large",
        Overrun => "overrun",
        Reset => "reset",
        GoAway => "goaway",
        Flood => "flood",
        /// A complete response whose body length was wrong: herd against a workload whose
        /// lengths it knows, ab against the first response's length. herd counts such a
        /// response as completed too; ab counts it as failed only.
        Length => "length",
        /// ab's "Exceptions": an error ab met outside its other kinds.
        Exceptions => "exceptions",
        /// wrk's read errors: a failed read or a response its parser refused.
        Read => "read",
        /// h2load's "errored": a request that failed below HTTP (a network error, a reset
        /// stream, a connection that ended with the request in flight), its timeouts apart.
        Errored => "errored",
        /// What ab's total of failed requests has beyond its named kinds (a head it could not
        /// read).
        Other => "other",
    }
}

words! {
    /// What a connection speaks: the HTTP version, and whether over TLS (or QUIC).
    Protocol, "protocol" {
        /// HTTP/1.1 (or 1.0) over TCP, in the clear.
        H1 => "h1",
        /// HTTP/1.1 over TLS (ALPN `http/1.1`).
        H1Tls => "h1-tls",
        /// HTTP/2 over TLS (ALPN `h2`).
        H2 => "h2",
        /// HTTP/2 over TCP in the clear, with prior knowledge (no Upgrade).
        H2c => "h2c",
        /// HTTP/3 over QUIC (UDP, TLS 1.3, ALPN `h3`).
        H3 => "h3",
    }
}

impl Protocol {
    /// Encrypted: over TLS, or QUIC.
    pub fn is_encrypted(self) -> bool {
        matches!(self, Protocol::H1Tls | Protocol::H2 | Protocol::H3)
    }

    /// Several requests at once on one connection, each on its own stream.
    pub fn is_multiplexed(self) -> bool {
        matches!(self, Protocol::H2 | Protocol::H2c | Protocol::H3)
    }

    /// The ALPN protocol id a TLS or QUIC handshake negotiates; None in the clear.
    pub fn alpn(self) -> Option<&'static [u8]> {
        match self {
            Protocol::H1Tls => Some(b"http/1.1"),
            Protocol::H2 => Some(b"h2"),
            Protocol::H3 => Some(b"h3"),
            Protocol::H1 | Protocol::H2c => None,
        }
    }

    /// The protocol an ALPN id names over TLS (TCP): `http/1.1` or `h2`.
    pub fn from_alpn_over_tls(id: &[u8]) -> Option<Protocol> {
        match id {
            b"http/1.1" => Some(Protocol::H1Tls),
            b"h2" => Some(Protocol::H2),
            _ => None,
        }
    }

    /// How it is written for people: `HTTP/1.1`, `HTTP/1.1 over TLS`, `HTTP/2 over TLS`, …
    pub fn describe(self) -> &'static str {
        match self {
            Protocol::H1 => "HTTP/1.1",
            Protocol::H1Tls => "HTTP/1.1 over TLS",
            Protocol::H2 => "HTTP/2 over TLS",
            Protocol::H2c => "HTTP/2 in the clear (h2c)",
            Protocol::H3 => "HTTP/3 over QUIC",
        }
    }
}

words! {
    /// herd's latency histograms, in microseconds.
    LatencySeries, "latency series" {
        /// From the request's intended send to its last byte: the latency a user waiting for
        /// it saw. In an open loop it includes the wait behind a late schedule.
        Total => "total",
        /// From the actual send to the last byte: what a closed-loop tool reports.
        TotalFromSend => "total_from_send",
        /// Connect (and TLS handshake) time of requests that opened a connection.
        Connect => "connect",
        /// From the send to the first response byte.
        FirstByte => "first_byte",
        /// From the intended send to the actual send: how long a due request waited for a
        /// free connection (or for the client itself).
        Queued => "queued",
    }
}

impl From<FailureKind> for Failure {
    fn from(k: FailureKind) -> Failure {
        match k {
            FailureKind::Connect => Failure::Connect,
            FailureKind::Tls => Failure::Tls,
            FailureKind::Write => Failure::Write,
            FailureKind::Receive => Failure::Receive,
            FailureKind::Timeout => Failure::Timeout,
            FailureKind::Closed => Failure::Closed,
            FailureKind::Malformed => Failure::Malformed,
            FailureKind::HeadTooLarge => Failure::HeadTooLarge,
            FailureKind::Overrun => Failure::Overrun,
            FailureKind::Reset => Failure::Reset,
            FailureKind::GoAway => Failure::GoAway,
            FailureKind::Flood => Failure::Flood,
        }
    }
}

/// A busy share (CPU used over CPU available, 0 to 1) from which a client setting its own
/// pace is suspect: it had little headroom (methodology: "flag > ~85 %").
pub const BUSY_SUSPECT: f64 = 0.85;
/// A busy share from which a client setting its own pace is client-bound: it never waited
/// for the server, so it, not the server, set the pace.
pub const BUSY_BOUND: f64 = 0.95;

impl ClientVerdict {
    /// The closed-loop rule on a busy share: herd's own demand rule and the lab's rule for ab
    /// and wrk by their CPU time (docs/client-health.md).
    pub fn of_busy_share(share: f64) -> ClientVerdict {
        if share >= BUSY_BOUND {
            ClientVerdict::ClientBound
        } else if share >= BUSY_SUSPECT {
            ClientVerdict::Suspect
        } else {
            ClientVerdict::Ok
        }
    }
}

/// A client verdict and, unless ok, the one sentence naming its cause and what to do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClientJudgement {
    pub verdict: ClientVerdict,
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<T>(all: &[T])
    where
        T: Copy + fmt::Display + FromStr<Err = UnknownName> + PartialEq + fmt::Debug + Ord,
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        let mut names: Vec<String> = all.iter().map(ToString::to_string).collect();
        for (w, name) in all.iter().zip(&names) {
            assert_eq!(name.parse::<T>(), Ok(*w));
            let json = serde_json::to_string(w).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<T>(&json).unwrap(), *w);
        }
        assert!(all.windows(2).all(|p| p[0] < p[1]), "ALL is in Ord's order");
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len(), "spellings are unique");
    }

    #[test]
    fn every_word_round_trips() {
        round_trips(ClientVerdict::ALL);
        round_trips(Failure::ALL);
        round_trips(LatencySeries::ALL);
        round_trips(Protocol::ALL);
    }

    #[test]
    fn an_unknown_word_names_the_choices() {
        let e = "fine".parse::<ClientVerdict>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "`fine` is not a client verdict: use one of ok, suspect, client-bound"
        );
        let e = serde_json::from_str::<LatencySeries>("\"p99\"").unwrap_err().to_string();
        assert!(e.contains("`p99` is not a latency series"), "{e}");
    }

    #[test]
    fn verdicts_rank_from_best_to_worst() {
        use ClientVerdict::*;
        assert_eq!([Suspect, Ok, ClientBound].into_iter().max(), Some(ClientBound));
        assert_eq!(ClientVerdict::of_busy_share(0.84), Ok);
        assert_eq!(ClientVerdict::of_busy_share(BUSY_SUSPECT), Suspect);
        assert_eq!(ClientVerdict::of_busy_share(0.949), Suspect);
        assert_eq!(ClientVerdict::of_busy_share(BUSY_BOUND), ClientBound);
    }

    #[test]
    fn engine_kinds_keep_their_names() {
        for &k in &FailureKind::ALL {
            assert_eq!(Failure::from(k).as_str(), k.name());
        }
    }
}
