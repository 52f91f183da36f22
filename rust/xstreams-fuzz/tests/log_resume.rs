//! A log that stopped taking writes takes them again once the disk works (as
//! redis-server retries its AOF buffer and says "AOF write error looks solved"), on the
//! simulated disk (`persist::disk::sim`):
//! * under `everysec` and `no` the command whose write fails is answered as usual (as
//!   redis-server answers it) and later writes get MISCONF (`aof_last_write_status:err`);
//!   once the disk works, the next command (at most `RETRY_EVERY` later) writes what
//!   waits and writes are taken again; the reopened store holds every change, in order,
//!   including that command's and what the expiry logged meanwhile;
//! * a write cut short by a full disk is finished by the retry or by `close` (the
//!   reopened log is whole), or, if the disk still fails then, dropped as a cut tail;
//! * a large batch failing in the middle of its written-ahead chunks, the same;
//! * after a failed fsync under `everysec` a successful fsync ends the stop, and the
//!   background fsync thread retries by itself;
//! * under `always` (with or without group commit) a failure is for good, as
//!   redis-server exits then;
//! * a compaction is refused while the log is stopped.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use xstreams_core::interop::batch::{Col, XaddRows};
use xstreams_core::store::persist::disk::sim::SimDisk;
use xstreams_core::store::persist::{Fsync, Options, RETRY_EVERY};
use xstreams_core::{Config, Reply, Store};
use xstreams_fuzz::sim::{fresh_dir, options};

fn open(dir: &Path, fsync: Fsync, disk: &Arc<SimDisk>) -> Store {
    Store::open(dir, Config::default(), options(fsync, Some(disk.clone())))
        .unwrap()
        .0
}

/// A fresh store on a simulated disk, holding the entry 1-1 of `s`.
fn started(name: &str, fsync: Fsync) -> (PathBuf, Arc<SimDisk>, Store) {
    let dir = fresh_dir(name);
    let disk = SimDisk::new(None);
    let s = open(&dir, fsync, &disk);
    assert_eq!(xadd(&s, "1-1"), Reply::Bulk(b"1-1".to_vec()));
    (dir, disk, s)
}

fn run(s: &Store, args: &[&str]) -> Reply {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    s.execute(&args)
}

fn xadd(s: &Store, id: &str) -> Reply {
    run(s, &["XADD", "s", id, "f", id])
}

fn misconf(r: &Reply) -> bool {
    matches!(r, Reply::Error(e) if e.line().starts_with("MISCONF Errors writing to the AOF file: "))
}

fn write_status(s: &Store) -> String {
    let Reply::Bulk(info) = run(s, &["INFO", "persistence"]) else {
        panic!("INFO did not answer a bulk string");
    };
    let info = String::from_utf8(info).unwrap();
    let line = info
        .lines()
        .find(|l| l.starts_with("aof_last_write_status:"));
    line.expect("the field is there").to_owned()
}

/// Past the retry interval.
fn after_retry_interval() {
    std::thread::sleep(RETRY_EVERY + Duration::from_millis(30));
}

/// Reopen `dir` on the real disk: its entries of `s` (XRANGE), and whether the load
/// found a cut tail.
fn reopened(dir: &Path) -> (Reply, bool) {
    let (s, report) = Store::open(dir, Config::default(), Options::default()).unwrap();
    s.validate().expect("validate() after reopening");
    let got = run(&s, &["XRANGE", "s", "-", "+"]);
    s.close();
    (got, !report.truncated.is_empty())
}

fn ids(r: &Reply) -> Vec<String> {
    let Reply::Array(items) = r else {
        panic!("not an array: {r:?}")
    };
    items
        .iter()
        .map(|e| match e {
            Reply::Array(p) => match &p[0] {
                Reply::Bulk(id) => String::from_utf8(id.clone()).unwrap(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_failed_write_resumes_once_the_disk_works() {
    let dir = fresh_dir("resume-write");
    let disk = SimDisk::new(None);
    let s = open(&dir, Fsync::No, &disk);
    assert_eq!(xadd(&s, "1-1"), Reply::Bulk(b"1-1".to_vec()));
    assert_eq!(write_status(&s), "aof_last_write_status:ok");
    disk.freeze();
    // The command runs and is answered; its record waits for the log.
    assert_eq!(xadd(&s, "2-1"), Reply::Bulk(b"2-1".to_vec()));
    // Later writes are refused, not run; reads are answered.
    assert!(misconf(&xadd(&s, "3-1")));
    assert_eq!(run(&s, &["XLEN", "s"]), Reply::Int(2));
    assert_eq!(write_status(&s), "aof_last_write_status:err");
    after_retry_interval();
    assert!(misconf(&xadd(&s, "3-1")), "the disk still fails");
    disk.thaw();
    // Within the retry interval of the last try nothing is tried.
    assert!(misconf(&xadd(&s, "3-1")));
    after_retry_interval();
    assert_eq!(xadd(&s, "3-1"), Reply::Bulk(b"3-1".to_vec()));
    assert_eq!(write_status(&s), "aof_last_write_status:ok");
    s.close();
    let (got, cut) = reopened(&dir);
    assert_eq!(ids(&got), ["1-1", "2-1", "3-1"]);
    assert!(!cut);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_write_cut_short_is_finished_by_the_retry() {
    let (dir, disk, s) = started("resume-short", Fsync::No);
    disk.fill_up_after(7);
    assert_eq!(xadd(&s, "2-1"), Reply::Bulk(b"2-1".to_vec()));
    assert_eq!(
        xadd(&s, "3-1").error_line(),
        Some("MISCONF Errors writing to the AOF file: No space left on device")
    );
    disk.thaw();
    after_retry_interval();
    assert_eq!(xadd(&s, "3-1"), Reply::Bulk(b"3-1".to_vec()));
    s.close();
    let (got, cut) = reopened(&dir);
    assert_eq!(ids(&got), ["1-1", "2-1", "3-1"]);
    assert!(!cut, "the retry finished the cut record");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_write_cut_short_and_never_retried_is_a_cut_tail() {
    let (dir, disk, s) = started("resume-never", Fsync::No);
    disk.fill_up_after(7);
    assert_eq!(xadd(&s, "2-1"), Reply::Bulk(b"2-1".to_vec()));
    s.close(); // the disk still fails: nothing more reaches the log
    drop(s);
    let (got, cut) = reopened(&dir);
    assert_eq!(ids(&got), ["1-1"]);
    assert!(cut, "the record cut short is dropped as a cut tail");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn close_writes_what_waits_if_the_disk_works_again() {
    let (dir, disk, s) = started("resume-close", Fsync::No);
    disk.fill_up_after(7);
    assert_eq!(xadd(&s, "2-1"), Reply::Bulk(b"2-1".to_vec()));
    disk.thaw();
    s.close(); // within the retry interval: the close tries anyway
    let (got, cut) = reopened(&dir);
    assert_eq!(ids(&got), ["1-1", "2-1"]);
    assert!(!cut);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn records_logged_while_stopped_keep_their_order() {
    let (dir, disk, s) = started("resume-order", Fsync::No);
    assert!(matches!(
        run(&s, &["XADD", "t", "*", "f", "v"]),
        Reply::Bulk(_)
    ));
    assert_eq!(run(&s, &["PEXPIRE", "t", "40"]), Reply::Int(1));
    disk.freeze();
    assert_eq!(xadd(&s, "2-1"), Reply::Bulk(b"2-1".to_vec()));
    std::thread::sleep(Duration::from_millis(60));
    // The key expires while the log is stopped: its DEL waits behind the XADD.
    assert_eq!(run(&s, &["EXISTS", "t"]), Reply::Int(0));
    disk.thaw();
    after_retry_interval();
    assert_eq!(xadd(&s, "3-1"), Reply::Bulk(b"3-1".to_vec()));
    s.close();
    let (r, _) = Store::open(&dir, Config::default(), Options::default()).unwrap();
    assert_eq!(run(&r, &["EXISTS", "t"]), Reply::Int(0));
    assert_eq!(
        ids(&run(&r, &["XRANGE", "s", "-", "+"])),
        ["1-1", "2-1", "3-1"]
    );
    r.close();
    let _ = std::fs::remove_dir_all(&dir);
}

/// 40,000 rows of 200 bytes: about 10 MB of log, several written-ahead chunks.
fn big_batch(s: &Store, vals: &[Vec<u8>]) -> Result<(), xstreams_core::CmdError> {
    let rows = XaddRows {
        len: vals.len(),
        key: Some(Col::Const(b"s")),
        fields: vec![(
            b"f",
            Col::Rows(vals.iter().map(|v| Some(v.as_slice())).collect()),
        )],
        ..XaddRows::default()
    };
    s.xadd_rows(0, &rows).map(|_| ())
}

#[test]
fn a_large_batch_failing_in_its_chunks_resumes() {
    let (dir, disk, s) = started("resume-ahead", Fsync::No);
    let vals: Vec<Vec<u8>> = (0..40_000)
        .map(|i| format!("{i:0>200}").into_bytes())
        .collect();
    // Past the first 4 MB chunk, inside the second.
    disk.fill_up_after(5 << 20);
    big_batch(&s, &vals).unwrap();
    assert_eq!(run(&s, &["XLEN", "s"]), Reply::Int(40_001));
    assert!(misconf(&xadd(&s, "99999999999998-1")));
    disk.thaw();
    after_retry_interval();
    let last = xadd(&s, "99999999999999-1");
    assert_eq!(last, Reply::Bulk(b"99999999999999-1".to_vec()));
    let before = run(&s, &["XRANGE", "s", "-", "+"]);
    s.close();
    let (got, cut) = reopened(&dir);
    assert!(!cut);
    assert_eq!(got, before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_fsync_under_everysec_resumes_after_a_good_one() {
    let (dir, disk, s) = started("resume-fsync", Fsync::EverySec);
    disk.freeze();
    let err = s.flush().unwrap_err();
    assert!(err.message().contains("fsync failed"), "{err:?}");
    assert!(misconf(&xadd(&s, "2-1")));
    disk.thaw();
    // No command: the background fsync thread (once a second) retries by itself.
    let t0 = std::time::Instant::now();
    while s.log_writes().unwrap().failed.is_some() {
        assert!(t0.elapsed() < Duration::from_secs(5), "no retry in 5 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!s.log_writes().unwrap().unsynced(), "the retry fsynced");
    assert_eq!(disk.written_bytes(), disk.synced_bytes());
    assert_eq!(xadd(&s, "2-1"), Reply::Bulk(b"2-1".to_vec()));
    s.close();
    assert_eq!(ids(&reopened(&dir).0), ["1-1", "2-1"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failure_under_always_is_for_good() {
    for (group_commit, fsync_fails) in [(false, false), (false, true), (true, false), (true, true)]
    {
        let case = format!("group commit {group_commit}, the fsync fails {fsync_fails}");
        let dir = fresh_dir(&format!("resume-always-{group_commit}-{fsync_fails}"));
        let disk = SimDisk::new(None);
        let opts = Options {
            group_commit,
            ..options(Fsync::Always, Some(disk.clone()))
        };
        let (s, _) = Store::open(&dir, Config::default(), opts).unwrap();
        xadd(&s, "1-1");
        s.sync_logged().unwrap();
        match (group_commit, fsync_fails) {
            (_, false) => {
                disk.freeze();
                assert!(misconf(&xadd(&s, "2-1")), "{case}");
            }
            (false, true) => {
                disk.freeze_after(1); // the write, then its fsync fails
                assert!(misconf(&xadd(&s, "2-1")), "{case}");
            }
            (true, true) => {
                // The write is logged; the fsync before its reply fails.
                assert_eq!(xadd(&s, "2-1"), Reply::Bulk(b"2-1".to_vec()));
                disk.freeze();
                assert!(s.sync_logged().is_err(), "{case}");
            }
        }
        disk.thaw();
        after_retry_interval();
        assert!(misconf(&xadd(&s, "3-1")), "{case}");
        assert!(s.sync_logged().is_err(), "{case}");
        assert_eq!(write_status(&s), "aof_last_write_status:err");
        s.close();
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_compaction_is_refused_while_the_log_is_stopped() {
    let (dir, disk, s) = started("resume-compact", Fsync::No);
    disk.freeze();
    assert_eq!(xadd(&s, "2-1"), Reply::Bulk(b"2-1".to_vec()));
    disk.thaw();
    let err = s.compact().unwrap_err();
    assert!(err.message().contains("stopped taking writes"), "{err:?}");
    after_retry_interval();
    assert_eq!(xadd(&s, "3-1"), Reply::Bulk(b"3-1".to_vec()));
    s.compact().unwrap();
    s.close();
    assert_eq!(ids(&reopened(&dir).0), ["1-1", "2-1", "3-1"]);
    let _ = std::fs::remove_dir_all(&dir);
}
