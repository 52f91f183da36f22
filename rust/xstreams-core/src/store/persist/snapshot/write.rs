//! Writing a snapshot: the keyspace as sections (configuration, strings, stream headers
//! with their groups and IDMP state, stream nodes), then the index and the trailer.

use std::io::{self, Write};

use crate::keyspace::db::{Keyspace, Value};
use crate::structures::id::StreamId;
use crate::structures::node::StreamNode;
use crate::structures::stream::Stream;

use super::{
    KeyIndex, NodeIndex, MAGIC, TAG_CONFIG, TAG_INDEX, TAG_NODE, TAG_STREAM, TAG_STRING,
    TRAILER_MAGIC, VERSION,
};

struct Enc(Vec<u8>);

impl Enc {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
    fn id(&mut self, id: StreamId) {
        self.u64(id.ms);
        self.u64(id.seq);
    }
}

/// Writes sections to any writer, tracking offsets.
struct SectionWriter<W: Write> {
    w: W,
    offset: u64,
}

impl<W: Write> SectionWriter<W> {
    fn section(&mut self, tag: u8, payload: &[u8]) -> io::Result<(u64, u64)> {
        let start = self.offset;
        let mut head = [0u8; 9];
        head[0] = tag;
        head[1..].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&head);
        crc.update(payload);
        self.w.write_all(&head)?;
        self.w.write_all(payload)?;
        self.w.write_all(&crc.finalize().to_le_bytes())?;
        self.offset += 9 + payload.len() as u64 + 4;
        Ok((start, self.offset - start))
    }
}

fn encode_stream_header(s: &Stream) -> Vec<u8> {
    let mut e = Enc(Vec::new());
    e.u64(s.length);
    e.id(s.last_id);
    e.id(s.first_id);
    e.id(s.max_deleted_id);
    e.u64(s.entries_added);
    e.u64(s.node_count() as u64);
    // IDMP
    e.u64(s.idmp.duration);
    e.u64(s.idmp.maxsize);
    e.u64(s.idmp.iids_added);
    e.u64(s.idmp.iids_duplicates);
    e.u8(u8::from(s.idmp.is_tracked()));
    let producers: Vec<_> = s.idmp.producers().collect();
    e.u64(producers.len() as u64);
    for (pid, p) in producers {
        e.bytes(pid);
        e.u64(p.len() as u64);
        for (iid, id) in p.iter() {
            e.bytes(iid);
            e.id(id);
        }
    }
    // Groups
    e.u64(s.groups.len() as u64);
    for (name, _, cg) in s.groups.iter() {
        e.bytes(name);
        e.id(cg.last_id);
        e.i64(cg.entries_read);
        let (consumers, records) = cg.export();
        e.u64(consumers.len() as u64);
        for c in &consumers {
            e.bytes(&c.name);
            e.i64(c.seen_time);
            e.i64(c.active_time);
        }
        e.u64(records.len() as u64);
        for r in &records {
            e.id(r.id);
            e.i64(r.delivery_time);
            e.u64(r.delivery_count);
            e.i64(r.owner.map(i64::from).unwrap_or(-1));
            e.u8(u8::from(r.nacked));
        }
    }
    e.0
}

fn encode_node(db: u8, key: &[u8], n: &StreamNode) -> Vec<u8> {
    let p = n.to_parts();
    let mut e = Enc(Vec::with_capacity(p.buf.len() + 96 + key.len()));
    e.u8(db);
    e.bytes(key);
    e.id(p.master);
    e.id(p.last);
    e.u32(p.live);
    e.u32(p.deleted);
    e.u32(p.nfields_master);
    e.u32(p.master_len);
    e.u64(p.lp_body);
    e.bytes(p.buf);
    e.0
}

/// Write a snapshot of `ks` to `w`. Returns the bytes written.
pub fn write<W: Write>(ks: &Keyspace, created_ms: i64, w: W) -> io::Result<u64> {
    let mut sw = SectionWriter { w, offset: 0 };
    let mut head = Vec::with_capacity(24);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes());
    head.extend_from_slice(&created_ms.to_le_bytes());
    sw.w.write_all(&head)?;
    sw.offset = head.len() as u64;

    let mut e = Enc(Vec::new());
    let cfg = &ks.config;
    let names: Vec<&str> = crate::base::config::data_names().collect();
    e.u64(names.len() as u64);
    for n in names {
        e.bytes(n.as_bytes());
        e.bytes(cfg.get(n).unwrap_or_default().as_bytes());
    }
    sw.section(TAG_CONFIG, &e.0)?;

    let mut index: Vec<KeyIndex> = Vec::new();
    for (dbi, db) in ks.dbs.iter().enumerate() {
        for (key, entry) in db.entries_in_order() {
            let expire = entry.expire_at.unwrap_or(-1);
            match &entry.value {
                Value::Str(v) => {
                    let mut e = Enc(Vec::with_capacity(v.len() + key.len() + 24));
                    e.u8(dbi as u8);
                    e.bytes(key);
                    e.i64(expire);
                    e.bytes(v);
                    let (off, len) = sw.section(TAG_STRING, &e.0)?;
                    index.push(KeyIndex {
                        db: dbi as u8,
                        key: key.to_vec(),
                        kind: 0,
                        offset: off,
                        len,
                        nodes: vec![],
                    });
                }
                Value::Stream(s) => {
                    let mut e = Enc(Vec::new());
                    e.u8(dbi as u8);
                    e.bytes(key);
                    e.i64(expire);
                    e.0.extend_from_slice(&encode_stream_header(s));
                    let (off, len) = sw.section(TAG_STREAM, &e.0)?;
                    let mut nodes = Vec::with_capacity(s.node_count());
                    for n in s.nodes() {
                        let (noff, nlen) = sw.section(TAG_NODE, &encode_node(dbi as u8, key, n))?;
                        nodes.push(NodeIndex {
                            master: n.master_id(),
                            last: n.last_id_any(),
                            live: n.live(),
                            offset: noff,
                            len: nlen,
                        });
                    }
                    index.push(KeyIndex {
                        db: dbi as u8,
                        key: key.to_vec(),
                        kind: 1,
                        offset: off,
                        len,
                        nodes,
                    });
                }
            }
        }
    }
    let mut e = Enc(Vec::new());
    e.u64(index.len() as u64);
    for k in &index {
        e.u8(k.db);
        e.bytes(&k.key);
        e.u8(k.kind);
        e.u64(k.offset);
        e.u64(k.len);
        e.u64(k.nodes.len() as u64);
        for n in &k.nodes {
            e.id(n.master);
            e.id(n.last);
            e.u64(n.live);
            e.u64(n.offset);
            e.u64(n.len);
        }
    }
    let (ioff, ilen) = sw.section(TAG_INDEX, &e.0)?;
    let mut trailer = Vec::with_capacity(24);
    trailer.extend_from_slice(&ioff.to_le_bytes());
    trailer.extend_from_slice(&ilen.to_le_bytes());
    trailer.extend_from_slice(TRAILER_MAGIC);
    sw.w.write_all(&trailer)?;
    sw.offset += 24;
    sw.w.flush()?;
    Ok(sw.offset)
}
