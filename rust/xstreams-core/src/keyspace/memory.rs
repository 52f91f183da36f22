//! The engine's memory accounting, for `maxmemory` and INFO memory.
//!
//! [`dataset_bytes`] adds up what every key holds from each value's own accounting: key
//! names, strings, and for streams their nodes, consumer groups, pending entries and
//! IDMP maps (`Stream::heap_bytes`). [`used_memory`] is that plus a fixed overhead
//! ([`BASE_OVERHEAD`], what an empty server reports), the figure `maxmemory` is compared
//! with and INFO shows as `used_memory`.
//!
//! Walking every key on every write would cost too much, so a [`crate::base::gauge::Gauge`] keeps the last
//! walk and adds the argument bytes of each write since; it walks again once the writes
//! since add up to 1/64 of the limit (at least 64 KiB), and before refusing a command, so
//! a refusal is always decided on an exact walk (deletes shrink memory; the estimate only
//! grows).

use crate::keyspace::db::{Keyspace, Value};

/// Fixed overhead counted in `used_memory` (the server's own structures).
pub const BASE_OVERHEAD: u64 = 1024 * 1024;

/// Bytes held by the data of every database.
pub fn dataset_bytes(ks: &Keyspace) -> u64 {
    let mut bytes = 0u64;
    for db in &ks.dbs {
        for (k, e) in db.entries_in_order() {
            bytes += k.len() as u64 + 64;
            bytes += match &e.value {
                Value::Str(s) => s.len() as u64 + 16,
                Value::Stream(s) => s.heap_bytes() as u64,
            };
        }
    }
    bytes
}

/// `used_memory`: the data plus the fixed overhead.
pub fn used_memory(ks: &Keyspace) -> u64 {
    dataset_bytes(ks) + BASE_OVERHEAD
}

/// Is used memory above `maxmemory` (when set)? Commands flagged `denyoom` are then
/// refused (redis-server's `noeviction`).
pub fn over_maxmemory(ks: &mut Keyspace) -> bool {
    let limit = ks.config.maxmemory;
    if limit == 0 {
        return false;
    }
    let mut gauge = std::mem::take(&mut ks.mem);
    let over = gauge.over(limit, || used_memory(ks));
    ks.mem = gauge;
    over
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::gauge::Gauge;
    use crate::store::Store;

    #[test]
    fn accounting_grows_with_data_and_shrinks_on_delete() {
        let s = Store::default();
        let empty = s.with_keyspace(|ks| used_memory(ks));
        assert_eq!(empty, BASE_OVERHEAD);
        for i in 0..1000 {
            let id = format!("{}-1", i + 1);
            s.execute(&[b"XADD", b"s", id.as_bytes(), b"field", &[b'x'; 100]]);
        }
        let full = s.with_keyspace(|ks| dataset_bytes(ks));
        assert!(full > 100_000, "{full}");
        s.execute(&[b"DEL", b"s"]);
        assert_eq!(s.with_keyspace(|ks| used_memory(ks)), BASE_OVERHEAD);
    }

    #[test]
    fn gauge_refuses_only_on_an_exact_walk() {
        let s = Store::default();
        s.with_keyspace(|ks| {
            let mut g = Gauge::default();
            assert!(!g.over(BASE_OVERHEAD + 10, || used_memory(ks)));
            // An estimate above the limit is checked by walking: nothing is stored.
            g.note_write(1 << 20);
            assert!(!g.over(BASE_OVERHEAD + 10, || used_memory(ks)));
            assert!(g.over(BASE_OVERHEAD - 1, || used_memory(ks)));
        });
    }
}
