//! DUMP / RESTORE round trips, the listpack sizes of written nodes, and damaged payloads.
//! (`tests/test_rdb_dump.py` checks both directions against redis-server 8.8.)

use super::*;
use crate::base::config::Config;
use crate::command::reply::Reply;
use crate::store::Store;
use proptest::prelude::*;

fn run(s: &Store, cmd: &[&str]) -> Reply {
    let parts: Vec<&[u8]> = cmd.iter().map(|p| p.as_bytes()).collect();
    s.execute(&parts)
}

fn store() -> Store {
    let s = Store::default();
    s.set_clock(Some(1_700_000_000_000));
    s.config_set("stream-node-max-entries", "4").unwrap();
    s
}

/// A stream with several nodes, tombstones (first, middle and last entries of nodes),
/// groups with pending, claimed and NACKed entries, and IDMP producers.
fn rich(s: &Store) {
    for i in 1..=14 {
        let id = format!("{i}-1");
        let v = "v".repeat(i * 7);
        if i % 4 == 0 {
            run(s, &["XADD", "s", &id, "other", &v]);
        } else {
            run(s, &["XADD", "s", &id, "f", &v, "g", &i.to_string()]);
        }
    }
    run(s, &["XDEL", "s", "1-1", "6-1", "8-1", "13-1"]);
    run(s, &["XGROUP", "CREATE", "s", "g1", "0"]);
    run(s, &["XGROUP", "CREATE", "s", "g2", "5-0"]);
    run(
        s,
        &[
            "XREADGROUP",
            "GROUP",
            "g1",
            "a",
            "COUNT",
            "4",
            "STREAMS",
            "s",
            ">",
        ],
    );
    run(
        s,
        &[
            "XREADGROUP",
            "GROUP",
            "g1",
            "b",
            "COUNT",
            "3",
            "STREAMS",
            "s",
            ">",
        ],
    );
    run(s, &["XNACK", "s", "g1", "FAIL", "IDS", "2", "3-1", "2-1"]);
    run(
        s,
        &[
            "XREADGROUP",
            "GROUP",
            "g2",
            "c",
            "COUNT",
            "2",
            "STREAMS",
            "s",
            ">",
        ],
    );
    run(
        s,
        &["XCFGSET", "s", "IDMP-DURATION", "300", "IDMP-MAXSIZE", "20"],
    );
    run(s, &["XADD", "s", "IDMP", "p", "i1", "*", "f", "x"]);
    run(s, &["XADD", "s", "IDMP", "q", "i2", "*", "f", "y"]);
    run(s, &["XADD", "s", "IDMP", "p", "i1", "*", "f", "x"]);
}

const VIEWS: &[&[&str]] = &[
    &["XINFO", "STREAM", "KEY", "FULL"],
    &["XINFO", "STREAM", "KEY"],
    &["XRANGE", "KEY", "-", "+"],
    &["XPENDING", "KEY", "g1", "-", "+", "100"],
];

fn views(s: &Store, key: &str) -> Vec<Reply> {
    VIEWS
        .iter()
        .map(|v| {
            let args: Vec<&str> = v
                .iter()
                .map(|a| if *a == "KEY" { key } else { a })
                .collect();
            run(s, &args)
        })
        .collect()
}

fn bulk(r: Reply) -> Vec<u8> {
    match r {
        Reply::Bulk(b) => b,
        other => panic!("expected a bulk reply, got {other:?}"),
    }
}

#[test]
fn dump_restore_round_trips_a_rich_stream() {
    let s = store();
    rich(&s);
    let payload = bulk(run(&s, &["DUMP", "s"]));
    let p = String::from_utf8_lossy(&payload).into_owned();
    // RESTORE takes binary arguments: go through execute with raw bytes.
    let args: Vec<&[u8]> = vec![b"RESTORE", b"copy", b"0", &payload];
    assert_eq!(s.execute(&args), Reply::ok(), "{p:?}");
    assert_eq!(views(&s, "copy"), views(&s, "s"));
    s.validate().unwrap();
    // Appending after the restore splits nodes at the same entries.
    for key in ["s", "copy"] {
        for i in 0..6 {
            run(&s, &["XADD", key, &format!("100-{i}"), "f", "vvvvvvvvvv"]);
        }
    }
    assert_eq!(views(&s, "copy"), views(&s, "s"));
}

#[test]
fn written_nodes_have_redis_listpack_sizes() {
    let s = store();
    rich(&s);
    s.with_keyspace(|ks| {
        let Some(crate::keyspace::db::KeyEntry {
            value: Value::Stream(st),
            ..
        }) = ks.dbs[0].get(b"s")
        else {
            panic!("stream expected")
        };
        let mut with_tombstones = 0;
        for n in st.nodes() {
            let lp = stream::node_listpack(n);
            assert_eq!(lp.len() as u64, n.lp_bytes(), "node {}", n.master_id());
            with_tombstones += usize::from(n.deleted() > 0);
            let back = stream::read_node(n.master_id(), &lp).unwrap();
            assert_eq!(back.lp_bytes(), n.lp_bytes());
        }
        assert!(with_tombstones >= 2);
    });
}

#[test]
fn padding_reaches_every_deficit() {
    for pad in 0..600u64 {
        let master = crate::structures::id::StreamId::new(1, 0);
        let mut zero = listpack::Builder::default();
        let base = stream_tombstone_len(&mut zero, master, 0);
        let mut b = listpack::Builder::default();
        let got = stream_tombstone_len(&mut b, master, pad);
        assert_eq!(got as u64, base as u64 + pad, "pad {pad}");
        listpack::decode(&b.finish()).unwrap();
    }
}

fn stream_tombstone_len(
    b: &mut listpack::Builder,
    master: crate::structures::id::StreamId,
    pad: u64,
) -> usize {
    stream::tombstone_for_tests(b, master, crate::structures::id::StreamId::new(2, 5), pad)
}

#[test]
fn strings_and_errors() {
    let s = store();
    run(&s, &["SET", "k", "12345"]);
    let payload = bulk(run(&s, &["DUMP", "k"]));
    assert_eq!(payload[0], TYPE_STRING);
    let restore = |key: &[u8], p: &[u8], extra: &[&[u8]]| {
        let mut a: Vec<&[u8]> = vec![b"RESTORE", key, b"0", p];
        a.extend_from_slice(extra);
        s.execute(&a)
    };
    assert_eq!(restore(b"k2", &payload, &[]), Reply::ok());
    assert_eq!(run(&s, &["GET", "k2"]), Reply::bulk(b"12345"));
    assert_eq!(
        restore(b"k2", &payload, &[]).error_line(),
        Some("BUSYKEY Target key name already exists.")
    );
    let mut bad = payload.clone();
    bad[1] ^= 0xff;
    assert_eq!(
        restore(b"k3", &bad, &[]).error_line(),
        Some("ERR DUMP payload version or checksum are wrong")
    );
    let n = bad.len();
    bad[n - 8..].fill(0);
    bad[1] = 0x81; // a 64-bit length in a 1-byte string body
    assert_eq!(
        restore(b"k3", &bad, &[]).error_line(),
        Some("ERR Bad data format")
    );
    // A hash payload (RDB type 16, an empty listpack) is valid Redis data xstreams
    // cannot store.
    let mut hash = vec![16u8, 7, 7, 0, 0, 0, 0, 0, 255];
    hash.extend_from_slice(&RDB_VERSION.to_le_bytes());
    hash.extend_from_slice(&[0; 8]);
    assert!(matches!(
        restore_payload(&hash, 0, &Config::default()),
        Err(RestoreError::Unsupported("hash"))
    ));
    s.validate().unwrap();
}

/// The DUMP payload Redis <= 6.2 wrote for the stream at `key` (RDB type 15, RDB version
/// 9): no first ID, max deleted ID, entries added or group read counters, one time per
/// consumer, no NACK zone, no IDMP.
fn legacy_payload(s: &Store, key: &str) -> Vec<u8> {
    let now = 1_700_000_000_000;
    let st = match restore_payload(&bulk(run(s, &["DUMP", key])), now, &Config::default()) {
        Ok(Value::Stream(st)) => st,
        _ => panic!("{key} is not a stream"),
    };
    let mut w = Writer::default();
    w.u8(stream::TYPE_STREAM_LISTPACKS);
    w.length(st.node_count() as u64);
    for n in st.nodes() {
        w.string(&n.master_id().to_key());
        w.string(&stream::node_listpack(n));
    }
    w.length(st.length);
    w.length(st.last_id.ms);
    w.length(st.last_id.seq);
    w.length(st.groups.len() as u64);
    for (name, _, cg) in st.groups.iter() {
        w.string(name);
        w.length(cg.last_id.ms);
        w.length(cg.last_id.seq);
        w.length(cg.pel_len() as u64);
        for id in cg.pending_ids() {
            let r = cg.record(cg.pel_idx(&id).expect("pending id"));
            w.raw_id(id);
            w.millis(r.delivery_time);
            w.length(r.delivery_count);
        }
        w.length(cg.consumer_count() as u64);
        for (_, c) in cg.consumers() {
            w.string(&c.name);
            w.millis(c.seen_time);
            w.length(c.pel.len() as u64);
            for id in &c.pel {
                w.raw_id(*id);
            }
        }
    }
    w.buf.extend_from_slice(&9u16.to_le_bytes());
    let crc = codec::crc64(&w.buf);
    w.buf.extend_from_slice(&crc.to_le_bytes());
    w.buf
}

fn map_field(m: &Reply, name: &str) -> Reply {
    match m {
        Reply::Map(kv) => kv
            .iter()
            .find(|(k, _)| *k == Reply::bulk(name.as_bytes()))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no {name} in {m:?}")),
        other => panic!("expected a map, got {other:?}"),
    }
}

/// Streams saved before 7.0 carry no group read counters: as redis-server does on load,
/// entries added is the length and each group's counter is estimated from the loaded
/// stream (exact at the first and last entries, 0 before the first, unknown in between).
/// redis-server 8.8 answers the same XINFO for this payload (checked by hand).
#[test]
fn legacy_stream_payload_estimates_group_counters() {
    let s = store();
    for i in 1..=6 {
        run(&s, &["XADD", "x", &format!("{i}-0"), "data", "v"]);
    }
    run(&s, &["XDEL", "x", "3-0"]);
    for (g, at) in [
        ("before", "0"),
        ("first", "4-0"),
        ("middle", "4-0"),
        ("last", "$"),
    ] {
        run(&s, &["XGROUP", "CREATE", "x", g, at]);
    }
    run(
        &s,
        &[
            "XREADGROUP",
            "GROUP",
            "middle",
            "c",
            "COUNT",
            "1",
            "STREAMS",
            "x",
            ">",
        ],
    );
    run(&s, &["XTRIM", "x", "MAXLEN", "=", "3"]);
    let payload = legacy_payload(&s, "x");
    let args: Vec<&[u8]> = vec![b"RESTORE", b"old", b"0", &payload];
    assert_eq!(s.execute(&args), Reply::ok());
    let info = run(&s, &["XINFO", "STREAM", "old"]);
    assert_eq!(map_field(&info, "entries-added"), Reply::Int(3));
    assert_eq!(
        map_field(&info, "max-deleted-entry-id"),
        Reply::bulk(b"0-0")
    );
    assert_eq!(
        map_field(&info, "recorded-first-entry-id"),
        Reply::bulk(b"4-0")
    );
    let groups = match run(&s, &["XINFO", "GROUPS", "old"]) {
        Reply::Array(gs) => gs,
        other => panic!("XINFO GROUPS: {other:?}"),
    };
    let counters: Vec<(Reply, Reply, Reply)> = groups
        .iter()
        .map(|g| {
            (
                map_field(g, "name"),
                map_field(g, "entries-read"),
                map_field(g, "lag"),
            )
        })
        .collect();
    let b = |n: &str| Reply::bulk(n.as_bytes());
    assert_eq!(
        counters,
        vec![
            (b("before"), Reply::Int(0), Reply::Int(3)),
            (b("first"), Reply::Int(1), Reply::Int(2)),
            (b("last"), Reply::Int(3), Reply::Int(0)),
            (b("middle"), Reply::Nil, Reply::Nil),
        ]
    );
    s.validate().unwrap();
}

/// An empty stream from a pre-7.0 payload: redis-server 8.8 records the maximal ID as its
/// first ID (its first-entry lookup finds nothing), shows it in XINFO and dumps it as it
/// is; that dump restores, and the next XADD records its own ID.
#[test]
fn legacy_empty_stream_records_the_maximal_first_id() {
    let s = store();
    run(&s, &["XADD", "e", "5-0", "f", "v"]);
    run(&s, &["XDEL", "e", "5-0"]);
    let payload = legacy_payload(&s, "e");
    let args: Vec<&[u8]> = vec![b"RESTORE", b"old", b"0", &payload];
    assert_eq!(s.execute(&args), Reply::ok());
    let info = run(&s, &["XINFO", "STREAM", "old"]);
    let max = format!("{}-{}", u64::MAX, u64::MAX);
    assert_eq!(
        map_field(&info, "recorded-first-entry-id"),
        Reply::bulk(max.as_bytes())
    );
    assert_eq!(map_field(&info, "last-generated-id"), Reply::bulk(b"5-0"));
    assert_eq!(map_field(&info, "entries-added"), Reply::Int(0));
    let dump = bulk(run(&s, &["DUMP", "old"]));
    let args: Vec<&[u8]> = vec![b"RESTORE", b"again", b"0", &dump];
    assert_eq!(s.execute(&args), Reply::ok());
    // (The last view, XPENDING of a group, is an error naming the key.)
    assert_eq!(views(&s, "again")[..3], views(&s, "old")[..3]);
    s.validate().unwrap();
    run(&s, &["XADD", "again", "7-0", "f", "v"]);
    let info = run(&s, &["XINFO", "STREAM", "again"]);
    assert_eq!(
        map_field(&info, "recorded-first-entry-id"),
        Reply::bulk(b"7-0")
    );
    s.validate().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
    /// Damaged payloads (checksum disabled so the body is parsed) decode to an error or
    /// to a stream that passes validation; never a panic.
    #[test]
    fn damaged_payloads_never_panic(
        edits in proptest::collection::vec((any::<u16>(), any::<u8>(), 0u8..3), 1..6)
    ) {
        thread_local! {
            static PAYLOAD: Vec<u8> = {
                let s = store();
                rich(&s);
                bulk(run(&s, &["DUMP", "s"]))
            };
        }
        let mut body = PAYLOAD.with(|p| p[..p.len() - 8].to_vec());
        for (pos, byte, op) in edits {
            let i = usize::from(pos) % (body.len() - 2);
            match op {
                0 => body[i] = byte,
                1 => { body.remove(i); }
                _ => body.insert(i, byte),
            }
        }
        body.extend_from_slice(&[0; 8]);
        if let Ok(Value::Stream(st)) = restore_payload(&body, 1_700_000_000_000, &Config::default()) {
            prop_assert!(st.validate().is_ok());
        }
    }
}

#[test]
fn rdb_file_round_trip_with_expiry_and_databases() {
    let s = store();
    rich(&s);
    run(&s, &["SET", "str", "hello"]);
    run(&s, &["SET", "ttl", "v", "PX", "5000"]);
    let now = s.now_ms();
    let bytes = s.with_keyspace(|ks| {
        ks.dbs[7].set(b"far", Value::Str(b"away".to_vec()), None);
        file::write_file(ks, now)
    });
    assert_eq!(&bytes[..9], b"REDIS0014");
    let mut seen = Vec::new();
    let summary = file::read_file(&bytes, |k| {
        let v = restore_payload(&file::payload_of(k.ty, k.body), now, &Config::default())
            .map_err(|e| codec::Malformed::new(format!("{e:?}")))?;
        seen.push((k.db, k.key.clone(), k.expire_ms, v.type_name()));
        Ok(())
    })
    .unwrap();
    assert_eq!(summary.version, 14);
    assert!(summary.skipped.is_empty());
    seen.sort();
    assert_eq!(
        seen,
        vec![
            (0, b"s".to_vec(), None, "stream"),
            (0, b"str".to_vec(), None, "string"),
            (0, b"ttl".to_vec(), Some(now + 5000), "string"),
            (7, b"far".to_vec(), None, "string"),
        ]
    );
    // Any damage is caught by the file checksum or the structure.
    for i in [9usize, 30, bytes.len() / 2, bytes.len() - 9] {
        let mut bad = bytes.clone();
        bad[i] ^= 0x5a;
        assert!(file::read_file(&bad, |_| Ok(())).is_err(), "byte {i}");
    }
    assert!(file::read_file(&bytes[..bytes.len() - 3], |_| Ok(())).is_err());
}
