//! A stream: the radix tree of nodes, its counters, its consumer groups (with the index of
//! which groups reference which entries) and its IDMP state.
//!
//! Invariants (checked by [`Stream::validate`]):
//! - nodes are keyed by their master ID, hold IDs inside `[master, last_any]`, and node
//!   ranges are disjoint and ascending; `length` is the sum of live entries;
//! - `first_id` is the first live ID (0-0 when empty, or the maximal ID when an empty
//!   stream was restored from a pre-7.0 payload, as redis-server has it), `last_id` >=
//!   every ID;
//! - with more than `INDEXED_GROUPS` groups, `refs[id]` lists exactly the groups whose
//!   PEL holds `id` (with fewer there is no index: the PELs are asked).

use crate::base::config::Config;
use crate::structures::group::ConsumerGroup;
use crate::structures::id::StreamId;
use crate::structures::idmp::IdmpState;
use crate::structures::node::{EntryView, Limits, StreamNode};
use crate::structures::rax::Rax;

mod groups;
mod meta;
mod range;
mod refs;
#[cfg(test)]
mod tests;

pub use groups::Groups;
pub use meta::StreamMeta;
pub use range::RangeIter;

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

/// What XDELEX or XACKDEL did with one of its IDs (the reply's code for it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeleteOutcome {
    /// `-1`: no such entry (XDELEX), or not pending in the group (XACKDEL: nothing done).
    NotFound,
    /// `1`: the entry was deleted (XACKDEL: acknowledged, and deleted or already gone).
    Deleted,
    /// `2`: kept (policy ACKED) because a consumer group still references it (XACKDEL:
    /// acknowledged in this group but not deleted).
    Referenced,
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

/// The ID XADD's `*` takes after `last` at store time `now_ms`: the clock's
/// milliseconds (a negative clock counts as 0) when they are past `last`'s, else
/// `last`'s next sequence. At the very last ID the sequence wraps to 0-0, which
/// [`Stream::append`] then refuses, as Redis does. The one rule of automatic IDs:
/// `Stream::append` and the dedup kernel (`interop::dedup`) both take it from here.
pub fn auto_id(last: StreamId, now_ms: i64) -> StreamId {
    let ms = now_ms.max(0) as u64;
    if ms > last.ms {
        StreamId::new(ms, 0)
    } else {
        last.incr().unwrap_or(StreamId::MIN)
    }
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
    /// stream rax inlines the leaves (see [`crate::structures::rax`]).
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
            None => auto_id(self.last_id, now_ms),
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
        // Large entries: a few fill a node, so it reserves its expected final length at
        // once (see `append_filling`, `new_filling`); small ones append as any vector
        // grows.
        let large = totelelen * 16 > node_max_bytes;
        let limits = || Limits {
            max_bytes: node_max_bytes,
            max_entries: cfg.stream_node_max_entries.max(0) as u64,
        };
        let mut appended = false;
        let mut closed = false;
        if let Some(node) = self.rax.last_mut() {
            let full = if node.lp_bytes() + totelelen >= node_max_bytes {
                true
            } else {
                cfg.stream_node_max_entries != 0
                    && (node.live() + node.deleted()) as i64 >= cfg.stream_node_max_entries
            };
            if full {
                node.shrink();
                closed = true;
            } else {
                if large {
                    node.append_filling(new_id, pairs, limits());
                } else {
                    node.append(new_id, pairs);
                }
                appended = true;
            }
        }
        if !appended {
            // A stream that has just closed a node of large entries is being filled: the
            // new node is allocated at its final length. A stream's first node starts
            // small (a stream of one large entry holds no room for more).
            let node = if closed && large {
                StreamNode::new_filling(new_id, pairs, limits())
            } else {
                StreamNode::new(new_id, pairs)
            };
            if let Some(old) = self.rax.insert(new_id.to_key(), Box::new(node)) {
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
                // DELREF drops the group references of every entry the trim passes,
                // tombstones of earlier KEEPREF deletes included (redis-server 8.8 skips
                // the tombstones and leaves PEL references to deleted entries; upstream
                // PR #15581, docs/differences.md "delref-tombstones").
                |id, tombstone| match args.policy {
                    RefPolicy::KeepRef => true,
                    RefPolicy::Acked => !tombstone && !groups.entry_is_referenced(id),
                    RefPolicy::DelRef => {
                        groups.cleanup_entry_refs(id);
                        true
                    }
                },
            );
            let n = removed.len() as u64;
            self.length -= n;
            deleted += n;
            // A node whose last live entries this pass deleted goes, even when a
            // tombstone past the trim point kept it from being removed whole:
            // redis-server 8.8 keeps it with no live entry and then refuses its own RDB
            // ("Stream listpack bad entry count"; upstream PR #15815,
            // docs/differences.md "trim-empty-node"). The walk goes on only when the
            // whole node was in the trim range.
            if n > 0 && n == entries {
                self.rax.remove(&key);
                if !eligible {
                    break;
                }
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
        // An empty stream records 0-0, or the maximal ID when redis-server loaded it from
        // a pre-7.0 payload (it looked for a first entry and found none); 8.8 then dumps
        // that ID as it is.
        if self.length == 0 && !self.first_id.is_zero() && self.first_id != StreamId::MAX {
            return Err("empty stream with a first id".into());
        }
        self.groups.validate()?;
        self.idmp.validate()?;
        Ok(())
    }
}
