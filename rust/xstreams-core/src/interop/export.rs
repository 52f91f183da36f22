//! Checking an exported RDB file before anyone relies on it: `xstreams export` hands the
//! bytes it wrote, read back from the disk, to [`verify_file`], which decodes every key
//! exactly as an import (and RESTORE) would and compares what it holds with the keyspace
//! it came from, through the engine's own read commands. A file that fails is a bug of
//! the writer; the caller removes it and reports the reason.

use crate::command::reply::Reply;
use crate::keyspace::db::{Keyspace, Value, NUM_DBS};
use crate::keyspace::rdb::codec::Malformed;
use crate::keyspace::rdb::file::{payload_of, read_file};
use crate::keyspace::rdb::{restore_payload, RestoreError};
use crate::store::Store;

/// `radix-tree-nodes` blanked: the radix tree's shape depends on the history of its
/// inserts and deletes (in redis-server too), so a stream rebuilt from a file has its
/// own count.
fn without_rax_nodes(r: Reply) -> Reply {
    match r {
        Reply::Map(mut m) => {
            for (k, v) in m.iter_mut() {
                if *k == Reply::Bulk(b"radix-tree-nodes".to_vec()) {
                    *v = Reply::Nil;
                }
            }
            Reply::Map(m)
        }
        other => other,
    }
}

/// What a client sees of `v`: a string's bytes, a stream's XINFO STREAM FULL (every
/// entry, group, pending entry, consumer and the IDMP counters), XRANGE and XINFO GROUPS,
/// from a scratch store at time `now`.
fn views(scratch: &Store, v: &Value, now: i64) -> Vec<Reply> {
    scratch.set_clock(Some(now));
    scratch.with_keyspace(|ks| ks.dbs[0].set(b"k", v.clone(), None));
    let out = [
        &[b"TYPE".as_slice(), b"k"][..],
        &[b"GET", b"k"],
        &[b"XINFO", b"STREAM", b"k", b"FULL", b"COUNT", b"0"],
        &[b"XRANGE", b"k", b"-", b"+"],
        &[b"XINFO", b"GROUPS", b"k"],
    ]
    .iter()
    .map(|args| without_rax_nodes(scratch.execute(args)))
    .collect();
    scratch.execute(&[b"DEL", b"k"]);
    out
}

/// Check that `buf` (an RDB file written from `ks` at `now`) loads: its checksum, every
/// key's value decodes and validates, holds what the keyspace holds (the same DUMP
/// serialization), with the same expiry, and no unexpired key is missing. Returns the
/// number of keys checked, or the first problem found.
pub fn verify_file(buf: &[u8], ks: &Keyspace, now: i64) -> Result<u64, String> {
    let mut problem: Option<String> = None;
    let mut keys = 0u64;
    let (theirs, ours) = (Store::default(), Store::default());
    let read = read_file(buf, |k| {
        let name = || format!("key {:?} of db {}", String::from_utf8_lossy(&k.key), k.db);
        let fail = |why: String| Malformed::new(why);
        let entry = (k.db as usize)
            .lt(&NUM_DBS)
            .then(|| ks.dbs[k.db as usize].get(&k.key))
            .flatten()
            .ok_or_else(|| fail(format!("{} is not in the store", name())))?;
        if entry.expire_at != k.expire_ms {
            return Err(fail(format!(
                "{}: expiry {:?}, the store has {:?}",
                name(),
                k.expire_ms,
                entry.expire_at
            )));
        }
        let restored =
            restore_payload(&payload_of(k.ty, k.body), now, &ks.config).map_err(|e| {
                let why = match e {
                    RestoreError::VersionOrChecksum => "bad footer".to_string(),
                    RestoreError::BadFormat(d) => d,
                    RestoreError::Unsupported(t) => format!("unsupported type {t}"),
                };
                fail(format!("{} does not load: {why}", name()))
            })?;
        if views(&theirs, &restored, now) != views(&ours, &entry.value, now) {
            return Err(fail(format!(
                "{} loads with contents that differ from the store's",
                name()
            )));
        }
        keys += 1;
        Ok(())
    });
    if let Err(m) = read {
        problem = Some(m.0);
    }
    if let Some(p) = problem {
        return Err(p);
    }
    let expected: u64 = ks
        .dbs
        .iter()
        .map(|db| {
            db.entries_in_order()
                .filter(|(_, e)| e.expire_at.is_none_or(|t| t > now))
                .count() as u64
        })
        .sum();
    if keys != expected {
        return Err(format!("the file holds {keys} keys, the store {expected}"));
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::rdb::file::write_file;

    fn run(s: &Store, cmd: &[&str]) {
        let parts: Vec<&[u8]> = cmd.iter().map(|p| p.as_bytes()).collect();
        s.execute(&parts);
    }

    #[test]
    fn a_written_file_verifies_and_a_changed_store_does_not() {
        let s = Store::default();
        s.set_clock(Some(1_700_000_000_000));
        let now = s.now_ms();
        run(&s, &["XADD", "s", "1-0", "f", "v"]);
        run(&s, &["XADD", "s", "2-0", "f", "v"]);
        run(&s, &["SET", "k", "v"]);
        let file = s.with_keyspace(|ks| write_file(ks, now));
        assert_eq!(s.with_keyspace(|ks| verify_file(&file, ks, now)), Ok(2));
        let mut damaged = file.clone();
        let n = damaged.len();
        damaged[n - 12] ^= 1;
        assert!(s
            .with_keyspace(|ks| verify_file(&damaged, ks, now))
            .is_err());
        run(&s, &["XADD", "s", "3-0", "f", "v"]);
        let e = s
            .with_keyspace(|ks| verify_file(&file, ks, now))
            .unwrap_err();
        assert!(e.contains("differ"), "{e}");
        run(&s, &["SET", "k2", "v"]);
        let file = s.with_keyspace(|ks| write_file(ks, now));
        run(&s, &["DEL", "k2"]);
        let e = s
            .with_keyspace(|ks| verify_file(&file, ks, now))
            .unwrap_err();
        assert!(e.contains("not in the store"), "{e}");
        run(&s, &["SET", "k2", "v"]);
        run(&s, &["SET", "k3", "v"]);
        let e = s
            .with_keyspace(|ks| verify_file(&file, ks, now))
            .unwrap_err();
        assert!(e.contains("holds 3 keys, the store 4"), "{e}");
    }

    /// Deletes that removed nodes leave a radix tree shaped by its history: the file's
    /// stream has fewer rax nodes, and still verifies.
    #[test]
    fn a_stream_shaped_by_deletes_verifies() {
        let s = Store::default();
        s.set_clock(Some(1_700_000_000_000));
        s.config_set("stream-node-max-entries", "2").unwrap();
        let now = s.now_ms();
        for ms in 1..=9 {
            run(&s, &["XADD", "s", &format!("{ms}-0"), "f", "v"]);
        }
        run(&s, &["XDEL", "s", "3-0", "4-0", "7-0"]);
        run(&s, &["XGROUP", "CREATE", "s", "g", "0"]);
        run(
            &s,
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "COUNT",
                "2",
                "STREAMS",
                "s",
                ">",
            ],
        );
        let file = s.with_keyspace(|ks| write_file(ks, now));
        assert_eq!(s.with_keyspace(|ks| verify_file(&file, ks, now)), Ok(1));
    }
}
