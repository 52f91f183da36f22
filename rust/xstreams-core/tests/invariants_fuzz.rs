//! Invariant fuzzing: random sequences of valid AND malformed commands (mutated
//! arguments, C-quirk IDs, huge IDs near u64::MAX, several keys/groups/consumers, a
//! pinned clock advancing by random steps, RESP2/RESP3, two databases, BLOCK with short
//! waits) run through the store. After EVERY command:
//!
//! * `store.validate()` must be Ok, and
//! * an independent checker, using only the public API, re-verifies the invariants the
//!   issue names: group PEL == union of consumer PELs + unowned NACKed entries; the time
//!   list visits every pending entry once, the NACK zone is its prefix and holds exactly
//!   the unowned entries (all with delivery time 0), times are sorted outside the zone;
//!   `nacked_count` agrees; delivery counters never exceed i64::MAX; the reference index
//!   matches the PELs; IDMP producers never exceed maxsize and the counters agree; nodes
//!   never hold more than `stream-node-max-entries` entries; XRANGE/XREVRANGE are
//!   consistent with each other, with XLEN and with the stream's first ID.
//! * after an explicit `store.sweep()`, no producer's oldest IID is expired (and, when
//!   no XIDMPRECORD was used, no expired IID remains at all).
//!
//! No command may panic. Cases: `PROPTEST_CASES` (default 3000); sequence length:
//! `XS_MAX_OPS` (default 150).
//!
//! Failing cases are replayable: proptest saves the seed of each failure in
//! `tests/invariants_fuzz.proptest-regressions` (committed; replayed before any new case on every
//! run) and prints the shrunk input. `PROPTEST_RNG_SEED=<u64>` fixes the seed of a whole
//! run (see docs/reliability.md).

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, FileFailurePersistence};
use xstreams_core::command::reply::Reply;
use xstreams_core::keyspace::db::Keyspace;
use xstreams_core::store::Step;
use xstreams_core::structures::stream::Stream;
use xstreams_core::{Config, Store, StreamId};

#[path = "invariants_fuzz/checker.rs"]
mod checker;
#[path = "invariants_fuzz/generator.rs"]
mod generator;

use checker::*;
use generator::*;

/// Longest action sequence per case: `XS_MAX_OPS` (default 150).
fn max_ops() -> usize {
    std::env::var("XS_MAX_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150usize)
        .max(2)
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

// ------------------------------------------------------------------ driver

#[derive(Clone, Debug)]
enum Action {
    Cmd {
        choices: Vec<u16>,
        mutate: bool,
        resp3: bool,
        db1: bool,
    },
    Advance(u8),
    Sweep,
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        20 => (
            prop::collection::vec(any::<u16>(), 24),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.05),
        )
            .prop_map(|(choices, mutate, resp3, db1)| Action::Cmd { choices, mutate, resp3, db1 }),
        3 => (0u8..7).prop_map(Action::Advance),
        1 => Just(Action::Sweep),
    ]
}

fn run(cfg: Config, start: i64, actions: &[Action]) -> Result<(), String> {
    let store = Store::new(cfg.clone());
    store.set_clock(Some(start));
    let mut now = start;
    let mut known: Vec<String> = Vec::new();
    let mut log: Vec<String> = Vec::new();
    let mut used_record = false;
    let prelude: &[&[&str]] = &[
        &["XGROUP", "CREATE", "s0", "g1", "$", "MKSTREAM"],
        &["XGROUP", "CREATE", "s0", "g2", "0"],
        &["XGROUP", "CREATE", "s1", "g1", "$", "MKSTREAM"],
        &["XGROUP", "CREATE", "s1", "g2", "0"],
    ];
    for p in prelude {
        let refs: Vec<&[u8]> = p.iter().map(|a| a.as_bytes()).collect();
        store.execute(&refs);
        log.push(format!("{p:?}"));
    }
    for a in actions {
        match a {
            Action::Advance(i) => {
                let d = [0i64, 1, 10, 100, 1000, 60_000, 200_000][*i as usize % 7];
                now += d;
                store.advance_clock(d);
                log.push(format!("<advance {d}>"));
            }
            Action::Sweep => {
                store.sweep();
                log.push("<sweep>".into());
                store
                    .with_keyspace(|ks| check_after_sweep(ks, now, !used_record))
                    .map_err(|e| format!("{e}\n{}", log.join("\n")))?;
            }
            Action::Cmd {
                choices,
                mutate,
                resp3,
                db1,
            } => {
                let mut g = Gen {
                    choices,
                    pos: 0,
                    known: &known,
                };
                let mut args = g.command();
                if *mutate {
                    g.mutate(&mut args);
                }
                if args[0] == "XIDMPRECORD" {
                    used_record = true;
                }
                let db = usize::from(*db1);
                let proto = if *resp3 { 3 } else { 2 };
                log.push(format!("[db{db} resp{proto}] {args:?}"));
                let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
                let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match store
                    .start(db, proto, &refs)
                {
                    Step::Done(r) => r,
                    Step::Blocked(call) => match store.wait(call, Some(Duration::from_millis(3))) {
                        Step::Done(r) => r,
                        Step::Blocked(call) => {
                            store.cancel(call);
                            Reply::NilArray
                        }
                    },
                }))
                .map_err(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    format!("PANIC: {msg}\n{}", log.join("\n"))
                })?;
                if args[0] == "XADD" {
                    if let Reply::Bulk(b) = &reply {
                        let s = String::from_utf8_lossy(b).into_owned();
                        if !known.contains(&s) {
                            known.push(s);
                        }
                    }
                }
                store
                    .validate()
                    .map_err(|e| format!("validate(): {e}\n{}", log.join("\n")))?;
                store
                    .with_keyspace(|ks| check_all(ks))
                    .map_err(|e| format!("checker: {e}\n{}", log.join("\n")))?;
            }
        }
    }
    Ok(())
}

fn cfg_strategy() -> impl Strategy<Value = Config> {
    (
        prop_oneof![Just(0i64), Just(1), Just(2), Just(3), Just(100)],
        prop_oneof![Just(0u64), Just(1), Just(50), Just(4096)],
        prop_oneof![Just(1i64), Just(100)],
        prop_oneof![Just(1i64), Just(2), Just(100)],
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
    #![proptest_config(PtConfig {
        cases: cases(3000),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        max_shrink_iters: 20_000,
        ..PtConfig::default()
    })]

    #[test]
    fn invariants_hold_after_every_command(
        cfg in cfg_strategy(),
        start in prop_oneof![Just(1_700_000_000_000i64), Just(100_000_000i64)],
        actions in prop::collection::vec(action(), 1..max_ops()),
    ) {
        if let Err(e) = run(cfg, start, &actions) {
            return Err(TestCaseError::fail(e));
        }
    }
}

#[test]
#[ignore = "debug helper: prints statistics about generated commands"]
fn fuzz_stats() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::default();
    let mut hist: std::collections::BTreeMap<String, (u32, u32)> = Default::default();
    let mut errs: std::collections::BTreeMap<String, u32> = Default::default();
    for _ in 0..40 {
        let actions = prop::collection::vec(action(), 100..150)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let store = Store::new(Config::default());
        store.set_clock(Some(1_700_000_000_000));
        for p in [
            ["XGROUP", "CREATE", "s0", "g1", "$", "MKSTREAM"],
            ["XGROUP", "CREATE", "s0", "g2", "0", "MKSTREAM"],
        ] {
            let refs: Vec<&[u8]> = p.iter().map(|a| a.as_bytes()).collect();
            store.execute(&refs);
        }
        let mut known: Vec<String> = vec![];
        for a in &actions {
            if let Action::Cmd {
                choices, mutate, ..
            } = a
            {
                let mut g = Gen {
                    choices,
                    pos: 0,
                    known: &known,
                };
                let mut args = g.command();
                if *mutate {
                    g.mutate(&mut args);
                }
                if args.iter().any(|a| a == "BLOCK") {
                    continue;
                }
                let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
                let r = store.execute(&refs);
                if let (true, Reply::Bulk(b)) = (args[0] == "XADD", &r) {
                    known.push(String::from_utf8_lossy(b).into());
                }
                let name = if args[0] == "XGROUP" || args[0] == "XINFO" {
                    format!("{} {}", args[0], args.get(1).cloned().unwrap_or_default())
                } else {
                    args[0].clone()
                };
                let e = hist.entry(name).or_default();
                e.0 += 1;
                if let Reply::Error(m) = &r {
                    e.1 += 1;
                    *errs
                        .entry(format!(
                            "{} :: {}",
                            args[0],
                            m.line().chars().take(50).collect::<String>()
                        ))
                        .or_default() += 1;
                }
            }
        }
    }
    for (k, (n, e)) in hist {
        println!("{k:28} {n:5} errors {e:5}");
    }
    for (k, n) in errs {
        println!("{n:5} {k}");
    }
}
