//! The experiments built into herd (the files in `experiments/`), so that `herd lab run
//! quickstart` and `herd lab list` work from any directory, with the binary alone.

/// A bundled experiment: its name (the file name without `.toml`) and its text.
#[derive(Debug, Clone, Copy)]
pub struct Bundled {
    pub name: &'static str,
    pub text: &'static str,
}

/// Every bundled experiment, the quick start first.
pub const BUNDLED: &[Bundled] = &[
    Bundled { name: "quickstart", text: include_str!("../../../experiments/quickstart.toml") },
    Bundled {
        name: "seed000-lighttpd",
        text: include_str!("../../../experiments/seed000-lighttpd.toml"),
    },
    Bundled {
        name: "seed000-100mbit",
        text: include_str!("../../../experiments/seed000-100mbit.toml"),
    },
    Bundled {
        name: "seed001-router-overhead",
        text: include_str!("../../../experiments/seed001-router-overhead.toml"),
    },
    Bundled {
        name: "seed002-size-sweep",
        text: include_str!("../../../experiments/seed002-size-sweep.toml"),
    },
    Bundled {
        name: "seed003-dynamic",
        text: include_str!("../../../experiments/seed003-dynamic.toml"),
    },
    Bundled {
        name: "seed004-webbench-ramp",
        text: include_str!("../../../experiments/seed004-webbench-ramp.toml"),
    },
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
}
