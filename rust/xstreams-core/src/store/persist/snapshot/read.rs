//! Reading a snapshot: sections checked by their CRC, the index, a walk over every
//! section, loading the whole keyspace or one stream's ID range.

use crate::base::config::Config;
use crate::keyspace::db::{Keyspace, Value, NUM_DBS};
use crate::structures::group::{ConsumerGroup, ConsumerImage, PendingImage};
use crate::structures::id::StreamId;
use crate::structures::idmp::IdmpState;
use crate::structures::node::{NodeParts, StreamNode};
use crate::structures::stream::{Groups, Stream};

use super::{
    KeyIndex, NodeIndex, MAGIC, TAG_CONFIG, TAG_INDEX, TAG_NODE, TAG_STREAM, TAG_STRING,
    TRAILER_MAGIC, VERSION,
};

/// A cursor over a section payload; every read is bounds-checked.
pub struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Dec { buf, pos: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or("section too short")?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    pub fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    pub fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    pub fn id(&mut self) -> Result<StreamId, String> {
        Ok(StreamId::new(self.u64()?, self.u64()?))
    }
    pub fn done(&self) -> bool {
        self.pos == self.buf.len()
    }
    /// A count that cannot exceed what the remaining bytes could hold.
    fn count(&mut self, min_item: usize) -> Result<usize, String> {
        let n = self.u64()? as usize;
        if n.saturating_mul(min_item.max(1)) > self.buf.len() - self.pos {
            return Err("count larger than the section".into());
        }
        Ok(n)
    }
}

/// A snapshot problem: what is wrong and at which byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotError {
    pub offset: u64,
    pub message: String,
}

fn err(offset: usize, message: impl Into<String>) -> SnapshotError {
    SnapshotError {
        offset: offset as u64,
        message: message.into(),
    }
}

/// Read the section at `off`: (tag, payload, next offset).
pub fn read_section(buf: &[u8], off: usize) -> Result<(u8, &[u8], usize), SnapshotError> {
    if off.checked_add(9).is_none_or(|e| e > buf.len()) {
        return Err(err(off, "file ends inside a section header"));
    }
    let tag = buf[off];
    let len = u64::from_le_bytes(buf[off + 1..off + 9].try_into().expect("8 bytes"));
    let end = (off as u64 + 9)
        .checked_add(len)
        .and_then(|e| e.checked_add(4))
        .filter(|&e| e <= buf.len() as u64)
        .ok_or_else(|| err(off, "section runs past the end of the file"))? as usize;
    let payload = &buf[off + 9..end - 4];
    let stored = u32::from_le_bytes(buf[end - 4..end].try_into().expect("4 bytes"));
    let mut crc = crc32fast::Hasher::new();
    crc.update(&buf[off..off + 9]);
    crc.update(payload);
    if crc.finalize() != stored {
        return Err(err(off, "checksum mismatch"));
    }
    Ok((tag, payload, end))
}

/// Check the header and return the offset of the first section.
pub fn read_header(buf: &[u8]) -> Result<usize, SnapshotError> {
    if buf.len() < 24 + 24 || &buf[..8] != MAGIC {
        return Err(err(0, "not an xstreams snapshot (bad magic)"));
    }
    let version = u32::from_le_bytes(buf[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(err(8, format!("unsupported snapshot version {version}")));
    }
    if &buf[buf.len() - 8..] != TRAILER_MAGIC {
        return Err(err(buf.len() - 8, "missing trailer (file truncated?)"));
    }
    Ok(24)
}

/// Read the key index (for partial loads).
pub fn read_index(buf: &[u8]) -> Result<Vec<KeyIndex>, SnapshotError> {
    index_section(buf).map(|(index, _, _)| index)
}

/// The trailer's index offset and length.
fn trailer(buf: &[u8]) -> (u64, u64) {
    let t = buf.len() - 24;
    let ioff = u64::from_le_bytes(buf[t..t + 8].try_into().expect("8 bytes"));
    let ilen = u64::from_le_bytes(buf[t + 8..t + 16].try_into().expect("8 bytes"));
    (ioff, ilen)
}

/// Read the index the trailer points to: (index, its offset, the end of its section).
fn index_section(buf: &[u8]) -> Result<(Vec<KeyIndex>, usize, usize), SnapshotError> {
    read_header(buf)?;
    let ioff = usize::try_from(trailer(buf).0).unwrap_or(usize::MAX);
    let (tag, payload, end) = read_section(buf, ioff)?;
    if tag != TAG_INDEX {
        return Err(err(ioff, "trailer does not point to the index"));
    }
    let mut d = Dec::new(payload);
    let parse = |d: &mut Dec<'_>| -> Result<Vec<KeyIndex>, String> {
        let n = d.count(26)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let db = d.u8()?;
            let key = d.bytes()?.to_vec();
            let kind = d.u8()?;
            let offset = d.u64()?;
            let len = d.u64()?;
            let nn = d.count(56)?;
            let mut nodes = Vec::with_capacity(nn);
            for _ in 0..nn {
                nodes.push(NodeIndex {
                    master: d.id()?,
                    last: d.id()?,
                    live: d.u64()?,
                    offset: d.u64()?,
                    len: d.u64()?,
                });
            }
            out.push(KeyIndex {
                db,
                key,
                kind,
                offset,
                len,
                nodes,
            });
        }
        if !d.done() {
            return Err("trailing bytes in the index".into());
        }
        Ok(out)
    };
    let index = parse(&mut d).map_err(|m| err(ioff, m))?;
    Ok((index, ioff, end))
}

struct StreamHeader {
    stream_fields: (u64, StreamId, StreamId, StreamId, u64),
    node_count: u64,
    idmp: IdmpState,
    groups: Groups,
}

fn decode_stream_header(d: &mut Dec<'_>) -> Result<StreamHeader, String> {
    let length = d.u64()?;
    let last = d.id()?;
    let first = d.id()?;
    let maxdel = d.id()?;
    let added = d.u64()?;
    let node_count = d.u64()?;
    let duration = d.u64()?;
    let maxsize = d.u64()?;
    let iids_added = d.u64()?;
    let iids_dup = d.u64()?;
    let tracked = d.u8()? != 0;
    let np = d.count(12)?;
    let mut producers = Vec::with_capacity(np);
    for _ in 0..np {
        let pid = d.bytes()?.to_vec();
        let ni = d.count(20)?;
        let mut iids = Vec::with_capacity(ni);
        for _ in 0..ni {
            iids.push((d.bytes()?.to_vec(), d.id()?));
        }
        producers.push((pid, iids));
    }
    let idmp = IdmpState::restore(duration, maxsize, iids_added, iids_dup, tracked, producers)?;
    let ng = d.count(36)?;
    let mut groups = Vec::with_capacity(ng);
    for _ in 0..ng {
        let name = d.bytes()?.to_vec();
        let last_id = d.id()?;
        let entries_read = d.i64()?;
        let nc = d.count(20)?;
        let mut consumers = Vec::with_capacity(nc);
        for _ in 0..nc {
            consumers.push(ConsumerImage {
                name: d.bytes()?.to_vec(),
                seen_time: d.i64()?,
                active_time: d.i64()?,
            });
        }
        let nr = d.count(41)?;
        let mut records = Vec::with_capacity(nr);
        for _ in 0..nr {
            let id = d.id()?;
            let delivery_time = d.i64()?;
            let delivery_count = d.u64()?;
            let owner = d.i64()?;
            let nacked = d.u8()? != 0;
            let owner = if owner < 0 {
                None
            } else {
                Some(u32::try_from(owner).map_err(|_| "bad owner")?)
            };
            records.push(PendingImage {
                id,
                delivery_time,
                delivery_count,
                owner,
                nacked,
            });
        }
        groups.push((
            name,
            ConsumerGroup::restore(last_id, entries_read, consumers, records)?,
        ));
    }
    Ok(StreamHeader {
        stream_fields: (length, last, first, maxdel, added),
        node_count,
        idmp,
        groups: Groups::restore(groups)?,
    })
}

/// Decode a node section payload: (db, key, node).
pub fn decode_node(payload: &[u8]) -> Result<(u8, &[u8], StreamNode), String> {
    let mut d = Dec::new(payload);
    let db = d.u8()?;
    let key = d.bytes()?;
    let parts = NodeParts {
        master: d.id()?,
        last: d.id()?,
        live: d.u32()?,
        deleted: d.u32()?,
        nfields_master: d.u32()?,
        master_len: d.u32()?,
        lp_body: d.u64()?,
        buf: d.bytes()?,
    };
    if !d.done() {
        return Err("trailing bytes in node section".into());
    }
    Ok((db, key, StreamNode::from_parts(parts)?))
}

/// A name for a section tag (for tools).
pub fn tag_name(tag: u8) -> &'static str {
    match tag {
        TAG_CONFIG => "config",
        TAG_STRING => "string",
        TAG_STREAM => "stream",
        TAG_NODE => "node",
        TAG_INDEX => "index",
        _ => "unknown",
    }
}

/// One section, as [`walk`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionRef<'a> {
    pub offset: u64,
    pub tag: u8,
    /// Bytes of the whole section (13 + payload).
    pub len: u64,
    /// (db, key) of a string, stream or node section.
    pub key: Option<(u8, &'a [u8])>,
}

/// One key read from a snapshot.
pub struct SnapshotKey {
    pub db: u8,
    pub key: Vec<u8>,
    pub expire_at: Option<i64>,
    pub value: Value,
}

/// What [`walk`] reports, in file order (a key after its sections).
pub enum Visit<'a> {
    Section(SectionRef<'a>),
    Key(SnapshotKey),
}

/// What a snapshot holds besides its keys.
pub struct SnapshotMeta {
    /// The header's creation time (Unix ms).
    pub created_ms: i64,
    /// The settings passed to [`walk`], with the snapshot's applied.
    pub config: Config,
}

/// Read and check a whole snapshot without building a keyspace: the header, the index
/// and trailer, every section (CRC, structure, node buffers, stream invariants, no
/// duplicate key), and the index against the sections. Each section and key goes to
/// `visit`. An error names the offset of the header field or section at fault.
pub fn walk<'a>(
    buf: &'a [u8],
    mut config: Config,
    visit: &mut dyn FnMut(Visit<'a>),
) -> Result<SnapshotMeta, SnapshotError> {
    let mut off = read_header(buf)?;
    let created_ms = i64::from_le_bytes(buf[16..24].try_into().expect("8 bytes"));
    // The index (which partial readers follow) must be intact too.
    let (index, ioff, iend) = index_section(buf)?;
    let t = buf.len() - 24;
    let (_, ilen) = trailer(buf);
    if (ioff as u64).checked_add(ilen) != Some(t as u64) {
        return Err(err(t, "trailer's index length does not reach the trailer"));
    }
    if iend != t {
        return Err(err(t, "the index section does not end at the trailer"));
    }
    let mut layout: Vec<KeyIndex> = Vec::with_capacity(index.len());
    let mut seen: std::collections::HashSet<(u8, &[u8])> = Default::default();
    let mut new_key = |off: usize, db: u8, key: &'a [u8]| {
        if db as usize >= NUM_DBS || !seen.insert((db, key)) {
            return Err(err(off, "bad or duplicate key"));
        }
        Ok(())
    };
    let mut index_seen = false;
    let mut last = off;
    while off < t {
        last = off;
        let (tag, payload, next) = read_section(buf, off)?;
        let mut section = SectionRef {
            offset: off as u64,
            tag,
            len: (next - off) as u64,
            key: None,
        };
        let mut d = Dec::new(payload);
        match tag {
            TAG_CONFIG => {
                let n = d.count(8).map_err(|m| err(off, m))?;
                for _ in 0..n {
                    let name =
                        String::from_utf8_lossy(d.bytes().map_err(|m| err(off, m))?).into_owned();
                    let value =
                        String::from_utf8_lossy(d.bytes().map_err(|m| err(off, m))?).into_owned();
                    config
                        .set(&name, &value)
                        .map_err(|m| err(off, format!("setting {name}: {m}")))?;
                }
                if !d.done() {
                    return Err(err(off, "trailing bytes in config section"));
                }
                visit(Visit::Section(section));
            }
            TAG_STRING => {
                let (db, key, expire, v) = (|| -> Result<_, String> {
                    Ok((d.u8()?, d.bytes()?, d.i64()?, d.bytes()?.to_vec()))
                })()
                .map_err(|m| err(off, m))?;
                if !d.done() {
                    return Err(err(off, "trailing bytes in string section"));
                }
                new_key(off, db, key)?;
                section.key = Some((db, key));
                visit(Visit::Section(section));
                layout.push(KeyIndex {
                    db,
                    key: key.to_vec(),
                    kind: 0,
                    offset: off as u64,
                    len: section.len,
                    nodes: Vec::new(),
                });
                visit(Visit::Key(SnapshotKey {
                    db,
                    key: key.to_vec(),
                    expire_at: (expire >= 0).then_some(expire),
                    value: Value::Str(v),
                }));
            }
            TAG_STREAM => {
                let db = d.u8().map_err(|m| err(off, m))?;
                let key = d.bytes().map_err(|m| err(off, m))?;
                let expire = d.i64().map_err(|m| err(off, m))?;
                let h = decode_stream_header(&mut d).map_err(|m| err(off, m))?;
                if !d.done() {
                    return Err(err(off, "trailing bytes in stream section"));
                }
                section.key = Some((db, key));
                visit(Visit::Section(section));
                let mut nodes = Vec::with_capacity(h.node_count.min(1 << 16) as usize);
                let mut node_index = Vec::with_capacity(nodes.capacity());
                let mut noff = next;
                for _ in 0..h.node_count {
                    let (ntag, np, nnext) = read_section(buf, noff)?;
                    if ntag != TAG_NODE {
                        return Err(err(noff, "expected a node section"));
                    }
                    let (ndb, nkey, node) = decode_node(np).map_err(|m| err(noff, m))?;
                    if ndb != db || nkey != key {
                        return Err(err(noff, "node belongs to another key"));
                    }
                    visit(Visit::Section(SectionRef {
                        offset: noff as u64,
                        tag: ntag,
                        len: (nnext - noff) as u64,
                        key: Some((db, key)),
                    }));
                    node_index.push(NodeIndex {
                        master: node.master_id(),
                        last: node.last_id_any(),
                        live: node.live(),
                        offset: noff as u64,
                        len: (nnext - noff) as u64,
                    });
                    nodes.push(node);
                    noff = nnext;
                }
                let (length, last_id, first, maxdel, added) = h.stream_fields;
                let s = Stream::restore(
                    nodes, length, last_id, first, maxdel, added, h.groups, h.idmp,
                )
                .map_err(|m| err(off, m))?;
                new_key(off, db, key)?;
                layout.push(KeyIndex {
                    db,
                    key: key.to_vec(),
                    kind: 1,
                    offset: off as u64,
                    len: section.len,
                    nodes: node_index,
                });
                visit(Visit::Key(SnapshotKey {
                    db,
                    key: key.to_vec(),
                    expire_at: (expire >= 0).then_some(expire),
                    value: Value::Stream(Box::new(s)),
                }));
                off = noff;
                continue;
            }
            TAG_INDEX => {
                if off != ioff {
                    return Err(err(off, "a second index section"));
                }
                index_seen = true;
                visit(Visit::Section(section));
            }
            TAG_NODE => return Err(err(off, "node section outside a stream")),
            other => return Err(err(off, format!("unknown section tag {other}"))),
        }
        off = next;
    }
    if off != t {
        return Err(err(last, "section runs into the trailer"));
    }
    if !index_seen {
        return Err(err(ioff, "the sections do not lead to the index"));
    }
    if layout.len() != index.len() {
        return Err(err(ioff, "the index does not list the keys the file holds"));
    }
    if layout != index {
        return Err(err(ioff, "the index does not match the sections"));
    }
    Ok(SnapshotMeta { created_ms, config })
}

/// Load a whole snapshot into a keyspace (settings from the snapshot replace `config`'s).
pub fn load(buf: &[u8], config: Config) -> Result<Keyspace, SnapshotError> {
    let mut keys = Vec::new();
    let meta = walk(buf, config, &mut |v| {
        if let Visit::Key(k) = v {
            keys.push(k);
        }
    })?;
    let mut ks = Keyspace::new(meta.config);
    for k in keys {
        let db = &mut ks.dbs[k.db as usize];
        let idmp = matches!(&k.value, Value::Stream(s) if s.idmp.is_tracked());
        db.set(&k.key, k.value, k.expire_at);
        if idmp {
            db.idmp_keys.insert(k.key);
        }
    }
    Ok(ks)
}

/// Load one stream (with groups and IDMP state) using the index, reading only its
/// sections. Nodes entirely outside `[start, end]` are skipped, so the stream returned
/// holds only the entries of that range (its counters are those of the whole stream).
pub fn load_stream_range(
    buf: &[u8],
    db: u8,
    key: &[u8],
    start: StreamId,
    end: StreamId,
) -> Result<Option<Stream>, SnapshotError> {
    let index = read_index(buf)?;
    let Some(k) = index
        .iter()
        .find(|k| k.db == db && k.key == key && k.kind == 1)
    else {
        return Ok(None);
    };
    let (tag, payload, _) = read_section(buf, k.offset as usize)?;
    if tag != TAG_STREAM {
        return Err(err(
            k.offset as usize,
            "index points to a non-stream section",
        ));
    }
    let mut d = Dec::new(payload);
    let _ = (d.u8(), d.bytes(), d.i64());
    let h = decode_stream_header(&mut d).map_err(|m| err(k.offset as usize, m))?;
    let mut nodes = Vec::new();
    let mut length = 0;
    for n in &k.nodes {
        if n.last < start || n.master > end {
            continue;
        }
        let (_, np, _) = read_section(buf, n.offset as usize)?;
        let (_, _, node) = decode_node(np).map_err(|m| err(n.offset as usize, m))?;
        length += node.live();
        nodes.push(node);
    }
    let (_, last, _, maxdel, added) = h.stream_fields;
    let first = nodes
        .iter()
        .find_map(|n| n.first_entry().map(|e| e.id))
        .unwrap_or(StreamId::MIN);
    let s = Stream::restore(nodes, length, last, first, maxdel, added, h.groups, h.idmp)
        .map_err(|m| err(k.offset as usize, m))?;
    Ok(Some(s))
}
