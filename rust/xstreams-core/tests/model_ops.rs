//! Model-based tests: random command sequences run through `Store::execute` and through
//! a literal reference model of Redis 8.8 (`support/model.rs`, written from t_stream.c).
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

#[path = "support/model.rs"]
mod model;

use model::*;
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, FileFailurePersistence};
use xstreams_core::db::Value;
use xstreams_core::{Config, Reply, Store, StreamId};

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

// ------------------------------------------------------------------ operations

const KEYS: [&str; 2] = ["s0", "s1"];
const GROUPS: [&str; 3] = ["g1", "g2", "g3"];
const CONSUMERS: [&str; 3] = ["c1", "c2", "c3"];
const FIELDS: [&str; 5] = ["a", "b", "c", "12", "-1"];
const MS: [u64; 11] = [
    0,
    1,
    2,
    3,
    BASE as u64 - 1,
    BASE as u64,
    BASE as u64 + 1,
    BASE as u64 + 2,
    BASE as u64 + 1000,
    u64::MAX - 1,
    u64::MAX,
];
const SEQ: [u64; 6] = [0, 1, 2, 5, u64::MAX - 1, u64::MAX];

fn value(i: u8) -> Vec<u8> {
    match i % 8 {
        0 => b"x".to_vec(),
        1 => b"1".to_vec(),
        2 => b"12345678901".to_vec(),
        3 => b"".to_vec(),
        4 => vec![b'v'; 70],
        5 => b"-5".to_vec(),
        6 => b"0123".to_vec(),
        _ => vec![b'w'; if i > 200 { 4100 } else { 130 }],
    }
}

#[derive(Clone, Debug)]
enum IdSel {
    Known(u16),
    /// An ID pending in some group of the key (falls back to `Known`).
    Pel(u16),
    Near(u16, u8),
    Raw(u8, u8),
}

#[derive(Clone, Debug)]
enum XId {
    Auto,
    Raw(IdSel),
    MsStar(u8),
    AfterLast(u8),
    Zero,
}

#[derive(Clone, Debug)]
struct TrimSpec {
    maxlen: Option<u8>,
    minid: IdSel,
    approx: u8,
    limit: Option<u8>,
    policy: Option<u8>,
}

#[derive(Clone, Debug)]
enum RgId {
    Gt,
    Id(IdSel),
    Zero,
}

#[derive(Clone, Debug)]
enum RId {
    Dollar,
    Plus,
    Id(IdSel),
    Zero,
}

#[derive(Clone, Debug)]
enum GId {
    Dollar,
    Id(IdSel),
    Zero,
    Minus,
    Plus,
}

#[derive(Clone, Debug)]
enum Bound {
    Minus,
    Plus,
    Incl(IdSel),
    Excl(IdSel),
    MsOnly(IdSel),
}

#[derive(Clone, Debug)]
enum Op {
    Xadd {
        key: u8,
        nomk: bool,
        id: XId,
        pairs: Vec<(u8, u8)>,
        trim: Option<TrimSpec>,
        idmp: Option<(u8, Option<u8>)>,
    },
    Xtrim {
        key: u8,
        trim: TrimSpec,
    },
    Xdel {
        key: u8,
        ids: Vec<IdSel>,
    },
    Xdelex {
        key: u8,
        policy: Option<u8>,
        ids: Vec<IdSel>,
    },
    Xack {
        key: u8,
        group: u8,
        ids: Vec<IdSel>,
    },
    Xackdel {
        key: u8,
        group: u8,
        policy: Option<u8>,
        ids: Vec<IdSel>,
    },
    Xnack {
        key: u8,
        group: u8,
        mode: u8,
        ids: Vec<IdSel>,
        retry: Option<u8>,
        force: bool,
    },
    Create {
        key: u8,
        group: u8,
        id: GId,
        mkstream: bool,
        er: Option<u8>,
    },
    SetId {
        key: u8,
        group: u8,
        id: GId,
        er: Option<u8>,
    },
    Destroy {
        key: u8,
        group: u8,
    },
    CreateConsumer {
        key: u8,
        group: u8,
        consumer: u8,
    },
    DelConsumer {
        key: u8,
        group: u8,
        consumer: u8,
    },
    ReadGroup {
        group: u8,
        consumer: u8,
        count: Option<u8>,
        claim: Option<u8>,
        noack: bool,
        streams: Vec<(u8, RgId)>,
    },
    Read {
        count: Option<u8>,
        streams: Vec<(u8, RId)>,
    },
    Claim {
        key: u8,
        group: u8,
        consumer: u8,
        minidle: u8,
        ids: Vec<IdSel>,
        idle: Option<u8>,
        time: Option<u8>,
        retry: Option<u8>,
        force: bool,
        justid: bool,
        lastid: Option<IdSel>,
    },
    AutoClaim {
        key: u8,
        group: u8,
        consumer: u8,
        minidle: u8,
        start: Bound,
        count: Option<u8>,
        justid: bool,
    },
    PendingSummary {
        key: u8,
        group: u8,
    },
    PendingExt {
        key: u8,
        group: u8,
        idle: Option<u8>,
        start: Bound,
        end: Bound,
        count: u8,
        consumer: Option<u8>,
    },
    Range {
        key: u8,
        rev: bool,
        start: Bound,
        end: Bound,
        count: Option<u8>,
    },
    Len {
        key: u8,
    },
    InfoGroups {
        key: u8,
    },
    InfoStream {
        key: u8,
    },
    InfoConsumers {
        key: u8,
        group: u8,
    },
    InfoFull {
        key: u8,
        count: Option<u8>,
    },
    SetIdStream {
        key: u8,
        id: u8,
        raw: IdSel,
        ea: Option<u8>,
        md: Option<IdSel>,
    },
    CfgSet {
        key: u8,
        dur: Option<u8>,
        max: Option<u8>,
    },
    IdmpRecord {
        key: u8,
        pid: u8,
        iid: u8,
        id: IdSel,
    },
    Del {
        key: u8,
    },
    Advance(u8),
    Sweep,
}

fn idsel() -> impl Strategy<Value = IdSel> {
    prop_oneof![
        5 => any::<u16>().prop_map(IdSel::Known),
        4 => any::<u16>().prop_map(IdSel::Pel),
        3 => (any::<u16>(), any::<u8>()).prop_map(|(a, b)| IdSel::Near(a, b)),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| IdSel::Raw(a, b)),
    ]
}

fn ids(max: usize) -> impl Strategy<Value = Vec<IdSel>> {
    prop::collection::vec(idsel(), 1..=max)
}

fn bound() -> impl Strategy<Value = Bound> {
    prop_oneof![
        2 => Just(Bound::Minus),
        2 => Just(Bound::Plus),
        3 => idsel().prop_map(Bound::Incl),
        2 => idsel().prop_map(Bound::Excl),
        1 => idsel().prop_map(Bound::MsOnly),
    ]
}

fn trim_spec() -> impl Strategy<Value = TrimSpec> {
    (
        prop::option::weighted(0.6, 0u8..8),
        idsel(),
        0u8..3,
        prop::option::weighted(0.25, any::<u8>()),
        prop::option::weighted(0.6, 0u8..3),
    )
        .prop_map(|(maxlen, minid, approx, limit, policy)| TrimSpec {
            maxlen,
            minid,
            approx,
            limit,
            policy,
        })
}

fn xid() -> impl Strategy<Value = XId> {
    prop_oneof![
        6 => Just(XId::Auto),
        3 => any::<u8>().prop_map(XId::AfterLast),
        2 => idsel().prop_map(XId::Raw),
        2 => any::<u8>().prop_map(XId::MsStar),
        1 => Just(XId::Zero),
    ]
}

fn key() -> impl Strategy<Value = u8> {
    prop_oneof![4 => Just(0u8), 1 => Just(1u8)]
}

fn op() -> impl Strategy<Value = Op> {
    let g = prop_oneof![6 => Just(0u8), 3 => Just(1u8), 1 => Just(2u8)];
    let c = 0u8..3;
    prop_oneof![
        22 => (
            key(),
            prop::bool::weighted(0.05),
            xid(),
            prop::collection::vec((0u8..5, any::<u8>()), 1..=3),
            prop::option::weighted(0.25, trim_spec()),
            prop::option::weighted(0.12, (0u8..2, prop::option::weighted(0.7, 0u8..6))),
        )
            .prop_map(|(key, nomk, id, pairs, trim, idmp)| Op::Xadd { key, nomk, id, pairs, trim, idmp }),
        3 => (key(), trim_spec()).prop_map(|(key, trim)| Op::Xtrim { key, trim }),
        3 => (key(), ids(3)).prop_map(|(key, ids)| Op::Xdel { key, ids }),
        3 => (key(), prop::option::of(0u8..3), ids(3)).prop_map(|(key, policy, ids)| Op::Xdelex { key, policy, ids }),
        3 => (key(), g.clone(), ids(3)).prop_map(|(key, group, ids)| Op::Xack { key, group, ids }),
        3 => (key(), g.clone(), prop::option::of(0u8..3), ids(3))
            .prop_map(|(key, group, policy, ids)| Op::Xackdel { key, group, policy, ids }),
        5 => (key(), g.clone(), 0u8..3, ids(4), prop::option::weighted(0.3, 0u8..5), any::<bool>())
            .prop_map(|(key, group, mode, ids, retry, force)| Op::Xnack { key, group, mode, ids, retry, force }),
        5 => (
            key(),
            g.clone(),
            prop_oneof![3 => Just(GId::Dollar), 2 => Just(GId::Zero), 2 => idsel().prop_map(GId::Id)],
            prop::bool::weighted(0.5),
            prop::option::weighted(0.3, 0u8..6),
        )
            .prop_map(|(key, group, id, mkstream, er)| Op::Create { key, group, id, mkstream, er }),
        2 => (
            key(),
            g.clone(),
            prop_oneof![
                2 => Just(GId::Dollar),
                2 => Just(GId::Zero),
                1 => Just(GId::Minus),
                1 => Just(GId::Plus),
                3 => idsel().prop_map(GId::Id)
            ],
            prop::option::weighted(0.5, 0u8..6),
        )
            .prop_map(|(key, group, id, er)| Op::SetId { key, group, id, er }),
        1 => (key(), g.clone()).prop_map(|(key, group)| Op::Destroy { key, group }),
        1 => (key(), g.clone(), c.clone()).prop_map(|(key, group, consumer)| Op::CreateConsumer { key, group, consumer }),
        1 => (key(), g.clone(), c.clone()).prop_map(|(key, group, consumer)| Op::DelConsumer { key, group, consumer }),
        14 => (
            g.clone(),
            c.clone(),
            prop::option::weighted(0.6, 0u8..4),
            prop::option::weighted(0.4, 0u8..6),
            prop::bool::weighted(0.15),
            prop::collection::vec(
                (key(), prop_oneof![6 => Just(RgId::Gt), 2 => Just(RgId::Zero), 2 => idsel().prop_map(RgId::Id)]),
                1..=2
            ),
        )
            .prop_map(|(group, consumer, count, claim, noack, streams)| Op::ReadGroup {
                group, consumer, count, claim, noack, streams
            }),
        2 => (
            prop::option::weighted(0.5, 0u8..4),
            prop::collection::vec(
                (key(), prop_oneof![
                    Just(RId::Dollar), Just(RId::Plus), Just(RId::Zero), idsel().prop_map(RId::Id)
                ]),
                1..=2
            ),
        )
            .prop_map(|(count, streams)| Op::Read { count, streams }),
        6 => (
            (key(), g.clone(), c.clone(), 0u8..6, ids(3)),
            (
                prop::option::weighted(0.25, 0u8..5),
                prop::option::weighted(0.2, 0u8..8),
                prop::option::weighted(0.25, 0u8..5),
                prop::bool::weighted(0.3),
                prop::bool::weighted(0.3),
                prop::option::weighted(0.1, idsel()),
            ),
        )
            .prop_map(|((key, group, consumer, minidle, ids), (idle, time, retry, force, justid, lastid))| Op::Claim {
                key, group, consumer, minidle, ids, idle, time, retry, force, justid, lastid
            }),
        4 => (
            key(),
            g.clone(),
            c.clone(),
            0u8..6,
            prop_oneof![3 => Just(Bound::Minus), 2 => idsel().prop_map(Bound::Incl), 1 => idsel().prop_map(Bound::Excl)],
            prop::option::weighted(0.5, 1u8..5),
            prop::bool::weighted(0.3),
        )
            .prop_map(|(key, group, consumer, minidle, start, count, justid)| Op::AutoClaim {
                key, group, consumer, minidle, start, count, justid
            }),
        2 => (key(), g.clone()).prop_map(|(key, group)| Op::PendingSummary { key, group }),
        3 => (
            key(),
            g.clone(),
            prop::option::weighted(0.3, 0u8..6),
            bound(),
            bound(),
            0u8..6,
            prop::option::weighted(0.3, 0u8..3),
        )
            .prop_map(|(key, group, idle, start, end, count, consumer)| Op::PendingExt {
                key, group, idle, start, end, count, consumer
            }),
        4 => (key(), any::<bool>(), bound(), bound(), prop::option::weighted(0.3, 0u8..5))
            .prop_map(|(key, rev, start, end, count)| Op::Range { key, rev, start, end, count }),
        1 => key().prop_map(|key| Op::Len { key }),
        2 => key().prop_map(|key| Op::InfoGroups { key }),
        2 => key().prop_map(|key| Op::InfoStream { key }),
        1 => (key(), g.clone()).prop_map(|(key, group)| Op::InfoConsumers { key, group }),
        2 => (key(), prop::option::of(0u8..4)).prop_map(|(key, count)| Op::InfoFull { key, count }),
        1 => (key(), 0u8..5, idsel(), prop::option::weighted(0.3, 0u8..5), prop::option::weighted(0.2, idsel()))
            .prop_map(|(key, id, raw, ea, md)| Op::SetIdStream { key, id, raw, ea, md }),
        1 => (key(), prop::option::of(0u8..3), prop::option::of(0u8..4))
            .prop_map(|(key, dur, max)| Op::CfgSet { key, dur, max }),
        1 => (key(), 0u8..2, 0u8..6, idsel()).prop_map(|(key, pid, iid, id)| Op::IdmpRecord { key, pid, iid, id }),
        1 => (key(), 0u8..10).prop_map(|(key, d)| if d == 0 { Op::Del { key } } else { Op::Len { key } }),
        8 => (0u8..8).prop_map(Op::Advance),
        1 => Just(Op::Sweep),
    ]
}

// ------------------------------------------------------------------ the harness

struct Harness {
    /// Also require `store.validate()` after every command.
    check_validate: bool,
    store: Store,
    model: Model,
    now: i64,
    known: Vec<StreamId>,
    log: Vec<String>,
}

fn policy_of(p: Option<u8>) -> (Option<&'static str>, Policy) {
    match p {
        None => (None, Policy::KeepRef),
        Some(0) => (Some("KEEPREF"), Policy::KeepRef),
        Some(1) => (Some("DELREF"), Policy::DelRef),
        _ => (Some("ACKED"), Policy::Acked),
    }
}

fn s(id: StreamId) -> String {
    format!("{}-{}", id.ms, id.seq)
}

impl Harness {
    fn new(cfg: Config) -> Self {
        let store = Store::new(cfg.clone());
        store.set_clock(Some(BASE));
        let model = Model::new(NodeCfg {
            max_entries: cfg.stream_node_max_entries,
            max_bytes: cfg.stream_node_max_bytes,
            idmp_duration: cfg.stream_idmp_duration as u64,
            idmp_maxsize: cfg.stream_idmp_maxsize as u64,
        });
        Harness {
            check_validate: true,
            store,
            model,
            now: BASE,
            known: vec![StreamId::new(1, 0)],
            log: Vec::new(),
        }
    }

    fn id(&self, sel: &IdSel) -> StreamId {
        let k = |i: u16| self.known[i as usize % self.known.len()];
        match *sel {
            IdSel::Known(i) => k(i),
            IdSel::Pel(i) => {
                let pending: Vec<StreamId> = self
                    .model
                    .keys
                    .values()
                    .flat_map(|s| s.groups.values().flat_map(|g| g.pel.keys().copied()))
                    .collect();
                if pending.is_empty() {
                    k(i)
                } else {
                    pending[i as usize % pending.len()]
                }
            }
            IdSel::Near(i, d) => {
                let b = k(i);
                match d % 6 {
                    0 => incr(b).unwrap_or(b),
                    1 => decr(b).unwrap_or(b),
                    2 => StreamId::new(b.ms, 0),
                    3 => StreamId::new(b.ms, u64::MAX),
                    4 => StreamId::new(b.ms.saturating_add(1), 0),
                    _ => b,
                }
            }
            IdSel::Raw(a, b) => {
                StreamId::new(MS[a as usize % MS.len()], SEQ[b as usize % SEQ.len()])
            }
        }
    }

    fn last_id(&self, key: &str) -> StreamId {
        self.model
            .keys
            .get(key.as_bytes())
            .map(|s| s.last_id)
            .unwrap_or(MIN)
    }

    fn bound(&self, b: &Bound, is_start: bool) -> (String, Result<StreamId, ()>) {
        match b {
            Bound::Minus => ("-".into(), Ok(MIN)),
            Bound::Plus => ("+".into(), Ok(MAX)),
            Bound::Incl(i) => {
                let id = self.id(i);
                (s(id), Ok(id))
            }
            Bound::Excl(i) => {
                let id = self.id(i);
                let r = if is_start { incr(id) } else { decr(id) };
                (format!("({}", s(id)), r.ok_or(()))
            }
            Bound::MsOnly(i) => {
                let id = self.id(i);
                let seq = if is_start { 0 } else { u64::MAX };
                (id.ms.to_string(), Ok(StreamId::new(id.ms, seq)))
            }
        }
    }

    fn trim(&self, t: &TrimSpec, args: &mut Vec<String>) -> Result<Trim, Reply> {
        let approx = t.approx == 2;
        let strategy = match t.maxlen {
            Some(n) => {
                args.push("MAXLEN".into());
                TrimBy::MaxLen(n as u64)
            }
            None => {
                args.push("MINID".into());
                TrimBy::MinId(self.id(&t.minid))
            }
        };
        match t.approx {
            1 => args.push("=".into()),
            2 => args.push("~".into()),
            _ => {}
        }
        args.push(match strategy {
            TrimBy::MaxLen(n) => n.to_string(),
            TrimBy::MinId(id) => s(id),
        });
        let limit = t.limit.map(|l| [0u64, 1, 2, 5, 100][l as usize % 5]);
        if let Some(l) = limit {
            args.push("LIMIT".into());
            args.push(l.to_string());
        }
        let (pname, policy) = policy_of(t.policy);
        if let Some(p) = pname {
            args.push(p.into());
        }
        if limit.is_some() && !approx {
            return Err(err(
                "ERR syntax error, LIMIT cannot be used without the special ~",
            ));
        }
        Ok(Trim {
            strategy,
            approx,
            limit: self.model.default_trim_limit(approx, limit),
            policy,
        })
    }

    /// Build the command and the model's expected reply.
    fn prepare(&mut self, op: &Op) -> Option<(Vec<String>, Reply)> {
        let now = self.now;
        if !matches!(op, Op::Advance(_) | Op::Sweep) {
            self.model.cron(now);
        }
        Some(match op {
            Op::Advance(i) => {
                let d = [0i64, 1, 7, 100, 999, 1000, 5000, 100_000][*i as usize % 8];
                self.now += d;
                self.store.advance_clock(d);
                self.log.push(format!("<advance {d}>"));
                return None;
            }
            Op::Sweep => {
                self.store.sweep();
                self.model.sweep(self.now);
                self.log.push("<sweep>".into());
                return None;
            }
            Op::Xadd {
                key,
                nomk,
                id,
                pairs,
                trim,
                idmp,
            } => {
                let k = KEYS[*key as usize];
                let mut args = vec!["XADD".to_string(), k.to_string()];
                if *nomk {
                    args.push("NOMKSTREAM".into());
                }
                let mut idmp_m = None;
                if let Some((pid, iid)) = idmp {
                    let pid = format!("p{pid}");
                    match iid {
                        Some(i) => {
                            let iid = format!("i{i}");
                            args.extend(["IDMP".into(), pid.clone(), iid.clone()]);
                            idmp_m = Some((pid.into_bytes(), Some(iid.into_bytes())));
                        }
                        None => {
                            args.extend(["IDMPAUTO".into(), pid.clone()]);
                            idmp_m = Some((pid.into_bytes(), None));
                        }
                    }
                }
                let trim_m = trim.as_ref().map(|t| self.trim(t, &mut args));
                let last = self.last_id(k);
                let (idarg, spec) = match id {
                    XId::Auto => ("*".to_string(), AddId::Auto),
                    XId::Zero => ("0-0".to_string(), AddId::Given(MIN)),
                    XId::Raw(sel) => {
                        let i = self.id(sel);
                        (s(i), AddId::Given(i))
                    }
                    XId::AfterLast(d) => {
                        let d = *d as u64 % 4;
                        let i = match last.seq.checked_add(d + 1) {
                            Some(q) => StreamId::new(last.ms, q),
                            None => StreamId::new(last.ms.saturating_add(1), d),
                        };
                        (s(i), AddId::Given(i))
                    }
                    XId::MsStar(sel) => {
                        let ms = match sel % 4 {
                            0 => last.ms,
                            1 => last.ms.saturating_add(1),
                            2 => self.now as u64,
                            _ => MS[*sel as usize % MS.len()],
                        };
                        (format!("{ms}-*"), AddId::MsStar(ms))
                    }
                };
                args.push(idarg);
                let pairs: Vec<(Vec<u8>, Vec<u8>)> = pairs
                    .iter()
                    .map(|(f, v)| (FIELDS[*f as usize].as_bytes().to_vec(), value(*v)))
                    .collect();
                for (f, v) in &pairs {
                    args.push(String::from_utf8(f.clone()).unwrap());
                    args.push(String::from_utf8(v.clone()).unwrap());
                }
                let expected = if idmp_m.is_some() && !matches!(spec, AddId::Auto) {
                    err("ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs")
                } else {
                    match trim_m {
                        Some(Err(e)) => e,
                        t => {
                            let t = t.map(|x| x.unwrap());
                            self.model
                                .xadd(now, k.as_bytes(), *nomk, spec, &pairs, t, idmp_m)
                        }
                    }
                };
                if let Reply::Bulk(b) = &expected {
                    let t = String::from_utf8(b.clone()).unwrap();
                    let (a, b) = t.split_once('-').unwrap();
                    let id = StreamId::new(a.parse().unwrap(), b.parse().unwrap());
                    if !self.known.contains(&id) {
                        self.known.push(id);
                    }
                }
                (args, expected)
            }
            Op::Xtrim { key, trim } => {
                let k = KEYS[*key as usize];
                let mut args = vec!["XTRIM".to_string(), k.to_string()];
                let expected = match self.trim(trim, &mut args) {
                    Err(e) => e,
                    Ok(t) => self.model.xtrim(k.as_bytes(), t),
                };
                (args, expected)
            }
            Op::Xdel { key, ids } => {
                let k = KEYS[*key as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let mut args = vec!["XDEL".to_string(), k.to_string()];
                args.extend(ids.iter().map(|i| s(*i)));
                (args, self.model.xdel(k.as_bytes(), &ids))
            }
            Op::Xdelex { key, policy, ids } => {
                let k = KEYS[*key as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let (pn, p) = policy_of(*policy);
                let mut args = vec!["XDELEX".to_string(), k.to_string()];
                if let Some(pn) = pn {
                    args.push(pn.into());
                }
                args.push("IDS".into());
                args.push(ids.len().to_string());
                args.extend(ids.iter().map(|i| s(*i)));
                (args, self.model.xdelex(k.as_bytes(), p, &ids))
            }
            Op::Xack { key, group, ids } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let mut args = vec!["XACK".to_string(), k.to_string(), g.to_string()];
                args.extend(ids.iter().map(|i| s(*i)));
                (args, self.model.xack(k.as_bytes(), g.as_bytes(), &ids))
            }
            Op::Xackdel {
                key,
                group,
                policy,
                ids,
            } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let (pn, p) = policy_of(*policy);
                let mut args = vec!["XACKDEL".to_string(), k.to_string(), g.to_string()];
                if let Some(pn) = pn {
                    args.push(pn.into());
                }
                args.push("IDS".into());
                args.push(ids.len().to_string());
                args.extend(ids.iter().map(|i| s(*i)));
                (
                    args,
                    self.model.xackdel(k.as_bytes(), g.as_bytes(), p, &ids),
                )
            }
            Op::Xnack {
                key,
                group,
                mode,
                ids,
                retry,
                force,
            } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let (mn, mm) = match mode {
                    0 => ("SILENT", NackMode::Silent),
                    1 => ("FAIL", NackMode::Fail),
                    _ => ("FATAL", NackMode::Fatal),
                };
                let mut args = vec!["XNACK".to_string(), k.to_string(), g.to_string(), mn.into()];
                args.push("IDS".into());
                args.push(ids.len().to_string());
                args.extend(ids.iter().map(|i| s(*i)));
                let retry = retry.map(|r| [0u64, 1, 2, 7, i64::MAX as u64][r as usize % 5]);
                if let Some(r) = retry {
                    args.push("RETRYCOUNT".into());
                    args.push(r.to_string());
                }
                if *force {
                    args.push("FORCE".into());
                }
                (
                    args,
                    self.model
                        .xnack(k.as_bytes(), g.as_bytes(), mm, &ids, retry, *force),
                )
            }
            Op::Create {
                key,
                group,
                id,
                mkstream,
                er,
            } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let (a, gid) = self.gid(id);
                let mut args = vec![
                    "XGROUP".to_string(),
                    "CREATE".into(),
                    k.to_string(),
                    g.to_string(),
                    a,
                ];
                if *mkstream {
                    args.push("MKSTREAM".into());
                }
                let er = self.er(*er, &mut args);
                (
                    args,
                    self.model
                        .xgroup_create(now, k.as_bytes(), g.as_bytes(), gid, *mkstream, er),
                )
            }
            Op::SetId { key, group, id, er } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                let (a, gid) = self.gid(id);
                let mut args = vec![
                    "XGROUP".to_string(),
                    "SETID".into(),
                    k.to_string(),
                    g.to_string(),
                    a,
                ];
                let er = self.er(*er, &mut args);
                (
                    args,
                    self.model.xgroup_setid(k.as_bytes(), g.as_bytes(), gid, er),
                )
            }
            Op::Destroy { key, group } => {
                let k = KEYS[*key as usize];
                let g = GROUPS[*group as usize];
                (
                    vec!["XGROUP".into(), "DESTROY".into(), k.into(), g.into()],
                    self.model.xgroup_destroy(k.as_bytes(), g.as_bytes()),
                )
            }
            Op::CreateConsumer {
                key,
                group,
                consumer,
            } => {
                let (k, g, c) = (
                    KEYS[*key as usize],
                    GROUPS[*group as usize],
                    CONSUMERS[*consumer as usize],
                );
                (
                    vec![
                        "XGROUP".into(),
                        "CREATECONSUMER".into(),
                        k.into(),
                        g.into(),
                        c.into(),
                    ],
                    self.model
                        .xgroup_createconsumer(now, k.as_bytes(), g.as_bytes(), c.as_bytes()),
                )
            }
            Op::DelConsumer {
                key,
                group,
                consumer,
            } => {
                let (k, g, c) = (
                    KEYS[*key as usize],
                    GROUPS[*group as usize],
                    CONSUMERS[*consumer as usize],
                );
                (
                    vec![
                        "XGROUP".into(),
                        "DELCONSUMER".into(),
                        k.into(),
                        g.into(),
                        c.into(),
                    ],
                    self.model
                        .xgroup_delconsumer(k.as_bytes(), g.as_bytes(), c.as_bytes()),
                )
            }
            Op::ReadGroup {
                group,
                consumer,
                count,
                claim,
                noack,
                streams,
            } => {
                let g = GROUPS[*group as usize];
                let c = CONSUMERS[*consumer as usize];
                let mut args = vec!["XREADGROUP".to_string(), "GROUP".into(), g.into(), c.into()];
                if let Some(n) = count {
                    args.push("COUNT".into());
                    args.push(n.to_string());
                }
                let claim = claim.map(|i| [0i64, 1, 10, 100, 1000, 50_000][i as usize % 6]);
                if let Some(m) = claim {
                    args.push("CLAIM".into());
                    args.push(m.to_string());
                }
                if *noack {
                    args.push("NOACK".into());
                }
                args.push("STREAMS".into());
                let mut ms = Vec::new();
                for (k, _) in streams {
                    args.push(KEYS[*k as usize].into());
                }
                for (k, r) in streams {
                    let (a, rr) = match r {
                        RgId::Gt => (">".to_string(), ReadId::Gt),
                        RgId::Zero => ("0".to_string(), ReadId::Id(MIN)),
                        RgId::Id(sel) => {
                            let i = self.id(sel);
                            (s(i), ReadId::Id(i))
                        }
                    };
                    args.push(a);
                    ms.push((KEYS[*k as usize].as_bytes().to_vec(), rr));
                }
                (
                    args,
                    self.model.xreadgroup(
                        now,
                        g.as_bytes(),
                        c.as_bytes(),
                        count.map(|c| c as u64).unwrap_or(0),
                        claim,
                        *noack,
                        &ms,
                    ),
                )
            }
            Op::Read { count, streams } => {
                let mut args = vec!["XREAD".to_string()];
                if let Some(n) = count {
                    args.push("COUNT".into());
                    args.push(n.to_string());
                }
                args.push("STREAMS".into());
                let mut ms = Vec::new();
                for (k, _) in streams {
                    args.push(KEYS[*k as usize].into());
                }
                for (k, r) in streams {
                    let (a, rr) = match r {
                        RId::Dollar => ("$".to_string(), ReadId::Dollar),
                        RId::Plus => ("+".to_string(), ReadId::Plus),
                        RId::Zero => ("0-0".to_string(), ReadId::Id(MIN)),
                        RId::Id(sel) => {
                            let i = self.id(sel);
                            (s(i), ReadId::Id(i))
                        }
                    };
                    args.push(a);
                    ms.push((KEYS[*k as usize].as_bytes().to_vec(), rr));
                }
                (
                    args,
                    self.model.xread(count.map(|c| c as u64).unwrap_or(0), &ms),
                )
            }
            Op::Claim {
                key,
                group,
                consumer,
                minidle,
                ids,
                idle,
                time,
                retry,
                force,
                justid,
                lastid,
            } => {
                let (k, g, c) = (
                    KEYS[*key as usize],
                    GROUPS[*group as usize],
                    CONSUMERS[*consumer as usize],
                );
                let minidle = [0i64, 1, 50, 1000, 10_000, -5][*minidle as usize % 6];
                let ids: Vec<StreamId> = ids.iter().map(|i| self.id(i)).collect();
                let mut args = vec![
                    "XCLAIM".to_string(),
                    k.into(),
                    g.into(),
                    c.into(),
                    minidle.to_string(),
                ];
                args.extend(ids.iter().map(|i| s(*i)));
                let mut dt: i64 = -1;
                if let Some(i) = idle {
                    let v = [0i64, 10, 1000, 100_000, -5][*i as usize % 5];
                    args.push("IDLE".into());
                    args.push(v.to_string());
                    dt = now - v;
                }
                if let Some(t) = time {
                    let v =
                        [0i64, 1, now - 10, now - 5000, now, now + 1000, -1, -100][*t as usize % 8];
                    args.push("TIME".into());
                    args.push(v.to_string());
                    dt = v;
                }
                let mut rc: i64 = -1;
                if let Some(r) = retry {
                    rc = [0i64, 1, 3, i64::MAX, -1][*r as usize % 5];
                    args.push("RETRYCOUNT".into());
                    args.push(rc.to_string());
                }
                if *force {
                    args.push("FORCE".into());
                }
                if *justid {
                    args.push("JUSTID".into());
                }
                let mut last = MIN;
                if let Some(l) = lastid {
                    last = self.id(l);
                    args.push("LASTID".into());
                    args.push(s(last));
                }
                (
                    args,
                    self.model.xclaim(
                        now,
                        k.as_bytes(),
                        g.as_bytes(),
                        c.as_bytes(),
                        minidle,
                        &ids,
                        dt,
                        rc,
                        *force,
                        *justid,
                        last,
                    ),
                )
            }
            Op::AutoClaim {
                key,
                group,
                consumer,
                minidle,
                start,
                count,
                justid,
            } => {
                let (k, g, c) = (
                    KEYS[*key as usize],
                    GROUPS[*group as usize],
                    CONSUMERS[*consumer as usize],
                );
                let minidle = [0i64, 1, 50, 1000, 10_000, -5][*minidle as usize % 6];
                let (sa, st) = self.bound(start, true);
                let mut args = vec![
                    "XAUTOCLAIM".to_string(),
                    k.into(),
                    g.into(),
                    c.into(),
                    minidle.to_string(),
                    sa,
                ];
                if let Some(n) = count {
                    args.push("COUNT".into());
                    args.push(n.to_string());
                }
                if *justid {
                    args.push("JUSTID".into());
                }
                let expected = match st {
                    Err(()) => err("ERR invalid start ID for the interval"),
                    Ok(st) => self.model.xautoclaim(
                        now,
                        k.as_bytes(),
                        g.as_bytes(),
                        c.as_bytes(),
                        minidle,
                        st,
                        count.map(|c| c as i64).unwrap_or(100),
                        *justid,
                    ),
                };
                (args, expected)
            }
            Op::PendingSummary { key, group } => {
                let (k, g) = (KEYS[*key as usize], GROUPS[*group as usize]);
                (
                    vec!["XPENDING".into(), k.into(), g.into()],
                    self.model.xpending_summary(k.as_bytes(), g.as_bytes()),
                )
            }
            Op::PendingExt {
                key,
                group,
                idle,
                start,
                end,
                count,
                consumer,
            } => {
                let (k, g) = (KEYS[*key as usize], GROUPS[*group as usize]);
                let mut args = vec!["XPENDING".to_string(), k.into(), g.into()];
                let mut minidle = 0;
                if let Some(i) = idle {
                    minidle = [0i64, 1, 50, 1000, 100_000, -3][*i as usize % 6];
                    args.push("IDLE".into());
                    args.push(minidle.to_string());
                }
                let (sa, st) = self.bound(start, true);
                let (ea, en) = self.bound(end, false);
                let count = [0i64, 1, 2, 3, 100, -1][*count as usize % 6];
                args.push(sa);
                args.push(ea);
                args.push(count.to_string());
                let cname = consumer.map(|c| CONSUMERS[c as usize]);
                if let Some(c) = cname {
                    args.push(c.into());
                }
                let expected = match (st, en) {
                    (Err(()), _) => err("ERR invalid start ID for the interval"),
                    (_, Err(())) => err("ERR invalid end ID for the interval"),
                    (Ok(st), Ok(en)) => self.model.xpending_ext(
                        now,
                        k.as_bytes(),
                        g.as_bytes(),
                        minidle,
                        st,
                        en,
                        count,
                        cname.map(|c| c.as_bytes()),
                    ),
                };
                (args, expected)
            }
            Op::Range {
                key,
                rev,
                start,
                end,
                count,
            } => {
                let k = KEYS[*key as usize];
                let (sa, st) = self.bound(start, true);
                let (ea, en) = self.bound(end, false);
                let mut args = vec![
                    if *rev { "XREVRANGE" } else { "XRANGE" }.to_string(),
                    k.into(),
                ];
                if *rev {
                    args.push(ea);
                    args.push(sa);
                } else {
                    args.push(sa);
                    args.push(ea);
                }
                let count = count.map(|c| [0i64, 1, 2, 5, -1][c as usize % 5]);
                if let Some(c) = count {
                    args.push("COUNT".into());
                    args.push(c.to_string());
                }
                let expected = match (st, en) {
                    (Err(()), _) => err("ERR invalid start ID for the interval"),
                    (_, Err(())) => err("ERR invalid end ID for the interval"),
                    (Ok(st), Ok(en)) => self.model.xrange(k.as_bytes(), st, en, count, *rev),
                };
                (args, expected)
            }
            Op::Len { key } => {
                let k = KEYS[*key as usize];
                (vec!["XLEN".into(), k.into()], self.model.xlen(k.as_bytes()))
            }
            Op::InfoGroups { key } => {
                let k = KEYS[*key as usize];
                (
                    vec!["XINFO".into(), "GROUPS".into(), k.into()],
                    self.model.xinfo_groups(k.as_bytes()),
                )
            }
            Op::InfoStream { key } => {
                let k = KEYS[*key as usize];
                (
                    vec!["XINFO".into(), "STREAM".into(), k.into()],
                    self.model.xinfo_stream(k.as_bytes()),
                )
            }
            Op::InfoConsumers { key, group } => {
                let (k, g) = (KEYS[*key as usize], GROUPS[*group as usize]);
                (
                    vec!["XINFO".into(), "CONSUMERS".into(), k.into(), g.into()],
                    self.model.xinfo_consumers(now, k.as_bytes(), g.as_bytes()),
                )
            }
            Op::InfoFull { key, count } => {
                let k = KEYS[*key as usize];
                let mut args = vec![
                    "XINFO".to_string(),
                    "STREAM".into(),
                    k.into(),
                    "FULL".into(),
                ];
                let count = count.map(|c| [0i64, 1, 3, -2][c as usize % 4]);
                if let Some(c) = count {
                    args.push("COUNT".into());
                    args.push(c.to_string());
                }
                (args, self.model.xinfo_full(k.as_bytes(), count))
            }
            Op::SetIdStream {
                key,
                id,
                raw,
                ea,
                md,
            } => {
                let k = KEYS[*key as usize];
                let st = self.model.keys.get(k.as_bytes());
                let last_live = st.and_then(|s| s.last_live()).unwrap_or(MIN);
                let last = self.last_id(k);
                let target = match id % 5 {
                    0 => last,
                    1 => last_live,
                    2 => incr(last_live).unwrap_or(last_live),
                    3 => incr(last).unwrap_or(last),
                    _ => self.id(raw),
                };
                let mut args = vec!["XSETID".to_string(), k.into(), s(target)];
                let ea = ea.map(|e| {
                    let (len, added) = st
                        .map(|s| (s.length as i64, s.entries_added as i64))
                        .unwrap_or((0, 0));
                    [0i64, len, added, added + 5, -1][e as usize % 5]
                });
                if let Some(e) = ea {
                    args.push("ENTRIESADDED".into());
                    args.push(e.to_string());
                }
                let md = md.as_ref().map(|m| self.id(m));
                if let Some(m) = md {
                    args.push("MAXDELETEDID".into());
                    args.push(s(m));
                }
                (args, self.model.xsetid(k.as_bytes(), target, ea, md))
            }
            Op::CfgSet { key, dur, max } => {
                let k = KEYS[*key as usize];
                let mut args = vec!["XCFGSET".to_string(), k.into()];
                let dur = dur.map(|d| [1u64, 2, 100][d as usize % 3]);
                let max = max.map(|d| [1u64, 2, 3, 100][d as usize % 4]);
                if let Some(d) = dur {
                    args.push("IDMP-DURATION".into());
                    args.push(d.to_string());
                }
                if let Some(m) = max {
                    args.push("IDMP-MAXSIZE".into());
                    args.push(m.to_string());
                }
                (args, self.model.xcfgset(k.as_bytes(), dur, max))
            }
            Op::IdmpRecord { key, pid, iid, id } => {
                let k = KEYS[*key as usize];
                let (p, i) = (format!("p{pid}"), format!("i{iid}"));
                let id = self.id(id);
                (
                    vec!["XIDMPRECORD".into(), k.into(), p.clone(), i.clone(), s(id)],
                    self.model
                        .xidmprecord(now, k.as_bytes(), p.as_bytes(), i.as_bytes(), id),
                )
            }
            Op::Del { key } => {
                let k = KEYS[*key as usize];
                (vec!["DEL".into(), k.into()], self.model.del(k.as_bytes()))
            }
        })
    }

    fn gid(&self, g: &GId) -> (String, GroupId) {
        match g {
            GId::Dollar => ("$".into(), GroupId::Dollar),
            GId::Zero => ("0".into(), GroupId::Id(MIN)),
            GId::Minus => ("-".into(), GroupId::Minus),
            GId::Plus => ("+".into(), GroupId::Plus),
            GId::Id(sel) => {
                let i = self.id(sel);
                (s(i), GroupId::Id(i))
            }
        }
    }

    fn er(&self, er: Option<u8>, args: &mut Vec<String>) -> i64 {
        match er {
            None => -1,
            Some(e) => {
                let v = [-1i64, 0, 1, 2, 5, 1000][e as usize % 6];
                args.push("ENTRIESREAD".into());
                args.push(v.to_string());
                v
            }
        }
    }

    fn step(&mut self, op: &Op) -> Result<(), String> {
        let Some((args, expected)) = self.prepare(op) else {
            return self.compare_state(matches!(op, Op::Sweep));
        };
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let got = self.store.execute(&refs);
        let short: Vec<String> = args
            .iter()
            .map(|a| {
                if a.len() > 20 {
                    format!("<{} bytes>", a.len())
                } else {
                    a.clone()
                }
            })
            .collect();
        self.log.push(short.join(" "));
        let ok = match (&got, &expected) {
            (Reply::Error(g), Reply::Error(e)) => g.starts_with(e.as_str()),
            (Reply::Map(g), Reply::Map(e)) if args[0] == "XINFO" && args[1] == "STREAM" => {
                let skip = ["radix-tree-nodes", "pids-tracked", "iids-tracked"];
                let g: Vec<_> = g
                    .iter()
                    .filter(|(k, _)| {
                        !skip
                            .iter()
                            .any(|s| *k == Reply::Bulk(s.as_bytes().to_vec()))
                    })
                    .cloned()
                    .collect();
                &g == e
            }
            _ => got == expected,
        };
        if !ok {
            return Err(format!(
                "reply mismatch for `{}`\n  engine: {:?}\n  model:  {:?}",
                short.join(" "),
                got,
                expected
            ));
        }
        if self.check_validate {
            self.store
                .validate()
                .map_err(|e| format!("validate() failed after `{}`: {e}", short.join(" ")))?;
        }
        self.compare_state(false)
    }

    fn compare_state(&self, idmp_contents: bool) -> Result<(), String> {
        for k in KEYS {
            let e = engine_snap(&self.store, k, idmp_contents);
            let m = self
                .model
                .keys
                .get(k.as_bytes())
                .map(|s| model_snap(s, idmp_contents));
            if e != m {
                return Err(format!(
                    "state mismatch on key {k} after `{}`\n  engine: {:#?}\n  model:  {:#?}",
                    self.log.last().cloned().unwrap_or_default(),
                    e,
                    m
                ));
            }
        }
        Ok(())
    }
}

// ------------------------------------------------------------------ snapshots

#[derive(Debug, PartialEq, Eq)]
struct NodeSnap {
    master: StreamId,
    last_any: StreamId,
    live: u64,
    deleted: u64,
    lp_bytes: u64,
}

#[derive(Debug, PartialEq, Eq)]
struct GroupSnap {
    name: String,
    last_id: StreamId,
    entries_read: i64,
    /// id, owner, delivery count, delivery time
    pel: Vec<(StreamId, Option<String>, u64, i64)>,
    time_order: Vec<StreamId>,
    nacked: u64,
    /// name, seen, active, pel
    consumers: Vec<(String, i64, i64, Vec<StreamId>)>,
}

/// pid -> [(iid, stream id)] in FIFO order.
type Producers = Vec<(Vec<u8>, Vec<(Vec<u8>, StreamId)>)>;

#[derive(Debug, PartialEq, Eq)]
struct Snap {
    nodes: Vec<NodeSnap>,
    length: u64,
    last_id: StreamId,
    first_id: StreamId,
    max_deleted: StreamId,
    entries_added: u64,
    groups: Vec<GroupSnap>,
    idmp: (u64, u64, u64, u64),
    producers: Option<Producers>,
}

fn st(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn engine_snap(store: &Store, key: &str, idmp_contents: bool) -> Option<Snap> {
    store.with_keyspace(|ks| {
        let e = ks.dbs[0].get(key.as_bytes())?;
        let Value::Stream(s) = &e.value else {
            panic!("not a stream")
        };
        let nodes = s
            .nodes()
            .map(|n| NodeSnap {
                master: n.master_id(),
                last_any: n.last_id_any(),
                live: n.live(),
                deleted: n.deleted(),
                lp_bytes: n.lp_bytes(),
            })
            .collect();
        let groups = s
            .groups
            .iter()
            .map(|(name, _, g)| GroupSnap {
                name: st(name),
                last_id: g.last_id,
                entries_read: g.entries_read,
                pel: g
                    .pel_range(MIN, MAX)
                    .map(|(id, p)| {
                        let r = g.record(p);
                        (
                            id,
                            r.consumer.map(|c| st(&g.consumer(c).name)),
                            r.delivery_count,
                            r.delivery_time,
                        )
                    })
                    .collect(),
                time_order: g.time_order().map(|(_, r)| r.id).collect(),
                nacked: g.nacked_count(),
                consumers: g
                    .consumers()
                    .map(|(_, c)| {
                        (
                            st(&c.name),
                            c.seen_time,
                            c.active_time,
                            c.pel.iter().copied().collect(),
                        )
                    })
                    .collect(),
            })
            .collect();
        let producers = idmp_contents.then(|| {
            s.idmp
                .producers()
                .map(|(pid, p)| {
                    (
                        pid.to_vec(),
                        p.iter().map(|(i, id)| (i.to_vec(), id)).collect(),
                    )
                })
                .collect()
        });
        Some(Snap {
            nodes,
            length: s.length,
            last_id: s.last_id,
            first_id: s.first_id,
            max_deleted: s.max_deleted_id,
            entries_added: s.entries_added,
            groups,
            idmp: (
                s.idmp.duration,
                s.idmp.maxsize,
                s.idmp.iids_added,
                s.idmp.iids_duplicates,
            ),
            producers,
        })
    })
}

fn model_snap(s: &MStream, idmp_contents: bool) -> Snap {
    Snap {
        nodes: s
            .nodes
            .iter()
            .map(|n| NodeSnap {
                master: n.master,
                last_any: n.last_any(),
                live: n.live(),
                deleted: n.deleted(),
                lp_bytes: n.lp_bytes(),
            })
            .collect(),
        length: s.length,
        last_id: s.last_id,
        first_id: s.first_id,
        max_deleted: s.max_deleted,
        entries_added: s.entries_added,
        groups: s
            .groups
            .iter()
            .map(|(name, g)| GroupSnap {
                name: st(name),
                last_id: g.last_id,
                entries_read: g.entries_read,
                pel: g
                    .pel
                    .iter()
                    .map(|(id, n)| (*id, n.owner.as_ref().map(|o| st(o)), n.count, n.time))
                    .collect(),
                time_order: g.time.clone(),
                nacked: g.nacked_count(),
                consumers: g
                    .consumers
                    .iter()
                    .map(|(n, c)| (st(n), c.seen, c.active, c.pel.iter().copied().collect()))
                    .collect(),
            })
            .collect(),
        idmp: (s.idmp_duration, s.idmp_maxsize, s.iids_added, s.iids_dups),
        producers: idmp_contents.then(|| {
            s.producers
                .iter()
                .map(|(p, q)| (p.clone(), q.iter().cloned().collect()))
                .collect()
        }),
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
        let engine = xstreams_core::idmp::auto_iid(&flat).to_vec();
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
