//! A pipeline (`execute_batch` not atomic: the redis-py client's `pipeline(transaction=
//! False)` on a durable store) writes its commands' log records together, up to 256
//! commands a write, not one write per command; each command keeps its own record. On
//! the simulated disk (`persist::disk::sim`):
//! * 600 commands take three writes (and the fsyncs of `always`), and the store reopens
//!   with every one of them;
//! * a freeze at the second write turns the replies of that chunk's writing commands
//!   into MISCONF (their changes are in memory, not durable), leaves its reads' replies
//!   alone, refuses the writes after it, and after the power loss the store reopens with
//!   the first chunk's entries, in order;
//! * a blocked group read served in the middle of a chunk logs its delivery after the
//!   chunk so far, as a lone command: a failed write of it fails the read's reply.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use xstreams_core::store::persist::disk::sim::{SimDisk, Tear};
use xstreams_core::store::persist::{Fsync, Options};
use xstreams_core::{Config, Reply, Store};

/// Commands of the pipeline: an XADD and an XLEN in turn.
const CMDS: usize = 600;

fn options(disk: Option<Arc<SimDisk>>) -> Options {
    xstreams_fuzz::sim::options(Fsync::Always, disk)
}

fn tmp_dir(name: &str) -> PathBuf {
    xstreams_fuzz::sim::fresh_dir(&format!("pipeline-log-{name}"))
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
    matches!(r, Reply::Error(e) if e.line().starts_with("MISCONF"))
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

/// A blocked group read served by a pipeline's XADD logs its delivery as a lone command
/// does (the chunk before it written first), so a failed write of that delivery fails
/// the read's reply with MISCONF instead of handing over entries the log does not have.
#[test]
fn a_served_group_read_whose_delivery_is_not_written_fails() {
    use xstreams_core::store::Step;
    let read = "XREADGROUP GROUP g c BLOCK 0 STREAMS q >";
    let read: Vec<&[u8]> = read.split(' ').map(str::as_bytes).collect();
    let cmds: Vec<Vec<Vec<u8>>> = ["XADD p 1-1 f v", "XADD q 5-1 f v", "XADD p 2-1 f v"]
        .iter()
        .map(|c| c.split(' ').map(|p| p.as_bytes().to_vec()).collect())
        .collect();
    // Operations after `before`: the blocked read's own record (its consumer created)
    // and fsync; the chunk of the first two XADDs, written before the read is served,
    // and its fsync; then the delivery's write.
    let run = |freeze: Option<u64>| -> (u64, Step, Vec<Reply>) {
        let dir = tmp_dir(&format!("served-{freeze:?}"));
        let disk = SimDisk::new(freeze);
        let (s, _) = Store::open(&dir, Config::default(), options(Some(disk.clone()))).unwrap();
        s.execute(&[b"XGROUP", b"CREATE", b"q", b"g", b"$", b"MKSTREAM"]);
        let before = disk.ops();
        let Step::Blocked(call) = s.start(0, 2, &read) else {
            panic!("the read did not block")
        };
        let reader = s.clone();
        let t =
            std::thread::spawn(move || reader.wait(call, Some(std::time::Duration::from_secs(5))));
        let replies = s.execute_batch(0, 2, &cmds, false, None).unwrap();
        let got = t.join().unwrap();
        s.close();
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
        (before, got, replies)
    };
    let (before, got, replies) = run(None);
    assert!(matches!(got, Step::Done(Reply::Array(_))), "{got:?}");
    assert!(replies.iter().all(|r| matches!(r, Reply::Bulk(_))));
    let (_, got, replies) = run(Some(before + 4));
    let Step::Done(r) = got else {
        panic!("the read was not served")
    };
    assert!(is_misconf(&r), "{r:?}");
    // The first XADD was written before; the second's change is in memory (its chunk
    // after the delivery failed), the third is refused.
    assert!(matches!(replies[0], Reply::Bulk(_)), "{replies:?}");
    assert!(
        is_misconf(&replies[1]) && is_misconf(&replies[2]),
        "{replies:?}"
    );
}
