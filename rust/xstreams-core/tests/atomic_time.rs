//! One command time per atomic step. redis-server takes its time snapshot once per
//! execution unit, and the commands an EXEC runs are nested in the EXEC's: in a MULTI/EXEC
//! every `XADD *` ID has the same millisecond part, and a key given a 1 ms TTL inside it is
//! still there (with 1 ms left) at its end. The embedded store's atomic batch
//! (`execute_batch(atomic)`) and atomic row step (`xadd_rows_atomic`, the Spark sink's
//! commit) keep that rule; a pipeline runs each command at its own time, as
//! redis-server does. (`tests/differential/test_differential_exec_time.py` checks the
//! same against redis-server itself.)

use std::time::{Duration, Instant};

use xstreams_core::command::reply::Reply;
use xstreams_core::interop::batch::{Col, XaddRows};
use xstreams_core::{Store, StreamId};

/// Commands enough that the step lasts several milliseconds on any machine.
const N: usize = 60_000;

/// A step shorter than this could not tell one command time from several.
const LONG_ENOUGH: Duration = Duration::from_millis(3);

/// `step()`'s result and how long it took, checked to be long enough to tell.
fn timed<R>(step: impl FnOnce() -> R) -> (R, Duration) {
    let t0 = Instant::now();
    let out = step();
    let took = t0.elapsed();
    assert!(
        took > LONG_ENOUGH,
        "the step took {took:?}: too short to tell"
    );
    (out, took)
}

fn argv(cmd: &str) -> Vec<Vec<u8>> {
    cmd.split(' ').map(|p| p.as_bytes().to_vec()).collect()
}

fn ms_of(r: &Reply) -> u64 {
    let Reply::Bulk(id) = r else {
        panic!("not an ID: {r:?}");
    };
    let text = std::str::from_utf8(id).unwrap();
    text.split('-').next().unwrap().parse().unwrap()
}

/// SET k, PEXPIRE k 1, N times `XADD s * f v`, EXISTS k, PTTL k as one batch: the
/// replies and how long the batch took (see [`timed`]).
fn run(store: &Store, atomic: bool) -> (Vec<Reply>, Duration) {
    let mut cmds = vec![argv("SET k v"), argv("PEXPIRE k 1")];
    cmds.extend(std::iter::repeat_with(|| argv("XADD s * f v")).take(N));
    cmds.push(argv("EXISTS k"));
    cmds.push(argv("PTTL k"));
    timed(|| store.execute_batch(0, 2, &cmds, atomic, None).unwrap())
}

#[test]
fn an_atomic_batch_runs_at_one_time() {
    let store = Store::default();
    let (out, _) = run(&store, true);
    let ids = &out[2..2 + N];
    let first = ms_of(&ids[0]);
    assert!(ids.iter().all(|r| ms_of(r) == first), "IDs of several ms");
    assert_eq!(
        ids[N - 1],
        Reply::Bulk(format!("{first}-{}", N - 1).into_bytes())
    );
    // The key set to expire 1 ms after the batch's time is still there, 1 ms left.
    assert_eq!(out[2 + N], Reply::Int(1));
    assert_eq!(out[3 + N], Reply::Int(1));
    // After the batch the clock runs again: the key has expired by now.
    std::thread::sleep(Duration::from_millis(2));
    assert_eq!(store.execute(&[b"EXISTS", b"k"]), Reply::Int(0));
    assert!(store.now_ms() as u64 > first);
}

#[test]
fn a_pipeline_runs_each_command_at_its_own_time() {
    let store = Store::default();
    let (out, took) = run(&store, false);
    let ids = &out[2..2 + N];
    assert_ne!(ms_of(&ids[0]), ms_of(&ids[N - 1]), "one ms over {took:?}");
    assert_eq!(
        out[2 + N],
        Reply::Int(0),
        "the key expired during the pipeline"
    );
}

#[test]
fn the_rows_of_an_atomic_step_share_one_time() {
    let store = Store::default();
    let vals: Vec<Vec<u8>> = (0..N).map(|i| i.to_string().into_bytes()).collect();
    let rows = XaddRows {
        len: N,
        key: Some(Col::Const(b"out")),
        fields: vec![(b"f", Col::Rows(vals.iter().map(|v| Some(&v[..])).collect()))],
        ..XaddRows::default()
    };
    let ((outcomes, after), _) = timed(|| {
        store
            .xadd_rows_atomic(0, &rows, &[argv("XADD marker * batch 1")])
            .unwrap()
    });
    let ids: Vec<StreamId> = outcomes.iter().map(|o| o.id().unwrap()).collect();
    assert!(ids.iter().all(|id| id.ms == ids[0].ms), "IDs of several ms");
    assert_eq!(ids[N - 1], StreamId::new(ids[0].ms, N as u64 - 1));
    // The marker ran in the same step, at the same time.
    assert_eq!(ms_of(&after[0]), ids[0].ms);
    // ... and the rows of a plain batch each at their own.
    let (plain, took) = timed(|| store.xadd_rows(0, &rows).unwrap());
    let first = plain[0].id().unwrap().ms;
    assert!(
        plain.iter().any(|o| o.id().unwrap().ms != first),
        "one ms over {took:?}"
    );
}

#[test]
fn a_pinned_clock_stays_pinned() {
    let store = Store::default();
    store.set_clock(Some(5_000));
    let out = store
        .execute_batch(
            0,
            2,
            &[argv("XADD s * f v"), argv("XADD s * f v")],
            true,
            None,
        )
        .unwrap();
    assert_eq!(out[1], Reply::Bulk(b"5000-1".to_vec()));
    assert_eq!(store.now_ms(), 5_000);
    assert_eq!(
        store.execute(&[b"XADD", b"s", b"*", b"f", b"v"]),
        Reply::Bulk(b"5000-2".to_vec())
    );
}
