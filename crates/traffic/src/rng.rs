//! Seeded PRNG for frame sizes (xoshiro256**, seeded through splitmix64).
//!
//! The seed study used a Mersenne twister; any good generator with a recorded seed
//! gives the same property: a run is reproducible from its seed.

use proto::FrameSize;

/// xoshiro256** (Blackman & Vigna), deterministic across platforms.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        Rng {
            s: [
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
            ],
        }
    }

    /// Independent stream for `stream` (e.g. a client number) under one run seed.
    pub fn for_stream(seed: u64, stream: u64) -> Self {
        let mut x = stream;
        Rng::new(seed ^ splitmix64(&mut x))
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `lo..=hi` without modulo bias (Lemire's method with rejection).
    pub fn range_inclusive(&mut self, lo: u32, hi: u32) -> u32 {
        debug_assert!(lo <= hi);
        let span = (hi - lo) as u64 + 1;
        loop {
            let m = (self.next_u64() >> 32) * span;
            let low = m & 0xffff_ffff;
            if low >= (1u64 << 32) % span {
                return lo + (m >> 32) as u32;
            }
        }
    }
}

/// Frame size per cycle: fixed, or drawn from the client's own stream.
#[derive(Debug, Clone)]
pub struct FrameSizer {
    spec: FrameSize,
    rng: Rng,
}

impl FrameSizer {
    pub fn new(spec: FrameSize, seed: u64, client: u32) -> Self {
        FrameSizer {
            spec,
            rng: Rng::for_stream(seed, client as u64),
        }
    }

    pub fn next_size(&mut self) -> u32 {
        match self.spec {
            FrameSize::Fixed { size } => size,
            FrameSize::Ranged { lo, hi } => self.rng.range_inclusive(lo, hi),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_vector() {
        // splitmix64 reference: first output for seed 0 is 0xe220a8397b1dcdaf.
        let mut x = 0u64;
        assert_eq!(splitmix64(&mut x), 0xe220_a839_7b1d_cdaf);
        // Same seed, same sequence; different seed, different sequence.
        let a: Vec<u64> = (0..4).map(|_| Rng::new(1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut r1 = Rng::new(1);
        let mut r2 = Rng::new(2);
        assert_ne!(r1.next_u64(), r2.next_u64());
    }

    #[test]
    fn ranged_sizes_cover_range_uniformly_and_reproducibly() {
        let spec = FrameSize::Ranged { lo: 64, hi: 1024 };
        let mut s = FrameSizer::new(spec, 42, 3);
        let draws: Vec<u32> = (0..96_100).map(|_| s.next_size()).collect();
        assert!(draws.iter().all(|&v| (64..=1024).contains(&v)));
        assert_eq!(*draws.iter().min().unwrap(), 64);
        assert_eq!(*draws.iter().max().unwrap(), 1024);
        // 961 values, ~100 draws each: every decile of the range within ±10 % of its share.
        let mut buckets = [0u32; 10];
        for v in &draws {
            buckets[((v - 64) * 10 / 961) as usize] += 1;
        }
        for b in buckets {
            assert!((8_650..=10_570).contains(&b), "{buckets:?}");
        }
        let mut again = FrameSizer::new(spec, 42, 3);
        assert!(draws.iter().take(1000).all(|&v| v == again.next_size()));
        let mut other_client = FrameSizer::new(spec, 42, 4);
        let o: Vec<u32> = (0..20).map(|_| other_client.next_size()).collect();
        assert_ne!(&draws[..20], &o[..]);
    }

    #[test]
    fn fixed_size_is_fixed() {
        let mut s = FrameSizer::new(FrameSize::Fixed { size: 256 }, 1, 1);
        assert!((0..100).all(|_| s.next_size() == 256));
    }
}
