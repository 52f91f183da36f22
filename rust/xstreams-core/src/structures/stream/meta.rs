//! A stream's counters and what they tell: tombstones in a range, read distances, lag.

use crate::structures::group::{ConsumerGroup, INVALID_ENTRIES_READ};
use crate::structures::id::StreamId;

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
