//! Which runs of an experiment failed, by kind: "3 of 40 runs failed: 2 server not ready,
//! 1 verify", then each failed run with its kind and reason. The tables after a lab run,
//! `herd report` (text, Markdown, HTML) and the lab's closing line say it in these words.

use herd_store::{Outcome, RunFailureKind, StoredExperiment};

use crate::doc::Doc;

/// "3 of 40 runs failed: 2 server not ready, 1 verify": the most frequent kind first (ties
/// in the order of [`RunFailureKind`]). None when no run failed.
pub fn failed_runs_summary(runs: usize, failed: &[RunFailureKind]) -> Option<String> {
    if failed.is_empty() {
        return None;
    }
    let mut counts: Vec<(RunFailureKind, usize)> = Vec::new();
    for &kind in failed {
        match counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((kind, 1)),
        }
    }
    counts.sort_by(|(ka, na), (kb, nb)| nb.cmp(na).then(ka.cmp(kb)));
    let kinds: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {}", words(*k))).collect();
    let runs_word = if runs == 1 { "run" } else { "runs" };
    Some(format!("{} of {runs} {runs_word} failed: {}", failed.len(), kinds.join(", ")))
}

/// A failure's kind in a report's words.
pub(crate) fn words(kind: RunFailureKind) -> &'static str {
    match kind {
        RunFailureKind::Setup => "setup",
        RunFailureKind::ServerNotReady => "server not ready",
        RunFailureKind::ServerExited => "server exited",
        RunFailureKind::PathUnreachable => "path unreachable",
        RunFailureKind::Verify => "verify",
        RunFailureKind::ClientFailed => "client failed",
        RunFailureKind::ClientTimedOut => "client timed out",
        RunFailureKind::NoResponse => "no response",
        RunFailureKind::ServerCount => "server count",
        RunFailureKind::Unknown => "unknown kind",
    }
}

/// The section of the experiment's failed runs: the summary as its heading, one line per
/// failed run (cell, repetition from 1, kind, reason); nothing when every run was ok.
pub(crate) fn add(exp: &StoredExperiment, doc: &mut Doc) {
    let runs = exp.cells.iter().map(|c| c.repetitions.len()).sum();
    let mut kinds = Vec::new();
    let mut items = Vec::new();
    for c in &exp.cells {
        for r in &c.repetitions {
            let Outcome::Failed { kind, reason } = &r.record.outcome else { continue };
            kinds.push(*kind);
            items.push(format!(
                "{}, repetition {} ({}): {reason}",
                c.key,
                r.record.repetition.saturating_add(1),
                words(*kind)
            ));
        }
    }
    if let Some(summary) = failed_runs_summary(runs, &kinds) {
        doc.section(summary, items);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RunFailureKind::*;

    #[test]
    fn the_summary_counts_by_kind_most_frequent_first() {
        assert_eq!(failed_runs_summary(40, &[]), None);
        assert_eq!(
            failed_runs_summary(40, &[Verify, ServerNotReady, ServerNotReady]).as_deref(),
            Some("3 of 40 runs failed: 2 server not ready, 1 verify")
        );
        assert_eq!(
            failed_runs_summary(1, &[NoResponse]).as_deref(),
            Some("1 of 1 run failed: 1 no response")
        );
        // Ties in the kinds' order, whatever order they came in.
        assert_eq!(
            failed_runs_summary(9, &[Unknown, ClientTimedOut, Setup]).as_deref(),
            Some("3 of 9 runs failed: 1 setup, 1 client timed out, 1 unknown kind")
        );
    }

    #[test]
    fn every_kind_has_its_own_words() {
        let mut all: Vec<&str> = RunFailureKind::ALL.into_iter().map(words).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), RunFailureKind::ALL.len());
    }
}
