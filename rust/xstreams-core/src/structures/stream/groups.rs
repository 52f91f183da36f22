//! The consumer groups of a stream and the index of which groups reference which entries.
//!
//! Whether an entry is pending in some group (XADD/XTRIM/XDELEX/XACKDEL's ACKED policy) and
//! in which ones (DELREF) can be answered by asking each group's PEL. With few groups that
//! is what happens: a delivery then updates two ID maps (the group's PEL and the
//! consumer's), not three. Above [`INDEXED_GROUPS`] groups the stream keeps an index from
//! entry ID to the groups holding it ([`RefIndex`], as redis-server's `cgroups_ref`), so
//! those questions cost one lookup however many groups there are; it is built when the
//! group count goes above the threshold and dropped when it falls back.

use std::collections::BTreeMap;

use slab::Slab;

use crate::structures::group::{ConsumerGroup, ConsumerIdx, PelIdx};
use crate::structures::id::StreamId;

use super::refs::{GroupList, RefIndex};
use super::GroupIdx;

/// Above this many groups the stream keeps the index of which groups hold which entries.
pub const INDEXED_GROUPS: usize = 4;

/// The consumer groups of a stream and the reference index used by ACKED/DELREF.
#[derive(Clone, Debug, Default)]
pub struct Groups {
    by_name: BTreeMap<Vec<u8>, GroupIdx>,
    slab: Slab<ConsumerGroup>,
    /// Entry ID -> groups whose PEL holds it; kept only with more than
    /// [`INDEXED_GROUPS`] groups (`indexed`), empty otherwise.
    refs: RefIndex,
    indexed: bool,
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
        self.reindex();
        Some(g)
    }

    /// Build or drop the reference index when the group count crossed
    /// [`INDEXED_GROUPS`].
    fn reindex(&mut self) {
        let want = self.slab.len() > INDEXED_GROUPS;
        if want == self.indexed {
            return;
        }
        self.indexed = want;
        self.refs.clear();
        if want {
            for (g, cg) in &self.slab {
                for id in cg.pending_ids() {
                    self.refs.link(id, g);
                }
            }
        }
    }

    /// Destroy a group, dropping its references.
    pub fn destroy(&mut self, g: GroupIdx) {
        if self.indexed {
            let ids: Vec<StreamId> = self.slab[g].pending_ids().collect();
            for id in ids {
                self.unlink_ref(id, g);
            }
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
        self.reindex();
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
        if self.indexed {
            self.refs.link(id, g);
        }
    }

    fn unlink_ref(&mut self, id: StreamId, g: GroupIdx) {
        if self.indexed {
            self.refs.unlink(id, g);
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

    /// [`Groups::add_pending`], or `Err` with the record of `id` in group `g` when it is
    /// pending there already (left unchanged).
    pub fn add_or_find_pending(
        &mut self,
        g: GroupIdx,
        id: StreamId,
        consumer: Option<ConsumerIdx>,
        now: i64,
    ) -> Result<PelIdx, PelIdx> {
        let p = self.slab[g].add_or_find_pending(id, consumer, now)?;
        self.link_ref(id, g);
        Ok(p)
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
        if self.indexed {
            return self.refs.contains(&id);
        }
        self.slab.iter().any(|(_, cg)| cg.pel_idx(&id).is_some())
    }

    /// Remove every group's pending record for `id` (DELREF); returns how many.
    pub fn cleanup_entry_refs(&mut self, id: StreamId) -> usize {
        let mut n = 0;
        if !self.indexed {
            for (_, cg) in self.slab.iter_mut() {
                n += usize::from(cg.remove_pending_id(&id));
            }
            return n;
        }
        for g in self.refs.take(&id) {
            let cg = &mut self.slab[g];
            if let Some(p) = cg.pel_idx(&id) {
                cg.remove_pending(p);
                n += 1;
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
            out.reindex();
        }
        Ok(out)
    }

    /// Groups referencing `id` (for tests and validation): from the index when there is
    /// one, else asking each group's PEL.
    pub fn refs_of(&self, id: &StreamId) -> GroupList {
        if self.indexed {
            return self.refs.groups(id);
        }
        self.slab
            .iter()
            .filter(|(_, cg)| cg.pel_idx(id).is_some())
            .map(|(g, _)| g)
            .collect()
    }

    /// Is the reference index kept (more than [`INDEXED_GROUPS`] groups)?
    pub fn is_indexed(&self) -> bool {
        self.indexed
    }

    pub(super) fn validate(&self) -> Result<(), String> {
        let mut expected: BTreeMap<StreamId, Vec<GroupIdx>> = BTreeMap::new();
        for (g, cg) in &self.slab {
            cg.validate()?;
            for id in cg.pending_ids() {
                expected.entry(id).or_default().push(g);
            }
        }
        if self.indexed != (self.slab.len() > INDEXED_GROUPS) {
            return Err(format!(
                "refs index kept: {} with {} groups",
                self.indexed,
                self.slab.len()
            ));
        }
        self.refs.validate()?;
        if !self.indexed {
            if !self.refs.is_empty() {
                return Err("refs index not kept but not empty".into());
            }
        } else if expected.len() != self.refs.len() {
            return Err(format!(
                "refs index has {} ids, PELs {}",
                self.refs.len(),
                expected.len()
            ));
        }
        for (id, gs) in expected.iter().filter(|_| self.indexed) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// The groups holding `id`, asked of every PEL (the model of the index).
    fn holders(gs: &Groups, id: StreamId) -> Vec<GroupIdx> {
        let mut v: Vec<GroupIdx> = gs
            .iter()
            .filter(|(_, _, cg)| cg.pel_idx(&id).is_some())
            .map(|(_, g, _)| g)
            .collect();
        v.sort_unstable();
        v
    }

    fn check(gs: &mut Groups, ids: u64) {
        gs.validate().unwrap();
        assert_eq!(gs.is_indexed(), gs.len() > INDEXED_GROUPS);
        for i in 0..ids {
            let id = StreamId::new(i, 0);
            let want = holders(gs, id);
            let mut have = gs.refs_of(&id).to_vec();
            have.sort_unstable();
            assert_eq!(have, want, "refs_of({id}) with {} groups", gs.len());
            // Every group has read everything: only the PELs keep an entry referenced.
            assert_eq!(gs.entry_is_referenced(id), !want.is_empty());
        }
        // A snapshot's groups give the same answers.
        let restored = Groups::restore(
            gs.iter()
                .map(|(n, _, cg)| (n.to_vec(), cg.clone()))
                .collect(),
        )
        .unwrap();
        restored.validate().unwrap();
        assert_eq!(restored.is_indexed(), gs.is_indexed());
        for i in 0..ids {
            let id = StreamId::new(i, 0);
            let mut have = restored.refs_of(&id).to_vec();
            have.sort_unstable();
            assert_eq!(have, holders(&restored, id));
        }
    }

    /// The answers are the same with and without the index, across the group counts
    /// where it is built and dropped, through deliveries, acks, DELREF cleanups,
    /// deleted consumers and destroyed groups.
    #[test]
    fn reference_answers_do_not_depend_on_the_index() {
        const IDS: u64 = 40;
        let mut gs = Groups::default();
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
        let mut next = move |n: u64| rng.below(n);
        let mut names = Vec::new();
        let step = |gs: &mut Groups, next: &mut dyn FnMut(u64) -> u64| {
            let live: Vec<GroupIdx> = gs.iter().map(|(_, g, _)| g).collect();
            for _ in 0..30 {
                let g = live[next(live.len() as u64) as usize];
                let id = StreamId::new(next(IDS), 0);
                match next(4) {
                    0 | 1 => {
                        let c = gs.get_mut(g).create_consumer(b"c", 0);
                        let c = c.or_else(|| gs.get(g).consumer_idx(b"c"));
                        let _ = gs.add_or_find_pending(g, id, c, 1);
                    }
                    2 => {
                        gs.remove_pending_id(g, id);
                    }
                    _ => {
                        let want = holders(gs, id).len();
                        assert_eq!(gs.cleanup_entry_refs(id), want);
                    }
                }
            }
            check(gs, IDS);
        };
        for n in 0..7u8 {
            let name = vec![b'g', n];
            gs.create(&name, StreamId::MAX, 0).unwrap();
            names.push(name);
            step(&mut gs, &mut next);
        }
        for name in names.iter().take(6) {
            let g = gs.lookup(name).unwrap();
            if let Some(c) = gs.get(g).consumer_idx(b"c") {
                gs.delete_consumer(g, c);
                check(&mut gs, IDS);
            }
            gs.destroy(g);
            check(&mut gs, IDS);
            step(&mut gs, &mut next);
        }
    }
}
