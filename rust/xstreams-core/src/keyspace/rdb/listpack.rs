//! Redis's listpack: the byte format of a stream node in RDB files and DUMP payloads.
//!
//! A listpack is a 6-byte header (total bytes as u32 LE, element count as u16 LE, 65535
//! meaning "count it"), elements, and the end byte `0xFF`. Each element is an encoding
//! byte (with an integer of 7, 13, 16, 24, 32 or 64 bits, or a string of 6-, 12- or
//! 32-bit length), its data, and a back-length: the byte size of encoding and data,
//! written so it can be read from its last byte backwards (`lpsize` has the sizes).
//! Strings that are canonical integers are stored as integers, as `lpAppend` does.

use super::codec::{DecResult, Malformed};
use crate::base::num::string2ll;
use crate::structures::lpsize::backlen_len;

const EOF: u8 = 0xFF;
const HDR: usize = 6;
const NUMELE_UNKNOWN: u16 = u16::MAX;

/// One element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl Item<'_> {
    /// The element as an integer (a string element that is a canonical integer also
    /// counts, as `lpGetInteger` does).
    pub fn int(&self) -> Option<i64> {
        match *self {
            Item::Int(v) => Some(v),
            Item::Str(s) => string2ll(s),
        }
    }

    /// The element as bytes (an integer as its decimal text).
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match *self {
            Item::Int(v) => std::borrow::Cow::Owned(v.to_string().into_bytes()),
            Item::Str(s) => std::borrow::Cow::Borrowed(s),
        }
    }
}

fn bad(msg: &str) -> Malformed {
    Malformed::new(format!("listpack: {msg}"))
}

/// Decode a whole listpack, checking the header, every element's bounds and
/// back-length, the element count and the end byte.
pub fn decode(lp: &[u8]) -> DecResult<Vec<Item<'_>>> {
    if lp.len() < HDR + 1 {
        return Err(bad("shorter than a header"));
    }
    let total = u32::from_le_bytes(lp[..4].try_into().expect("4 bytes")) as usize;
    if total != lp.len() {
        return Err(bad("header size differs from the data"));
    }
    let numele = u16::from_le_bytes(lp[4..6].try_into().expect("2 bytes"));
    let mut out = Vec::new();
    let mut p = HDR;
    loop {
        let b = *lp.get(p).ok_or_else(|| bad("no end byte"))?;
        if b == EOF {
            if p + 1 != lp.len() {
                return Err(bad("data after the end byte"));
            }
            break;
        }
        let need = |n: usize| -> DecResult<&[u8]> {
            lp.get(p..p + n).ok_or_else(|| bad("element overruns"))
        };
        let (item, enc_len) = if b & 0x80 == 0 {
            (Item::Int(i64::from(b & 0x7f)), 1)
        } else if b & 0xC0 == 0x80 {
            let l = usize::from(b & 0x3f);
            (Item::Str(&need(1 + l)?[1..]), 1 + l)
        } else if b & 0xE0 == 0xC0 {
            let d = need(2)?;
            let u = (i64::from(b & 0x1f) << 8) | i64::from(d[1]);
            let v = if u >= 1 << 12 { u - (1 << 13) } else { u };
            (Item::Int(v), 2)
        } else if b & 0xF0 == 0xE0 {
            let l = (usize::from(b & 0x0f) << 8) | usize::from(need(2)?[1]);
            (Item::Str(&need(2 + l)?[2..]), 2 + l)
        } else {
            match b {
                0xF0 => {
                    let l = u32::from_le_bytes(need(5)?[1..5].try_into().expect("4")) as usize;
                    let end = 5usize
                        .checked_add(l)
                        .ok_or_else(|| bad("string too long"))?;
                    (Item::Str(&need(end)?[5..]), end)
                }
                0xF1 => {
                    let d = need(3)?;
                    (Item::Int(i64::from(i16::from_le_bytes([d[1], d[2]]))), 3)
                }
                0xF2 => {
                    let d = need(4)?;
                    let u = i32::from_le_bytes([0, d[1], d[2], d[3]]) >> 8;
                    (Item::Int(i64::from(u)), 4)
                }
                0xF3 => {
                    let d = need(5)?;
                    let v = i32::from_le_bytes(d[1..5].try_into().expect("4"));
                    (Item::Int(i64::from(v)), 5)
                }
                0xF4 => {
                    let d = need(9)?;
                    (
                        Item::Int(i64::from_le_bytes(d[1..9].try_into().expect("8"))),
                        9,
                    )
                }
                _ => return Err(bad("unknown element encoding")),
            }
        };
        let bl = backlen_len(enc_len as u64) as usize;
        let mut want = [0u8; 5];
        put_backlen(&mut want, enc_len as u64);
        if lp.get(p + enc_len..p + enc_len + bl) != Some(&want[..bl]) {
            return Err(bad("bad back-length"));
        }
        out.push(item);
        p += enc_len + bl;
    }
    if numele != NUMELE_UNKNOWN && usize::from(numele) != out.len() {
        return Err(bad("element count differs from the header"));
    }
    Ok(out)
}

/// Write the back-length of an element of `l` bytes into `buf`; returns its size.
fn put_backlen(buf: &mut [u8; 5], l: u64) -> usize {
    let n = backlen_len(l) as usize;
    for (i, slot) in buf.iter_mut().take(n).enumerate() {
        let shift = 7 * (n - 1 - i);
        let group = ((l >> shift) & 127) as u8;
        *slot = if i == 0 { group } else { group | 128 };
    }
    n
}

/// Builds a listpack.
pub struct Builder {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            buf: vec![0; HDR],
            count: 0,
        }
    }
}

impl Builder {
    fn finish_element(&mut self, start: usize) {
        let enc_len = (self.buf.len() - start) as u64;
        let mut bl = [0u8; 5];
        let n = put_backlen(&mut bl, enc_len);
        self.buf.extend_from_slice(&bl[..n]);
        self.count += 1;
    }

    /// Append an integer in its smallest encoding.
    pub fn int(&mut self, v: i64) {
        self.int_wide(v, 0);
    }

    /// Append an integer using an encoding at least `min_bytes` long (1 = smallest);
    /// used to pad a node to the size redis-server would have.
    pub fn int_wide(&mut self, v: i64, min_bytes: usize) {
        let start = self.buf.len();
        if (0..=127).contains(&v) && min_bytes <= 1 {
            self.buf.push(v as u8);
        } else if (-4096..=4095).contains(&v) && min_bytes <= 2 {
            let u = if v < 0 { (1 << 13) + v } else { v } as u16;
            self.buf.push(0xC0 | (u >> 8) as u8);
            self.buf.push(u as u8);
        } else if i16::try_from(v).is_ok() && min_bytes <= 3 {
            self.buf.push(0xF1);
            self.buf.extend_from_slice(&(v as i16).to_le_bytes());
        } else if (-8_388_608..=8_388_607).contains(&v) && min_bytes <= 4 {
            self.buf.push(0xF2);
            self.buf.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
        } else if i32::try_from(v).is_ok() && min_bytes <= 5 {
            self.buf.push(0xF3);
            self.buf.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            self.buf.push(0xF4);
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        self.finish_element(start);
    }

    /// Append a string (as an integer when it is a canonical one).
    pub fn str(&mut self, s: &[u8]) {
        if let Some(v) = string2ll(s) {
            return self.int(v);
        }
        let start = self.buf.len();
        let l = s.len();
        if l < 64 {
            self.buf.push(0x80 | l as u8);
        } else if l < 4096 {
            self.buf.push(0xE0 | (l >> 8) as u8);
            self.buf.push(l as u8);
        } else {
            self.buf.push(0xF0);
            self.buf.extend_from_slice(&(l as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(s);
        self.finish_element(start);
    }

    /// Bytes the listpack would have if finished now.
    pub fn size(&self) -> usize {
        self.buf.len() + 1
    }

    /// The finished listpack.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(EOF);
        let total = self.buf.len() as u32;
        self.buf[..4].copy_from_slice(&total.to_le_bytes());
        let n = if self.count < usize::from(NUMELE_UNKNOWN) {
            self.count as u16
        } else {
            NUMELE_UNKNOWN
        };
        self.buf[4..6].copy_from_slice(&n.to_le_bytes());
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encoding_round_trips() {
        let ints = [
            0i64,
            127,
            128,
            -1,
            -4096,
            4095,
            4096,
            -32768,
            32767,
            8_388_607,
            -8_388_608,
            i32::MAX as i64,
            i32::MIN as i64,
            i64::MAX,
            i64::MIN,
        ];
        let long = vec![b'x'; 5000];
        let mid = vec![b'y'; 300];
        let mut b = Builder::default();
        for v in ints {
            b.int(v);
        }
        for w in 1..=9 {
            b.int_wide(1, w);
        }
        b.str(b"hello");
        b.str(&mid);
        b.str(&long);
        b.str(b"12");
        let lp = b.finish();
        let items = decode(&lp).unwrap();
        for (i, v) in ints.iter().enumerate() {
            assert_eq!(items[i], Item::Int(*v));
        }
        assert!(items[ints.len()..ints.len() + 9]
            .iter()
            .all(|i| *i == Item::Int(1)));
        let rest = &items[ints.len() + 9..];
        assert_eq!(rest[0], Item::Str(b"hello"));
        assert_eq!(rest[1], Item::Str(&mid));
        assert_eq!(rest[2], Item::Str(&long));
        assert_eq!(rest[3], Item::Int(12));
    }

    #[test]
    fn damage_is_an_error() {
        let mut b = Builder::default();
        b.str(b"abc");
        b.int(300);
        let lp = b.finish();
        for cut in 0..lp.len() {
            assert!(decode(&lp[..cut]).is_err());
        }
        let mut bad_backlen = lp.clone();
        bad_backlen[10] ^= 1;
        assert!(decode(&bad_backlen).is_err());
    }
}
