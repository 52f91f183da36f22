//! The operations of the model-based tests: the values, keys and IDs they pick, the
//! `Op` enum, and the strategies that generate them.

use super::*;

pub(crate) const KEYS: [&str; 2] = ["s0", "s1"];
pub(crate) const GROUPS: [&str; 3] = ["g1", "g2", "g3"];
pub(crate) const CONSUMERS: [&str; 3] = ["c1", "c2", "c3"];
pub(crate) const FIELDS: [&str; 5] = ["a", "b", "c", "12", "-1"];
pub(crate) const MS: [u64; 11] = [
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
pub(crate) const SEQ: [u64; 6] = [0, 1, 2, 5, u64::MAX - 1, u64::MAX];

pub(crate) fn value(i: u8) -> Vec<u8> {
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
pub(crate) enum IdSel {
    Known(u16),
    /// An ID pending in some group of the key (falls back to `Known`).
    Pel(u16),
    Near(u16, u8),
    Raw(u8, u8),
}

#[derive(Clone, Debug)]
pub(crate) enum XId {
    Auto,
    Raw(IdSel),
    MsStar(u8),
    AfterLast(u8),
    Zero,
}

#[derive(Clone, Debug)]
pub(crate) struct TrimSpec {
    pub(crate) maxlen: Option<u8>,
    pub(crate) minid: IdSel,
    pub(crate) approx: u8,
    pub(crate) limit: Option<u8>,
    pub(crate) policy: Option<u8>,
}

#[derive(Clone, Debug)]
pub(crate) enum RgId {
    Gt,
    Id(IdSel),
    Zero,
}

#[derive(Clone, Debug)]
pub(crate) enum RId {
    Dollar,
    Plus,
    Id(IdSel),
    Zero,
}

#[derive(Clone, Debug)]
pub(crate) enum GId {
    Dollar,
    Id(IdSel),
    Zero,
    Minus,
    Plus,
}

#[derive(Clone, Debug)]
pub(crate) enum Bound {
    Minus,
    Plus,
    Incl(IdSel),
    Excl(IdSel),
    MsOnly(IdSel),
}

#[derive(Clone, Debug)]
pub(crate) enum Op {
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

pub(crate) fn idsel() -> impl Strategy<Value = IdSel> {
    prop_oneof![
        5 => any::<u16>().prop_map(IdSel::Known),
        4 => any::<u16>().prop_map(IdSel::Pel),
        3 => (any::<u16>(), any::<u8>()).prop_map(|(a, b)| IdSel::Near(a, b)),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| IdSel::Raw(a, b)),
    ]
}

pub(crate) fn ids(max: usize) -> impl Strategy<Value = Vec<IdSel>> {
    prop::collection::vec(idsel(), 1..=max)
}

pub(crate) fn bound() -> impl Strategy<Value = Bound> {
    prop_oneof![
        2 => Just(Bound::Minus),
        2 => Just(Bound::Plus),
        3 => idsel().prop_map(Bound::Incl),
        2 => idsel().prop_map(Bound::Excl),
        1 => idsel().prop_map(Bound::MsOnly),
    ]
}

pub(crate) fn trim_spec() -> impl Strategy<Value = TrimSpec> {
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

pub(crate) fn xid() -> impl Strategy<Value = XId> {
    prop_oneof![
        6 => Just(XId::Auto),
        3 => any::<u8>().prop_map(XId::AfterLast),
        2 => idsel().prop_map(XId::Raw),
        2 => any::<u8>().prop_map(XId::MsStar),
        1 => Just(XId::Zero),
    ]
}

pub(crate) fn key() -> impl Strategy<Value = u8> {
    prop_oneof![4 => Just(0u8), 1 => Just(1u8)]
}

pub(crate) fn op() -> impl Strategy<Value = Op> {
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
