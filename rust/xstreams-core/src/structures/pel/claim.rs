//! XCLAIM and XAUTOCLAIM: taking pending entries over for a consumer.

use super::{Delivered, GroupMut, PelEvent};
use crate::structures::group::{ConsumerIdx, PelIdx};
use crate::structures::id::StreamId;

/// XCLAIM's `IDLE ms` or `TIME unix-ms`: the delivery time a claim sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimDelivery {
    /// Delivered this many ms before the command time.
    Idle(i64),
    /// Delivered at this time (ms since the epoch); a time in the future means now.
    Time(i64),
}

/// `XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms | TIME unix-ms]
/// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]`.
///
/// ```
/// use xstreams_core::structures::pel::ClaimArgs;
/// use xstreams_core::StreamId;
/// let ids = [StreamId::new(1, 0)];
/// let args = ClaimArgs::new(b"orders", b"workers", b"bob", 60_000, &ids);
/// assert!(!args.justid && args.retry_count.is_none());
/// ```
#[derive(Clone, Debug)]
pub struct ClaimArgs<'a> {
    pub key: &'a [u8],
    pub group: &'a [u8],
    pub consumer: &'a [u8],
    /// Only entries idle at least this long (ms) are claimed; negative counts as 0.
    pub min_idle: i64,
    pub ids: &'a [StreamId],
    /// The delivery time to set (default: now).
    pub delivery: Option<ClaimDelivery>,
    /// The delivery counter to set (default: one more, or unchanged with JUSTID).
    pub retry_count: Option<u64>,
    /// Create a pending record for an entry no consumer holds.
    pub force: bool,
    /// Only the IDs in the outcome; the delivery counter is not incremented.
    pub justid: bool,
    /// Move the group's last-delivered ID up to this one.
    pub last_id: Option<StreamId>,
}

impl<'a> ClaimArgs<'a> {
    /// `XCLAIM key group consumer min-idle id ...` with no option.
    pub fn new(
        key: &'a [u8],
        group: &'a [u8],
        consumer: &'a [u8],
        min_idle: i64,
        ids: &'a [StreamId],
    ) -> Self {
        ClaimArgs {
            key,
            group,
            consumer,
            min_idle,
            ids,
            delivery: None,
            retry_count: None,
            force: false,
            justid: false,
            last_id: None,
        }
    }

    /// The command in canonical form (for the log and memory accounting).
    pub fn to_argv(&self) -> Vec<Vec<u8>> {
        let mut v = vec![
            b"XCLAIM".to_vec(),
            self.key.to_vec(),
            self.group.to_vec(),
            self.consumer.to_vec(),
            self.min_idle.to_string().into_bytes(),
        ];
        v.extend(self.ids.iter().map(|id| id.to_bytes()));
        match self.delivery {
            Some(ClaimDelivery::Idle(ms)) => {
                v.push(b"IDLE".to_vec());
                v.push(ms.to_string().into_bytes());
            }
            Some(ClaimDelivery::Time(t)) => {
                v.push(b"TIME".to_vec());
                v.push(t.to_string().into_bytes());
            }
            None => {}
        }
        if let Some(n) = self.retry_count {
            v.push(b"RETRYCOUNT".to_vec());
            v.push(n.to_string().into_bytes());
        }
        if self.force {
            v.push(b"FORCE".to_vec());
        }
        if self.justid {
            v.push(b"JUSTID".to_vec());
        }
        if let Some(id) = self.last_id {
            v.push(b"LASTID".to_vec());
            v.push(id.to_bytes());
        }
        v
    }
}

/// `XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]`.
#[derive(Clone, Debug)]
pub struct AutoclaimArgs<'a> {
    pub key: &'a [u8],
    pub group: &'a [u8],
    pub consumer: &'a [u8],
    /// Only entries idle at least this long (ms) are claimed; negative counts as 0.
    pub min_idle: i64,
    /// The first pending ID to look at.
    pub start: StreamId,
    /// At most this many entries claimed or dropped (1 to `i64::MAX / 16`; default 100).
    pub count: u64,
    pub justid: bool,
}

impl<'a> AutoclaimArgs<'a> {
    /// `XAUTOCLAIM key group consumer min-idle start` (COUNT 100).
    pub fn new(
        key: &'a [u8],
        group: &'a [u8],
        consumer: &'a [u8],
        min_idle: i64,
        start: StreamId,
    ) -> Self {
        AutoclaimArgs {
            key,
            group,
            consumer,
            min_idle,
            start,
            count: 100,
            justid: false,
        }
    }

    /// The command in canonical form (for the log and memory accounting).
    pub fn to_argv(&self) -> Vec<Vec<u8>> {
        let mut v = vec![
            b"XAUTOCLAIM".to_vec(),
            self.key.to_vec(),
            self.group.to_vec(),
            self.consumer.to_vec(),
            self.min_idle.to_string().into_bytes(),
            self.start.to_bytes(),
            b"COUNT".to_vec(),
            self.count.to_string().into_bytes(),
        ];
        if self.justid {
            v.push(b"JUSTID".to_vec());
        }
        v
    }
}

/// An entry a claim took over: its ID and, unless JUSTID, its fields and values
/// alternating.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedEntry {
    pub id: StreamId,
    pub pairs: Vec<Vec<u8>>,
}

/// What XCLAIM did: the entries claimed, in the order asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClaimOutcome {
    /// JUSTID: the reply lists only the IDs.
    pub justid: bool,
    pub entries: Vec<ClaimedEntry>,
}

/// What XAUTOCLAIM did: where the next call starts (0-0: the scan reached the end), the
/// entries claimed, and the pending IDs dropped because their entries were deleted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AutoclaimOutcome {
    pub next: StreamId,
    pub justid: bool,
    pub entries: Vec<ClaimedEntry>,
    pub deleted: Vec<StreamId>,
}

/// What a claim changed, besides its outcome: changes counted, the consumer, whether the
/// group's last ID moved, and the log events in order.
pub(crate) struct ClaimEffects {
    pub dirty: u64,
    pub consumer: ConsumerIdx,
    pub last_id_set: bool,
    pub events: Vec<PelEvent>,
}

impl GroupMut<'_> {
    /// The claimed entry as the outcome lists it.
    fn claimed_entry(&self, id: StreamId, justid: bool) -> ClaimedEntry {
        let pairs = if justid {
            Vec::new()
        } else {
            let e = self.stream.get(id).expect("entry exists");
            e.pairs()
                .flat_map(|(f, v)| [f.to_vec(), v.to_vec()])
                .collect()
        };
        ClaimedEntry { id, pairs }
    }

    /// Is record `p` held by a consumer and idle less than `min_idle` at `now`?
    fn too_recent(&self, p: PelIdx, min_idle: i64, now: i64) -> bool {
        let r = self.group().record(p);
        r.consumer.is_some() && min_idle != 0 && now - r.delivery_time < min_idle
    }

    /// Give record `p` to consumer `c` as a claim does, and note it for the log.
    #[allow(clippy::too_many_arguments)]
    fn claim_one(
        &mut self,
        p: PelIdx,
        c: ConsumerIdx,
        time: i64,
        retry: Option<u64>,
        justid: bool,
        now: i64,
        events: &mut Vec<PelEvent>,
    ) {
        let cg = self.group_mut();
        cg.update_delivery_time(p, time);
        match retry {
            Some(r) => cg.set_delivery_count(p, r),
            None if !justid => cg.incr_delivery_count(p),
            None => {}
        }
        cg.set_owner(p, c);
        cg.consumer_mut(c).active_time = now;
        let r = cg.record(p);
        events.push(PelEvent::Delivered(Delivered {
            id: r.id,
            time: r.delivery_time,
            count: r.delivery_count,
            force: true,
            to_tail: false,
        }));
    }

    /// Drop record `p`, whose entry was deleted.
    fn drop_missing(&mut self, p: PelIdx, events: &mut Vec<PelEvent>) -> StreamId {
        let id = self.stream.groups.remove_pending(self.g, p);
        events.push(PelEvent::Dropped(id));
        id
    }

    /// XCLAIM at time `now`.
    pub(crate) fn claim(&mut self, a: &ClaimArgs<'_>, now: i64) -> (ClaimOutcome, ClaimEffects) {
        let min_idle = a.min_idle.max(0);
        let mut fx = ClaimEffects {
            dirty: 0,
            consumer: 0,
            last_id_set: false,
            events: Vec::new(),
        };
        if let Some(last_id) = a.last_id {
            if last_id > self.group().last_id {
                self.stream.groups.set_last_id(self.g, last_id);
                fx.dirty += 1;
                fx.last_id_set = true;
            }
        }
        let mut time = match a.delivery {
            None => -1,
            Some(ClaimDelivery::Idle(ms)) => now.wrapping_sub(ms),
            Some(ClaimDelivery::Time(t)) => t,
        };
        if time < 0 || time > now {
            time = now;
        }
        let (c, created) = self.consumer_seen(a.consumer, now);
        fx.consumer = c;
        fx.dirty += created as u64;
        let mut out = ClaimOutcome {
            justid: a.justid,
            entries: Vec::new(),
        };
        for &id in a.ids {
            let mut pel = self.group().pel_idx(&id);
            if !self.stream.contains(id) {
                if let Some(p) = pel {
                    self.drop_missing(p, &mut fx.events);
                    fx.dirty += 1;
                }
                continue;
            }
            if a.force && pel.is_none() {
                pel = self.stream.groups.add_pending(self.g, id, None, now);
            }
            let Some(p) = pel else { continue };
            if self.too_recent(p, min_idle, now) {
                continue;
            }
            self.claim_one(p, c, time, a.retry_count, a.justid, now, &mut fx.events);
            out.entries.push(self.claimed_entry(id, a.justid));
            fx.dirty += 1;
        }
        (out, fx)
    }

    /// XAUTOCLAIM at time `now`.
    pub(crate) fn autoclaim(
        &mut self,
        a: &AutoclaimArgs<'_>,
        now: i64,
    ) -> (AutoclaimOutcome, ClaimEffects) {
        const ATTEMPTS_FACTOR: i64 = 10;
        let min_idle = a.min_idle.max(0);
        let mut count = a.count.min(i64::MAX as u64) as i64;
        let mut fx = ClaimEffects {
            dirty: 0,
            consumer: 0,
            last_id_set: false,
            events: Vec::new(),
        };
        let (c, created) = self.consumer_seen(a.consumer, now);
        fx.consumer = c;
        fx.dirty += created as u64;
        let mut out = AutoclaimOutcome {
            justid: a.justid,
            ..AutoclaimOutcome::default()
        };
        let mut attempts = count.saturating_mul(ATTEMPTS_FACTOR);
        let mut cursor = a.start;
        let mut next_cursor: Option<StreamId> = None;
        loop {
            if attempts == 0 || count == 0 {
                // The reply cursor is the next pending ID after the last one examined.
                next_cursor = self.group().pel_seek_ge(cursor).map(|(id, _)| id);
                break;
            }
            attempts -= 1;
            let Some((id, p)) = self.group().pel_seek_ge(cursor) else {
                break;
            };
            cursor = id.incr().unwrap_or(StreamId::MAX);
            let at_end = id == StreamId::MAX;
            if !self.stream.contains(id) {
                self.drop_missing(p, &mut fx.events);
                out.deleted.push(id);
                fx.dirty += 1;
                count -= 1;
                if at_end {
                    break;
                }
                continue;
            }
            if self.too_recent(p, min_idle, now) {
                if at_end {
                    break;
                }
                continue;
            }
            self.claim_one(p, c, now, None, a.justid, now, &mut fx.events);
            out.entries.push(self.claimed_entry(id, a.justid));
            count -= 1;
            fx.dirty += 1;
            if at_end {
                break;
            }
        }
        out.next = next_cursor.unwrap_or(StreamId::MIN);
        (out, fx)
    }
}
