//! Engine bugs found by the property/model tests, kept as minimal regression tests.
//! Each test states the command sequence, what redis-server 8.8 does (with the
//! t_stream.c / blocked.c reference) and what the engine did when the bug was found.
//! All of them are fixed; they stay as regression tests.

use std::time::Duration;

use xstreams_core::store::Step;
use xstreams_core::{Reply, Store};

fn args(cmd: &str) -> Vec<&[u8]> {
    cmd.split(' ').map(|p| p.as_bytes()).collect()
}

fn run(s: &Store, cmd: &str) -> Reply {
    s.execute(&args(cmd))
}

fn run_in(s: &Store, db: usize, cmd: &str) -> Reply {
    s.execute_in(db, 2, &args(cmd))
}

/// Run each command, asserting none fails.
fn run_all(s: &Store, cmds: &[&str]) {
    for c in cmds {
        let r = run(s, c);
        assert!(!r.is_error(), "{c}: {r:?}");
    }
}

/// The IDs `XRANGE key - +` lists, in its order.
fn range_ids(s: &Store, key: &str) -> Vec<Reply> {
    match run(s, &format!("XRANGE {key} - +")) {
        Reply::Array(v) => v
            .into_iter()
            .map(|e| match e {
                Reply::Array(mut p) => p.remove(0),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

/// The commands of BUG 6: XSETID moves the last ID back below a node, and entries are
/// appended into it below its master (node size 3).
const XSETID_BACK: [&str; 11] = [
    "XGROUP CREATE s0 g1 $ MKSTREAM",
    "XADD s0 0-1 a x",
    "XDEL s0 0-1",
    "XADD s0 100000000-0 a x",
    "XADD s0 100000000-2 a x",
    "XDEL s0 100000000-2",
    "XSETID s0 100000000-2 MAXDELETEDID 0-1",
    "XTRIM s0 MINID 100000000-2",
    "XSETID s0 0-1",
    "XADD s0 0-2 a x",
    "XADD s0 0-3 a x",
];

fn store() -> Store {
    let s = Store::default();
    s.set_clock(Some(1_700_000_000_000));
    s
}

fn map_get<'a>(r: &'a Reply, key: &str) -> Option<&'a Reply> {
    match r {
        Reply::Map(m) => m
            .iter()
            .find(|(k, _)| *k == Reply::Bulk(key.as_bytes().to_vec()))
            .map(|(_, v)| v),
        _ => None,
    }
}

/// BUG 1. A blocked plain XREAD is answered with WRONGTYPE when its stream key is
/// overwritten by a non-stream value.
///
/// ```text
/// XADD s 5-0 a 1
/// (client A) XREAD BLOCK 0 STREAMS s $      -> blocks
/// SET s x
/// ```
/// redis-server: client A stays blocked. XREAD blocks with `unblock_on_nokey = 0`
/// (`blockForKeys(c, BLOCKED_STREAM, ..., xreadgroup)` in xreadCommand); the overwrite
/// calls `signalDeletedKeyAsReady` (db.c dbSetValue), which only queues keys that have
/// `unblock_on_nokey` clients, and `handleClientsBlockedOnKey` (blocked.c) only
/// unblocks a BLOCKED_STREAM client if the key still holds a stream. After `DEL s`
/// and `XADD s 6-0 b 2` client A receives `[[s, [[6-0, [b, 2]]]]]`.
/// Engine: client A immediately gets `WRONGTYPE Operation against a key holding the
/// wrong kind of value` (the SET signals the key and the re-executed XREAD fails).
#[test]
fn blocked_xread_survives_type_change() {
    let s = store();
    run(&s, "XADD s 5-0 a 1");
    let Step::Blocked(call) = s.start(0, 2, &args("XREAD BLOCK 0 STREAMS s $")) else {
        panic!("XREAD should block")
    };
    run(&s, "SET s x");
    let call = match s.wait(call, Some(Duration::from_millis(20))) {
        Step::Done(r) => panic!("XREAD must stay blocked after SET, got {r:?}"),
        Step::Blocked(c) => c,
    };
    run(&s, "DEL s");
    run(&s, "XADD s 6-0 b 2");
    match s.wait(call, Some(Duration::from_millis(200))) {
        Step::Done(r) => assert_eq!(
            r,
            Reply::Array(vec![Reply::Array(vec![
                Reply::bulk(b"s"),
                Reply::Array(vec![Reply::Array(vec![
                    Reply::bulk(b"6-0"),
                    Reply::Array(vec![Reply::bulk(b"b"), Reply::bulk(b"2")])
                ])])
            ])])
        ),
        Step::Blocked(c) => {
            s.cancel(c);
            panic!("XREAD should have been served by the new stream");
        }
    }
}

/// BUG 2. Any FLUSHDB/FLUSHALL wakes and re-executes every blocked call of every
/// database, so a blocked XREADGROUP in db 0 refreshes its consumer's seen-time when
/// db 1 is flushed.
///
/// ```text
/// XGROUP CREATE s g $ MKSTREAM                  (db 0)
/// (client A) XREADGROUP GROUP g c BLOCK 0 STREAMS s >   -> blocks, seen-time = T
/// ... 5 s pass ...
/// FLUSHDB                                       (db 1)
/// XINFO CONSUMERS s g                           (db 0)
/// ```
/// redis-server: `idle` is 5000: FLUSHDB only signals the keys of the flushed database
/// (`signalFlushedDb(dbid)` -> `scanDatabaseForDeletedKeys(&server.db[dbid])`, db.c),
/// so client A is not re-executed and `consumer->seen_time` is untouched.
/// Engine: `idle` is 0 (the flush bumps a store-wide sequence that wakes every blocked
/// call, which re-runs XREADGROUP and sets seen-time again).
#[test]
fn flushdb_other_db_does_not_touch_blocked_readers() {
    let s = store();
    run_in(&s, 0, "XGROUP CREATE s g $ MKSTREAM");
    let Step::Blocked(call) = s.start(0, 2, &args("XREADGROUP GROUP g c BLOCK 0 STREAMS s >"))
    else {
        panic!("XREADGROUP should block")
    };
    // Move the pinned clock without the store's wake-up (as real time passes).
    s.with_keyspace(|ks| ks.clock.set(Some(1_700_000_005_000)));
    run_in(&s, 1, "FLUSHDB");
    let call = match s.wait(call, Some(Duration::from_millis(20))) {
        Step::Done(r) => panic!("unexpected completion {r:?}"),
        Step::Blocked(c) => c,
    };
    let info = run_in(&s, 0, "XINFO CONSUMERS s g");
    s.cancel(call);
    let Reply::Array(cs) = &info else {
        panic!("{info:?}")
    };
    assert_eq!(map_get(&cs[0], "idle"), Some(&Reply::Int(5000)), "{info:?}");
}

/// BUG 3. `entries_read` overflows: arithmetic overflow panic in XREADGROUP (debug
/// builds; release builds wrap silently). Minimal sequence found by the fuzzer:
///
/// ```text
/// XADD s 1-1 a 1
/// XSETID s 1-1 ENTRIESADDED 9223372036854775807
/// XGROUP CREATE s g 0
/// XREADGROUP GROUP g c STREAMS s >     (entries_read := estimate = 9223372036854775807)
/// XADD s 2-1 a 1                       (entries_added saturates, as in Redis)
/// XREADGROUP GROUP g c STREAMS s >     (entries_read + 1 overflows)
/// ```
/// and the variant with an explicit ENTRIESREAD:
///
/// ```text
/// XADD s 1-1 a 1
/// XSETID s 1-1 ENTRIESADDED 9223372036854775807
/// XGROUP CREATE s g 1-1 ENTRIESREAD 9223372036854775807
/// XADD s 2-1 a 1
/// XREADGROUP GROUP g c STREAMS s >
/// ```
/// redis-server: replies `[[s, [[2-1, [a, 1]]]]]` (`group->entries_read++` in
/// streamReplyWithRange, t_stream.c, is signed overflow; the server does not crash).
/// Engine: `attempt to add with overflow` at command/xread.rs (`er += 1`), the
/// command panics half-way through (consumer created, nothing delivered).
#[test]
fn entries_read_overflow_after_xsetid_does_not_panic() {
    let s = store();
    run(&s, "XADD s 1-1 a 1");
    run(&s, "XSETID s 1-1 ENTRIESADDED 9223372036854775807");
    run(&s, "XGROUP CREATE s g 0");
    run(&s, "XREADGROUP GROUP g c STREAMS s >");
    run(&s, "XADD s 2-1 a 1");
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(&s, "XREADGROUP GROUP g c STREAMS s >")
    }));
    let r = r.expect("XREADGROUP panicked");
    assert_eq!(
        r,
        Reply::Array(vec![Reply::Array(vec![
            Reply::bulk(b"s"),
            Reply::Array(vec![Reply::Array(vec![
                Reply::bulk(b"2-1"),
                Reply::Array(vec![Reply::bulk(b"a"), Reply::bulk(b"1")])
            ])])
        ])])
    );
    s.validate().unwrap();
}

#[test]
fn entries_read_overflow_does_not_panic() {
    let s = store();
    run(&s, "XADD s 1-1 a 1");
    run(&s, "XSETID s 1-1 ENTRIESADDED 9223372036854775807");
    run(&s, "XGROUP CREATE s g 1-1 ENTRIESREAD 9223372036854775807");
    run(&s, "XADD s 2-1 a 1");
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(&s, "XREADGROUP GROUP g c STREAMS s >")
    }));
    let r = r.expect("XREADGROUP panicked");
    assert_eq!(
        r,
        Reply::Array(vec![Reply::Array(vec![
            Reply::bulk(b"s"),
            Reply::Array(vec![Reply::Array(vec![
                Reply::bulk(b"2-1"),
                Reply::Array(vec![Reply::bulk(b"a"), Reply::bulk(b"1")])
            ])])
        ])])
    );
    s.validate().unwrap();
}

/// Shared prefix of BUGS 4 and 5, using only ordinary commands: an ACKED trim leaves a
/// tombstone (1-3) that `max-deleted-entry-id` does not record (streamTrim never updates
/// it), a MINID trim then empties the node without removing it (the node's last entry,
/// the tombstone, is not below MINID), and XSETID may now move the last ID below the
/// node's master ID (XSETID only checks `max_deleted_entry_id` and the last live ID).
fn emptied_node_below_master(s: &Store) {
    for c in [
        "XADD s 1-2 a x",
        "XADD s 1-3 a x",
        "XGROUP CREATE s g 0",
        "XREADGROUP GROUP g c STREAMS s >",
        "XACK s g 1-3",
        "XTRIM s MAXLEN 1 ACKED", // deletes 1-3 only (1-2 is pending): 1
        "XACK s g 1-2",
        "XTRIM s MINID 1-3", // deletes 1-2, the node [1-2 del, 1-3 del] stays: 1
        "XSETID s 0-1",      // OK in redis-server: length 0, max-deleted 0-0
    ] {
        let r = run(s, c);
        assert!(!r.is_error(), "{c}: {r:?}");
    }
}

/// BUG 4. `validate()` rejects states redis-server reaches with ordinary commands.
///
/// ```text
/// XADD s 1-2 a x ; XADD s 1-3 a x ; XGROUP CREATE s g 0
/// XREADGROUP GROUP g c STREAMS s > ; XACK s g 1-3 ; XTRIM s MAXLEN 1 ACKED
/// XACK s g 1-2 ; XTRIM s MINID 1-3 ; XSETID s 0-1
/// ```
/// After `XSETID s 0-1` (accepted by the engine and by redis-server) `validate()`
/// returns `node holds 1-3 beyond last id 0-1`; after a further `XADD s 1-0 a x` it
/// returns `entry 1-0 outside node range 1-2..1-0`. In redis-server the listpack of a
/// node may hold tombstones above `last_id`, and entries appended after XSETID may be
/// below the node's master ID (streamAppendItem appends to the last rax node whatever
/// its key; the ID deltas are signed). The invariants "every ID <= last_id" and "node
/// entries within [master, last]" are therefore not Redis invariants.
#[test]
fn validate_accepts_xsetid_below_trimmed_tombstones() {
    let s = store();
    emptied_node_below_master(&s);
    s.validate().expect("state reached with valid commands");
    run(&s, "XADD s 1-0 a x");
    s.validate().expect("state reached with valid commands");
}

/// BUG 5. Point lookups miss an entry stored below its node's master ID, so XCLAIM /
/// XAUTOCLAIM drop its PEL record as if it were deleted, XDEL/XDELEX/XACKDEL cannot
/// delete it, XNACK FORCE / XIDMPRECORD do not see it.
///
/// ```text
/// (the 9 commands of BUG 4) ; XADD s 1-0 a x ; XGROUP SETID s g 0
/// XREADGROUP GROUP g c STREAMS s >     -> [[s, [[1-0, [a, x]]]]]   (both)
/// XCLAIM s g c2 0 1-0
/// XPENDING s g
/// XDEL s 1-0
/// XLEN s
/// ```
/// redis-server: XCLAIM -> `[[1-0, [a, x]]]`, XPENDING -> `[1, 1-0, 1-0, [[c2, 1]]]`,
/// XDEL -> 1, XLEN -> 0. `streamEntryExists`/`streamDeleteItem` run
/// `streamIteratorStart(id, id)`, whose `raxSeek("<=", id)` finds no node and falls
/// back to `raxSeek("^")` (t_stream.c streamIteratorStart), then finds 1-0 in the
/// first node.
/// Engine: XCLAIM -> `[]` and the PEL record is deleted, XPENDING -> `[0, nil, nil,
/// nil]`, XDEL -> 0, XLEN -> 1 (`Stream::get` / `delete_item` use `seek_le` without
/// the fallback and only look inside that one node). XRANGE still shows 1-0 (the range
/// iterator has the fallback), so the stream is internally inconsistent.
#[test]
fn point_lookup_finds_entries_below_their_node_master() {
    let s = store();
    emptied_node_below_master(&s);
    run(&s, "XADD s 1-0 a x");
    run(&s, "XGROUP SETID s g 0");
    assert_eq!(
        run(&s, "XREADGROUP GROUP g c STREAMS s >"),
        Reply::Array(vec![Reply::Array(vec![
            Reply::bulk(b"s"),
            Reply::Array(vec![Reply::Array(vec![
                Reply::bulk(b"1-0"),
                Reply::Array(vec![Reply::bulk(b"a"), Reply::bulk(b"x")])
            ])])
        ])])
    );
    assert_eq!(
        run(&s, "XCLAIM s g c2 0 1-0 JUSTID"),
        Reply::Array(vec![Reply::bulk(b"1-0")])
    );
    assert_eq!(
        run(&s, "XPENDING s g"),
        Reply::Array(vec![
            Reply::Int(1),
            Reply::bulk(b"1-0"),
            Reply::bulk(b"1-0"),
            Reply::Array(vec![Reply::Array(vec![
                Reply::bulk(b"c2"),
                Reply::bulk(b"1")
            ])])
        ])
    );
    assert_eq!(run(&s, "XDEL s 1-0"), Reply::Int(1));
    assert_eq!(run(&s, "XLEN s"), Reply::Int(0));
}

/// BUG 6. XTRIM/XADD MINID deletes entries redis-server keeps when a node holds a
/// tombstone with a higher ID before lower live entries.
///
/// ```text
/// XADD s 1-1 a x ; XADD s 1-2 a x ; XADD s 1-5 a x
/// XGROUP CREATE s g 0 ; XREADGROUP GROUP g c STREAMS s >
/// XACK s g 1-5 ; XTRIM s MAXLEN 2 ACKED      (tombstone 1-5; max-deleted stays 0-0)
/// XSETID s 1-2                               (>= last live 1-2: accepted)
/// XADD s 1-3 a x ; XADD s 1-4 a x            (node: 1-1 1-2 [1-5] 1-3 1-4)
/// XACK s g 1-1 1-2
/// XTRIM s MINID 1-4
/// XRANGE s - +
/// ```
/// redis-server: XTRIM -> 2, XRANGE -> `[1-3, 1-4]`: streamTrim walks the listpack in
/// order and stops at the first entry (tombstone or not) with ID >= MINID, here the
/// tombstone 1-5 (t_stream.c streamTrim: `stop = streamCompareID(&currid, id) >= 0`
/// is evaluated before the deleted-flag check).
/// Engine: XTRIM -> 3, XRANGE -> `[1-4]` (nodes drop tombstones from their buffer, so
/// the walk only sees live entries and also deletes 1-3).
#[test]
fn minid_trim_stops_at_the_first_id_above_minid_even_a_tombstone() {
    let s = store();
    for c in [
        "XADD s 1-1 a x",
        "XADD s 1-2 a x",
        "XADD s 1-5 a x",
        "XGROUP CREATE s g 0",
        "XREADGROUP GROUP g c STREAMS s >",
        "XACK s g 1-5",
        "XTRIM s MAXLEN 2 ACKED",
        "XSETID s 1-2",
        "XADD s 1-3 a x",
        "XADD s 1-4 a x",
        "XACK s g 1-1 1-2",
    ] {
        let r = run(&s, c);
        assert!(!r.is_error(), "{c}: {r:?}");
    }
    assert_eq!(run(&s, "XTRIM s MINID 1-4"), Reply::Int(2));
    let ids = range_ids(&s, "s");
    assert_eq!(ids, vec![Reply::bulk(b"1-3"), Reply::bulk(b"1-4")]);
}

/// Blocked XREADGROUP is answered when its database is flushed (the group went with the
/// key), as `Blocking XREADGROUP: flushed DB` in Redis's stream-cgroups.tcl (DEL and SET
/// are in blocking.rs).
#[test]
fn blocked_xreadgroup_unblocks_when_its_db_is_flushed() {
    for (change, want) in [("FLUSHALL", "NOGROUP"), ("FLUSHDB", "NOGROUP")] {
        let s = store();
        run(&s, "XADD s 666 f v");
        run(&s, "XGROUP CREATE s g $");
        let Step::Blocked(call) = s.start(0, 2, &args("XREADGROUP GROUP g c BLOCK 0 STREAMS s >"))
        else {
            panic!("XREADGROUP should block")
        };
        run(&s, change);
        match s.wait(call, Some(Duration::from_millis(200))) {
            Step::Done(Reply::Error(e)) => assert!(e.line().starts_with(want), "{change}: {e}"),
            Step::Done(r) => panic!("{change}: unexpected {r:?}"),
            Step::Blocked(c) => {
                s.cancel(c);
                panic!("{change}: XREADGROUP should have been unblocked");
            }
        }
    }
}

/// A stream moved (MOVE) or swapped (SWAPDB) into a blocked reader's database serves it.
#[test]
fn stream_arriving_from_another_db_serves_blocked_xread() {
    for how in ["MOVE", "SWAPDB"] {
        let s = store();
        let Step::Blocked(call) = s.start(0, 2, &args("XREAD BLOCK 0 STREAMS s 0-0")) else {
            panic!("XREAD should block")
        };
        run_in(&s, 1, "XADD s 1-1 a 1");
        if how == "MOVE" {
            assert_eq!(run_in(&s, 1, "MOVE s 0"), Reply::Int(1));
        } else {
            run_in(&s, 1, "SWAPDB 0 1");
        }
        match s.wait(call, Some(Duration::from_millis(200))) {
            Step::Done(Reply::Array(a)) => assert_eq!(a.len(), 1, "{how}"),
            Step::Done(r) => panic!("{how}: unexpected {r:?}"),
            Step::Blocked(c) => {
                s.cancel(c);
                panic!("{how}: XREAD should have been served");
            }
        }
    }
}

/// Moving the store clock re-checks claim deadlines but does not re-run other blocked
/// readers: an XREAD blocked on a key now holding a string stays blocked.
#[test]
fn clock_changes_do_not_rerun_blocked_xread() {
    let s = store();
    run(&s, "XADD s 5-0 a 1");
    let Step::Blocked(call) = s.start(0, 2, &args("XREAD BLOCK 0 STREAMS s $")) else {
        panic!("XREAD should block")
    };
    run(&s, "SET s x");
    s.advance_clock(10_000);
    s.set_clock(Some(1_800_000_000_000));
    match s.wait(call, Some(Duration::from_millis(20))) {
        Step::Done(r) => panic!("XREAD must stay blocked, got {r:?}"),
        Step::Blocked(c) => s.cancel(c),
    }
}

/// BUG 6 (found by `setid_games_match_model` with a random seed: the flaky core failure
/// of the last review). `validate()` rejects a state redis-server reaches and shows.
///
/// ```text
/// (stream-node-max-entries 3)
/// XGROUP CREATE s0 g1 $ MKSTREAM ; XADD s0 0-1 a x ; XDEL s0 0-1
/// XADD s0 100000000-0 a x ; XADD s0 100000000-2 a x ; XDEL s0 100000000-2
/// XSETID s0 100000000-2 MAXDELETEDID 0-1 ; XTRIM s0 MINID 100000000-2
/// XSETID s0 0-1 ; XADD s0 0-2 a x ; XADD s0 0-3 a x
/// ```
/// redis-server 8.8: `XRANGE s0 - +` -> 0-3 then 0-2 (0-2 is appended to the last node,
/// below its tombstones; 0-3 starts a node keyed below that one), and `XINFO STREAM`
/// shows first-entry 0-3, last-entry 0-2, recorded-first-entry-id 0-2. The engine gives
/// the same replies, but `validate()` said `live entry 0-2 after Some(0-3)`, then
/// `first id 0-2 but first entry is 0-3`.
///
/// Since "trim-empty-node" (docs/differences.md, upstream PR #15815) the XTRIM removes
/// the node it empties (`[100000000-0 deleted, 100000000-2 deleted]`), so 0-2 starts a
/// node of its own and 0-3 joins it: XRANGE lists 0-2 then 0-3, as upstream's fixed
/// trim gives. This sequence no longer reaches 8.8's out-of-order state.
#[test]
fn validate_accepts_live_entries_out_of_node_order_after_xsetid_back() {
    let s = store();
    s.config_set("stream-node-max-entries", "3").unwrap();
    run_all(&s, &XSETID_BACK);
    s.validate()
        .expect("a state redis-server reaches with valid commands");
    let ids = range_ids(&s, "s0");
    assert_eq!(
        ids,
        vec![Reply::bulk(b"0-2"), Reply::bulk(b"0-3")],
        "as upstream after PR #15815 (8.8: 0-3 then 0-2)"
    );
}

/// BUG 7 (found by the same property right after BUG 6): after the commands of BUG 6,
/// `XADD s0 100000000-0 a x` - the ID of a trimmed tombstone, and the key of an existing
/// node - replaces that node in the radix tree. redis-server 8.8 does the same
/// (streamAppendItem's raxInsert overwrites the node): `XLEN s0` -> 3, `XRANGE s0 - +` ->
/// only 0-3 and 100000000-0. The engine mirrors it and counts the lost entry as
/// overwritten, so `validate()` holds. Seed: `cc f7a8cb08b9cbd41eedeec44c0a0acb647e8654e6324af3edc7f748cc5d0a486a`
/// in tests/model_ops.proptest-regressions.
#[test]
fn xadd_onto_a_node_key_after_xsetid_back_keeps_the_count_consistent() {
    let s = store();
    s.config_set("stream-node-max-entries", "3").unwrap();
    run_all(&s, &XSETID_BACK);
    run_all(&s, &["XADD s0 100000000-0 a x"]);
    s.validate().expect("XLEN agrees with what the nodes hold");
    // Since "trim-empty-node" no node is keyed 100000000-0 any more (the trim removed
    // it): the entry joins the node of 0-2 and 0-3, and nothing is overwritten (8.8:
    // XLEN 3 but XRANGE shows only 0-3 and 100000000-0).
    assert_eq!(run(&s, "XLEN s0"), Reply::Int(3), "as redis-server");
    assert_eq!(
        range_ids(&s, "s0"),
        vec![
            Reply::bulk(b"0-2"),
            Reply::bulk(b"0-3"),
            Reply::bulk(b"100000000-0")
        ],
        "as upstream after PR #15815"
    );
}

/// BUG 8 (seed 4226460948 of `setid_games_match_model`, CI run of 2026-11-24): after
/// XSETID moved the last ID back, entries appended into a node keyed above them leave a
/// live entry above the last ID once a second XSETID moves it back again. redis-server 8.8
/// answers every command below the same way (checked with redis-cli): XSETID 0-2 is
/// accepted because the last live entry in node order is 0-2, and XRANGE lists 0-4 first.
#[test]
fn xsetid_back_below_a_live_entry_appended_out_of_order() {
    let s = store();
    s.config_set("stream-node-max-entries", "3").unwrap();
    run_all(
        &s,
        &[
            "XGROUP CREATE s0 g1 $ MKSTREAM",
            "XADD s0 0-1 a x",
            "XADD s0 0-2 a x",
            "XADD s0 0-3 a x",
            "XADD s0 0-4 a x",
            "XREADGROUP GROUP g1 c1 STREAMS s0 >",
            "XDEL s0 0-4",
            "XSETID s0 2-0",
            "XADD s0 2-1 a x",
            "XADD s0 2-2 a x",
            "XDEL s0 2-2",
            "XSETID s0 2-2 MAXDELETEDID 0-1",
            "XTRIM s0 MINID 2-2",
            "XSETID s0 0-1",
            "XADD s0 0-2 a x",
            "XADD s0 0-4 a x",
        ],
    );
    // Since "trim-empty-node" (docs/differences.md) the MINID trim removes the node it
    // empties ([0-4 deleted, 2-1, 2-2 deleted]); 0-2 and 0-4 then share a new node, and
    // XSETID 0-2 is below the last live entry, as in upstream after PR #15815 (8.8
    // accepts it: the last live entry in its node order is 0-2).
    assert!(run(&s, "XSETID s0 0-2").is_error());
    s.validate()
        .expect("a state redis-server reaches with valid commands");
    let ids = range_ids(&s, "s0");
    assert_eq!(
        ids,
        vec![Reply::bulk(b"0-2"), Reply::bulk(b"0-4")],
        "as upstream after PR #15815 (8.8: 0-4 then 0-2)"
    );
}
