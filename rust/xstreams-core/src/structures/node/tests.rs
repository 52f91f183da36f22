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
    let removed = n.delete_while(|id, _| id.seq >= 6, |id, _| id.seq % 2 == 0);
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

/// `delete_while` shows its predicate every tombstone it passes (DELREF cleans their
/// references), and a node left with no live entry fails `validate()` (redis-server
/// refuses to load one: `xstreams check` reports it through the store's validation).
#[test]
fn delete_while_passes_tombstones_and_an_emptied_node_is_invalid() {
    let mut n = StreamNode::new(StreamId::new(1, 0), &[b"f", b"v"]);
    for i in 1..4 {
        n.append(StreamId::new(1, i), &[b"f", b"v"]);
    }
    assert!(n.delete(StreamId::new(1, 1)));
    let mut seen = Vec::new();
    let removed = n.delete_while(
        |id, _| id.seq >= 3,
        |id, tombstone| {
            seen.push((id.seq, tombstone));
            true
        },
    );
    assert_eq!(seen, vec![(0, false), (1, true), (2, false)]);
    assert_eq!(removed.len(), 2);
    n.validate().unwrap();
    n.delete_while(|_, _| false, |_, _| true);
    assert_eq!(n.live(), 0);
    let e = n.validate().unwrap_err();
    assert!(e.contains("holds no live entry"), "{e}");
}

/// Fill a node the way `Stream::append` does (close when the listpack bytes plus the new
/// entry's bytes reach `max_bytes`, or at `max_entries`); returns the node and its
/// (capacity, length) after each append.
fn fill(values: &[Vec<u8>], limits: Limits) -> (StreamNode, Vec<(usize, usize)>) {
    fill_from(
        StreamNode::new(StreamId::new(1, 0), &[b"f", &values[0]]),
        values,
        limits,
    )
}

/// [`fill`] from a node `n` already holding `values[0]` as entry 1-0.
fn fill_from(
    mut n: StreamNode,
    values: &[Vec<u8>],
    limits: Limits,
) -> (StreamNode, Vec<(usize, usize)>) {
    let mut caps = vec![(n.heap_bytes(), n.buf.len())];
    for (i, v) in values.iter().enumerate().skip(1) {
        let full = n.lp_bytes() + 1 + v.len() as u64 >= limits.max_bytes
            || (limits.max_entries > 0 && n.live() + n.deleted() >= limits.max_entries);
        if full {
            break;
        }
        n.append_filling(StreamId::new(1, i as u64), &[b"f", v], limits);
        caps.push((n.heap_bytes(), n.buf.len()));
    }
    (n, caps)
}

#[test]
fn a_node_of_large_entries_grows_once_to_its_final_length() {
    let limits = Limits {
        max_bytes: 4096,
        max_entries: 100,
    };
    for size in [300usize, 512, 1000, 2000] {
        let values: Vec<Vec<u8>> = (0..20).map(|i| vec![b'a' + i as u8; size]).collect();
        let (n, caps) = fill(&values, limits);
        n.validate().unwrap();
        // One growth after the first entry (two when the node holds more than 4x its
        // first two entries), then none; closing finds no spare room.
        let growths = caps.windows(2).filter(|w| w[1].0 != w[0].0).count();
        assert!(growths <= 2, "size {size}: capacities {caps:?}");
        assert_eq!(n.heap_bytes(), n.buf.len(), "size {size}: {caps:?}");
        let got: Vec<_> = n.iter().map(|e| pairs_of(&e)[0].1.clone()).collect();
        assert_eq!(got, values[..got.len()].to_vec());
    }
}

#[test]
fn entries_of_growing_size_still_fit_and_read_back() {
    let limits = Limits {
        max_bytes: 1 << 20,
        max_entries: 0,
    };
    let values: Vec<Vec<u8>> = (0..60).map(|i| vec![b'x'; 200 + i * 97]).collect();
    let (n, caps) = fill(&values, limits);
    n.validate().unwrap();
    assert_eq!(n.live() as usize, values.len());
    // Growth stays geometric: never more than 4x the contents, so at most a few
    // reallocations for 60 entries.
    let growths = caps.windows(2).filter(|w| w[1].0 != w[0].0).count();
    assert!(growths <= 12, "capacities {caps:?}");
    assert!(caps.iter().all(|&(cap, len)| cap <= 4 * len), "{caps:?}");
    let got: Vec<_> = n.iter().map(|e| pairs_of(&e)[0].1.clone()).collect();
    assert_eq!(got, values);
}

#[test]
fn a_node_made_to_fill_is_allocated_once_at_its_final_length() {
    let limits = Limits {
        max_bytes: 4096,
        max_entries: 100,
    };
    for size in [300usize, 512, 1000, 2000] {
        let values: Vec<Vec<u8>> = (0..20).map(|i| vec![b'a' + i as u8; size]).collect();
        let first = StreamNode::new_filling(StreamId::new(1, 0), &[b"f", &values[0]], limits);
        let (n, caps) = fill_from(first, &values, limits);
        assert!(
            caps.iter().all(|c| c.0 == caps[0].0),
            "size {size}: grew: {caps:?}"
        );
        n.validate().unwrap();
        // Full exactly at the capacity reserved: closing it finds no spare room.
        assert_eq!(n.heap_bytes(), n.buf.len(), "size {size}");
        assert!(n.live() > 1, "size {size}");
        let got: Vec<_> = n.iter().map(|e| pairs_of(&e)[0].1.clone()).collect();
        assert_eq!(got, values[..got.len()].to_vec());
    }
}

#[test]
fn a_node_made_to_fill_reserves_no_more_than_its_byte_limit() {
    // 100 entries of 100 kB would fill 10 MB: the reservation stops at the byte limit
    // (here 1 MB, room for about ten), and the entry limit bounds it too.
    let value = vec![b'x'; 100_000];
    let pairs: [&[u8]; 2] = [b"f", &value];
    let n = StreamNode::new_filling(
        StreamId::new(1, 0),
        &pairs,
        Limits {
            max_bytes: 1 << 20,
            max_entries: 0,
        },
    );
    assert!(n.heap_bytes() <= (1 << 20) + 200, "{}", n.heap_bytes());
    assert!(n.heap_bytes() >= 9 * 100_000, "{}", n.heap_bytes());
    let n = StreamNode::new_filling(
        StreamId::new(1, 0),
        &pairs,
        Limits {
            max_bytes: 1 << 20,
            max_entries: 2,
        },
    );
    assert!(n.heap_bytes() < 2 * 100_100, "{}", n.heap_bytes());
    assert_eq!(
        pairs_of(&n.first_entry().unwrap()),
        vec![(b"f".to_vec(), value.clone())]
    );
    // One entry larger than the limit: room for it alone.
    let n = StreamNode::new_filling(
        StreamId::new(1, 0),
        &pairs,
        Limits {
            max_bytes: 4096,
            max_entries: 0,
        },
    );
    assert_eq!(n.heap_bytes(), n.buf.len());
}
