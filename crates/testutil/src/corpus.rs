//! Corpus-driven parser tests: the files of a corpus folder, and many deterministic mutations
//! of them through a fuzz entry point (a small stand-in for a fuzzer on stable Rust).
//! `HERD_MUTATIONS` raises the count for a longer local run; `HERD_SEED` varies the inputs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

/// The files of corpus folder `dir`, sorted by name. Panics (the test fails) when the folder
/// cannot be read.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> =
        entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

/// The names of the files in corpus folder `dir`, sorted; fails when there are fewer than
/// `min` (the corpus went missing).
pub fn names(dir: &Path, min: usize) -> Vec<String> {
    let names: Vec<String> = files(dir)
        .iter()
        .map(|p| p.file_name().and_then(|n| n.to_str()).unwrap().to_owned())
        .collect();
    assert!(
        names.len() >= min,
        "corpus {}: {} files, expected {min} or more",
        dir.display(),
        names.len()
    );
    names
}

/// `default_count` mutants (or `HERD_MUTATIONS`) of the files in `dir`: each a corpus file
/// picked at random, changed by `mutant` (given every file, e.g. to splice from) and handed
/// to `fuzz`.
pub fn mutations(
    dir: &Path,
    default_count: usize,
    mut mutant: impl FnMut(&mut Vec<u8>, &[Vec<u8>], &mut Rng),
    mut fuzz: impl FnMut(&[u8]),
) {
    let files: Vec<Vec<u8>> = files(dir).iter().map(|p| fs::read(p).unwrap()).collect();
    assert!(!files.is_empty(), "corpus {} is empty", dir.display());
    let count = env_number("HERD_MUTATIONS").unwrap_or(default_count);
    let mut rng = Rng::from_env();
    for _ in 0..count {
        let mut data = files[rng.below(files.len())].clone();
        mutant(&mut data, &files, &mut rng);
        fuzz(&data);
    }
}

/// One to four rounds of [`mutate`].
pub fn rounds(data: &mut Vec<u8>, files: &[Vec<u8>], rng: &mut Rng, interesting: &[&[u8]]) {
    for _ in 0..=rng.below(4) {
        mutate(data, files, rng, interesting);
    }
}

/// Byte-level mutations for text-like and varint-framed inputs: a flipped bit, an
/// `interesting` piece inserted, up to 16 bytes cut, up to 64 bytes repeated elsewhere, the
/// tail of another corpus file spliced on, or the input cut short.
pub fn mutate(data: &mut Vec<u8>, files: &[Vec<u8>], rng: &mut Rng, interesting: &[&[u8]]) {
    let at = rng.below(data.len() + 1);
    match rng.below(6) {
        0 if !data.is_empty() => {
            let i = at.min(data.len() - 1);
            data[i] ^= 1 << rng.below(8);
        }
        1 => {
            let piece = interesting[rng.below(interesting.len())];
            data.splice(at..at, piece.iter().copied());
        }
        2 => {
            let end = (at + rng.below(16)).min(data.len());
            data.drain(at..end);
        }
        3 => {
            let end = (at + rng.below(64)).min(data.len());
            let copy = data[at..end].to_vec();
            let to = rng.below(data.len() + 1);
            data.splice(to..to, copy);
        }
        4 => {
            let other = &files[rng.below(files.len())];
            let from = rng.below(other.len() + 1);
            data.truncate(at);
            data.extend_from_slice(&other[from..]);
        }
        _ => data.truncate(at),
    }
}

/// A number from the environment, if set and valid.
pub fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}

/// xorshift64: the same mutants on every machine for a given seed.
pub struct Rng(u64);

impl Rng {
    /// Seeded from `HERD_SEED`, else a fixed seed.
    pub fn from_env() -> Rng {
        Rng(env_number("HERD_SEED").map_or(0x9e37_79b9_7f4a_7c15, |s| s as u64 | 1))
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if n == 0 {
            0
        } else {
            (self.0 % n as u64) as usize
        }
    }
}
