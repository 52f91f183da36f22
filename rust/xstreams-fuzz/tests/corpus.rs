//! Every fuzz harness over (1) the committed corpus `fuzz/corpus/<target>/` and the
//! crashes kept as regressions `fuzz/regressions/<target>/`, and (2) a seeded mutation
//! loop over that corpus: `XS_FUZZ_ITERS` inputs per target (default 400), seed
//! `XS_FUZZ_SEED` (random by default, always printed). A failing input is written to
//! `$CARGO_TARGET_TMPDIR/fuzz-failure-<target>-<seed>-<n>` and the seed printed, so
//! `XS_FUZZ_SEED=<seed> cargo test -p xstreams-fuzz` replays the run; copy the file into
//! `fuzz/regressions/<target>/` to keep it.
//!
//! This is the stable-Rust stand-in for the coverage-guided runs (`.ci/fuzz`, nightly).

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn files(dir: PathBuf) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, Vec<u8>)> = entries
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| (e.path(), fs::read(e.path()).expect("readable corpus file")))
        .collect();
    out.sort();
    out
}

fn seed_inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = files(fuzz_dir().join("corpus").join(target));
    v.extend(files(fuzz_dir().join("regressions").join(target)));
    v
}

#[test]
fn committed_corpus_and_regressions_replay_cleanly() {
    for target in xstreams_fuzz::TARGETS {
        let inputs = seed_inputs(target);
        assert!(!inputs.is_empty(), "no corpus for fuzz target {target}");
        for (path, data) in inputs {
            if catch_unwind(|| xstreams_fuzz::run(target, &data)).is_err() {
                panic!("fuzz target {target} fails on {}", path.display());
            }
        }
    }
}

/// xorshift64*: small, seedable, good enough to mutate inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One libFuzzer-style mutation of `data`: flip, set to an interesting byte, insert,
/// delete, duplicate a slice, or splice with another input.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    const INTERESTING: [u8; 10] = [0, 1, 0x7f, 0x80, 0xff, b'\r', b'\n', b'*', b'$', b'-'];
    for _ in 0..1 + rng.below(4) {
        let len = data.len();
        match rng.below(6) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => {
                let i = rng.below(len + 1);
                data.insert(i, rng.next() as u8);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(16));
                data.drain(i..i + n);
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(32));
                let piece = data[i..i + n].to_vec();
                let at = rng.below(len + 1);
                data.splice(at..at, piece);
            }
            _ if !other.is_empty() => {
                let i = rng.below(other.len());
                let n = 1 + rng.below((other.len() - i).min(64));
                let at = rng.below(len + 1);
                data.splice(at..at, other[i..i + n].iter().copied());
            }
            _ => data.push(rng.next() as u8),
        }
    }
}

#[test]
fn seeded_mutations_of_the_corpus_hold() {
    let iters: usize = std::env::var("XS_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let seed: u64 = std::env::var("XS_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("clock after 1970");
            t.as_nanos() as u64 | 1
        });
    println!("fuzz mutation loop: XS_FUZZ_SEED={seed} XS_FUZZ_ITERS={iters}");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for target in xstreams_fuzz::TARGETS {
        let corpus: Vec<Vec<u8>> = seed_inputs(target).into_iter().map(|(_, d)| d).collect();
        let mut rng = Rng(seed ^ xstreams_fuzz_target_salt(target));
        for n in 0..iters {
            let mut data = corpus[rng.below(corpus.len())].clone();
            let other = corpus[rng.below(corpus.len())].clone();
            mutate(&mut rng, &mut data, &other);
            if catch_unwind(AssertUnwindSafe(|| xstreams_fuzz::run(target, &data))).is_err() {
                let path = out.join(format!("fuzz-failure-{target}-{seed}-{n}"));
                fs::write(&path, &data).expect("write the failing input");
                panic!(
                    "fuzz target {target} failed at input {n} of XS_FUZZ_SEED={seed}; \
                     input kept in {}",
                    path.display()
                );
            }
        }
    }
}

fn xstreams_fuzz_target_salt(target: &str) -> u64 {
    target.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}
