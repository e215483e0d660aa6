//! `herd report --compare A B`: where each side's figures come from. A side is written
//! `[STORE][:ID][:AXIS=VALUE,…]`: a store's latest experiment (`old.db`), one experiment of
//! it (`old.db:3`, or `3` in the report's STORE), or some of an experiment's cells
//! (`3:server=apache`). The comparison itself is herd_report's.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use herd_report::{CompareFormat, Side};
use herd_store::{ExperimentId, Measure, Store, StoredExperiment};

/// A side as written on the command line.
#[derive(Debug, Default, PartialEq, Eq)]
struct Target {
    store: Option<PathBuf>,
    id: Option<i64>,
    only: Vec<(String, String)>,
}

/// The comparison of A and B, rendered; `default_store` serves sides that name none.
pub(crate) fn run(
    default_store: &Path,
    a: &str,
    b: &str,
    measure: Option<Measure>,
    format: CompareFormat,
) -> anyhow::Result<Vec<u8>> {
    let (ta, tb) = (parse(a)?, parse(b)?);
    let ea = load(&ta, default_store, a)?;
    let eb = load(&tb, default_store, b)?;
    let (la, lb) = (ta.label(a), tb.label(b));
    let sa = Side { label: la, exp: &ea, only: ta.only };
    let sb = Side { label: lb, exp: &eb, only: tb.only };
    let mut out = Vec::new();
    herd_report::write_compare(&sa, &sb, measure, format, &mut out)?;
    Ok(out)
}

impl Target {
    /// How the report names the side: as written, but a store by its file name alone, so the
    /// same stores give the same report wherever they lie.
    fn label(&self, written: &str) -> String {
        let Some(store) = &self.store else { return written.to_owned() };
        let mut parts: Vec<String> = vec![store
            .file_name()
            .map_or_else(|| store.display().to_string(), |n| n.to_string_lossy().into_owned())];
        parts.extend(self.id.map(|id| id.to_string()));
        if !self.only.is_empty() {
            let only: Vec<String> = self.only.iter().map(|(a, v)| format!("{a}={v}")).collect();
            parts.push(only.join(","));
        }
        parts.join(":")
    }
}

fn parse(written: &str) -> anyhow::Result<Target> {
    // A file that exists is a store, even with a colon in its name.
    if Path::new(written).is_file() {
        return Ok(Target { store: Some(written.into()), ..Target::default() });
    }
    let mut t = Target::default();
    for (i, part) in written.split(':').enumerate() {
        if part.is_empty() {
            anyhow::bail!("--compare {written}: an empty part; write [STORE][:ID][:AXIS=VALUE,…], e.g. old.db:3 or 3:server=nginx");
        }
        if let Ok(id) = part.parse::<i64>() {
            if t.id.replace(id).is_some() {
                anyhow::bail!("--compare {written}: two experiment numbers; give one");
            }
        } else if part.contains('=') {
            for pair in part.split(',') {
                let Some((axis, value)) = pair.split_once('=') else {
                    anyhow::bail!("--compare {written}: `{pair}` is not AXIS=VALUE");
                };
                if axis.is_empty() || value.is_empty() {
                    anyhow::bail!("--compare {written}: `{pair}` is not AXIS=VALUE");
                }
                t.only.push((axis.to_owned(), value.to_owned()));
            }
        } else if i == 0 {
            t.store = Some(part.into());
        } else {
            anyhow::bail!(
                "--compare {written}: `{part}` is neither an experiment number nor AXIS=VALUE (the store comes first: STORE:ID:AXIS=VALUE; a store whose path holds ':' or '=' can be named alone, or through a symlink)"
            );
        }
    }
    Ok(t)
}

fn load(t: &Target, default_store: &Path, written: &str) -> anyhow::Result<StoredExperiment> {
    let path = t.store.as_deref().unwrap_or(default_store);
    // The store's errors name its path: the context says only which side it was.
    let store = Store::open_read_only(path)
        .with_context(|| format!("--compare {written}: cannot read the results store"))?;
    let id = match t.id {
        Some(id) => ExperimentId(id),
        None => store.latest_experiment()?.with_context(|| {
            format!("--compare {written}: {} holds no experiment yet", path.display())
        })?,
    };
    store.load_experiment(id).with_context(|| format!("--compare {written}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_read_as_store_id_and_cells() {
        let t = parse("old.db:3:server=nginx,path=direct").unwrap();
        assert_eq!(t.store.as_deref(), Some(Path::new("old.db")));
        assert_eq!(t.id, Some(3));
        assert_eq!(
            t.only,
            [("server".to_owned(), "nginx".to_owned()), ("path".to_owned(), "direct".to_owned())]
        );
        assert_eq!(
            t.label("/abs/old.db:3:server=nginx,path=direct"),
            "old.db:3:server=nginx,path=direct"
        );
        assert_eq!(parse("3").unwrap(), Target { id: Some(3), ..Target::default() });
        assert_eq!(parse("server=a").unwrap().only, [("server".to_owned(), "a".to_owned())]);
        for bad in ["old.db::3", "3:4", "3:nginx", "3:server=", "3:=x"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
