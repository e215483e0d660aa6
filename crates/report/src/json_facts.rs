//! A stored JSON record (the client's health facts) as `key → value` facts a table can
//! show: nested objects joined with dots (`process_cpu_s.user`), fractions to four
//! decimals; a list of per-step records as one set of facts per step.

use serde_json::Value;

/// Key → value facts.
pub(crate) type Facts = Vec<(String, String)>;

/// The facts of `json`, in the record's order: one set, or where the record is a list with
/// one element per step of `steps` (a stepped load's), one set per step, with its label.
/// One fact saying so when the record cannot be read.
pub(crate) fn flatten<'s>(json: Option<&str>, steps: &[&'s str]) -> Vec<(Option<&'s str>, Facts)> {
    let Some(json) = json else { return Vec::new() };
    let value: Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => return vec![(None, vec![("record".to_owned(), format!("cannot be read: {e}"))])],
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
    fn records_become_facts_and_steps_are_apart() {
        let one = r#"{"verdict":"ok","busy_share":0.94854517,"process_cpu_s":{"user":0.15},"reason":null,"threads":1}"#;
        let sets = flatten(Some(one), &["c1"]);
        assert_eq!(sets.len(), 1);
        let (step, facts) = &sets[0];
        assert_eq!(*step, None);
        assert!(facts.contains(&("process_cpu_s.user".into(), "0.15".into())), "{facts:?}");
        assert!(facts.contains(&("busy_share".into(), "0.9485".into())), "{facts:?}");
        assert!(facts.contains(&("reason".into(), "-".into())), "{facts:?}");
        assert!(facts.contains(&("threads".into(), "1".into())), "{facts:?}");

        let steps = r#"[{"verdict":"ok"},{"verdict":"suspect","lag":[1,2]}]"#;
        let sets = flatten(Some(steps), &["c1", "c2"]);
        assert_eq!(sets[0], (Some("c1"), vec![("verdict".to_owned(), "ok".to_owned())]));
        // Key order is the JSON map's (sorted, or as written with serde_json's
        // preserve_order): compare sorted.
        let mut second = sets[1].1.clone();
        second.sort();
        assert_eq!(sets[1].0, Some("c2"));
        assert_eq!(
            second,
            [
                ("lag[0]".to_owned(), "1".to_owned()),
                ("lag[1]".to_owned(), "2".to_owned()),
                ("verdict".to_owned(), "suspect".to_owned()),
            ]
        );
        assert_eq!(flatten(Some("{"), &[])[0].1[0].0, "record");
        assert!(flatten(None, &[]).is_empty());
    }
}
