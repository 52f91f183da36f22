//! Stream IDs: a 128-bit `<ms>-<seq>` pair, ordered by milliseconds then sequence.
//!
//! Parsing follows redis-server exactly (see [`parse_id`]): `-` and `+` (unless strict),
//! `<ms>` alone (sequence supplied by the caller), `<ms>-<seq>`, `<ms>-*` where allowed,
//! and the C-library quirks of the numeric parts (leading `+`, white space and zeros are
//! accepted; the argument is read as a C string, up to its first NUL byte).

use std::fmt;

use crate::base::num::{c_str, string2ull};

/// A stream entry ID. The derived ordering compares `ms` first, then `seq`, which is the
/// order of entries in a stream and of the 128-bit big-endian keys of the radix tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// Unix time in milliseconds (or any 64-bit value chosen by the user).
    pub ms: u64,
    /// Sequence number within the millisecond.
    pub seq: u64,
}

impl StreamId {
    /// `0-0`, the smallest ID.
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// `18446744073709551615-18446744073709551615`, the largest ID.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// Build an ID from its two parts.
    pub const fn new(ms: u64, seq: u64) -> Self {
        StreamId { ms, seq }
    }

    /// Is this `0-0`?
    pub fn is_zero(&self) -> bool {
        self.ms == 0 && self.seq == 0
    }

    /// The successor of this ID, or `None` when it is [`StreamId::MAX`].
    pub fn incr(&self) -> Option<StreamId> {
        if self.seq == u64::MAX {
            if self.ms == u64::MAX {
                None
            } else {
                Some(StreamId {
                    ms: self.ms + 1,
                    seq: 0,
                })
            }
        } else {
            Some(StreamId {
                ms: self.ms,
                seq: self.seq + 1,
            })
        }
    }

    /// The predecessor of this ID, or `None` when it is `0-0`.
    pub fn decr(&self) -> Option<StreamId> {
        if self.seq == 0 {
            if self.ms == 0 {
                None
            } else {
                Some(StreamId {
                    ms: self.ms - 1,
                    seq: u64::MAX,
                })
            }
        } else {
            Some(StreamId {
                ms: self.ms,
                seq: self.seq - 1,
            })
        }
    }

    /// The 128-bit big-endian encoding used as radix-tree key.
    pub fn to_key(&self) -> [u8; 16] {
        let mut k = [0u8; 16];
        k[..8].copy_from_slice(&self.ms.to_be_bytes());
        k[8..].copy_from_slice(&self.seq.to_be_bytes());
        k
    }

    /// Inverse of [`StreamId::to_key`].
    pub fn from_key(k: &[u8; 16]) -> Self {
        let mut ms = [0u8; 8];
        let mut seq = [0u8; 8];
        ms.copy_from_slice(&k[..8]);
        seq.copy_from_slice(&k[8..]);
        StreamId {
            ms: u64::from_be_bytes(ms),
            seq: u64::from_be_bytes(seq),
        }
    }

    /// The `<ms>-<seq>` text as bytes, as sent in replies.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24);
        self.write_to(&mut out);
        out
    }

    /// Append the `<ms>-<seq>` text to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        match self.common_text() {
            // A copy of a known length: no call, no length test (the Spark dedup writes
            // one per row).
            Some(t) => out.extend_from_slice(&t),
            None => out.extend_from_slice(self.text().as_bytes()),
        }
    }

    /// The `<ms>-<seq>` text on the stack (no allocation: the client makes its ID
    /// objects from it).
    pub fn text(&self) -> IdText {
        let mut t = IdText {
            buf: [0u8; 41],
            len: 15,
        };
        if let Some(common) = self.common_text() {
            t.buf[..15].copy_from_slice(&common);
        } else {
            let (mut ms, mut seq) = (itoa::Buffer::new(), itoa::Buffer::new());
            let (a, b) = (
                ms.format(self.ms).as_bytes(),
                seq.format(self.seq).as_bytes(),
            );
            t.buf[..a.len()].copy_from_slice(a);
            t.buf[a.len()] = b'-';
            t.buf[a.len() + 1..a.len() + 1 + b.len()].copy_from_slice(b);
            t.len = (a.len() + 1 + b.len()) as u8;
        }
        t
    }

    /// The text of the common ID -- a 13-digit millisecond time (the years 2001 to 2286)
    /// and a one-digit sequence -- as one fixed 15-byte pattern (formatting each part on
    /// its own cost two short copies); `None` for any other ID.
    fn common_text(&self) -> Option<[u8; 15]> {
        if !(1_000_000_000_000..10_000_000_000_000).contains(&self.ms) || self.seq >= 10 {
            return None;
        }
        let mut buf = [0u8; 15];
        let mut v = self.ms;
        for k in (0..6).rev() {
            let pair = DIGIT_PAIRS[(v % 100) as usize];
            buf[1 + 2 * k] = pair[0];
            buf[2 + 2 * k] = pair[1];
            v /= 100;
        }
        buf[0] = b'0' + v as u8;
        buf[13] = b'-';
        buf[14] = b'0' + self.seq as u8;
        Some(buf)
    }
}

/// The text of a [`StreamId`] (at most 20 + 1 + 20 bytes), from [`StreamId::text`].
#[derive(Clone, Copy)]
pub struct IdText {
    buf: [u8; 41],
    len: u8,
}

impl IdText {
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }

    pub fn as_str(&self) -> &str {
        // ASCII digits and '-' only.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}

/// The two decimal digits of each number below 100.
const DIGIT_PAIRS: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// Result of [`parse_id`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedId {
    /// The ID; for the `<ms>-*` form the sequence is 0 and `seq_given` is false.
    pub id: StreamId,
    /// False only for the `<ms>-*` form (accepted when `allow_seq_star` is set).
    pub seq_given: bool,
}

/// Parse a stream ID argument exactly as redis-server does.
///
/// * `missing_seq`: the sequence used for the `<ms>` form (0 for range starts,
///   `u64::MAX` for range ends).
/// * `strict`: reject the special IDs `-` and `+`.
/// * `allow_seq_star`: accept `<ms>-*` (XADD only).
///
/// Returns `None` for an invalid ID; callers reply with
/// [`crate::error::CmdError::invalid_stream_id`].
pub fn parse_id(
    arg: &[u8],
    missing_seq: u64,
    strict: bool,
    allow_seq_star: bool,
) -> Option<ParsedId> {
    if let Some(id) = canonical_id(arg) {
        return Some(ParsedId {
            id,
            seq_given: true,
        });
    }
    // Redis copies the argument into a 128-byte buffer and rejects longer ones.
    if arg.len() > 127 {
        return None;
    }
    let s = c_str(arg);
    if strict && s.len() == 1 && (s[0] == b'-' || s[0] == b'+') {
        return None;
    }
    if s.len() == 1 && s[0] == b'-' {
        return Some(ParsedId {
            id: StreamId::MIN,
            seq_given: true,
        });
    }
    if s.len() == 1 && s[0] == b'+' {
        return Some(ParsedId {
            id: StreamId::MAX,
            seq_given: true,
        });
    }
    match s.iter().position(|&b| b == b'-') {
        Some(dash) => {
            let ms = string2ull(&s[..dash])?;
            let rest = &s[dash + 1..];
            if allow_seq_star && rest == b"*" {
                Some(ParsedId {
                    id: StreamId { ms, seq: 0 },
                    seq_given: false,
                })
            } else {
                let seq = string2ull(rest)?;
                Some(ParsedId {
                    id: StreamId { ms, seq },
                    seq_given: true,
                })
            }
        }
        None => {
            let ms = string2ull(s)?;
            Some(ParsedId {
                id: StreamId {
                    ms,
                    seq: missing_seq,
                },
                seq_given: true,
            })
        }
    }
}

/// The value of a canonical decimal of at most 18 digits (no sign, no leading zero): what
/// [`string2ull`] answers for it, computed without its general checks.
#[inline]
fn canonical_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 18 || (s[0] == b'0' && s.len() > 1) {
        return None;
    }
    let mut v = 0u64;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    Some(v)
}

/// `<ms>-<seq>` with both parts canonical decimals of at most 18 digits: the form IDs
/// are written in (the IDs XADD returns), parsed in one pass. Anything else (`None`)
/// takes the general parse, which gives these the same value.
#[inline]
fn canonical_id(arg: &[u8]) -> Option<StreamId> {
    let dash = arg.iter().position(|&b| b == b'-')?;
    let ms = canonical_u64(&arg[..dash])?;
    let seq = canonical_u64(&arg[dash + 1..])?;
    Some(StreamId { ms, seq })
}

/// Parse a range bound that may be exclusive (`(` prefix). Returns the ID and whether the
/// bound is exclusive. An exclusive bound is parsed strictly (`(-` and `(+` are invalid).
pub fn parse_interval_id(arg: &[u8], missing_seq: u64) -> Option<(StreamId, bool)> {
    if arg.len() > 1 && arg[0] == b'(' {
        parse_id(&arg[1..], missing_seq, true, false).map(|p| (p.id, true))
    } else {
        parse_id(arg, missing_seq, false, false).map(|p| (p.id, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed-width path (13-digit ms, one-digit sequence) and the general one both
    /// write what `Display` writes, at the edges of the fixed-width range and away.
    #[test]
    fn text_and_write_to_give_ms_dash_seq_at_every_width() {
        let ms_values = [
            0,
            7,
            999_999_999_999,
            1_000_000_000_000,
            1_700_000_000_123,
            1_234_567_890_109,
            9_999_999_999_999,
            10_000_000_000_000,
            u64::MAX,
        ];
        for ms in ms_values {
            for seq in [0, 1, 9, 10, 12_345, u64::MAX] {
                let id = StreamId::new(ms, seq);
                let mut out = b"x".to_vec();
                id.write_to(&mut out);
                assert_eq!(out, format!("x{id}").into_bytes());
                assert_eq!(id.to_bytes(), format!("{ms}-{seq}").into_bytes());
                assert_eq!(id.text().as_str(), format!("{ms}-{seq}"));
            }
        }
    }

    /// The 15-byte form against `Display` over random 13-digit times (seeded).
    #[test]
    fn text_of_random_thirteen_digit_times() {
        let mut rng = crate::test_rng::Rng::new(0x05ee_d1d5);
        for _ in 0..20_000 {
            let ms = 1_000_000_000_000 + rng.below(9_000_000_000_000);
            let id = StreamId::new(ms, rng.below(10));
            assert_eq!(id.text().as_str(), id.to_string());
            let mut out = Vec::new();
            id.write_to(&mut out);
            assert_eq!(out, id.to_string().into_bytes());
        }
    }

    fn p(s: &str) -> Option<StreamId> {
        parse_id(s.as_bytes(), 0, false, false).map(|x| x.id)
    }

    #[test]
    fn parses_all_forms() {
        assert_eq!(p("1-2"), Some(StreamId::new(1, 2)));
        assert_eq!(p("5"), Some(StreamId::new(5, 0)));
        assert_eq!(
            parse_id(b"5", u64::MAX, false, false).unwrap().id,
            StreamId::new(5, u64::MAX)
        );
        assert_eq!(p("-"), Some(StreamId::MIN));
        assert_eq!(p("+"), Some(StreamId::MAX));
        assert_eq!(parse_id(b"-", 0, true, false), None);
        assert_eq!(parse_id(b"+", 0, true, false), None);
        let star = parse_id(b"7-*", 0, true, true).unwrap();
        assert_eq!((star.id, star.seq_given), (StreamId::new(7, 0), false));
        assert_eq!(parse_id(b"7-*", 0, true, false), None);
        assert_eq!(
            p("18446744073709551615-18446744073709551615"),
            Some(StreamId::MAX)
        );
        assert_eq!(p("18446744073709551616-0"), None);
        assert_eq!(p("1-"), None);
        assert_eq!(p("-1"), None);
        assert_eq!(p("abc"), None);
        assert_eq!(p("1-2-3"), None);
        assert_eq!(p("+5-3"), Some(StreamId::new(5, 3)));
        assert_eq!(p("1--0"), Some(StreamId::new(1, 0)));
        assert_eq!(p(&"1".repeat(128)), None);
    }

    #[test]
    fn interval_bounds() {
        assert_eq!(
            parse_interval_id(b"(1-1", 0),
            Some((StreamId::new(1, 1), true))
        );
        assert_eq!(parse_interval_id(b"(-", 0), None);
        assert_eq!(parse_interval_id(b"(+", 0), None);
        assert_eq!(parse_interval_id(b"(", 0), None);
        assert_eq!(parse_interval_id(b"-", 0), Some((StreamId::MIN, false)));
    }

    #[test]
    fn incr_decr_and_keys() {
        assert_eq!(StreamId::MAX.incr(), None);
        assert_eq!(StreamId::MIN.decr(), None);
        assert_eq!(StreamId::new(1, u64::MAX).incr(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::new(2, 0).decr(), Some(StreamId::new(1, u64::MAX)));
        let id = StreamId::new(0x0102_0304_0506_0708, 9);
        assert_eq!(StreamId::from_key(&id.to_key()), id);
        assert!(StreamId::new(1, 0).to_key() > StreamId::new(0, u64::MAX).to_key());
        assert_eq!(StreamId::new(12, 3).to_bytes(), b"12-3");
    }
}
