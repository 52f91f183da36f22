//! A compaction whose snapshot writer panics (a bug in it, simulated on
//! `persist::disk::sim`) ends as a failed compaction: `compact` reports it, nothing
//! stored is lost, and later compactions, `compact_waiting` and writes go on as before.
//! Left marked as running, it would refuse every later compaction and keep
//! `compact_waiting` (the Python `Store.compact()`) waiting for ever.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use xstreams_core::store::persist::disk::sim::SimDisk;
use xstreams_core::store::persist::{ErrorKind, Fsync, Options};
use xstreams_core::{Config, Reply, Store};

fn options(disk: Option<Arc<SimDisk>>) -> Options {
    xstreams_fuzz::sim::options(Fsync::Always, disk)
}

fn add(s: &Store, value: &str) {
    let r = s.execute(&[b"XADD", b"s", b"*", b"f", value.as_bytes()]);
    assert!(matches!(r, Reply::Bulk(_)), "{r:?}");
}

/// `store.compact_waiting()` on another thread, failing the test (not hanging it) if it
/// has not returned after ten seconds.
fn compact_waiting_returns(store: &Store) {
    let (tx, rx) = mpsc::channel();
    let s = store.clone();
    std::thread::spawn(move || {
        let _ = tx.send(s.compact_waiting());
    });
    let done = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("compact_waiting still waits: the panicked compaction is still marked running");
    done.expect("compact_waiting after the panicked compaction");
}

#[test]
fn a_panicking_snapshot_writer_fails_the_compaction_and_nothing_else() {
    let dir = std::env::temp_dir().join(format!("xs-compaction-panic-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let disk = SimDisk::new(None);
    let (store, _) = Store::open(&dir, Config::default(), options(Some(disk.clone()))).unwrap();
    for i in 0..100 {
        add(&store, &format!("v{i}"));
    }
    disk.panic_in_next_snapshot();
    let err = store.compact().unwrap_err();
    assert_eq!(*err.kind(), ErrorKind::Io, "{err:?}");
    assert!(
        err.message()
            .contains("the snapshot writer panicked: simulated: the snapshot writer panicked"),
        "{err:?}"
    );
    // The store still takes writes, and compacts again.
    add(&store, "after");
    compact_waiting_returns(&store);
    add(&store, "last");
    store.compact().expect("a second compaction");
    store.close();
    drop(store);
    let (reopened, report) = Store::open(&dir, Config::default(), options(None)).unwrap();
    assert!(report.snapshot.is_some(), "{report:?}");
    reopened.validate().expect("validate() after reopening");
    assert_eq!(reopened.execute(&[b"XLEN", b"s"]), Reply::Int(102));
    let last = reopened.execute(&[b"XREVRANGE", b"s", b"+", b"-", b"COUNT", b"1"]);
    let Reply::Array(entries) = &last else {
        panic!("{last:?}")
    };
    let Reply::Array(entry) = &entries[0] else {
        panic!("{last:?}")
    };
    assert_eq!(
        entry[1],
        Reply::Array(vec![
            Reply::Bulk(b"f".to_vec()),
            Reply::Bulk(b"last".to_vec())
        ])
    );
    reopened.close();
    let _ = std::fs::remove_dir_all(&dir);
}
