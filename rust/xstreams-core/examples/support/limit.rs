//! The physical limit of XADD: the typed XADD ([`Store::xadd`]) called in a plain Rust
//! loop, with no Python, no argument vector and no reply (`quickbench limit` times it).
//! A benchmark's code, kept out of the library and the wheel; `bench/run.py`'s "rust
//! loop" driver times the public batch path (`Store.xadd_batch`) instead.

use xstreams_core::command::XaddArgs;
use xstreams_core::{CmdError, Store};

/// Distinct values per size, as the Python benchmarks' pool (`bench_peers.values`).
pub const POOL: usize = 65_536;

/// `n` XADDs of `key * f <value>` on database `db`, entry `i` (from `off`) with value
/// `i mod POOL` as a zero-padded decimal counter of `size` bytes: the values the Python
/// benchmarks send. Stops at the first error.
pub fn xadd_loop(
    store: &Store,
    db: usize,
    key: &[u8],
    size: usize,
    off: usize,
    n: usize,
) -> Result<(), CmdError> {
    let mut value = vec![b'0'; size.max(1)];
    for i in off..off + n {
        counter(&mut value, i % POOL);
        let pairs: [&[u8]; 2] = [b"f", &value];
        store.xadd(db, &XaddArgs::new(key, &pairs))?;
    }
    Ok(())
}

/// Write `n` right-aligned in `buf`, zero-padded (the rest of `buf` stays zeros from
/// the start: a `usize` has at most 20 digits, and the high digits are cut if `buf` is
/// shorter, as no caller needs).
fn counter(buf: &mut [u8], mut n: usize) {
    for b in buf.iter_mut().rev().take(20) {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// The values are the Python benchmarks' pool (`quickbench limit` checks it first).
pub fn check_values() {
    // bench_peers.values(8)[123] == b"00000123"
    let mut v = vec![b'0'; 8];
    counter(&mut v, 99_999);
    counter(&mut v, 123);
    assert_eq!(&v, b"00000123");
}
