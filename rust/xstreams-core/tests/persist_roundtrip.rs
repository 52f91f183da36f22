//! Durable stores: a reopened store holds exactly the state it had (entries, counters,
//! groups, consumers with their times, PEL records with counts and times, the NACK zone in
//! order, IDMP producers and counters), with and without compaction; a log cut inside a
//! command loads up to the last whole command; damaged files are reported with their name
//! and offset; a second writer is refused.

use std::path::Path;

use xstreams_core::command::reply::Reply;
use xstreams_core::store::persist::{ErrorKind, Fsync, Options};
use xstreams_core::{Config, Store};

fn run(s: &Store, cmd: &str) -> Reply {
    let parts: Vec<&[u8]> = cmd.split(' ').map(|p| p.as_bytes()).collect();
    s.execute(&parts)
}

fn open(dir: &Path) -> Store {
    let opts = Options {
        fsync: Fsync::Always,
        ..Options::default()
    };
    Store::open(dir, Config::default(), opts).expect("open").0
}

/// Everything observable about the keyspace, as replies.
fn state(s: &Store) -> Vec<Reply> {
    let mut out = Vec::new();
    let keys = run(s, "KEYS *");
    let Reply::Array(keys) = keys else {
        panic!("KEYS")
    };
    let mut names: Vec<String> = keys
        .iter()
        .map(|k| {
            if let Reply::Bulk(b) = k {
                String::from_utf8(b.clone()).unwrap()
            } else {
                panic!()
            }
        })
        .collect();
    names.sort();
    for k in names {
        out.push(Reply::bulk(k.as_bytes()));
        if run(s, &format!("TYPE {k}")) == Reply::status("stream") {
            out.push(run(s, &format!("XINFO STREAM {k} FULL COUNT 0")));
            out.push(run(s, &format!("XRANGE {k} - +")));
            if let Reply::Array(groups) = run(s, &format!("XINFO GROUPS {k}")) {
                for g in groups {
                    if let Reply::Map(fields) = g {
                        if let Reply::Bulk(name) = &fields[0].1 {
                            let name = String::from_utf8(name.clone()).unwrap();
                            out.push(run(s, &format!("XPENDING {k} {name} - + 1000")));
                            out.push(run(s, &format!("XINFO CONSUMERS {k} {name}")));
                        }
                    }
                }
            }
        } else {
            out.push(run(s, &format!("GET {k}")));
        }
    }
    out
}

fn workload(s: &Store) {
    s.set_clock(Some(1_000_000));
    for i in 1..=30 {
        run(s, &format!("XADD s {i}-0 f v{i} g w"));
    }
    run(s, "XADD s * a b");
    run(s, "XGROUP CREATE s g1 0");
    run(s, "XGROUP CREATE s g2 $");
    s.advance_clock(10);
    run(s, "XREADGROUP GROUP g1 alice COUNT 5 STREAMS s >");
    s.advance_clock(10);
    run(s, "XREADGROUP GROUP g1 bob COUNT 5 STREAMS s >");
    s.advance_clock(10);
    run(s, "XNACK s g1 FAIL IDS 2 3-0 7-0");
    run(s, "XNACK s g1 FATAL IDS 1 1-0");
    run(s, "XACK s g1 2-0");
    s.advance_clock(100);
    run(s, "XREADGROUP GROUP g1 carol COUNT 3 CLAIM 50 STREAMS s >");
    run(s, "XREADGROUP GROUP g1 alice STREAMS s 0");
    run(s, "XREADGROUP GROUP g1 dave COUNT 2 NOACK STREAMS s >");
    run(s, "XCLAIM s g1 erin 0 5-0 8-0 IDLE 5");
    run(s, "XAUTOCLAIM s g1 frank 0 0 COUNT 2");
    run(s, "XDEL s 9-0 10-0");
    run(s, "XTRIM s MINID ~ 3");
    run(s, "XADD s MAXLEN ~ 20 * h i");
    run(s, "XADD t IDMP p1 iid-1 * x 1");
    run(s, "XADD t IDMP p1 iid-1 * x 1");
    run(s, "XADD t IDMPAUTO p2 * x 2");
    run(s, "XCFGSET t IDMP-MAXSIZE 50");
    run(s, "XADD t IDMP p1 iid-2 * x 3");
    run(s, "XGROUP CREATE t g 0");
    run(s, "XREADGROUP GROUP g c STREAMS t >");
    run(s, "XGROUP CREATECONSUMER t g idle");
    run(s, "SET str hello PX 100000");
    run(s, "XADD db3 1-1 a b");
    s.execute_in(3, 2, &[b"XADD", b"other", b"5-5", b"k", b"v"]);
    s.advance_clock(7);
}

#[test]
fn reopen_restores_exact_state_with_and_without_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    workload(&s);
    let before = state(&s);
    let db3 = s.execute_in(3, 2, &[b"XRANGE", b"other", b"-", b"+"]);
    s.validate().unwrap();
    s.close();

    let s = open(dir.path());
    s.set_clock(Some(1_000_000 + 10 + 10 + 10 + 100 + 7));
    assert_eq!(state(&s), before);
    assert_eq!(s.execute_in(3, 2, &[b"XRANGE", b"other", b"-", b"+"]), db3);
    s.validate().unwrap();
    s.compact().unwrap();
    run(&s, "XADD s * after compact");
    let after = state(&s);
    s.close();

    let s = open(dir.path());
    s.set_clock(Some(1_000_000 + 10 + 10 + 10 + 100 + 7));
    assert_eq!(state(&s), after);
    s.validate().unwrap();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("snapshot.")),
        "{names:?}"
    );
    assert!(
        !names.contains(&"log.1.aof".to_string()),
        "old log removed: {names:?}"
    );
}

#[test]
fn cut_tail_is_dropped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    run(&s, "XADD s 1-1 f v");
    run(&s, "XADD s 2-1 f v");
    s.close();
    let log = dir.path().join("log.1.aof");
    let mut data = std::fs::read(&log).unwrap();
    let full = data.len();
    data.truncate(full - 5);
    std::fs::write(&log, &data).unwrap();
    let (s, report) = Store::open(dir.path(), Config::default(), Options::default()).unwrap();
    assert_eq!(report.truncated.len(), 1);
    assert_eq!(run(&s, "XLEN s"), Reply::Int(1));
    run(&s, "XADD s 3-1 f v");
    s.close();
    let (s, report) = Store::open(dir.path(), Config::default(), Options::default()).unwrap();
    assert!(report.truncated.is_empty());
    assert_eq!(run(&s, "XLEN s"), Reply::Int(2));
}

#[test]
fn damage_and_locking_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    run(&s, "XADD s 1-1 f v");
    let err = Store::open(dir.path(), Config::default(), Options::default())
        .err()
        .unwrap();
    assert!(
        matches!(err.kind(), ErrorKind::Locked { pid: Some(_) }),
        "{err:?}"
    );
    assert!(
        err.message().contains("locked by process"),
        "{}",
        err.message()
    );
    // A read-only open works while the writer holds the lock.
    let ro = Options {
        read_only: true,
        ..Options::default()
    };
    let (r, _) = Store::open(dir.path(), Config::default(), ro).unwrap();
    assert_eq!(run(&r, "XLEN s"), Reply::Int(1));
    assert!(
        matches!(run(&r, "XADD s 2-1 f v"), Reply::Error(e) if e.line().starts_with("READONLY"))
    );
    s.compact().unwrap();
    s.close();
    // Flip a byte inside the snapshot: a checksum error naming the file and offset.
    let snap = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "xss"))
        .unwrap();
    let mut data = std::fs::read(&snap).unwrap();
    let mid = data.len() / 2;
    data[mid] ^= 0x40;
    std::fs::write(&snap, &data).unwrap();
    let err = Store::open(dir.path(), Config::default(), Options::default())
        .err()
        .unwrap();
    assert!(matches!(err.kind(), ErrorKind::Corrupt { .. }), "{err:?}");
    assert!(
        err.message().contains("snapshot.") && err.message().contains("offset"),
        "{}",
        err.message()
    );
    // A foreign log: garbage in the middle of the log is an error, not a truncation.
    let dir2 = tempfile::tempdir().unwrap();
    let s = open(dir2.path());
    run(&s, "XADD s 1-1 f v");
    s.close();
    let log = dir2.path().join("log.1.aof");
    let mut data = std::fs::read(&log).unwrap();
    data.extend_from_slice(b"HELLO\r\n*1\r\n$4\r\nPING\r\n");
    std::fs::write(&log, &data).unwrap();
    let err = Store::open(dir2.path(), Config::default(), Options::default())
        .err()
        .unwrap();
    assert!(matches!(err.kind(), ErrorKind::Corrupt { .. }), "{err:?}");
}
