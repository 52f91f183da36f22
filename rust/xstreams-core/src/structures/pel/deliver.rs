//! XREADGROUP's delivery to a consumer: its own history, or new entries, optionally
//! preceded by claiming idle pending entries (CLAIM).

use super::{Delivered, GroupMut, PelEvent};
use crate::structures::group::{ConsumerIdx, INVALID_ENTRIES_READ};
use crate::structures::id::StreamId;
use crate::structures::read::{Budget, ReadSink};
use crate::structures::stream::{RangeIter, Stream};

/// One delivery in progress: the consumer, the per-stream COUNT (0: none), the command
/// time, whether the log wants its events, and what it changed, records and may still
/// serve.
pub(crate) struct Delivery<'d> {
    pub c: ConsumerIdx,
    pub count: u64,
    pub now: i64,
    /// Record [`PelEvent`]s (only a recorded session reproduces them).
    pub record: bool,
    pub dirty: &'d mut u64,
    pub events: &'d mut Vec<PelEvent>,
    pub budget: &'d mut Budget,
}

impl Delivery<'_> {
    fn delivered(&mut self, id: StreamId, count: u64, force: bool, to_tail: bool) {
        if !self.record {
            return;
        }
        self.events.push(PelEvent::Delivered(Delivered {
            id,
            time: self.now,
            count,
            force,
            to_tail,
        }));
    }
}

/// What one XREADGROUP finds to serve from a stream, as the group decides it when the
/// read starts ([`GroupMut::start_read`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroupRead {
    /// The reading consumer (created by this read when `created`).
    pub consumer: ConsumerIdx,
    pub created: bool,
    /// Serve entries after this ID: the requested one for a history read, else the
    /// group's last delivered ID.
    pub after: StreamId,
    /// A read of the consumer's own history (an explicit ID, not `>`).
    pub history: bool,
    /// New entries past the group's last delivered ID (or the history) to serve.
    pub new_entries: bool,
    /// CLAIM: the oldest pending entry still in the stream is idle at least `min_idle`.
    pub claimable: bool,
    /// CLAIM: the delivery time of the oldest pending entry still in the stream.
    pub oldest_delivery: Option<i64>,
}

impl GroupMut<'_> {
    /// Start a read by consumer `name` at `now`: the consumer is created when missing and
    /// seen at `now` (XREADGROUP's bookkeeping, whether or not anything is served); `after`
    /// is the requested ID (`StreamId::MAX` for `>`) and `min_idle` CLAIM's idle time
    /// (-1: no CLAIM). Says what there is to serve; delivery follows with
    /// [`GroupMut::deliver_history`] or [`GroupMut::deliver_new`].
    pub(crate) fn start_read(
        &mut self,
        name: &[u8],
        after: StreamId,
        min_idle: i64,
        now: i64,
    ) -> GroupRead {
        let mut oldest_delivery = None;
        let mut claimable = false;
        if min_idle != -1 {
            let s = &*self.stream;
            oldest_delivery = self
                .group()
                .time_order()
                .map(|(_, r)| r)
                .find(|r| s.contains(r.id))
                .map(|r| r.delivery_time);
            if let Some(t) = oldest_delivery {
                claimable = (now.wrapping_sub(t)) as u64 >= min_idle as u64;
            }
        }
        let history = after != StreamId::MAX;
        let mut start_after = after;
        let mut new_entries = history;
        if !history && self.stream.length > 0 {
            let last = self.group().last_id;
            let maxid = self.stream.last_live_id().unwrap_or(StreamId::MIN);
            if maxid > last {
                new_entries = true;
                start_after = last;
            }
        }
        let (consumer, created) = self.consumer_seen(name, now);
        GroupRead {
            consumer,
            created,
            after: start_after,
            history,
            new_entries,
            claimable,
            oldest_delivery,
        }
    }

    /// A read of the consumer's own history (`XREADGROUP ... <id>`): entries of its PEL
    /// with ID >= start; deleted entries come as missing. Each served entry counts a
    /// delivery.
    pub(crate) fn deliver_history(
        &mut self,
        start: StreamId,
        d: &mut Delivery<'_>,
        sink: &mut impl ReadSink,
    ) {
        let (c, now) = (d.c, d.now);
        let ids: Vec<StreamId> = {
            let it = self.group().consumer(c).pel.range(start..).copied();
            if d.count == 0 {
                it.collect()
            } else {
                it.take(d.count as usize).collect()
            }
        };
        for id in ids {
            match self.stream.get(id) {
                Some(e) => {
                    if !d.budget.admit(Some(&e), id, None) {
                        return;
                    }
                    sink.entry(&e, None);
                    let cg = self.group_mut();
                    if let Some(p) = cg.pel_idx(&id) {
                        cg.incr_delivery_count(p);
                        cg.update_delivery_time(p, now);
                        let n = cg.record(p).delivery_count;
                        d.delivered(id, n, false, false);
                        *d.dirty += 1;
                    }
                }
                None => {
                    if !d.budget.admit(None, id, None) {
                        return;
                    }
                    sink.missing(id);
                }
            }
        }
    }

    /// A read of new entries (`>`), optionally preceded by claiming idle pending entries
    /// (CLAIM, `min_idle` != -1): NACKed entries first, then pending entries idle at least
    /// `min_idle`, oldest delivery first, then new entries, COUNT in total. With
    /// `claimed_only`, no new entry is served.
    pub(crate) fn deliver_new(
        &mut self,
        start: StreamId,
        min_idle: i64,
        claimed_only: bool,
        noack: bool,
        d: &mut Delivery<'_>,
        sink: &mut impl ReadSink,
    ) {
        let (g, c, now, count) = (self.g, d.c, d.now, d.count);
        let mut served = 0u64;
        if min_idle != -1 {
            let cg = self.group();
            let tail = cg.time_tail();
            let mut cur = cg.time_head();
            while let Some(p) = cur {
                let (next, id, dt, dc) = {
                    let cg = self.group();
                    let r = cg.record(p);
                    (cg.time_next(p), r.id, r.delivery_time, r.delivery_count)
                };
                let idle = (now.wrapping_sub(dt)) as u64;
                if idle < min_idle as u64 {
                    break;
                }
                if let Some(e) = self.stream.get(id) {
                    if !d.budget.admit(Some(&e), id, Some((idle, dc))) {
                        return;
                    }
                    sink.entry(&e, Some((idle, dc)));
                    let cg = self.group_mut();
                    cg.set_owner(p, c);
                    cg.incr_delivery_count(p);
                    cg.update_delivery_time(p, now);
                    cg.consumer_mut(c).active_time = now;
                    let n = cg.record(p).delivery_count;
                    d.delivered(id, n, true, false);
                    *d.dirty += 1;
                    served += 1;
                    if count != 0 && served >= count {
                        break;
                    }
                }
                cur = if Some(p) == tail { None } else { next };
            }
        }
        if claimed_only || (count != 0 && count == served) {
            return;
        }
        let meta = self.stream.meta();
        let four = min_idle != -1;
        let Stream { rax, groups, .. } = &mut *self.stream;
        let mut acted = false;
        for e in RangeIter::new(rax, start, StreamId::MAX, false) {
            let id = e.id;
            if !d.budget.admit(Some(&e), id, four.then_some((0, 0))) {
                break;
            }
            let cg = groups.get(g);
            if id > cg.last_id {
                let mut er = cg.entries_read;
                if er != INVALID_ENTRIES_READ
                    && cg.last_id >= meta.first_id
                    && !meta.range_has_tombstones(Some(cg.last_id), None)
                {
                    er = er.wrapping_add(1);
                } else if meta.entries_added != 0 {
                    er = meta.estimate_distance(id);
                }
                groups.get_mut(g).entries_read = er;
                groups.set_last_id(g, id);
                *d.dirty += 1;
            }
            sink.entry(&e, four.then_some((0, 0)));
            served += 1;
            if !noack {
                let mut to_tail = false;
                match groups.add_or_find_pending(g, id, Some(c), now) {
                    Ok(p) => to_tail = d.record && groups.get(g).out_of_order(p),
                    Err(p) => {
                        let cg = groups.get_mut(g);
                        cg.set_owner(p, c);
                        cg.set_delivery_count(p, 1);
                        cg.update_delivery_time(p, now);
                    }
                }
                d.delivered(id, 1, true, to_tail);
                acted = true;
                *d.dirty += 1;
            }
            if count != 0 && count == served {
                break;
            }
        }
        // The consumer's active time, once for the entries it took (`now` is fixed).
        if acted {
            groups.get_mut(g).consumer_mut(c).active_time = now;
        }
    }
}
