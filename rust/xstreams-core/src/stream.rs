//! A stream: the radix tree of nodes, its counters, its consumer groups (with the index of
//! which groups reference which entries) and its IDMP state.
//!
//! Invariants (checked by [`Stream::validate`]):
//! - nodes are keyed by their master ID, hold IDs inside `[master, last_any]`, and node
//!   ranges are disjoint and ascending; `length` is the sum of live entries;
//! - `first_id` is the first live ID (0-0 when empty), `last_id` >= every ID;
//! - `refs[id]` lists exactly the groups whose PEL holds `id`.

use std::collections::BTreeMap;

use slab::Slab;
use smallvec::SmallVec;

use crate::config::Config;
use crate::group::{ConsumerGroup, ConsumerIdx, PelIdx, INVALID_ENTRIES_READ};
use crate::id::StreamId;
use crate::idmp::IdmpState;
use crate::node::{EntryView, StreamNode};
use crate::rax::Rax;
use crate::reply::Reply;

/// Largest total size of an entry's fields and values (and of a node), as in Redis.
pub const STREAM_LISTPACK_MAX_SIZE: u64 = 1 << 30;

/// Index of a group inside its stream.
pub type GroupIdx = usize;

/// Why [`Stream::append`] refused an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendError {
    /// The ID is not greater than the stream's last ID (or the sequence would overflow).
    IdTooSmall,
    /// Fields and values exceed 1 GiB.
    TooLarge,
}

/// How trimming treats entries that consumer groups still reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RefPolicy {
    /// Delete entries, keep PEL references (classic behaviour).
    #[default]
    KeepRef,
    /// Delete entries and every PEL reference to them.
    DelRef,
    /// Delete only entries every group has read and acknowledged.
    Acked,
}

/// Trimming strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimStrategy {
    MaxLen(u64),
    MinId(StreamId),
}

/// Arguments of a trim (XTRIM, or XADD's trimming options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrimArgs {
    pub strategy: TrimStrategy,
    /// `~`: only whole nodes are removed (with KEEPREF).
    pub approx: bool,
    /// Maximum entries to delete, 0 = unlimited.
    pub limit: u64,
    pub policy: RefPolicy,
}

/// The consumer groups of a stream and the reference index used by ACKED/DELREF.
#[derive(Clone, Debug, Default)]
pub struct Groups {
    by_name: BTreeMap<Vec<u8>, GroupIdx>,
    slab: Slab<ConsumerGroup>,
    /// Entry ID -> groups whose PEL holds it.
    refs: BTreeMap<StreamId, SmallVec<[GroupIdx; 2]>>,
    /// Cached minimum of the groups' last-delivered IDs (lazily recomputed).
    min_last_id: StreamId,
    min_valid: bool,
}

impl Groups {
    /// Number of groups.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Are there no groups?
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Group index by name.
    pub fn lookup(&self, name: &[u8]) -> Option<GroupIdx> {
        self.by_name.get(name).copied()
    }

    /// The group at `g`.
    pub fn get(&self, g: GroupIdx) -> &ConsumerGroup {
        &self.slab[g]
    }

    /// The group at `g`, mutably. Use the `Groups` methods for PEL changes so that the
    /// reference index stays in sync.
    pub fn get_mut(&mut self, g: GroupIdx) -> &mut ConsumerGroup {
        &mut self.slab[g]
    }

    /// Groups in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], GroupIdx, &ConsumerGroup)> + '_ {
        self.by_name
            .iter()
            .map(move |(n, &g)| (n.as_slice(), g, &self.slab[g]))
    }

    /// Create a group; `None` if the name exists.
    pub fn create(
        &mut self,
        name: &[u8],
        last_id: StreamId,
        entries_read: i64,
    ) -> Option<GroupIdx> {
        if self.by_name.contains_key(name) {
            return None;
        }
        let g = self
            .slab
            .insert(ConsumerGroup::new(StreamId::MIN, entries_read));
        self.by_name.insert(name.to_vec(), g);
        self.set_last_id(g, last_id);
        Some(g)
    }

    /// Destroy a group, dropping its references.
    pub fn destroy(&mut self, g: GroupIdx) {
        let ids: Vec<StreamId> = self.slab[g].pending_ids().collect();
        for id in ids {
            self.unlink_ref(id, g);
        }
        if self.min_valid && self.min_last_id == self.slab[g].last_id {
            self.min_valid = false;
        }
        let name = self
            .by_name
            .iter()
            .find(|(_, &i)| i == g)
            .map(|(n, _)| n.clone());
        if let Some(n) = name {
            self.by_name.remove(&n);
        }
        self.slab.remove(g);
    }

    /// Set a group's last-delivered ID, invalidating the cached minimum when needed.
    pub fn set_last_id(&mut self, g: GroupIdx, id: StreamId) {
        let cg = &mut self.slab[g];
        if self.min_valid && (cg.last_id == self.min_last_id || id < self.min_last_id) {
            self.min_valid = false;
        }
        cg.last_id = id;
    }

    fn link_ref(&mut self, id: StreamId, g: GroupIdx) {
        self.refs.entry(id).or_default().push(g);
    }

    fn unlink_ref(&mut self, id: StreamId, g: GroupIdx) {
        if let Some(list) = self.refs.get_mut(&id) {
            if let Some(pos) = list.iter().position(|&x| x == g) {
                list.remove(pos);
            }
            if list.is_empty() {
                self.refs.remove(&id);
            }
        }
    }

    /// New pending record in group `g` (owned by `consumer`, delivered at `now`).
    pub fn add_pending(
        &mut self,
        g: GroupIdx,
        id: StreamId,
        consumer: Option<ConsumerIdx>,
        now: i64,
    ) -> Option<PelIdx> {
        let p = self.slab[g].add_pending(id, consumer, now)?;
        self.link_ref(id, g);
        Some(p)
    }

    /// New unowned record in the NACK zone of group `g`.
    pub fn add_nacked(&mut self, g: GroupIdx, id: StreamId, delivery_count: u64) -> Option<PelIdx> {
        let p = self.slab[g].add_nacked(id, delivery_count)?;
        self.link_ref(id, g);
        Some(p)
    }

    /// Remove a pending record of group `g`.
    pub fn remove_pending(&mut self, g: GroupIdx, p: PelIdx) -> StreamId {
        let id = self.slab[g].remove_pending(p);
        self.unlink_ref(id, g);
        id
    }

    /// Delete a consumer of group `g`, dropping the references of its pending entries.
    /// Returns how many entries it had pending.
    pub fn delete_consumer(&mut self, g: GroupIdx, c: ConsumerIdx) -> usize {
        let ids = self.slab[g].delete_consumer(c);
        for id in &ids {
            self.unlink_ref(*id, g);
        }
        ids.len()
    }

    /// Is the entry still needed by some group: not yet read by every group (its ID is
    /// above the smallest last-delivered ID), or pending somewhere?
    pub fn entry_is_referenced(&mut self, id: StreamId) -> bool {
        if self.by_name.is_empty() {
            return false;
        }
        if !self.min_valid {
            self.min_valid = true;
            self.min_last_id = self
                .slab
                .iter()
                .map(|(_, g)| g.last_id)
                .min()
                .unwrap_or(StreamId::MAX);
        }
        if self.min_last_id < id {
            return true;
        }
        self.refs.contains_key(&id)
    }

    /// Remove every group's pending record for `id` (DELREF); returns how many.
    pub fn cleanup_entry_refs(&mut self, id: StreamId) -> usize {
        let mut n = 0;
        if let Some(list) = self.refs.remove(&id) {
            for g in list {
                let cg = &mut self.slab[g];
                if let Some(p) = cg.pel_idx(&id) {
                    cg.remove_pending(p);
                    n += 1;
                }
            }
        }
        n
    }

    /// Rebuild from snapshot groups (name order), recomputing the reference index.
    pub fn restore(groups: Vec<(Vec<u8>, ConsumerGroup)>) -> Result<Groups, String> {
        let mut out = Groups::default();
        for (name, cg) in groups {
            if out.by_name.contains_key(&name) {
                return Err("group listed twice".into());
            }
            let ids: Vec<StreamId> = cg.pending_ids().collect();
            let g = out.slab.insert(cg);
            out.by_name.insert(name, g);
            for id in ids {
                out.link_ref(id, g);
            }
        }
        Ok(out)
    }

    /// Groups referencing `id` (for tests and validation).
    pub fn refs_of(&self, id: &StreamId) -> &[GroupIdx] {
        self.refs.get(id).map(|v| v.as_slice()).unwrap_or(&[])
    }

    fn validate(&self) -> Result<(), String> {
        let mut expected: BTreeMap<StreamId, Vec<GroupIdx>> = BTreeMap::new();
        for (g, cg) in &self.slab {
            cg.validate()?;
            for id in cg.pending_ids() {
                expected.entry(id).or_default().push(g);
            }
        }
        if expected.len() != self.refs.len() {
            return Err(format!(
                "refs index has {} ids, PELs {}",
                self.refs.len(),
                expected.len()
            ));
        }
        for (id, gs) in &expected {
            let mut have: Vec<GroupIdx> = self.refs_of(id).to_vec();
            have.sort_unstable();
            if &have != gs {
                return Err(format!("refs of {id}: {have:?} vs PELs {gs:?}"));
            }
        }
        if self.by_name.len() != self.slab.len() {
            return Err("group name index out of sync".into());
        }
        if self.min_valid {
            let m = self
                .slab
                .iter()
                .map(|(_, g)| g.last_id)
                .min()
                .unwrap_or(StreamId::MAX);
            if m < self.min_last_id {
                return Err("cached minimum last id is above the real minimum".into());
            }
        }
        Ok(())
    }
}

/// A stream value.
#[derive(Clone, Debug)]
pub struct Stream {
    pub(crate) rax: Rax<Box<StreamNode>>,
    /// Live entries.
    pub length: u64,
    /// Last ID ever generated or set.
    pub last_id: StreamId,
    /// First live ID (0-0 when empty).
    pub first_id: StreamId,
    /// Largest ID ever deleted.
    pub max_deleted_id: StreamId,
    /// All-time count of entries added.
    pub entries_added: u64,
    /// Consumer groups.
    pub groups: Groups,
    /// Idempotent producers.
    pub idmp: IdmpState,
    /// Live entries lost when an XADD replaced a node keyed at its ID, which only a last
    /// ID moved back by XSETID allows. redis-server's radix-tree insert drops such a node
    /// the same way and keeps counting its entries in XLEN; `length` does too, and this
    /// counter keeps `validate()`'s count check exact (length = held + overwritten).
    pub(crate) overwritten: u64,
}

impl Stream {
    /// An empty stream; IDMP settings from the store configuration.
    pub fn new(cfg: &Config) -> Self {
        Stream {
            rax: Rax::new_inlined(),
            length: 0,
            last_id: StreamId::MIN,
            first_id: StreamId::MIN,
            max_deleted_id: StreamId::MIN,
            entries_added: 0,
            groups: Groups::default(),
            idmp: IdmpState::new(
                cfg.stream_idmp_duration as u64,
                cfg.stream_idmp_maxsize as u64,
            ),
            overwritten: 0,
        }
    }

    /// Rebuild a stream from snapshot parts: its nodes in ascending order, counters,
    /// groups and IDMP state. Fails (without panicking) on inconsistent input.
    #[allow(clippy::too_many_arguments)]
    pub fn restore(
        nodes: Vec<StreamNode>,
        length: u64,
        last_id: StreamId,
        first_id: StreamId,
        max_deleted_id: StreamId,
        entries_added: u64,
        groups: Groups,
        idmp: IdmpState,
    ) -> Result<Stream, String> {
        let mut rax = Rax::new_inlined();
        for n in nodes {
            if rax.insert(n.master_id().to_key(), Box::new(n)).is_some() {
                return Err("two nodes with the same master ID".into());
            }
        }
        // A saved length above the entries held is what a stream with overwritten nodes
        // shows (see `overwritten`); below it is damage, which `validate` reports.
        let held: u64 = rax.iter().map(|(_, n)| n.live()).sum();
        let s = Stream {
            rax,
            length,
            last_id,
            first_id,
            max_deleted_id,
            entries_added,
            groups,
            idmp,
            overwritten: length.saturating_sub(held),
        };
        s.validate()?;
        Ok(s)
    }

    /// Number of nodes (XINFO `radix-tree-keys`).
    pub fn node_count(&self) -> usize {
        self.rax.len()
    }

    /// Radix-tree nodes (XINFO `radix-tree-nodes`), as Redis 8.8 counts them: its
    /// stream rax inlines the leaves (see [`crate::rax`]).
    pub fn rax_node_count(&self) -> usize {
        self.rax.inlined_node_count()
    }

    /// Nodes in ascending order.
    pub fn nodes(&self) -> impl Iterator<Item = &StreamNode> + '_ {
        self.rax.iter().map(|(_, n)| n.as_ref())
    }

    /// Append an entry. `id`: `None` for `*`, or the given ID with `seq_given` false for
    /// `<ms>-*`. Returns the new ID.
    pub fn append(
        &mut self,
        cfg: &Config,
        now_ms: i64,
        id: Option<(StreamId, bool)>,
        pairs: &[&[u8]],
    ) -> Result<StreamId, AppendError> {
        let new_id = match id {
            Some((given, true)) => given,
            Some((given, false)) => {
                if self.last_id.ms == given.ms {
                    if self.last_id.seq == u64::MAX {
                        return Err(AppendError::IdTooSmall);
                    }
                    StreamId::new(given.ms, self.last_id.seq + 1)
                } else {
                    given
                }
            }
            None => {
                let ms = now_ms.max(0) as u64;
                if ms > self.last_id.ms {
                    StreamId::new(ms, 0)
                } else {
                    // The sequence may wrap to 0-0 at the very last ID; then the check
                    // below refuses it, as in Redis.
                    self.last_id.incr().unwrap_or(StreamId::MIN)
                }
            }
        };
        if new_id <= self.last_id {
            return Err(AppendError::IdTooSmall);
        }
        let totelelen: u64 = pairs.iter().map(|p| p.len() as u64).sum();
        if totelelen > STREAM_LISTPACK_MAX_SIZE {
            return Err(AppendError::TooLarge);
        }
        let mut node_max_bytes = cfg.stream_node_max_bytes;
        if node_max_bytes == 0 || node_max_bytes > STREAM_LISTPACK_MAX_SIZE {
            node_max_bytes = STREAM_LISTPACK_MAX_SIZE;
        }
        let mut appended = false;
        if let Some((key, _)) = self.rax.last() {
            let node = self.rax.get_mut(&key).expect("last key exists");
            let full = if node.lp_bytes() + totelelen >= node_max_bytes {
                true
            } else {
                cfg.stream_node_max_entries != 0
                    && (node.live() + node.deleted()) as i64 >= cfg.stream_node_max_entries
            };
            if full {
                node.shrink();
            } else {
                node.append(new_id, pairs);
                appended = true;
            }
        }
        if !appended {
            if let Some(old) = self
                .rax
                .insert(new_id.to_key(), Box::new(StreamNode::new(new_id, pairs)))
            {
                self.overwritten += old.live();
            }
        }
        self.length += 1;
        if self.entries_added < i64::MAX as u64 {
            self.entries_added += 1;
        }
        self.last_id = new_id;
        if self.length == 1 {
            self.first_id = new_id;
        }
        Ok(new_id)
    }

    /// Iterate live entries with `start <= id <= end`, ascending or (rev) descending.
    pub fn range(&self, start: StreamId, end: StreamId, rev: bool) -> RangeIter<'_> {
        RangeIter::new(&self.rax, start, end, rev)
    }

    /// Where the live entry with this ID is: (node key, offset, length). Scans as
    /// redis-server's iterator does: from the last node whose first ID is <= `id` (or the
    /// first node), stopping at the first live entry beyond `id`.
    fn locate(&self, id: StreamId) -> Option<([u8; 16], usize, usize)> {
        let mut cur = self.rax.seek_le(&id.to_key()).or_else(|| self.rax.first());
        while let Some((key, node)) = cur {
            for e in node.iter() {
                if e.id == id {
                    return Some((key, e.offset, e.len));
                }
                if e.id > id {
                    return None;
                }
            }
            cur = self.rax.next_after(&key);
        }
        None
    }

    /// The live entry with this ID.
    pub fn get(&self, id: StreamId) -> Option<EntryView<'_>> {
        let (key, offset, _) = self.locate(id)?;
        self.rax.get(&key)?.iter().find(|e| e.offset == offset)
    }

    /// Is the entry live?
    pub fn contains(&self, id: StreamId) -> bool {
        self.locate(id).is_some()
    }

    /// Delete one live entry (no first-ID / tombstone bookkeeping; see [`Stream::xdel`]).
    pub fn delete_item(&mut self, id: StreamId) -> bool {
        let Some((key, off, len)) = self.locate(id) else {
            return false;
        };
        let node = self.rax.get_mut(&key).expect("key exists");
        // Redis removes the node when it deletes its last live entry.
        if node.live() == 1 {
            self.rax.remove(&key);
        } else {
            node.delete_at(off, len);
        }
        self.length -= 1;
        true
    }

    /// Delete entries as XDEL does: also maintains the maximal deleted ID and the first ID.
    /// Returns how many were deleted.
    pub fn xdel(&mut self, ids: &[StreamId]) -> u64 {
        let mut deleted = 0;
        let mut first_entry = false;
        for id in ids {
            if self.delete_item(*id) {
                if *id == self.first_id {
                    first_entry = true;
                }
                if *id > self.max_deleted_id {
                    self.max_deleted_id = *id;
                }
                deleted += 1;
            }
        }
        if deleted > 0 {
            self.fix_first_after_delete(first_entry);
        }
        deleted
    }

    /// After deletions: first ID becomes 0-0 when empty, or is recomputed when the first
    /// entry was among the deleted.
    pub fn fix_first_after_delete(&mut self, first_entry_deleted: bool) {
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if first_entry_deleted {
            self.first_id = self.first_live_id().unwrap_or(StreamId::MAX);
        }
    }

    /// First live ID.
    pub fn first_live_id(&self) -> Option<StreamId> {
        self.range(StreamId::MIN, StreamId::MAX, false)
            .next()
            .map(|e| e.id)
    }

    /// Last live ID.
    pub fn last_live_id(&self) -> Option<StreamId> {
        self.range(StreamId::MIN, StreamId::MAX, true)
            .next()
            .map(|e| e.id)
    }

    /// First ID of the stream counting deleted entries still accounted in nodes (Redis's
    /// `streamGetEdgeID(s, 1, 0)`), 0-0 ... when there is none, `MAX`.
    pub fn first_id_with_tombstones(&self) -> StreamId {
        self.rax
            .first()
            .map(|(_, n)| n.master_id())
            .unwrap_or(StreamId::MAX)
    }

    /// Trim; returns the number of entries deleted.
    pub fn trim(&mut self, args: &TrimArgs) -> u64 {
        let mut deleted: u64 = 0;
        let mut cursor = self.rax.first().map(|(k, _)| k);
        while let Some(key) = cursor {
            if let TrimStrategy::MaxLen(maxlen) = args.strategy {
                if self.length <= maxlen {
                    break;
                }
            }
            let node = self.rax.get_mut(&key).expect("cursor key exists");
            let entries = node.live();
            if args.limit != 0 && deleted + entries > args.limit {
                break;
            }
            let eligible = match args.strategy {
                TrimStrategy::MaxLen(maxlen) => self.length - entries >= maxlen,
                TrimStrategy::MinId(minid) => node.last_id_any() < minid,
            };
            if eligible && args.policy == RefPolicy::KeepRef {
                self.rax.remove(&key);
                self.length -= entries;
                deleted += entries;
                cursor = self.rax.next_after(&key).map(|(k, _)| k);
                continue;
            }
            if args.approx && args.policy == RefPolicy::KeepRef {
                break;
            }
            let length_before = self.length;
            let groups = &mut self.groups;
            let removed = node.delete_while(
                |id, deleted_now| match args.strategy {
                    TrimStrategy::MaxLen(maxlen) => length_before - deleted_now <= maxlen,
                    TrimStrategy::MinId(minid) => id >= minid,
                },
                |id| match args.policy {
                    RefPolicy::KeepRef => true,
                    RefPolicy::Acked => !groups.entry_is_referenced(id),
                    RefPolicy::DelRef => {
                        groups.cleanup_entry_refs(id);
                        true
                    }
                },
            );
            let n = removed.len() as u64;
            self.length -= n;
            deleted += n;
            if eligible && n == entries {
                self.rax.remove(&key);
                cursor = self.rax.next_after(&key).map(|(k, _)| k);
                continue;
            }
            if eligible {
                cursor = self.rax.next_after(&key).map(|(k, _)| k);
                continue;
            }
            break;
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if deleted > 0 {
            self.first_id = self.first_live_id().unwrap_or(StreamId::MAX);
        }
        deleted
    }

    /// A copy of the counters (for code that borrows the groups mutably meanwhile).
    pub fn meta(&self) -> StreamMeta {
        StreamMeta {
            length: self.length,
            last_id: self.last_id,
            first_id: self.first_id,
            max_deleted_id: self.max_deleted_id,
            entries_added: self.entries_added,
        }
    }

    /// Does `[start, end]` (unbounded when `None`) contain the maximal deleted ID?
    pub fn range_has_tombstones(&self, start: Option<StreamId>, end: Option<StreamId>) -> bool {
        self.meta().range_has_tombstones(start, end)
    }

    /// The logical read counter of `id`, or [`INVALID_ENTRIES_READ`].
    pub fn estimate_distance(&self, id: StreamId) -> i64 {
        self.meta().estimate_distance(id)
    }

    /// A group's lag (XINFO GROUPS), `None` when it cannot be computed.
    pub fn group_lag(&self, g: &ConsumerGroup) -> Option<i64> {
        self.meta().group_lag(g)
    }

    /// Approximate heap bytes of the stream (nodes, groups, IDMP).
    pub fn heap_bytes(&self) -> usize {
        let nodes: usize = self
            .nodes()
            .map(|n| n.heap_bytes() + std::mem::size_of::<StreamNode>() + 32)
            .sum();
        let pel: usize = self
            .groups
            .iter()
            .map(|(_, _, g)| g.pel_len() * 160 + g.consumer_count() * 96)
            .sum();
        nodes + pel + self.idmp.heap_bytes() + std::mem::size_of::<Stream>()
    }

    /// Check every invariant of the stream, its nodes, groups and IDMP state.
    pub fn validate(&self) -> Result<(), String> {
        self.rax.validate()?;
        // Node keys are their first entries' IDs; live entries ascend across the whole
        // stream. (Node ranges counting tombstones may overlap, and tombstones may lie above
        // the last ID, once XSETID moved the last ID back: both happen in Redis too.)
        // After XSETID moved the last ID back, an entry appended to a node below its
        // master or an earlier tombstone can sort after a node keyed below it: live
        // entries then do not ascend in node order, and redis-server's XRANGE returns
        // them in that same order (BUG 6 in tests/regressions.rs). They still ascend
        // within each node; the order across nodes is checked while no node shows that.
        let rewound = self.rax.iter().any(|(_, n)| n.appended_below());
        let mut live = 0u64;
        let mut prev: Option<StreamId> = None;
        for (key, node) in self.rax.iter() {
            node.validate()?;
            if rewound {
                prev = None;
            }
            if StreamId::from_key(&key) != node.master_id() {
                return Err(format!(
                    "node keyed {} has master {}",
                    StreamId::from_key(&key),
                    node.master_id()
                ));
            }
            for e in node.iter() {
                if prev.is_some_and(|p| e.id <= p) {
                    return Err(format!("live entry {} after {:?}", e.id, prev));
                }
                // Once rewound, XSETID compares with the last live entry in node order,
                // not the largest: a larger live entry can then lie above the last ID
                // (redis-server 8.8 shows last-generated-id 0-2 beside a live 0-4; BUG 8).
                if !rewound && e.id > self.last_id {
                    return Err(format!(
                        "live entry {} beyond last id {}",
                        e.id, self.last_id
                    ));
                }
                prev = Some(e.id);
            }
            live += node.live();
        }
        if live + self.overwritten != self.length {
            return Err(format!(
                "length {} but nodes hold {live} (and {} were overwritten)",
                self.length, self.overwritten
            ));
        }
        let expect_first = self.first_live_id().unwrap_or(StreamId::MIN);
        // Once rewound, the recorded first ID is the first entry appended after the
        // rewind, which need not be the first in node order (redis-server's
        // recorded-first-entry-id and first-entry differ the same way): it must be live.
        let is_live = |id: StreamId| self.rax.iter().any(|(_, n)| n.iter().any(|e| e.id == id));
        let first_ok = if self.overwritten > 0 {
            // The recorded first ID may name an overwritten entry, as in redis-server.
            live == 0 || self.first_id <= expect_first || is_live(self.first_id)
        } else if rewound {
            is_live(self.first_id)
        } else {
            expect_first == self.first_id
        };
        if self.length > 0 && !first_ok {
            return Err(format!(
                "first id {} but first entry is {expect_first}",
                self.first_id
            ));
        }
        if self.length == 0 && !self.first_id.is_zero() {
            return Err("empty stream with a first id".into());
        }
        self.groups.validate()?;
        self.idmp.validate()?;
        Ok(())
    }
}

/// The counters of a stream, copied out so they can be read while its groups are
/// borrowed mutably.
#[derive(Clone, Copy, Debug)]
pub struct StreamMeta {
    pub length: u64,
    pub last_id: StreamId,
    pub first_id: StreamId,
    pub max_deleted_id: StreamId,
    pub entries_added: u64,
}

impl StreamMeta {
    /// Does `[start, end]` (unbounded when `None`) contain the maximal deleted ID?
    pub fn range_has_tombstones(&self, start: Option<StreamId>, end: Option<StreamId>) -> bool {
        if self.length == 0 || self.max_deleted_id.is_zero() {
            return false;
        }
        let s = start.unwrap_or(StreamId::MIN);
        let e = end.unwrap_or(StreamId::MAX);
        s <= self.max_deleted_id && self.max_deleted_id <= e
    }

    /// The logical read counter of `id` (Redis `streamEstimateDistanceFromFirstEverEntry`),
    /// or [`INVALID_ENTRIES_READ`] when it cannot be known.
    pub fn estimate_distance(&self, id: StreamId) -> i64 {
        if self.entries_added == 0 {
            return 0;
        }
        if self.length == 0 && id <= self.last_id {
            return self.entries_added as i64;
        }
        if !id.is_zero() && id < self.max_deleted_id {
            return INVALID_ENTRIES_READ;
        }
        if id == self.last_id {
            return self.entries_added as i64;
        } else if id > self.last_id {
            return INVALID_ENTRIES_READ;
        }
        if self.max_deleted_id.is_zero() || self.max_deleted_id < self.first_id {
            if id < self.first_id {
                return self.entries_added.wrapping_sub(self.length) as i64;
            } else if id == self.first_id {
                return self.entries_added.wrapping_sub(self.length).wrapping_add(1) as i64;
            }
        }
        INVALID_ENTRIES_READ
    }

    /// A group's lag (XINFO GROUPS), `None` when it cannot be computed.
    pub fn group_lag(&self, g: &ConsumerGroup) -> Option<i64> {
        if self.entries_added == 0 || self.length == 0 {
            return Some(0);
        }
        if g.last_id < self.first_id && self.max_deleted_id < self.first_id {
            return Some(self.length as i64);
        }
        if g.entries_read != INVALID_ENTRIES_READ
            && !self.range_has_tombstones(Some(g.last_id), None)
        {
            return Some((self.entries_added as i64).wrapping_sub(g.entries_read));
        }
        let er = self.estimate_distance(g.last_id);
        if er != INVALID_ENTRIES_READ {
            Some((self.entries_added as i64).wrapping_sub(er))
        } else {
            None
        }
    }
}

/// Iterator over live entries of a stream in an ID range.
pub struct RangeIter<'a> {
    rax: &'a Rax<Box<StreamNode>>,
    start: StreamId,
    end: StreamId,
    rev: bool,
    node_key: Option<[u8; 16]>,
    inner: Option<crate::node::NodeIter<'a>>,
    done: bool,
}

impl<'a> RangeIter<'a> {
    /// Iterate the nodes of `rax` (a stream's tree) between `start` and `end`.
    pub fn new(rax: &'a Rax<Box<StreamNode>>, start: StreamId, end: StreamId, rev: bool) -> Self {
        let first = if !rev {
            if !start.is_zero() {
                rax.seek_le(&start.to_key()).or_else(|| rax.first())
            } else {
                rax.first()
            }
        } else if !end.is_zero() {
            rax.seek_le(&end.to_key()).or_else(|| rax.last())
        } else {
            rax.last()
        };
        let (node_key, inner) = match first {
            Some((k, n)) => (Some(k), Some(n.iter())),
            None => (None, None),
        };
        RangeIter {
            rax,
            start,
            end,
            rev,
            node_key,
            inner,
            done: start > end,
        }
    }

    fn advance_node(&mut self) -> bool {
        let Some(k) = self.node_key else {
            return false;
        };
        let next = if self.rev {
            self.rax.prev_before(&k)
        } else {
            self.rax.next_after(&k)
        };
        match next {
            Some((nk, n)) => {
                self.node_key = Some(nk);
                self.inner = Some(n.iter());
                true
            }
            None => {
                self.node_key = None;
                self.inner = None;
                false
            }
        }
    }
}

impl<'a> Iterator for RangeIter<'a> {
    type Item = EntryView<'a>;

    fn next(&mut self) -> Option<EntryView<'a>> {
        if self.done {
            return None;
        }
        loop {
            let inner = self.inner.as_mut()?;
            let e = if self.rev {
                inner.next_back()
            } else {
                inner.next()
            };
            match e {
                Some(e) => {
                    if !self.rev {
                        if e.id < self.start {
                            continue;
                        }
                        if e.id > self.end {
                            self.done = true;
                            return None;
                        }
                    } else {
                        if e.id > self.end {
                            continue;
                        }
                        if e.id < self.start {
                            self.done = true;
                            return None;
                        }
                    }
                    return Some(e);
                }
                None => {
                    if !self.advance_node() {
                        self.done = true;
                        return None;
                    }
                }
            }
        }
    }
}

/// The reply for one entry: `[id, [field, value, ...]]`.
pub fn entry_reply(e: &EntryView<'_>) -> Reply {
    let mut fv = Vec::with_capacity(e.num_fields() * 2);
    for (f, v) in e.pairs() {
        fv.push(Reply::Bulk(f.to_vec()));
        fv.push(Reply::Bulk(v.to_vec()));
    }
    Reply::Array(vec![Reply::id(&e.id), Reply::Array(fv)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(max_entries: i64) -> Config {
        Config {
            stream_node_max_entries: max_entries,
            ..Config::default()
        }
    }

    fn add(s: &mut Stream, c: &Config, ms: u64, seq: u64) -> StreamId {
        s.append(c, 0, Some((StreamId::new(ms, seq), true)), &[b"f", b"v"])
            .unwrap()
    }

    #[test]
    fn append_split_iterate_delete() {
        let c = cfg(3);
        let mut s = Stream::new(&c);
        for i in 1..=10 {
            add(&mut s, &c, i, 0);
        }
        assert_eq!(s.node_count(), 4);
        assert_eq!(s.length, 10);
        s.validate().unwrap();
        let fwd: Vec<_> = s
            .range(StreamId::new(3, 0), StreamId::new(8, 0), false)
            .map(|e| e.id.ms)
            .collect();
        assert_eq!(fwd, vec![3, 4, 5, 6, 7, 8]);
        let rev: Vec<_> = s
            .range(StreamId::new(3, 0), StreamId::new(8, 0), true)
            .map(|e| e.id.ms)
            .collect();
        assert_eq!(rev, vec![8, 7, 6, 5, 4, 3]);
        assert_eq!(
            s.xdel(&[
                StreamId::new(1, 0),
                StreamId::new(2, 0),
                StreamId::new(3, 0)
            ]),
            3
        );
        assert_eq!(s.node_count(), 3);
        assert_eq!(s.first_id, StreamId::new(4, 0));
        assert_eq!(s.max_deleted_id, StreamId::new(3, 0));
        s.validate().unwrap();
        assert_eq!(
            s.append(&c, 0, Some((StreamId::new(10, 0), true)), &[b"f", b"v"]),
            Err(AppendError::IdTooSmall)
        );
        let id = s
            .append(&c, 0, Some((StreamId::new(10, 0), false)), &[b"f", b"v"])
            .unwrap();
        assert_eq!(id, StreamId::new(10, 1));
        let id = s.append(&c, 5, None, &[b"f", b"v"]).unwrap();
        assert_eq!(id, StreamId::new(10, 2));
    }

    #[test]
    fn trim_maxlen_exact_and_approx() {
        let c = cfg(10);
        let mut s = Stream::new(&c);
        for i in 1..=95 {
            add(&mut s, &c, i, 0);
        }
        let approx = TrimArgs {
            strategy: TrimStrategy::MaxLen(50),
            approx: true,
            limit: 0,
            policy: RefPolicy::KeepRef,
        };
        assert_eq!(s.trim(&approx), 40);
        assert_eq!(s.length, 55);
        let exact = TrimArgs {
            strategy: TrimStrategy::MaxLen(50),
            approx: false,
            limit: 0,
            policy: RefPolicy::KeepRef,
        };
        assert_eq!(s.trim(&exact), 5);
        assert_eq!(s.first_id, StreamId::new(46, 0));
        s.validate().unwrap();
        let minid = TrimArgs {
            strategy: TrimStrategy::MinId(StreamId::new(90, 0)),
            approx: false,
            limit: 0,
            policy: RefPolicy::KeepRef,
        };
        assert_eq!(s.trim(&minid), 44);
        assert_eq!(s.first_id, StreamId::new(90, 0));
        s.validate().unwrap();
    }
}
