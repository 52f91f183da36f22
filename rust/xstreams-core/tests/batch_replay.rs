//! `batch`: XADD rows on durable stores, and replay by parts of a persisted store, checked
//! against the store reopened from its files.

use xstreams_core::interop::batch::replay::{self, PartKind, StoreFiles};
use xstreams_core::interop::batch::{Col, Entries, Idmp, RowOutcome, XaddRows};
use xstreams_core::store::persist::Options;
use xstreams_core::{Config, Reply, Store, StreamId};

#[path = "support/durable.rs"]
mod durable;
use durable::{open, NOW};

fn flat(e: &Entries) -> Vec<(StreamId, Vec<u8>)> {
    (0..e.len())
        .map(|i| {
            let (a, b) = (e.pair_offsets[i] as usize, e.pair_offsets[i + 1] as usize);
            let v0 = e.value_offsets[a] as usize;
            let v1 = e.value_offsets[b] as usize;
            (e.ids[i], e.values[v0..v1].to_vec())
        })
        .collect()
}

fn read_all(
    dir: &std::path::Path,
    key: &[u8],
    per_part: u64,
) -> (Vec<(StreamId, Vec<u8>)>, Vec<PartKind>) {
    let files = StoreFiles::open(dir).unwrap();
    let parts = replay::plan(
        &files,
        0,
        &[key.to_vec()],
        StreamId::MIN,
        StreamId::MAX,
        false,
        replay::Split::rows(per_part),
    )
    .unwrap();
    let mut out = Entries::new();
    let mut loaded = None;
    for p in &parts {
        if p.kind == PartKind::Full {
            let ks = loaded.get_or_insert_with(|| replay::load(&files, Config::default()).unwrap());
            replay::read_loaded(ks, 0, p, None, &mut out).unwrap();
        } else {
            replay::read_part(&files, 0, p, None, &mut out).unwrap();
        }
    }
    (flat(&out), parts.iter().map(|p| p.kind).collect())
}

fn xrange(dir: &std::path::Path, key: &[u8]) -> Vec<(StreamId, Vec<u8>)> {
    let (s, _) = Store::open(
        dir,
        Config::default(),
        Options {
            read_only: true,
            ..Options::default()
        },
    )
    .unwrap();
    flat(&s.range_entries(0, key, b"-", b"+", None, false).unwrap())
}

#[test]
fn durable_rows_match_single_xadds_and_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let (da, db) = (tmp.path().join("a"), tmp.path().join("b"));
    let (a, b) = (open(&da), open(&db));
    let iids: Vec<&[u8]> = vec![b"x", b"y", b"x", b"z", b"y"];
    let vals: Vec<&[u8]> = vec![b"1", b"2", b"3", b"4", b"5"];
    let rows = XaddRows {
        len: 5,
        key: Some(Col::Const(b"s")),
        idmp: Idmp::Iid {
            pid: Col::Const(b"p"),
            iid: Col::Rows(iids.iter().map(|v| Some(*v)).collect()),
        },
        fields: vec![(b"v", Col::Rows(vals.iter().map(|v| Some(*v)).collect()))],
        ..XaddRows::default()
    };
    let got = a.xadd_rows(0, &rows).unwrap();
    for (i, o) in got.iter().enumerate() {
        let r = b.execute(&[b"XADD", b"s", b"IDMP", b"p", iids[i], b"*", b"v", vals[i]]);
        assert_eq!(Reply::id(&o.id().unwrap()), r);
    }
    assert!(matches!(got[2], RowOutcome::Duplicate(_)));
    assert!(matches!(got[4], RowOutcome::Duplicate(_)));
    assert!(matches!(got[3], RowOutcome::Added(_)));
    let mut times = rows.clone();
    times.times = Some(vec![NOW; 5]);
    assert!(a.xadd_rows(0, &times).is_err());

    // Snapshot, then appends (tail part), then a delete (full load).
    for i in 0..30u64 {
        a.execute(&[b"XADD", b"s", b"*", b"v", i.to_string().as_bytes()]);
        a.advance_clock(1);
    }
    a.compact().unwrap();
    for i in 0..5u64 {
        a.execute(&[b"XADD", b"s", b"*", b"v", format!("t{i}").as_bytes()]);
        a.advance_clock(1);
    }
    let (got, kinds) = read_all(&da, b"s", 7);
    assert_eq!(got, xrange(&da, b"s"));
    assert!(kinds.contains(&PartKind::Snapshot) && kinds.contains(&PartKind::Tail));
    assert!(kinds.iter().filter(|k| **k == PartKind::Snapshot).count() >= 4);
    let first = got[3].0.to_bytes();
    a.execute(&[b"XDEL", b"s", &first]);
    let (got, kinds) = read_all(&da, b"s", 7);
    assert_eq!(got, xrange(&da, b"s"));
    assert!(kinds.iter().all(|k| *k == PartKind::Full));
    a.close();
    b.close();
}

/// A durable store (4 entries a node, left open) with 100 entries `v <i>` in each of
/// `keys`, added in turns, one millisecond apart.
fn hundred_each(dir: &std::path::Path, keys: &[&[u8]]) -> Store {
    let a = open(dir);
    for i in 0..100u64 {
        for key in keys {
            a.execute(&[b"XADD", key, b"*", b"v", i.to_string().as_bytes()]);
        }
        a.advance_clock(1);
    }
    a
}

/// The parts of a snapshot range: even in rows, at least `min_parts` of them while there
/// are nodes to split, and together exactly the stream.
#[test]
fn parts_are_even_and_at_least_min_parts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let a = hundred_each(&dir, &[b"s"]);
    a.compact().unwrap();
    let rows = |split: replay::Split| -> Vec<u64> {
        let files = StoreFiles::open(&dir).unwrap();
        let parts = replay::plan(
            &files,
            0,
            &[b"s".to_vec()],
            StreamId::MIN,
            StreamId::MAX,
            false,
            split,
        )
        .unwrap();
        let mut out = Entries::new();
        for p in &parts {
            assert_eq!(p.kind, PartKind::Snapshot);
            replay::read_part(&files, 0, p, None, &mut out).unwrap();
        }
        assert_eq!(flat(&out), xrange(&dir, b"s"), "{split:?}");
        parts.iter().map(|p| p.rows).collect()
    };
    // 100 entries in 25 nodes.
    assert_eq!(rows(replay::Split::rows(60)), vec![52, 48]); // not 60 + 40
    assert_eq!(rows(replay::Split::rows(1000)), vec![100]);
    let split = |rows_per_part, min_parts| replay::Split {
        rows_per_part,
        min_parts,
    };
    assert_eq!(rows(split(1000, 2)), vec![52, 48]);
    assert_eq!(rows(split(1000, 4)), vec![28, 24, 24, 24]);
    assert_eq!(rows(split(30, 2)), vec![28, 24, 24, 24]); // rows_per_part wins
    assert_eq!(rows(split(1000, 100)).len(), 25); // no more parts than nodes
    assert_eq!(rows(split(1000, 0)), vec![100]);
    assert_eq!(rows(replay::Split::rows(1)), vec![4; 25]); // a part per node

    // Uneven nodes (the first holds 1 entry now): still a part per node at 1.
    for i in 0..3u64 {
        a.execute(&[b"XDEL", b"s", format!("{}-0", NOW + i as i64).as_bytes()]);
    }
    a.compact().unwrap();
    let mut want = vec![4; 25];
    want[0] = 1;
    assert_eq!(rows(replay::Split::rows(1)), want);
    assert_eq!(rows(replay::Split::rows(50)), vec![49, 48]);
    a.close();
}

/// `min_parts` is the whole read's: shared evenly among the streams with snapshot entries
/// in the range, so a missing, empty or out-of-range stream takes no share.
#[test]
fn min_parts_is_shared_among_streams_with_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let a = hundred_each(&dir, &[b"s", b"t"]);
    a.execute(&[b"XADD", b"gone", b"*", b"v", b"0"]);
    a.execute(&[b"XTRIM", b"gone", b"MAXLEN", b"0"]); // an empty stream
    a.compact().unwrap();
    let per_key = |keys: &[&[u8]], min_parts: u64, start: StreamId| -> Vec<usize> {
        let files = StoreFiles::open(&dir).unwrap();
        let keys: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
        let split = replay::Split {
            rows_per_part: 1000,
            min_parts,
        };
        let parts = replay::plan(&files, 0, &keys, start, StreamId::MAX, false, split).unwrap();
        keys.iter()
            .map(|k| parts.iter().filter(|p| p.key == *k).count())
            .collect()
    };
    let all = StreamId::MIN;
    assert_eq!(per_key(&[b"s"], 2, all), vec![2]);
    assert_eq!(per_key(&[b"s", b"missing"], 2, all), vec![2, 0]);
    assert_eq!(per_key(&[b"s", b"gone"], 2, all), vec![2, 0]);
    assert_eq!(per_key(&[b"s", b"t"], 4, all), vec![2, 2]);
    assert_eq!(per_key(&[b"s", b"t"], 3, all), vec![2, 2]); // rounded up
    assert_eq!(per_key(&[b"s", b"t"], 2, all), vec![1, 1]);
    // Past every entry: no stream has entries in the range, none takes a share.
    let past = StreamId {
        ms: (NOW + 1000) as u64,
        seq: 0,
    };
    assert_eq!(per_key(&[b"s", b"t"], 4, past), vec![0, 0]);
    a.close();
}
