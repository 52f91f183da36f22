//! `Store::settle`, the group commit of the embedded API under `appendfsync always`
//! (a store opened with `Options::group_commit`), on the simulated disk:
//! * a write's record is logged under the store lock and made durable by `settle`,
//!   outside it: one fsync for every write logged by then, whichever thread made them;
//! * threads writing at once each find their writes durable when their `settle`
//!   returns: a power loss then keeps every write acknowledged, and loses one that
//!   was not settled;
//! * a failed fsync is the MISCONF error of the replies that waited for it, and is for
//!   good (every later call's, until the store is reopened), as redis-server exits;
//! * other stores (without group commit, `everysec`, in memory) owe nothing: `settle`
//!   never fsyncs there.

use std::sync::Arc;

use xstreams_core::store::persist::disk::sim::{SimDisk, Tear};
use xstreams_core::store::persist::{Fsync, Options};
use xstreams_core::{Config, Reply, Store};
use xstreams_fuzz::sim::{fresh_dir, options};

fn open(name: &str, fsync: Fsync, group_commit: bool) -> (std::path::PathBuf, Arc<SimDisk>, Store) {
    let dir = fresh_dir(name);
    let disk = SimDisk::new(None);
    let opts = Options {
        group_commit,
        ..options(fsync, Some(disk.clone()))
    };
    let (s, _) = Store::open(&dir, Config::default(), opts).unwrap();
    (dir, disk, s)
}

fn xadd(s: &Store, key: &str) -> Reply {
    s.execute(&[b"XADD", key.as_bytes(), b"*", b"f", b"v"])
}

fn is_id(r: &Reply) -> bool {
    matches!(r, Reply::Bulk(_))
}

fn misconf(e: &str) -> bool {
    e.starts_with("MISCONF Errors writing to the AOF file: ")
}

#[test]
fn one_fsync_covers_every_write_logged_before_it() {
    let (dir, disk, s) = open("settle-group", Fsync::Always, true);
    assert!(s.settles());
    let other = s.clone(); // another thread's handle on the same store
    let synced = disk.syncs();
    assert!(is_id(&xadd(&s, "a")));
    assert!(is_id(&xadd(&other, "b")));
    // Logged, not yet durable: no fsync ran under the store lock.
    assert_eq!(disk.syncs(), synced);
    assert!(s.log_writes().unwrap().unsynced());
    s.settle().unwrap();
    assert_eq!(disk.syncs(), synced + 1);
    assert!(!s.log_writes().unwrap().unsynced());
    // The other caller's writes were covered: its settle has nothing to wait for.
    other.settle().unwrap();
    assert_eq!(disk.syncs(), synced + 1);
    // A read logs nothing and waits for nothing.
    assert_eq!(s.execute(&[b"XLEN", b"a"]), Reply::Int(1));
    s.settle().unwrap();
    assert_eq!(disk.syncs(), synced + 1);
    s.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn threads_writing_at_once_each_find_their_writes_durable() {
    let (dir, disk, s) = open("settle-threads", Fsync::Always, true);
    const THREADS: usize = 4;
    const EACH: usize = 200;
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let s = s.clone();
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                for _ in 0..EACH {
                    let Reply::Bulk(id) = xadd(&s, &format!("k{t}")) else {
                        panic!("XADD failed");
                    };
                    // At least this thread's write: the log's count right after it.
                    let mine = s.log_writes().unwrap().written;
                    s.settle().unwrap();
                    assert!(s.log_writes().unwrap().durable >= mine);
                    acked.push(id);
                }
                acked
            })
        })
        .collect();
    let acked: Vec<Vec<Vec<u8>>> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let w = s.log_writes().unwrap();
    assert_eq!(w.written, (THREADS * EACH) as u64);
    assert!(!w.unsynced());
    // Never more than one fsync a write (fewer when threads met at the gate).
    assert!(disk.syncs() <= (THREADS * EACH) as u64 + 1);
    // A write nobody settled, then the power goes: what was not fsynced is lost.
    assert!(is_id(&xadd(&s, "tail")));
    disk.freeze();
    s.close();
    disk.power_loss(|_, _| Tear { keep: 0, zeros: 0 }).unwrap();
    let (r, report) = Store::open(&dir, Config::default(), Options::default()).unwrap();
    assert!(report.truncated.is_empty(), "{:?}", report.truncated);
    for (t, ids) in acked.iter().enumerate() {
        let key = format!("k{t}");
        let Reply::Array(got) = r.execute(&[b"XRANGE", key.as_bytes(), b"-", b"+"]) else {
            panic!("XRANGE failed");
        };
        let got: Vec<&Reply> = got
            .iter()
            .map(|e| match e {
                Reply::Array(p) => &p[0],
                other => panic!("{other:?}"),
            })
            .collect();
        let want: Vec<Reply> = ids.iter().map(|id| Reply::Bulk(id.clone())).collect();
        assert_eq!(got, want.iter().collect::<Vec<_>>(), "{key}");
    }
    assert_eq!(r.execute(&[b"EXISTS", b"tail"]), Reply::Int(0));
    r.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_fsync_is_the_replies_error_for_good() {
    let (dir, disk, s) = open("settle-fails", Fsync::Always, true);
    assert!(is_id(&xadd(&s, "a")));
    s.settle().unwrap();
    assert!(is_id(&xadd(&s, "a")));
    disk.freeze();
    let e = s.settle().unwrap_err();
    assert!(misconf(e.line()), "{}", e.line());
    // Later writes are refused, and nothing logged before can become durable: every
    // later reply is the error (redis-server exits), even once the disk works again.
    disk.thaw();
    std::thread::sleep(xstreams_core::store::persist::RETRY_EVERY);
    assert!(matches!(xadd(&s, "a"), Reply::Error(e) if misconf(e.line())));
    assert!(misconf(&s.settle().unwrap_err().into_line()));
    s.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn other_stores_owe_nothing() {
    for (name, fsync, group_commit) in [
        ("settle-always-alone", Fsync::Always, false),
        ("settle-everysec", Fsync::EverySec, false),
        ("settle-everysec-group", Fsync::EverySec, true),
        ("settle-no", Fsync::No, false),
    ] {
        let (dir, disk, s) = open(name, fsync, group_commit);
        assert!(!s.settles(), "{name}");
        assert!(is_id(&xadd(&s, "a")));
        let (synced, unsynced) = (disk.syncs(), s.log_writes().unwrap().unsynced());
        s.settle().unwrap();
        assert_eq!(disk.syncs(), synced, "{name}: settle ran an fsync");
        assert_eq!(s.log_writes().unwrap().unsynced(), unsynced, "{name}");
        s.close();
        let _ = std::fs::remove_dir_all(&dir);
    }
    let mem = Store::default();
    assert!(!mem.settles());
    assert!(is_id(&xadd(&mem, "a")));
    mem.settle().unwrap();
}
