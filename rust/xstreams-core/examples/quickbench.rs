//! Rough timings of the core without Python: `cargo run --release --example quickbench`.
//! (Figures that matter live in bench/; this is a profiling aid.)
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use xstreams_core::Store;

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
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
