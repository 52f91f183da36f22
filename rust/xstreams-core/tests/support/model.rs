//! A small, literal reference model of Redis 8.8 streams, written from `t_stream.c`
//! (NOT from the xstreams engine). It keeps Redis's own data layout where the
//! observable behaviour depends on it:
//!
//! * a stream is a list of listpack nodes holding live *and deleted* entries, so node
//!   splitting (`streamAppendItem`), whole-node removal (`streamTrim`,
//!   `streamIteratorRemoveEntry`) and `radix-tree-keys` can be compared;
//! * a group keeps its PEL as a map plus the time-ordered list as a `Vec` with the NACK
//!   zone tail kept as a *position* (`pel_nack_tail`), exactly as the C code does;
//! * listpack byte sizes are recomputed from scratch from the listpack encoding rules
//!   (`lpEncodeGetType`, `lpEncodeBacklen`).
//!
//! Every command handler returns the reply Redis would send (errors are returned as
//! `Reply::Error(prefix)`, compared by prefix).

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use xstreams_core::{Reply, StreamId};

pub type Id = StreamId;

pub const MAX: Id = StreamId::MAX;
pub const MIN: Id = StreamId::MIN;
pub const LLONG_MAX: u64 = i64::MAX as u64;

pub fn incr(id: Id) -> Option<Id> {
    if id.seq == u64::MAX {
        if id.ms == u64::MAX {
            None
        } else {
            Some(Id::new(id.ms + 1, 0))
        }
    } else {
        Some(Id::new(id.ms, id.seq + 1))
    }
}

pub fn decr(id: Id) -> Option<Id> {
    if id.seq == 0 {
        if id.ms == 0 {
            None
        } else {
            Some(Id::new(id.ms - 1, u64::MAX))
        }
    } else {
        Some(Id::new(id.ms, id.seq - 1))
    }
}

pub fn bulk(b: &[u8]) -> Reply {
    Reply::Bulk(b.to_vec())
}

pub fn rid(id: Id) -> Reply {
    Reply::Bulk(format!("{}-{}", id.ms, id.seq).into_bytes())
}

pub fn err(prefix: &str) -> Reply {
    Reply::Error(prefix.to_string())
}

fn kv_map(pairs: Vec<(&str, Reply)>) -> Reply {
    Reply::Map(
        pairs
            .into_iter()
            .map(|(k, v)| (bulk(k.as_bytes()), v))
            .collect(),
    )
}

// ------------------------------------------------------------------ listpack sizes

/// `lpEncodeBacklen` byte count.
pub fn lp_backlen(l: u64) -> u64 {
    match l {
        0..=127 => 1,
        128..=16383 => 2,
        16384..=2_097_151 => 3,
        2_097_152..=268_435_455 => 4,
        _ => 5,
    }
}

/// `lpEncodeIntegerGetType` encoded length.
pub fn lp_int_enc(v: i64) -> u64 {
    if (0..=127).contains(&v) {
        1
    } else if (-4096..=4095).contains(&v) {
        2
    } else if (-32768..=32767).contains(&v) {
        3
    } else if (-8_388_608..=8_388_607).contains(&v) {
        4
    } else if (-2_147_483_648..=2_147_483_647).contains(&v) {
        5
    } else {
        9
    }
}

pub fn lp_int(v: i64) -> u64 {
    let e = lp_int_enc(v);
    e + lp_backlen(e)
}

/// `lpStringToInt64`: the string is the canonical decimal form of an i64. Implemented
/// by round-tripping through Rust's formatter (an independent formulation).
pub fn canonical_i64(s: &[u8]) -> Option<i64> {
    let t = std::str::from_utf8(s).ok()?;
    let v: i64 = t.parse().ok()?;
    if v.to_string().as_bytes() == s {
        Some(v)
    } else {
        None
    }
}

pub fn lp_str(s: &[u8]) -> u64 {
    if let Some(v) = canonical_i64(s) {
        return lp_int(v);
    }
    let n = s.len() as u64;
    let e = if n < 64 {
        1 + n
    } else if n < 4096 {
        2 + n
    } else {
        5 + n
    };
    e + lp_backlen(e)
}

// ------------------------------------------------------------------ nodes

#[derive(Clone, Debug)]
pub struct MEntry {
    pub id: Id,
    pub pairs: Vec<(Vec<u8>, Vec<u8>)>,
    pub same: bool,
    pub deleted: bool,
}

#[derive(Clone, Debug)]
pub struct MNode {
    pub master: Id,
    pub mfields: Vec<Vec<u8>>,
    pub entries: Vec<MEntry>,
}

impl MNode {
    pub fn live(&self) -> u64 {
        self.entries.iter().filter(|e| !e.deleted).count() as u64
    }
    pub fn deleted(&self) -> u64 {
        self.entries.iter().filter(|e| e.deleted).count() as u64
    }
    /// The last entry of the listpack, tombstone or not (`lpGetEdgeStreamID(lp,0,..)`).
    pub fn last_any(&self) -> Id {
        self.entries.last().expect("node never empty of entries").id
    }
    /// `lpBytes` of the node, recomputed element by element.
    pub fn lp_bytes(&self) -> u64 {
        let mut n = 6 + 1; // header + EOF
        n += lp_int(self.live() as i64) + lp_int(self.deleted() as i64);
        n += lp_int(self.mfields.len() as i64);
        for f in &self.mfields {
            n += lp_str(f);
        }
        n += lp_int(0);
        for e in &self.entries {
            let flags = (if e.deleted { 1 } else { 0 }) | (if e.same { 2 } else { 0 });
            n += lp_int(flags);
            n += lp_int(e.id.ms.wrapping_sub(self.master.ms) as i64);
            n += lp_int(e.id.seq.wrapping_sub(self.master.seq) as i64);
            let nf = e.pairs.len() as i64;
            if !e.same {
                n += lp_int(nf);
            }
            for (f, v) in &e.pairs {
                if !e.same {
                    n += lp_str(f);
                }
                n += lp_str(v);
            }
            let lp_count = nf + 3 + if e.same { 0 } else { nf + 1 };
            n += lp_int(lp_count);
        }
        n
    }
}

// ------------------------------------------------------------------ groups

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MNack {
    pub owner: Option<Vec<u8>>,
    pub count: u64,
    pub time: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MConsumer {
    pub seen: i64,
    pub active: i64,
    pub pel: BTreeSet<Id>,
}

#[derive(Clone, Debug)]
pub struct MGroup {
    pub last_id: Id,
    pub entries_read: i64,
    pub pel: BTreeMap<Id, MNack>,
    /// The time-ordered list, head first.
    pub time: Vec<Id>,
    /// `pel_nack_tail`: the last element of the NACK zone, if any.
    pub nack_tail: Option<Id>,
    pub consumers: BTreeMap<Vec<u8>, MConsumer>,
}

impl MGroup {
    pub fn new(last_id: Id, entries_read: i64) -> Self {
        MGroup {
            last_id,
            entries_read,
            pel: BTreeMap::new(),
            time: Vec::new(),
            nack_tail: None,
            consumers: BTreeMap::new(),
        }
    }

    fn pos(&self, id: Id) -> usize {
        self.time
            .iter()
            .position(|&x| x == id)
            .expect("id in time list")
    }

    /// `pelListUnlink`.
    pub fn unlink(&mut self, id: Id) {
        let p = self.pos(id);
        if self.nack_tail == Some(id) {
            self.nack_tail = if p == 0 { None } else { Some(self.time[p - 1]) };
        }
        self.time.remove(p);
    }

    /// `pelListInsertAfter`.
    fn insert_after(&mut self, after: Option<Id>, id: Id) {
        match after {
            None => self.time.insert(0, id),
            Some(a) => {
                let p = self.pos(a);
                self.time.insert(p + 1, id);
            }
        }
    }

    /// `pelListInsertSorted`.
    fn insert_sorted(&mut self, id: Id) {
        let t = self.pel[&id].time;
        if self.time.is_empty() || t >= self.pel[self.time.last().unwrap()].time {
            self.time.push(id);
            return;
        }
        let mut cur: Option<usize> = Some(self.time.len() - 1);
        while let Some(i) = cur {
            if Some(self.time[i]) == self.nack_tail {
                break;
            }
            if self.pel[&self.time[i]].time > t {
                cur = i.checked_sub(1);
            } else {
                break;
            }
        }
        let at = cur.map(|i| i + 1).unwrap_or(0);
        self.time.insert(at, id);
    }

    /// `pelListInsertNacked`.
    fn insert_nacked(&mut self, id: Id) {
        self.pel.get_mut(&id).unwrap().time = 0;
        self.insert_after(self.nack_tail, id);
        self.nack_tail = Some(id);
    }

    /// `pelListUpdate`.
    pub fn update(&mut self, id: Id, t: i64) {
        self.unlink(id);
        self.pel.get_mut(&id).unwrap().time = t;
        self.insert_sorted(id);
    }

    /// `pelListNackedCount`.
    pub fn nacked_count(&self) -> u64 {
        match self.nack_tail {
            None => 0,
            Some(t) => (self.pos(t) + 1) as u64,
        }
    }

    /// Drop a pending entry from every structure (XACK and friends).
    pub fn remove(&mut self, id: Id) -> bool {
        let Some(n) = self.pel.get(&id).cloned() else {
            return false;
        };
        self.unlink(id);
        self.pel.remove(&id);
        if let Some(o) = n.owner {
            self.consumers.get_mut(&o).unwrap().pel.remove(&id);
        }
        true
    }

    /// Give the entry to `c` (removing it from the previous owner's PEL).
    fn transfer(&mut self, id: Id, c: &[u8]) {
        let old = self.pel[&id].owner.clone();
        if old.as_deref() != Some(c) {
            if let Some(o) = old {
                self.consumers.get_mut(&o).unwrap().pel.remove(&id);
            }
            self.pel.get_mut(&id).unwrap().owner = Some(c.to_vec());
            self.consumers.get_mut(c).unwrap().pel.insert(id);
        }
    }

    fn ensure_consumer(&mut self, c: &[u8], now: i64) -> bool {
        if self.consumers.contains_key(c) {
            return false;
        }
        self.consumers.insert(
            c.to_vec(),
            MConsumer {
                seen: now,
                active: -1,
                pel: BTreeSet::new(),
            },
        );
        true
    }

    fn incr_count(&mut self, id: Id) {
        let n = self.pel.get_mut(&id).unwrap();
        if n.count != LLONG_MAX {
            n.count += 1;
        }
    }
}

// ------------------------------------------------------------------ stream

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    KeepRef,
    DelRef,
    Acked,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimBy {
    MaxLen(u64),
    MinId(Id),
}

#[derive(Clone, Copy, Debug)]
pub struct Trim {
    pub strategy: TrimBy,
    pub approx: bool,
    /// Already resolved (0 = unlimited).
    pub limit: u64,
    pub policy: Policy,
}

#[derive(Clone, Copy, Debug)]
pub enum AddId {
    Auto,
    Given(Id),
    /// `<ms>-*`
    MsStar(u64),
}

#[derive(Clone, Copy, Debug)]
pub struct NodeCfg {
    pub max_entries: i64,
    pub max_bytes: u64,
    pub idmp_duration: u64,
    pub idmp_maxsize: u64,
}

#[derive(Clone, Debug)]
pub struct MStream {
    pub nodes: Vec<MNode>,
    pub length: u64,
    pub last_id: Id,
    pub first_id: Id,
    pub max_deleted: Id,
    pub entries_added: u64,
    pub groups: BTreeMap<Vec<u8>, MGroup>,
    pub idmp_duration: u64,
    pub idmp_maxsize: u64,
    pub iids_added: u64,
    pub iids_dups: u64,
    pub producers: BTreeMap<Vec<u8>, VecDeque<(Vec<u8>, Id)>>,
    /// In the database's `stream_idmp_keys` (visited by the IDMP cron): set when an IID
    /// is recorded, cleared by a changing XCFGSET or when the cron empties the stream.
    pub idmp_tracked: bool,
}

impl MStream {
    pub fn new(cfg: &NodeCfg) -> Self {
        MStream {
            nodes: Vec::new(),
            length: 0,
            last_id: MIN,
            first_id: MIN,
            max_deleted: MIN,
            entries_added: 0,
            groups: BTreeMap::new(),
            idmp_duration: cfg.idmp_duration,
            idmp_maxsize: cfg.idmp_maxsize,
            iids_added: 0,
            iids_dups: 0,
            producers: BTreeMap::new(),
            idmp_tracked: false,
        }
    }

    /// Live entries in iteration order (`streamIteratorStart(NULL, NULL)`: nodes in
    /// rax-key order, entries in listpack order).
    pub fn live(&self) -> Vec<&MEntry> {
        self.range(MIN, MAX, false)
    }

    /// The entries `streamIteratorStart(start, end, rev)` + `streamIteratorGetID` yield,
    /// literally: seek the node `<=` start (end when reversed), falling back to the first
    /// (last) node; skip tombstones and out-of-range entries; stop at the first live
    /// entry past the far bound. Nodes are kept in rax-key (master ID) order, which is
    /// NOT always entry order once XSETID moved last-generated-id below old tombstones.
    pub fn range(&self, start: Id, end: Id, rev: bool) -> Vec<&MEntry> {
        self.positions(start, end, rev)
            .into_iter()
            .map(|(n, k)| &self.nodes[n].entries[k])
            .collect()
    }

    /// (node index, entry index) of what the iterator yields.
    pub fn positions(&self, start: Id, end: Id, rev: bool) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        if self.nodes.is_empty() {
            return out;
        }
        if !rev {
            let from = if start != MIN {
                self.nodes
                    .iter()
                    .rposition(|n| n.master <= start)
                    .unwrap_or(0)
            } else {
                0
            };
            for (ni, n) in self.nodes.iter().enumerate().skip(from) {
                for (k, e) in n.entries.iter().enumerate() {
                    if e.id >= start && !e.deleted {
                        if e.id > end {
                            return out;
                        }
                        out.push((ni, k));
                    }
                }
            }
        } else {
            let last = self.nodes.len() - 1;
            let from = if end != MIN {
                self.nodes
                    .iter()
                    .rposition(|n| n.master <= end)
                    .unwrap_or(last)
            } else {
                last
            };
            for ni in (0..=from).rev() {
                let n = &self.nodes[ni];
                for (k, e) in n.entries.iter().enumerate().rev() {
                    if e.id <= end && !e.deleted {
                        if e.id < start {
                            return out;
                        }
                        out.push((ni, k));
                    }
                }
            }
        }
        out
    }

    /// `streamEntryExists` / the entry a `(id, id)` iteration yields.
    pub fn get(&self, id: Id) -> Option<&MEntry> {
        self.range(id, id, false).into_iter().next()
    }

    pub fn exists(&self, id: Id) -> bool {
        self.get(id).is_some()
    }

    /// `streamLastValidID`.
    pub fn last_live(&self) -> Option<Id> {
        self.range(MIN, MAX, true).first().map(|e| e.id)
    }

    /// `streamGetEdgeID(s, 1, 1, ..)`.
    pub fn first_live(&self) -> Option<Id> {
        self.live().first().map(|e| e.id)
    }

    /// `streamAppendItem`.
    pub fn append(
        &mut self,
        cfg: &NodeCfg,
        now: i64,
        spec: AddId,
        pairs: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<Id, &'static str> {
        let id = match spec {
            AddId::Given(id) => id,
            AddId::MsStar(ms) => {
                if self.last_id.ms == ms {
                    if self.last_id.seq == u64::MAX {
                        return Err("ERR The ID specified in XADD is equal or smaller");
                    }
                    Id::new(ms, self.last_id.seq + 1)
                } else {
                    Id::new(ms, 0)
                }
            }
            AddId::Auto => {
                let ms = now as u64;
                if ms > self.last_id.ms {
                    Id::new(ms, 0)
                } else {
                    incr(self.last_id).unwrap_or(MIN)
                }
            }
        };
        if id <= self.last_id {
            return Err("ERR The ID specified in XADD is equal or smaller");
        }
        let tot: u64 = pairs.iter().map(|(f, v)| (f.len() + v.len()) as u64).sum();
        let mut max_bytes = cfg.max_bytes;
        if max_bytes == 0 || max_bytes > (1 << 30) {
            max_bytes = 1 << 30;
        }
        let new_node = match self.nodes.last() {
            None => true,
            Some(n) => {
                n.lp_bytes() + tot >= max_bytes
                    || (cfg.max_entries != 0 && (n.live() + n.deleted()) as i64 >= cfg.max_entries)
            }
        };
        let fields: Vec<Vec<u8>> = pairs.iter().map(|(f, _)| f.clone()).collect();
        if new_node {
            // raxInsert keyed by the new ID: the node list stays in key order, and an
            // existing node with the same key (possible after XSETID games: an emptied
            // node keyed by a tombstone) is overwritten, as raxInsert does.
            let node = MNode {
                master: id,
                mfields: fields,
                entries: vec![MEntry {
                    id,
                    pairs: pairs.to_vec(),
                    same: true,
                    deleted: false,
                }],
            };
            let at = self.nodes.partition_point(|n| n.master < id);
            if at < self.nodes.len() && self.nodes[at].master == id {
                // The old listpack is dropped without touching `length` (redis-server
                // leaks it; any live entry it held vanishes but stays counted).
                self.nodes[at] = node;
            } else {
                self.nodes.insert(at, node);
            }
        } else {
            let n = self.nodes.last_mut().unwrap();
            let same = n.mfields == fields;
            n.entries.push(MEntry {
                id,
                pairs: pairs.to_vec(),
                same,
                deleted: false,
            });
        }
        self.length += 1;
        if self.entries_added < LLONG_MAX {
            self.entries_added += 1;
        }
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
        Ok(id)
    }

    /// `streamDeleteItem` (no first-id / tombstone bookkeeping): deletes the entry the
    /// `(id, id)` iteration finds.
    pub fn delete_item(&mut self, id: Id) -> bool {
        let found = self.positions(id, id, false).first().copied();
        let Some((i, k)) = found else {
            return false;
        };
        if self.nodes[i].live() == 1 {
            self.nodes.remove(i);
        } else {
            self.nodes[i].entries[k].deleted = true;
        }
        self.length -= 1;
        true
    }

    fn fix_first(&mut self, deleted: u64, first_entry: bool) {
        if deleted > 0 {
            if self.length == 0 {
                self.first_id = MIN;
            } else if first_entry {
                self.first_id = self.first_live().unwrap_or(MAX);
            }
        }
    }

    /// Delete as XDEL/XDELEX/XACKDEL do, with the first-id and max-deleted updates.
    fn delete_tracked(&mut self, id: Id, deleted: &mut u64, first_entry: &mut bool) -> bool {
        if self.delete_item(id) {
            if id == self.first_id {
                *first_entry = true;
            }
            if id > self.max_deleted {
                self.max_deleted = id;
            }
            *deleted += 1;
            true
        } else {
            false
        }
    }

    /// `streamEntryIsReferenced`.
    pub fn referenced(&self, id: Id) -> bool {
        if self.groups.is_empty() {
            return false;
        }
        let min = self.groups.values().map(|g| g.last_id).min().unwrap();
        if min < id {
            return true;
        }
        self.groups.values().any(|g| g.pel.contains_key(&id))
    }

    /// `streamCleanupEntryCGroupRefs`.
    pub fn cleanup_refs(&mut self, id: Id) {
        for g in self.groups.values_mut() {
            g.remove(id);
        }
    }

    /// `streamTrim`.
    pub fn trim(&mut self, t: &Trim) -> u64 {
        let mut deleted: u64 = 0;
        let mut i = 0;
        while i < self.nodes.len() {
            if let TrimBy::MaxLen(m) = t.strategy {
                if self.length <= m {
                    break;
                }
            }
            let entries = self.nodes[i].live();
            if t.limit != 0 && deleted + entries > t.limit {
                break;
            }
            let eligible = match t.strategy {
                TrimBy::MaxLen(m) => self.length - entries >= m,
                TrimBy::MinId(min) => self.nodes[i].last_any() < min,
            };
            if eligible && t.policy == Policy::KeepRef {
                self.nodes.remove(i);
                self.length -= entries;
                deleted += entries;
                continue;
            }
            if t.approx && t.policy == Policy::KeepRef {
                break;
            }
            let mut here = 0u64;
            for k in 0..self.nodes[i].entries.len() {
                let id = self.nodes[i].entries[k].id;
                let stop = match t.strategy {
                    TrimBy::MaxLen(m) => self.length <= m,
                    TrimBy::MinId(min) => id >= min,
                };
                if stop {
                    break;
                }
                if !self.nodes[i].entries[k].deleted {
                    let can = match t.policy {
                        Policy::Acked => !self.referenced(id),
                        Policy::DelRef => {
                            self.cleanup_refs(id);
                            true
                        }
                        Policy::KeepRef => true,
                    };
                    if can {
                        self.nodes[i].entries[k].deleted = true;
                        here += 1;
                        self.length -= 1;
                    }
                }
            }
            deleted += here;
            if eligible && here == entries {
                self.nodes.remove(i);
                continue;
            }
            if eligible {
                i += 1;
                continue;
            }
            break;
        }
        if self.length == 0 {
            self.first_id = MIN;
        } else if deleted > 0 {
            self.first_id = self.first_live().unwrap_or(MAX);
        }
        deleted
    }

    pub fn range_has_tombstones(&self, start: Id, end: Id) -> bool {
        if self.length == 0 || self.max_deleted == MIN {
            return false;
        }
        start <= self.max_deleted && self.max_deleted <= end
    }

    /// `streamEstimateDistanceFromFirstEverEntry`.
    pub fn estimate(&self, id: Id) -> i64 {
        if self.entries_added == 0 {
            return 0;
        }
        if self.length == 0 && id <= self.last_id {
            return self.entries_added as i64;
        }
        if id != MIN && id < self.max_deleted {
            return -1;
        }
        if id == self.last_id {
            return self.entries_added as i64;
        } else if id > self.last_id {
            return -1;
        }
        if self.max_deleted == MIN || self.max_deleted < self.first_id {
            if id < self.first_id {
                return (self.entries_added - self.length) as i64;
            } else if id == self.first_id {
                return (self.entries_added - self.length + 1) as i64;
            }
        }
        -1
    }

    /// `streamReplyWithCGLag`.
    pub fn lag(&self, g: &MGroup) -> Reply {
        if self.entries_added == 0 || self.length == 0 {
            return Reply::Int(0);
        }
        if g.last_id < self.first_id && self.max_deleted < self.first_id {
            return Reply::Int(self.length as i64);
        }
        if g.entries_read != -1 && !self.range_has_tombstones(g.last_id, MAX) {
            return Reply::Int(self.entries_added as i64 - g.entries_read);
        }
        let er = self.estimate(g.last_id);
        if er != -1 {
            Reply::Int(self.entries_added as i64 - er)
        } else {
            Reply::Nil
        }
    }

    // -------------------------------------------------------------- IDMP

    /// `handleExpiredIdmpEntries` for this stream: only a tracked stream is visited;
    /// head-first expiry per producer with Redis's unsigned threshold
    /// (`server.mstime - idmp_duration*1000` as uint64), empty producers dropped, and
    /// the stream untracked when no producer remains. (The engine also runs this right
    /// before IDMP lookups/inserts, which only anticipates the 100 ms cron.)
    pub fn idmp_expire(&mut self, now: i64) {
        if !self.idmp_tracked {
            return;
        }
        let threshold = (now as u64).wrapping_sub(self.idmp_duration.wrapping_mul(1000));
        self.producers.retain(|_, q| {
            while let Some((_, id)) = q.front() {
                if id.ms <= threshold {
                    q.pop_front();
                } else {
                    break;
                }
            }
            !q.is_empty()
        });
        if self.producers.is_empty() {
            self.idmp_tracked = false;
        }
    }

    fn idmp_lookup(&self, pid: &[u8], iid: &[u8]) -> Option<Id> {
        self.producers
            .get(pid)?
            .iter()
            .find(|(i, _)| i.as_slice() == iid)
            .map(|(_, id)| *id)
    }

    fn idmp_insert(&mut self, pid: &[u8], iid: &[u8], id: Id) {
        let max = self.idmp_maxsize as usize;
        let q = self.producers.entry(pid.to_vec()).or_default();
        q.push_back((iid.to_vec(), id));
        self.iids_added += 1;
        if q.len() > max {
            q.pop_front();
        }
    }
}

/// The IID of `XADD ... IDMPAUTO` (`createIdempotencyHash`), written from the C code:
/// per pair XXH3-128(field || field_len as 8 native(LE) bytes || value); sums and xors
/// of the 64-bit halves; low = sum_lo ^ rotl(xor_hi,1), high = sum_hi ^ rotl(xor_lo,1);
/// bytes of the `XXH128_hash_t {low64, high64}` struct.
pub fn auto_iid(pairs: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let (mut sl, mut sh, mut xl, mut xh) = (0u64, 0u64, 0u64, 0u64);
    for (f, v) in pairs {
        let mut buf = f.clone();
        buf.extend_from_slice(&(f.len() as i64).to_le_bytes());
        buf.extend_from_slice(v);
        let h = xxhash_rust::xxh3::xxh3_128(&buf);
        let lo = h as u64;
        let hi = (h >> 64) as u64;
        sl = sl.wrapping_add(lo);
        sh = sh.wrapping_add(hi);
        xl ^= lo;
        xh ^= hi;
    }
    let low = sl ^ xh.rotate_left(1);
    let high = sh ^ xl.rotate_left(1);
    let mut out = low.to_le_bytes().to_vec();
    out.extend_from_slice(&high.to_le_bytes());
    out
}

pub fn entry_reply(e: &MEntry) -> Reply {
    let mut fv = Vec::new();
    for (f, v) in &e.pairs {
        fv.push(bulk(f));
        fv.push(bulk(v));
    }
    Reply::Array(vec![rid(e.id), Reply::Array(fv)])
}

fn entry_reply4(e: &MEntry, idle: i64, count: i64) -> Reply {
    let Reply::Array(mut v) = entry_reply(e) else {
        unreachable!()
    };
    v.push(Reply::Int(idle));
    v.push(Reply::Int(count));
    Reply::Array(v)
}

// ------------------------------------------------------------------ keyspace + commands

/// How an XREAD/XREADGROUP id argument was given.
#[derive(Clone, Copy, Debug)]
pub enum ReadId {
    Id(Id),
    /// `>` (XREADGROUP)
    Gt,
    /// `$` (XREAD)
    Dollar,
    /// `+` (XREAD)
    Plus,
}

#[derive(Clone, Copy, Debug)]
pub enum GroupId {
    Dollar,
    Id(Id),
    /// `-` / `+` (SETID parses non-strictly)
    Minus,
    Plus,
}

#[derive(Clone, Copy, Debug)]
pub enum NackMode {
    Silent,
    Fail,
    Fatal,
}

#[derive(Clone, Debug)]
pub struct Model {
    pub cfg: NodeCfg,
    pub keys: BTreeMap<Vec<u8>, MStream>,
    /// Time of the next tick of redis-server's once-a-second IDMP cron (phased by the
    /// first command).
    pub next_sweep: Option<i64>,
}

fn nogroup() -> Reply {
    err("NOGROUP")
}

impl Model {
    pub fn new(cfg: NodeCfg) -> Self {
        Model {
            cfg,
            keys: BTreeMap::new(),
            next_sweep: None,
        }
    }

    pub fn default_trim_limit(&self, approx: bool, limit: Option<u64>) -> u64 {
        match limit {
            Some(l) => l,
            None if approx => {
                let mut l = 100i64.wrapping_mul(self.cfg.max_entries);
                if l <= 0 {
                    l = 10_000;
                }
                if l > 1_000_000 {
                    l = 1_000_000;
                }
                l as u64
            }
            None => 0,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn xadd(
        &mut self,
        now: i64,
        key: &[u8],
        nomkstream: bool,
        id: AddId,
        pairs: &[(Vec<u8>, Vec<u8>)],
        trim: Option<Trim>,
        idmp: Option<(Vec<u8>, Option<Vec<u8>>)>,
    ) -> Reply {
        if let AddId::Given(i) = id {
            if i == MIN {
                return err("ERR The ID specified in XADD must be greater than 0-0");
            }
        }
        if !self.keys.contains_key(key) {
            if nomkstream {
                return Reply::Nil;
            }
            self.keys.insert(key.to_vec(), MStream::new(&self.cfg));
        }
        let cfg = self.cfg;
        let s = self.keys.get_mut(key).unwrap();
        let mut track: Option<(Vec<u8>, Vec<u8>)> = None;
        if let Some((pid, iid)) = idmp {
            // Nothing expires on the lookup: only the cron sweep (`Model::cron`) does.
            s.producers.entry(pid.clone()).or_default();
            let iid = iid.unwrap_or_else(|| auto_iid(pairs));
            if let Some(orig) = s.idmp_lookup(&pid, &iid) {
                s.iids_dups += 1;
                return rid(orig);
            }
            track = Some((pid, iid));
        }
        if s.last_id == MAX {
            return err("ERR The stream has exhausted the last possible ID");
        }
        let new_id = match s.append(&cfg, now, id, pairs) {
            Ok(i) => i,
            Err(e) => return err(e),
        };
        if let Some((pid, iid)) = track {
            s.idmp_insert(&pid, &iid, new_id);
            s.idmp_tracked = true;
        }
        if let Some(t) = trim {
            s.trim(&t);
        }
        rid(new_id)
    }

    pub fn xtrim(&mut self, key: &[u8], t: Trim) -> Reply {
        match self.keys.get_mut(key) {
            None => Reply::Int(0),
            Some(s) => Reply::Int(s.trim(&t) as i64),
        }
    }

    pub fn xlen(&self, key: &[u8]) -> Reply {
        Reply::Int(self.keys.get(key).map(|s| s.length as i64).unwrap_or(0))
    }

    pub fn xrange(&self, key: &[u8], start: Id, end: Id, count: Option<i64>, rev: bool) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return Reply::Array(vec![]);
        };
        let count = count.map(|c| c.max(0));
        if count == Some(0) {
            return Reply::NilArray;
        }
        let mut v: Vec<Reply> = s
            .range(start, end, rev)
            .into_iter()
            .map(entry_reply)
            .collect();
        if let Some(c) = count {
            v.truncate(c as usize);
        }
        Reply::Array(v)
    }

    pub fn del(&mut self, key: &[u8]) -> Reply {
        Reply::Int(i64::from(self.keys.remove(key).is_some()))
    }

    pub fn xdel(&mut self, key: &[u8], ids: &[Id]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return Reply::Int(0);
        };
        let (mut deleted, mut first) = (0u64, false);
        for &id in ids {
            s.delete_tracked(id, &mut deleted, &mut first);
        }
        s.fix_first(deleted, first);
        Reply::Int(deleted as i64)
    }

    pub fn xdelex(&mut self, key: &[u8], policy: Policy, ids: &[Id]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return Reply::Array(vec![Reply::Int(-1); ids.len()]);
        };
        let (mut deleted, mut first) = (0u64, false);
        let mut out = Vec::new();
        for &id in ids {
            let mut can = true;
            match policy {
                Policy::Acked => can = !s.referenced(id),
                Policy::DelRef => s.cleanup_refs(id),
                Policy::KeepRef => {}
            }
            let res = if can {
                if s.delete_tracked(id, &mut deleted, &mut first) {
                    1
                } else {
                    -1
                }
            } else {
                2
            };
            out.push(Reply::Int(res));
        }
        s.fix_first(deleted, first);
        Reply::Array(out)
    }

    pub fn xack(&mut self, key: &[u8], group: &[u8], ids: &[Id]) -> Reply {
        let Some(g) = self.keys.get_mut(key).and_then(|s| s.groups.get_mut(group)) else {
            return Reply::Int(0);
        };
        let mut n = 0;
        for &id in ids {
            if g.remove(id) {
                n += 1;
            }
        }
        Reply::Int(n)
    }

    pub fn xackdel(&mut self, key: &[u8], group: &[u8], policy: Policy, ids: &[Id]) -> Reply {
        let ok = self
            .keys
            .get(key)
            .is_some_and(|s| s.groups.contains_key(group));
        if !ok {
            return Reply::Array(vec![Reply::Int(-1); ids.len()]);
        }
        let s = self.keys.get_mut(key).unwrap();
        let (mut deleted, mut first) = (0u64, false);
        let mut out = Vec::new();
        for &id in ids {
            let mut res = -1;
            if s.groups.get_mut(group).unwrap().remove(id) {
                let mut can = true;
                match policy {
                    Policy::Acked => can = !s.referenced(id),
                    Policy::DelRef => s.cleanup_refs(id),
                    Policy::KeepRef => {}
                }
                if can {
                    s.delete_tracked(id, &mut deleted, &mut first);
                }
                res = if can { 1 } else { 2 };
            }
            out.push(Reply::Int(res));
        }
        s.fix_first(deleted, first);
        Reply::Array(out)
    }

    pub fn xnack(
        &mut self,
        key: &[u8],
        group: &[u8],
        mode: NackMode,
        ids: &[Id],
        retry: Option<u64>,
        force: bool,
    ) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return nogroup();
        };
        if !s.groups.contains_key(group) {
            return nogroup();
        }
        let set_count = |c: u64| -> u64 {
            if let Some(r) = retry {
                return r;
            }
            match mode {
                NackMode::Silent => c.saturating_sub(1),
                NackMode::Fail => c,
                NackMode::Fatal => LLONG_MAX,
            }
        };
        let mut nacked = 0;
        for &id in ids {
            let exists = s.exists(id);
            let g = s.groups.get_mut(group).unwrap();
            if let Some(n) = g.pel.get(&id).cloned() {
                let nc = set_count(n.count);
                g.pel.get_mut(&id).unwrap().count = nc;
                if let Some(o) = n.owner {
                    g.consumers.get_mut(&o).unwrap().pel.remove(&id);
                    g.pel.get_mut(&id).unwrap().owner = None;
                }
                g.unlink(id);
                g.insert_nacked(id);
            } else if force {
                if !exists {
                    continue;
                }
                g.pel.insert(
                    id,
                    MNack {
                        owner: None,
                        count: set_count(0),
                        time: now_placeholder(),
                    },
                );
                g.insert_nacked(id);
            } else {
                continue;
            }
            nacked += 1;
        }
        Reply::Int(nacked)
    }

    pub fn xgroup_create(
        &mut self,
        now: i64,
        key: &[u8],
        group: &[u8],
        id: GroupId,
        mkstream: bool,
        entries_read: i64,
    ) -> Reply {
        let _ = now;
        if !self.keys.contains_key(key) && !mkstream {
            return err("ERR The XGROUP subcommand requires the key to exist");
        }
        let id = match id {
            GroupId::Dollar => self.keys.get(key).map(|s| s.last_id).unwrap_or(MIN),
            GroupId::Id(i) => i,
            GroupId::Minus | GroupId::Plus => return err("ERR Invalid stream ID"),
        };
        let cfg = self.cfg;
        let s = self
            .keys
            .entry(key.to_vec())
            .or_insert_with(|| MStream::new(&cfg));
        let mut er = entries_read;
        if er != -1 && er as u64 > s.entries_added {
            er = s.entries_added as i64;
        }
        if s.groups.contains_key(group) {
            return err("BUSYGROUP");
        }
        s.groups.insert(group.to_vec(), MGroup::new(id, er));
        Reply::ok()
    }

    pub fn xgroup_setid(&mut self, key: &[u8], group: &[u8], id: GroupId, er: i64) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR The XGROUP subcommand requires the key to exist");
        };
        if !s.groups.contains_key(group) {
            return nogroup();
        }
        let id = match id {
            GroupId::Dollar => s.last_id,
            GroupId::Id(i) => i,
            GroupId::Minus => MIN,
            GroupId::Plus => MAX,
        };
        let mut er = er;
        if er != -1 && er as u64 > s.entries_added {
            er = s.entries_added as i64;
        }
        let g = s.groups.get_mut(group).unwrap();
        g.last_id = id;
        g.entries_read = er;
        Reply::ok()
    }

    pub fn xgroup_destroy(&mut self, key: &[u8], group: &[u8]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR The XGROUP subcommand requires the key to exist");
        };
        Reply::Int(i64::from(s.groups.remove(group).is_some()))
    }

    pub fn xgroup_createconsumer(&mut self, now: i64, key: &[u8], group: &[u8], c: &[u8]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR The XGROUP subcommand requires the key to exist");
        };
        let Some(g) = s.groups.get_mut(group) else {
            return nogroup();
        };
        Reply::Int(i64::from(g.ensure_consumer(c, now)))
    }

    pub fn xgroup_delconsumer(&mut self, key: &[u8], group: &[u8], c: &[u8]) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR The XGROUP subcommand requires the key to exist");
        };
        let Some(g) = s.groups.get_mut(group) else {
            return nogroup();
        };
        let Some(cons) = g.consumers.remove(c) else {
            return Reply::Int(0);
        };
        for id in &cons.pel {
            g.unlink(*id);
            g.pel.remove(id);
        }
        Reply::Int(cons.pel.len() as i64)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn xreadgroup(
        &mut self,
        now: i64,
        group: &[u8],
        consumer: &[u8],
        count: u64,
        claim: Option<i64>,
        noack: bool,
        streams: &[(Vec<u8>, ReadId)],
    ) -> Reply {
        let mut ids = Vec::new();
        for (key, rid_) in streams {
            let ok = self
                .keys
                .get(key)
                .is_some_and(|s| s.groups.contains_key(group));
            if !ok {
                return nogroup();
            }
            ids.push(match rid_ {
                ReadId::Gt => MAX,
                ReadId::Id(i) => *i,
                _ => return err("ERR"),
            });
        }
        let mut min_idle: i64 = claim.unwrap_or(-1);
        let mut served = Vec::new();
        for (i, (key, _)) in streams.iter().enumerate() {
            let s = self.keys.get_mut(key).unwrap();
            let mut gt = ids[i];
            let mut serve_claimed = false;
            let mut serve_sync = false;
            let mut serve_history = false;
            {
                let g = &s.groups[group];
                if min_idle != -1 {
                    for id in &g.time {
                        if !s.exists(*id) {
                            continue;
                        }
                        let idle = now.wrapping_sub(g.pel[id].time) as u64;
                        if idle >= min_idle as u64 {
                            serve_claimed = true;
                        }
                        break;
                    }
                }
                if gt != MAX {
                    serve_sync = true;
                    serve_history = true;
                } else if s.length > 0 {
                    let maxid = s.last_live().unwrap();
                    if maxid > g.last_id {
                        serve_sync = true;
                        gt = g.last_id;
                    }
                }
            }
            {
                let g = s.groups.get_mut(group).unwrap();
                g.ensure_consumer(consumer, now);
                g.consumers.get_mut(consumer).unwrap().seen = now;
            }
            let mut claimed_only = false;
            if serve_history {
                min_idle = -1;
            } else if !serve_sync && serve_claimed {
                serve_sync = true;
                claimed_only = true;
            }
            if !serve_sync {
                continue;
            }
            let start = incr(gt).unwrap_or(MIN);
            let entries = if serve_history {
                read_history(s, group, consumer, start, count, now)
            } else {
                serve_group(
                    s,
                    group,
                    consumer,
                    start,
                    count,
                    min_idle,
                    claimed_only,
                    noack,
                    now,
                )
            };
            served.push(Reply::Array(vec![bulk(key), Reply::Array(entries)]));
        }
        if served.is_empty() {
            Reply::NilArray
        } else {
            Reply::Array(served)
        }
    }

    pub fn xread(&self, count: u64, streams: &[(Vec<u8>, ReadId)]) -> Reply {
        let mut gts = Vec::new();
        for (key, r) in streams {
            let s = self.keys.get(key);
            gts.push(match r {
                ReadId::Id(i) => *i,
                ReadId::Dollar => s.map(|s| s.last_id).unwrap_or(MIN),
                ReadId::Plus => match s {
                    Some(s) if s.length > 0 => decr(s.last_live().unwrap()).unwrap_or(MAX),
                    _ => MIN,
                },
                ReadId::Gt => return err("ERR"),
            });
        }
        let mut served = Vec::new();
        for (i, (key, _)) in streams.iter().enumerate() {
            let Some(s) = self.keys.get(key) else {
                continue;
            };
            if s.length == 0 || s.last_live().unwrap() <= gts[i] {
                continue;
            }
            let start = incr(gts[i]).unwrap_or(MIN);
            let mut v: Vec<Reply> = s
                .range(start, MAX, false)
                .into_iter()
                .map(entry_reply)
                .collect();
            if count > 0 {
                v.truncate(count as usize);
            }
            served.push(Reply::Array(vec![bulk(key), Reply::Array(v)]));
        }
        if served.is_empty() {
            Reply::NilArray
        } else {
            Reply::Array(served)
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn xclaim(
        &mut self,
        now: i64,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        minidle: i64,
        ids: &[Id],
        deliverytime: i64,
        retry: i64,
        force: bool,
        justid: bool,
        lastid: Id,
    ) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return nogroup();
        };
        if !s.groups.contains_key(group) {
            return nogroup();
        }
        let minidle = minidle.max(0);
        let mut dt = deliverytime;
        if dt != -1 {
            if dt < 0 || dt > now {
                dt = now;
            }
        } else {
            dt = now;
        }
        {
            let g = s.groups.get_mut(group).unwrap();
            if lastid > g.last_id {
                g.last_id = lastid;
            }
            g.ensure_consumer(consumer, now);
            g.consumers.get_mut(consumer).unwrap().seen = now;
        }
        let mut out = Vec::new();
        for &id in ids {
            let exists = s.exists(id);
            let g = s.groups.get_mut(group).unwrap();
            if !exists {
                g.remove(id);
                continue;
            }
            if force && !g.pel.contains_key(&id) {
                g.pel.insert(
                    id,
                    MNack {
                        owner: None,
                        count: 1,
                        time: now,
                    },
                );
                g.time.push(id);
            }
            let Some(n) = g.pel.get(&id).cloned() else {
                continue;
            };
            if n.owner.is_some() && minidle != 0 && now - n.time < minidle {
                continue;
            }
            g.update(id, dt);
            if retry >= 0 {
                g.pel.get_mut(&id).unwrap().count = retry as u64;
            } else if !justid {
                g.incr_count(id);
            }
            g.transfer(id, consumer);
            g.consumers.get_mut(consumer).unwrap().active = now;
            out.push(if justid {
                rid(id)
            } else {
                entry_reply(s.get(id).unwrap())
            });
        }
        Reply::Array(out)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn xautoclaim(
        &mut self,
        now: i64,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        minidle: i64,
        start: Id,
        count: i64,
        justid: bool,
    ) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return nogroup();
        };
        if !s.groups.contains_key(group) {
            return nogroup();
        }
        let minidle = minidle.max(0);
        {
            let g = s.groups.get_mut(group).unwrap();
            g.ensure_consumer(consumer, now);
            g.consumers.get_mut(consumer).unwrap().seen = now;
        }
        let mut count = count;
        let mut attempts = count * 10;
        // Position of the rax iterator: next key is the first >= `pos` (inclusive) or
        // > `pos` (exclusive).
        let mut pos: (Id, bool) = (start, true);
        let next_key = |g: &MGroup, pos: (Id, bool)| -> Option<Id> {
            g.pel
                .range(pos.0..)
                .map(|(k, _)| *k)
                .find(|k| pos.1 || *k != pos.0)
        };
        let mut claimed = Vec::new();
        let mut deleted = Vec::new();
        loop {
            if attempts == 0 {
                break;
            }
            attempts -= 1;
            if count == 0 {
                break;
            }
            let Some(id) = next_key(&s.groups[group], pos) else {
                break;
            };
            pos = (id, false);
            let exists = s.exists(id);
            let g = s.groups.get_mut(group).unwrap();
            if !exists {
                g.remove(id);
                deleted.push(rid(id));
                count -= 1;
                continue;
            }
            let n = g.pel[&id].clone();
            if n.owner.is_some() && minidle != 0 && now - n.time < minidle {
                continue;
            }
            g.update(id, now);
            if !justid {
                g.incr_count(id);
            }
            g.transfer(id, consumer);
            count -= 1;
            g.consumers.get_mut(consumer).unwrap().active = now;
            claimed.push(if justid {
                rid(id)
            } else {
                entry_reply(s.get(id).unwrap())
            });
        }
        let cursor = next_key(&s.groups[group], pos).unwrap_or(MIN);
        Reply::Array(vec![
            rid(cursor),
            Reply::Array(claimed),
            Reply::Array(deleted),
        ])
    }

    pub fn xpending_summary(&self, key: &[u8], group: &[u8]) -> Reply {
        let Some(g) = self.keys.get(key).and_then(|s| s.groups.get(group)) else {
            return nogroup();
        };
        if g.pel.is_empty() {
            return Reply::Array(vec![Reply::Int(0), Reply::Nil, Reply::Nil, Reply::NilArray]);
        }
        let first = *g.pel.keys().next().unwrap();
        let last = *g.pel.keys().next_back().unwrap();
        let cons: Vec<Reply> = g
            .consumers
            .iter()
            .filter(|(_, c)| !c.pel.is_empty())
            .map(|(n, c)| Reply::Array(vec![bulk(n), bulk(c.pel.len().to_string().as_bytes())]))
            .collect();
        Reply::Array(vec![
            Reply::Int(g.pel.len() as i64),
            rid(first),
            rid(last),
            Reply::Array(cons),
        ])
    }

    #[allow(clippy::too_many_arguments)]
    pub fn xpending_ext(
        &self,
        now: i64,
        key: &[u8],
        group: &[u8],
        minidle: i64,
        start: Id,
        end: Id,
        count: i64,
        consumer: Option<&[u8]>,
    ) -> Reply {
        let Some(g) = self.keys.get(key).and_then(|s| s.groups.get(group)) else {
            return nogroup();
        };
        let ids: Vec<Id> = match consumer {
            Some(c) => match g.consumers.get(c) {
                None => return Reply::Array(vec![]),
                Some(c) => c.pel.range(start..).copied().collect(),
            },
            None => g.pel.range(start..).map(|(k, _)| *k).collect(),
        };
        let mut left = count.max(0);
        let mut out = Vec::new();
        for id in ids {
            if left == 0 || id > end {
                break;
            }
            let n = &g.pel[&id];
            if n.owner.is_some() && minidle != 0 && now - n.time < minidle {
                continue;
            }
            left -= 1;
            let (owner, elapsed) = match &n.owner {
                Some(o) => (o.clone(), (now - n.time).max(0)),
                None => (Vec::new(), -1),
            };
            out.push(Reply::Array(vec![
                rid(id),
                Reply::Bulk(owner),
                Reply::Int(elapsed),
                Reply::Int(n.count as i64),
            ]));
        }
        Reply::Array(out)
    }

    pub fn xinfo_groups(&self, key: &[u8]) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return err("ERR no such key");
        };
        Reply::Array(
            s.groups
                .iter()
                .map(|(name, g)| {
                    kv_map(vec![
                        ("name", bulk(name)),
                        ("consumers", Reply::Int(g.consumers.len() as i64)),
                        ("pending", Reply::Int(g.pel.len() as i64)),
                        ("last-delivered-id", rid(g.last_id)),
                        (
                            "entries-read",
                            if g.entries_read != -1 {
                                Reply::Int(g.entries_read)
                            } else {
                                Reply::Nil
                            },
                        ),
                        ("lag", s.lag(g)),
                    ])
                })
                .collect(),
        )
    }

    pub fn xinfo_consumers(&self, now: i64, key: &[u8], group: &[u8]) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return err("ERR no such key");
        };
        let Some(g) = s.groups.get(group) else {
            return nogroup();
        };
        Reply::Array(
            g.consumers
                .iter()
                .map(|(n, c)| {
                    kv_map(vec![
                        ("name", bulk(n)),
                        ("pending", Reply::Int(c.pel.len() as i64)),
                        ("idle", Reply::Int((now - c.seen).max(0))),
                        (
                            "inactive",
                            Reply::Int(if c.active != -1 { now - c.active } else { -1 }),
                        ),
                    ])
                })
                .collect(),
        )
    }

    /// XINFO STREAM (without FULL), minus `radix-tree-nodes`, `pids-tracked` and
    /// `iids-tracked` (cron-timing dependent or not modelled).
    pub fn xinfo_stream(&self, key: &[u8]) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return err("ERR no such key");
        };
        let live = s.live();
        kv_map(vec![
            ("length", Reply::Int(s.length as i64)),
            ("radix-tree-keys", Reply::Int(s.nodes.len() as i64)),
            ("last-generated-id", rid(s.last_id)),
            ("max-deleted-entry-id", rid(s.max_deleted)),
            ("entries-added", Reply::Int(s.entries_added as i64)),
            ("recorded-first-entry-id", rid(s.first_id)),
            ("idmp-duration", Reply::Int(s.idmp_duration as i64)),
            ("idmp-maxsize", Reply::Int(s.idmp_maxsize as i64)),
            ("iids-added", Reply::Int(s.iids_added as i64)),
            ("iids-duplicates", Reply::Int(s.iids_dups as i64)),
            ("groups", Reply::Int(s.groups.len() as i64)),
            (
                "first-entry",
                live.first().map(|e| entry_reply(e)).unwrap_or(Reply::Nil),
            ),
            (
                "last-entry",
                live.last().map(|e| entry_reply(e)).unwrap_or(Reply::Nil),
            ),
        ])
    }

    /// XINFO STREAM FULL [COUNT n] (same omitted fields as [`Model::xinfo_stream`]).
    pub fn xinfo_full(&self, key: &[u8], count: Option<i64>) -> Reply {
        let Some(s) = self.keys.get(key) else {
            return err("ERR no such key");
        };
        let mut count = count.unwrap_or(10);
        if count < 0 {
            count = 10;
        }
        let limit = if count == 0 {
            usize::MAX
        } else {
            count as usize
        };
        let entries: Vec<Reply> = s.live().into_iter().take(limit).map(entry_reply).collect();
        let groups: Vec<Reply> = s
            .groups
            .iter()
            .map(|(name, g)| {
                let pending: Vec<Reply> = g
                    .pel
                    .iter()
                    .take(limit)
                    .map(|(id, n)| {
                        Reply::Array(vec![
                            rid(*id),
                            Reply::Bulk(n.owner.clone().unwrap_or_default()),
                            Reply::Int(n.time),
                            Reply::Int(n.count as i64),
                        ])
                    })
                    .collect();
                let consumers: Vec<Reply> = g
                    .consumers
                    .iter()
                    .map(|(cn, c)| {
                        let p: Vec<Reply> = c
                            .pel
                            .iter()
                            .take(limit)
                            .map(|id| {
                                let n = &g.pel[id];
                                Reply::Array(vec![
                                    rid(*id),
                                    Reply::Int(n.time),
                                    Reply::Int(n.count as i64),
                                ])
                            })
                            .collect();
                        kv_map(vec![
                            ("name", bulk(cn)),
                            ("seen-time", Reply::Int(c.seen)),
                            ("active-time", Reply::Int(c.active)),
                            ("pel-count", Reply::Int(c.pel.len() as i64)),
                            ("pending", Reply::Array(p)),
                        ])
                    })
                    .collect();
                kv_map(vec![
                    ("name", bulk(name)),
                    ("last-delivered-id", rid(g.last_id)),
                    (
                        "entries-read",
                        if g.entries_read != -1 {
                            Reply::Int(g.entries_read)
                        } else {
                            Reply::Nil
                        },
                    ),
                    ("lag", s.lag(g)),
                    ("pel-count", Reply::Int(g.pel.len() as i64)),
                    ("nacked-count", Reply::Int(g.nacked_count() as i64)),
                    ("pending", Reply::Array(pending)),
                    ("consumers", Reply::Array(consumers)),
                ])
            })
            .collect();
        kv_map(vec![
            ("length", Reply::Int(s.length as i64)),
            ("radix-tree-keys", Reply::Int(s.nodes.len() as i64)),
            ("last-generated-id", rid(s.last_id)),
            ("max-deleted-entry-id", rid(s.max_deleted)),
            ("entries-added", Reply::Int(s.entries_added as i64)),
            ("recorded-first-entry-id", rid(s.first_id)),
            ("idmp-duration", Reply::Int(s.idmp_duration as i64)),
            ("idmp-maxsize", Reply::Int(s.idmp_maxsize as i64)),
            ("iids-added", Reply::Int(s.iids_added as i64)),
            ("iids-duplicates", Reply::Int(s.iids_dups as i64)),
            ("entries", Reply::Array(entries)),
            ("groups", Reply::Array(groups)),
        ])
    }

    pub fn xsetid(&mut self, key: &[u8], id: Id, ea: Option<i64>, md: Option<Id>) -> Reply {
        if ea.is_some_and(|e| e < 0) {
            return err("ERR entries_added must be positive");
        }
        if let Some(m) = md {
            if id < m {
                return err("ERR The ID specified in XSETID is smaller than the provided");
            }
        }
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR no such key");
        };
        if id < s.max_deleted {
            return err("ERR The ID specified in XSETID is smaller than current");
        }
        if s.length > 0 {
            if id < s.last_live().unwrap() {
                return err("ERR The ID specified in XSETID is smaller than the target");
            }
            if let Some(e) = ea {
                if s.length > e as u64 {
                    return err("ERR The entries_added specified in XSETID is smaller");
                }
            }
        }
        s.last_id = id;
        if let Some(e) = ea {
            s.entries_added = e as u64;
        }
        if let Some(m) = md {
            if m != MIN {
                s.max_deleted = m;
            }
        }
        Reply::ok()
    }

    pub fn xcfgset(&mut self, key: &[u8], dur: Option<u64>, max: Option<u64>) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR no such key");
        };
        if dur.is_none() && max.is_none() {
            return err("ERR At least one parameter");
        }
        let mut changed = false;
        if let Some(d) = dur {
            if s.idmp_duration != d {
                s.idmp_duration = d;
                s.producers.clear();
                changed = true;
            }
        }
        if let Some(m) = max {
            if s.idmp_maxsize != m {
                s.idmp_maxsize = m;
                s.producers.clear();
                changed = true;
            }
        }
        if changed {
            s.idmp_tracked = false;
        }
        Reply::ok()
    }

    pub fn xidmprecord(&mut self, _now: i64, key: &[u8], pid: &[u8], iid: &[u8], id: Id) -> Reply {
        let Some(s) = self.keys.get_mut(key) else {
            return err("ERR no such key");
        };
        if !s.exists(id) {
            return err("ERR No such message");
        }
        s.producers.entry(pid.to_vec()).or_default();
        match s.idmp_lookup(pid, iid) {
            Some(e) if e == id => Reply::ok(),
            Some(_) => err("ERR IID already exists"),
            None => {
                s.idmp_insert(pid, iid, id);
                s.idmp_tracked = true;
                Reply::ok()
            }
        }
    }

    /// Before a command at `now`: the IDMP cron's ticks due since the last command, run
    /// as one sweep at the latest tick (`serverCron`'s `run_with_period(1000)`), ticks on
    /// whole seconds of the store clock as the engine phases them. The clock only moves
    /// forward here.
    pub fn cron(&mut self, now: i64) {
        if self.next_sweep.is_none_or(|next| now >= next) {
            let tick = now - now.rem_euclid(1000);
            self.next_sweep = Some(tick + 1000);
            self.sweep(tick);
        }
    }

    /// The periodic IDMP sweep (`handleExpiredIdmpEntries`), forced: only tracked
    /// streams are visited; a stream left without producers is untracked.
    pub fn sweep(&mut self, now: i64) {
        for s in self.keys.values_mut() {
            s.idmp_expire(now);
        }
    }
}

/// FORCE-created NACK records get their delivery time from `pelListInsertNacked` (0);
/// the value set at creation is irrelevant.
fn now_placeholder() -> i64 {
    0
}

fn read_history(
    s: &mut MStream,
    group: &[u8],
    consumer: &[u8],
    start: Id,
    count: u64,
    now: i64,
) -> Vec<Reply> {
    let ids: Vec<Id> = s.groups[group].consumers[consumer]
        .pel
        .range(start..)
        .copied()
        .take(if count == 0 {
            usize::MAX
        } else {
            count as usize
        })
        .collect();
    let mut out = Vec::new();
    for id in ids {
        match s.get(id).cloned() {
            Some(e) => {
                out.push(entry_reply(&e));
                let g = s.groups.get_mut(group).unwrap();
                g.incr_count(id);
                g.update(id, now);
            }
            None => out.push(Reply::Array(vec![rid(id), Reply::NilArray])),
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn serve_group(
    s: &mut MStream,
    group: &[u8],
    consumer: &[u8],
    start: Id,
    count: u64,
    min_idle: i64,
    claimed_only: bool,
    noack: bool,
    now: i64,
) -> Vec<Reply> {
    let mut out = Vec::new();
    if min_idle != -1 {
        let snapshot = s.groups[group].time.clone();
        let mut processed = 0u64;
        for id in snapshot {
            let n = s.groups[group].pel[&id].clone();
            let idle = now.wrapping_sub(n.time) as u64;
            if idle < min_idle as u64 {
                break;
            }
            if let Some(e) = s.get(id).cloned() {
                out.push(entry_reply4(&e, idle as i64, n.count as i64));
                let g = s.groups.get_mut(group).unwrap();
                g.transfer(id, consumer);
                g.incr_count(id);
                g.update(id, now);
                g.consumers.get_mut(consumer).unwrap().active = now;
                processed += 1;
                if count != 0 && processed >= count {
                    break;
                }
            }
        }
    }
    if claimed_only || (count != 0 && count == out.len() as u64) {
        return out;
    }
    let entries: Vec<MEntry> = s.range(start, MAX, false).into_iter().cloned().collect();
    for e in entries {
        let id = e.id;
        let (first_id, entries_added) = (s.first_id, s.entries_added);
        let has_tomb = |from: Id| s.range_has_tombstones(from, MAX);
        let g = &s.groups[group];
        if id > g.last_id {
            let mut er = g.entries_read;
            if er != -1 && g.last_id >= first_id && !has_tomb(g.last_id) {
                er += 1;
            } else if entries_added != 0 {
                er = s.estimate(id);
            }
            let g = s.groups.get_mut(group).unwrap();
            g.entries_read = er;
            g.last_id = id;
        }
        out.push(if min_idle != -1 {
            entry_reply4(&e, 0, 0)
        } else {
            entry_reply(&e)
        });
        if !noack {
            let g = s.groups.get_mut(group).unwrap();
            #[allow(clippy::map_entry)]
            if g.pel.contains_key(&id) {
                g.transfer(id, consumer);
                g.pel.get_mut(&id).unwrap().count = 1;
                g.update(id, now);
            } else {
                g.pel.insert(
                    id,
                    MNack {
                        owner: Some(consumer.to_vec()),
                        count: 1,
                        time: now,
                    },
                );
                g.consumers.get_mut(consumer).unwrap().pel.insert(id);
                g.time.push(id);
            }
            g.consumers.get_mut(consumer).unwrap().active = now;
        }
        if count != 0 && count == out.len() as u64 {
            break;
        }
    }
    out
}
