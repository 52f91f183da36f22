//! Ordered maps and sets keyed by stream ID for the pending entries lists: [`IdMap`] (the
//! group's PEL, ID -> record) and [`IdSet`] (a consumer's PEL).
//!
//! A PEL mostly grows at its end (deliveries come in ID order) and shrinks at its start
//! (the oldest entries are acknowledged first). A B-tree pays a descent and a shift of its
//! leaf for each of those; here the IDs are kept in sorted chunks of at most [`CAP`]
//! entries, each a ring buffer, so appending after the last ID and removing the first one
//! cost O(1) and touch one chunk. Any other insertion or removal binary-searches the
//! chunks' last IDs (kept apart, in one buffer) and then the chunk; a full chunk splits in two, a chunk
//! emptied is dropped and one below a quarter full merges into a neighbour it fits in.
//!
//! Invariants (checked by [`IdMap::validate`]): no chunk is empty or holds more than
//! [`CAP`] entries; IDs increase strictly within and across chunks; `lasts` holds each
//! chunk's last ID; `len` is the total.

use std::collections::VecDeque;
use std::ops::{Bound, RangeBounds};

use crate::structures::id::StreamId;

/// Entries per chunk at most.
pub const CAP: usize = 64;

/// An ordered map from stream ID to `V` (see the module documentation).
#[derive(Clone, Debug)]
pub struct IdMap<V> {
    chunks: VecDeque<VecDeque<(StreamId, V)>>,
    /// The last ID of each chunk (searched without touching the chunks).
    lasts: VecDeque<StreamId>,
    len: usize,
    /// The chunk and position of the last change: where the next change looks first
    /// (deliveries and acknowledgements of a read come in ID order, so mostly the next
    /// entry of the same chunk, read in order rather than by a binary search that misses
    /// the cache on a large map). A guess only, checked before use.
    hint: (usize, usize),
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        IdMap {
            chunks: VecDeque::new(),
            lasts: VecDeque::new(),
            len: 0,
            hint: (0, 0),
        }
    }
}

impl<V: Copy> IdMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Is the map empty?
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first chunk whose last ID is `>= id` (`chunks.len()` when none is).
    fn chunk_for(&self, id: &StreamId) -> usize {
        let n = self.lasts.len();
        if n == 0 || self.lasts[n - 1] < *id {
            return n;
        }
        if self.lasts[0] >= *id {
            return 0;
        }
        self.lasts.partition_point(|l| l < id)
    }

    /// [`IdMap::seek`] for a change: the entry after the last change's, or that one,
    /// when `id` belongs there, else the search; the answer becomes the hint.
    fn seek_for_change(&mut self, id: &StreamId) -> (usize, usize) {
        let (h, hp) = self.hint;
        let in_hint =
            h < self.lasts.len() && *id <= self.lasts[h] && (h == 0 || self.lasts[h - 1] < *id);
        let ci = if in_hint { h } else { self.chunk_for(id) };
        let c = self.chunks.get(ci);
        let at = match c {
            Some(c) if in_hint => [hp + 1, hp]
                .into_iter()
                .find(|&p| p < c.len() && c[p].0 >= *id && (p == 0 || c[p - 1].0 < *id))
                .map(|p| (ci, p)),
            _ => None,
        };
        let at = at.unwrap_or_else(|| self.seek_in(ci, id));
        self.hint = at;
        at
    }

    /// Chunk and position of the first entry with an ID `>= id`.
    fn seek(&self, id: &StreamId) -> (usize, usize) {
        self.seek_in(self.chunk_for(id), id)
    }

    /// Position of the first entry with an ID `>= id` in chunk `ci`, the first chunk
    /// whose last ID is `>= id`.
    fn seek_in(&self, ci: usize, id: &StreamId) -> (usize, usize) {
        match self.chunks.get(ci) {
            None => (ci, 0),
            Some(c) if c[0].0 >= *id => (ci, 0),
            Some(c) => (ci, c.partition_point(|e| e.0 < *id)),
        }
    }

    /// Chunk and position of `id`.
    fn find(&self, id: &StreamId) -> Option<(usize, usize)> {
        self.found(self.seek(id), id)
    }

    /// [`IdMap::find`] for a change (see [`IdMap::seek_for_change`]).
    fn find_for_change(&mut self, id: &StreamId) -> Option<(usize, usize)> {
        let at = self.seek_for_change(id);
        self.found(at, id)
    }

    /// `at` if `id` is there.
    fn found(&self, (ci, pos): (usize, usize), id: &StreamId) -> Option<(usize, usize)> {
        let c = self.chunks.get(ci)?;
        (c[pos].0 == *id).then_some((ci, pos))
    }

    /// The value of `id`.
    pub fn get(&self, id: &StreamId) -> Option<V> {
        self.find(id).map(|(ci, pos)| self.chunks[ci][pos].1)
    }

    /// Is `id` present?
    pub fn contains_key(&self, id: &StreamId) -> bool {
        self.find(id).is_some()
    }

    /// Insert `id` -> `v`; when `id` is present already nothing changes and its value
    /// comes back as `Err`.
    pub fn try_insert(&mut self, id: StreamId, v: V) -> Result<(), V> {
        self.insert_at(id, v)
            .map_err(|(ci, pos)| self.chunks[ci][pos].1)
    }

    /// Insert `id` -> `new`, or when `id` is present change its value in place with
    /// `update` (one search either way).
    pub fn insert_or_update(&mut self, id: StreamId, new: V, update: impl FnOnce(&mut V)) {
        if let Err((ci, pos)) = self.insert_at(id, new) {
            update(&mut self.chunks[ci][pos].1);
        }
    }

    /// Insert `id` -> `v`, or `Err` with where `id` is when it is present already.
    fn insert_at(&mut self, id: StreamId, v: V) -> Result<(), (usize, usize)> {
        let (ci, pos) = self.seek_for_change(&id);
        if ci == self.chunks.len() {
            match self.chunks.back_mut() {
                Some(c) if c.len() < CAP => {
                    c.push_back((id, v));
                    *self.lasts.back_mut().expect("a last per chunk") = id;
                }
                _ => {
                    let mut c = VecDeque::with_capacity(CAP);
                    c.push_back((id, v));
                    self.chunks.push_back(c);
                    self.lasts.push_back(id);
                }
            }
            self.len += 1;
            return Ok(());
        }
        let c = &mut self.chunks[ci];
        if c[pos].0 == id {
            return Err((ci, pos));
        }
        if c.len() < CAP {
            c.insert(pos, (id, v));
        } else {
            let mut hi = c.split_off(CAP / 2);
            hi.reserve(CAP - hi.len());
            if pos <= CAP / 2 {
                c.insert(pos, (id, v));
            } else {
                hi.insert(pos - CAP / 2, (id, v));
            }
            let low_last = c.back().expect("half a chunk").0;
            self.chunks.insert(ci + 1, hi);
            self.lasts.insert(ci, low_last);
        }
        self.len += 1;
        Ok(())
    }

    /// Remove `id`, returning its value.
    pub fn remove(&mut self, id: &StreamId) -> Option<V> {
        // The oldest entry goes most (acknowledged first): taken without a search (a
        // VecDeque removes its front in O(1)).
        if self
            .chunks
            .front()
            .and_then(|c| c.front())
            .is_some_and(|e| e.0 == *id)
        {
            return Some(self.remove_at(0, 0));
        }
        let (ci, pos) = self.find_for_change(id)?;
        Some(self.remove_at(ci, pos))
    }

    /// Change the value of `id` in place with `update`, and remove `id` when `update`
    /// returns false (one search either way); false when `id` is absent.
    pub fn update_or_remove(&mut self, id: &StreamId, update: impl FnOnce(&mut V) -> bool) -> bool {
        let Some((ci, pos)) = self.find_for_change(id) else {
            return false;
        };
        if !update(&mut self.chunks[ci][pos].1) {
            self.remove_at(ci, pos);
        }
        true
    }

    /// Remove the entry at `pos` of chunk `ci`, returning its value.
    fn remove_at(&mut self, ci: usize, pos: usize) -> V {
        let c = &mut self.chunks[ci];
        let (_, v) = c.remove(pos).expect("position found");
        self.len -= 1;
        let left = c.len();
        if left == 0 {
            self.chunks.remove(ci);
            self.lasts.remove(ci);
            return v;
        }
        if pos == left {
            self.lasts[ci] = c[left - 1].0;
        }
        if left < CAP / 4 {
            self.merge(ci);
        }
        v
    }

    /// Merge the sparse chunk `ci` into a neighbour it fits in.
    fn merge(&mut self, ci: usize) {
        let len = self.chunks[ci].len();
        let into = if ci > 0 && self.chunks[ci - 1].len() + len <= CAP {
            ci - 1
        } else if ci + 1 < self.chunks.len() && self.chunks[ci + 1].len() + len <= CAP {
            ci
        } else {
            return;
        };
        let c = self.chunks.remove(into + 1).expect("chunk exists");
        self.chunks[into].extend(c);
        self.lasts.remove(into);
    }

    /// The smallest and largest entries.
    pub fn first(&self) -> Option<(StreamId, V)> {
        self.chunks.front().map(|c| c[0])
    }

    /// The largest entry.
    pub fn last(&self) -> Option<(StreamId, V)> {
        self.chunks.back().and_then(|c| c.back().copied())
    }

    /// Entries in ID order.
    pub fn iter(&self) -> Iter<'_, V> {
        Iter {
            map: self,
            ci: 0,
            pos: 0,
            end: Bound::Unbounded,
        }
    }

    /// Entries with IDs inside `r`, in ID order (empty when the range is).
    pub fn range(&self, r: impl RangeBounds<StreamId>) -> Iter<'_, V> {
        let (ci, pos) = match r.start_bound() {
            Bound::Unbounded => (0, 0),
            Bound::Included(s) => self.seek(s),
            Bound::Excluded(s) => match s.incr() {
                Some(s) => self.seek(&s),
                None => (self.chunks.len(), 0),
            },
        };
        Iter {
            map: self,
            ci,
            pos,
            end: r.end_bound().cloned(),
        }
    }

    /// IDs in order.
    pub fn keys(&self) -> impl Iterator<Item = &StreamId> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// Check the invariants (see the module documentation).
    pub fn validate(&self) -> Result<(), String> {
        let mut n = 0;
        let mut prev: Option<StreamId> = None;
        for c in &self.chunks {
            if c.is_empty() || c.len() > CAP {
                return Err(format!("PEL chunk of {} entries", c.len()));
            }
            for &(id, _) in c {
                if prev.is_some_and(|p| p >= id) {
                    return Err(format!("PEL IDs out of order at {id}"));
                }
                prev = Some(id);
            }
            n += c.len();
        }
        let lasts_ok = self.lasts.len() == self.chunks.len()
            && self
                .lasts
                .iter()
                .zip(&self.chunks)
                .all(|(l, c)| c.back().map(|e| e.0) == Some(*l));
        if !lasts_ok {
            return Err("PEL chunk index out of sync".into());
        }
        if n != self.len {
            return Err(format!("PEL counts {} entries, holds {n}", self.len));
        }
        Ok(())
    }
}

impl<'a> IntoIterator for &'a IdSet {
    type Item = &'a StreamId;
    type IntoIter = std::iter::Map<Iter<'a, ()>, fn((&'a StreamId, &'a ())) -> &'a StreamId>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, _)| k)
    }
}

/// Iterator over an [`IdMap`]'s entries in ID order.
pub struct Iter<'a, V> {
    map: &'a IdMap<V>,
    ci: usize,
    pos: usize,
    end: Bound<StreamId>,
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a StreamId, &'a V);
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let c = self.map.chunks.get(self.ci)?;
            if self.pos < c.len() {
                let e = &c[self.pos];
                let inside = match self.end {
                    Bound::Unbounded => true,
                    Bound::Included(x) => e.0 <= x,
                    Bound::Excluded(x) => e.0 < x,
                };
                if !inside {
                    self.ci = self.map.chunks.len();
                    return None;
                }
                self.pos += 1;
                return Some((&e.0, &e.1));
            }
            self.ci += 1;
            self.pos = 0;
        }
    }
}

/// An ordered set of stream IDs (a consumer's PEL), with `BTreeSet`'s method names.
#[derive(Clone, Debug, Default)]
pub struct IdSet(IdMap<()>);

impl IdSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of IDs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Is the set empty?
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Add `id`; false when present already.
    pub fn insert(&mut self, id: StreamId) -> bool {
        self.0.try_insert(id, ()).is_ok()
    }

    /// Remove `id`; false when absent.
    pub fn remove(&mut self, id: &StreamId) -> bool {
        self.0.remove(id).is_some()
    }

    /// Is `id` present?
    pub fn contains(&self, id: &StreamId) -> bool {
        self.0.contains_key(id)
    }

    /// IDs in order.
    pub fn iter(&self) -> impl Iterator<Item = &StreamId> + '_ {
        self.0.keys()
    }

    /// IDs inside `r`, in order.
    pub fn range(&self, r: impl RangeBounds<StreamId>) -> impl Iterator<Item = &StreamId> + '_ {
        self.0.range(r).map(|(k, _)| k)
    }

    /// Check the invariants.
    pub fn validate(&self) -> Result<(), String> {
        self.0.validate()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::test_rng::Rng;

    fn id(n: u64) -> StreamId {
        StreamId::new(n / 3, n % 3)
    }

    /// Random inserts, in-place updates, removes and range scans agree with a
    /// `BTreeMap`, for key spaces small and large against the chunk size, in random and
    /// in PEL-like (append at the end, remove from the start) order.
    #[test]
    fn agrees_with_a_btreemap() {
        for (seed, space, fifo) in [
            (1u64, 50u64, false),
            (2, 400, false),
            (3, 5000, false),
            (4, 5000, true),
            (5, 100_000, true),
        ] {
            let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut next = move |n: u64| rng.below(n);
            let mut m: IdMap<u64> = IdMap::new();
            let mut model: BTreeMap<StreamId, u64> = BTreeMap::new();
            let (mut head, mut tail) = (0u64, 0u64);
            for step in 0..20_000u64 {
                let op = next(10);
                let k = if fifo {
                    if op < 5 {
                        tail += 1 + next(3);
                        tail
                    } else if op < 9 {
                        head += next(3);
                        head.min(tail)
                    } else {
                        next(tail + 1)
                    }
                } else {
                    next(space)
                };
                let k = id(k);
                if op < 5 && step % 2 == 1 {
                    m.insert_or_update(k, step, |v| *v += 1);
                    model.entry(k).and_modify(|v| *v += 1).or_insert(step);
                } else if op < 5 {
                    let want = model.get(&k).copied();
                    let got = m.try_insert(k, step);
                    assert_eq!(got.err(), want, "insert {k}");
                    model.entry(k).or_insert(step);
                } else if op < 9 && step % 2 == 1 {
                    // Kept when the changed value is even.
                    let got = m.update_or_remove(&k, |v| {
                        *v += 7;
                        *v % 2 == 0
                    });
                    let want = match model.get_mut(&k) {
                        Some(v) => {
                            *v += 7;
                            if *v % 2 != 0 {
                                model.remove(&k);
                            }
                            true
                        }
                        None => false,
                    };
                    assert_eq!(got, want, "update or remove {k}");
                } else if op < 9 {
                    assert_eq!(m.remove(&k), model.remove(&k), "remove {k}");
                } else {
                    let e = id(k.ms * 3 + k.seq + next(200));
                    let got: Vec<_> = m.range(k..=e).map(|(a, b)| (*a, *b)).collect();
                    let want: Vec<_> = model.range(k..=e).map(|(a, b)| (*a, *b)).collect();
                    assert_eq!(got, want, "range {k}..={e}");
                    let got: Vec<_> = m.range(k..).take(5).map(|(a, b)| (*a, *b)).collect();
                    let want: Vec<_> = model.range(k..).take(5).map(|(a, b)| (*a, *b)).collect();
                    assert_eq!(got, want, "range {k}..");
                    assert_eq!(m.get(&k), model.get(&k).copied());
                }
                if step % 997 == 0 {
                    m.validate().unwrap();
                    assert!(m.iter().eq(model.iter()));
                }
                assert_eq!(m.len(), model.len());
                assert_eq!(m.first(), model.first_key_value().map(|(a, b)| (*a, *b)));
                assert_eq!(m.last(), model.last_key_value().map(|(a, b)| (*a, *b)));
            }
            m.validate().unwrap();
            // Sparse chunks merge: a chunk under a quarter full has no neighbour it fits
            // in, so two neighbours hold more than CAP / 4 together.
            let min_chunks = m.len().div_ceil(CAP);
            assert!(
                m.chunks.len() <= 8 * min_chunks + 1,
                "{} chunks",
                m.chunks.len()
            );
        }
    }

    #[test]
    fn set_and_empty_ranges() {
        let mut s = IdSet::new();
        for n in [5u64, 1, 9, 3] {
            assert!(s.insert(id(n)));
        }
        assert!(!s.insert(id(3)));
        let all: Vec<StreamId> = s.iter().copied().collect();
        assert_eq!(all, vec![id(1), id(3), id(5), id(9)]);
        assert_eq!(s.range(id(4)..=id(2)).count(), 0);
        assert_eq!(s.range(id(9)..).copied().collect::<Vec<_>>(), vec![id(9)]);
        assert_eq!(s.range(id(10)..).count(), 0);
        assert!(s.remove(&id(1)) && !s.remove(&id(1)));
        assert!(s.contains(&id(5)) && !s.contains(&id(1)));
        assert_eq!(s.len(), 3);
        let m: IdMap<u8> = IdMap::new();
        assert_eq!(m.range(StreamId::MIN..).count(), 0);
        assert_eq!(m.first(), None);
    }
}
