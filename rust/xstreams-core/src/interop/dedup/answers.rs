//! [`Answers`]: each row's dedup answer (its entry ID and duplicate flag), by input row.

use hashbrown::HashMap;

use crate::StreamId;

/// Each row's answer by input row, written as the IDMP state visits the rows in the
/// grouped order: scattered writes, then sequential reads for the output (which follows
/// the input). A row's answer is one 8-byte word, so that each scattered write touches
/// one cache line (docs/spark-speed.md).
#[derive(Debug)]
pub struct Answers {
    /// With IDs: each row's `ms << 21 | seq << 1 | duplicate`, or [`SPILLED`] for an ID
    /// outside [`MS_LIMIT`]/[`SEQ_LIMIT`] (the years after 2248, a 20-bit sequence),
    /// whose answer is in `spilled`. Empty without IDs.
    packed: Vec<u64>,
    spilled: HashMap<usize, (StreamId, bool)>,
    /// Without IDs: each row's flag (a byte a row: the vector stays in the caches).
    dups: Vec<bool>,
    ids: bool,
}

/// IDs packed in an [`Answers`] word have `ms` below this (43 bits, all ones excluded:
/// that word is [`SPILLED`])...
const MS_LIMIT: u64 = (1 << 43) - 1;
/// ... and `seq` below this (20 bits).
const SEQ_LIMIT: u64 = 1 << 20;
/// The word of a row whose answer is in [`Answers::spilled`].
const SPILLED: u64 = u64::MAX;

impl Answers {
    /// Room for `n` rows' answers, their IDs kept if `with_ids`. Both vectors are of
    /// zeros, which the allocator hands out without writing them.
    pub fn new(n: usize, with_ids: bool) -> Self {
        Answers {
            packed: vec![0; if with_ids { n } else { 0 }],
            spilled: HashMap::new(),
            dups: vec![false; if with_ids { 0 } else { n }],
            ids: with_ids,
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.packed.len().max(self.dups.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the IDs are kept.
    pub fn with_ids(&self) -> bool {
        self.ids
    }

    /// Record row `row`'s answer.
    pub fn set(&mut self, row: usize, id: StreamId, duplicate: bool) {
        if self.packed.is_empty() {
            self.dups[row] = duplicate;
        } else if id.ms < MS_LIMIT && id.seq < SEQ_LIMIT {
            self.packed[row] = id.ms << 21 | id.seq << 1 | duplicate as u64;
        } else {
            self.packed[row] = SPILLED;
            self.spilled.insert(row, (id, duplicate));
        }
    }

    /// Row `row`'s ID (only when the IDs are kept).
    pub fn id(&self, row: usize) -> StreamId {
        match self.packed[row] {
            SPILLED => self.spilled[&row].0,
            w => StreamId::new(w >> 21, (w >> 1) & (SEQ_LIMIT - 1)),
        }
    }

    /// Row `row`'s flag.
    pub fn duplicate(&self, row: usize) -> bool {
        match self.packed.get(row) {
            None => self.dups[row],
            Some(&SPILLED) => self.spilled[&row].1,
            Some(&w) => w & 1 == 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_and_spilled_ids_read_back() {
        let mut a = Answers::new(4, true);
        let far = StreamId::new(MS_LIMIT, 1);
        let seq = StreamId::new(5, SEQ_LIMIT);
        a.set(0, StreamId::new(1_700_000_000_000, 7), true);
        a.set(1, far, false);
        a.set(2, seq, true);
        a.set(3, StreamId::MAX, false);
        assert_eq!(a.id(0), StreamId::new(1_700_000_000_000, 7));
        assert_eq!((a.id(1), a.id(2), a.id(3)), (far, seq, StreamId::MAX));
        assert_eq!(
            (0..4).map(|r| a.duplicate(r)).collect::<Vec<_>>(),
            [true, false, true, false]
        );
        let mut f = Answers::new(2, false);
        f.set(1, StreamId::MAX, true);
        assert!(!f.duplicate(0) && f.duplicate(1) && !f.with_ids());
    }
}
