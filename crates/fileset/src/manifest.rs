//! `specweb/manifest.toml`, the description of a generated SPECweb99-like set that a load
//! generator reads to request the right files at the right rates: format `herd.specweb.v1`,
//! the directory count and Zipf exponent, and every class and file with its size and weight.
//! Only (de)serialization and validation live here; the mix arithmetic is in `specweb`, and the
//! file is written by `generate`. docs/fileset.md is the format's reference.

use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

use super::specweb::{
    file_bytes, file_weight, SpecwebMix, SpecwebMixError, CLASS_WEIGHTS, FILES_PER_CLASS,
    FILES_PER_DIR, MAX_SPECWEB_DIRS, N_CLASSES, SPECWEB99_ZIPF_EXPONENT,
};

/// The `format` value of this version. A reader refuses any other value; fields may be added
/// within a version (readers ignore fields they do not know), anything else makes a new one.
pub const MANIFEST_FORMAT: &str = "herd.specweb.v1";

/// The manifest's file name, in the set's directory (`DIR/specweb/manifest.toml`).
pub const MANIFEST_FILE: &str = "manifest.toml";

/// Said at the top of every manifest, for a human who opens it.
const HEADER: &str = "\
# A SPECweb99-like file set written by `herd serve --generate DIR --specweb-dirs N`.
# Format herd.specweb.v1, described in herd's docs/fileset.md. With `herd serve --root DIR`,
# file f of class c in directory d (0-based, five digits) is GET /specweb/dirDDDDD/class{c}_{f}.
# P(request) = P(dir d) * classes[c].weight * classes[c].files[f].weight, where
# P(dir d) = (d + 1)^-s / sum(k^-s for k in 1..=n_dirs) and s = dir_zipf_exponent.
";

/// The contents of `manifest.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecwebManifest {
    /// Always [`MANIFEST_FORMAT`].
    pub format: String,
    /// Directories `dir00000` … `dir{n_dirs - 1}`.
    pub n_dirs: u32,
    /// Zipf exponent over directories (1 in SPECweb99).
    pub dir_zipf_exponent: f64,
    /// Files in the set: 36 per directory.
    pub n_files: u64,
    /// Bytes in the set: 5,119,484 per directory.
    pub total_bytes: u64,
    /// The four classes, class 0 first.
    pub classes: Vec<ManifestClass>,
}

/// One size class of a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestClass {
    /// 0 to 3.
    pub class: u8,
    /// Share of all requests that go to this class.
    pub weight: f64,
    /// The nine files, file 0 first.
    pub files: Vec<ManifestFile>,
}

/// One file of a class, the same in every directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// 0 to 8.
    pub file: u8,
    /// File name inside a directory, `class{c}_{f}`.
    pub name: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Share of this class's requests that go to this file.
    pub weight: f64,
}

/// Why a manifest cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ManifestError {
    #[error("not a valid manifest: {0}")]
    Toml(String),
    #[error("manifest format is `{found}`, this herd reads `{MANIFEST_FORMAT}`")]
    UnsupportedFormat { found: String },
    #[error("manifest has n_dirs = {n_dirs}; it must be 1 to {MAX_SPECWEB_DIRS}")]
    BadDirCount { n_dirs: u32 },
    #[error("manifest does not describe the SPECweb99 layout: {0}")]
    Layout(String),
    #[error("manifest's mix is unusable")]
    Mix(#[from] SpecwebMixError),
}

impl SpecwebManifest {
    /// The manifest of a SPECweb99-like set of `n_dirs` directories.
    pub fn new(n_dirs: NonZeroU32) -> SpecwebManifest {
        let classes = (0..N_CLASSES)
            .map(|class| ManifestClass {
                class: class as u8,
                weight: CLASS_WEIGHTS[class],
                files: (0..FILES_PER_CLASS)
                    .map(|file| ManifestFile {
                        file: file as u8,
                        name: format!("class{class}_{file}"),
                        bytes: file_bytes(class, file),
                        weight: file_weight(file),
                    })
                    .collect(),
            })
            .collect();
        SpecwebManifest {
            format: MANIFEST_FORMAT.to_owned(),
            n_dirs: n_dirs.get(),
            dir_zipf_exponent: SPECWEB99_ZIPF_EXPONENT,
            n_files: u64::from(n_dirs.get()) * FILES_PER_DIR as u64,
            total_bytes: u64::from(n_dirs.get()) * super::specweb::BYTES_PER_DIR,
            classes,
        }
    }

    /// The manifest as TOML, with a comment header explaining it.
    pub fn to_toml(&self) -> Result<String, ManifestError> {
        let body = toml::to_string(self).map_err(|e| ManifestError::Toml(e.to_string()))?;
        Ok(format!("{HEADER}\n{body}"))
    }

    /// Reads and checks a manifest: the format version, the directory count, the layout (names
    /// and sizes must be SPECweb99's) and the weights (each level must add up to 1).
    pub fn parse(text: &str) -> Result<SpecwebManifest, ManifestError> {
        let manifest: SpecwebManifest =
            toml::from_str(text).map_err(|e| ManifestError::Toml(e.to_string()))?;
        if manifest.format != MANIFEST_FORMAT {
            return Err(ManifestError::UnsupportedFormat { found: manifest.format });
        }
        manifest.mix()?;
        Ok(manifest)
    }

    /// The access mix the manifest describes.
    pub fn mix(&self) -> Result<SpecwebMix, ManifestError> {
        let n_dirs = NonZeroU32::new(self.n_dirs)
            .filter(|n| n.get() <= MAX_SPECWEB_DIRS)
            .ok_or(ManifestError::BadDirCount { n_dirs: self.n_dirs })?;
        if self.classes.len() != N_CLASSES {
            return Err(layout(format!("{} classes instead of {N_CLASSES}", self.classes.len())));
        }
        let mut class_weights = [0.0; N_CLASSES];
        let mut file_weights = [[0.0; FILES_PER_CLASS]; N_CLASSES];
        for (c, class) in self.classes.iter().enumerate() {
            if usize::from(class.class) != c {
                return Err(layout(format!("class {} is listed in place {c}", class.class)));
            }
            if class.files.len() != FILES_PER_CLASS {
                return Err(layout(format!("class {c} has {} files", class.files.len())));
            }
            class_weights[c] = class.weight;
            for (f, file) in class.files.iter().enumerate() {
                let name = format!("class{c}_{f}");
                let bytes = file_bytes(c, f);
                if usize::from(file.file) != f || file.name != name || file.bytes != bytes {
                    return Err(layout(format!(
                        "class {c} file {f} is `{}` of {} bytes, expected `{name}` of {bytes}",
                        file.name, file.bytes
                    )));
                }
                file_weights[c][f] = file.weight;
            }
        }
        let expect_files = u64::from(self.n_dirs) * FILES_PER_DIR as u64;
        let expect_bytes = u64::from(self.n_dirs) * super::specweb::BYTES_PER_DIR;
        if self.n_files != expect_files || self.total_bytes != expect_bytes {
            return Err(layout(format!(
                "{} files of {} bytes in all, expected {expect_files} files of {expect_bytes}",
                self.n_files, self.total_bytes
            )));
        }
        Ok(SpecwebMix::with_weights(n_dirs, self.dir_zipf_exponent, class_weights, file_weights)?)
    }
}

fn layout(what: String) -> ManifestError {
    ManifestError::Layout(what)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mix's own error is printed once (before: in the message and as the source).
    #[test]
    fn an_unusable_mix_prints_its_cause_once() {
        let cause = SpecwebMixError::BadExponent { exponent: f64::NAN };
        let text = cause.to_string();
        let printed = herd_testutil::causes::assert_cause_once(&ManifestError::Mix(cause), &text);
        assert_eq!(printed, format!("manifest's mix is unusable: {text}"));
    }

    fn two() -> SpecwebManifest {
        SpecwebManifest::new(NonZeroU32::new(2).unwrap())
    }

    #[test]
    fn round_trips() {
        for n in [1, 2, 77, MAX_SPECWEB_DIRS] {
            let m = SpecwebManifest::new(NonZeroU32::new(n).unwrap());
            let text = m.to_toml().unwrap();
            assert_eq!(SpecwebManifest::parse(&text), Ok(m.clone()), "{text}");
            // Weights survive bit for bit: the mix read back is the mix written.
            let direct = SpecwebMix::new(NonZeroU32::new(n).unwrap(), 1.0).unwrap();
            assert_eq!(m.mix().unwrap(), direct);
        }
    }

    #[test]
    fn reads_as_documented() {
        let text = two().to_toml().unwrap();
        assert!(text.starts_with("# A SPECweb99-like file set"), "{text}");
        for line in [
            "format = \"herd.specweb.v1\"",
            "n_dirs = 2",
            "dir_zipf_exponent = 1.0",
            "n_files = 72",
            "total_bytes = 10238968",
            "[[classes]]",
            "weight = 0.35",
            "[[classes.files]]",
            "name = \"class3_8\"",
            "bytes = 921600",
        ] {
            assert!(text.lines().any(|l| l == line), "missing `{line}` in\n{text}");
        }
    }

    #[test]
    fn unknown_fields_are_ignored_within_a_version() {
        let text = two().to_toml().unwrap().replace("n_dirs = 2", "n_dirs = 2\nfuture_field = 7");
        assert_eq!(SpecwebManifest::parse(&text), Ok(two()));
    }

    #[test]
    fn refuses_other_versions_and_bad_content() {
        let good = two().to_toml().unwrap();
        let bad = |from: &str, to: &str| SpecwebManifest::parse(&good.replacen(from, to, 1));
        assert_eq!(
            bad("format = \"herd.specweb.v1\"", "format = \"herd.specweb.v2\""),
            Err(ManifestError::UnsupportedFormat { found: "herd.specweb.v2".into() })
        );
        assert_eq!(bad("n_dirs = 2", "n_dirs = 0"), Err(ManifestError::BadDirCount { n_dirs: 0 }));
        assert!(matches!(bad("n_files = 72", "n_files = 71"), Err(ManifestError::Layout(_))));
        assert!(matches!(bad("bytes = 921600", "bytes = 921601"), Err(ManifestError::Layout(_))));
        assert!(matches!(
            bad("name = \"class0_0\"", "name = \"x\""),
            Err(ManifestError::Layout(_))
        ));
        assert!(matches!(bad("weight = 0.35", "weight = 0.45"), Err(ManifestError::Mix(_))));
        assert!(matches!(
            bad("dir_zipf_exponent = 1.0", "dir_zipf_exponent = -1.0"),
            Err(ManifestError::Mix(SpecwebMixError::BadExponent { .. }))
        ));
        assert!(matches!(bad("n_dirs = 2", "n_dirs = \"2\""), Err(ManifestError::Toml(_))));
        assert!(matches!(SpecwebManifest::parse(""), Err(ManifestError::Toml(_))));
        let mut short = two();
        short.classes.pop();
        assert!(matches!(short.mix(), Err(ManifestError::Layout(_))));
    }
}
