//! Blocking XREAD / XREADGROUP against redis-server's wake-up rules (blocked.c
//! `signalKeyAsReadyLogic` / `handleClientsBlockedOnKey`, t_stream.c signal sites):
//!
//! * a stream key is signaled by XADD (not by an IDMP duplicate), XNACK (when something
//!   was NACKed), XGROUP DESTROY, the creation of the key, and CLAIM timeouts;
//! * deletion / overwrite only wakes XREADGROUP callers (`unblock_on_nokey`), which then
//!   fail with NOGROUP / WRONGTYPE; plain XREAD callers keep waiting;
//! * a re-executed command keeps its original timeout and its rewritten `$`.
//!
//! Woken callers are served by the writer, right after the command (or the atomic batch)
//! that made their key ready and before any other command runs, as redis-server does.
//!
//! Deterministic scenarios driven through `Store::start` / `Store::wait`.

use std::time::Duration;

use xstreams_core::store::{BlockedCall, Step};
use xstreams_core::{Reply, Store};

fn args(cmd: &str) -> Vec<&[u8]> {
    cmd.split(' ').map(|p| p.as_bytes()).collect()
}

fn run(s: &Store, cmd: &str) -> Reply {
    s.execute(&args(cmd))
}

fn store() -> Store {
    let s = Store::default();
    s.set_clock(Some(1_700_000_000_000));
    s
}

fn block(s: &Store, cmd: &str) -> BlockedCall {
    match s.start(0, 2, &args(cmd)) {
        Step::Blocked(c) => c,
        Step::Done(r) => panic!("`{cmd}` should block, replied {r:?}"),
    }
}

/// Poll a blocked call: `Ok(reply)` if it finished, `Err(call)` if still blocked.
fn poll(s: &Store, call: BlockedCall) -> Result<Reply, Box<BlockedCall>> {
    match s.wait(call, Some(Duration::from_millis(15))) {
        Step::Done(r) => Ok(r),
        Step::Blocked(c) => Err(Box::new(c)),
    }
}

fn entry(id: &str, f: &str, v: &str) -> Reply {
    Reply::Array(vec![
        Reply::bulk(id.as_bytes()),
        Reply::Array(vec![Reply::bulk(f.as_bytes()), Reply::bulk(v.as_bytes())]),
    ])
}

fn served(key: &str, entries: Vec<Reply>) -> Reply {
    Reply::Array(vec![Reply::Array(vec![
        Reply::bulk(key.as_bytes()),
        Reply::Array(entries),
    ])])
}

#[test]
fn xreadgroup_woken_by_xadd_gets_the_entry_and_owns_it() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    let call = block(&s, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    let call = *poll(&s, call).expect_err("nothing to read yet");
    run(&s, "XADD s 5-0 a 1");
    let r = poll(&s, call).expect("woken by XADD");
    assert_eq!(r, served("s", vec![entry("5-0", "a", "1")]));
    assert_eq!(
        run(&s, "XPENDING s g - + 10"),
        Reply::Array(vec![Reply::Array(vec![
            Reply::bulk(b"5-0"),
            Reply::bulk(b"c"),
            Reply::Int(0),
            Reply::Int(1)
        ])])
    );
    s.validate().unwrap();
}

#[test]
fn xreadgroup_woken_by_group_destroy_fails_with_nogroup() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    let call = block(&s, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    run(&s, "XGROUP DESTROY s g");
    let r = poll(&s, call).expect("woken by DESTROY");
    assert!(
        matches!(&r, Reply::Error(e) if e.line().starts_with("NOGROUP")),
        "{r:?}"
    );
}

#[test]
fn xreadgroup_woken_by_del_fails_with_nogroup() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    let call = block(&s, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    run(&s, "DEL s");
    let r = poll(&s, call).expect("woken by DEL (unblock_on_nokey)");
    assert!(
        matches!(&r, Reply::Error(e) if e.line().starts_with("NOGROUP")),
        "{r:?}"
    );
}

#[test]
fn xreadgroup_woken_by_overwrite_fails_with_wrongtype() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    let call = block(&s, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    run(&s, "SET s x");
    let r = poll(&s, call).expect("woken by the overwrite (unblock_on_nokey)");
    assert!(
        matches!(&r, Reply::Error(e) if e.line().starts_with("WRONGTYPE")),
        "{r:?}"
    );
}

#[test]
fn xread_keeps_waiting_across_del_and_is_served_by_the_new_stream() {
    let s = store();
    run(&s, "XADD s 5-0 a 1");
    let call = block(&s, "XREAD BLOCK 0 STREAMS s $");
    run(&s, "DEL s");
    let call = *poll(&s, call).expect_err("XREAD ignores deletions");
    // `$` was rewritten to 5-0 when the call blocked: 3-0 is not newer.
    run(&s, "XADD s 3-0 b 2");
    let call = *poll(&s, call).expect_err("3-0 is older than the rewritten $");
    run(&s, "XADD s 6-0 c 3");
    assert_eq!(
        poll(&s, call).unwrap(),
        served("s", vec![entry("6-0", "c", "3")])
    );
}

#[test]
fn idmp_duplicate_does_not_serve_blocked_readers() {
    let s = store();
    run(&s, "XADD s IDMP p i1 * a 1");
    let call = block(&s, "XREAD BLOCK 0 STREAMS s $");
    assert_eq!(run(&s, "XLEN s"), Reply::Int(1));
    run(&s, "XADD s IDMP p i1 * a 1");
    let call = *poll(&s, call).expect_err("a duplicate adds nothing");
    s.cancel(call);
    assert_eq!(run(&s, "XLEN s"), Reply::Int(1));
}

#[test]
fn xnack_wakes_a_claiming_reader() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    run(&s, "XADD s 5-0 a 1");
    assert_eq!(
        run(&s, "XREADGROUP GROUP g c1 STREAMS s >"),
        served("s", vec![entry("5-0", "a", "1")])
    );
    // Nothing new and nothing idle for an hour: c2 blocks.
    let call = block(
        &s,
        "XREADGROUP GROUP g c2 CLAIM 3600000 BLOCK 0 STREAMS s >",
    );
    let call = *poll(&s, call).expect_err("nothing claimable");
    assert_eq!(run(&s, "XNACK s g FAIL IDS 1 5-0"), Reply::Int(1));
    let r = poll(&s, call).expect("XNACK makes 5-0 claimable at once");
    // The claimed entry reports its idle time (now - 0) and its delivery count (1).
    let Reply::Array(outer) = &r else {
        panic!("{r:?}")
    };
    let Reply::Array(kv) = &outer[0] else {
        panic!("{r:?}")
    };
    let Reply::Array(es) = &kv[1] else {
        panic!("{r:?}")
    };
    assert_eq!(es.len(), 1, "{r:?}");
    let Reply::Array(e) = &es[0] else {
        panic!("{r:?}")
    };
    assert_eq!(e[0], Reply::bulk(b"5-0"));
    assert_eq!(e[2], Reply::Int(1_700_000_000_000));
    assert_eq!(e[3], Reply::Int(1));
    s.validate().unwrap();
}

#[test]
fn claim_timeout_wakes_a_claiming_reader_when_time_passes() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    run(&s, "XADD s 5-0 a 1");
    run(&s, "XREADGROUP GROUP g c1 STREAMS s >");
    let call = block(&s, "XREADGROUP GROUP g c2 CLAIM 1000 BLOCK 0 STREAMS s >");
    s.advance_clock(999);
    let call = *poll(&s, call).expect_err("idle 999 < 1000");
    s.advance_clock(2);
    let r = poll(&s, call).expect("idle 1001 >= 1000");
    assert!(matches!(&r, Reply::Array(v) if v.len() == 1), "{r:?}");
    let p = run(&s, "XPENDING s g - + 10 c2");
    assert!(matches!(&p, Reply::Array(v) if v.len() == 1), "{p:?}");
}

#[test]
fn timeout_expires_with_a_null_array() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    let call = block(&s, "XREADGROUP GROUP g c BLOCK 30 STREAMS s >");
    std::thread::sleep(Duration::from_millis(40));
    assert_eq!(poll(&s, call).unwrap(), Reply::NilArray);
}

#[test]
fn blocked_call_in_a_batch_replies_like_a_timeout() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    let cmds: Vec<Vec<Vec<u8>>> = vec![
        args("XREADGROUP GROUP g c BLOCK 0 STREAMS s >")
            .into_iter()
            .map(|a| a.to_vec())
            .collect(),
        args("XADD s 1-1 a 1")
            .into_iter()
            .map(|a| a.to_vec())
            .collect(),
        args("XREADGROUP GROUP g c BLOCK 0 STREAMS s >")
            .into_iter()
            .map(|a| a.to_vec())
            .collect(),
    ];
    let r = s.execute_batch(0, 2, &cmds, true, None).unwrap();
    assert_eq!(r[0], Reply::NilArray);
    assert_eq!(r[2], served("s", vec![entry("1-1", "a", "1")]));
}

#[test]
fn two_readers_of_one_group_split_new_entries_in_block_order() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    let a = block(&s, "XREADGROUP GROUP g ca COUNT 1 BLOCK 0 STREAMS s >");
    let b = block(&s, "XREADGROUP GROUP g cb COUNT 1 BLOCK 0 STREAMS s >");
    run(&s, "XADD s 1-1 a 1");
    let ra = poll(&s, a).expect("first blocked reader is served first");
    assert_eq!(ra, served("s", vec![entry("1-1", "a", "1")]));
    let b = *poll(&s, b).expect_err("nothing left for the second reader");
    run(&s, "XADD s 1-2 a 2");
    assert_eq!(
        poll(&s, b).unwrap(),
        served("s", vec![entry("1-2", "a", "2")])
    );
    s.validate().unwrap();
}

fn cmds(list: &[&str]) -> Vec<Vec<Vec<u8>>> {
    list.iter()
        .map(|c| args(c).into_iter().map(|a| a.to_vec()).collect())
        .collect()
}

#[test]
fn a_woken_reader_is_served_before_the_next_pipelined_command() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    let c = block(&s, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    // A pipeline (not atomic): the reader is served between XADD and XDEL.
    let r = s
        .execute_batch(0, 2, &cmds(&["XADD s 1-1 a 1", "XDEL s 1-1"]), false, None)
        .unwrap();
    assert_eq!(r[1], Reply::Int(1));
    assert_eq!(
        poll(&s, c).unwrap(),
        served("s", vec![entry("1-1", "a", "1")])
    );
    // Inside MULTI/EXEC the reader is served after the batch: the entry is gone by then.
    let c = block(&s, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >");
    s.execute_batch(0, 2, &cmds(&["XADD s 2-1 a 1", "XDEL s 2-1"]), true, None);
    let _still_blocked = *poll(&s, c).expect_err("nothing left to read after EXEC");
}

#[test]
fn back_to_back_writes_serve_readers_in_block_order() {
    let s = store();
    run(&s, "XGROUP CREATE s g $ MKSTREAM");
    let a = block(&s, "XREADGROUP GROUP g ca COUNT 1 BLOCK 0 STREAMS s >");
    let b = block(&s, "XREADGROUP GROUP g cb COUNT 1 BLOCK 0 STREAMS s >");
    // No caller runs between the two writes: the writer serves each reader itself.
    run(&s, "XADD s 1-1 a 1");
    run(&s, "XADD s 1-2 a 2");
    assert_eq!(
        poll(&s, b).unwrap(),
        served("s", vec![entry("1-2", "a", "2")])
    );
    assert_eq!(
        poll(&s, a).unwrap(),
        served("s", vec![entry("1-1", "a", "1")])
    );
}

#[test]
fn dirty_counts_changes_like_redis() {
    let s = store();
    let before = s.dirty();
    run(&s, "XADD s 1-1 a 1");
    run(&s, "XLEN s");
    run(&s, "XADD s 1-2 a 1 b 2");
    run(&s, "XDEL s 1-1 1-2 9-9");
    assert_eq!(s.dirty() - before, 4);
    // Group reads: one change per key served (however many entries), none for a read of
    // the consumer's own history, one for a consumer created on the fly.
    for i in 1..=4 {
        run(&s, &format!("XADD x {i}-0 data v"));
    }
    run(&s, "XGROUP CREATE x g1 0");
    run(&s, "XGROUP CREATECONSUMER x g1 Alice");
    let d = s.dirty();
    run(&s, "XREADGROUP GROUP g1 Alice COUNT 2 STREAMS x >");
    assert_eq!(s.dirty() - d, 1);
    run(&s, "XREADGROUP GROUP g1 Alice NOACK COUNT 2 STREAMS x >");
    assert_eq!(s.dirty() - d, 2);
    run(&s, "XREADGROUP GROUP g1 Alice STREAMS x 0");
    assert_eq!(s.dirty() - d, 2);
    run(&s, "XREADGROUP GROUP g1 Bob STREAMS x >");
    assert_eq!(s.dirty() - d, 3);
}
