//! Changes to a group's pending entries that keep the PEL, the consumers' PELs and the
//! time-ordered list (with the NACK zone at its head) in step.

use super::{ConsumerGroup, ConsumerIdx, PelIdx, PendingEntry};
use crate::structures::id::StreamId;

impl ConsumerGroup {
    // ---------------------------------------------------------------- time list

    pub(super) fn insert_after(&mut self, after: Option<PelIdx>, idx: PelIdx) {
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

    pub(super) fn unlink(&mut self, idx: PelIdx) {
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
    pub(super) fn insert_sorted(&mut self, idx: PelIdx) {
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

    pub(super) fn insert_nacked(&mut self, idx: PelIdx) {
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
        self.add_or_find_pending(id, consumer, now).ok()
    }

    /// [`ConsumerGroup::add_pending`], or `Err` with the record of `id` when it is
    /// pending already (left unchanged): one descent of the PEL for the lookup and the
    /// insertion.
    pub fn add_or_find_pending(
        &mut self,
        id: StreamId,
        consumer: Option<ConsumerIdx>,
        now: i64,
    ) -> Result<PelIdx, PelIdx> {
        // The slab's next key is the record's index: one search of the PEL inserts it.
        let want = self.records.vacant_key();
        self.pel.try_insert(id, want)?;
        let idx = self.records.insert(PendingEntry {
            id,
            delivery_time: now,
            delivery_count: 1,
            consumer,
            nacked: false,
            prev: None,
            next: None,
        });
        debug_assert_eq!(idx, want);
        if let Some(c) = consumer {
            self.consumer_slab[c].pel.insert(id);
        }
        let tail = self.time_tail;
        self.insert_after(tail, idx);
        if self.out_of_order(idx) {
            self.time_sorted = false;
        }
        Ok(idx)
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
        self.pel.try_insert(id, self.records.vacant_key()).ok()?;
        let idx = self.records.insert(PendingEntry {
            id,
            delivery_time: 0,
            delivery_count,
            consumer: None,
            nacked: false,
            prev: None,
            next: None,
        });
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

    /// Remove the pending record for `id`, if any (one descent of the PEL to find and
    /// remove it).
    pub fn remove_pending_id(&mut self, id: &StreamId) -> bool {
        let Some(idx) = self.pel.remove(id) else {
            return false;
        };
        self.unlink(idx);
        let r = self.records.remove(idx);
        if let Some(c) = r.consumer {
            self.consumer_slab[c].pel.remove(&r.id);
        }
        true
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
}
