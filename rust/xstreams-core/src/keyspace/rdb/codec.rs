//! The RDB primitives shared by DUMP payloads and RDB files: length encoding, strings
//! (raw, integer-encoded, LZF-compressed), millisecond times, and Redis's CRC-64.
//!
//! Layouts (from redis-server's `rdb.h`): a length's first byte holds its kind in the two
//! high bits — `00` a 6-bit length, `01` a 14-bit length (big-endian with the next byte),
//! `10` followed by a 32-bit (`0x80`) or 64-bit (`0x81`) big-endian length, `11` a special
//! string encoding (8/16/32-bit little-endian integer, or an LZF blob: compressed length,
//! original length, data).

use crate::base::num::string2ll;

/// Redis's CRC-64 (Jones polynomial, reflected, no final xor).
pub const CRC64: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_REDIS);

/// CRC-64 of `data`, as redis-server computes it for DUMP payloads and RDB files.
pub fn crc64(data: &[u8]) -> u64 {
    CRC64.checksum(data)
}

const ENC_INT8: u8 = 0;
const ENC_INT16: u8 = 1;
const ENC_INT32: u8 = 2;
const ENC_LZF: u8 = 3;

/// A decoding failure. The payload is malformed; the text says where, for RDB files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed(pub String);

impl Malformed {
    pub fn new(msg: impl Into<String>) -> Self {
        Malformed(msg.into())
    }
}

pub type DecResult<T> = Result<T, Malformed>;

/// A bounds-checked reader over RDB bytes.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn take(&mut self, n: usize) -> DecResult<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| Malformed::new("unexpected end of data"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn u8(&mut self) -> DecResult<u8> {
        Ok(self.take(1)?[0])
    }

    /// A length (or a special encoding: `(value, true)`).
    pub fn len_enc(&mut self) -> DecResult<(u64, bool)> {
        let b = self.u8()?;
        match b >> 6 {
            0 => Ok((u64::from(b & 0x3f), false)),
            1 => Ok(((u64::from(b & 0x3f) << 8) | u64::from(self.u8()?), false)),
            3 => Ok((u64::from(b & 0x3f), true)),
            _ => match b {
                0x80 => {
                    let v = u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes"));
                    Ok((u64::from(v), false))
                }
                0x81 => {
                    let v = u64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes"));
                    Ok((v, false))
                }
                _ => Err(Malformed::new(format!("unknown length encoding {b:#04x}"))),
            },
        }
    }

    /// A length (the special-encoding bit is ignored, as redis-server's `rdbLoadLen`).
    pub fn length(&mut self) -> DecResult<u64> {
        Ok(self.len_enc()?.0)
    }

    /// A count of items that each take at least `min_item` bytes: never larger than what
    /// the remaining bytes could hold (so a corrupt count cannot allocate gigabytes).
    pub fn count(&mut self, min_item: usize) -> DecResult<usize> {
        let n = self.length()?;
        if n.saturating_mul(min_item.max(1) as u64) > self.remaining() as u64 {
            return Err(Malformed::new("count larger than the data"));
        }
        Ok(n as usize)
    }

    /// A string in any of its encodings.
    pub fn string(&mut self) -> DecResult<Vec<u8>> {
        let (v, enc) = self.len_enc()?;
        if !enc {
            let n = usize::try_from(v).map_err(|_| Malformed::new("string too long"))?;
            return Ok(self.take(n)?.to_vec());
        }
        match v as u8 {
            ENC_INT8 => Ok((self.take(1)?[0] as i8).to_string().into_bytes()),
            ENC_INT16 => Ok(
                i16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes"))
                    .to_string()
                    .into_bytes(),
            ),
            ENC_INT32 => Ok(
                i32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes"))
                    .to_string()
                    .into_bytes(),
            ),
            ENC_LZF => {
                let clen = self.length()?;
                let len = self.length()?;
                let clen = usize::try_from(clen).map_err(|_| Malformed::new("LZF too long"))?;
                let data = self.take(clen)?;
                // LZF expands at most ~1:100 per control byte run; refuse absurd claims
                // before allocating.
                if len == 0 || len > (clen as u64).saturating_mul(128).saturating_add(64) {
                    return Err(Malformed::new("invalid LZF lengths"));
                }
                let out = lzf::decompress(data, len as usize)
                    .map_err(|_| Malformed::new("invalid LZF compressed string"))?;
                if out.len() as u64 != len {
                    return Err(Malformed::new("invalid LZF compressed string"));
                }
                Ok(out)
            }
            e => Err(Malformed::new(format!("unknown string encoding {e}"))),
        }
    }

    /// A millisecond time (8 bytes little-endian).
    pub fn millis(&mut self) -> DecResult<i64> {
        Ok(i64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// A stream ID stored raw (16 bytes big-endian, as in the radix tree).
    pub fn raw_id(&mut self) -> DecResult<crate::structures::id::StreamId> {
        let b = self.take(16)?;
        Ok(crate::structures::id::StreamId::new(
            u64::from_be_bytes(b[..8].try_into().expect("8 bytes")),
            u64::from_be_bytes(b[8..].try_into().expect("8 bytes")),
        ))
    }
}

/// Appends RDB encodings to a buffer.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, b: u8) {
        self.buf.push(b);
    }

    pub fn length(&mut self, v: u64) {
        if v < 1 << 6 {
            self.buf.push(v as u8);
        } else if v < 1 << 14 {
            self.buf.push(0x40 | (v >> 8) as u8);
            self.buf.push(v as u8);
        } else if v <= u64::from(u32::MAX) {
            self.buf.push(0x80);
            self.buf.extend_from_slice(&(v as u32).to_be_bytes());
        } else {
            self.buf.push(0x81);
            self.buf.extend_from_slice(&v.to_be_bytes());
        }
    }

    /// A string, integer-encoded or LZF-compressed when redis-server would.
    pub fn string(&mut self, s: &[u8]) {
        if s.len() <= 11 {
            if let Some(v) = string2ll(s) {
                if let Ok(b) = i8::try_from(v) {
                    self.buf.extend_from_slice(&[0xC0 | ENC_INT8, b as u8]);
                    return;
                } else if let Ok(h) = i16::try_from(v) {
                    self.buf.push(0xC0 | ENC_INT16);
                    self.buf.extend_from_slice(&h.to_le_bytes());
                    return;
                } else if let Ok(w) = i32::try_from(v) {
                    self.buf.push(0xC0 | ENC_INT32);
                    self.buf.extend_from_slice(&w.to_le_bytes());
                    return;
                }
            }
        }
        if s.len() > 20 {
            if let Ok(c) = lzf::compress(s) {
                // Worth it only when at least four bytes are saved, as in redis-server.
                if c.len() + 4 <= s.len() {
                    self.buf.push(0xC0 | ENC_LZF);
                    self.length(c.len() as u64);
                    self.length(s.len() as u64);
                    self.buf.extend_from_slice(&c);
                    return;
                }
            }
        }
        self.length(s.len() as u64);
        self.buf.extend_from_slice(s);
    }

    pub fn millis(&mut self, t: i64) {
        self.buf.extend_from_slice(&t.to_le_bytes());
    }

    pub fn raw_id(&mut self, id: crate::structures::id::StreamId) {
        self.buf.extend_from_slice(&id.ms.to_be_bytes());
        self.buf.extend_from_slice(&id.seq.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_matches_redis_test_vector() {
        // redis-server's crc64.c self-test: crc64(0, "123456789") = 0xe9c6d914c4b8d9ca.
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn lengths_round_trip() {
        for v in [
            0u64,
            63,
            64,
            16383,
            16384,
            u32::MAX as u64,
            u32::MAX as u64 + 1,
            u64::MAX,
        ] {
            let mut w = Writer::default();
            w.length(v);
            let mut r = Reader::new(&w.buf);
            assert_eq!(r.length().unwrap(), v);
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn strings_round_trip_in_every_encoding() {
        let long = b"abcabcabcabcabcabcabcabcabcabcabcabcabcabc".to_vec();
        for s in [
            b"".to_vec(),
            b"12".to_vec(),
            b"-129".to_vec(),
            b"70000".to_vec(),
            b"-2147483648".to_vec(),
            b"007".to_vec(),
            long.clone(),
        ] {
            let mut w = Writer::default();
            w.string(&s);
            let mut r = Reader::new(&w.buf);
            assert_eq!(r.string().unwrap(), s);
            assert_eq!(r.remaining(), 0);
        }
        let mut w = Writer::default();
        w.string(&long);
        assert_eq!(w.buf[0], 0xC3, "compressible strings use LZF");
    }
}
