//! Redis's serialization: DUMP payloads and RDB files.
//!
//! A DUMP payload is one value in RDB form (type byte, then the value) followed by a
//! footer: the RDB version (2 bytes little-endian) and the CRC-64 of everything before it
//! (8 bytes little-endian, 0 meaning "not checked"). RESTORE accepts a payload whose
//! version is at most ours and whose checksum matches. Streams are written as
//! `RDB_TYPE_STREAM_LISTPACKS_5` (consumer groups, NACK zone, IDMP producers), strings as
//! RDB strings.
//!
//! Decoding never trusts its input: every length is bounds-checked, listpacks are
//! checked as redis-server's deep sanitization does, and the rebuilt stream must pass
//! [`Stream::validate`], so a malformed payload is an error, never a panic or a stream
//! that breaks later.

pub mod codec;
pub mod file;

pub mod listpack;
pub mod stream;

use crate::base::config::Config;
use crate::keyspace::db::Value;
use codec::{Malformed, Reader, Writer};

/// The RDB version redis-server 8.8 writes (and the highest it reads).
pub const RDB_VERSION: u16 = 14;

pub const TYPE_STRING: u8 = 0;

/// Why a payload cannot be restored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RestoreError {
    /// The footer's version is newer than ours or the checksum does not match.
    VersionOrChecksum,
    /// The payload does not decode (`detail` says where).
    BadFormat(String),
    /// A valid value of a type xstreams does not store (list, hash, ...).
    Unsupported(&'static str),
}

impl From<Malformed> for RestoreError {
    fn from(m: Malformed) -> Self {
        RestoreError::BadFormat(m.0)
    }
}

/// The name TYPE would give an RDB object type, for types xstreams cannot store.
pub fn rdb_type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        1 | 10 | 14 | 18 => "list",
        2 | 11 | 20 => "set",
        3 | 5 | 12 | 17 => "zset",
        4 | 9 | 13 | 16 | 22..=25 => "hash",
        6 | 7 => "module",
        28 => "array",
        29 => "gcra",
        _ => return None,
    })
}

/// Serialize a value in RDB form (type byte and body), as redis-server's `rdbSaveObject`.
pub fn write_value(w: &mut Writer, v: &Value, now: i64) {
    match v {
        Value::Str(s) => {
            w.u8(TYPE_STRING);
            w.string(s);
        }
        Value::Stream(s) => {
            w.u8(stream::TYPE_STREAM_LISTPACKS_5);
            stream::write_stream(w, s, now);
        }
    }
}

/// Read a value of RDB type `ty`.
pub fn read_value(
    r: &mut Reader<'_>,
    ty: u8,
    now: i64,
    cfg: &Config,
) -> Result<Value, RestoreError> {
    match ty {
        TYPE_STRING => Ok(Value::Str(r.string()?)),
        stream::TYPE_STREAM_LISTPACKS
        | stream::TYPE_STREAM_LISTPACKS_2
        | stream::TYPE_STREAM_LISTPACKS_3
        | stream::TYPE_STREAM_LISTPACKS_4
        | stream::TYPE_STREAM_LISTPACKS_5 => Ok(Value::Stream(Box::new(stream::read_stream(
            r, ty, now, cfg,
        )?))),
        t => match rdb_type_name(t) {
            Some(name) => Err(RestoreError::Unsupported(name)),
            None => Err(RestoreError::BadFormat(format!("unknown RDB type {t}"))),
        },
    }
}

/// The DUMP payload of `v` at time `now` (IDMP entries already expired are left out, as
/// redis-server does).
pub fn dump_payload(v: &Value, now: i64) -> Vec<u8> {
    let mut w = Writer::default();
    write_value(&mut w, v, now);
    w.buf.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = codec::crc64(&w.buf);
    w.buf.extend_from_slice(&crc.to_le_bytes());
    w.buf
}

/// Does the footer carry a version we read and a matching (or zero) checksum?
pub fn verify_payload(p: &[u8]) -> bool {
    if p.len() < 10 {
        return false;
    }
    let footer = &p[p.len() - 10..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION {
        return false;
    }
    let stored = u64::from_le_bytes(footer[2..].try_into().expect("8 bytes"));
    stored == 0 || codec::crc64(&p[..p.len() - 8]) == stored
}

/// Decode a DUMP payload into a value, at time `now` with default settings from `cfg`
/// (for streams of RDB types without IDMP settings). The entry point RESTORE and the fuzz
/// targets use.
pub fn restore_payload(p: &[u8], now: i64, cfg: &Config) -> Result<Value, RestoreError> {
    if !verify_payload(p) {
        return Err(RestoreError::VersionOrChecksum);
    }
    // Like redis-server, read from the whole argument (the footer is not cut off), and
    // leave bytes after the value unchecked.
    let mut r = Reader::new(p);
    let ty = r.u8()?;
    read_value(&mut r, ty, now, cfg)
}

#[cfg(test)]
mod tests;
