//! A group as stored in a snapshot: its consumers and pending records as images, and
//! the group rebuilt (and checked) from them.

use super::{ConsumerGroup, PendingEntry};
use crate::structures::id::StreamId;

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

impl ConsumerGroup {
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
            if g.pel.try_insert(r.id, g.records.vacant_key()).is_err() {
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
}
