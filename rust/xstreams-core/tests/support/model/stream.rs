//! A stream: its nodes, counters, groups and IDMP producers; trimming, deletion and the
//! IDMPAUTO hash.

use super::*;

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

    pub(super) fn fix_first(&mut self, deleted: u64, first_entry: bool) {
        if deleted > 0 {
            if self.length == 0 {
                self.first_id = MIN;
            } else if first_entry {
                self.first_id = self.first_live().unwrap_or(MAX);
            }
        }
    }

    /// Delete as XDEL/XDELEX/XACKDEL do, with the first-id and max-deleted updates.
    pub(super) fn delete_tracked(
        &mut self,
        id: Id,
        deleted: &mut u64,
        first_entry: &mut bool,
    ) -> bool {
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
                if self.nodes[i].entries[k].deleted {
                    // Deliberate difference "delref-tombstones" (docs/differences.md):
                    // DELREF drops the references of tombstones it passes too.
                    if t.policy == Policy::DelRef {
                        self.cleanup_refs(id);
                    }
                } else {
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
            // Deliberate difference "trim-empty-node" (docs/differences.md): a node this
            // pass left with no live entry is removed, and the walk stops there unless
            // the whole node was in range.
            if here > 0 && here == entries {
                self.nodes.remove(i);
                if eligible {
                    continue;
                }
                break;
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

    pub(super) fn idmp_lookup(&self, pid: &[u8], iid: &[u8]) -> Option<Id> {
        self.producers
            .get(pid)?
            .iter()
            .find(|(i, _)| i.as_slice() == iid)
            .map(|(_, id)| *id)
    }

    pub(super) fn idmp_insert(&mut self, pid: &[u8], iid: &[u8], id: Id) {
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

pub(super) fn entry_reply4(e: &MEntry, idle: i64, count: i64) -> Reply {
    let Reply::Array(mut v) = entry_reply(e) else {
        unreachable!()
    };
    v.push(Reply::Int(idle));
    v.push(Reply::Int(count));
    Reply::Array(v)
}
