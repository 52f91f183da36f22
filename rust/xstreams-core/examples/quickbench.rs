//! Rough timings of the core without Python: `cargo run --release --example quickbench`.
//! (Figures that matter live in bench/; this is a profiling aid.)
//!
//! `quickbench limit [N]`: the physical limit of XADD, `support/limit.rs`'s `xadd_loop`
//! (the typed XADD in a Rust loop, N entries per value size, 300,000 by default) for
//! values of 8, 64 and 512 bytes, beside the same XADD given as arguments.
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use xstreams_core::Store;

#[path = "support/limit.rs"]
mod limit;

fn physical_limit(n: usize) {
    limit::check_values();
    for size in [8usize, 64, 512] {
        // Best of 5, each on an empty stream (as the Python benchmarks' reps).
        let mut best = f64::MAX;
        for _ in 0..5 {
            let s = Store::default();
            let t = Instant::now();
            limit::xadd_loop(&s, 0, b"s", size, 0, n).expect("xadd");
            best = best.min(t.elapsed().as_secs_f64());
        }
        let mut argv_best = f64::MAX;
        let value = vec![b'7'; size];
        for _ in 0..5 {
            let s = Store::default();
            let t = Instant::now();
            for _ in 0..n {
                s.execute(&[b"XADD", b"s", b"*", b"f", &value]);
            }
            argv_best = argv_best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "XADD {size} B: typed {:.0} ops/s ({:.0} ns/op), as arguments {:.0} ops/s",
            n as f64 / best,
            best * 1e9 / n as f64,
            n as f64 / argv_best,
        );
    }
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    if which == "limit" {
        let n = std::env::args()
            .nth(2)
            .and_then(|a| a.parse().ok())
            .unwrap_or(300_000);
        physical_limit(n);
        return;
    }
    let scale: u32 = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let s = Store::default();
    let n = 500_000 / scale;
    let t = Instant::now();
    for _ in 0..n {
        s.execute(&[b"XADD", b"s", b"*", b"f", b"v"]);
    }
    let dt = t.elapsed();
    println!("XADD: {:.0} ns/op", dt.as_nanos() as f64 / n as f64);
    if which == "xadd" {
        return;
    }
    let m = 20_000 / scale;
    let t = Instant::now();
    for _ in 0..m {
        s.execute(&[b"XRANGE", b"s", b"-", b"+", b"COUNT", b"100"]);
    }
    let dt = t.elapsed();
    println!(
        "XRANGE COUNT 100: {:.0} ns/op",
        dt.as_nanos() as f64 / m as f64
    );
}
