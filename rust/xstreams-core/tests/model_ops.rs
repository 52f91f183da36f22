//! Model-based tests: random command sequences run through `Store::execute` and through
//! a literal reference model of Redis 8.8 (`support/model/`, written from t_stream.c).
//! After every command the replies must be equal and the whole state must agree: node
//! layout (master IDs, live/deleted counts, listpack bytes), stream counters, every
//! group's last ID / entries-read / PEL (owner, delivery count and time) / time-ordered
//! list and NACK zone / consumers, and the IDMP counters (producer contents after a
//! forced sweep). `store.validate()` must also hold after every command.
//!
//! Sequence length: `XS_MAX_OPS` (default 120, 150 for node packing).
//! Cases: `PROPTEST_CASES` overrides every property's default (2000 for the main
//! property, 1500 for node packing, 512 for the IDMPAUTO hash, 256 for the ignored
//! XSETID-games properties).
//!
//! Failing cases are replayable: proptest saves the seed of each failure in
//! `tests/model_ops.proptest-regressions` (committed; replayed before any new case on every
//! run) and prints the shrunk input. `PROPTEST_RNG_SEED=<u64>` fixes the seed of a whole
//! run (see docs/reliability.md).

#[path = "support/model/mod.rs"]
mod model;

use model::*;
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, FileFailurePersistence};
use xstreams_core::keyspace::db::Value;
use xstreams_core::{Config, Reply, Store, StreamId};

#[path = "model_ops/harness.rs"]
mod harness;
#[path = "model_ops/ops.rs"]
mod ops;
#[path = "model_ops/prepare_groups.rs"]
mod prepare_groups;
#[path = "model_ops/prepare_streams.rs"]
mod prepare_streams;
#[path = "model_ops/snapshots.rs"]
mod snapshots;

use harness::*;
use ops::*;
use snapshots::*;

pub const BASE: i64 = 100_000_000;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Longest command sequence per case: `XS_MAX_OPS` or the property's default.
fn max_ops(default: usize) -> usize {
    std::env::var("XS_MAX_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
        .max(2)
}

fn pt_config(default: u32) -> PtConfig {
    PtConfig {
        cases: cases(default),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        max_shrink_iters: 20_000,
        ..PtConfig::default()
    }
}

fn prelude() -> Vec<Op> {
    let create = |key, group, id| Op::Create {
        key,
        group,
        id,
        mkstream: true,
        er: None,
    };
    vec![
        create(0, 0, GId::Dollar),
        create(0, 1, GId::Zero),
        create(1, 0, GId::Dollar),
    ]
}

fn run_ops(cfg: Config, ops: &[Op]) -> Result<(), TestCaseError> {
    run_ops_with(cfg, ops, true)
}

fn run_ops_with(cfg: Config, ops: &[Op], check_validate: bool) -> Result<(), TestCaseError> {
    let mut h = Harness::new(cfg);
    h.check_validate = check_validate;
    for op in prelude().iter().chain(ops) {
        if let Err(e) = h.step(op) {
            let tail: Vec<String> = h.log.iter().rev().take(40).rev().cloned().collect();
            return Err(TestCaseError::fail(format!(
                "{e}\n--- last commands ---\n{}",
                tail.join("\n")
            )));
        }
    }
    Ok(())
}

fn config_strategy() -> impl Strategy<Value = Config> {
    (
        prop_oneof![Just(0i64), Just(1), Just(2), Just(3), Just(5), Just(100)],
        prop_oneof![
            Just(0u64),
            Just(1),
            Just(40),
            Just(64),
            Just(150),
            Just(4096)
        ],
        prop_oneof![Just(1i64), Just(100)],
        prop_oneof![Just(1i64), Just(3), Just(100)],
    )
        .prop_map(|(e, b, d, m)| Config {
            stream_node_max_entries: e,
            stream_node_max_bytes: b,
            stream_idmp_duration: d,
            stream_idmp_maxsize: m,
            ..Config::default()
        })
}

proptest! {
    #![proptest_config(pt_config(2000))]

    /// Every command agrees with the Redis model, reply and state, after every step.
    #[test]
    fn engine_matches_model(cfg in config_strategy(), ops in prop::collection::vec(op(), 1..max_ops(120))) {
        run_ops(cfg, &ops)?;
    }
}

// ------------------------------------------------------------------ node packing

fn packing_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (
            Just(0u8),
            Just(false),
            prop_oneof![4 => Just(XId::Auto), 2 => any::<u8>().prop_map(XId::AfterLast), 1 => any::<u8>().prop_map(XId::MsStar)],
            prop::collection::vec((0u8..5, any::<u8>()), 1..=3),
            prop::option::weighted(0.15, trim_spec()),
            Just(None),
        )
            .prop_map(|(key, nomk, id, pairs, trim, idmp)| Op::Xadd { key, nomk, id, pairs, trim, idmp }),
        3 => (Just(0u8), ids(3)).prop_map(|(key, ids)| Op::Xdel { key, ids }),
        2 => (Just(0u8), trim_spec()).prop_map(|(key, trim)| Op::Xtrim { key, trim }),
        1 => (Just(0u8), prop::option::of(0u8..3), ids(3)).prop_map(|(key, policy, ids)| Op::Xdelex { key, policy, ids }),
        1 => (Just(0u8), g_any(), prop_oneof![Just(GId::Dollar), Just(GId::Zero)], Just(true), Just(None))
            .prop_map(|(key, group, id, mkstream, er)| Op::Create { key, group, id, mkstream, er }),
        2 => (g_any(), Just(0u8), prop::option::weighted(0.5, 0u8..4))
            .prop_map(|(group, consumer, count)| Op::ReadGroup {
                group, consumer, count, claim: None, noack: false, streams: vec![(0, RgId::Gt)]
            }),
        6 => (Just(0u8), any::<bool>(), bound(), bound(), prop::option::weighted(0.3, 0u8..5))
            .prop_map(|(key, rev, start, end, count)| Op::Range { key, rev, start, end, count }),
        2 => (0u8..8).prop_map(Op::Advance),
    ]
}

fn g_any() -> impl Strategy<Value = u8> {
    0u8..2
}

fn small_nodes() -> impl Strategy<Value = Config> {
    (
        prop_oneof![Just(0i64), Just(1), Just(2), Just(3), Just(4), Just(7)],
        prop_oneof![
            Just(0u64),
            Just(1),
            Just(30),
            Just(45),
            Just(60),
            Just(100),
            Just(300)
        ],
    )
        .prop_map(|(e, b)| Config {
            stream_node_max_entries: e,
            stream_node_max_bytes: b,
            ..Config::default()
        })
}

proptest! {
    #![proptest_config(pt_config(1500))]

    /// Tiny `stream-node-max-entries` / `stream-node-max-bytes`: nodes split exactly as
    /// `streamAppendItem` does (compared node by node, with listpack byte sizes
    /// recomputed independently), and ranges iterate correctly in both directions across
    /// node boundaries after deletions and trims.
    #[test]
    fn node_packing_matches_model(cfg in small_nodes(), ops in prop::collection::vec(packing_op(), 1..max_ops(150))) {
        run_ops(cfg, &ops)?;
    }
}

#[test]
#[ignore = "debug helper: prints statistics about generated commands"]
fn stats() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    use std::collections::BTreeMap;
    let mut runner = TestRunner::default();
    let mut hist: BTreeMap<String, (u32, u32, u32)> = BTreeMap::new();
    for _ in 0..50 {
        let cfg = config_strategy().new_tree(&mut runner).unwrap().current();
        let ops = prop::collection::vec(op(), 100..120)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let mut h = Harness::new(cfg);
        for op in prelude().iter().chain(&ops) {
            let Some((args, expected)) = h.prepare(op) else {
                continue;
            };
            let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            let got = h.store.execute(&refs);
            let name = if args[0] == "XGROUP" || args[0] == "XINFO" {
                format!("{} {}", args[0], args[1])
            } else {
                args[0].clone()
            };
            let e = hist.entry(name).or_default();
            e.0 += 1;
            if got.is_error() {
                e.1 += 1;
            }
            let nonempty = !matches!(got, Reply::NilArray | Reply::Nil | Reply::Int(0))
                && !got.is_error()
                && !matches!(&got, Reply::Array(v) if v.is_empty());
            if nonempty {
                e.2 += 1;
            }
            assert_eq!(
                got.is_error(),
                expected.is_error(),
                "{args:?} {got:?} {expected:?}"
            );
        }
    }
    for (k, (n, e, ne)) in hist {
        println!("{k:24} total {n:5} errors {e:5} nonempty {ne:5}");
    }
}

proptest! {
    #![proptest_config(pt_config(512))]

    /// `XADD ... IDMPAUTO` hashes exactly as `createIdempotencyHash` (model written from
    /// the C code) and is order independent; a re-ordered duplicate returns the first ID.
    #[test]
    fn idmpauto_hash_matches_c(pairs in prop::collection::vec(
        (prop::collection::vec(any::<u8>(), 0..12), prop::collection::vec(any::<u8>(), 0..12)), 1..5),
        rot in 0usize..5)
    {
        let flat: Vec<&[u8]> = pairs.iter().flat_map(|(f, v)| [f.as_slice(), v.as_slice()]).collect();
        let engine = xstreams_core::structures::idmp::auto_iid(&flat).to_vec();
        prop_assert_eq!(engine, auto_iid(&pairs));
        let store = Store::default();
        store.set_clock(Some(BASE));
        let mut cmd: Vec<&[u8]> = vec![b"XADD", b"s", b"IDMPAUTO", b"p", b"*"];
        cmd.extend(flat.iter().copied());
        let first = store.execute(&cmd);
        prop_assert!(matches!(first, Reply::Bulk(_)), "{:?}", first);
        store.advance_clock(5);
        let mut rotated = pairs.clone();
        let n = rotated.len();
        rotated.rotate_left(rot % n);
        let mut cmd2: Vec<&[u8]> = vec![b"XADD", b"s", b"IDMPAUTO", b"p", b"*"];
        cmd2.extend(rotated.iter().flat_map(|(f, v)| [f.as_slice(), v.as_slice()]));
        prop_assert_eq!(store.execute(&cmd2), first);
        prop_assert_eq!(store.execute(&[b"XLEN", b"s"]), Reply::Int(1));
    }
}

// ------------------------------------------------------------------ XSETID games

/// Operations that move `last-generated-id` and `max-deleted-entry-id` around
/// (XSETID with MAXDELETEDID, trims that leave tombstones, XADD just above the last ID),
/// so that new entries land after tombstones with higher IDs or below their node's
/// master ID, as redis-server allows (BUG 4 and 5 in regressions.rs). Replies and state
/// must match the model and `validate()` must hold.
fn setid_games_op() -> impl Strategy<Value = Op> {
    let small = || prop::collection::vec((0u8..2, 0u8..3), 1..=2);
    prop_oneof![
        8 => (Just(0u8), prop_oneof![3 => any::<u8>().prop_map(XId::AfterLast), 1 => Just(XId::Auto)], small())
            .prop_map(|(key, id, pairs)| Op::Xadd { key, nomk: false, id, pairs, trim: None, idmp: None }),
        4 => (Just(0u8), 0u8..5, idsel(), prop::option::weighted(0.2, 0u8..5), prop::option::weighted(0.5, idsel()))
            .prop_map(|(key, id, raw, ea, md)| Op::SetIdStream { key, id, raw, ea, md }),
        // XSETID <last-id> MAXDELETEDID 0-1: lowers max-deleted-entry-id.
        2 => Just(Op::SetIdStream { key: 0, id: 0, raw: IdSel::Raw(0, 0), ea: None, md: Some(IdSel::Raw(0, 1)) }),
        // XSETID to a tiny ID (succeeds when the stream is empty).
        2 => (0u8..3, 0u8..3).prop_map(|(a, b)| Op::SetIdStream { key: 0, id: 4, raw: IdSel::Raw(a, b), ea: None, md: None }),
        2 => (Just(0u8), prop::collection::vec(any::<u16>().prop_map(IdSel::Known), 1..=2))
            .prop_map(|(key, ids)| Op::Xdel { key, ids }),
        4 => (Just(0u8), trim_spec()).prop_map(|(key, trim)| Op::Xtrim { key, trim }),
        3 => (Just(0u8), ids(2)).prop_map(|(key, ids)| Op::Xdel { key, ids }),
        2 => (Just(0u8), prop::option::of(0u8..3), ids(2)).prop_map(|(key, policy, ids)| Op::Xdelex { key, policy, ids }),
        3 => (0u8..2, 0u8..2, prop::option::weighted(0.5, 0u8..3))
            .prop_map(|(group, consumer, count)| Op::ReadGroup {
                group, consumer, count, claim: None, noack: false, streams: vec![(0, RgId::Gt)]
            }),
        2 => (Just(0u8), 0u8..2, ids(2)).prop_map(|(key, group, ids)| Op::Xack { key, group, ids }),
        2 => (Just(0u8), 0u8..2, 0u8..2, Just(0u8), ids(2))
            .prop_map(|(key, group, consumer, minidle, ids)| Op::Claim {
                key, group, consumer, minidle, ids, idle: None, time: None, retry: None,
                force: false, justid: true, lastid: None
            }),
        2 => (Just(0u8), any::<bool>(), bound(), bound(), Just(None))
            .prop_map(|(key, rev, start, end, count)| Op::Range { key, rev, start, end, count }),
        1 => Just(Op::InfoStream { key: 0 }),
        1 => Just(Op::Len { key: 0 }),
    ]
}

proptest! {
    #![proptest_config(pt_config(256))]

    #[test]
    fn setid_games_match_model(cfg in small_nodes(), ops in prop::collection::vec(setid_games_op(), 1..120)) {
        run_ops_with(cfg, &ops, true)?;
    }
}
