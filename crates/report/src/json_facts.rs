//! The client's health facts (`herd_stats::HealthFacts`, one type for herd run's own and the
//! lab's CPU reading of ab and wrk) as `key → value` facts a table can show: every field by
//! its name, nested objects joined with dots (`process_cpu_s.user`), fractions to four
//! decimals; a stepped run's as one set of facts per step.

use herd_stats::HealthFacts;
use serde_json::Value;

/// Key → value facts.
pub(crate) type Facts = Vec<(String, String)>;

/// The facts of `health`, in the fields' order: one set, or for a stepped run's facts with
/// one element per step of `steps`, one set per step, with its label.
pub(crate) fn flatten<'s>(
    health: Option<&HealthFacts>,
    steps: &[&'s str],
) -> Vec<(Option<&'s str>, Facts)> {
    let Some(health) = health else { return Vec::new() };
    // The typed facts as their JSON fields: every field, by the name the store keeps it under.
    let value: Value = match serde_json::to_value(health) {
        Ok(v) => v,
        Err(e) => {
            return vec![(None, vec![("record".to_owned(), format!("cannot be shown: {e}"))])]
        }
    };
    match &value {
        Value::Array(items) if items.len() == steps.len() && items.len() > 1 => items
            .iter()
            .zip(steps)
            .map(|(item, step)| {
                let mut facts = Vec::new();
                walk("", item, &mut facts);
                (Some(*step), facts)
            })
            .collect(),
        other => {
            let mut facts = Vec::new();
            walk("", other, &mut facts);
            vec![(None, facts)]
        }
    }
}

fn walk(prefix: &str, value: &Value, facts: &mut Facts) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                walk(&key, v, facts);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(&format!("{prefix}[{i}]"), v, facts);
            }
        }
        leaf => facts.push((prefix.to_owned(), text(leaf))),
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() != 0.0 => {
                let t = format!("{f:.4}");
                t.trim_end_matches('0').trim_end_matches('.').to_owned()
            }
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_become_rows_and_steps_are_apart() {
        use herd_stats::{ClientHealth, ClientVerdict, CpuFacts, ProcessCpu};
        let one = HealthFacts::Run(ClientHealth {
            verdict: Some(ClientVerdict::Ok),
            worker_threads: 1,
            cpu_busy_share: 0.94854517,
            process_cpu_s: Some(ProcessCpu { user: 0.15, system: 0.0 }),
            ..ClientHealth::default()
        });
        let sets = flatten(Some(&one), &["c1"]);
        assert_eq!(sets.len(), 1);
        let (step, facts) = &sets[0];
        assert_eq!(*step, None);
        assert!(facts.contains(&("process_cpu_s.user".into(), "0.15".into())), "{facts:?}");
        assert!(facts.contains(&("cpu_busy_share".into(), "0.9485".into())), "{facts:?}");
        assert!(facts.contains(&("reason".into(), "-".into())), "{facts:?}");
        assert!(facts.contains(&("worker_threads".into(), "1".into())), "{facts:?}");

        let suspect =
            ClientHealth { verdict: Some(ClientVerdict::Suspect), ..ClientHealth::default() };
        let steps = HealthFacts::Steps(vec![ClientHealth::default(), suspect]);
        let sets = flatten(Some(&steps), &["c1", "c2"]);
        assert_eq!((sets[0].0, sets[1].0), (Some("c1"), Some("c2")));
        assert!(sets[0].1.contains(&("verdict".into(), "-".into())));
        assert!(sets[1].1.contains(&("verdict".into(), "suspect".into())));

        let cpu = HealthFacts::ByCpu(CpuFacts {
            judged_by: "herd lab".into(),
            cpu_seconds: 0.5,
            wall_seconds: 1.0,
            threads: 1,
            cpus_allowed: 1,
            busy_share: 0.5,
        });
        assert!(flatten(Some(&cpu), &[])[0].1.contains(&("busy_share".into(), "0.5".into())));
        let early = HealthFacts::Other(serde_json::json!({"cpu": 0.98, "lag": [1, 2]}));
        assert_eq!(
            flatten(Some(&early), &[])[0].1,
            [
                ("cpu".to_owned(), "0.98".to_owned()),
                ("lag[0]".to_owned(), "1".to_owned()),
                ("lag[1]".to_owned(), "2".to_owned())
            ]
        );
        assert!(flatten(None, &[]).is_empty());
    }
}
