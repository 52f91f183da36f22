//! Views of one entry inside a node and of its field/value pairs.

use crate::structures::id::StreamId;

use super::varint::get_varint;
use super::StreamNode;

/// A view of one entry inside a node.
#[derive(Clone, Copy, Debug)]
pub struct EntryView<'a> {
    /// Entry ID.
    pub id: StreamId,
    /// Byte offset of the entry inside the node.
    pub offset: usize,
    /// Byte length of the entry (including its back-length).
    pub len: usize,
    pub(super) node: &'a StreamNode,
    pub(super) same_fields: bool,
    /// A tombstone (only seen by the raw walks used for trimming and validation).
    pub deleted: bool,
    pub(super) payload: &'a [u8],
}

impl<'a> EntryView<'a> {
    /// Does the entry have exactly the master's fields (stored as values only)?
    pub fn same_fields(&self) -> bool {
        self.same_fields
    }

    /// Number of field/value pairs.
    pub fn num_fields(&self) -> usize {
        if self.same_fields {
            self.node.nfields_master as usize
        } else {
            let mut p = 0;
            get_varint(self.payload, &mut p) as usize
        }
    }

    /// Iterate over `(field, value)` pairs.
    pub fn pairs(&self) -> PairIter<'a> {
        if self.same_fields {
            let mut mp = 0;
            let n = get_varint(&self.node.buf, &mut mp) as usize;
            PairIter {
                node_buf: &self.node.buf,
                master_pos: mp,
                payload: self.payload,
                pos: 0,
                left: n,
                same: true,
            }
        } else {
            let mut p = 0;
            let n = get_varint(self.payload, &mut p) as usize;
            PairIter {
                node_buf: &self.node.buf,
                master_pos: 0,
                payload: self.payload,
                pos: p,
                left: n,
                same: false,
            }
        }
    }
}

/// Iterator over the field/value pairs of an entry.
pub struct PairIter<'a> {
    pub(super) node_buf: &'a [u8],
    pub(super) master_pos: usize,
    pub(super) payload: &'a [u8],
    pub(super) pos: usize,
    pub(super) left: usize,
    pub(super) same: bool,
}

impl<'a> Iterator for PairIter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let field: &'a [u8] = if self.same {
            let l = get_varint(self.node_buf, &mut self.master_pos) as usize;
            let f = &self.node_buf[self.master_pos..self.master_pos + l];
            self.master_pos += l;
            f
        } else {
            let l = get_varint(self.payload, &mut self.pos) as usize;
            let f = &self.payload[self.pos..self.pos + l];
            self.pos += l;
            f
        };
        let l = get_varint(self.payload, &mut self.pos) as usize;
        let v = &self.payload[self.pos..self.pos + l];
        self.pos += l;
        Some((field, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}
