//! SplitMix64: a tiny seeded generator for Zobrist keys and for the bot's playouts.
//!
//! It is not for secrets. It is here because the engine must be deterministic for a given seed
//! on every platform and version, which a ten-line generator we own guarantees.

const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 output function: a bijection on `u64` that scrambles its input.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The `n`-th output (from 0) of the SplitMix64 stream seeded with `seed`, without stepping
/// through the ones before it.
pub(crate) fn nth(seed: u64, n: u64) -> u64 {
    mix(seed.wrapping_add(n.wrapping_add(1).wrapping_mul(GAMMA)))
}

/// A SplitMix64 stream.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A stream that starts from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift: no division, a negligible bias.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nth_matches_stepping_the_stream() {
        let mut rng = SplitMix64::new(42);
        for n in 0..10 {
            assert_eq!(rng.next_u64(), nth(42, n));
        }
    }

    #[test]
    fn the_reference_seed_gives_the_published_first_output() {
        // The first output of SplitMix64 seeded with 0, as in the reference implementation.
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = SplitMix64::new(7);
        assert!((0..1000).all(|_| rng.below(9) < 9));
    }
}
