//! A pipeline (`execute_batch` not atomic: the redis-py client's `pipeline(transaction=
//! False)` on a durable store) writes its commands' log records together, up to 256
//! commands a write, not one write per command; each command keeps its own record. On
//! the simulated disk (`persist::disk::sim`):
//! * 600 commands take three writes (and the fsyncs of `always`), and the store reopens
//!   with every one of them;
//! * a freeze at the second write turns the replies of that chunk's writing commands
//!   into MISCONF (their changes are in memory, not durable), leaves its reads' replies
//!   alone, refuses the writes after it, and after the power loss the store reopens with
//!   the first chunk's entries, in order.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use xstreams_core::persist::disk::sim::{SimDisk, Tear};
use xstreams_core::persist::{Disk, Fsync, Options};
use xstreams_core::{Config, Reply, Store};

/// Commands of the pipeline: an XADD and an XLEN in turn.
const CMDS: usize = 600;

fn options(disk: Option<Arc<SimDisk>>) -> Options {
    Options {
        fsync: Fsync::Always,
        disk: Disk { sim: disk },
        ..Options::default()
    }
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xs-pipeline-log-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn pipeline() -> Vec<Vec<Vec<u8>>> {
    (0..CMDS)
        .map(|i| {
            let cmd = if i % 2 == 0 {
                format!("XADD s {}-1 n {i}", i + 1)
            } else {
                "XLEN s".to_string()
            };
            cmd.split(' ').map(|p| p.as_bytes().to_vec()).collect()
        })
        .collect()
}

/// Open a store on `disk` in `dir` and run the pipeline: the store, the disk operations
/// counted before and after it, and its replies.
fn run(dir: &Path, disk: &Arc<SimDisk>) -> (Store, u64, u64, Vec<Reply>) {
    let (store, _) = Store::open(dir, Config::default(), options(Some(disk.clone()))).unwrap();
    let before = disk.ops();
    let replies = store
        .execute_batch(0, 2, &pipeline(), false, None)
        .expect("not watched");
    (store, before, disk.ops(), replies)
}

/// The `n` values of the entries of `s` after reopening `dir`; each entry `i` must be
/// the pipeline's `i`-th XADD.
fn reopened_entries(dir: &Path) -> usize {
    let (s, _) = Store::open(dir, Config::default(), options(None)).unwrap();
    s.validate().unwrap();
    let got = s.execute(&[b"XRANGE", b"s", b"-", b"+"]);
    let Reply::Array(entries) = got else {
        panic!("{got:?}")
    };
    for (k, e) in entries.iter().enumerate() {
        let want = Reply::Array(vec![
            Reply::Bulk(format!("{}-1", 2 * k + 1).into_bytes()),
            Reply::Array(vec![
                Reply::Bulk(b"n".to_vec()),
                Reply::Bulk((2 * k).to_string().into_bytes()),
            ]),
        ]);
        assert_eq!(e, &want, "entry {k}");
    }
    s.close();
    entries.len()
}

fn is_misconf(r: &Reply) -> bool {
    matches!(r, Reply::Error(e) if e.starts_with("MISCONF"))
}

#[test]
fn a_pipeline_writes_its_records_in_chunks() {
    let dir = tmp_dir("chunks");
    let disk = SimDisk::new(None);
    let (store, before, after, replies) = run(&dir, &disk);
    // 600 commands: chunks of 256, 256 and 88, each one write and its fsync.
    assert_eq!(after - before, 6, "{} disk operations", after - before);
    for (i, r) in replies.iter().enumerate() {
        if i % 2 == 0 {
            assert_eq!(r, &Reply::Bulk(format!("{}-1", i + 1).into_bytes()), "{i}");
        } else {
            assert_eq!(r, &Reply::Int((i / 2 + 1) as i64), "{i}");
        }
    }
    store.close();
    drop(store);
    assert_eq!(reopened_entries(&dir), CMDS / 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_chunk_write_fails_its_writes_and_refuses_later_ones() {
    let dir = tmp_dir("count");
    let (store, before, _, _) = run(&dir, &SimDisk::new(None));
    store.close();
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    // Operations: chunk 1's write and fsync, then chunk 2's write.
    let dir = tmp_dir("freeze");
    let disk = SimDisk::new(Some(before + 2));
    let (store, _, _, replies) = run(&dir, &disk);
    for (i, r) in replies.iter().enumerate() {
        match (i < 256, i % 2 == 0) {
            (true, true) => assert!(matches!(r, Reply::Bulk(_)), "{i}: {r:?}"),
            (_, true) => assert!(is_misconf(r), "{i}: {r:?}"),
            // The reads keep their replies: chunk 2's XADDs ran (in memory), the
            // refused ones after it did not.
            (_, false) => {
                let n = (i / 2 + 1).min(256) as i64;
                assert_eq!(r, &Reply::Int(n), "{i}");
            }
        }
    }
    store.close();
    drop(store);
    disk.power_loss(|_, unsynced| Tear {
        keep: unsynced,
        zeros: 0,
    })
    .unwrap();
    assert_eq!(reopened_entries(&dir), 128);
    let _ = std::fs::remove_dir_all(&dir);
}
