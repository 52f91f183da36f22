//! The work done on a consumer group's pending entries list (PEL): delivery to a consumer
//! (XREADGROUP), claiming (XCLAIM, XAUTOCLAIM), acknowledgment and release (XACK, XNACK)
//! and the XPENDING queries, as methods of the group types, each with a typed outcome.
//!
//! Delivery and claiming look at the stream's entries as well as at the group, so they are
//! methods of [`GroupMut`], a group bound to its stream ([`Stream::group_mut`]); the
//! XPENDING queries only read the group and are methods of [`ConsumerGroup`]. The command
//! layer (`command/`) parses arguments, finds the group, calls one of these and builds the
//! reply from the outcome (`From<outcome> for Reply`, in [`crate::command::reply`]); the same
//! outcomes are what [`crate::Store`]'s typed functions return. What a method changed that
//! the log must reproduce comes back as [`PelEvent`]s.

mod ack;
mod claim;
mod deliver;
mod pending;

pub use ack::{NackArgs, NackMode};
pub use claim::{
    AutoclaimArgs, AutoclaimOutcome, ClaimArgs, ClaimDelivery, ClaimOutcome, ClaimedEntry,
};
pub(crate) use deliver::{Delivery, GroupRead};
pub use pending::{PendingRange, PendingRow, PendingSummary};

use crate::structures::group::{ConsumerGroup, ConsumerIdx};
use crate::structures::id::StreamId;
use crate::structures::stream::{GroupIdx, Stream};

/// A consumer group bound to its stream: the receiver of the PEL operations that need both.
pub struct GroupMut<'s> {
    pub(crate) stream: &'s mut Stream,
    pub(crate) g: GroupIdx,
}

impl Stream {
    /// Group `g` of this stream, for the operations on its pending entries.
    pub fn group_mut(&mut self, g: GroupIdx) -> GroupMut<'_> {
        GroupMut { stream: self, g }
    }
}

/// A change to a PEL that the log reproduces with a command of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PelEvent {
    /// A pending record was dropped because its entry no longer exists (logged as XACK).
    Dropped(StreamId),
    /// An entry was delivered or claimed (logged as an XCLAIM reproducing the record).
    Delivered(Delivered),
}

/// One delivery or claim as the log records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub id: StreamId,
    /// Delivery time and count after the delivery.
    pub time: i64,
    pub count: u64,
    /// The record is created when missing (XCLAIM's FORCE on replay).
    pub force: bool,
    /// Appended at the tail of the time list out of time order (the clock went back).
    pub to_tail: bool,
}

impl GroupMut<'_> {
    /// The group.
    pub fn group(&self) -> &ConsumerGroup {
        self.stream.groups.get(self.g)
    }

    /// The group, mutably.
    pub fn group_mut(&mut self) -> &mut ConsumerGroup {
        self.stream.groups.get_mut(self.g)
    }

    /// The consumer called `name`, created (seen and active never) when missing; and
    /// whether it was created. Its seen time becomes `now`.
    pub fn consumer_seen(&mut self, name: &[u8], now: i64) -> (ConsumerIdx, bool) {
        let cg = self.group_mut();
        let (c, created) = match cg.consumer_idx(name) {
            Some(c) => (c, false),
            None => (
                cg.create_consumer(name, now).expect("consumer absent"),
                true,
            ),
        };
        cg.consumer_mut(c).seen_time = now;
        (c, created)
    }

    /// The seen and active times of consumer `c`.
    pub fn consumer_times(&self, c: ConsumerIdx) -> (i64, i64) {
        let cons = self.group().consumer(c);
        (cons.seen_time, cons.active_time)
    }
}
