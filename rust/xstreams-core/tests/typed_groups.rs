//! The typed group API (`Store::xpending`, `xpending_range`, `xclaim`, `xautoclaim`,
//! `xack`, `xackdel`, `xnack`) and typed blocking reads (`Store::start_read`): the outcome's reply
//! is byte for byte the command's, the errors are the command's, a durable store logs
//! them so that reopening gives the same state, and a blocked typed read waits in line
//! with blocked commands.

use std::time::Duration;

use xstreams_core::command::ReadArgs;
use xstreams_core::store::{ReadStep, Step};
use xstreams_core::structures::pel::{
    AutoclaimArgs, ClaimArgs, ClaimDelivery, NackArgs, NackMode, PendingRange,
};
use xstreams_core::{Reply, Store, StreamId};

#[path = "support/durable.rs"]
mod durable;
use durable::open;

/// Everything a group command can change, as replies.
fn state(s: &Store) -> Vec<Reply> {
    vec![
        s.execute(&[b"XRANGE", b"s", b"-", b"+"]),
        s.execute(&[b"XINFO", b"STREAM", b"s", b"FULL"]),
        s.execute(&[b"XPENDING", b"s", b"g", b"-", b"+", b"100"]),
    ]
}

fn both(a: &Store, b: &Store, argv: &[&[u8]]) {
    assert_eq!(a.execute(argv), b.execute(argv), "{argv:?}");
}

/// Two durable stores in `da` and `db`, each holding entries `1-1` … `n-1` of `s`.
fn two_stores(da: &std::path::Path, db: &std::path::Path, n: u64) -> (Store, Store) {
    let (a, b) = (open(da), open(db));
    for i in 1..=n {
        let id = format!("{i}-1");
        both(&a, &b, &[b"XADD", b"s", id.as_bytes(), b"f", b"v"]);
    }
    (a, b)
}

fn err(r: Result<impl std::fmt::Debug, xstreams_core::CmdError>) -> Reply {
    Reply::Error(r.unwrap_err())
}

#[test]
fn typed_group_commands_match_the_commands_and_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let (da, db) = (tmp.path().join("a"), tmp.path().join("b"));
    let (a, b) = two_stores(&da, &db, 12);
    both(&a, &b, &[b"XGROUP", b"CREATE", b"s", b"g", b"0"]);
    for c in [&b"alice"[..], b"bob"] {
        let argv: [&[u8]; 9] = [
            b"XREADGROUP",
            b"GROUP",
            b"g",
            c,
            b"COUNT",
            b"4",
            b"STREAMS",
            b"s",
            b">",
        ];
        both(&a, &b, &argv);
        a.advance_clock(1000);
        b.advance_clock(1000);
    }

    // XPENDING, both forms.
    let summary = a.xpending(0, b"s", b"g").unwrap();
    assert_eq!(Reply::from(summary), b.execute(&[b"XPENDING", b"s", b"g"]));
    let mut q = PendingRange::new(StreamId::MIN, StreamId::MAX, 10);
    q.min_idle = 1500;
    q.consumer = Some(b"alice");
    let rows = a.xpending_range(0, b"s", b"g", &q).unwrap();
    assert_eq!(rows.len(), 4);
    let want = b.execute(&[
        b"XPENDING",
        b"s",
        b"g",
        b"IDLE",
        b"1500",
        b"-",
        b"+",
        b"10",
        b"alice",
    ]);
    assert_eq!(Reply::from(rows), want);
    assert_eq!(
        err(a.xpending(0, b"s", b"nope")),
        b.execute(&[b"XPENDING", b"s", b"nope"])
    );

    // XCLAIM: entries, JUSTID with RETRYCOUNT and LASTID, IDLE, an entry too recent.
    let ids = [
        StreamId::new(1, 1),
        StreamId::new(2, 1),
        StreamId::new(6, 1),
    ];
    let out = a
        .xclaim(0, &ClaimArgs::new(b"s", b"g", b"carol", 1500, &ids))
        .unwrap();
    assert_eq!(out.entries.len(), 2);
    let want = b.execute(&[
        b"XCLAIM", b"s", b"g", b"carol", b"1500", b"1-1", b"2-1", b"6-1",
    ]);
    assert_eq!(Reply::from(out), want);
    let ids = [StreamId::new(3, 1), StreamId::new(11, 1)];
    let mut c = ClaimArgs::new(b"s", b"g", b"dave", 0, &ids);
    c.justid = true;
    c.retry_count = Some(7);
    c.last_id = Some(StreamId::new(12, 0));
    c.force = true;
    c.delivery = Some(ClaimDelivery::Idle(300));
    let want = b.execute(&[
        b"XCLAIM",
        b"s",
        b"g",
        b"dave",
        b"0",
        b"3-1",
        b"11-1",
        b"IDLE",
        b"300",
        b"RETRYCOUNT",
        b"7",
        b"FORCE",
        b"JUSTID",
        b"LASTID",
        b"12-0",
    ]);
    assert_eq!(Reply::from(a.xclaim(0, &c).unwrap()), want);
    let mut c = ClaimArgs::new(b"s", b"g", b"erin", 0, &[]);
    c.last_id = Some(StreamId::new(12, 1));
    let want = b.execute(&[b"XCLAIM", b"s", b"g", b"erin", b"0", b"LASTID", b"12-1"]);
    assert_eq!(Reply::from(a.xclaim(0, &c).unwrap()), want);
    assert_eq!(
        err(a.xclaim(0, &ClaimArgs::new(b"s", b"nope", b"x", 0, &[]))),
        b.execute(&[b"XCLAIM", b"s", b"nope", b"x", b"0", b"1-1"])
    );

    // XAUTOCLAIM over deleted entries, then from the cursor it returned.
    both(&a, &b, &[b"XDEL", b"s", b"4-1", b"5-1"]);
    a.advance_clock(5000);
    b.advance_clock(5000);
    let mut ac = AutoclaimArgs::new(b"s", b"g", b"frank", 1000, StreamId::MIN);
    ac.count = 5;
    let out = a.xautoclaim(0, &ac).unwrap();
    assert_eq!(out.deleted, vec![StreamId::new(4, 1), StreamId::new(5, 1)]);
    let next = out.next;
    let want = b.execute(&[
        b"XAUTOCLAIM",
        b"s",
        b"g",
        b"frank",
        b"1000",
        b"0",
        b"COUNT",
        b"5",
    ]);
    assert_eq!(Reply::from(out), want);
    ac.start = next;
    ac.count = 3;
    ac.justid = true;
    let cursor = next.to_bytes();
    let want = b.execute(&[
        b"XAUTOCLAIM",
        b"s",
        b"g",
        b"frank",
        b"1000",
        &cursor,
        b"COUNT",
        b"3",
        b"JUSTID",
    ]);
    assert_eq!(Reply::from(a.xautoclaim(0, &ac).unwrap()), want);
    ac.count = 0;
    assert_eq!(
        err(a.xautoclaim(0, &ac)),
        b.execute(&[
            b"XAUTOCLAIM",
            b"s",
            b"g",
            b"frank",
            b"0",
            b"0",
            b"COUNT",
            b"0"
        ])
    );

    // XACK and XNACK counts.
    let ids = [StreamId::new(1, 1), StreamId::new(9, 9)];
    let got = a.xack(0, b"s", b"g", &ids).unwrap();
    assert_eq!(
        Reply::Int(got as i64),
        b.execute(&[b"XACK", b"s", b"g", b"1-1", b"9-9"])
    );
    let ids = [
        StreamId::new(2, 1),
        StreamId::new(12, 1),
        StreamId::new(8, 1),
    ];
    let mut n = NackArgs::new(b"s", b"g", NackMode::Fail, &ids);
    n.retry_count = Some(3);
    n.force = true;
    let got = a.xnack(0, &n).unwrap();
    let want = b.execute(&[
        b"XNACK",
        b"s",
        b"g",
        b"FAIL",
        b"IDS",
        b"3",
        b"2-1",
        b"12-1",
        b"8-1",
        b"RETRYCOUNT",
        b"3",
        b"FORCE",
    ]);
    assert_eq!(Reply::Int(got as i64), want);
    assert_eq!(
        err(a.xnack(0, &NackArgs::new(b"s", b"nope", NackMode::Silent, &ids))),
        b.execute(&[b"XNACK", b"s", b"nope", b"SILENT", b"IDS", b"1", b"1-1"])
    );

    let before = state(&a);
    assert_eq!(before, state(&b));
    let t = a.now_ms();
    a.close();
    b.close();
    let (a, b) = (open(&da), open(&db));
    // XPENDING's idle times are read at the same time as before.
    a.set_clock(Some(t));
    b.set_clock(Some(t));
    assert_eq!(
        state(&a),
        before,
        "the typed commands' log replays to the same state"
    );
    assert_eq!(state(&b), before);
}

#[test]
fn typed_blocking_read_waits_in_line_with_commands() {
    let s = Store::default();
    s.execute(&[b"XGROUP", b"CREATE", b"s", b"g", b"$", b"MKSTREAM"]);
    // A command blocks first, then a typed read: the first entry goes to the command.
    let argv: [&[u8]; 11] = [
        b"XREADGROUP",
        b"GROUP",
        b"g",
        b"c1",
        b"COUNT",
        b"1",
        b"BLOCK",
        b"0",
        b"STREAMS",
        b"s",
        b">",
    ];
    let Step::Blocked(first) = s.start(0, 2, &argv) else {
        panic!("the command blocks")
    };
    let (keys, ids): ([&[u8]; 1], [&[u8]; 1]) = ([b"s"], [b">"]);
    let mut args = ReadArgs::xreadgroup(b"g", b"c2", &keys, &ids);
    args.count = 1;
    args.timeout = 0;
    let ReadStep::Blocked(second) = s.start_read(0, &args) else {
        panic!("the typed read blocks")
    };
    s.execute(&[b"XADD", b"s", b"1-1", b"f", b"a"]);
    let Step::Done(r) = s.wait(first, Some(Duration::ZERO)) else {
        panic!("the command was served")
    };
    let entry = Reply::Array(vec![
        Reply::bulk(b"1-1"),
        Reply::Array(vec![Reply::bulk(b"f"), Reply::bulk(b"a")]),
    ]);
    let served = Reply::Array(vec![Reply::bulk(b"s"), Reply::Array(vec![entry])]);
    assert_eq!(r, Reply::Array(vec![served]));
    let ReadStep::Blocked(second) = s.wait_read(second, Some(Duration::ZERO)) else {
        panic!("the typed read still waits")
    };
    s.execute(&[b"XADD", b"s", b"2-1", b"f", b"b"]);
    let ReadStep::Done(got) = s.wait_read(second, Some(Duration::ZERO)) else {
        panic!("the typed read was served")
    };
    let got = got.unwrap();
    assert_eq!(got.ids, vec![StreamId::new(2, 1)]);
    assert_eq!(got.keys, vec![b"s".to_vec()]);

    // `$` stands for the last ID when the read started; a timeout gives no entry.
    let (keys, ids): ([&[u8]; 1], [&[u8]; 1]) = ([b"s"], [b"$"]);
    let mut args = ReadArgs::xread(&keys, &ids);
    args.timeout = 5;
    let ReadStep::Blocked(call) = s.start_read(0, &args) else {
        panic!("blocks")
    };
    let ReadStep::Done(got) = s.wait_read(call, None) else {
        panic!("times out")
    };
    assert!(got.unwrap().is_empty());
    args.timeout = -2;
    let ReadStep::Done(Err(e)) = s.start_read(0, &args) else {
        panic!("a negative timeout is refused")
    };
    assert_eq!(
        Reply::Error(e),
        s.execute(&[b"XREAD", b"BLOCK", b"-2", b"STREAMS", b"s", b"$"])
    );
}

/// `Store::xackdel`: per policy, the outcome's reply is the command's (pending and not
/// pending IDs, an entry already deleted, one kept under ACKED because another group
/// references it, a missing group or key), and the log replays to the same state.
#[test]
fn typed_xackdel_matches_the_command_and_replays() {
    use xstreams_core::command::XackdelArgs;
    use xstreams_core::structures::stream::{DeleteOutcome, RefPolicy};

    let tmp = tempfile::tempdir().unwrap();
    let (da, db) = (tmp.path().join("a"), tmp.path().join("b"));
    let (a, b) = two_stores(&da, &db, 9);
    for g in [&b"g"[..], b"h"] {
        both(&a, &b, &[b"XGROUP", b"CREATE", b"s", g, b"0"]);
        let read: [&[u8]; 7] = [b"XREADGROUP", b"GROUP", g, b"c", b"STREAMS", b"s", b">"];
        both(&a, &b, &read);
    }
    both(&a, &b, &[b"XDEL", b"s", b"3-1"]);
    let cases: [(RefPolicy, &[u8], &[u64]); 5] = [
        (RefPolicy::KeepRef, b"KEEPREF", &[1, 3, 42]),
        (RefPolicy::Acked, b"ACKED", &[2, 4]),
        (RefPolicy::DelRef, b"DELREF", &[5, 5, 6]),
        (RefPolicy::Acked, b"ACKED", &[7]),
        (RefPolicy::KeepRef, b"KEEPREF", &[8]),
    ];
    let mut seen = std::collections::HashSet::new();
    for (i, (policy, name, ms)) in cases.iter().enumerate() {
        // The fourth case runs in group h, where 7-1 is then the last reference.
        let group: &[u8] = if i == 3 { b"h" } else { b"g" };
        let ids: Vec<StreamId> = ms.iter().map(|&m| StreamId::new(m, 1)).collect();
        let args = XackdelArgs {
            key: b"s",
            group,
            policy: *policy,
            ids: &ids,
        };
        let got = a.xackdel(0, &args).unwrap();
        seen.extend(got.iter().copied());
        let texts: Vec<Vec<u8>> = ids.iter().map(|id| id.to_bytes()).collect();
        let n = ids.len().to_string();
        let mut argv: Vec<&[u8]> = vec![b"XACKDEL", b"s", group, name, b"IDS", n.as_bytes()];
        argv.extend(texts.iter().map(|t| t.as_slice()));
        assert_eq!(Reply::from(got), b.execute(&argv), "{argv:?}");
    }
    for (key, group) in [(&b"s"[..], &b"nope"[..]), (b"missing", b"g")] {
        let ids = [StreamId::new(1, 1), StreamId::new(2, 1)];
        let args = XackdelArgs {
            key,
            group,
            policy: RefPolicy::KeepRef,
            ids: &ids,
        };
        let got = a.xackdel(0, &args).unwrap();
        assert_eq!(got, vec![DeleteOutcome::NotFound; 2]);
        let argv: [&[u8]; 7] = [b"XACKDEL", key, group, b"IDS", b"2", b"1-1", b"2-1"];
        assert_eq!(Reply::from(got), b.execute(&argv));
    }
    // Every outcome was met.
    assert_eq!(seen.len(), 3, "{seen:?}");
    let before = state(&a);
    assert_eq!(before, state(&b));
    a.close();
    b.close();
    let (a, b) = (open(&da), open(&db));
    assert_eq!(
        state(&a),
        before,
        "the typed XACKDEL's log replays to the same state"
    );
    assert_eq!(state(&b), before);
}
