//! Rough timings of the core without Python: `cargo run --release --example quickbench`.
use std::time::Instant;
use xstreams_core::Store;

fn main() {
    let s = Store::default();
    let n = 500_000;
    let t = Instant::now();
    for _ in 0..n {
        s.execute(&[b"XADD", b"s", b"*", b"f", b"v"]);
    }
    let dt = t.elapsed();
    println!("XADD: {:.0} ops/s ({:.0} ns/op)", n as f64 / dt.as_secs_f64(), dt.as_nanos() as f64 / n as f64);
    let m = 20_000;
    let t = Instant::now();
    for _ in 0..m {
        s.execute(&[b"XRANGE", b"s", b"-", b"+", b"COUNT", b"100"]);
    }
    let dt = t.elapsed();
    println!("XRANGE COUNT 100: {:.0} ops/s ({:.0} ns/op)", m as f64 / dt.as_secs_f64(), dt.as_nanos() as f64 / m as f64);
    let t = Instant::now();
    let mut k = 0u64;
    for i in 0..m {
        let start = format!("{}", 1_000_000 + i);
        let r = s.execute(&[b"XRANGE", b"s", start.as_bytes(), b"+", b"COUNT", b"100"]);
        if let xstreams_core::Reply::Array(v) = r {
            k += v.len() as u64;
        }
    }
    let dt = t.elapsed();
    println!("XRANGE seek+100: {:.0} ns/op ({k})", dt.as_nanos() as f64 / m as f64);
}
