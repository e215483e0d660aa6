//! What a network path's hosts saw during a run, as the lab's netstat reads it and the
//! reports show it: one type from the lab to the store to the page (stored as JSON text).

use serde::{Deserialize, Serialize};

/// A run's network facts: the figures, and plain findings (what capped or disturbed it). A
/// field a record from an earlier herd lacks reads as its default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetworkFacts {
    pub path: String,
    /// The links' rate, bits per second, when shaped.
    pub link_bits_per_second: Option<u64>,
    /// How many such links the load crossed side by side into the server: four on
    /// `four-links`, one on every other path (0, in records from before it: one).
    pub server_links: u32,
    /// Bytes the client received per second over the run, as bits (headers included).
    pub carried_bits_per_second: Option<f64>,
    pub client_syn_retransmits: i64,
    pub client_failed_connects: i64,
    pub client_time_wait: Option<u64>,
    pub server_listen_overflows: i64,
    pub server_passive_opens: i64,
    pub server_time_wait: Option<u64>,
    pub router_time_wait: Option<u64>,
    pub router_conntrack: Option<Conntrack>,
    /// CPU seconds of the router's program (HAProxy, nginx, sslh) during the measured run;
    /// sslh-fork's per-connection children are reaped by nobody herd can ask, so theirs is
    /// missing (a lower bound). None on a path without one.
    pub router_cpu_seconds: Option<f64>,
    /// Ephemeral ports each host has (the plan sets 1024-65000).
    pub ephemeral_ports: u64,
    /// Plain sentences, `kind: detail` ([`crate::FINDING_LINK_BOUND`] …): what capped or
    /// disturbed the run; empty when nothing did.
    pub findings: Vec<String>,
}

/// The router's connection tracking, when it has any (a NAT path).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conntrack {
    pub count: u64,
    pub max: u64,
    /// Packets dropped, and entries that could not be inserted: since the namespace was made
    /// in a snapshot, over the measured run in [`NetworkFacts`].
    pub drop: u64,
    pub insert_failed: u64,
}

impl NetworkFacts {
    /// As stored (JSON text).
    pub fn to_json(&self) -> String {
        // Numbers and strings only: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The record stored as `text`, or why it cannot be read.
    pub fn from_json(text: &str) -> Result<NetworkFacts, String> {
        serde_json::from_str(text)
            .map_err(|e| format!("the stored network facts cannot be read: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_and_names_what_it_cannot_read() {
        let facts = NetworkFacts {
            path: "routed".into(),
            link_bits_per_second: Some(100_000_000),
            router_conntrack: Some(Conntrack { count: 3, max: 65536, drop: 0, insert_failed: 0 }),
            findings: vec!["link-bound: 94 of 100 Mbit/s".into()],
            ..NetworkFacts::default()
        };
        assert_eq!(NetworkFacts::from_json(&facts.to_json()), Ok(facts));
        // An earlier herd's record, without the fields added since.
        let early = NetworkFacts::from_json(r#"{"path":"nat","findings":["x: y"]}"#).unwrap();
        assert_eq!((early.path.as_str(), early.router_cpu_seconds), ("nat", None));
        let err = NetworkFacts::from_json("{not json").unwrap_err();
        assert!(err.starts_with("the stored network facts cannot be read: key must be"), "{err}");
    }
}
