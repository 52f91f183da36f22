//! A stream node: a packed block of consecutive entries, keyed in the radix tree by the ID
//! of the first entry ever added to it (its *master ID*).
//!
//! Like Redis, a node keeps the field names of its first entry (the *master fields*); an
//! entry with exactly those fields stores only its values. Like Redis, a deleted entry
//! stays in place as a tombstone (flag `DELETED`), because the position of tombstones
//! decides where some trims stop once XSETID has moved a stream's last ID back; unlike
//! Redis, a tombstone drops its fields and values (5 bytes or so remain). The node also
//! keeps the listpack byte size Redis would have ([`crate::lpsize`]), so nodes fill up and
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

use crate::id::StreamId;
use crate::lpsize;

const FLAG_DELETED: u8 = 1;
const FLAG_SAMEFIELDS: u8 = 2;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut v: u64 = 0;
    let mut shift = 0;
    loop {
        let b = buf[*pos];
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Append `l` as a back-length: the last byte holds the low 7 bits and has bit 7 set when
/// more (higher) groups precede it.
fn put_backlen(out: &mut Vec<u8>, l: u64) {
    let mut groups = [0u8; 10];
    let mut n = 0;
    let mut v = l;
    loop {
        groups[n] = (v & 0x7f) as u8;
        n += 1;
        v >>= 7;
        if v == 0 {
            break;
        }
    }
    // groups[0] is the lowest; write highest first.
    for i in (0..n).rev() {
        let mut b = groups[i];
        if i != n - 1 {
            b |= 0x80;
        }
        out.push(b);
    }
}

fn backlen_size(l: u64) -> usize {
    varint_len(l)
}

/// Read a back-length ending just before `end`; returns (value, bytes used).
fn get_backlen(buf: &[u8], end: usize) -> (u64, usize) {
    let mut p = end - 1;
    let mut v = u64::from(buf[p] & 0x7f);
    let mut shift = 7;
    let mut used = 1;
    while buf[p] & 0x80 != 0 {
        p -= 1;
        v |= u64::from(buf[p] & 0x7f) << shift;
        shift += 7;
        used += 1;
    }
    (v, used)
}

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

/// A view of one entry inside a node.
#[derive(Clone, Copy, Debug)]
pub struct EntryView<'a> {
    /// Entry ID.
    pub id: StreamId,
    /// Byte offset of the entry inside the node.
    pub offset: usize,
    /// Byte length of the entry (including its back-length).
    pub len: usize,
    node: &'a StreamNode,
    same_fields: bool,
    /// A tombstone (only seen by the raw walks used for trimming and validation).
    pub deleted: bool,
    payload: &'a [u8],
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
    node_buf: &'a [u8],
    master_pos: usize,
    payload: &'a [u8],
    pos: usize,
    left: usize,
    same: bool,
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

impl StreamNode {
    /// A node holding one entry; `pairs` alternates fields and values.
    pub fn new(id: StreamId, pairs: &[&[u8]]) -> StreamNode {
        let nfields = pairs.len() / 2;
        let mut buf = Vec::with_capacity(64);
        put_varint(&mut buf, nfields as u64);
        let fields: Vec<&[u8]> = pairs.iter().step_by(2).copied().collect();
        for f in &fields {
            put_varint(&mut buf, f.len() as u64);
            buf.extend_from_slice(f);
        }
        let master_len = buf.len() as u32;
        let mut node = StreamNode {
            master: id,
            last: id,
            live: 0,
            deleted: 0,
            nfields_master: nfields as u32,
            master_len,
            lp_body: lpsize::master_entry_bytes(&fields),
            buf,
        };
        node.push_entry(id, pairs, true);
        node
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
        self.push_entry(id, pairs, same);
    }

    fn push_entry(&mut self, id: StreamId, pairs: &[&[u8]], same: bool) {
        self.lp_body += lpsize::entry_bytes(self.master, id, pairs, same);
        let start = self.buf.len();
        self.buf.push(if same { FLAG_SAMEFIELDS } else { 0 });
        let ms_delta = id.ms.wrapping_sub(self.master.ms);
        put_varint(&mut self.buf, ms_delta);
        let seq = if ms_delta == 0 {
            id.seq.wrapping_sub(self.master.seq)
        } else {
            id.seq
        };
        put_varint(&mut self.buf, seq);
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
    /// every live entry for which `pred` is true into a tombstone. Returns the IDs deleted.
    pub fn delete_while<S, P>(&mut self, mut stop: S, mut pred: P) -> Vec<StreamId>
    where
        S: FnMut(StreamId, u64) -> bool,
        P: FnMut(StreamId) -> bool,
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
            let kill = !deleted && pred(id);
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

    /// The node's raw state, for snapshots: see [`NodeParts`].
    pub fn to_parts(&self) -> NodeParts<'_> {
        NodeParts {
            master: self.master,
            last: self.last,
            live: self.live,
            deleted: self.deleted,
            nfields_master: self.nfields_master,
            master_len: self.master_len,
            lp_body: self.lp_body,
            buf: &self.buf,
        }
    }

    /// Rebuild a node from [`StreamNode::to_parts`], checking that the buffer decodes
    /// to exactly what the counters say (so a damaged snapshot cannot panic later).
    pub fn from_parts(p: NodeParts<'_>) -> Result<StreamNode, String> {
        // Check the master-fields block before anything indexes into it.
        let ml = p.master_len as usize;
        if ml > p.buf.len() {
            return Err("master block longer than the node".into());
        }
        let mut pos = 0;
        let n = checked_varint(&p.buf[..ml], &mut pos).ok_or("bad master field count")?;
        if n != u64::from(p.nfields_master) {
            return Err("master field count mismatch".into());
        }
        for _ in 0..n {
            let l = checked_varint(&p.buf[..ml], &mut pos).ok_or("bad master field")? as usize;
            pos = pos
                .checked_add(l)
                .filter(|&e| e <= ml)
                .ok_or("master field overruns")?;
        }
        if pos != ml {
            return Err("master block has trailing bytes".into());
        }
        check_entries(&p.buf[ml..], p.nfields_master as usize)?;
        let node = StreamNode {
            master: p.master,
            last: p.last,
            live: p.live,
            deleted: p.deleted,
            nfields_master: p.nfields_master,
            master_len: p.master_len,
            lp_body: p.lp_body,
            buf: p.buf.to_vec(),
        };
        node.validate()?;
        Ok(node)
    }

    /// Check internal consistency (used by tests and `validate()`): counters match the
    /// buffer, live entries ascend, tombstones carry no payload, the last appended entry is
    /// `last`, and both walk directions agree.
    pub fn validate(&self) -> Result<(), String> {
        let (mut live, mut deleted) = (0u32, 0u32);
        let mut prev: Option<StreamId> = None;
        let mut last_any = None;
        for e in self.raw_iter() {
            last_any = Some(e.id);
            if e.deleted {
                if !e.payload.is_empty() {
                    return Err(format!("tombstone {} keeps a payload", e.id));
                }
                deleted += 1;
                continue;
            }
            if let Some(p) = prev {
                if e.id <= p {
                    return Err(format!("live entries out of order: {p} then {}", e.id));
                }
            }
            let _ = e.pairs().count();
            prev = Some(e.id);
            live += 1;
        }
        if live != self.live || deleted != self.deleted {
            return Err(format!(
                "node counts {}/{} live/deleted entries, holds {live}/{deleted}",
                self.live, self.deleted
            ));
        }
        if last_any != Some(self.last) {
            return Err(format!(
                "last appended entry is {last_any:?}, node says {}",
                self.last
            ));
        }
        if self.iter().rev().count() as u32 != live
            || self.raw_iter().rev().count() as u32 != live + deleted
        {
            return Err("forward and backward walks differ".into());
        }
        Ok(())
    }
}

/// The raw state of a node (see the format description in `docs/format.md`).
#[derive(Clone, Copy, Debug)]
pub struct NodeParts<'a> {
    pub master: StreamId,
    pub last: StreamId,
    pub live: u32,
    pub deleted: u32,
    pub nfields_master: u32,
    pub master_len: u32,
    pub lp_body: u64,
    pub buf: &'a [u8],
}

fn checked_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    let mut shift = 0u32;
    loop {
        let b = *buf.get(*pos)?;
        *pos += 1;
        if shift >= 64 {
            return None;
        }
        v |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
    }
}

/// Walk an entries area without trusting it: every length must stay inside the buffer
/// and every back-length must match.
fn check_entries(buf: &[u8], nfields_master: usize) -> Result<(), String> {
    let mut off = 0usize;
    while off < buf.len() {
        let start = off;
        let flags = buf[off];
        off += 1;
        if flags & !(FLAG_SAMEFIELDS | FLAG_DELETED) != 0 {
            return Err(format!("bad entry flags at {start}"));
        }
        checked_varint(buf, &mut off).ok_or("bad ms delta")?;
        checked_varint(buf, &mut off).ok_or("bad seq")?;
        let plen = checked_varint(buf, &mut off).ok_or("bad payload length")? as usize;
        let pstart = off;
        let pend = off
            .checked_add(plen)
            .filter(|&e| e <= buf.len())
            .ok_or("payload overruns")?;
        let payload = &buf[pstart..pend];
        if flags & FLAG_DELETED != 0 && !payload.is_empty() {
            return Err(format!("tombstone with a payload at {start}"));
        }
        let mut q = 0usize;
        let pairs = if flags & FLAG_DELETED != 0 {
            0
        } else if flags & FLAG_SAMEFIELDS != 0 {
            for _ in 0..nfields_master {
                let l = checked_varint(payload, &mut q).ok_or("bad value length")? as usize;
                q = q
                    .checked_add(l)
                    .filter(|&e| e <= payload.len())
                    .ok_or("value overruns")?;
            }
            nfields_master
        } else {
            let n = checked_varint(payload, &mut q).ok_or("bad field count")? as usize;
            for _ in 0..n * 2 {
                let l = checked_varint(payload, &mut q).ok_or("bad field length")? as usize;
                q = q
                    .checked_add(l)
                    .filter(|&e| e <= payload.len())
                    .ok_or("field overruns")?;
            }
            n
        };
        let _ = pairs;
        if q != payload.len() {
            return Err(format!("payload size mismatch at {start}"));
        }
        off = pend;
        let body = off - start;
        let mut want = Vec::new();
        put_backlen(&mut want, body as u64);
        if buf.get(off..off + want.len()) != Some(&want[..]) {
            return Err(format!("bad back-length at {start}"));
        }
        off += want.len();
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs_of(e: &EntryView<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
        e.pairs().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
    }

    #[test]
    fn append_iterate_delete() {
        let mut n = StreamNode::new(StreamId::new(5, 1), &[b"a", b"1", b"b", b"2"]);
        n.append(StreamId::new(5, 2), &[b"a", b"x", b"b", b"y"]);
        n.append(StreamId::new(7, 0), &[b"c", &[b'z'; 300]]);
        n.append(StreamId::new(u64::MAX, u64::MAX), &[]);
        n.validate().unwrap();
        let ids: Vec<_> = n.iter().map(|e| e.id).collect();
        assert_eq!(
            ids,
            vec![
                StreamId::new(5, 1),
                StreamId::new(5, 2),
                StreamId::new(7, 0),
                StreamId::MAX
            ]
        );
        let rev: Vec<_> = n.iter().rev().map(|e| e.id).collect();
        assert_eq!(rev, ids.iter().rev().copied().collect::<Vec<_>>());
        let e = n.find(StreamId::new(7, 0)).unwrap();
        assert_eq!(pairs_of(&e), vec![(b"c".to_vec(), vec![b'z'; 300])]);
        let e = n.find(StreamId::new(5, 2)).unwrap();
        assert_eq!(
            pairs_of(&e),
            vec![
                (b"a".to_vec(), b"x".to_vec()),
                (b"b".to_vec(), b"y".to_vec())
            ]
        );
        assert_eq!(n.find(StreamId::MAX).unwrap().num_fields(), 0);
        assert!(n.delete(StreamId::new(5, 2)));
        assert!(!n.delete(StreamId::new(5, 2)));
        n.validate().unwrap();
        assert_eq!((n.live(), n.deleted()), (3, 1));
        assert_eq!(n.master_id(), StreamId::new(5, 1));
        assert_eq!(n.last_id_any(), StreamId::MAX);
    }

    #[test]
    fn backlen_roundtrip() {
        for l in [0u64, 1, 127, 128, 300, 16383, 16384, 1 << 30] {
            let mut b = vec![9u8];
            put_backlen(&mut b, l);
            let (v, used) = get_backlen(&b, b.len());
            assert_eq!((v, used), (l, b.len() - 1));
        }
    }

    #[test]
    fn delete_while_stops_and_filters() {
        let mut n = StreamNode::new(StreamId::new(1, 0), &[b"f", b"v"]);
        for i in 1..10 {
            n.append(StreamId::new(1, i), &[b"f", b"v"]);
        }
        let removed = n.delete_while(|id, _| id.seq >= 6, |id| id.seq % 2 == 0);
        assert_eq!(
            removed.iter().map(|i| i.seq).collect::<Vec<_>>(),
            vec![0, 2, 4]
        );
        n.validate().unwrap();
        assert_eq!(
            n.iter().map(|e| e.id.seq).collect::<Vec<_>>(),
            vec![1, 3, 5, 6, 7, 8, 9]
        );
    }
}
