use super::*;

fn pairs_of(e: &EntryView<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    e.pairs().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
}

#[test]
fn append_iterate_delete() {
    let mut n = StreamNode::new(StreamId::new(5, 1), &[b"a", b"1", b"b", b"2"]);
    n.append(StreamId::new(5, 2), &[b"a", b"x", b"b", b"y"]);
    n.append(StreamId::new(7, 0), &[b"c", &[b'z'; 300]]);
    n.append(StreamId::new(u64::MAX, u64::MAX), &[]);
    n.validate().unwrap();
    let ids: Vec<_> = n.iter().map(|e| e.id).collect();
    assert_eq!(
        ids,
        vec![
            StreamId::new(5, 1),
            StreamId::new(5, 2),
            StreamId::new(7, 0),
            StreamId::MAX
        ]
    );
    let rev: Vec<_> = n.iter().rev().map(|e| e.id).collect();
    assert_eq!(rev, ids.iter().rev().copied().collect::<Vec<_>>());
    let e = n.find(StreamId::new(7, 0)).unwrap();
    assert_eq!(pairs_of(&e), vec![(b"c".to_vec(), vec![b'z'; 300])]);
    let e = n.find(StreamId::new(5, 2)).unwrap();
    assert_eq!(
        pairs_of(&e),
        vec![
            (b"a".to_vec(), b"x".to_vec()),
            (b"b".to_vec(), b"y".to_vec())
        ]
    );
    assert_eq!(n.find(StreamId::MAX).unwrap().num_fields(), 0);
    assert!(n.delete(StreamId::new(5, 2)));
    assert!(!n.delete(StreamId::new(5, 2)));
    n.validate().unwrap();
    assert_eq!((n.live(), n.deleted()), (3, 1));
    assert_eq!(n.master_id(), StreamId::new(5, 1));
    assert_eq!(n.last_id_any(), StreamId::MAX);
}

#[test]
fn backlen_roundtrip() {
    for l in [0u64, 1, 127, 128, 300, 16383, 16384, 1 << 30] {
        let mut b = vec![9u8];
        put_backlen(&mut b, l);
        let (v, used) = get_backlen(&b, b.len());
        assert_eq!((v, used), (l, b.len() - 1));
    }
}

#[test]
fn delete_while_stops_and_filters() {
    let mut n = StreamNode::new(StreamId::new(1, 0), &[b"f", b"v"]);
    for i in 1..10 {
        n.append(StreamId::new(1, i), &[b"f", b"v"]);
    }
    let removed = n.delete_while(|id, _| id.seq >= 6, |id| id.seq % 2 == 0);
    assert_eq!(
        removed.iter().map(|i| i.seq).collect::<Vec<_>>(),
        vec![0, 2, 4]
    );
    n.validate().unwrap();
    assert_eq!(
        n.iter().map(|e| e.id.seq).collect::<Vec<_>>(),
        vec![1, 3, 5, 6, 7, 8, 9]
    );
}
