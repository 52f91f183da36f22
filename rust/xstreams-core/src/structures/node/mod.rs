//! A stream node: a packed block of consecutive entries, keyed in the radix tree by the ID
//! of the first entry ever added to it (its *master ID*).
//!
//! Like Redis, a node keeps the field names of its first entry (the *master fields*); an
//! entry with exactly those fields stores only its values. Like Redis, a deleted entry
//! stays in place as a tombstone (flag `DELETED`), because the position of tombstones
//! decides where some trims stop once XSETID has moved a stream's last ID back; unlike
//! Redis, a tombstone drops its fields and values (5 bytes or so remain). The node also
//! keeps the listpack byte size Redis would have ([`crate::structures::lpsize`]), so nodes fill up and
//! split at the same entries as in redis-server.
//!
//! Buffer layout (all integers LEB128 varints unless noted):
//! ```text
//! [nfields][len field]*                         master fields
//! entry*:  [flags u8][ms delta][seq][payload len][payload][backlen (reverse varint)]
//!   flags: 1 = deleted (tombstone, empty payload), 2 = same fields as the master
//!   payload, same fields:  [len value]*          (nfields master values)
//!   payload, own fields:   [n][len field len value]*
//! ```
//! `seq` is relative to the master's sequence when the entry shares its millisecond and
//! absolute otherwise; `backlen` is the entry's byte length without itself, readable from
//! its last byte, so the node can be walked backwards.

mod entry;
mod parts;
#[cfg(test)]
mod tests;
mod varint;

pub use entry::{EntryView, PairIter};
pub use parts::NodeParts;
use varint::{backlen_size, get_backlen, get_varint, put_backlen, put_varint, varint_len};

use crate::structures::id::StreamId;
use crate::structures::lpsize;

/// The limits at which a stream closes its last node for appends (the stream's
/// `stream-node-max-bytes`, as listpack bytes, and `stream-node-max-entries`; 0 entries
/// means no entry limit).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_bytes: u64,
    pub max_entries: u64,
}

const FLAG_DELETED: u8 = 1;
const FLAG_SAMEFIELDS: u8 = 2;
/// A packed block of stream entries. Deleting a node's last live entry with XDEL removes
/// the node, but a partial trim may leave a node of tombstones only (MINID below a
/// node's highest, already deleted, ID), as redis-server does.
#[derive(Clone, Debug)]
pub struct StreamNode {
    master: StreamId,
    last: StreamId,
    live: u32,
    deleted: u32,
    nfields_master: u32,
    master_len: u32,
    /// Listpack bytes of the master entry's fixed part and all entries ever appended.
    lp_body: u64,
    buf: Vec<u8>,
}
impl StreamNode {
    /// A node holding one entry; `pairs` alternates fields and values.
    pub fn new(id: StreamId, pairs: &[&[u8]]) -> StreamNode {
        let mut node = StreamNode::unwritten(id, pairs);
        // Room for the master fields and the first entry (whose values are stored once
        // more) up front; at least 64 bytes, so small entries double from there.
        let first: usize = pairs.iter().map(|p| p.len() + 2).sum::<usize>() + 40;
        node.buf.reserve_exact(first.max(64));
        node.push_first(id, pairs);
        node
    }

    /// [`StreamNode::new`] for a node that fills up to `limits` (a stream of large
    /// entries that has just closed its last node full): the buffer is allocated at
    /// once at the length the node is expected to have when it closes, were the coming
    /// entries the size of this one (as [`StreamNode::append_filling`] grows to), but
    /// at most the listpack byte limit. A node of 512-byte entries is then allocated
    /// once, never reallocated while it fills, and closes without a copy.
    pub fn new_filling(id: StreamId, pairs: &[&[u8]], limits: Limits) -> StreamNode {
        let mut node = StreamNode::unwritten(id, pairs);
        let layout = node.layout(id, pairs, true);
        let entry_lp = lpsize::entry_bytes(id, id, pairs, true);
        let needed = node.master_len as usize + layout.3;
        let expected = node.expected_len(pairs, needed, layout.3, entry_lp, 1, limits);
        let cap = limits.max_bytes.max(needed as u64);
        node.buf
            .reserve_exact(expected.min(cap).max(needed as u64) as usize);
        node.push_first(id, pairs);
        node
    }

    /// A node for the fields of `pairs` with master ID `id`, its buffer not yet written
    /// (nor allocated); [`StreamNode::push_first`] writes it.
    fn unwritten(id: StreamId, pairs: &[&[u8]]) -> StreamNode {
        let fields = pairs.iter().step_by(2);
        let master_len = varint_len(fields.len() as u64)
            + fields
                .clone()
                .map(|f| varint_len(f.len() as u64) + f.len())
                .sum::<usize>();
        StreamNode {
            master: id,
            last: id,
            live: 0,
            deleted: 0,
            nfields_master: fields.len() as u32,
            master_len: master_len as u32,
            lp_body: lpsize::master_entry_bytes_of(fields),
            buf: Vec::new(),
        }
    }

    /// Write the master fields and the first entry into the buffer of an
    /// [`StreamNode::unwritten`] node.
    fn push_first(&mut self, id: StreamId, pairs: &[&[u8]]) {
        put_varint(&mut self.buf, (pairs.len() / 2) as u64);
        for f in pairs.iter().step_by(2) {
            put_varint(&mut self.buf, f.len() as u64);
            self.buf.extend_from_slice(f);
        }
        debug_assert_eq!(self.buf.len(), self.master_len as usize);
        self.push_entry(id, pairs, true, lpsize::entry_bytes(id, id, pairs, true));
    }

    /// A node with master ID `master` and master fields `fields`, holding no entry yet
    /// (for loading nodes written by redis-server, whose first entry may be deleted);
    /// entries are then added with [`StreamNode::append`].
    pub fn with_master(master: StreamId, fields: &[&[u8]]) -> StreamNode {
        let mut buf = Vec::with_capacity(64);
        put_varint(&mut buf, fields.len() as u64);
        for f in fields {
            put_varint(&mut buf, f.len() as u64);
            buf.extend_from_slice(f);
        }
        StreamNode {
            master,
            last: master,
            live: 0,
            deleted: 0,
            nfields_master: fields.len() as u32,
            master_len: buf.len() as u32,
            lp_body: lpsize::master_entry_bytes(fields),
            buf,
        }
    }

    /// The master entry's field names.
    pub fn master_fields(&self) -> Vec<&[u8]> {
        let mut p = 0;
        let n = get_varint(&self.buf, &mut p) as usize;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let l = get_varint(&self.buf, &mut p) as usize;
            out.push(&self.buf[p..p + l]);
            p += l;
        }
        out
    }

    /// ID of the first entry ever added (the radix-tree key), even if since deleted.
    pub fn master_id(&self) -> StreamId {
        self.master
    }

    /// ID of the last entry ever added, even if since deleted.
    pub fn last_id_any(&self) -> StreamId {
        self.last
    }

    /// Live entries.
    pub fn live(&self) -> u64 {
        u64::from(self.live)
    }

    /// Deleted entries still accounted to the node (Redis keeps them as tombstones).
    pub fn deleted(&self) -> u64 {
        u64::from(self.deleted)
    }

    /// The byte size of this node as a Redis listpack.
    pub fn lp_bytes(&self) -> u64 {
        lpsize::node_bytes(self.live(), self.deleted(), self.lp_body)
    }

    /// Heap bytes held by this node.
    pub fn heap_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// Release spare capacity (called when a node is closed for appends). A fresh exact
    /// allocation and a copy, not `shrink_to_fit`: allocators such as mimalloc keep a
    /// block in place when it shrinks by less than half, which would leave every closed
    /// node with the up-to-2x capacity of its last doubling.
    pub fn shrink(&mut self) {
        if self.buf.capacity() > self.buf.len() {
            let mut exact = Vec::with_capacity(self.buf.len());
            exact.extend_from_slice(&self.buf);
            self.buf = exact;
        }
    }

    fn master_fields_equal(&self, pairs: &[&[u8]]) -> bool {
        let nfields = pairs.len() / 2;
        if nfields != self.nfields_master as usize {
            return false;
        }
        let mut p = 0;
        let _ = get_varint(&self.buf, &mut p);
        for f in pairs.iter().step_by(2) {
            let l = get_varint(&self.buf, &mut p) as usize;
            if l != f.len() || &self.buf[p..p + l] != *f {
                return false;
            }
            p += l;
        }
        true
    }

    /// Append an entry with an ID greater than every ID in the node.
    pub fn append(&mut self, id: StreamId, pairs: &[&[u8]]) {
        let same = self.master_fields_equal(pairs);
        let entry_lp = lpsize::entry_bytes(self.master, id, pairs, same);
        self.push_entry(id, pairs, same, entry_lp);
    }

    /// [`StreamNode::append`] for a node that fills up to `limits`: when the buffer must
    /// grow, it grows to the length the node is expected to have when it closes (were
    /// the coming entries the size of this one) instead of doubling. A node of large
    /// entries (seven 512-byte values fill Redis's default 4 kB) is then reallocated once
    /// or twice instead of at every doubling, and is its final size when it closes, so
    /// closing it does not copy it again.
    pub fn append_filling(&mut self, id: StreamId, pairs: &[&[u8]], limits: Limits) {
        let same = self.master_fields_equal(pairs);
        let entry_lp = lpsize::entry_bytes(self.master, id, pairs, same);
        let layout = self.layout(id, pairs, same);
        if self.buf.len() + layout.3 > self.buf.capacity() {
            self.grow_for(pairs, layout.3, entry_lp, limits);
        }
        self.push_laid_out(id, pairs, same, entry_lp, layout);
    }

    /// Reserve room for an entry of `entry_len` bytes (`entry_lp` as listpack bytes): the
    /// node's length when, after this entry, it takes as many more of the same size as
    /// fit before the stream closes it (as `Stream::append` decides: the listpack bytes
    /// plus the new entry's field and value bytes reaching the byte limit, or the entry
    /// limit), but at most 4x the contents (a stream's last node may stay open for long;
    /// a node whose entries keep growing then still grows geometrically).
    #[cold]
    fn grow_for(&mut self, pairs: &[&[u8]], entry_len: usize, entry_lp: u64, limits: Limits) {
        let needed = self.buf.len() + entry_len;
        let entries_after = self.live() + self.deleted() + 1;
        let expected = self.expected_len(pairs, needed, entry_len, entry_lp, entries_after, limits);
        let target = (expected.min(4 * needed as u64) as usize).max(needed);
        self.buf.reserve_exact(target - self.buf.len());
    }

    /// The node's length when it closes, were the coming entries the size of the one
    /// being added (`pairs`, `entry_len` bytes here, `entry_lp` as listpack bytes): with
    /// that entry the node is `needed` bytes long and holds `entries_after` entries, and
    /// takes as many more as `Stream::append` lets in (the listpack bytes plus the new
    /// entry's field and value bytes reaching the byte limit, or the entry limit).
    fn expected_len(
        &self,
        pairs: &[&[u8]],
        needed: usize,
        entry_len: usize,
        entry_lp: u64,
        entries_after: u64,
        limits: Limits,
    ) -> u64 {
        let lp_after = self.lp_bytes() + entry_lp;
        let totelelen: u64 = pairs.iter().map(|p| p.len() as u64).sum();
        let mut more = match limits.max_bytes.checked_sub(lp_after + totelelen) {
            Some(room) if room > 0 => (room - 1) / entry_lp.max(1) + 1,
            _ => 0,
        };
        if limits.max_entries > 0 {
            more = more.min(limits.max_entries.saturating_sub(entries_after));
        }
        needed as u64 + more * entry_len as u64
    }

    /// How an entry is laid out in the buffer: (ms delta, seq field, payload length,
    /// whole length with its backlen).
    #[inline]
    fn layout(&self, id: StreamId, pairs: &[&[u8]], same: bool) -> (u64, u64, usize, usize) {
        let ms_delta = id.ms.wrapping_sub(self.master.ms);
        let seq = if ms_delta == 0 {
            id.seq.wrapping_sub(self.master.seq)
        } else {
            id.seq
        };
        let mut payload_len = 0usize;
        if !same {
            payload_len += varint_len((pairs.len() / 2) as u64);
            for p in pairs {
                payload_len += varint_len(p.len() as u64) + p.len();
            }
        } else {
            for v in pairs.iter().skip(1).step_by(2) {
                payload_len += varint_len(v.len() as u64) + v.len();
            }
        }
        let body = 1
            + varint_len(ms_delta)
            + varint_len(seq)
            + varint_len(payload_len as u64)
            + payload_len;
        (ms_delta, seq, payload_len, body + backlen_size(body as u64))
    }

    fn push_entry(&mut self, id: StreamId, pairs: &[&[u8]], same: bool, entry_lp: u64) {
        let layout = self.layout(id, pairs, same);
        self.push_laid_out(id, pairs, same, entry_lp, layout);
    }

    #[inline]
    fn push_laid_out(
        &mut self,
        id: StreamId,
        pairs: &[&[u8]],
        same: bool,
        entry_lp: u64,
        (ms_delta, seq, payload_len, _): (u64, u64, usize, usize),
    ) {
        self.lp_body += entry_lp;
        let start = self.buf.len();
        self.buf.push(if same { FLAG_SAMEFIELDS } else { 0 });
        put_varint(&mut self.buf, ms_delta);
        put_varint(&mut self.buf, seq);
        put_varint(&mut self.buf, payload_len as u64);
        if !same {
            put_varint(&mut self.buf, (pairs.len() / 2) as u64);
            for p in pairs {
                put_varint(&mut self.buf, p.len() as u64);
                self.buf.extend_from_slice(p);
            }
        } else {
            for v in pairs.iter().skip(1).step_by(2) {
                put_varint(&mut self.buf, v.len() as u64);
                self.buf.extend_from_slice(v);
            }
        }
        let entry_len = self.buf.len() - start;
        put_backlen(&mut self.buf, entry_len as u64);
        self.live += 1;
        self.last = id;
    }

    fn view_at(&self, offset: usize) -> EntryView<'_> {
        let buf = &self.buf;
        let mut p = offset;
        let flags = buf[p];
        p += 1;
        let ms_delta = get_varint(buf, &mut p);
        let seq_raw = get_varint(buf, &mut p);
        let payload_len = get_varint(buf, &mut p) as usize;
        let payload = &buf[p..p + payload_len];
        let body_len = p + payload_len - offset;
        let id = StreamId {
            ms: self.master.ms.wrapping_add(ms_delta),
            seq: if ms_delta == 0 {
                self.master.seq.wrapping_add(seq_raw)
            } else {
                seq_raw
            },
        };
        EntryView {
            id,
            offset,
            len: body_len + backlen_size(body_len as u64),
            node: self,
            same_fields: flags & FLAG_SAMEFIELDS != 0,
            deleted: flags & FLAG_DELETED != 0,
            payload,
        }
    }

    /// Does any entry (tombstones included) come after an entry with an equal or greater
    /// ID, or lie below the master ID? Only after XSETID moved the last ID back.
    pub fn appended_below(&self) -> bool {
        let master = self.master_id();
        let mut prev: Option<StreamId> = None;
        self.raw_iter().any(|e| {
            let below = e.id < master || prev.is_some_and(|p| e.id <= p);
            prev = Some(e.id);
            below
        })
    }

    /// Every entry, tombstones included, in append order.
    pub fn raw_iter(&self) -> NodeIter<'_> {
        NodeIter {
            node: self,
            front: self.master_len as usize,
            back: self.buf.len(),
            live_only: false,
        }
    }

    /// Live entries in append order (which is ascending ID order: a new entry is always
    /// greater than every live entry of the stream).
    pub fn iter(&self) -> NodeIter<'_> {
        NodeIter {
            node: self,
            front: self.master_len as usize,
            back: self.buf.len(),
            live_only: true,
        }
    }

    /// The live entry with this ID, scanning as redis-server's iterator does (stop at the
    /// first live entry beyond it).
    pub fn find(&self, id: StreamId) -> Option<EntryView<'_>> {
        for e in self.iter() {
            if e.id == id {
                return Some(e);
            }
            if e.id > id {
                return None;
            }
        }
        None
    }

    /// First live entry.
    pub fn first_entry(&self) -> Option<EntryView<'_>> {
        self.iter().next()
    }

    /// Last live entry.
    pub fn last_entry(&self) -> Option<EntryView<'_>> {
        self.iter().next_back()
    }

    /// The tombstone bytes replacing a live entry at `offset` (flags, ID, empty payload).
    fn tombstone_bytes(&self, offset: usize) -> Vec<u8> {
        let buf = &self.buf;
        let mut p = offset;
        let flags = buf[p] | FLAG_DELETED;
        p += 1;
        let ms_delta = get_varint(buf, &mut p);
        let seq_raw = get_varint(buf, &mut p);
        let mut out = Vec::with_capacity(24);
        out.push(flags);
        put_varint(&mut out, ms_delta);
        put_varint(&mut out, seq_raw);
        put_varint(&mut out, 0);
        let body = out.len() as u64;
        put_backlen(&mut out, body);
        out
    }

    /// Turn the live entry at `offset` (from an [`EntryView`]) into a tombstone. Returns
    /// the number of live entries left.
    pub fn delete_at(&mut self, offset: usize, len: usize) -> u64 {
        let t = self.tombstone_bytes(offset);
        self.buf.splice(offset..offset + len, t);
        self.live -= 1;
        self.deleted += 1;
        self.live()
    }

    /// Delete the live entry with this ID; returns whether it was found.
    pub fn delete(&mut self, id: StreamId) -> bool {
        match self.find(id).map(|e| (e.offset, e.len)) {
            Some((off, len)) => {
                self.delete_at(off, len);
                true
            }
            None => false,
        }
    }

    /// Walk the entries in append order, tombstones included, as redis-server's trim
    /// does: stop at the first entry for which `stop(id, deleted so far)` is true, and turn
    /// every live entry for which `pred(id, false)` is true into a tombstone; `pred(id,
    /// true)` sees each tombstone passed (its answer is ignored). Returns the IDs deleted.
    pub fn delete_while<S, P>(&mut self, mut stop: S, mut pred: P) -> Vec<StreamId>
    where
        S: FnMut(StreamId, u64) -> bool,
        P: FnMut(StreamId, bool) -> bool,
    {
        let mut removed = Vec::new();
        let mut plan: Vec<(usize, usize, bool)> = Vec::new();
        let mut off = self.master_len as usize;
        let end = self.buf.len();
        let mut stopped_at = end;
        while off < end {
            let (id, len, deleted) = {
                let v = self.view_at(off);
                (v.id, v.len, v.deleted)
            };
            if stop(id, removed.len() as u64) {
                stopped_at = off;
                break;
            }
            let kill = if deleted {
                pred(id, true);
                false
            } else {
                pred(id, false)
            };
            if kill {
                removed.push(id);
            }
            plan.push((off, len, kill));
            off += len;
        }
        if removed.is_empty() {
            return removed;
        }
        let mut nbuf = Vec::with_capacity(self.buf.len());
        nbuf.extend_from_slice(&self.buf[..self.master_len as usize]);
        for (o, l, kill) in plan {
            if kill {
                nbuf.extend_from_slice(&self.tombstone_bytes(o));
            } else {
                nbuf.extend_from_slice(&self.buf[o..o + l]);
            }
        }
        nbuf.extend_from_slice(&self.buf[stopped_at..]);
        self.buf = nbuf;
        self.live -= removed.len() as u32;
        self.deleted += removed.len() as u32;
        removed
    }
}

/// Double-ended iterator over the entries of a node (live ones only, or all).
pub struct NodeIter<'a> {
    node: &'a StreamNode,
    front: usize,
    back: usize,
    live_only: bool,
}

impl<'a> Iterator for NodeIter<'a> {
    type Item = EntryView<'a>;
    fn next(&mut self) -> Option<EntryView<'a>> {
        while self.front < self.back {
            let v = self.node.view_at(self.front);
            self.front += v.len;
            if !(self.live_only && v.deleted) {
                return Some(v);
            }
        }
        None
    }
}

impl<'a> DoubleEndedIterator for NodeIter<'a> {
    fn next_back(&mut self) -> Option<EntryView<'a>> {
        while self.front < self.back {
            let (body, used) = get_backlen(&self.node.buf, self.back);
            let start = self.back - used - body as usize;
            let v = self.node.view_at(start);
            self.back = start;
            if !(self.live_only && v.deleted) {
                return Some(v);
            }
        }
        None
    }
}
