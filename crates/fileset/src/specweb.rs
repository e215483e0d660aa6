//! The SPECweb99-like file set: its layout (directories of 4 classes × 9 files, their names and
//! sizes) and its access mix ([`SpecwebMix`]: which file a client should ask for, and how
//! often). Pure arithmetic: no I/O, no randomness of its own (the caller brings a uniform
//! number), no allocation per sample, so a load generator can draw a path per request.
//!
//! Sources (see docs/fileset.md): SPEC's SPECweb96 workload page for the class mix (35/50/14/1 %)
//! and the nine sizes per class; Ruan et al., USENIX ATC '06 §2.2, for SPECweb99's 36 files of
//! about 5 MB per directory chosen by Zipf with α = 1; the within-class frequencies, names and
//! sizes as in `genspec99sesslogs.c` of Tim Brecht's userver, which cites the SPECweb99 user guide.

use std::fmt;
use std::num::NonZeroU32;

/// Size classes per directory.
pub const N_CLASSES: usize = 4;

/// Files per class.
pub const FILES_PER_CLASS: usize = 9;

/// Files per directory (36).
pub const FILES_PER_DIR: usize = N_CLASSES * FILES_PER_CLASS;

/// Bytes per directory: 5,119,484 (≈ 4.88 MiB).
pub const BYTES_PER_DIR: u64 = dir_bytes();

/// Most directories a set may have. Names carry five digits (`dir00000` … `dir99999`), as
/// SPECweb99's did, so that they sort and stay fixed-width; that is 488 GiB of files.
pub const MAX_SPECWEB_DIRS: u32 = 100_000;

/// SPECweb99's Zipf exponent over directories: directory `d` (0-based) is requested in
/// proportion to `1 / (d + 1)`.
pub const SPECWEB99_ZIPF_EXPONENT: f64 = 1.0;

/// How often each class is requested: 35 % class 0 (< 1 KB), 50 % class 1 (< 10 KB), 14 %
/// class 2 (< 100 KB), 1 % class 3 (< 1 MB).
pub const CLASS_WEIGHTS: [f64; N_CLASSES] = [0.35, 0.50, 0.14, 0.01];

/// Popularity rank of file `i` within its class: file 4 is the most requested, then 3, 5, 2, 6,
/// 1, 7, 8 and 0.
///
/// SPECweb99 publishes the within-class frequencies as 3.9, 5.9, 8.8, 17.7, 35.3, 11.8, 7.1, 5.0
/// and 4.4 % (files 0 to 8). Those are `1 / (rank × H₉)` rounded to 0.1 % (Zipf with α = 1 over
/// the nine ranks, H₉ the ninth harmonic number); the unrounded values are used here because the
/// rounded ones add up to 99.9 %.
const FILE_RANKS: [u32; FILES_PER_CLASS] = [9, 6, 4, 2, 1, 3, 5, 7, 8];

/// Size of file `file` of class `class`: ⌊102.4 × (file + 1) × 10^class⌋ bytes, so class 0 is
/// 102, 204, … 921 B and class 3 is 102,400 … 921,600 B. Out-of-range indices give 0.
pub const fn file_bytes(class: usize, file: usize) -> u64 {
    if class >= N_CLASSES || file >= FILES_PER_CLASS {
        return 0;
    }
    // 102.4 = 1024 / 10: the integer division floors exactly where floating point could not.
    1024 * (file as u64 + 1) * 10u64.pow(class as u32) / 10
}

/// Share of file `file` among the requests for its class: Zipf over its popularity rank (file 4
/// first, then 3, 5, 2, 6, 1, 7, 8, 0), `1 / (rank × H₉)`; 0 out of range.
pub fn file_weight(file: usize) -> f64 {
    let Some(&rank) = FILE_RANKS.get(file) else {
        return 0.0;
    };
    let harmonic: f64 = (1..=FILES_PER_CLASS).map(|k| 1.0 / k as f64).sum();
    1.0 / (f64::from(rank) * harmonic)
}

/// One file of the set, by directory, class and file index. Its [`Display`](fmt::Display) is
/// the path relative to the set's directory, `dir00042/class1_3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpecwebFile {
    pub dir: u32,
    pub class: u8,
    pub file: u8,
}

impl SpecwebFile {
    /// The file's size in bytes.
    pub fn bytes(&self) -> u64 {
        file_bytes(usize::from(self.class), usize::from(self.file))
    }
}

impl fmt::Display for SpecwebFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dir{:05}/class{}_{}", self.dir, self.class, self.file)
    }
}

/// The probability of each (directory, class, file) in a set of `n_dirs` directories:
/// `P(dir) × P(class) × P(file | class)`, with directories Zipf-distributed.
///
/// Build it once (it keeps one `f64` per directory) and call [`sample`](Self::sample) per
/// request with a uniform number from the caller's generator.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecwebMix {
    zipf_exponent: f64,
    /// Cumulative directory probabilities; the last is exactly 1.
    dir_cdf: Vec<f64>,
    class_cdf: [f64; N_CLASSES],
    /// Cumulative file probabilities within each class.
    file_cdf: [[f64; FILES_PER_CLASS]; N_CLASSES],
}

/// Why a [`SpecwebMix`] cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecwebMixError {
    #[error("{n_dirs} directories is more than the {MAX_SPECWEB_DIRS} a set may have")]
    TooManyDirs { n_dirs: u32 },
    #[error("Zipf exponent {exponent} is not a finite number ≥ 0")]
    BadExponent { exponent: f64 },
    #[error("{what} weights must be finite, ≥ 0 and add up to 1; these add up to {sum}")]
    BadWeights { what: &'static str, sum: f64 },
}

impl SpecwebMix {
    /// SPECweb99's mix over `n_dirs` directories: Zipf with exponent `zipf_exponent` over
    /// directories ([`SPECWEB99_ZIPF_EXPONENT`] for SPECweb99 itself), [`CLASS_WEIGHTS`] over
    /// classes and [`file_weight`] within each class.
    pub fn new(n_dirs: NonZeroU32, zipf_exponent: f64) -> Result<SpecwebMix, SpecwebMixError> {
        let file_weights = [std::array::from_fn(file_weight); N_CLASSES];
        SpecwebMix::with_weights(n_dirs, zipf_exponent, CLASS_WEIGHTS, file_weights)
    }

    /// A mix with the given class and per-class file weights (as a manifest may carry them).
    /// Weights must be finite, non-negative and add up to 1 (within 1e-9).
    pub fn with_weights(
        n_dirs: NonZeroU32,
        zipf_exponent: f64,
        class_weights: [f64; N_CLASSES],
        file_weights: [[f64; FILES_PER_CLASS]; N_CLASSES],
    ) -> Result<SpecwebMix, SpecwebMixError> {
        if n_dirs.get() > MAX_SPECWEB_DIRS {
            return Err(SpecwebMixError::TooManyDirs { n_dirs: n_dirs.get() });
        }
        if !zipf_exponent.is_finite() || zipf_exponent < 0.0 {
            return Err(SpecwebMixError::BadExponent { exponent: zipf_exponent });
        }
        let class_cdf = cdf(class_weights, "class")?;
        let mut file_cdf = [[0.0; FILES_PER_CLASS]; N_CLASSES];
        for (out, weights) in file_cdf.iter_mut().zip(file_weights) {
            *out = cdf(weights, "file")?;
        }
        let raw: Vec<f64> = (1..=n_dirs.get()).map(|k| f64::from(k).powf(-zipf_exponent)).collect();
        let total: f64 = raw.iter().sum();
        let mut acc = 0.0;
        let mut dir_cdf: Vec<f64> = raw
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        // Rounding may leave the sum a hair below 1; a sample of 0.999999… must still land.
        if let Some(last) = dir_cdf.last_mut() {
            *last = 1.0;
        }
        Ok(SpecwebMix { zipf_exponent, dir_cdf, class_cdf, file_cdf })
    }

    /// Number of directories.
    pub fn n_dirs(&self) -> u32 {
        // The constructor caps the length at MAX_SPECWEB_DIRS, so this never saturates.
        u32::try_from(self.dir_cdf.len()).unwrap_or(u32::MAX)
    }

    /// The Zipf exponent over directories.
    pub fn zipf_exponent(&self) -> f64 {
        self.zipf_exponent
    }

    /// Probability of directory `dir` (0 if out of range).
    pub fn dir_weight(&self, dir: u32) -> f64 {
        step(&self.dir_cdf, dir as usize)
    }

    /// Probability of class `class` (0 if out of range).
    pub fn class_weight(&self, class: usize) -> f64 {
        step(&self.class_cdf, class)
    }

    /// Probability of file `file` among the requests for class `class` (0 if out of range).
    pub fn file_weight(&self, class: usize, file: usize) -> f64 {
        self.file_cdf.get(class).map_or(0.0, |cdf| step(cdf, file))
    }

    /// Probability that a request is for this file: the product of the three above.
    pub fn weight(&self, dir: u32, class: usize, file: usize) -> f64 {
        self.dir_weight(dir) * self.class_weight(class) * self.file_weight(class, file)
    }

    /// The file a request drawn with `u`, uniform in [0, 1), should ask for. Values outside
    /// [0, 1) are clamped (NaN counts as 0), so any `f64` gives a valid file.
    ///
    /// One uniform number picks all three levels: each level's choice is made by inverse CDF
    /// and the position of `u` inside the chosen interval, rescaled to [0, 1), picks the next.
    /// An `f64` keeps about 20 significant bits after the three rescalings even at 100,000
    /// directories, far finer than any weight here.
    pub fn sample(&self, u: f64) -> SpecwebFile {
        let u = if u.is_nan() { 0.0 } else { u.clamp(0.0, 1.0 - f64::EPSILON / 2.0) };
        let (dir, u) = pick(&self.dir_cdf, u);
        let (class, u) = pick(&self.class_cdf, u);
        let (file, _) = pick(&self.file_cdf[class], u);
        // pick() returns indices below each table's length: < 100,000, < 4 and < 9.
        SpecwebFile { dir: dir as u32, class: class as u8, file: file as u8 }
    }
}

/// Cumulative sums of `weights`, checked; the last is set to exactly 1.
fn cdf<const N: usize>(weights: [f64; N], what: &'static str) -> Result<[f64; N], SpecwebMixError> {
    let sum: f64 = weights.iter().sum();
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) || (sum - 1.0).abs() > 1e-9 {
        return Err(SpecwebMixError::BadWeights { what, sum });
    }
    let mut acc = 0.0;
    let mut out = weights.map(|w| {
        acc += w;
        acc
    });
    out[N - 1] = 1.0;
    Ok(out)
}

/// The probability of index `i` in a CDF.
fn step(cdf: &[f64], i: usize) -> f64 {
    match i {
        0 => cdf.first().copied().unwrap_or(0.0),
        _ => match (cdf.get(i - 1), cdf.get(i)) {
            (Some(lo), Some(hi)) => hi - lo,
            _ => 0.0,
        },
    }
}

/// The index whose interval holds `u` (in [0, 1)), and `u`'s position inside it, in [0, 1).
fn pick(cdf: &[f64], u: f64) -> (usize, f64) {
    let i = cdf.partition_point(|&c| c <= u).min(cdf.len() - 1);
    let lo = if i == 0 { 0.0 } else { cdf[i - 1] };
    let width = cdf[i] - lo;
    let rest = if width > 0.0 { (u - lo) / width } else { 0.0 };
    (i, rest.clamp(0.0, 1.0 - f64::EPSILON / 2.0))
}

/// Sum of the 36 file sizes.
const fn dir_bytes() -> u64 {
    let mut total = 0;
    let mut class = 0;
    while class < N_CLASSES {
        let mut file = 0;
        while file < FILES_PER_CLASS {
            total += file_bytes(class, file);
            file += 1;
        }
        class += 1;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(n_dirs: u32) -> SpecwebMix {
        SpecwebMix::new(NonZeroU32::new(n_dirs).unwrap(), SPECWEB99_ZIPF_EXPONENT).unwrap()
    }

    /// The published SPECweb99 sizes (userver's `genspec99sesslogs.c` table; SPECweb96's
    /// workload page lists the same classes, with class 0's last file rounded to 922).
    #[test]
    fn sizes_are_the_published_table() {
        let published: [[u64; 9]; 4] = [
            [102, 204, 307, 409, 512, 614, 716, 819, 921],
            [1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 9216],
            [10240, 20480, 30720, 40960, 51200, 61440, 71680, 81920, 92160],
            [102400, 204800, 307200, 409600, 512000, 614400, 716800, 819200, 921600],
        ];
        for (class, row) in published.iter().enumerate() {
            for (file, &bytes) in row.iter().enumerate() {
                assert_eq!(file_bytes(class, file), bytes, "class {class} file {file}");
            }
        }
        assert_eq!(BYTES_PER_DIR, 5_119_484);
        assert_eq!(file_bytes(4, 0), 0);
        assert_eq!(file_bytes(0, 9), 0);
    }

    #[test]
    fn file_weights_round_to_the_published_percentages() {
        let published = [3.9, 5.9, 8.8, 17.7, 35.3, 11.8, 7.1, 5.0, 4.4];
        for (file, &pct) in published.iter().enumerate() {
            let w = file_weight(file) * 100.0;
            assert!((w - pct).abs() < 0.05, "file {file}: {w} vs {pct}");
        }
        assert_eq!(file_weight(9), 0.0);
    }

    #[test]
    fn weights_sum_to_one() {
        for n_dirs in [1, 2, 10, 1000] {
            let m = mix(n_dirs);
            let mut total = 0.0;
            for dir in 0..n_dirs {
                for class in 0..N_CLASSES {
                    for file in 0..FILES_PER_CLASS {
                        total += m.weight(dir, class, file);
                    }
                }
            }
            assert!((total - 1.0).abs() < 1e-9, "{n_dirs} dirs: {total}");
            let classes: f64 = (0..N_CLASSES).map(|c| m.class_weight(c)).sum();
            assert!((classes - 1.0).abs() < 1e-12);
        }
        assert!((CLASS_WEIGHTS.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(((0..9).map(file_weight).sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn directories_are_zipf() {
        let m = mix(10);
        let h10: f64 = (1..=10).map(|k| 1.0 / f64::from(k)).sum();
        for dir in 0..10 {
            let expect = 1.0 / (f64::from(dir + 1) * h10);
            assert!((m.dir_weight(dir) - expect).abs() < 1e-12, "dir {dir}");
        }
        assert_eq!(m.dir_weight(10), 0.0);
        assert_eq!(m.n_dirs(), 10);
        let flat = SpecwebMix::new(NonZeroU32::new(4).unwrap(), 0.0).unwrap();
        assert!((flat.dir_weight(3) - 0.25).abs() < 1e-12);
        assert_eq!(mix(1).dir_weight(0), 1.0);
    }

    #[test]
    fn sampling_follows_the_weights() {
        let m = mix(3);
        let n = 200_000;
        let mut counts = vec![0u32; 3 * FILES_PER_DIR];
        for i in 0..n {
            // A stratified grid over [0, 1): exact frequencies up to 1/n.
            let f = m.sample((f64::from(i) + 0.5) / f64::from(n));
            let idx =
                f.dir as usize * FILES_PER_DIR + usize::from(f.class) * 9 + usize::from(f.file);
            counts[idx] += 1;
        }
        for dir in 0..3 {
            for class in 0..N_CLASSES {
                for file in 0..FILES_PER_CLASS {
                    let got =
                        f64::from(counts[dir as usize * 36 + class * 9 + file]) / f64::from(n);
                    let want = m.weight(dir, class, file);
                    assert!(
                        (got - want).abs() < 2e-5 + want * 1e-3,
                        "{dir}/{class}/{file}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn any_number_gives_a_file() {
        let m = mix(100);
        for u in [0.0, -1.0, 1.0, 2.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1.0 - 1e-17] {
            let f = m.sample(u);
            assert!(f.dir < 100 && f.class < 4 && f.file < 9, "{u}: {f:?}");
        }
        assert_eq!(m.sample(0.0), SpecwebFile { dir: 0, class: 0, file: 0 });
        assert_eq!(m.sample(1.0), SpecwebFile { dir: 99, class: 3, file: 8 });
    }

    #[test]
    fn paths_and_sizes_of_samples() {
        let f = SpecwebFile { dir: 42, class: 1, file: 3 };
        assert_eq!(f.to_string(), "dir00042/class1_3");
        assert_eq!(f.bytes(), 4096);
        assert_eq!(SpecwebFile { dir: 99_999, class: 3, file: 8 }.to_string(), "dir99999/class3_8");
    }

    #[test]
    fn bad_mixes_are_refused() {
        let one = NonZeroU32::MIN;
        let files = [std::array::from_fn(file_weight); N_CLASSES];
        assert_eq!(
            SpecwebMix::new(NonZeroU32::new(MAX_SPECWEB_DIRS + 1).unwrap(), 1.0),
            Err(SpecwebMixError::TooManyDirs { n_dirs: MAX_SPECWEB_DIRS + 1 })
        );
        for exponent in [-0.5, f64::INFINITY] {
            assert!(matches!(
                SpecwebMix::new(one, exponent),
                Err(SpecwebMixError::BadExponent { .. })
            ));
        }
        assert!(matches!(SpecwebMix::new(one, f64::NAN), Err(SpecwebMixError::BadExponent { .. })));
        let err = SpecwebMix::with_weights(one, 1.0, [0.5, 0.5, 0.5, 0.0], files).unwrap_err();
        assert_eq!(err, SpecwebMixError::BadWeights { what: "class", sum: 1.5 });
        let err = SpecwebMix::with_weights(one, 1.0, [1.5, -0.5, 0.0, 0.0], files).unwrap_err();
        assert!(matches!(err, SpecwebMixError::BadWeights { what: "class", .. }));
        let mut odd = files;
        odd[2][0] = f64::NAN;
        let err = SpecwebMix::with_weights(one, 1.0, CLASS_WEIGHTS, odd).unwrap_err();
        assert!(matches!(err, SpecwebMixError::BadWeights { what: "file", .. }));
    }
}
