use super::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

fn id(ms: u64, seq: u64) -> RaxKey {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&ms.to_be_bytes());
    k[8..].copy_from_slice(&seq.to_be_bytes());
    k
}

/// Node count of the canonical compressed trie over `keys`, computed
/// without a tree: nodes sit at the root, at every branching prefix, at
/// every child of a branching prefix, and at every key.
fn canonical_nodes<'a>(keys: impl IntoIterator<Item = &'a RaxKey>) -> usize {
    let keys: Vec<&RaxKey> = keys.into_iter().collect();
    let mut branching: BTreeSet<&[u8]> = BTreeSet::new();
    for w in keys.windows(2) {
        let l = w[0]
            .iter()
            .zip(w[1].iter())
            .take_while(|(a, b)| a == b)
            .count();
        branching.insert(&w[0][..l]);
    }
    let mut nodes: BTreeSet<&[u8]> = BTreeSet::new();
    nodes.insert(&[]);
    for k in &keys {
        nodes.insert(&k[..]);
        for d in 0..KEY_LEN {
            if branching.contains(&k[..d]) {
                nodes.insert(&k[..d]);
                nodes.insert(&k[..d + 1]);
            }
        }
    }
    nodes.len()
}

/// Replays a parity log (see tests/rax_parity/check_rax_parity.py).
/// Returns (operations, sequences, mismatch descriptions).
fn replay(log: &str) -> (usize, usize, Vec<String>) {
    let mut rax: Rax<u64> = Rax::new();
    let (mut ops, mut seqs) = (0usize, 0usize);
    let mut bad = Vec::new();
    // Logs from a server that inlines leaves (Redis 8.8) say so on their first line.
    let mut inline = false;
    for (lineno, line) in log.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line == "inline-leaves" {
            inline = true;
            rax = Rax::new_inlined();
            continue;
        }
        if line == "reset" {
            rax.clear();
            seqs += 1;
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 4, "line {}: {line:?}", lineno + 1);
        let ms: u64 = f[1].parse().expect("ms");
        let seq: u64 = f[2].parse().expect("seq");
        let want: usize = f[3].parse().expect("node count");
        let key = id(ms, seq);
        match f[0] {
            "+" => {
                if rax.insert(key, ms ^ seq).is_some() {
                    bad.push(format!("line {}: {ms}-{seq} inserted twice", lineno + 1));
                }
            }
            "-" => {
                if rax.remove(&key) != Some(ms ^ seq) {
                    bad.push(format!(
                        "line {}: {ms}-{seq} missing on removal",
                        lineno + 1
                    ));
                }
            }
            op => panic!("line {}: unknown op {op:?}", lineno + 1),
        }
        ops += 1;
        let got = if inline {
            rax.inlined_node_count()
        } else {
            rax.node_count()
        };
        if got != want {
            bad.push(format!(
                "line {}: {} {ms}-{seq}: node count {got} but redis reported {want}",
                lineno + 1,
                f[0],
            ));
        }
        if let Err(e) = rax.validate() {
            bad.push(format!("line {}: invalid tree: {e}", lineno + 1));
        }
    }
    (ops, seqs, bad)
}

/// Cases recorded from real redis-servers (8.2.3: leaf nodes; 8.8: inlined leaves)
/// with `check_rax_parity.py --emit-cases`.
#[test]
fn redis_parity_recorded() {
    for log in [RECORDED, RECORDED_INLINE] {
        let (ops, seqs, bad) = replay(log);
        assert!(ops >= 300 && seqs >= 6, "{ops} ops in {seqs} sequences");
        assert!(
            bad.is_empty(),
            "{} mismatches:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }
}

/// Replays the log named by RAX_PARITY_LOG; run by
/// tests/rax_parity/check_rax_parity.py.
#[test]
#[ignore = "needs a log recorded from redis-server (RAX_PARITY_LOG)"]
fn redis_parity_log() {
    let path = std::env::var("RAX_PARITY_LOG").expect("RAX_PARITY_LOG names a parity log");
    let log = std::fs::read_to_string(&path).expect("readable parity log");
    let (ops, seqs, bad) = replay(&log);
    println!(
        "rax parity: {ops} operations in {seqs} sequences, {} mismatches",
        bad.len()
    );
    for b in bad.iter().take(50) {
        println!("  {b}");
    }
    assert!(bad.is_empty(), "{} mismatches", bad.len());
}

/// Every lookup and seek on `rax` agrees with `model` for `probe`.
fn check_queries(rax: &Rax<u32>, model: &BTreeMap<RaxKey, u32>, probe: &RaxKey) {
    let m = |e: Option<(&RaxKey, &u32)>| e.map(|(k, v)| (*k, *v));
    let r = |e: Option<(RaxKey, &u32)>| e.map(|(k, v)| (k, *v));
    assert_eq!(rax.get(probe), model.get(probe));
    assert_eq!(r(rax.seek_ge(probe)), m(model.range(*probe..).next()));
    assert_eq!(r(rax.seek_le(probe)), m(model.range(..=*probe).next_back()));
    assert_eq!(
        r(rax.next_after(probe)),
        m(model
            .range((
                std::ops::Bound::Excluded(*probe),
                std::ops::Bound::Unbounded
            ))
            .next())
    );
    assert_eq!(
        r(rax.prev_before(probe)),
        m(model.range(..*probe).next_back())
    );
}

fn check_whole(rax: &Rax<u32>, model: &BTreeMap<RaxKey, u32>) {
    if let Err(e) = rax.validate() {
        panic!("invalid tree: {e}");
    }
    assert_eq!(rax.len(), model.len());
    assert_eq!(rax.is_empty(), model.is_empty());
    if rax.inline {
        // Redis 8.8's shapes depend on history: never fewer nodes than canonical.
        assert!(rax.node_count() >= canonical_nodes(model.keys()));
        assert_eq!(rax.inlined_node_count(), rax.node_count() - rax.len());
    } else {
        assert_eq!(rax.node_count(), canonical_nodes(model.keys()));
    }
    let got: Vec<(RaxKey, u32)> = rax.iter().map(|(k, v)| (k, *v)).collect();
    let want: Vec<(RaxKey, u32)> = model.iter().map(|(k, v)| (*k, *v)).collect();
    assert_eq!(got, want);
    assert_eq!(rax.iter().size_hint(), (model.len(), Some(model.len())));
    assert_eq!(rax.first().map(|(k, v)| (k, *v)), want.first().copied());
    assert_eq!(rax.last().map(|(k, v)| (k, *v)), want.last().copied());
    let mut tail = rax.clone();
    assert_eq!(tail.last_mut().copied(), want.last().map(|(_, v)| *v));
}

fn key_strategy() -> impl Strategy<Value = RaxKey> {
    let bytes = prop::sample::select(vec![0u8, 1, 2, 0x7f, 0x80, 0xfe, 0xff]);
    prop_oneof![
        // Stream-like: few ms values, small sequence numbers.
        (0u64..4, 0u64..600).prop_map(|(ms, seq)| id(ms, seq)),
        // A base key with a few bytes changed anywhere.
        (0usize..3, prop::collection::vec((0usize..16, bytes), 0..4)).prop_map(|(base, muts)| {
            let mut k = [[0u8; 16], [0xff; 16], id(1_700_000_000_000, 0)][base];
            for (i, b) in muts {
                k[i] = b;
            }
            k
        }),
        any::<[u8; 16]>(),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Insert(RaxKey, u32),
    Remove(RaxKey),
    /// Remove the existing key at this position (modulo len).
    RemoveNth(usize),
    Query(RaxKey),
    GetMut(RaxKey, u32),
    Clear,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (key_strategy(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => key_strategy().prop_map(Op::Remove),
        6 => any::<usize>().prop_map(Op::RemoveNth),
        6 => key_strategy().prop_map(Op::Query),
        1 => (key_strategy(), any::<u32>()).prop_map(|(k, v)| Op::GetMut(k, v)),
        1 => Just(Op::Clear),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn matches_btreemap(ops in prop::collection::vec(op_strategy(), 1..300)) {
      for inline in [false, true] {
        let mut rax: Rax<u32> = if inline { Rax::new_inlined() } else { Rax::new() };
        let mut model: BTreeMap<RaxKey, u32> = BTreeMap::new();
        for op in ops.clone() {
            match op {
                Op::Insert(k, v) => prop_assert_eq!(rax.insert(k, v), model.insert(k, v)),
                Op::Remove(k) => prop_assert_eq!(rax.remove(&k), model.remove(&k)),
                Op::RemoveNth(i) => {
                    if let Some(&k) = model.keys().nth(i % model.len().max(1)) {
                        prop_assert_eq!(rax.remove(&k), model.remove(&k));
                    }
                }
                Op::Query(k) => {
                    check_queries(&rax, &model, &k);
                    // Also probe the neighbours of an existing key.
                    if let Some((&e, _)) = model.range(k..).next() {
                        check_queries(&rax, &model, &e);
                        let n = u128::from_be_bytes(e);
                        check_queries(&rax, &model, &n.wrapping_add(1).to_be_bytes());
                        check_queries(&rax, &model, &n.wrapping_sub(1).to_be_bytes());
                    }
                }
                Op::GetMut(k, v) => {
                    match (rax.get_mut(&k), model.get_mut(&k)) {
                        (Some(a), Some(b)) => { *a = v; *b = v; }
                        (None, None) => {}
                        (a, b) => prop_assert!(false, "get_mut {:?} vs {:?}", a, b),
                    }
                }
                Op::Clear => { rax.clear(); model.clear(); }
            }
            check_whole(&rax, &model);
        }
      }
    }

    /// Append-only inserts (like XADD) with removals anywhere.
    #[test]
    fn stream_like(steps in prop::collection::vec((0u8..10, 0u64..1 << 20, any::<usize>()), 1..400)) {
        let mut rax: Rax<u32> = Rax::new();
        let mut model: BTreeMap<RaxKey, u32> = BTreeMap::new();
        let (mut ms, mut seq) = (1_700_000_000_000u64, 0u64);
        for (i, (kind, gap, pick)) in steps.into_iter().enumerate() {
            match kind {
                0..=2 => seq += 1,
                // Every step moves the ID on, as XADD does: a zero gap once made the
                // same key twice, which the map rightly answered as a replacement.
                3 => seq += 1 + gap,
                4 => { ms += 1 + gap % 3; seq = 0; }
                5 => { ms += 1 + gap; seq = gap & 0xff; }
                _ => {
                    if !model.is_empty() {
                        let k = *model.keys().nth(pick % model.len()).expect("in range");
                        prop_assert_eq!(rax.remove(&k), model.remove(&k));
                        check_whole(&rax, &model);
                        continue;
                    }
                    seq += 1;
                }
            }
            let k = id(ms, seq);
            prop_assert_eq!(rax.insert(k, i as u32), None);
            model.insert(k, i as u32);
            check_whole(&rax, &model);
        }
    }
}

proptest! {
    #[test]
    fn fan_matches_vecs(ops in prop::collection::vec((any::<u8>(), any::<u32>(), any::<bool>(), any::<usize>()), 1..600)) {
        let mut fan = Fan::two(10, 1, 20, 2);
        let (mut edges, mut kids) = (vec![10u8, 20], vec![1u32, 2]);
        for (e, k, add, pick) in ops {
            if add || edges.len() <= 2 {
                if let Err(p) = edges.binary_search(&e) {
                    fan.insert(p, e, k);
                    edges.insert(p, e);
                    kids.insert(p, k);
                }
            } else {
                let p = pick % edges.len();
                fan.remove(p);
                edges.remove(p);
                kids.remove(p);
            }
            prop_assert_eq!(fan.edges(), &edges[..]);
            let got: Vec<u32> = (0..fan.len()).map(|i| fan.kid(i)).collect();
            prop_assert_eq!(got, kids.clone());
        }
    }
}

#[test]
fn node_is_compact() {
    // Chains and branches fit in 24 bytes; with a value of up to 24
    // bytes a slot is 32 bytes.
    assert!(std::mem::size_of::<Node<u64>>() <= 32);
    assert!(std::mem::size_of::<Node<Vec<u8>>>() <= 32);
}

#[test]
fn empty_tree() {
    let mut rax: Rax<u8> = Rax::default();
    assert_eq!(rax.node_count(), 1);
    assert!(rax.is_empty());
    assert_eq!(rax.first(), None);
    assert_eq!(rax.last(), None);
    assert_eq!(rax.last_mut(), None);
    for k in [[0u8; 16], [0xff; 16], id(5, 5)] {
        assert_eq!(rax.get(&k), None);
        assert_eq!(rax.seek_ge(&k), None);
        assert_eq!(rax.seek_le(&k), None);
        assert_eq!(rax.next_after(&k), None);
        assert_eq!(rax.prev_before(&k), None);
        assert_eq!(rax.remove(&k), None);
    }
    assert_eq!(rax.iter().count(), 0);
    rax.validate().unwrap();
}

#[test]
fn zero_and_max_keys() {
    let (lo, hi) = ([0u8; 16], [0xffu8; 16]);
    let mut rax = Rax::new();
    assert_eq!(rax.insert(lo, 1), None);
    assert_eq!(rax.node_count(), 2);
    assert_eq!(rax.seek_ge(&hi), None);
    assert_eq!(rax.seek_le(&hi), Some((lo, &1)));
    assert_eq!(rax.prev_before(&lo), None);
    assert_eq!(rax.next_after(&lo), None);
    assert_eq!(rax.insert(hi, 2), None);
    // Root branch {00, ff}, a 15-byte chain under each, two leaves.
    assert_eq!(rax.node_count(), 5);
    rax.validate().unwrap();
    assert_eq!(rax.insert(lo, 3), Some(1));
    assert_eq!(rax.node_count(), 5);
    assert_eq!(rax.first(), Some((lo, &3)));
    assert_eq!(rax.last(), Some((hi, &2)));
    assert_eq!(rax.last_mut(), Some(&mut 2));
    assert_eq!(rax.seek_ge(&lo), Some((lo, &3)));
    assert_eq!(rax.next_after(&lo), Some((hi, &2)));
    assert_eq!(rax.prev_before(&hi), Some((lo, &3)));
    assert_eq!(rax.seek_le(&hi), Some((hi, &2)));
    let mid = id(1 << 63, 0);
    assert_eq!(rax.seek_ge(&mid), Some((hi, &2)));
    assert_eq!(rax.seek_le(&mid), Some((lo, &3)));
    assert_eq!(rax.remove(&hi), Some(2));
    assert_eq!(rax.node_count(), 2);
    rax.validate().unwrap();
    assert_eq!(rax.remove(&lo), Some(3));
    assert_eq!(rax.node_count(), 1);
    assert!(rax.is_empty());
    rax.validate().unwrap();
}

#[test]
fn keys_differing_in_last_byte_only() {
    let mut rax = Rax::new();
    let base = id(1_700_000_000_000, 0);
    for b in (0..=255u8).rev() {
        let mut k = base;
        k[15] = b;
        rax.insert(k, b);
    }
    // 15-byte chain at the root, one branch of 256, 256 leaves.
    assert_eq!(rax.node_count(), 1 + 1 + 256);
    rax.validate().unwrap();
    let all: Vec<u8> = rax
        .iter()
        .map(|(k, v)| {
            assert_eq!(k[15], *v);
            *v
        })
        .collect();
    assert_eq!(all, (0..=255).collect::<Vec<u8>>());
    let mut k = base;
    k[15] = 100;
    assert_eq!(rax.next_after(&k).map(|(_, v)| *v), Some(101));
    assert_eq!(rax.prev_before(&k).map(|(_, v)| *v), Some(99));
    let mut below = base;
    below[14] = 0xff; // greater prefix than every key
    assert_eq!(rax.seek_le(&below).map(|(_, v)| *v), Some(255));
    assert_eq!(rax.seek_ge(&below), None);
    for b in 0..=253u8 {
        k[15] = b;
        assert_eq!(rax.remove(&k), Some(b));
    }
    assert_eq!(rax.node_count(), 4);
    k[15] = 254;
    rax.remove(&k);
    // The branch folded back into the root chain.
    assert_eq!(rax.node_count(), 2);
    rax.validate().unwrap();
}

#[test]
fn keys_differing_in_first_byte_only() {
    let mut rax = Rax::new();
    for b in 0..=255u8 {
        let mut k = [0x5a; 16];
        k[0] = b;
        rax.insert(k, b);
    }
    // Root branch of 256, a 15-byte chain and a leaf under each edge.
    assert_eq!(rax.node_count(), 1 + 2 * 256);
    rax.validate().unwrap();
    let mut probe = [0u8; 16];
    probe[0] = 7;
    assert_eq!(rax.seek_ge(&probe).map(|(_, v)| *v), Some(7));
    assert_eq!(rax.seek_le(&probe).map(|(_, v)| *v), Some(6));
    probe[1] = 0xff;
    assert_eq!(rax.seek_ge(&probe).map(|(_, v)| *v), Some(8));
    assert_eq!(rax.seek_le(&probe).map(|(_, v)| *v), Some(7));
    for b in 1..=255u8 {
        let mut k = [0x5a; 16];
        k[0] = b;
        assert_eq!(rax.remove(&k), Some(b));
    }
    // Root folded into one 16-byte chain.
    assert_eq!(rax.node_count(), 2);
    assert_eq!(
        rax.first(),
        Some((
            [
                0, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
                0x5a, 0x5a
            ],
            &0
        ))
    );
    rax.validate().unwrap();
}

#[test]
fn split_shapes() {
    let mut rax = Rax::new();
    rax.insert(id(0x0102_0304_0506_0708, 0x1112_1314_1516_1718), 0);
    assert_eq!(rax.node_count(), 2);
    // Mismatch in the middle of the chain: prefix chain, branch, postfix
    // chain, new chain and leaf.
    rax.insert(id(0x0102_0304_0506_0708, 0x1112_1399_0000_0000), 1);
    assert_eq!(rax.node_count(), 2 + 4);
    // Mismatch at the first byte of a chain: the branch replaces it.
    rax.insert(id(0x0102_0304_0506_0708, 0x1112_1314_1516_1799), 2);
    rax.validate().unwrap();
    assert_eq!(
        rax.node_count(),
        canonical_nodes(rax.iter().map(|(k, _)| k).collect::<Vec<_>>().iter())
    );
    // Remove the middle key: the branch it hung from folds back.
    rax.remove(&id(0x0102_0304_0506_0708, 0x1112_1399_0000_0000));
    rax.validate().unwrap();
    assert_eq!(rax.node_count(), 4);
}

#[test]
fn clone_debug_clear() {
    let mut rax = Rax::new();
    for s in 0..10 {
        rax.insert(id(7, s), s);
    }
    let copy = rax.clone();
    rax.clear();
    assert!(rax.is_empty());
    assert_eq!(rax.node_count(), 1);
    rax.validate().unwrap();
    copy.validate().unwrap();
    assert_eq!(copy.len(), 10);
    assert_eq!(copy.get(&id(7, 3)), Some(&3));
    let text = format!("{copy:?}");
    assert!(
        text.starts_with("Rax { len: 10, node_count: 12, entries: {7-0: 0, 7-1: 1"),
        "{text}"
    );
    rax.insert(id(1, 1), 9);
    assert_eq!(rax.node_count(), 2);
    rax.validate().unwrap();
}

#[test]
fn get_mut_updates() {
    let mut rax = Rax::new();
    rax.insert(id(1, 2), String::from("a"));
    rax.get_mut(&id(1, 2)).unwrap().push('b');
    assert_eq!(rax.get(&id(1, 2)).map(String::as_str), Some("ab"));
    assert!(rax.get_mut(&id(1, 3)).is_none());
}

const RECORDED: &str = include_str!("recorded_8_2.log");

/// Recorded from redis-server 8.8 (leaves inlined).
const RECORDED_INLINE: &str = include_str!("recorded_8_8.log");
