//! The consumer groups of a stream and the index of which groups reference which entries.

use std::collections::{btree_map, BTreeMap};

use slab::Slab;
use smallvec::SmallVec;

use crate::group::{ConsumerGroup, ConsumerIdx, PelIdx};
use crate::id::StreamId;

use super::GroupIdx;

/// The consumer groups of a stream and the reference index used by ACKED/DELREF.
#[derive(Clone, Debug, Default)]
pub struct Groups {
    by_name: BTreeMap<Vec<u8>, GroupIdx>,
    slab: Slab<ConsumerGroup>,
    /// Entry ID -> groups whose PEL holds it.
    refs: BTreeMap<StreamId, SmallVec<[GroupIdx; 2]>>,
    /// Cached minimum of the groups' last-delivered IDs (lazily recomputed).
    min_last_id: StreamId,
    min_valid: bool,
}

impl Groups {
    /// Number of groups.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Are there no groups?
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Group index by name.
    pub fn lookup(&self, name: &[u8]) -> Option<GroupIdx> {
        self.by_name.get(name).copied()
    }

    /// The group at `g`.
    pub fn get(&self, g: GroupIdx) -> &ConsumerGroup {
        &self.slab[g]
    }

    /// The group at `g`, mutably. Use the `Groups` methods for PEL changes so that the
    /// reference index stays in sync.
    pub fn get_mut(&mut self, g: GroupIdx) -> &mut ConsumerGroup {
        &mut self.slab[g]
    }

    /// Groups in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], GroupIdx, &ConsumerGroup)> + '_ {
        self.by_name
            .iter()
            .map(move |(n, &g)| (n.as_slice(), g, &self.slab[g]))
    }

    /// Create a group; `None` if the name exists.
    pub fn create(
        &mut self,
        name: &[u8],
        last_id: StreamId,
        entries_read: i64,
    ) -> Option<GroupIdx> {
        if self.by_name.contains_key(name) {
            return None;
        }
        let g = self
            .slab
            .insert(ConsumerGroup::new(StreamId::MIN, entries_read));
        self.by_name.insert(name.to_vec(), g);
        self.set_last_id(g, last_id);
        Some(g)
    }

    /// Destroy a group, dropping its references.
    pub fn destroy(&mut self, g: GroupIdx) {
        let ids: Vec<StreamId> = self.slab[g].pending_ids().collect();
        for id in ids {
            self.unlink_ref(id, g);
        }
        if self.min_valid && self.min_last_id == self.slab[g].last_id {
            self.min_valid = false;
        }
        let name = self
            .by_name
            .iter()
            .find(|(_, &i)| i == g)
            .map(|(n, _)| n.clone());
        if let Some(n) = name {
            self.by_name.remove(&n);
        }
        self.slab.remove(g);
    }

    /// Set a group's last-delivered ID, invalidating the cached minimum when needed.
    pub fn set_last_id(&mut self, g: GroupIdx, id: StreamId) {
        let cg = &mut self.slab[g];
        if self.min_valid && (cg.last_id == self.min_last_id || id < self.min_last_id) {
            self.min_valid = false;
        }
        cg.last_id = id;
    }

    fn link_ref(&mut self, id: StreamId, g: GroupIdx) {
        self.refs.entry(id).or_default().push(g);
    }

    fn unlink_ref(&mut self, id: StreamId, g: GroupIdx) {
        // One descent of the index to find the list and, when emptied, to remove it.
        if let btree_map::Entry::Occupied(mut e) = self.refs.entry(id) {
            let list = e.get_mut();
            if let Some(pos) = list.iter().position(|&x| x == g) {
                list.remove(pos);
            }
            if list.is_empty() {
                e.remove();
            }
        }
    }

    /// New pending record in group `g` (owned by `consumer`, delivered at `now`).
    pub fn add_pending(
        &mut self,
        g: GroupIdx,
        id: StreamId,
        consumer: Option<ConsumerIdx>,
        now: i64,
    ) -> Option<PelIdx> {
        let p = self.slab[g].add_pending(id, consumer, now)?;
        self.link_ref(id, g);
        Some(p)
    }

    /// New unowned record in the NACK zone of group `g`.
    pub fn add_nacked(&mut self, g: GroupIdx, id: StreamId, delivery_count: u64) -> Option<PelIdx> {
        let p = self.slab[g].add_nacked(id, delivery_count)?;
        self.link_ref(id, g);
        Some(p)
    }

    /// Remove a pending record of group `g`.
    pub fn remove_pending(&mut self, g: GroupIdx, p: PelIdx) -> StreamId {
        let id = self.slab[g].remove_pending(p);
        self.unlink_ref(id, g);
        id
    }

    /// Remove the pending record of `id` in group `g`, if any (XACK).
    pub fn remove_pending_id(&mut self, g: GroupIdx, id: StreamId) -> bool {
        if !self.slab[g].remove_pending_id(&id) {
            return false;
        }
        self.unlink_ref(id, g);
        true
    }

    /// Delete a consumer of group `g`, dropping the references of its pending entries.
    /// Returns how many entries it had pending.
    pub fn delete_consumer(&mut self, g: GroupIdx, c: ConsumerIdx) -> usize {
        let ids = self.slab[g].delete_consumer(c);
        for id in &ids {
            self.unlink_ref(*id, g);
        }
        ids.len()
    }

    /// Is the entry still needed by some group: not yet read by every group (its ID is
    /// above the smallest last-delivered ID), or pending somewhere?
    pub fn entry_is_referenced(&mut self, id: StreamId) -> bool {
        if self.by_name.is_empty() {
            return false;
        }
        if !self.min_valid {
            self.min_valid = true;
            self.min_last_id = self
                .slab
                .iter()
                .map(|(_, g)| g.last_id)
                .min()
                .unwrap_or(StreamId::MAX);
        }
        if self.min_last_id < id {
            return true;
        }
        self.refs.contains_key(&id)
    }

    /// Remove every group's pending record for `id` (DELREF); returns how many.
    pub fn cleanup_entry_refs(&mut self, id: StreamId) -> usize {
        let mut n = 0;
        if let Some(list) = self.refs.remove(&id) {
            for g in list {
                let cg = &mut self.slab[g];
                if let Some(p) = cg.pel_idx(&id) {
                    cg.remove_pending(p);
                    n += 1;
                }
            }
        }
        n
    }

    /// Rebuild from snapshot groups (name order), recomputing the reference index.
    pub fn restore(groups: Vec<(Vec<u8>, ConsumerGroup)>) -> Result<Groups, String> {
        let mut out = Groups::default();
        for (name, cg) in groups {
            if out.by_name.contains_key(&name) {
                return Err("group listed twice".into());
            }
            let ids: Vec<StreamId> = cg.pending_ids().collect();
            let g = out.slab.insert(cg);
            out.by_name.insert(name, g);
            for id in ids {
                out.link_ref(id, g);
            }
        }
        Ok(out)
    }

    /// Groups referencing `id` (for tests and validation).
    pub fn refs_of(&self, id: &StreamId) -> &[GroupIdx] {
        self.refs.get(id).map(|v| v.as_slice()).unwrap_or(&[])
    }

    pub(super) fn validate(&self) -> Result<(), String> {
        let mut expected: BTreeMap<StreamId, Vec<GroupIdx>> = BTreeMap::new();
        for (g, cg) in &self.slab {
            cg.validate()?;
            for id in cg.pending_ids() {
                expected.entry(id).or_default().push(g);
            }
        }
        if expected.len() != self.refs.len() {
            return Err(format!(
                "refs index has {} ids, PELs {}",
                self.refs.len(),
                expected.len()
            ));
        }
        for (id, gs) in &expected {
            let mut have: Vec<GroupIdx> = self.refs_of(id).to_vec();
            have.sort_unstable();
            if &have != gs {
                return Err(format!("refs of {id}: {have:?} vs PELs {gs:?}"));
            }
        }
        if self.by_name.len() != self.slab.len() {
            return Err("group name index out of sync".into());
        }
        if self.min_valid {
            let m = self
                .slab
                .iter()
                .map(|(_, g)| g.last_id)
                .min()
                .unwrap_or(StreamId::MAX);
            if m < self.min_last_id {
                return Err("cached minimum last id is above the real minimum".into());
            }
        }
        Ok(())
    }
}
