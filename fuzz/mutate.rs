//! The stable fuzz-smoke's input generator, shared by the `fuzz_smoke` tests of
//! proto, firewall and fwbench (included with `#[path]`): the checked-in seed corpus,
//! then seeded random mutations of it (bit flips, byte insertions and deletions,
//! splices, repeated chunks, interesting numbers). No nightly needed; `cargo fuzz`
//! (bench/fuzz.sh) explores far more, this only keeps the corpus and the most common
//! crash shapes in every `cargo test`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The seed files of one corpus (`fuzz/corpus/<target>/`), sorted by name.
pub fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: empty corpus", dir.display());
    files
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

/// xorshift64*: small, seeded, good enough to pick mutations.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const INTERESTING: &[&[u8]] = &[
    b"0",
    b"-1",
    b"4294967295",
    b"18446744073709551615",
    b"1e308",
    b"nan",
    b"..",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\n",
    b"\0",
    b"\xff\xff\xff\xff",
    b"\x00\x40\x00\x00",
    b"0-99999999999",
];

/// One mutation of `input`, using `seeds` for splices.
pub fn mutate(rng: &mut Rng, input: &[u8], seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(7) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 => v.insert(at, rng.next() as u8),
            2 if !v.is_empty() => {
                let n = 1 + rng.below(16.min(v.len()));
                let i = rng.below(v.len() - n + 1);
                v.drain(i..i + n);
            }
            3 => {
                let s = &seeds[rng.below(seeds.len())];
                if !s.is_empty() {
                    let a = rng.below(s.len());
                    let b = a + rng.below(s.len() - a + 1);
                    v.splice(at..at, s[a..b].iter().copied());
                }
            }
            4 if !v.is_empty() => {
                let a = rng.below(v.len());
                let b = (a + 1 + rng.below(32)).min(v.len());
                let chunk = v[a..b].to_vec();
                for _ in 0..1 + rng.below(8) {
                    v.splice(at.min(v.len())..at.min(v.len()), chunk.iter().copied());
                }
            }
            5 => {
                let x = INTERESTING[rng.below(INTERESTING.len())];
                v.splice(at..at, x.iter().copied());
            }
            _ if !v.is_empty() => {
                v.truncate(rng.below(v.len()));
            }
            _ => v.push(b'x'),
        }
    }
    v
}

/// Call `f` with every seed, then with `rounds` mutations (seeded by `seed`, so a
/// failure is reproducible; the last input is in `$TMPDIR/fuzz-smoke-<target>-last`),
/// for at most 5 s. `FUZZ_SMOKE_SECS=N` runs for N s instead, without a round limit,
/// and `FUZZ_SMOKE_SEED` changes the seed: a longer fuzz run on stable.
pub fn run(target: &str, seed: u64, rounds: usize, mut f: impl FnMut(&[u8])) {
    let seeds: Vec<Vec<u8>> = corpus(target).into_iter().map(|(_, b)| b).collect();
    for s in &seeds {
        f(s);
    }
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let budget = env("FUZZ_SMOKE_SECS");
    let rounds = if budget.is_some() { usize::MAX } else { rounds };
    let budget = budget.unwrap_or(5);
    let mut rng = Rng::new(env("FUZZ_SMOKE_SEED").unwrap_or(seed));
    let t0 = std::time::Instant::now();
    let mut done = 0usize;
    for i in 0..rounds {
        let base = &seeds[rng.below(seeds.len())];
        let input = mutate(&mut rng, base, &seeds);
        let dump = std::env::temp_dir().join(format!("fuzz-smoke-{target}-last"));
        let _ = std::fs::write(&dump, &input);
        f(&input);
        done = i + 1;
        if t0.elapsed().as_secs() >= budget {
            break;
        }
    }
    eprintln!(
        "fuzz-smoke {target}: {} seeds and {done} mutations in {:.0} s, no failure",
        seeds.len(),
        t0.elapsed().as_secs_f64()
    );
}
