//! The order cells run in: shuffled anew for every repetition (methodology: randomised order
//! spreads slow drifts of a shared machine over every cell instead of aliasing them onto a
//! few), reproducibly from the run's seed.

/// A permutation of `0..n` for repetition `rep` of a run seeded with `seed`.
pub(crate) fn shuffled(n: usize, seed: u64, rep: u32) -> Vec<usize> {
    let mut state = seed ^ (u64::from(rep) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut order: Vec<usize> = (0..n).collect();
    // Fisher-Yates with splitmix64.
    for i in (1..n).rev() {
        let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_reproducible_and_differ_per_repetition() {
        let a = shuffled(20, 7, 0);
        assert_eq!(a, shuffled(20, 7, 0));
        assert_ne!(a, shuffled(20, 7, 1));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..20).collect::<Vec<_>>());
        assert!(shuffled(0, 1, 0).is_empty());
    }
}
