//! The experiments built into herd (the files in `experiments/`), so that `herd lab run
//! quickstart` and `herd lab list` work from any directory, with the binary alone.

/// A bundled experiment: its name (the file name without `.toml`) and its text.
#[derive(Debug, Clone, Copy)]
pub struct Bundled {
    pub name: &'static str,
    pub text: &'static str,
}

/// `experiments/NAME.toml` as a [`Bundled`] called NAME: the name written once.
macro_rules! bundled {
    ($name:literal) => {
        Bundled {
            name: $name,
            text: include_str!(concat!("../../../experiments/", $name, ".toml")),
        }
    };
}

/// Every bundled experiment, the quick start first.
pub const BUNDLED: &[Bundled] = &[
    bundled!("quickstart"),
    bundled!("seed000-lighttpd"),
    bundled!("seed000-100mbit"),
    bundled!("seed001-router-overhead"),
    bundled!("seed002-size-sweep"),
    bundled!("seed003-dynamic"),
    bundled!("seed004-webbench-ramp"),
    bundled!("protocols"),
    bundled!("netbench-quick"),
    bundled!("seed004-netbench"),
];

/// The bundled experiment called `name`.
pub fn find(name: &str) -> Option<&'static Bundled> {
    BUNDLED.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_experiment_parses_and_is_named_after_its_file() {
        for b in BUNDLED {
            let e = crate::experiment::parse(b.text, &format!("bundled:{}", b.name)).unwrap();
            assert_eq!(e.name, b.name);
            assert!(!crate::matrix::cells(&e).is_empty());
        }
    }

    /// seed000-100mbit re-runs seed000-lighttpd over a link: the article's figures are
    /// copied into both files, and must stay the same.
    #[test]
    fn both_seed000_experiments_carry_the_same_published_figures() {
        let published = |name: &str| {
            let b = find(name).unwrap();
            crate::experiment::parse(b.text, name).unwrap().published.unwrap()
        };
        assert_eq!(published("seed000-lighttpd"), published("seed000-100mbit"));
    }

    #[test]
    fn every_file_in_experiments_is_bundled() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                assert!(find(&name).is_some(), "experiments/{name}.toml is not in BUNDLED");
            }
        }
    }
}
