//! Streams in Redis's RDB serialization (`RDB_TYPE_STREAM_LISTPACKS_5`, which
//! redis-server 8.8 writes; types 15, 19, 21 and 26 are read too).
//!
//! Body: the node count; per node its master ID (16 bytes big-endian, as a string) and its
//! listpack; length, last ID, first ID, max deleted ID, entries added; per consumer group
//! (name order) its name, last ID, entries read, global PEL (ID order: raw ID, delivery
//! time, delivery count), consumers (name order: name, seen time, active time, their
//! PEL IDs) and the NACK zone (count, IDs in zone order); then IDMP: duration, max size,
//! producers (pid order: pid, IID count, IID + entry ID oldest first), IIDs added and
//! IIDs duplicated.
//!
//! A node's listpack: master entry `live, deleted, nfields, field*, 0`, then per entry
//! `flags, ms-delta, seq-delta, [nfields, field, value]* | value*, lp-count`. Tombstones
//! lose their fields and values here (our nodes do not keep them), so a tombstone is
//! written with a padding field sized to keep the node's listpack as large as
//! redis-server's was: the node then fills and splits at the same entries there.

use super::codec::{DecResult, Malformed, Reader, Writer};
use super::listpack::{self, Builder, Item};
use crate::base::config::{
    IDMP_MAX_DURATION, IDMP_MAX_MAXSIZE, IDMP_MIN_DURATION, IDMP_MIN_MAXSIZE,
};
use crate::structures::group::{ConsumerGroup, ConsumerImage, PendingImage};
use crate::structures::id::StreamId;
use crate::structures::idmp::{IdmpState, ProducerImage};
use crate::structures::node::StreamNode;
use crate::structures::stream::{Groups, Stream, StreamMeta};

pub const TYPE_STREAM_LISTPACKS: u8 = 15;
pub const TYPE_STREAM_LISTPACKS_2: u8 = 19;
pub const TYPE_STREAM_LISTPACKS_3: u8 = 21;
pub const TYPE_STREAM_LISTPACKS_4: u8 = 26;
pub const TYPE_STREAM_LISTPACKS_5: u8 = 27;

const FLAG_DELETED: i64 = 1;
const FLAG_SAMEFIELDS: i64 = 2;

fn bad(msg: impl Into<String>) -> Malformed {
    Malformed::new(msg)
}

// ---------------------------------------------------------------- writing

/// The listpack redis-server would hold for `n`.
pub fn node_listpack(n: &StreamNode) -> Vec<u8> {
    let master = n.master_id();
    let fields = n.master_fields();
    let mut b = Builder::default();
    b.int(n.live() as i64);
    b.int(n.deleted() as i64);
    b.int(fields.len() as i64);
    for f in &fields {
        b.str(f);
    }
    b.int(0);
    let entries: Vec<_> = n.raw_iter().collect();
    let last_tomb = entries.iter().rposition(|e| e.deleted);
    // What the node's tombstones lack against redis-server's listpack: given to the last
    // tombstone as padding.
    let deficit = last_tomb.map(|_| {
        let mut probe = Builder::default();
        let mut bytes = 0i64;
        for e in entries.iter().filter(|e| e.deleted) {
            bytes += tombstone_bytes(&mut probe, master, e.id, 0) as i64;
        }
        let live_bytes = listpack_live_bytes(n, &fields);
        n.lp_bytes() as i64 - (b.size() as i64 + live_bytes + bytes)
    });
    for (i, e) in entries.iter().enumerate() {
        if e.deleted {
            let pad = if Some(i) == last_tomb {
                deficit.unwrap_or(0).max(0) as u64
            } else {
                0
            };
            tombstone_bytes(&mut b, master, e.id, pad);
            continue;
        }
        let same = e.same_fields();
        b.int(if same { FLAG_SAMEFIELDS } else { 0 });
        b.int(e.id.ms.wrapping_sub(master.ms) as i64);
        b.int(e.id.seq.wrapping_sub(master.seq) as i64);
        let nf = e.num_fields() as i64;
        if !same {
            b.int(nf);
        }
        for (f, v) in e.pairs() {
            if !same {
                b.str(f);
            }
            b.str(v);
        }
        b.int(if same { nf + 3 } else { 2 * nf + 4 });
    }
    b.finish()
}

/// Bytes the live entries of `n` take in a listpack.
fn listpack_live_bytes(n: &StreamNode, _fields: &[&[u8]]) -> i64 {
    let master = n.master_id();
    n.iter()
        .map(|e| {
            let pairs: Vec<&[u8]> = e.pairs().flat_map(|(f, v)| [f, v]).collect();
            crate::structures::lpsize::entry_bytes(master, e.id, &pairs, e.same_fields()) as i64
        })
        .sum()
}

/// Append a tombstone `flags=DELETED, ms, seq, nfields, [field, value], lp-count` that
/// takes `pad` more bytes than the smallest one; returns the bytes appended.
fn tombstone_bytes(b: &mut Builder, master: StreamId, id: StreamId, pad: u64) -> usize {
    let before = b.size();
    let ms = id.ms.wrapping_sub(master.ms) as i64;
    let seq = id.seq.wrapping_sub(master.seq) as i64;
    // Split the padding: a value string of `l` bytes adds 2 (empty field) + its element
    // size; whatever is left (0..=8 bytes) widens the flags integer.
    let (value_len, widen) = pad_plan(pad);
    let wide = |extra: u64| -> usize {
        // Encodings of the integer 1 by total element size: 2, 3, 4, 5, 6, 10 bytes.
        match extra {
            0 => 1,
            1 => 2,
            2 => 3,
            3 => 4,
            4 => 5,
            _ => 9,
        }
    };
    let mut left = widen;
    let flag_extra = left.min(4);
    left -= flag_extra;
    b.int_wide(FLAG_DELETED, wide(flag_extra));
    b.int(ms);
    b.int(seq);
    let nf_extra = left.min(4);
    left -= nf_extra;
    match value_len {
        None => {
            b.int_wide(0, wide(nf_extra));
            b.int_wide(4, wide(left));
        }
        Some(l) => {
            b.int_wide(1, wide(nf_extra));
            b.str(b"");
            b.str(&vec![b'x'; l]);
            b.int_wide(6, wide(left));
        }
    }
    b.size() - before
}

#[cfg(test)]
pub fn tombstone_for_tests(b: &mut Builder, master: StreamId, id: StreamId, pad: u64) -> usize {
    tombstone_bytes(b, master, id, pad)
}

/// Bytes of a string element of `l` non-numeric bytes.
fn str_elem(l: usize) -> u64 {
    crate::structures::lpsize::str_element(&vec![b'x'; l])
}

/// How to pad a tombstone by `pad` bytes: an optional padding value length, and the
/// bytes left to add by widening integers (at most 12).
fn pad_plan(pad: u64) -> (Option<usize>, u64) {
    if pad < 4 {
        return (None, pad);
    }
    // The largest value whose cost (2 for the empty field + its element) fits.
    let mut lo = 0usize;
    let mut hi = pad as usize;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if 2 + str_elem(mid) <= pad {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (Some(lo), pad - (2 + str_elem(lo)))
}

/// Serialize a stream body (without the type byte). IDMP entries at or before
/// `now - duration` are left out, as redis-server does.
pub fn write_stream(w: &mut Writer, s: &Stream, now: i64) {
    // A node with no live entry (left by a trim of an earlier version, before
    // docs/differences.md "trim-empty-node") holds only tombstones: it is not written,
    // since redis-server and RESTORE refuse it.
    let nodes = || s.nodes().filter(|n| n.live() > 0);
    w.length(nodes().count() as u64);
    for n in nodes() {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&n.master_id().ms.to_be_bytes());
        key[8..].copy_from_slice(&n.master_id().seq.to_be_bytes());
        w.string(&key);
        w.string(&node_listpack(n));
    }
    w.length(s.length);
    for id in [s.last_id, s.first_id, s.max_deleted_id] {
        w.length(id.ms);
        w.length(id.seq);
    }
    w.length(s.entries_added);
    w.length(s.groups.len() as u64);
    for (name, _, cg) in s.groups.iter() {
        w.string(name);
        w.length(cg.last_id.ms);
        w.length(cg.last_id.seq);
        w.length(cg.entries_read as u64);
        w.length(cg.pel_len() as u64);
        for id in cg.pending_ids() {
            let r = cg.record(cg.pel_idx(&id).expect("pending id"));
            w.raw_id(id);
            w.millis(r.delivery_time);
            w.length(r.delivery_count);
        }
        w.length(cg.consumer_count() as u64);
        for (_, c) in cg.consumers() {
            w.string(&c.name);
            w.millis(c.seen_time);
            w.millis(c.active_time);
            w.length(c.pel.len() as u64);
            for id in &c.pel {
                w.raw_id(*id);
            }
        }
        let zone: Vec<StreamId> = cg
            .time_order()
            .take_while(|(_, r)| r.nacked)
            .map(|(_, r)| r.id)
            .collect();
        w.length(zone.len() as u64);
        for id in zone {
            w.raw_id(id);
        }
    }
    w.length(s.idmp.duration);
    w.length(s.idmp.maxsize);
    let expire_before = now.saturating_sub((s.idmp.duration as i64).saturating_mul(1000));
    let producers: Vec<_> = s.idmp.producers().collect();
    w.length(producers.len() as u64);
    for (pid, p) in producers {
        w.string(pid);
        let live: Vec<_> = p
            .iter()
            .skip_while(|(_, id)| (id.ms as i64) <= expire_before && expire_before >= 0)
            .collect();
        w.length(live.len() as u64);
        for (iid, id) in live {
            w.string(iid);
            w.length(id.ms);
            w.length(id.seq);
        }
    }
    w.length(s.idmp.iids_added);
    w.length(s.idmp.iids_duplicates);
}

// ---------------------------------------------------------------- reading

fn int_at(items: &[Item<'_>], i: &mut usize) -> DecResult<i64> {
    let v = items
        .get(*i)
        .and_then(Item::int)
        .ok_or_else(|| bad("stream listpack: integer expected"))?;
    *i += 1;
    Ok(v)
}

fn bytes_at<'a>(items: &'a [Item<'a>], i: &mut usize) -> DecResult<std::borrow::Cow<'a, [u8]>> {
    let v = items
        .get(*i)
        .ok_or_else(|| bad("stream listpack: element missing"))?
        .bytes();
    *i += 1;
    Ok(v)
}

/// Rebuild a node from redis-server's listpack, keyed by `master`. Checks the layout as
/// redis-server's deep sanitization does, and that live entries ascend.
pub fn read_node(master: StreamId, lp: &[u8]) -> DecResult<StreamNode> {
    let items = listpack::decode(lp)?;
    let mut i = 0;
    let live = int_at(&items, &mut i)?;
    let deleted = int_at(&items, &mut i)?;
    let nfields = int_at(&items, &mut i)?;
    if live <= 0 || deleted < 0 || nfields < 0 || nfields as usize > items.len() {
        return Err(bad("stream listpack: bad master entry counts"));
    }
    let mut fields = Vec::with_capacity(nfields as usize);
    for _ in 0..nfields {
        fields.push(bytes_at(&items, &mut i)?);
    }
    if int_at(&items, &mut i)? != 0 {
        return Err(bad("stream listpack: master entry not terminated"));
    }
    let field_refs: Vec<&[u8]> = fields.iter().map(|f| f.as_ref()).collect();
    let mut node = StreamNode::with_master(master, &field_refs);
    let (mut seen_live, mut seen_deleted) = (0i64, 0i64);
    let mut prev_live: Option<StreamId> = None;
    let mut pairs: Vec<std::borrow::Cow<'_, [u8]>> = Vec::new();
    while i < items.len() {
        let flags = int_at(&items, &mut i)?;
        if flags & !(FLAG_DELETED | FLAG_SAMEFIELDS) != 0 {
            return Err(bad("stream listpack: bad entry flags"));
        }
        let ms = master.ms.wrapping_add(int_at(&items, &mut i)? as u64);
        let seq = master.seq.wrapping_add(int_at(&items, &mut i)? as u64);
        let id = StreamId::new(ms, seq);
        pairs.clear();
        let expect_count = if flags & FLAG_SAMEFIELDS != 0 {
            for f in &fields {
                pairs.push(f.clone());
                pairs.push(bytes_at(&items, &mut i)?);
            }
            nfields + 3
        } else {
            let n = int_at(&items, &mut i)?;
            if n < 0 || n as usize > items.len() {
                return Err(bad("stream listpack: bad field count"));
            }
            for _ in 0..2 * n {
                pairs.push(bytes_at(&items, &mut i)?);
            }
            2 * n + 4
        };
        if int_at(&items, &mut i)? != expect_count {
            return Err(bad("stream listpack: bad lp-count"));
        }
        let refs: Vec<&[u8]> = pairs.iter().map(|p| p.as_ref()).collect();
        if flags & FLAG_DELETED == 0 {
            if refs.is_empty() {
                return Err(bad("stream listpack: live entry without fields"));
            }
            if prev_live.is_some_and(|p| id <= p) || id < master {
                return Err(bad("stream listpack: entries out of order"));
            }
            prev_live = Some(id);
            seen_live += 1;
            node.append(id, &refs);
        } else {
            seen_deleted += 1;
            node.append(id, &refs);
            let e = node.last_entry().expect("entry just appended");
            let (off, len) = (e.offset, e.len);
            node.delete_at(off, len);
        }
    }
    if seen_live != live || seen_deleted != deleted {
        return Err(bad(
            "stream listpack: entry counts differ from the master entry",
        ));
    }
    node.validate().map_err(bad)?;
    Ok(node)
}

fn id_pair(r: &mut Reader<'_>) -> DecResult<StreamId> {
    Ok(StreamId::new(r.length()?, r.length()?))
}

/// Read a stream body of RDB type `ty`. `now` decides which IDMP entries have expired
/// (they are dropped, as redis-server does when loading).
pub fn read_stream(
    r: &mut Reader<'_>,
    ty: u8,
    now: i64,
    cfg: &crate::base::config::Config,
) -> DecResult<Stream> {
    let nodes_n = r.count(18)?;
    let mut nodes = Vec::with_capacity(nodes_n);
    for _ in 0..nodes_n {
        let key = r.string()?;
        if key.len() != 16 {
            return Err(bad("stream node key is not a stream ID"));
        }
        let master = StreamId::new(
            u64::from_be_bytes(key[..8].try_into().expect("8 bytes")),
            u64::from_be_bytes(key[8..].try_into().expect("8 bytes")),
        );
        let lp = r.string()?;
        nodes.push(read_node(master, &lp)?);
    }
    let length = r.length()?;
    let last_id = id_pair(r)?;
    let (first_id, max_deleted_id, entries_added) = if ty >= TYPE_STREAM_LISTPACKS_2 {
        (id_pair(r)?, id_pair(r)?, r.length()?)
    } else {
        let first = nodes
            .iter()
            .find_map(|n| n.iter().next().map(|e| e.id))
            // redis-server's edge lookup answers the maximal ID for an empty stream.
            .unwrap_or(StreamId::MAX);
        (first, StreamId::MIN, length)
    };
    if entries_added > i64::MAX as u64 || entries_added < length {
        return Err(bad("stream entries_added inconsistent with length"));
    }
    let groups_n = r.count(4)?;
    let mut groups = Vec::with_capacity(groups_n);
    for _ in 0..groups_n {
        let name = r.string()?;
        let last = id_pair(r)?;
        let entries_read = if ty >= TYPE_STREAM_LISTPACKS_2 {
            let v = r.length()?;
            if v == u64::MAX {
                -1
            } else if v > i64::MAX as u64 || v > entries_added {
                return Err(bad("group entries_read inconsistent with entries_added"));
            } else {
                v as i64
            }
        } else {
            // Before 7.0 no counter was saved: redis-server estimates it from the stream
            // as loaded (exact when the group's last ID is the first or last entry).
            StreamMeta {
                length,
                last_id,
                first_id,
                max_deleted_id,
                entries_added,
            }
            .estimate_distance(last)
        };
        groups.push((name, read_group(r, ty, last, entries_read)?));
    }
    let idmp = if ty >= TYPE_STREAM_LISTPACKS_4 {
        read_idmp(r, now)?
    } else {
        IdmpState::new(
            cfg.stream_idmp_duration as u64,
            cfg.stream_idmp_maxsize as u64,
        )
    };
    let mut names = std::collections::BTreeSet::new();
    for (n, _) in &groups {
        if !names.insert(n.clone()) {
            return Err(bad("duplicated consumer group name"));
        }
    }
    let groups = Groups::restore(groups).map_err(bad)?;
    Stream::restore(
        nodes,
        length,
        last_id,
        first_id,
        max_deleted_id,
        entries_added,
        groups,
        idmp,
    )
    .map_err(bad)
}

struct Pending {
    id: StreamId,
    time: i64,
    count: u64,
    owner: Option<u32>,
    nacked: bool,
}

fn read_group(
    r: &mut Reader<'_>,
    ty: u8,
    last_id: StreamId,
    entries_read: i64,
) -> DecResult<ConsumerGroup> {
    let pel_n = r.count(17)?;
    let mut pel: Vec<Pending> = Vec::with_capacity(pel_n);
    let mut pos = std::collections::HashMap::with_capacity(pel_n);
    for _ in 0..pel_n {
        let id = r.raw_id()?;
        let time = r.millis()?;
        let count = r.length()?;
        if count > i64::MAX as u64 {
            return Err(bad("delivery count out of range"));
        }
        if pos.insert(id, pel.len()).is_some() {
            return Err(bad("duplicated global PEL entry"));
        }
        pel.push(Pending {
            id,
            time,
            count,
            owner: None,
            nacked: false,
        });
    }
    let consumers_n = r.count(18)?;
    let mut consumers = Vec::with_capacity(consumers_n);
    let mut names = std::collections::HashSet::new();
    for ci in 0..consumers_n {
        let name = r.string()?;
        if !names.insert(name.clone()) {
            return Err(bad("duplicate stream consumer"));
        }
        let seen_time = r.millis()?;
        let active_time = if ty >= TYPE_STREAM_LISTPACKS_3 {
            r.millis()?
        } else {
            seen_time
        };
        let n = r.count(16)?;
        for _ in 0..n {
            let id = r.raw_id()?;
            let p = *pos
                .get(&id)
                .ok_or_else(|| bad("consumer entry not found in group global PEL"))?;
            if pel[p].owner.is_some() {
                return Err(bad("PEL entry owned by two consumers"));
            }
            pel[p].owner = Some(ci as u32);
        }
        consumers.push(ConsumerImage {
            name,
            seen_time,
            active_time,
        });
    }
    let mut zone: Vec<usize> = Vec::new();
    if ty >= TYPE_STREAM_LISTPACKS_5 {
        let n = r.count(16)?;
        for _ in 0..n {
            let id = r.raw_id()?;
            let p = *pos
                .get(&id)
                .ok_or_else(|| bad("NACK zone entry not found in group global PEL"))?;
            if pel[p].owner.is_some() {
                return Err(bad("NACK zone entry has a consumer"));
            }
            if pel[p].nacked {
                return Err(bad("NACK zone entry listed twice"));
            }
            pel[p].nacked = true;
            zone.push(p);
        }
    }
    // The time list as redis-server rebuilds it: PEL entries inserted in ID order by
    // delivery time (equal times keep ID order), then the NACK zone moved to the front
    // in the order stored, with delivery time 0.
    let mut order: Vec<usize> = (0..pel.len()).filter(|&p| !pel[p].nacked).collect();
    order.sort_by_key(|&p| pel[p].time);
    let mut records = Vec::with_capacity(pel.len());
    for p in zone.into_iter().chain(order) {
        let e = &pel[p];
        if e.owner.is_none() && !e.nacked {
            return Err(bad("PEL entry without consumer outside the NACK zone"));
        }
        records.push(PendingImage {
            id: e.id,
            delivery_time: if e.nacked { 0 } else { e.time },
            delivery_count: e.count,
            owner: e.owner,
            nacked: e.nacked,
        });
    }
    ConsumerGroup::restore(last_id, entries_read, consumers, records).map_err(bad)
}

fn read_idmp(r: &mut Reader<'_>, now: i64) -> DecResult<IdmpState> {
    let duration = r.length()?;
    if duration < IDMP_MIN_DURATION as u64 || duration > IDMP_MAX_DURATION as u64 {
        return Err(bad("stream IDMP duration out of range"));
    }
    let maxsize = r.length()?;
    if maxsize < IDMP_MIN_MAXSIZE as u64 || maxsize > IDMP_MAX_MAXSIZE as u64 {
        return Err(bad("stream IDMP max entries out of range"));
    }
    let expire_before = now - duration as i64 * 1000;
    let np = r.count(2)?;
    let mut producers: Vec<ProducerImage> = Vec::with_capacity(np);
    for _ in 0..np {
        let pid = r.string()?;
        let n = r.count(3)?;
        let mut iids: Vec<(Vec<u8>, StreamId)> = Vec::with_capacity(n);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..n {
            let iid = r.string()?;
            let id = id_pair(r)?;
            if expire_before >= 0 && id.ms <= expire_before as u64 {
                continue;
            }
            // A duplicate IID is skipped, as redis-server does.
            if seen.insert(iid.clone()) {
                iids.push((iid, id));
            }
        }
        if iids.is_empty() {
            continue;
        }
        if producers.iter().any(|(p, _)| *p == pid) {
            return Err(bad("IDMP producer listed twice"));
        }
        producers.push((pid, iids));
    }
    let added = r.length()?;
    let dups = r.length()?;
    producers.sort_by(|a, b| a.0.cmp(&b.0));
    let tracked = !producers.is_empty();
    IdmpState::restore(duration, maxsize, added, dups, tracked, producers).map_err(bad)
}
