//! `/cpu?n=N`: N units of deterministic CPU work on the worker's thread, then a short text
//! naming the result. A unit is [`ROUNDS_PER_UNIT`] dependent rounds of the splitmix64 mixer,
//! about a microsecond on a 2020s x86 core (`cargo test -p herd-serve --release -- --ignored`
//! is not used: bench/ measures it). The work blocks its worker on purpose, as a CPU-bound
//! handler in any server would; N is capped so one request cannot hold a worker for long.

use std::hint::black_box;
use std::io::Write as _;

use crate::pages::query;
use crate::response::{Reply, Responder, Status};

/// Rounds of the mixer per unit of work.
pub(crate) const ROUNDS_PER_UNIT: u64 = 256;

/// Largest N: about a second of one core.
pub(crate) const MAX_UNITS: u64 = 1_000_000;

/// Answers `/cpu?<query>`.
pub(crate) fn serve(query: &[u8], r: &mut Responder<'_>) -> Reply {
    let Ok(n) = query::number(query, b"n", 0, MAX_UNITS) else {
        return r.text(
            Status::BadRequest,
            "herd serve: /cpu needs ?n=N, N units of work from 0 to 1000000\n",
        );
    };
    let result = work(n);
    r.body_with(Status::Ok, b"text/plain", |out| {
        // Fixed width, so every response to the same N has the same length (ab checks it).
        // Writing into a Vec cannot fail.
        let _ = writeln!(out, "cpu n={n} result={result:016x}");
    })
}

/// The work itself: `units × ROUNDS_PER_UNIT` rounds, each depending on the last, so the
/// compiler can neither skip nor vectorise them.
pub(crate) fn work(units: u64) -> u64 {
    let mut x = 0u64;
    for _ in 0..black_box(units) * ROUNDS_PER_UNIT {
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x = z ^ (z >> 31);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_dependent_on_n() {
        assert_eq!(work(0), 0);
        assert_eq!(work(3), work(3));
        assert_ne!(work(3), work(4));
    }
}
