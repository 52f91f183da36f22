//! Entries in flat, Arrow-shaped buffers (IDs, and field names/values as offset + data
//! arrays): what the typed reads ([`crate::Store::read`], [`crate::Store::range_entries`],
//! a blocked [`crate::Store::start_read`]) and the replay reader fill, and the Python
//! binding turns into Arrow arrays without a Python object per entry.

use crate::structures::group::ConsumerGroup;
use crate::structures::id::StreamId;
use crate::structures::node::EntryView;
use crate::structures::read::ReadSink;
use crate::structures::stream::Stream;

/// Entries in flat buffers shaped like Arrow arrays: entry `i` has ID `ids[i]`, belongs
/// to stream `keys[stream[i]]`, and its field/value pairs are `pair_offsets[i] ..
/// pair_offsets[i + 1]`; pair `j`'s name is `names[name_offsets[j] .. name_offsets[j +
/// 1]]`, its value likewise in `values`. `present[i]` is false for an entry an XREADGROUP
/// history read lists but that no longer exists (it has no pairs).
#[derive(Clone, Debug)]
pub struct Entries {
    pub keys: Vec<Vec<u8>>,
    pub stream: Vec<u32>,
    pub ids: Vec<StreamId>,
    pub present: Vec<bool>,
    pub pair_offsets: Vec<i64>,
    pub name_offsets: Vec<i64>,
    pub names: Vec<u8>,
    pub value_offsets: Vec<i64>,
    pub values: Vec<u8>,
    /// Per entry, for an XREADGROUP with CLAIM: (idle ms, delivery count) as its reply
    /// reports them; `None` otherwise.
    pub delivery: Vec<Option<(u64, u64)>>,
    /// The stream [`ReadSink`] calls add to.
    current: u32,
}

impl Default for Entries {
    fn default() -> Self {
        Entries::new()
    }
}

impl Entries {
    /// No entries.
    pub fn new() -> Self {
        Entries {
            keys: Vec::new(),
            stream: Vec::new(),
            ids: Vec::new(),
            present: Vec::new(),
            pair_offsets: vec![0],
            name_offsets: vec![0],
            names: Vec::new(),
            value_offsets: vec![0],
            values: Vec::new(),
            delivery: Vec::new(),
            current: 0,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// No entries?
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Register a stream key; returns its index.
    pub fn add_key(&mut self, key: &[u8]) -> u32 {
        if let Some(i) = self.keys.iter().position(|k| k == key) {
            return i as u32;
        }
        self.keys.push(key.to_vec());
        (self.keys.len() - 1) as u32
    }

    /// Append an entry of stream `stream` (an index from [`Entries::add_key`]).
    pub fn push<'x>(
        &mut self,
        stream: u32,
        id: StreamId,
        pairs: impl Iterator<Item = (&'x [u8], &'x [u8])>,
    ) {
        for (f, v) in pairs {
            self.names.extend_from_slice(f);
            self.name_offsets.push(self.names.len() as i64);
            self.values.extend_from_slice(v);
            self.value_offsets.push(self.values.len() as i64);
        }
        self.stream.push(stream);
        self.ids.push(id);
        self.present.push(true);
        self.delivery.push(None);
        self.pair_offsets.push((self.name_offsets.len() - 1) as i64);
    }

    /// Append an entry that no longer exists (no pairs).
    pub fn push_missing(&mut self, stream: u32, id: StreamId) {
        self.stream.push(stream);
        self.ids.push(id);
        self.present.push(false);
        self.delivery.push(None);
        self.pair_offsets.push((self.name_offsets.len() - 1) as i64);
    }

    /// Append the entries of `s` with `start <= id <= end`, ascending; with a group, only
    /// those it has not acknowledged: the entries of its PEL that still exist, then the
    /// entries after its last-delivered ID.
    pub fn push_stream(
        &mut self,
        stream: u32,
        s: &Stream,
        start: StreamId,
        end: StreamId,
        group: Option<&ConsumerGroup>,
    ) {
        let Some(g) = group else {
            for e in s.range(start, end, false) {
                self.push(stream, e.id, e.pairs());
            }
            return;
        };
        if start > end {
            return;
        }
        let read_end = end.min(g.last_id);
        for (id, _) in g.pel_range(start, read_end) {
            if let Some(e) = s.get(id) {
                self.push(stream, e.id, e.pairs());
            }
        }
        if let Some(unread) = g.last_id.incr() {
            for e in s.range(start.max(unread), end, false) {
                self.push(stream, e.id, e.pairs());
            }
        }
    }
}

impl ReadSink for Entries {
    fn stream(&mut self, key: &[u8]) {
        self.current = self.add_key(key);
    }

    fn entry(&mut self, e: &EntryView<'_>, delivery: Option<(u64, u64)>) {
        self.push(self.current, e.id, e.pairs());
        *self.delivery.last_mut().expect("entry just pushed") = delivery;
    }

    fn missing(&mut self, id: StreamId) {
        self.push_missing(self.current, id);
    }

    fn unstream(&mut self) {
        let Some(last) = self.keys.len().checked_sub(1).map(|l| l as u32) else {
            return;
        };
        if self.current == last && self.stream.last() != Some(&last) {
            self.keys.pop();
        }
    }
}
