//! XPENDING's two forms as queries of a [`ConsumerGroup`].

use crate::structures::group::ConsumerGroup;
use crate::structures::id::StreamId;

/// XPENDING's summary form: how many entries are pending, the smallest and largest
/// pending IDs, and how many each consumer with pending entries holds (by name).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingSummary {
    pub count: u64,
    /// `None` when nothing is pending.
    pub bounds: Option<(StreamId, StreamId)>,
    pub consumers: Vec<(Vec<u8>, u64)>,
}

/// XPENDING's extended form: `[IDLE min-idle] start end count [consumer]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingRange<'a> {
    /// Only entries idle at least this long (ms; 0: all). NACKed entries always qualify.
    pub min_idle: i64,
    pub start: StreamId,
    pub end: StreamId,
    /// At most this many rows (a negative count in the command reads as 0).
    pub count: u64,
    /// Only the entries this consumer holds.
    pub consumer: Option<&'a [u8]>,
}

impl<'a> PendingRange<'a> {
    /// Every pending entry from `start` to `end`, at most `count`.
    pub fn new(start: StreamId, end: StreamId, count: u64) -> Self {
        PendingRange {
            min_idle: 0,
            start,
            end,
            count,
            consumer: None,
        }
    }
}

/// One row of XPENDING's extended form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRow {
    pub id: StreamId,
    /// The owner's name (empty for a NACKed, unowned entry).
    pub consumer: Vec<u8>,
    /// Milliseconds since the last delivery; -1 for a NACKed entry.
    pub idle: i64,
    pub delivery_count: u64,
}

impl ConsumerGroup {
    /// XPENDING's summary of this group.
    pub fn pending_summary(&self) -> PendingSummary {
        let Some(bounds) = self.pel_bounds() else {
            return PendingSummary::default();
        };
        PendingSummary {
            count: self.pel_len() as u64,
            bounds: Some(bounds),
            consumers: self
                .consumers()
                .filter(|(_, c)| !c.pel.is_empty())
                .map(|(_, c)| (c.name.clone(), c.pel.len() as u64))
                .collect(),
        }
    }

    /// XPENDING's extended form at time `now`: pending entries in ID order (an unknown
    /// consumer has none).
    pub fn pending_range(&self, q: &PendingRange<'_>, now: i64) -> Vec<PendingRow> {
        let row = |id: StreamId, p: usize| {
            let r = self.record(p);
            let (consumer, idle) = match r.consumer {
                Some(c) => (
                    self.consumer(c).name.clone(),
                    (now - r.delivery_time).max(0),
                ),
                None => (Vec::new(), -1),
            };
            PendingRow {
                id,
                consumer,
                idle,
                delivery_count: r.delivery_count,
            }
        };
        let passes_idle = |p: usize| {
            let r = self.record(p);
            !(r.consumer.is_some() && q.min_idle != 0 && now - r.delivery_time < q.min_idle)
        };
        let mut out = Vec::new();
        let mut left = q.count;
        match q.consumer {
            Some(name) => {
                let Some(c) = self.consumer_idx(name) else {
                    return out;
                };
                if q.start <= q.end {
                    for id in self.consumer(c).pel.range(q.start..=q.end) {
                        if left == 0 {
                            break;
                        }
                        let p = self.pel_idx(id).expect("consumer PEL is in the group PEL");
                        if !passes_idle(p) {
                            continue;
                        }
                        out.push(row(*id, p));
                        left -= 1;
                    }
                }
            }
            None => {
                for (id, p) in self.pel_range(q.start, q.end) {
                    if left == 0 {
                        break;
                    }
                    if !passes_idle(p) {
                        continue;
                    }
                    out.push(row(id, p));
                    left -= 1;
                }
            }
        }
        out
    }
}
