//! The seeded generator of the library's unit tests: SplitMix64, the generator of
//! `marquet bench`'s synthetic data (`src/bin/marquet/synth.rs`, which the library cannot
//! import because it belongs to the binary).

/// SplitMix64: a tiny, fast, seedable generator, reproducible across platforms.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
