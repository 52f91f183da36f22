//! Consumer groups: the pending entries list (PEL), its time-ordered list with the NACK
//! zone at its head, and the group's consumers.
//!
//! One [`PendingEntry`] record exists per pending ID. The group indexes records by ID
//! (`pel`), each consumer indexes the IDs it owns (`Consumer::pel`), and all records form
//! a doubly-linked list ordered by delivery time (`time_head` .. `time_tail`) whose head
//! region, up to `nack_tail`, is the NACK zone: entries released with XNACK, unowned,
//! with delivery time 0, in FIFO order. Records live in a slab and link by index. Both
//! PEL indexes are [`idmap`]'s chunked ordered maps, cheap where PELs change most (new
//! deliveries at the end, acknowledgements of the oldest at the start).
//!
//! Invariants (checked by [`ConsumerGroup::validate`]):
//! - the group PEL holds exactly the records of the slab, and each record's ID;
//! - every owned record is in its consumer's PEL and nowhere else; the union of the
//!   consumer PELs is the set of owned records;
//! - a record is unowned if and only if it lies in the NACK zone (`nacked`);
//! - the time list visits every record once; the NACK zone is a prefix of it; outside
//!   the zone delivery times never decrease.
//!
//! Here: the types, the consumers and the PEL lookups; [`pel_list`] changes records
//! keeping the PEL, the consumers' PELs and the time list in step; [`image`] is the group
//! as a snapshot stores it; [`validate`] checks the invariants.

use std::collections::BTreeMap;

use slab::Slab;

use crate::structures::id::StreamId;

mod idmap;
mod image;
mod pel_list;
mod validate;

pub use idmap::{IdMap, IdSet};
pub use image::{ConsumerImage, PendingImage};

/// Sentinel for "no entries-read counter" (`SCG_INVALID_ENTRIES_READ`).
pub const INVALID_ENTRIES_READ: i64 = -1;

/// Index of a pending record inside its group.
pub type PelIdx = usize;
/// Index of a consumer inside its group.
pub type ConsumerIdx = usize;

/// One pending (delivered, not acknowledged) entry.
#[derive(Clone, Debug)]
pub struct PendingEntry {
    pub id: StreamId,
    /// Last delivery time in ms (0 for NACKed entries).
    pub delivery_time: i64,
    /// Number of deliveries (saturates at `i64::MAX`).
    pub delivery_count: u64,
    /// Owner, `None` for NACKed (unowned) entries.
    pub consumer: Option<ConsumerIdx>,
    /// In the NACK zone.
    pub nacked: bool,
    prev: Option<PelIdx>,
    next: Option<PelIdx>,
}

/// A consumer of a group.
#[derive(Clone, Debug)]
pub struct Consumer {
    pub name: Vec<u8>,
    /// Last time the consumer attempted an action (read or claim).
    pub seen_time: i64,
    /// Last time the consumer successfully read or claimed something; -1 = never.
    pub active_time: i64,
    /// IDs of the pending entries this consumer owns.
    pub pel: IdSet,
}

/// A consumer group of a stream.
#[derive(Clone, Debug)]
pub struct ConsumerGroup {
    /// Last delivered ID.
    pub last_id: StreamId,
    /// Logical read counter, or [`INVALID_ENTRIES_READ`].
    pub entries_read: i64,
    pel: IdMap<PelIdx>,
    records: Slab<PendingEntry>,
    time_head: Option<PelIdx>,
    time_tail: Option<PelIdx>,
    nack_tail: Option<PelIdx>,
    nack_count: u64,
    /// False once a delivery was appended at the tail with an earlier time than the tail
    /// (the clock went back): from then on the list is not sorted by time, as in Redis.
    time_sorted: bool,
    consumers: BTreeMap<Vec<u8>, ConsumerIdx>,
    consumer_slab: Slab<Consumer>,
}

impl ConsumerGroup {
    /// A group with no consumers and an empty PEL.
    pub fn new(last_id: StreamId, entries_read: i64) -> Self {
        ConsumerGroup {
            last_id,
            entries_read,
            pel: IdMap::new(),
            records: Slab::new(),
            time_head: None,
            time_tail: None,
            nack_tail: None,
            nack_count: 0,
            time_sorted: true,
            consumers: BTreeMap::new(),
            consumer_slab: Slab::new(),
        }
    }

    // ---------------------------------------------------------------- consumers

    /// Number of consumers.
    pub fn consumer_count(&self) -> usize {
        self.consumers.len()
    }

    /// Look a consumer up by name.
    pub fn consumer_idx(&self, name: &[u8]) -> Option<ConsumerIdx> {
        self.consumers.get(name).copied()
    }

    /// The consumer at `idx`.
    pub fn consumer(&self, idx: ConsumerIdx) -> &Consumer {
        &self.consumer_slab[idx]
    }

    /// Mutable consumer at `idx`.
    pub fn consumer_mut(&mut self, idx: ConsumerIdx) -> &mut Consumer {
        &mut self.consumer_slab[idx]
    }

    /// Create a consumer; `None` when the name exists already.
    pub fn create_consumer(&mut self, name: &[u8], now: i64) -> Option<ConsumerIdx> {
        if self.consumers.contains_key(name) {
            return None;
        }
        let idx = self.consumer_slab.insert(Consumer {
            name: name.to_vec(),
            seen_time: now,
            active_time: -1,
            pel: IdSet::new(),
        });
        self.consumers.insert(name.to_vec(), idx);
        Some(idx)
    }

    /// Consumers in name order.
    pub fn consumers(&self) -> impl Iterator<Item = (ConsumerIdx, &Consumer)> + '_ {
        self.consumers
            .values()
            .map(move |&i| (i, &self.consumer_slab[i]))
    }

    /// Delete a consumer and its pending entries; returns the IDs it had pending (the
    /// caller drops the stream's references to them).
    pub fn delete_consumer(&mut self, idx: ConsumerIdx) -> Vec<StreamId> {
        let c = self.consumer_slab.remove(idx);
        self.consumers.remove(&c.name);
        let mut ids = Vec::with_capacity(c.pel.len());
        for &id in &c.pel {
            if let Some(p) = self.pel.remove(&id) {
                self.unlink(p);
                self.records.remove(p);
            }
            ids.push(id);
        }
        ids
    }

    // ---------------------------------------------------------------- PEL lookup

    /// Number of pending entries.
    pub fn pel_len(&self) -> usize {
        self.pel.len()
    }

    /// Number of entries in the NACK zone.
    pub fn nacked_count(&self) -> u64 {
        self.nack_count
    }

    /// Record index of a pending ID.
    pub fn pel_idx(&self, id: &StreamId) -> Option<PelIdx> {
        self.pel.get(id)
    }

    /// Record at `idx`.
    pub fn record(&self, idx: PelIdx) -> &PendingEntry {
        &self.records[idx]
    }

    /// Smallest and largest pending IDs.
    pub fn pel_bounds(&self) -> Option<(StreamId, StreamId)> {
        let (first, _) = self.pel.first()?;
        let (last, _) = self.pel.last()?;
        Some((first, last))
    }

    /// Pending entries with `start <= id <= end`, in ID order.
    pub fn pel_range(
        &self,
        start: StreamId,
        end: StreamId,
    ) -> impl Iterator<Item = (StreamId, PelIdx)> + '_ {
        let it = if start <= end {
            Some(self.pel.range(start..=end))
        } else {
            None
        };
        it.into_iter().flatten().map(|(k, v)| (*k, *v))
    }

    /// First pending entry with an ID `>= start`.
    pub fn pel_seek_ge(&self, start: StreamId) -> Option<(StreamId, PelIdx)> {
        self.pel.range(start..).next().map(|(k, v)| (*k, *v))
    }

    /// The time list from head (NACK zone first) to tail.
    pub fn time_order(&self) -> TimeIter<'_> {
        TimeIter {
            group: self,
            cur: self.time_head,
        }
    }

    /// Head of the time list.
    pub fn time_head(&self) -> Option<PelIdx> {
        self.time_head
    }

    /// Tail of the time list.
    pub fn time_tail(&self) -> Option<PelIdx> {
        self.time_tail
    }

    /// Successor in the time list.
    pub fn time_next(&self, idx: PelIdx) -> Option<PelIdx> {
        self.records[idx].next
    }

    /// Every pending ID (for cleanup when the group is destroyed).
    pub fn pending_ids(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.pel.keys().copied()
    }
}

/// Iterator over the time list, head first.
pub struct TimeIter<'a> {
    group: &'a ConsumerGroup,
    cur: Option<PelIdx>,
}

impl<'a> Iterator for TimeIter<'a> {
    type Item = (PelIdx, &'a PendingEntry);
    fn next(&mut self) -> Option<Self::Item> {
        let c = self.cur?;
        let r = &self.group.records[c];
        self.cur = r.next;
        Some((c, r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> StreamId {
        StreamId::new(n, 0)
    }

    #[test]
    fn nack_zone_is_a_fifo_prefix() {
        let mut g = ConsumerGroup::new(StreamId::MIN, 0);
        let c = g.create_consumer(b"c", 0).unwrap();
        for i in 1..=5 {
            g.add_pending(id(i), Some(c), 100 + i as i64).unwrap();
        }
        g.validate().unwrap();
        let p3 = g.pel_idx(&id(3)).unwrap();
        let p1 = g.pel_idx(&id(1)).unwrap();
        g.nack(p3);
        g.nack(p1);
        g.validate().unwrap();
        let order: Vec<_> = g.time_order().map(|(_, r)| r.id.ms).collect();
        assert_eq!(order, vec![3, 1, 2, 4, 5]);
        assert_eq!(g.nacked_count(), 2);
        // Re-timing an owned entry to the past never enters the zone.
        let p5 = g.pel_idx(&id(5)).unwrap();
        g.update_delivery_time(p5, 0);
        let order: Vec<_> = g.time_order().map(|(_, r)| r.id.ms).collect();
        assert_eq!(order, vec![3, 1, 5, 2, 4]);
        g.validate().unwrap();
        // Claiming a NACKed entry takes it out of the zone.
        g.set_owner(p3, c);
        g.update_delivery_time(p3, 500);
        assert_eq!(g.nacked_count(), 1);
        g.validate().unwrap();
        assert_eq!(g.delete_consumer(c).len(), 4);
        assert_eq!(g.pel_len(), 1);
        g.validate().unwrap();
    }
}
