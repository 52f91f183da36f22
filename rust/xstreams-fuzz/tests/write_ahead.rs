//! The log records of a batch of rows are written together, not one write per row, and
//! a large batch's are written ahead (`persist::ahead`): while its rows still run, the
//! part already encoded goes to the log on a helper thread, chunk by chunk. On the
//! simulated disk (`persist::disk::sim`):
//! * an atomic step (`xadd_rows_atomic`, the Spark sink's rows and marker) of 10 MB takes
//!   several writes; a freeze at any of its disk operations fails the step with MISCONF
//!   and refuses later writes; after the power loss (whatever part of the unsynced bytes
//!   survives) the reopened store holds the whole step or none of it, and none of it
//!   when the freeze came before the block's last write; without a second handle on
//!   the log (no thread can write ahead) it is written whole at its end;
//! * a batch (`xadd_rows`) of 1,000 rows takes one write (and the fsync of `always`); a
//!   freeze inside a large one fails the call with MISCONF, and the reopened store holds
//!   the rows before some point, whole, in order.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use xstreams_core::interop::batch::{Col, XaddRows};
use xstreams_core::store::persist::disk::sim::{SimDisk, Tear};
use xstreams_core::store::persist::{Fsync, Options};
use xstreams_core::{Config, Reply, Store};

/// Rows of the step: with a 200-byte value each, about 10 MB of log (several chunks).
const ROWS: usize = 40_000;

fn options(disk: Option<Arc<SimDisk>>) -> Options {
    xstreams_fuzz::sim::options(Fsync::Always, disk)
}

fn values() -> Vec<Vec<u8>> {
    (0..ROWS)
        .map(|i| format!("{i:0>200}").into_bytes())
        .collect()
}

fn xlen(s: &Store, key: &[u8]) -> Reply {
    s.execute(&[b"XLEN", key])
}

fn tmp_dir(name: &str) -> PathBuf {
    xstreams_fuzz::sim::fresh_dir(&format!("write-ahead-{name}"))
}

/// Open a store on `disk` in `dir`, add one entry, then run the step: the rows and a
/// marker, as the Spark sink commits a micro-batch (`atomic`), else the rows alone as a
/// batch. Returns the store, the disk operations counted before the step and after it,
/// and the step's result.
fn run_step(
    dir: &Path,
    disk: &Arc<SimDisk>,
    vals: &[Vec<u8>],
    atomic: bool,
) -> (Store, u64, u64, bool) {
    let (store, _) = Store::open(dir, Config::default(), options(Some(disk.clone()))).unwrap();
    let first = store.execute(&[b"XADD", b"out", b"*", b"f", b"first"]);
    assert!(matches!(first, Reply::Bulk(_)), "{first:?}");
    let rows = XaddRows {
        len: vals.len(),
        key: Some(Col::Const(b"out")),
        fields: vec![(
            b"f",
            Col::Rows(vals.iter().map(|v| Some(v.as_slice())).collect()),
        )],
        ..XaddRows::default()
    };
    let marker = vec![vec![
        b"XADD".to_vec(),
        b"marker".to_vec(),
        b"*".to_vec(),
        b"batch".to_vec(),
        b"1".to_vec(),
    ]];
    let before = disk.ops();
    let res = if atomic {
        store.xadd_rows_atomic(0, &rows, &marker).map(|_| ())
    } else {
        store.xadd_rows(0, &rows).map(|_| ())
    };
    let after = disk.ops();
    if let Err(e) = &res {
        assert!(e.line().starts_with("MISCONF"), "{e}");
    }
    (store, before, after, res.is_ok())
}

/// The disk operations of the step (see [`run_step`]) without a freeze: the numbers of
/// the first one and of the one after the last.
fn step_ops(vals: &[Vec<u8>], atomic: bool) -> (u64, u64) {
    let dir = tmp_dir(&format!("count-{atomic}"));
    let (store, before, after, ok) = run_step(&dir, &SimDisk::new(None), vals, atomic);
    assert!(ok);
    store.close();
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    (before, after)
}

fn reopened_state(dir: &Path) -> (Reply, Reply) {
    let (s, _) = Store::open(dir, Config::default(), options(None))
        .unwrap_or_else(|e| panic!("the store did not reopen: {e}"));
    s.validate().expect("validate() after reopening");
    let got = (xlen(&s, b"out"), xlen(&s, b"marker"));
    s.close();
    got
}

/// Close `store` (its step ran whole) and check that `dir` reopens with all of it.
fn reopens_whole(store: Store, dir: &Path) {
    store.close();
    drop(store);
    assert_eq!(
        reopened_state(dir),
        (Reply::Int(ROWS as i64 + 1), Reply::Int(1))
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_large_step_takes_several_writes_and_reopens_whole() {
    let dir = tmp_dir("whole");
    let disk = SimDisk::new(None);
    let (store, before, after, ok) = run_step(&dir, &disk, &values(), true);
    assert!(ok);
    // At least three chunk writes and the fsync: the block was written ahead.
    assert!(after - before >= 4, "{} disk operations", after - before);
    reopens_whole(store, &dir);
}

#[test]
fn without_a_second_handle_a_large_step_is_written_whole_at_its_end() {
    let dir = tmp_dir("no-clone");
    let disk = SimDisk::new(None);
    disk.refuse_clones();
    let (store, before, after, ok) = run_step(&dir, &disk, &values(), true);
    assert!(ok);
    // One write of the whole block and its fsync; the writer thread was asked for once
    // in the block, not again for every row after the first 4 MB.
    assert_eq!(after - before, 2, "{} disk operations", after - before);
    assert_eq!(disk.clones(), 1);
    reopens_whole(store, &dir);
}

#[test]
fn a_freeze_inside_a_large_step_leaves_all_of_it_or_none() {
    let vals = values();
    let (before, after) = step_ops(&vals, true);
    let none = (Reply::Int(1), Reply::Int(0));
    let all = (Reply::Int(ROWS as i64 + 1), Reply::Int(1));
    // Operations of the step: its chunk writes, then the fsync (`always`).
    for at in before..after {
        // What survives of the unsynced bytes: nothing, half, all, or all then zeros.
        for keep in 0..4u64 {
            let dir = tmp_dir(&format!("freeze-{at}-{keep}"));
            let disk = SimDisk::new(Some(at));
            let (store, _, _, ok) = run_step(&dir, &disk, &vals, true);
            assert!(!ok, "a freeze at operation {at} failed the step");
            let refused = store.execute(&[b"XADD", b"out", b"*", b"f", b"later"]);
            assert!(
                matches!(&refused, Reply::Error(e) if e.line().starts_with("MISCONF")),
                "{refused:?}"
            );
            store.close();
            drop(store);
            disk.power_loss(|_, unsynced| Tear {
                keep: match keep {
                    0 => 0,
                    1 => unsynced / 2,
                    _ => unsynced,
                },
                zeros: if keep == 3 { 100 } else { 0 },
            })
            .unwrap();
            let got = reopened_state(&dir);
            if at + 2 < after {
                // Frozen before the block's last write: its EXEC never reached the disk.
                assert_eq!(
                    got, none,
                    "freeze at {at} of {before}..{after}, tear {keep}"
                );
            } else {
                assert!(
                    got == none || got == all,
                    "freeze at {at}, tear {keep}: {got:?}"
                );
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn a_batch_takes_one_write() {
    let dir = tmp_dir("batch-small");
    let disk = SimDisk::new(None);
    let (store, before, after, ok) = run_step(&dir, &disk, &values()[..1000], false);
    assert!(ok);
    assert_eq!(after - before, 2, "one write and its fsync for 1,000 rows");
    store.close();
    drop(store);
    assert_eq!(reopened_state(&dir), (Reply::Int(1001), Reply::Int(0)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_freeze_inside_a_large_batch_keeps_whole_rows_in_order() {
    let vals = values();
    let (before, after) = step_ops(&vals, false);
    assert!(after - before >= 4, "{} disk operations", after - before);
    for at in before..after {
        for keep in [0u64, 1, 2] {
            let dir = tmp_dir(&format!("batch-freeze-{at}-{keep}"));
            let disk = SimDisk::new(Some(at));
            let (store, _, _, ok) = run_step(&dir, &disk, &vals, false);
            assert!(!ok, "a freeze at operation {at} failed the call");
            store.close();
            drop(store);
            disk.power_loss(|_, unsynced| Tear {
                keep: unsynced * keep / 2,
                zeros: 0,
            })
            .unwrap();
            let (s, _) = Store::open(&dir, Config::default(), options(None)).unwrap();
            s.validate().unwrap();
            // The entries after the first one: the first `n` rows, in order.
            let got = s.execute(&[b"XRANGE", b"out", b"-", b"+"]);
            let Reply::Array(entries) = got else {
                panic!("{got:?}")
            };
            let n = entries.len() - 1;
            for (i, e) in entries[1..].iter().enumerate() {
                let Reply::Array(parts) = e else {
                    panic!("{e:?}")
                };
                assert_eq!(
                    parts[1],
                    Reply::Array(vec![
                        Reply::Bulk(b"f".to_vec()),
                        Reply::Bulk(vals[i].clone())
                    ]),
                    "freeze at {at}, tear {keep}: row {i} of {n}"
                );
            }
            s.close();
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
