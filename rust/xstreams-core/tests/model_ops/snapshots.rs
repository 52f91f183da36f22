//! Snapshots of a stream's whole state, from the engine and from the model, compared
//! after every step.

use super::*;

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NodeSnap {
    pub(crate) master: StreamId,
    pub(crate) last_any: StreamId,
    pub(crate) live: u64,
    pub(crate) deleted: u64,
    pub(crate) lp_bytes: u64,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct GroupSnap {
    pub(crate) name: String,
    pub(crate) last_id: StreamId,
    pub(crate) entries_read: i64,
    /// id, owner, delivery count, delivery time
    pub(crate) pel: Vec<(StreamId, Option<String>, u64, i64)>,
    pub(crate) time_order: Vec<StreamId>,
    pub(crate) nacked: u64,
    /// name, seen, active, pel
    pub(crate) consumers: Vec<(String, i64, i64, Vec<StreamId>)>,
}

/// pid -> [(iid, stream id)] in FIFO order.
pub(crate) type Producers = Vec<(Vec<u8>, Vec<(Vec<u8>, StreamId)>)>;

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Snap {
    pub(crate) nodes: Vec<NodeSnap>,
    pub(crate) length: u64,
    pub(crate) last_id: StreamId,
    pub(crate) first_id: StreamId,
    pub(crate) max_deleted: StreamId,
    pub(crate) entries_added: u64,
    pub(crate) groups: Vec<GroupSnap>,
    pub(crate) idmp: (u64, u64, u64, u64),
    pub(crate) producers: Option<Producers>,
}

pub(crate) fn st(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub(crate) fn engine_snap(store: &Store, key: &str, idmp_contents: bool) -> Option<Snap> {
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

pub(crate) fn model_snap(s: &MStream, idmp_contents: bool) -> Snap {
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
