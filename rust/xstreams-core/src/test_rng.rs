//! The unit tests' random sequences: a tiny deterministic generator (xorshift64), so a
//! failing case replays from the seed its test names.

/// xorshift64 over a nonzero state.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from `seed` (made odd: a zero state would stay zero).
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (> 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
