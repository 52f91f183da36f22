//! A node's raw state for snapshots, and the full check of a node's bytes.

use crate::structures::id::StreamId;

use super::varint::put_backlen;
use super::{StreamNode, FLAG_DELETED, FLAG_SAMEFIELDS};

impl StreamNode {
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
        if live == 0 {
            // redis-server refuses such a node on load ("Stream listpack bad entry
            // count"): every path that deletes a node's last live entry removes the node.
            return Err(format!(
                "node {} holds no live entry ({deleted} tombstones)",
                self.master_id()
            ));
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
