//! Atomic steps in the log: an atomic batch (`execute_batch(atomic)`, the MULTI/EXEC of
//! the embedded store) and `xadd_rows_atomic` (the Spark sink's rows + marker) are one
//! block in a durable store's log, so a log cut anywhere inside that block (a crash or a
//! torn write during it) reopens with none of the step, and the whole log with all of it.
//! A pipeline (not atomic) keeps each command's own record: a cut keeps the commands
//! before it; its records are written in chunks, between which other threads' atomic
//! batches stay blocks of their own.

use std::path::Path;

use xstreams_core::command::reply::Reply;
use xstreams_core::interop::batch::{Col, XaddRows};
use xstreams_core::store::persist::{Fsync, Options};
use xstreams_core::{Config, Store};

fn open(dir: &Path) -> Store {
    let opts = Options {
        fsync: Fsync::Always,
        ..Options::default()
    };
    Store::open(dir, Config::default(), opts).expect("open").0
}

fn argv(cmd: &str) -> Vec<Vec<u8>> {
    cmd.split(' ').map(|p| p.as_bytes().to_vec()).collect()
}

fn xlen(s: &Store, key: &str) -> Reply {
    s.execute(&[b"XLEN", key.as_bytes()])
}

fn log_len(dir: &Path) -> usize {
    std::fs::metadata(dir.join("log.1.aof")).unwrap().len() as usize
}

/// Reopen a copy of `dir` whose log is cut to `len` bytes.
fn reopen_cut(dir: &Path, len: usize) -> Store {
    let copy = tempfile::tempdir().unwrap().keep();
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), copy.join(f.file_name())).unwrap();
    }
    let log = copy.join("log.1.aof");
    let data = std::fs::read(&log).unwrap();
    std::fs::write(&log, &data[..len]).unwrap();
    let (s, _) = Store::open(&copy, Config::default(), Options::default()).expect("reopen");
    s
}

#[test]
fn atomic_batch_is_all_or_nothing_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.execute(&[b"XADD", b"a", b"0-1", b"f", b"v"]);
    let before = log_len(dir.path());
    let cmds = vec![
        argv("XADD a 1-1 f v"),
        argv("XADD b 1-1 f v"),
        argv("XADD a 2-1 f v"),
    ];
    let replies = s
        .execute_batch(0, 2, &cmds, true, None)
        .expect("not watched");
    assert!(
        replies.iter().all(|r| !matches!(r, Reply::Error(_))),
        "{replies:?}"
    );
    s.close();
    let full = log_len(dir.path());
    assert!(full > before);
    for cut in before..full {
        let r = reopen_cut(dir.path(), cut);
        assert_eq!(
            xlen(&r, "a"),
            Reply::Int(1),
            "cut at {cut} of {before}..{full}"
        );
        assert_eq!(xlen(&r, "b"), Reply::Int(0), "cut at {cut}");
        r.close();
    }
    let r = reopen_cut(dir.path(), full);
    assert_eq!(xlen(&r, "a"), Reply::Int(3));
    assert_eq!(xlen(&r, "b"), Reply::Int(1));
}

#[test]
fn a_pipeline_keeps_the_commands_before_a_cut() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let cmds = vec![argv("XADD a 1-1 f v"), argv("XADD a 2-1 f v")];
    s.execute_batch(0, 2, &cmds, false, None);
    s.close();
    let r = reopen_cut(dir.path(), log_len(dir.path()) - 3);
    assert_eq!(xlen(&r, "a"), Reply::Int(1));
}

#[test]
fn rows_and_marker_are_one_step() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.execute(&[b"XADD", b"out", b"*", b"f", b"first"]);
    let before = log_len(dir.path());
    let vals: Vec<&[u8]> = vec![b"x", b"y", b"z"];
    let rows = XaddRows {
        len: vals.len(),
        key: Some(Col::Const(b"out")),
        fields: vec![(b"f", Col::Rows(vals.iter().map(|v| Some(*v)).collect()))],
        ..XaddRows::default()
    };
    let marker = vec![argv("XADD marker * batch 7")];
    let (outcomes, after) = s.xadd_rows_atomic(0, &rows, &marker).unwrap();
    assert_eq!(outcomes.len(), 3);
    assert!(matches!(after[0], Reply::Bulk(_)), "{after:?}");
    s.close();
    let full = log_len(dir.path());
    for cut in before..full {
        let r = reopen_cut(dir.path(), cut);
        assert_eq!(
            xlen(&r, "out"),
            Reply::Int(1),
            "cut at {cut} of {before}..{full}"
        );
        assert_eq!(xlen(&r, "marker"), Reply::Int(0), "cut at {cut}");
        r.close();
    }
    let r = reopen_cut(dir.path(), full);
    assert_eq!(xlen(&r, "out"), Reply::Int(4));
    assert_eq!(xlen(&r, "marker"), Reply::Int(1));
}

/// A pipeline writes its records in chunks (an open batch in the log between its
/// commands), yet another thread's atomic batches that run between the chunks stay
/// blocks of their own: none is swallowed into the pipeline's batch (it would lose its
/// MULTI/EXEC and could be cut in half by a crash).
#[test]
fn atomic_batches_between_a_pipelines_chunks_stay_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let pipeline: Vec<Vec<Vec<u8>>> = (0..20_000).map(|_| argv("XADD p * f v")).collect();
    let other = s.clone();
    let t = std::thread::spawn(move || {
        for _ in 0..200 {
            let cmds = vec![argv("XADD a * f v"), argv("XADD b * f v")];
            other.execute_batch(0, 2, &cmds, true, None).unwrap();
        }
    });
    s.execute_batch(0, 2, &pipeline, false, None).unwrap();
    t.join().unwrap();
    s.close();
    let log = std::fs::read(dir.path().join("log.1.aof")).unwrap();
    let blocks = log
        .windows(15)
        .filter(|w| w == b"*1\r\n$5\r\nMULTI\r\n")
        .count();
    assert_eq!(blocks, 200);
    let r = reopen_cut(dir.path(), log.len());
    assert_eq!(xlen(&r, "p"), Reply::Int(20_000));
    assert_eq!(xlen(&r, "a"), Reply::Int(200));
    assert_eq!(xlen(&r, "b"), Reply::Int(200));
}

/// A group reader blocked when a pipeline's XADD serves it: its delivery (the records
/// the read logs) reaches the log, in order with the pipeline's records, and the
/// reopened store has the entry pending for that consumer.
#[test]
fn a_pipeline_serving_a_blocked_group_read_logs_the_delivery() {
    use xstreams_core::store::Step;
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.execute(&[b"XGROUP", b"CREATE", b"q", b"g", b"$", b"MKSTREAM"]);
    let read = argv("XREADGROUP GROUP g c BLOCK 0 STREAMS q >");
    let read: Vec<&[u8]> = read.iter().map(|a| a.as_slice()).collect();
    let Step::Blocked(call) = s.start(0, 2, &read) else {
        panic!("the read did not block")
    };
    let reader = s.clone();
    let t = std::thread::spawn(move || reader.wait(call, None));
    let mut cmds: Vec<Vec<Vec<u8>>> = (0..300).map(|_| argv("XADD p * f v")).collect();
    cmds.insert(100, argv("XADD q 5-1 f v"));
    s.execute_batch(0, 2, &cmds, false, None).unwrap();
    let Step::Done(Reply::Array(got)) = t.join().unwrap() else {
        panic!("the read was not served")
    };
    assert_eq!(got.len(), 1);
    s.close();
    let r = reopen_cut(dir.path(), log_len(dir.path()));
    assert_eq!(xlen(&r, "p"), Reply::Int(300));
    let pending = r.execute(&[b"XPENDING", b"q", b"g"]);
    let Reply::Array(summary) = pending else {
        panic!("{pending:?}")
    };
    assert_eq!(summary[0], Reply::Int(1), "{summary:?}");
}
