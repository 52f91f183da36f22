use super::*;

fn cfg(max_entries: i64) -> Config {
    Config {
        stream_node_max_entries: max_entries,
        ..Config::default()
    }
}

fn add(s: &mut Stream, c: &Config, ms: u64, seq: u64) -> StreamId {
    s.append(c, 0, Some((StreamId::new(ms, seq), true)), &[b"f", b"v"])
        .unwrap()
}

#[test]
fn append_split_iterate_delete() {
    let c = cfg(3);
    let mut s = Stream::new(&c);
    for i in 1..=10 {
        add(&mut s, &c, i, 0);
    }
    assert_eq!(s.node_count(), 4);
    assert_eq!(s.length, 10);
    s.validate().unwrap();
    let fwd: Vec<_> = s
        .range(StreamId::new(3, 0), StreamId::new(8, 0), false)
        .map(|e| e.id.ms)
        .collect();
    assert_eq!(fwd, vec![3, 4, 5, 6, 7, 8]);
    let rev: Vec<_> = s
        .range(StreamId::new(3, 0), StreamId::new(8, 0), true)
        .map(|e| e.id.ms)
        .collect();
    assert_eq!(rev, vec![8, 7, 6, 5, 4, 3]);
    assert_eq!(
        s.xdel(&[
            StreamId::new(1, 0),
            StreamId::new(2, 0),
            StreamId::new(3, 0)
        ]),
        3
    );
    assert_eq!(s.node_count(), 3);
    assert_eq!(s.first_id, StreamId::new(4, 0));
    assert_eq!(s.max_deleted_id, StreamId::new(3, 0));
    s.validate().unwrap();
    assert_eq!(
        s.append(&c, 0, Some((StreamId::new(10, 0), true)), &[b"f", b"v"]),
        Err(AppendError::IdTooSmall)
    );
    let id = s
        .append(&c, 0, Some((StreamId::new(10, 0), false)), &[b"f", b"v"])
        .unwrap();
    assert_eq!(id, StreamId::new(10, 1));
    let id = s.append(&c, 5, None, &[b"f", b"v"]).unwrap();
    assert_eq!(id, StreamId::new(10, 2));
}

#[test]
fn trim_maxlen_exact_and_approx() {
    let c = cfg(10);
    let mut s = Stream::new(&c);
    for i in 1..=95 {
        add(&mut s, &c, i, 0);
    }
    let approx = TrimArgs {
        strategy: TrimStrategy::MaxLen(50),
        approx: true,
        limit: 0,
        policy: RefPolicy::KeepRef,
    };
    assert_eq!(s.trim(&approx), 40);
    assert_eq!(s.length, 55);
    let exact = TrimArgs {
        strategy: TrimStrategy::MaxLen(50),
        approx: false,
        limit: 0,
        policy: RefPolicy::KeepRef,
    };
    assert_eq!(s.trim(&exact), 5);
    assert_eq!(s.first_id, StreamId::new(46, 0));
    s.validate().unwrap();
    let minid = TrimArgs {
        strategy: TrimStrategy::MinId(StreamId::new(90, 0)),
        approx: false,
        limit: 0,
        policy: RefPolicy::KeepRef,
    };
    assert_eq!(s.trim(&minid), 44);
    assert_eq!(s.first_id, StreamId::new(90, 0));
    s.validate().unwrap();
}
