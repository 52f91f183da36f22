//! Stream bugs redis-server 8.8 has that upstream fixed (or that lose data or leak memory
//! while the report is open): xstreams behaves as the fixed version. Each test is named
//! after its entry in docs/differences.md, states 8.8's answer, and checks ours.

use xstreams_core::{Reply, Store};

fn run(s: &Store, cmd: &str) -> Reply {
    let args: Vec<&[u8]> = cmd.split(' ').map(|p| p.as_bytes()).collect();
    s.execute(&args)
}

fn run_all(s: &Store, cmds: &[&str]) {
    for c in cmds {
        let r = run(s, c);
        assert!(!r.is_error(), "{c}: {r:?}");
    }
}

fn store(node_max_entries: &str) -> Store {
    let s = Store::default();
    s.set_clock(Some(1_700_000_000_000));
    s.config_set("stream-node-max-entries", node_max_entries)
        .unwrap();
    s
}

/// A field of `XINFO STREAM key` (RESP2: a flat array of names and values).
fn info(s: &Store, key: &str, field: &str) -> Reply {
    match run(s, &format!("XINFO STREAM {key}")) {
        Reply::Array(v) => v
            .chunks(2)
            .find(|p| p[0] == Reply::Bulk(field.as_bytes().to_vec()))
            .map(|p| p[1].clone())
            .unwrap_or_else(|| panic!("no {field}")),
        Reply::Map(m) => m
            .into_iter()
            .find(|(k, _)| *k == Reply::Bulk(field.as_bytes().to_vec()))
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no {field}")),
        other => panic!("{other:?}"),
    }
}

/// DUMP `key`, RESTORE it as `copy`, and check both hold the same entries.
fn dump_restores(s: &Store, key: &str) {
    let payload = match run(s, &format!("DUMP {key}")) {
        Reply::Bulk(b) => b,
        other => panic!("DUMP {key}: {other:?}"),
    };
    let args: Vec<&[u8]> = vec![b"RESTORE", b"copy", b"0", &payload, b"REPLACE"];
    assert_eq!(s.execute(&args), Reply::ok());
    assert_eq!(
        run(s, "XRANGE copy - +"),
        run(s, &format!("XRANGE {key} - +"))
    );
    assert_eq!(info(s, "copy", "length"), info(s, key, "length"));
}

/// trim-empty-node (issue 47's reproducer; redis/redis#15808, fixed by PR #15815). 8.8:
/// XTRIM returns 5 and keeps the node [1-0..5-0 deleted by the trim, 11-0..15-0 deleted
/// by XDEL] with no live entry (radix-tree-keys 1); SAVE then writes a file 8.8 refuses
/// ("Stream listpack bad entry count") and DUMP a payload RESTORE refuses. Ours: the node
/// goes, radix-tree-keys 0, DUMP restores.
#[test]
fn trim_empty_node_issue_reproducer() {
    let s = store("100");
    for ms in (1..=5).chain(11..=15) {
        run_all(&s, &[&format!("XADD s {ms}-0 f v")]);
    }
    assert_eq!(run(&s, "XDEL s 11-0 12-0 13-0 14-0 15-0"), Reply::Int(5));
    assert_eq!(run(&s, "XTRIM s MINID 11-0"), Reply::Int(5));
    assert_eq!(info(&s, "s", "radix-tree-keys"), Reply::Int(0));
    assert_eq!(info(&s, "s", "length"), Reply::Int(0));
    assert_eq!(
        info(&s, "s", "max-deleted-entry-id"),
        Reply::Bulk(b"15-0".to_vec())
    );
    run_all(&s, &["XADD other * f v"]);
    s.validate().unwrap();
    dump_restores(&s, "s");
    // The stream goes on as usual: the next entry starts a node of its own.
    run_all(&s, &["XADD s 16-0 f v"]);
    assert_eq!(info(&s, "s", "radix-tree-keys"), Reply::Int(1));
    s.validate().unwrap();
}

/// trim-empty-node, every way a trim can empty a node that a tombstone past the trim
/// point keeps from being removed whole: exact and `~` MINID, KEEPREF / DELREF / ACKED,
/// XADD's MINID, and a LIMIT that allows it.
#[test]
fn trim_empty_node_every_trim() {
    for trim in [
        "XTRIM s MINID 2-0",
        "XTRIM s MINID = 2-0",
        "XTRIM s MINID ~ 2-0 DELREF",
        "XTRIM s MINID ~ 2-0 ACKED",
        "XTRIM s MINID 2-0 DELREF",
        "XTRIM s MINID 2-0 ACKED",
        "XTRIM s MINID ~ 2-0 LIMIT 5 ACKED",
        "XADD s MINID 2-0 * f v",
    ] {
        // Nodes of two entries: XADD's new entry starts a node of its own.
        let s = store("2");
        run_all(
            &s,
            &["XADD s 1-0 f v", "XADD s 2-0 f v", "XDEL s 2-0", trim],
        );
        let keys = i64::from(trim.starts_with("XADD"));
        assert_eq!(info(&s, "s", "length"), Reply::Int(keys), "{trim}");
        // The emptied node went.
        assert_eq!(info(&s, "s", "radix-tree-keys"), Reply::Int(keys), "{trim}");
        s.validate().unwrap_or_else(|e| panic!("{trim}: {e}"));
        dump_restores(&s, "s");
    }
}

/// trim-empty-node: the walk goes on past a node removed whole, and stops at a node it
/// emptied that a later tombstone kept (the next node's entries are past MINID).
#[test]
fn trim_empty_node_walk_stops_after_a_partial_node() {
    let s = store("3");
    for ms in 1..=9 {
        run_all(&s, &[&format!("XADD s {ms}-0 f v")]);
    }
    // Nodes [1 2 3] [4 5 6] [7 8 9]; 6-0 deleted: MINID 6-0 removes the first node
    // whole, empties the second (its tombstone 6-0 is not below MINID) and stops.
    run_all(&s, &["XDEL s 6-0"]);
    assert_eq!(run(&s, "XTRIM s MINID 6-0"), Reply::Int(5));
    assert_eq!(info(&s, "s", "radix-tree-keys"), Reply::Int(1));
    let first = match run(&s, "XRANGE s - + COUNT 1") {
        Reply::Array(mut v) => v.remove(0),
        other => panic!("{other:?}"),
    };
    assert_eq!(info(&s, "s", "first-entry"), first);
    assert_eq!(run(&s, "XLEN s"), Reply::Int(3));
    s.validate().unwrap();
}

/// delref-tombstones (upstream PR #15581). 8.8: `XTRIM ... DELREF` skips the tombstones
/// an earlier KEEPREF delete left, so their PEL entries stay (XPENDING counts 2 here).
/// Ours: every entry the trim passes loses its references, tombstones included.
#[test]
fn delref_tombstones_lose_their_references() {
    let s = store("100");
    run_all(
        &s,
        &[
            "XADD s 1-0 f v",
            "XADD s 2-0 f v",
            "XADD s 3-0 f v",
            "XADD s 4-0 f v",
            "XGROUP CREATE s g 0",
            "XREADGROUP GROUP g c STREAMS s >",
            "XDEL s 2-0",
            "XDELEX s KEEPREF IDS 1 3-0",
        ],
    );
    match run(&s, "XPENDING s g") {
        Reply::Array(v) => assert_eq!(v[0], Reply::Int(4)),
        other => panic!("{other:?}"),
    }
    assert_eq!(run(&s, "XTRIM s MINID 4-0 DELREF"), Reply::Int(1));
    let pending = run(&s, "XPENDING s g");
    match &pending {
        Reply::Array(v) => assert_eq!(v[0], Reply::Int(1), "{pending:?}"),
        other => panic!("{other:?}"),
    }
    // Only 4-0 is still pending.
    match run(&s, "XPENDING s g - + 10") {
        Reply::Array(v) => {
            assert_eq!(v.len(), 1);
            match &v[0] {
                Reply::Array(e) => assert_eq!(e[0], Reply::Bulk(b"4-0".to_vec())),
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    s.validate().unwrap();
    // KEEPREF and ACKED leave the references of tombstones alone, as 8.8 does.
    for policy in ["KEEPREF", "ACKED"] {
        let s = store("100");
        run_all(
            &s,
            &[
                "XADD s 1-0 f v",
                "XADD s 2-0 f v",
                "XADD s 3-0 f v",
                "XGROUP CREATE s g 0",
                "XREADGROUP GROUP g c STREAMS s >",
                "XDEL s 2-0",
                "XACK s g 1-0",
                &format!("XTRIM s MINID 3-0 {policy}"),
            ],
        );
        match run(&s, "XPENDING s g") {
            Reply::Array(v) => assert_eq!(v[0], Reply::Int(2), "{policy}"),
            other => panic!("{other:?}"),
        }
        s.validate().unwrap();
    }
}

/// idmp-failed-producer (redis/redis#15840, open; the leak is fixed as the report
/// proposes: a failed XADD keeps no producer it created). 8.8: pids-tracked 1 after the
/// failed XADD, on a key its expiry never visits.
#[test]
fn idmp_failed_xadd_leaves_no_producer() {
    let s = store("100");
    run_all(
        &s,
        &["XADD s 18446744073709551615-18446744073709551615 f v"],
    );
    for cmd in ["XADD s IDMP p1 i1 * f v", "XADD s IDMPAUTO p2 * f v"] {
        match run(&s, cmd) {
            Reply::Error(e) => assert!(e.line().contains("exhausted"), "{e}"),
            other => panic!("{cmd}: {other:?}"),
        }
    }
    assert_eq!(info(&s, "s", "pids-tracked"), Reply::Int(0));
    s.validate().unwrap();
}
