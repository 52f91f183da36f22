//! The reference index of a stream with many consumer groups: which groups' PELs hold
//! each entry, so that XADD/XTRIM/XDELEX/XACKDEL's ACKED and DELREF questions cost one
//! lookup however many groups there are (as redis-server's `cgroups_ref` does). The
//! stream's [`super::Groups`] keeps it above [`super::groups::INDEXED_GROUPS`] groups.
//!
//! Every delivery and every acknowledgement changes it, and those come in ID order
//! (deliveries) and mostly oldest first (acknowledgements). So the index is an [`IdMap`]
//! (sorted chunks of IDs: consecutive IDs share a chunk, kept warm across the hundred
//! changes of a read or an XACK) from entry ID to a bit mask of the groups holding it,
//! one bit per group slot below [`MASK_SLOTS`]. A group in a higher slot -- only a
//! stream that had more than 64 groups at once has one -- is listed per ID in a hash map
//! beside it. (A hash map of every ID, the previous index, missed the cache on nearly
//! every change of a large index: a quarter of an XREADGROUP COUNT 100 + XACK cycle on a
//! stream whose other group had 100,000 entries pending.)
//!
//! Invariant (checked by `Groups::validate` against the PELs): an ID is in the index
//! exactly when some group holds it, with exactly those groups; no mask is zero and no
//! list is empty.

use hashbrown::{hash_map, HashMap};
use smallvec::SmallVec;

use crate::structures::group::IdMap;
use crate::structures::id::StreamId;

use super::GroupIdx;

/// Group slots that are a bit of an entry's mask; higher slots are listed.
pub const MASK_SLOTS: usize = 64;

/// Groups holding one entry, as [`RefIndex`] answers.
pub type GroupList = SmallVec<[GroupIdx; 2]>;

/// Entry ID -> the groups whose PEL holds it (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct RefIndex {
    /// Groups in slots below [`MASK_SLOTS`], one bit each; never a zero mask.
    masks: IdMap<u64>,
    /// Groups in higher slots; never an empty list.
    high: HashMap<StreamId, GroupList>,
}

impl RefIndex {
    /// Group `g` holds `id` now (it did not before).
    pub fn link(&mut self, id: StreamId, g: GroupIdx) {
        if g < MASK_SLOTS {
            let bit = 1u64 << g;
            self.masks.insert_or_update(id, bit, |m| *m |= bit);
        } else {
            self.high.entry(id).or_default().push(g);
        }
    }

    /// Group `g` no longer holds `id`.
    pub fn unlink(&mut self, id: StreamId, g: GroupIdx) {
        if g < MASK_SLOTS {
            let bit = 1u64 << g;
            self.masks.update_or_remove(&id, |m| {
                *m &= !bit;
                *m != 0
            });
        } else if let hash_map::Entry::Occupied(mut e) = self.high.entry(id) {
            let list = e.get_mut();
            if let Some(pos) = list.iter().position(|&x| x == g) {
                list.remove(pos);
            }
            if list.is_empty() {
                e.remove();
            }
        }
    }

    /// Does some group hold `id`?
    pub fn contains(&self, id: &StreamId) -> bool {
        self.masks.contains_key(id) || (!self.high.is_empty() && self.high.contains_key(id))
    }

    /// The groups holding `id`, in slot order.
    pub fn groups(&self, id: &StreamId) -> GroupList {
        let mut out = mask_groups(self.masks.get(id).unwrap_or(0));
        if let Some(list) = self.high.get(id) {
            let mut high = list.clone();
            high.sort_unstable();
            out.extend(high);
        }
        out
    }

    /// The groups holding `id`, forgetting them all (DELREF removes `id` from each PEL).
    pub fn take(&mut self, id: &StreamId) -> GroupList {
        let mut out = mask_groups(self.masks.remove(id).unwrap_or(0));
        if !self.high.is_empty() {
            out.extend(self.high.remove(id).unwrap_or_default());
        }
        out
    }

    /// How many IDs some group holds.
    pub fn len(&self) -> usize {
        let only_high = self
            .high
            .keys()
            .filter(|id| !self.masks.contains_key(id))
            .count();
        self.masks.len() + only_high
    }

    /// Does no group hold anything?
    pub fn is_empty(&self) -> bool {
        self.masks.is_empty() && self.high.is_empty()
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        self.masks = IdMap::new();
        self.high.clear();
    }

    /// The structure's own invariants (the PELs are compared by `Groups::validate`).
    pub fn validate(&self) -> Result<(), String> {
        self.masks.validate()?;
        if self.masks.iter().any(|(_, &m)| m == 0) {
            return Err("refs index holds an ID with no group".into());
        }
        if self.high.values().any(|l| l.is_empty()) {
            return Err("refs index lists an ID with no group".into());
        }
        Ok(())
    }
}

/// The slots of the bits of `mask`, lowest first.
fn mask_groups(mut mask: u64) -> GroupList {
    let mut out = GroupList::new();
    while mask != 0 {
        out.push(mask.trailing_zeros() as GroupIdx);
        mask &= mask - 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::test_rng::Rng;

    /// Random links and unlinks over low and high slots agree with a map of sets, and
    /// `take` forgets what it returns.
    #[test]
    fn agrees_with_a_map_of_sets() {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move |n: u64| rng.below(n);
        let mut ix = RefIndex::default();
        let mut model: BTreeMap<StreamId, Vec<GroupIdx>> = BTreeMap::new();
        // Slots on both sides of MASK_SLOTS, the edges included.
        let slots = [0, 1, 5, 62, 63, 64, 65, 200];
        for step in 0..30_000u64 {
            let id = StreamId::new(next(300), next(2));
            let g = slots[next(slots.len() as u64) as usize];
            let held = model.get(&id).is_some_and(|l| l.contains(&g));
            match next(5) {
                0 | 1 if !held => {
                    ix.link(id, g);
                    let l = model.entry(id).or_default();
                    l.push(g);
                    l.sort_unstable();
                }
                2 | 3 if held => {
                    ix.unlink(id, g);
                    let l = model.get_mut(&id).unwrap();
                    l.retain(|&x| x != g);
                    if l.is_empty() {
                        model.remove(&id);
                    }
                }
                4 if step % 7 == 0 => {
                    let mut got = ix.take(&id).to_vec();
                    got.sort_unstable();
                    assert_eq!(got, model.remove(&id).unwrap_or_default(), "take {id}");
                    assert!(!ix.contains(&id));
                }
                _ => {}
            }
            let want = model.get(&id).cloned().unwrap_or_default();
            assert_eq!(ix.groups(&id).to_vec(), want, "groups of {id}");
            assert_eq!(ix.contains(&id), !want.is_empty());
            if step % 1000 == 0 {
                ix.validate().unwrap();
                assert_eq!(ix.len(), model.len());
            }
        }
        ix.clear();
        assert!(ix.is_empty());
        assert_eq!(ix.len(), 0);
    }
}
