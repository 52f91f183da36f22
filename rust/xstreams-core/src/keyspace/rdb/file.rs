//! Whole RDB files, as redis-server writes and loads them: `REDIS` and a 4-digit version,
//! auxiliary fields, per database a `SELECTDB` and `RESIZEDB`, then keys (each optionally
//! preceded by its expiry, LRU idle time or LFU frequency), `EOF` and the CRC-64 of all
//! the bytes before it (0 when the writer disabled checksums).
//!
//! Reading hands out each key with the bytes of its value exactly as stored (the same
//! bytes a DUMP payload carries), so importing restores what redis-server wrote; values
//! of types xstreams does not store are decoded just enough to be skipped and counted.

use std::sync::atomic::{AtomicU64, Ordering};

use super::codec::{crc64, DecResult, Malformed, Reader, Writer};
use super::{rdb_type_name, stream, write_value, RDB_VERSION, TYPE_STRING};
use crate::keyspace::db::Keyspace;

const OP_KEY_META: u8 = 243;
const OP_SLOT_INFO: u8 = 244;
const OP_FUNCTION2: u8 = 245;
const OP_MODULE_AUX: u8 = 247;
const OP_IDLE: u8 = 248;
const OP_FREQ: u8 = 249;
const OP_AUX: u8 = 250;
const OP_RESIZEDB: u8 = 251;
const OP_EXPIRETIME_MS: u8 = 252;
const OP_EXPIRETIME: u8 = 253;
const OP_SELECTDB: u8 = 254;
const OP_EOF: u8 = 255;

/// One key of a file, of a type xstreams stores.
#[derive(Debug)]
pub struct FileKey<'a> {
    pub db: u32,
    pub key: Vec<u8>,
    /// Absolute expiry time in ms.
    pub expire_ms: Option<i64>,
    /// The RDB type of the value.
    pub ty: u8,
    /// The value's body as stored (what follows the type byte in a DUMP payload).
    pub body: &'a [u8],
}

/// What a file held besides the keys handed out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileSummary {
    pub version: u32,
    /// Keys of other types skipped, by type name.
    pub skipped: std::collections::BTreeMap<String, u64>,
    /// Function libraries skipped.
    pub functions_skipped: u64,
}

fn bad(msg: impl Into<String>) -> Malformed {
    Malformed::new(msg)
}

/// Skip a value of a type xstreams does not store.
fn skip_value(r: &mut Reader<'_>, ty: u8) -> DecResult<()> {
    let strings = |r: &mut Reader<'_>, per: usize| -> DecResult<()> {
        let n = r.count(per)?;
        for _ in 0..n * per {
            r.string()?;
        }
        Ok(())
    };
    match ty {
        1 | 2 | 14 => strings(r, 1),
        4 => strings(r, 2),
        9..=13 | 16 | 17 | 20 | 23 => r.string().map(|_| ()),
        3 => {
            let n = r.count(2)?;
            for _ in 0..n {
                r.string()?;
                let l = r.u8()?;
                if l < 253 {
                    r.take(usize::from(l))?;
                }
            }
            Ok(())
        }
        5 => {
            let n = r.count(9)?;
            for _ in 0..n {
                r.string()?;
                r.take(8)?;
            }
            Ok(())
        }
        18 => {
            let n = r.count(2)?;
            for _ in 0..n {
                r.length()?;
                r.string()?;
            }
            Ok(())
        }
        24 => {
            r.millis()?;
            let n = r.count(3)?;
            for _ in 0..n {
                r.length()?;
                r.string()?;
                r.string()?;
            }
            Ok(())
        }
        25 => {
            r.millis()?;
            r.string().map(|_| ())
        }
        t => Err(bad(format!(
            "cannot skip a value of RDB type {t} ({})",
            rdb_type_name(t).unwrap_or("unknown")
        ))),
    }
}

/// Read an RDB file: check its header and checksum, and hand every string and stream key
/// to `visit` (in file order). The value bytes are checked by whoever decodes them.
pub fn read_file<'a>(
    buf: &'a [u8],
    mut visit: impl FnMut(FileKey<'a>) -> DecResult<()>,
) -> DecResult<FileSummary> {
    if buf.len() < 9 || &buf[..5] != b"REDIS" {
        return Err(bad("not an RDB file (no REDIS signature)"));
    }
    let version: u32 = std::str::from_utf8(&buf[5..9])
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad("bad RDB version field"))?;
    if version < 1 || version > u32::from(RDB_VERSION) {
        return Err(bad(format!(
            "RDB version {version} is not supported (at most {RDB_VERSION})"
        )));
    }
    let mut r = Reader::new(buf);
    r.take(9)?;
    let mut summary = FileSummary {
        version,
        ..Default::default()
    };
    let mut db = 0u32;
    let mut expire: Option<i64> = None;
    loop {
        let op = r.u8()?;
        match op {
            OP_EOF => break,
            OP_SELECTDB => db = u32::try_from(r.length()?).map_err(|_| bad("bad database"))?,
            OP_RESIZEDB => {
                r.length()?;
                r.length()?;
            }
            OP_SLOT_INFO => {
                r.length()?;
                r.length()?;
                r.length()?;
            }
            OP_AUX => {
                r.string()?;
                r.string()?;
            }
            OP_FUNCTION2 => {
                r.string()?;
                summary.functions_skipped += 1;
            }
            OP_EXPIRETIME_MS => expire = Some(r.millis()?),
            OP_EXPIRETIME => {
                let s = i32::from_le_bytes(r.take(4)?.try_into().expect("4 bytes"));
                expire = Some(i64::from(s) * 1000);
            }
            OP_IDLE => {
                r.length()?;
            }
            OP_FREQ => {
                r.u8()?;
            }
            OP_MODULE_AUX | OP_KEY_META => {
                return Err(bad("module data in the RDB file cannot be read"));
            }
            ty => {
                let key = r.string()?;
                let keep = ty == TYPE_STRING || matches!(ty, 15 | 19 | 21 | 26 | 27);
                if keep {
                    let body_start = r.pos();
                    if ty == TYPE_STRING {
                        r.string()?;
                    } else {
                        stream_skip(&mut r, ty)?;
                    }
                    visit(FileKey {
                        db,
                        key,
                        expire_ms: expire.take(),
                        ty,
                        body: &buf[body_start..r.pos()],
                    })?;
                } else {
                    skip_value(&mut r, ty)?;
                    let name = rdb_type_name(ty).unwrap_or("unknown");
                    *summary.skipped.entry(name.to_string()).or_insert(0) += 1;
                    expire = None;
                }
            }
        }
    }
    let body_end = r.pos();
    if version >= 5 {
        let stored = u64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"));
        if stored != 0 && stored != crc64(&buf[..body_end]) {
            return Err(bad("RDB file checksum mismatch"));
        }
    }
    Ok(summary)
}

/// Skip a stream body without building it (the importer decodes it fully later).
fn stream_skip(r: &mut Reader<'_>, ty: u8) -> DecResult<()> {
    let nodes = r.count(2)?;
    for _ in 0..nodes * 2 {
        r.string()?;
    }
    for _ in 0..3 {
        r.length()?;
    }
    if ty >= stream::TYPE_STREAM_LISTPACKS_2 {
        for _ in 0..5 {
            r.length()?;
        }
    }
    let groups = r.count(4)?;
    for _ in 0..groups {
        r.string()?;
        r.length()?;
        r.length()?;
        if ty >= stream::TYPE_STREAM_LISTPACKS_2 {
            r.length()?;
        }
        let pel = r.count(17)?;
        for _ in 0..pel {
            r.take(16)?;
            r.millis()?;
            r.length()?;
        }
        let consumers = r.count(10)?;
        for _ in 0..consumers {
            r.string()?;
            r.millis()?;
            if ty >= stream::TYPE_STREAM_LISTPACKS_3 {
                r.millis()?;
            }
            let n = r.count(16)?;
            r.take(n * 16)?;
        }
        if ty >= stream::TYPE_STREAM_LISTPACKS_5 {
            let n = r.count(16)?;
            r.take(n * 16)?;
        }
    }
    if ty >= stream::TYPE_STREAM_LISTPACKS_4 {
        r.length()?;
        r.length()?;
        let producers = r.count(2)?;
        for _ in 0..producers {
            r.string()?;
            let n = r.count(3)?;
            for _ in 0..n {
                r.string()?;
                r.length()?;
                r.length()?;
            }
        }
        r.length()?;
        r.length()?;
    }
    Ok(())
}

/// A DUMP payload (type byte, body, footer) for a value read from a file.
pub fn payload_of(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(body.len() + 11);
    p.push(ty);
    p.extend_from_slice(body);
    p.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

/// Write the whole keyspace as an RDB file redis-server 8.8 loads. Keys already expired
/// at `now` are left out.
pub fn write_file(ks: &Keyspace, now: i64) -> Vec<u8> {
    write_file_counted(ks, now, &AtomicU64::new(0))
}

/// [`write_file`], adding one to `written` after each key (what a progress display of
/// another thread reads while the file is built).
pub fn write_file_counted(ks: &Keyspace, now: i64, written: &AtomicU64) -> Vec<u8> {
    let mut w = Writer::default();
    w.buf
        .extend_from_slice(format!("REDIS{RDB_VERSION:04}").as_bytes());
    for (k, v) in [
        ("redis-ver", "8.8.0"),
        ("redis-bits", "64"),
        ("ctime", &(now / 1000).to_string()),
        ("aof-base", "0"),
    ] {
        w.u8(OP_AUX);
        w.string(k.as_bytes());
        w.string(v.as_bytes());
    }
    for (dbi, db) in ks.dbs.iter().enumerate() {
        let keys: Vec<_> = db
            .entries_in_order()
            .filter(|(_, e)| e.expire_at.is_none_or(|t| t > now))
            .collect();
        if keys.is_empty() {
            continue;
        }
        w.u8(OP_SELECTDB);
        w.length(dbi as u64);
        w.u8(OP_RESIZEDB);
        w.length(keys.len() as u64);
        w.length(keys.iter().filter(|(_, e)| e.expire_at.is_some()).count() as u64);
        for (key, e) in keys {
            if let Some(t) = e.expire_at {
                w.u8(OP_EXPIRETIME_MS);
                w.millis(t);
            }
            // Type byte, key, body: write_value writes the type first, so splice the key.
            let mut v = Writer::default();
            write_value(&mut v, &e.value, now);
            w.u8(v.buf[0]);
            w.string(key);
            w.buf.extend_from_slice(&v.buf[1..]);
            written.fetch_add(1, Ordering::Relaxed);
        }
    }
    w.u8(OP_EOF);
    let crc = crc64(&w.buf);
    w.buf.extend_from_slice(&crc.to_le_bytes());
    w.buf
}
