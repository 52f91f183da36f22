//! Consumer groups: the pending entries list (PEL), its time-ordered list with the NACK
//! zone at its head, and the group's consumers.
//!
//! One [`PendingEntry`] record exists per pending ID. The group indexes records by ID
//! (`pel`), each consumer indexes the IDs it owns (`Consumer::pel`), and all records form
//! a doubly-linked list ordered by delivery time (`time_head` .. `time_tail`) whose head
//! region, up to `nack_tail`, is the NACK zone: entries released with XNACK, unowned,
//! with delivery time 0, in FIFO order. Records live in a slab and link by index.
//!
//! Invariants (checked by [`ConsumerGroup::validate`]):
//! - the group PEL holds exactly the records of the slab, and each record's ID;
//! - every owned record is in its consumer's PEL and nowhere else; the union of the
//!   consumer PELs is the set of owned records;
//! - a record is unowned if and only if it lies in the NACK zone (`nacked`);
//! - the time list visits every record once; the NACK zone is a prefix of it; outside
//!   the zone delivery times never decrease.

use std::collections::{BTreeMap, BTreeSet};

use slab::Slab;

use crate::id::StreamId;

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
    pub pel: BTreeSet<StreamId>,
}

/// A consumer group of a stream.
#[derive(Clone, Debug)]
pub struct ConsumerGroup {
    /// Last delivered ID.
    pub last_id: StreamId,
    /// Logical read counter, or [`INVALID_ENTRIES_READ`].
    pub entries_read: i64,
    pel: BTreeMap<StreamId, PelIdx>,
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
            pel: BTreeMap::new(),
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
            pel: BTreeSet::new(),
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
        for id in c.pel {
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
        self.pel.get(id).copied()
    }

    /// Record at `idx`.
    pub fn record(&self, idx: PelIdx) -> &PendingEntry {
        &self.records[idx]
    }

    /// Smallest and largest pending IDs.
    pub fn pel_bounds(&self) -> Option<(StreamId, StreamId)> {
        let first = *self.pel.keys().next()?;
        let last = *self.pel.keys().next_back()?;
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

    // ---------------------------------------------------------------- time list

    fn insert_after(&mut self, after: Option<PelIdx>, idx: PelIdx) {
        match after {
            Some(a) => {
                let an = self.records[a].next;
                self.records[idx].prev = Some(a);
                self.records[idx].next = an;
                match an {
                    Some(n) => self.records[n].prev = Some(idx),
                    None => self.time_tail = Some(idx),
                }
                self.records[a].next = Some(idx);
            }
            None => {
                self.records[idx].prev = None;
                self.records[idx].next = self.time_head;
                match self.time_head {
                    Some(h) => self.records[h].prev = Some(idx),
                    None => self.time_tail = Some(idx),
                }
                self.time_head = Some(idx);
            }
        }
    }

    fn unlink(&mut self, idx: PelIdx) {
        let (prev, next, nacked) = {
            let r = &self.records[idx];
            (r.prev, r.next, r.nacked)
        };
        if self.nack_tail == Some(idx) {
            self.nack_tail = prev;
        }
        if nacked {
            self.nack_count -= 1;
            self.records[idx].nacked = false;
        }
        match prev {
            Some(p) => self.records[p].next = next,
            None => self.time_head = next,
        }
        match next {
            Some(n) => self.records[n].prev = prev,
            None => self.time_tail = prev,
        }
        self.records[idx].prev = None;
        self.records[idx].next = None;
    }

    /// Insert by delivery time, scanning back from the tail but never into the NACK zone.
    fn insert_sorted(&mut self, idx: PelIdx) {
        let t = self.records[idx].delivery_time;
        match self.time_tail {
            None => {
                self.insert_after(None, idx);
                return;
            }
            Some(tail) if t >= self.records[tail].delivery_time => {
                self.insert_after(Some(tail), idx);
                return;
            }
            _ => {}
        }
        let boundary = self.nack_tail;
        let mut cur = self.time_tail;
        while cur != boundary {
            let c = cur.expect("time list walk stays inside the list");
            if self.records[c].delivery_time <= t {
                break;
            }
            cur = self.records[c].prev;
        }
        self.insert_after(cur, idx);
    }

    fn insert_nacked(&mut self, idx: PelIdx) {
        self.records[idx].delivery_time = 0;
        self.records[idx].nacked = true;
        self.insert_after(self.nack_tail, idx);
        self.nack_tail = Some(idx);
        self.nack_count += 1;
    }

    /// Set a record's delivery time and move it to its place in the time list.
    pub fn update_delivery_time(&mut self, idx: PelIdx, t: i64) {
        self.unlink(idx);
        self.records[idx].delivery_time = t;
        self.insert_sorted(idx);
    }

    // ---------------------------------------------------------------- PEL changes

    /// Add a new pending record delivered now to `consumer` (or unowned when `None`),
    /// appended at the tail of the time list. Returns `None` if the ID is pending already.
    pub fn add_pending(
        &mut self,
        id: StreamId,
        consumer: Option<ConsumerIdx>,
        now: i64,
    ) -> Option<PelIdx> {
        if self.pel.contains_key(&id) {
            return None;
        }
        let idx = self.records.insert(PendingEntry {
            id,
            delivery_time: now,
            delivery_count: 1,
            consumer,
            nacked: false,
            prev: None,
            next: None,
        });
        self.pel.insert(id, idx);
        if let Some(c) = consumer {
            self.consumer_slab[c].pel.insert(id);
        }
        let tail = self.time_tail;
        self.insert_after(tail, idx);
        if self.out_of_order(idx) {
            self.time_sorted = false;
        }
        Some(idx)
    }

    /// Is the record earlier in time than its predecessor (outside the NACK zone)?
    pub fn out_of_order(&self, idx: PelIdx) -> bool {
        match self.records[idx].prev {
            Some(p) => {
                !self.records[p].nacked
                    && self.records[p].delivery_time > self.records[idx].delivery_time
            }
            None => false,
        }
    }

    /// Move a record to the tail of the time list keeping its time (replays a delivery
    /// appended while the clock was behind the tail).
    pub fn move_to_tail(&mut self, idx: PelIdx) {
        self.unlink(idx);
        let tail = self.time_tail;
        self.insert_after(tail, idx);
        if self.out_of_order(idx) {
            self.time_sorted = false;
        }
    }

    /// Create an unowned record directly in the NACK zone (XNACK FORCE).
    pub fn add_nacked(&mut self, id: StreamId, delivery_count: u64) -> Option<PelIdx> {
        if self.pel.contains_key(&id) {
            return None;
        }
        let idx = self.records.insert(PendingEntry {
            id,
            delivery_time: 0,
            delivery_count,
            consumer: None,
            nacked: false,
            prev: None,
            next: None,
        });
        self.pel.insert(id, idx);
        self.insert_nacked(idx);
        Some(idx)
    }

    /// Remove a pending record (XACK, deleted entry...). Returns its ID.
    pub fn remove_pending(&mut self, idx: PelIdx) -> StreamId {
        self.unlink(idx);
        let r = self.records.remove(idx);
        self.pel.remove(&r.id);
        if let Some(c) = r.consumer {
            self.consumer_slab[c].pel.remove(&r.id);
        }
        r.id
    }

    /// Remove the pending record for `id`, if any.
    pub fn remove_pending_id(&mut self, id: &StreamId) -> bool {
        match self.pel_idx(id) {
            Some(p) => {
                self.remove_pending(p);
                true
            }
            None => false,
        }
    }

    /// Give a record to `consumer` (no-op when it owns it already).
    pub fn set_owner(&mut self, idx: PelIdx, consumer: ConsumerIdx) {
        let (id, old) = (self.records[idx].id, self.records[idx].consumer);
        if old == Some(consumer) {
            return;
        }
        if let Some(o) = old {
            self.consumer_slab[o].pel.remove(&id);
        }
        self.records[idx].consumer = Some(consumer);
        self.consumer_slab[consumer].pel.insert(id);
    }

    /// Release a record into the NACK zone (XNACK): unowned, delivery time 0, appended at
    /// the end of the zone.
    pub fn nack(&mut self, idx: PelIdx) {
        let id = self.records[idx].id;
        if let Some(o) = self.records[idx].consumer.take() {
            self.consumer_slab[o].pel.remove(&id);
        }
        self.unlink(idx);
        self.insert_nacked(idx);
    }

    /// Set the delivery counter.
    pub fn set_delivery_count(&mut self, idx: PelIdx, count: u64) {
        self.records[idx].delivery_count = count;
    }

    /// Count one more delivery, saturating at `i64::MAX`.
    pub fn incr_delivery_count(&mut self, idx: PelIdx) {
        let r = &mut self.records[idx];
        if r.delivery_count < i64::MAX as u64 {
            r.delivery_count += 1;
        }
    }

    /// Every pending ID (for cleanup when the group is destroyed).
    pub fn pending_ids(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.pel.keys().copied()
    }

    /// The group's state for snapshots: consumers in name order, and the pending records
    /// in time-list order (the NACK zone first), owners given as indexes into the
    /// consumer list.
    pub fn export(&self) -> (Vec<ConsumerImage>, Vec<PendingImage>) {
        let mut index = std::collections::HashMap::new();
        let consumers: Vec<ConsumerImage> = self
            .consumers()
            .enumerate()
            .map(|(i, (ci, c))| {
                index.insert(ci, i as u32);
                ConsumerImage {
                    name: c.name.clone(),
                    seen_time: c.seen_time,
                    active_time: c.active_time,
                }
            })
            .collect();
        let records = self
            .time_order()
            .map(|(_, r)| PendingImage {
                id: r.id,
                delivery_time: r.delivery_time,
                delivery_count: r.delivery_count,
                owner: r.consumer.map(|c| index[&c]),
                nacked: r.nacked,
            })
            .collect();
        (consumers, records)
    }

    /// Rebuild a group from [`ConsumerGroup::export`]; fails (without panicking) if the
    /// images break an invariant.
    pub fn restore(
        last_id: StreamId,
        entries_read: i64,
        consumers: Vec<ConsumerImage>,
        records: Vec<PendingImage>,
    ) -> Result<ConsumerGroup, String> {
        let mut g = ConsumerGroup::new(last_id, entries_read);
        let mut idx = Vec::with_capacity(consumers.len());
        for c in consumers {
            let ci = g
                .create_consumer(&c.name, c.seen_time)
                .ok_or("duplicate consumer name")?;
            g.consumer_slab[ci].active_time = c.active_time;
            idx.push(ci);
        }
        let mut zone_open = true;
        for r in records {
            let owner = match r.owner {
                Some(o) => Some(
                    *idx.get(o as usize)
                        .ok_or("pending entry owned by an unknown consumer")?,
                ),
                None => None,
            };
            if r.nacked != owner.is_none() {
                return Err(format!(
                    "{}: NACKed entries must be unowned and unowned entries NACKed",
                    r.id
                ));
            }
            if r.nacked && !zone_open {
                return Err(format!("{}: NACKed entry after the NACK zone", r.id));
            }
            if !r.nacked {
                zone_open = false;
            }
            if r.delivery_count > i64::MAX as u64 {
                return Err(format!("{}: delivery count out of range", r.id));
            }
            if g.pel.contains_key(&r.id) {
                return Err(format!("{}: pending twice", r.id));
            }
            let p = g.records.insert(PendingEntry {
                id: r.id,
                delivery_time: r.delivery_time,
                delivery_count: r.delivery_count,
                consumer: owner,
                nacked: false,
                prev: None,
                next: None,
            });
            g.pel.insert(r.id, p);
            if let Some(o) = owner {
                g.consumer_slab[o].pel.insert(r.id);
            }
            if r.nacked {
                g.insert_nacked(p);
                g.records[p].delivery_time = r.delivery_time;
            } else {
                let tail = g.time_tail;
                g.insert_after(tail, p);
            }
        }
        let mut last = i64::MIN;
        for (_, r) in g.time_order() {
            if !r.nacked {
                if r.delivery_time < last {
                    g.time_sorted = false;
                    break;
                }
                last = r.delivery_time;
            }
        }
        g.validate()?;
        Ok(g)
    }

    /// Check the invariants listed in the module documentation. Delivery times must be
    /// ordered outside the NACK zone unless a delivery was appended at the tail while the
    /// clock was behind it (then Redis's list is not sorted either).
    pub fn validate(&self) -> Result<(), String> {
        if self.pel.len() != self.records.len() {
            return Err(format!(
                "pel has {} ids, slab {} records",
                self.pel.len(),
                self.records.len()
            ));
        }
        for (id, &idx) in &self.pel {
            let r = self.records.get(idx).ok_or("pel points to a free record")?;
            if r.id != *id {
                return Err(format!("record {} indexed under {id}", r.id));
            }
            match r.consumer {
                Some(c) => {
                    let cons = self
                        .consumer_slab
                        .get(c)
                        .ok_or("record owned by a deleted consumer")?;
                    if !cons.pel.contains(id) {
                        return Err(format!("{id} owned by a consumer whose PEL lacks it"));
                    }
                    if r.nacked {
                        return Err(format!("{id} is owned but flagged NACKed"));
                    }
                }
                None => {
                    if !r.nacked {
                        return Err(format!("{id} is unowned outside the NACK zone"));
                    }
                }
            }
            if r.delivery_count > i64::MAX as u64 {
                return Err(format!("{id} delivery count overflows"));
            }
        }
        let owned: usize = self.consumer_slab.iter().map(|(_, c)| c.pel.len()).sum();
        let owned_records = self
            .records
            .iter()
            .filter(|(_, r)| r.consumer.is_some())
            .count();
        if owned != owned_records {
            return Err(format!(
                "consumer PELs hold {owned} ids, {owned_records} records are owned"
            ));
        }
        for (ci, c) in &self.consumer_slab {
            if self.consumers.get(&c.name) != Some(&ci) {
                return Err("consumer index out of sync".into());
            }
            for id in &c.pel {
                let idx = self
                    .pel
                    .get(id)
                    .ok_or_else(|| format!("consumer holds {id} not in the group PEL"))?;
                if self.records[*idx].consumer != Some(ci) {
                    return Err(format!(
                        "{id} in the PEL of a consumer that does not own it"
                    ));
                }
            }
        }
        if self.consumers.len() != self.consumer_slab.len() {
            return Err("consumer map and slab sizes differ".into());
        }
        // Time list: complete, zone is a prefix, times ordered outside the zone.
        let mut seen = 0usize;
        let mut in_zone = self.nack_tail.is_some();
        let mut zone_len = 0u64;
        let mut prev: Option<PelIdx> = None;
        let mut last_time = i64::MIN;
        let mut cur = self.time_head;
        while let Some(c) = cur {
            let r = &self.records[c];
            if r.prev != prev {
                return Err("time list back link broken".into());
            }
            if in_zone {
                if !r.nacked || r.delivery_time != 0 {
                    return Err(format!("{} inside the NACK zone is not NACKed", r.id));
                }
                zone_len += 1;
            } else {
                if r.nacked {
                    return Err(format!("{} NACKed outside the zone", r.id));
                }
                if self.time_sorted && r.delivery_time < last_time {
                    return Err(format!("time list out of order at {}", r.id));
                }
                last_time = r.delivery_time;
            }
            if Some(c) == self.nack_tail {
                in_zone = false;
            }
            seen += 1;
            if seen > self.records.len() {
                return Err("time list has a cycle".into());
            }
            prev = cur;
            cur = r.next;
        }
        if prev != self.time_tail {
            return Err("time tail mismatch".into());
        }
        if seen != self.records.len() {
            return Err(format!(
                "time list visits {seen} of {} records",
                self.records.len()
            ));
        }
        if zone_len != self.nack_count {
            return Err(format!(
                "NACK zone holds {zone_len}, counter says {}",
                self.nack_count
            ));
        }
        Ok(())
    }
}

/// A consumer as stored in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerImage {
    pub name: Vec<u8>,
    pub seen_time: i64,
    pub active_time: i64,
}

/// A pending entry as stored in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingImage {
    pub id: StreamId,
    pub delivery_time: i64,
    pub delivery_count: u64,
    /// Index of the owner in the group's consumer list.
    pub owner: Option<u32>,
    pub nacked: bool,
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
