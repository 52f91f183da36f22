//! Redis's number parsers, reproduced byte for byte.
//!
//! redis-server accepts and rejects numeric arguments with two C helpers: a strict
//! `string2ll` (no signs but `-`, no spaces, no leading zeros, at most 20 characters) and
//! `string2ull`, which falls back to libc's `strtoull` and therefore accepts leading white
//! space, a `+` or `-` sign and leading zeros. Malformed-input tests compare our errors
//! with the server's, so both are reproduced here rather than approximated with
//! `str::parse`.

/// Longest decimal representation Redis considers (`LONG_STR_SIZE`).
pub const LONG_STR_SIZE: usize = 21;

/// Strict signed 64-bit parse (Redis `string2ll`): the whole input must be the canonical
/// decimal form of an `i64` (`-0`, leading zeros, `+` and white space are rejected).
pub fn string2ll(s: &[u8]) -> Option<i64> {
    let slen = s.len();
    if slen == 0 || slen >= LONG_STR_SIZE {
        return None;
    }
    if slen == 1 && s[0] == b'0' {
        return Some(0);
    }
    let mut p = 0usize;
    let negative = s[0] == b'-';
    if negative {
        p += 1;
        if p == slen {
            return None;
        }
    }
    if !(b'1'..=b'9').contains(&s[p]) {
        return None;
    }
    let mut v: u64 = u64::from(s[p] - b'0');
    p += 1;
    while p < slen && s[p].is_ascii_digit() {
        v = v.checked_mul(10)?.checked_add(u64::from(s[p] - b'0'))?;
        p += 1;
    }
    if p < slen {
        return None;
    }
    if negative {
        if v > (i64::MAX as u64) + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// The bytes a C string function sees (kept beside the error texts that print them).
pub use crate::error::c_str;

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// glibc `strtoull(s, &end, 10)` followed by Redis's acceptance test (non-empty input,
/// every byte consumed, no overflow).
fn strtoull_full(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut p = 0usize;
    while p < s.len() && is_c_space(s[p]) {
        p += 1;
    }
    let mut negative = false;
    if p < s.len() && (s[p] == b'+' || s[p] == b'-') {
        negative = s[p] == b'-';
        p += 1;
    }
    let digits_start = p;
    let mut v: u64 = 0;
    let mut overflow = false;
    while p < s.len() && s[p].is_ascii_digit() {
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(s[p] - b'0')))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
        p += 1;
    }
    if p == digits_start {
        // No conversion: endptr is the start of the string, which is not its end.
        return None;
    }
    if overflow || p != s.len() {
        return None;
    }
    Some(if negative { v.wrapping_neg() } else { v })
}

/// Redis `string2ull` on a C string (the input is cut at its first NUL byte).
pub fn string2ull(s: &[u8]) -> Option<u64> {
    let s = c_str(s);
    if let Some(ll) = string2ll(s) {
        return if ll < 0 { None } else { Some(ll as u64) };
    }
    strtoull_full(s)
}

/// Format an `i64` the way Redis prints integers.
pub fn fmt_i64(v: i64) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string2ll_accepts_only_canonical_integers() {
        assert_eq!(string2ll(b"0"), Some(0));
        assert_eq!(string2ll(b"-1"), Some(-1));
        assert_eq!(string2ll(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"-0",
            b"01",
            b"+1",
            b" 1",
            b"1 ",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"1.0",
            b"123456789012345678901",
        ] {
            assert_eq!(string2ll(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn string2ull_follows_strtoull_fallback() {
        assert_eq!(string2ull(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(string2ull(b"18446744073709551616"), None);
        assert_eq!(string2ull(b"007"), Some(7));
        assert_eq!(string2ull(b"+5"), Some(5));
        assert_eq!(string2ull(b" \t5"), Some(5));
        assert_eq!(string2ull(b"-0"), Some(0));
        assert_eq!(string2ull(b"-5"), None);
        assert_eq!(
            string2ull(b"-9223372036854775809"),
            Some(9223372036854775807)
        );
        assert_eq!(string2ull(b""), None);
        assert_eq!(string2ull(b" "), None);
        assert_eq!(string2ull(b"+"), None);
        assert_eq!(string2ull(b"5 "), None);
        assert_eq!(string2ull(b"5\0junk"), Some(5));
        assert_eq!(string2ull(b"0000000000000000000000000000001"), Some(1));
    }
}
