//! Group commit (`Options::group_commit`, what `xstreams serve --appendfsync always`
//! opens its store with), on the simulated disk (`persist::disk::sim`):
//! * without it, `fsync=always` fsyncs each write before the command returns;
//! * with it, a command's write waits for `Store::sync_logged`, whose one fsync covers
//!   every write logged before the call, and a call with nothing new fsyncs nothing;
//! * under concurrent writers, a `sync_logged` call never returns before the writes
//!   logged before it are durable;
//! * a failed fsync fails the call and every later write (MISCONF).
//!
//! The server's side (no reply leaves before its write is durable) is in
//! `server_group_commit.rs`; a power loss with group commit in `power_loss.rs`.

use std::sync::Arc;

use xstreams_core::store::persist::disk::sim::SimDisk;
use xstreams_core::store::persist::{Fsync, Options};
use xstreams_core::{Config, Reply, Store};
use xstreams_fuzz::sim::{fresh_dir, options};

fn on_sim_disk(name: &str, group_commit: bool) -> (Store, Arc<SimDisk>) {
    let disk = SimDisk::new(None);
    let opts = Options {
        group_commit,
        ..options(Fsync::Always, Some(disk.clone()))
    };
    let (s, _) = Store::open(&fresh_dir(name), Config::default(), opts).unwrap();
    (s, disk)
}

fn unsynced(s: &Store) -> bool {
    s.log_writes().expect("a durable store").unsynced()
}

fn xadd(s: &Store) -> Reply {
    s.execute(&[b"XADD".as_slice(), b"s", b"*", b"f", b"v"])
}

#[test]
fn always_fsyncs_each_write_before_it_returns() {
    let (s, disk) = on_sim_disk("gc-each", false);
    let before = disk.syncs();
    for i in 1..=3 {
        xadd(&s);
        assert_eq!(disk.syncs(), before + i);
        assert_eq!(disk.written_bytes(), disk.synced_bytes());
    }
    assert!(!unsynced(&s));
    s.sync_logged().unwrap();
    assert_eq!(disk.syncs(), before + 3, "nothing was left to fsync");
    s.close();
}

#[test]
fn group_commit_fsyncs_once_for_the_writes_before_it() {
    let (s, disk) = on_sim_disk("gc-once", true);
    let before = disk.syncs();
    for _ in 0..3 {
        assert!(matches!(xadd(&s), Reply::Bulk(_)));
    }
    assert_eq!(disk.syncs(), before, "no fsync under the store lock");
    assert!(unsynced(&s));
    assert!(disk.written_bytes() > disk.synced_bytes());
    s.sync_logged().unwrap();
    assert_eq!(disk.syncs(), before + 1);
    assert!(!unsynced(&s));
    assert_eq!(disk.written_bytes(), disk.synced_bytes());
    s.sync_logged().unwrap();
    assert_eq!(disk.syncs(), before + 1, "nothing new: no fsync");
    // A read logs nothing: nothing to wait for.
    assert_eq!(s.execute(&[b"XLEN".as_slice(), b"s"]), Reply::Int(3));
    assert!(!unsynced(&s));
    // `flush` is the same gate.
    xadd(&s);
    s.flush().unwrap();
    assert_eq!(disk.syncs(), before + 2);
    s.close();
}

#[test]
fn group_commit_covers_each_callers_writes_under_concurrency() {
    let (s, disk) = on_sim_disk("gc-threads", true);
    let before = disk.syncs();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (s, disk) = (s.clone(), disk.clone());
            std::thread::spawn(move || {
                for _ in 0..200 {
                    assert!(matches!(xadd(&s), Reply::Bulk(_)));
                    // Everything written by now (this thread's write and any other's)
                    // must be durable once the call returns.
                    let written = disk.written_bytes();
                    s.sync_logged().unwrap();
                    let synced = disk.synced_bytes();
                    assert!(synced >= written, "returned at {synced} of {written} bytes");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(disk.written_bytes(), disk.synced_bytes());
    let syncs = disk.syncs() - before;
    assert!((1..=800).contains(&syncs), "{syncs} fsyncs for 800 writes");
    assert_eq!(s.execute(&[b"XLEN".as_slice(), b"s"]), Reply::Int(800));
    s.close();
}

#[test]
fn a_failed_group_fsync_stops_writes() {
    let (s, disk) = on_sim_disk("gc-fail", true);
    xadd(&s);
    disk.freeze();
    let err = s.sync_logged().unwrap_err();
    assert!(err.message().contains("fsync failed"), "{err:?}");
    assert!(s.sync_logged().is_err(), "the write is still not durable");
    match xadd(&s) {
        Reply::Error(e) => assert!(e.line().starts_with("MISCONF"), "{e}"),
        other => panic!("a write after a failed fsync: {other:?}"),
    }
    s.close();
}
