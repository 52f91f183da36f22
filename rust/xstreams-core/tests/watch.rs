//! WATCH through the store API: `Store::watch` and `Store::execute_batch(.., Some(&w))`
//! abort exactly when redis-server 8.8 would (the full command matrix is compared with
//! redis-server itself in tests/differential/test_differential_watch.py); here the
//! rules that need a pinned clock (expiry) and the handle's lifecycle.

use xstreams_core::{Reply, Store};

fn cmd(s: &str) -> Vec<Vec<u8>> {
    s.split(' ').map(|a| a.as_bytes().to_vec()).collect()
}

fn run(store: &Store, db: usize, s: &str) -> Reply {
    store.execute_batch(db, 2, &[cmd(s)], false, None).unwrap()[0].clone()
}

/// Does an EXEC of `XLEN k` with `w` run (`true`) or abort?
fn runs(store: &Store, w: &xstreams_core::Watch) -> bool {
    store
        .execute_batch(0, 2, &[cmd("PING")], true, Some(w))
        .is_some()
}

fn pinned() -> Store {
    let s = Store::default();
    s.set_clock(Some(1_700_000_000_000));
    s
}

#[test]
fn untouched_runs_touched_aborts() {
    let s = pinned();
    run(&s, 0, "XADD k 1-1 f v");
    let w = s.watch(0, &[b"k"]).unwrap();
    assert!(runs(&s, &w));
    run(&s, 0, "XADD other 1-1 f v");
    assert!(runs(&s, &w));
    run(&s, 0, "XADD k 2-1 f v");
    assert!(w.is_dirty());
    assert_eq!(
        s.execute_batch(0, 2, &[cmd("XADD k 3-1 f v")], true, Some(&w)),
        None
    );
    // Nothing ran.
    assert_eq!(run(&s, 0, "XLEN k"), Reply::Int(2));
}

#[test]
fn no_change_is_no_touch() {
    let s = pinned();
    run(&s, 0, "XADD k 1-1 f v");
    run(&s, 0, "XGROUP CREATE k g 0");
    let w = s.watch(0, &[b"k"]).unwrap();
    for c in [
        "XDEL k 9-9",
        "XTRIM k MAXLEN 10",
        "XADD k 1-1 f v",
        "XREADGROUP GROUP g c STREAMS k >",
        "XACK k g 1-1",
        "XSETID k 5-5",
        "SET k v NX",
        "EXPIRE k 100 XX",
        "PERSIST k",
    ] {
        run(&s, 0, c);
        assert!(runs(&s, &w), "{c} aborted the transaction");
    }
}

#[test]
fn a_batch_rejected_while_queued_is_execabort_even_when_touched() {
    let s = pinned();
    let w = s.watch(0, &[b"k"]).unwrap();
    run(&s, 0, "SET k v");
    let r = s
        .execute_batch(0, 2, &[cmd("GET k"), cmd("NOSUCH")], true, Some(&w))
        .unwrap();
    assert!(matches!(&r[0], Reply::Error(e) if e.line().starts_with("EXECABORT")));
}

#[test]
fn a_key_expiring_after_watch_aborts() {
    let s = pinned();
    run(&s, 0, "SET k v PX 100");
    let w = s.watch(0, &[b"k"]).unwrap();
    s.advance_clock(50);
    assert!(runs(&s, &w));
    s.advance_clock(60);
    // Not yet removed by anything: the EXEC notices it expired.
    assert!(!runs(&s, &w));
}

#[test]
fn a_key_removed_by_expiry_after_watch_aborts() {
    let s = pinned();
    run(&s, 0, "SET k v PX 100");
    let w = s.watch(0, &[b"k"]).unwrap();
    s.advance_clock(200);
    assert_eq!(run(&s, 0, "GET k"), Reply::Nil);
    assert!(w.is_dirty());
    assert!(!runs(&s, &w));
}

#[test]
fn a_key_already_expired_when_watched() {
    // Its removal is no change ...
    let s = pinned();
    run(&s, 0, "SET k v PX 100");
    s.advance_clock(200);
    let w = s.watch(0, &[b"k"]).unwrap();
    assert!(runs(&s, &w));
    run(&s, 0, "DEL k");
    assert!(runs(&s, &w));
    // ... but creating it again is.
    run(&s, 0, "SET k v2");
    assert!(!runs(&s, &w));

    // A write that removes it then creates it again is a change too.
    let s = pinned();
    run(&s, 0, "SET k v PX 100");
    s.advance_clock(200);
    let w = s.watch(0, &[b"k"]).unwrap();
    run(&s, 0, "XADD k 1-1 f v");
    assert!(!runs(&s, &w));
}

#[test]
fn flush_and_swap_touch_only_stored_keys() {
    let s = pinned();
    run(&s, 0, "SET other v");
    let w = s.watch(0, &[b"k"]).unwrap();
    run(&s, 0, "FLUSHALL");
    assert!(
        runs(&s, &w),
        "a missing watched key is untouched by a flush"
    );
    run(&s, 0, "SWAPDB 0 1");
    assert!(runs(&s, &w));
    run(&s, 1, "SET k v");
    run(&s, 0, "SWAPDB 0 1");
    assert!(!runs(&s, &w), "the key arrived with the swap");

    let s = pinned();
    run(&s, 0, "SET k v");
    let w = s.watch(0, &[b"k"]).unwrap();
    run(&s, 1, "FLUSHDB");
    assert!(runs(&s, &w), "another database was flushed");
    run(&s, 0, "FLUSHDB");
    assert!(!runs(&s, &w));
}

#[test]
fn watches_of_several_databases_and_calls() {
    let s = pinned();
    let mut w = s.watch(0, &[b"a"]).unwrap();
    s.watch_more(&mut w, 3, &[b"a", b"b"]).unwrap();
    assert_eq!(w.keys().len(), 3);
    run(&s, 0, "SET b v");
    assert!(runs(&s, &w));
    run(&s, 3, "SET b v");
    assert!(!runs(&s, &w));

    // Separate handles: the batch aborts if any of them saw a change.
    let s = pinned();
    let w1 = s.watch(0, &[b"a"]).unwrap();
    let w2 = s.watch(0, &[b"b"]).unwrap();
    run(&s, 0, "SET b v");
    assert_eq!(
        s.execute_batch_watching(0, 2, &[cmd("PING")], true, &[&w1, &w2]),
        None
    );
    assert!(s
        .execute_batch_watching(0, 2, &[cmd("PING")], true, &[&w1])
        .is_some());
}

#[test]
fn dropping_a_watch_unregisters_it() {
    let s = pinned();
    let w = s.watch(0, &[b"a", b"b"]).unwrap();
    let w2 = s.watch(0, &[b"a"]).unwrap();
    assert_eq!(s.watch_stats(), (2, 2));
    drop(w);
    assert_eq!(s.watch_stats(), (1, 1));
    run(&s, 0, "SET a v");
    assert_eq!(s.watch_stats(), (0, 0), "a dirty watcher no longer counts");
    drop(w2);
    assert_eq!(s.watch_stats(), (0, 0));
}

#[test]
fn a_watch_of_another_store_is_refused() {
    let (s1, s2) = (pinned(), pinned());
    let w = s1.watch(0, &[b"k"]).unwrap();
    let r = s2
        .execute_batch(0, 2, &[cmd("PING")], true, Some(&w))
        .unwrap();
    assert_eq!(
        r[0].error_line(),
        Some("ERR the Watch belongs to another store")
    );
    assert!(s2.watch(16, &[b"k"]).is_err());
}
