//! splitmix64: tiny, fast, and good enough to choose requests, space Poisson arrivals and draw
//! think times; a few lines instead of a dependency, the same sequence on every platform, and
//! the same seed replays the same run.

#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 bits.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn between(&mut self, lo: u32, hi: u32) -> u32 {
        if hi <= lo {
            return lo;
        }
        let span = u64::from(hi - lo) + 1;
        // The modulo bias is below 2^-32 for spans this small.
        lo + (self.next_u64() % span) as u32
    }

    /// Exponentially distributed with the given mean, by inversion.
    pub(crate) fn exponential(&mut self, mean: f64) -> f64 {
        // 53 random bits → u in (0, 1]: never 0, so the logarithm is finite.
        let u = ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        -mean * u.ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn between_is_inclusive_and_covers() {
        let mut rng = Rng::new(3);
        let mut seen = [false; 11];
        for _ in 0..10_000 {
            let v = rng.between(5, 15);
            assert!((5..=15).contains(&v));
            seen[(v - 5) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(rng.between(4, 4), 4);
    }

    #[test]
    fn unit_stays_in_range() {
        let mut rng = Rng::new(9);
        let (mut lo, mut hi) = (1.0f64, 0.0f64);
        for _ in 0..100_000 {
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
            lo = lo.min(u);
            hi = hi.max(u);
        }
        assert!(lo < 0.001 && hi > 0.999);
    }
}
