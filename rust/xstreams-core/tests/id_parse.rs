//! Stream-ID parsing: `xstreams_core::structures::id::parse_id` / `parse_interval_id` against a
//! literal transcription of redis-server's `streamGenericParseIDOrReply`,
//! `streamParseIntervalIDOrReply`, `string2ll`, `string2ull` and glibc `strtoull`
//! (the C-string view: everything after a NUL byte is ignored; 128-byte buffer).
//!
//! Cases: `PROPTEST_CASES` (default 4096 per property; each case is microseconds).
//!
//! Failing cases are replayable: proptest saves the seed of each failure in
//! `tests/id_parse.proptest-regressions` (committed; replayed before any new case on every
//! run) and prints the shrunk input. `PROPTEST_RNG_SEED=<u64>` fixes the seed of a whole
//! run (see docs/reliability.md).

use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, FileFailurePersistence};
use xstreams_core::structures::id::{parse_id, parse_interval_id, StreamId};
use xstreams_core::{Reply, Store};

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

// ------------------------------------------------------------------ the C reference

/// The C string seen by `strlen`/`strchr`: bytes up to the first NUL.
fn cstr(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

/// util.c `string2ll(s, slen)`.
fn c_string2ll(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() >= 21 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    if !digits.iter().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // At most 20 digits: fits in u128.
    let v: u128 = std::str::from_utf8(digits).unwrap().parse().unwrap();
    if v > u64::MAX as u128 {
        return None;
    }
    if neg {
        if v > (i64::MAX as u128) + 1 {
            return None;
        }
        Some((-(v as i128)) as i64)
    } else if v > i64::MAX as u128 {
        None
    } else {
        Some(v as i64)
    }
}

/// glibc `strtoull(s, &end, 10)`: (value, bytes consumed, ERANGE).
fn c_strtoull(s: &[u8]) -> (u64, usize, bool) {
    let mut p = 0;
    while p < s.len() && matches!(s[p], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        p += 1;
    }
    let mut neg = false;
    if p < s.len() && (s[p] == b'+' || s[p] == b'-') {
        neg = s[p] == b'-';
        p += 1;
    }
    let start = p;
    let mut acc: u128 = 0;
    let mut overflow = false;
    while p < s.len() && s[p].is_ascii_digit() {
        acc = acc * 10 + (s[p] - b'0') as u128;
        if acc > u64::MAX as u128 {
            overflow = true;
            acc = u64::MAX as u128 + 1; // keep it bounded
        }
        p += 1;
    }
    if p == start {
        return (0, 0, false); // no conversion: endptr = s
    }
    if overflow {
        return (u64::MAX, p, true);
    }
    let v = acc as u64;
    (if neg { v.wrapping_neg() } else { v }, p, false)
}

/// util.c `string2ull(const char *s, ...)` on a C string.
fn c_string2ull(s: &[u8]) -> Option<u64> {
    if let Some(ll) = c_string2ll(s) {
        return if ll < 0 { None } else { Some(ll as u64) };
    }
    let (v, end, erange) = c_strtoull(s);
    if erange || s.is_empty() || end != s.len() {
        return None;
    }
    Some(v)
}

/// `streamGenericParseIDOrReply(c, o, id, missing_seq, strict, seq_given)`; returns the
/// ID and the `seq_given` flag (only meaningful when `allow_star`).
fn c_parse(
    arg: &[u8],
    missing_seq: u64,
    strict: bool,
    allow_star: bool,
) -> Option<(StreamId, bool)> {
    if arg.len() > 127 {
        return None;
    }
    let buf = cstr(arg);
    let b0 = buf.first().copied().unwrap_or(0);
    let b1 = buf.get(1).copied().unwrap_or(0);
    if strict && (b0 == b'-' || b0 == b'+') && b1 == 0 {
        return None;
    }
    if b0 == b'-' && b1 == 0 {
        return Some((StreamId::MIN, true));
    }
    if b0 == b'+' && b1 == 0 {
        return Some((StreamId::MAX, true));
    }
    match buf.iter().position(|&c| c == b'-') {
        Some(dot) => {
            let ms = c_string2ull(&buf[..dot])?;
            let rest = &buf[dot + 1..];
            if allow_star && rest == b"*" {
                Some((StreamId::new(ms, 0), false))
            } else {
                Some((StreamId::new(ms, c_string2ull(rest)?), true))
            }
        }
        None => Some((StreamId::new(c_string2ull(buf)?, missing_seq), true)),
    }
}

/// `streamParseIntervalIDOrReply` with `exclude != NULL`.
fn c_interval(arg: &[u8], missing_seq: u64) -> Option<(StreamId, bool)> {
    if arg.len() > 1 && arg[0] == b'(' {
        c_parse(&arg[1..], missing_seq, true, false).map(|(id, _)| (id, true))
    } else {
        c_parse(arg, missing_seq, false, false).map(|(id, _)| (id, false))
    }
}

// ------------------------------------------------------------------ strategies

/// Bytes drawn mostly from the characters that matter to the parsers.
fn id_bytes() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        6 => prop::sample::select(b"0123456789".to_vec()),
        2 => Just(b'-'),
        1 => Just(b'+'),
        1 => Just(b'*'),
        1 => Just(b'('),
        1 => Just(b' '),
        1 => prop::sample::select(vec![b'\t', b'\n', 0x0b, 0x0c, b'\r']),
        1 => Just(0u8),
        1 => any::<u8>(),
    ];
    let numeric = prop_oneof![
        Just("18446744073709551615".to_string()),
        Just("18446744073709551616".to_string()),
        Just("9223372036854775807".to_string()),
        Just("9223372036854775808".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("00000000000000000000001".to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
    ];
    prop_oneof![
        4 => prop::collection::vec(atom, 0..30),
        3 => (numeric.clone(), prop::sample::select(vec!["-", "--", "- ", "-+", "-\0"]), numeric.clone())
            .prop_map(|(a, d, b)| format!("{a}{d}{b}").into_bytes()),
        1 => (1usize..3, numeric).prop_map(|(n, a)| format!("{}{a}", "0".repeat(n * 60)).into_bytes()),
    ]
}

proptest! {
    #![proptest_config(PtConfig {
        cases: cases(4096),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..PtConfig::default()
    })]

    /// `parse_id` accepts and rejects exactly what redis-server does, with the same value.
    #[test]
    fn parse_id_matches_c(arg in id_bytes(), missing in prop_oneof![Just(0u64), Just(u64::MAX)],
                          strict in any::<bool>(), star in any::<bool>()) {
        let want = c_parse(&arg, missing, strict, star);
        let got = parse_id(&arg, missing, strict, star).map(|p| (p.id, p.seq_given));
        prop_assert_eq!(got, want, "arg {:?}", String::from_utf8_lossy(&arg));
    }

    /// Interval bounds (`(` prefix) as `streamParseIntervalIDOrReply`.
    #[test]
    fn parse_interval_matches_c(tail in id_bytes(), paren in any::<bool>(),
                                missing in prop_oneof![Just(0u64), Just(u64::MAX)]) {
        let mut arg = if paren { b"(".to_vec() } else { Vec::new() };
        arg.extend_from_slice(&tail);
        prop_assert_eq!(parse_interval_id(&arg, missing), c_interval(&arg, missing),
                        "arg {:?}", String::from_utf8_lossy(&arg));
    }

    /// Every ID survives text round trips, including the bare-ms and padded forms.
    #[test]
    fn id_round_trips(ms in prop_oneof![any::<u64>(), Just(u64::MAX), Just(0u64)],
                      seq in prop_oneof![any::<u64>(), Just(u64::MAX), Just(0u64)],
                      pad in 0usize..100) {
        let id = StreamId::new(ms, seq);
        let text = id.to_bytes();
        prop_assert_eq!(text.clone(), format!("{ms}-{seq}").into_bytes());
        prop_assert_eq!(id.to_string().into_bytes(), text.clone());
        prop_assert_eq!(parse_id(&text, 7, true, false).map(|p| p.id), Some(id));
        prop_assert_eq!(StreamId::from_key(&id.to_key()), id);
        let padded = format!("{}{ms}-{}{seq}", "0".repeat(pad), "0".repeat(pad));
        let want = if padded.len() > 127 { None } else { Some(id) };
        prop_assert_eq!(parse_id(padded.as_bytes(), 0, true, false).map(|p| p.id), want);
        prop_assert_eq!(parse_id(ms.to_string().as_bytes(), seq, true, false).map(|p| p.id), Some(id));
        // Ordering of keys equals ID ordering.
        let other = StreamId::new(seq, ms);
        prop_assert_eq!(id.to_key().cmp(&other.to_key()), id.cmp(&other));
        // incr/decr are inverse where defined.
        if let Some(n) = id.incr() { prop_assert_eq!(n.decr(), Some(id)); prop_assert!(n > id); }
        if let Some(p) = id.decr() { prop_assert_eq!(p.incr(), Some(id)); prop_assert!(p < id); }
    }

    /// Through the command layer: XRANGE accepts a start/end exactly when the C parser
    /// does (and rejects `(` bounds that cannot be incremented/decremented).
    #[test]
    fn xrange_bounds_through_commands(a in id_bytes(), b in id_bytes(), pa in any::<bool>(), pb in any::<bool>()) {
        let store = Store::default();
        store.execute(&[b"XADD", b"s", b"1-1", b"f", b"v"]);
        let mut start = if pa { b"(".to_vec() } else { vec![] };
        start.extend_from_slice(&a);
        let mut end = if pb { b"(".to_vec() } else { vec![] };
        end.extend_from_slice(&b);
        let r = store.execute(&[b"XRANGE", b"s", &start, &end]);
        let s_ok = c_interval(&start, 0).and_then(|(id, ex)| if ex { id.incr() } else { Some(id) });
        let e_ok = c_interval(&end, u64::MAX).and_then(|(id, ex)| if ex { id.decr() } else { Some(id) });
        match (s_ok, e_ok) {
            (Some(s), Some(e)) => {
                let want = if s <= StreamId::new(1, 1) && StreamId::new(1, 1) <= e { 1 } else { 0 };
                match r {
                    Reply::Array(v) => prop_assert_eq!(v.len(), want),
                    other => prop_assert!(false, "unexpected {:?}", other),
                }
            }
            _ => prop_assert!(r.is_error(), "expected an error, got {:?}", r),
        }
    }
}

/// Hand-checked C quirks (each derived from util.c / glibc semantics).
#[test]
fn c_quirks() {
    let p = |s: &[u8]| parse_id(s, 0, true, false).map(|x| x.id);
    let id = StreamId::new;
    assert_eq!(
        p(b"+5-3"),
        Some(id(5, 3)),
        "leading + goes through strtoull"
    );
    assert_eq!(p(b" \t5-3"), Some(id(5, 3)), "leading white space");
    assert_eq!(p(b"5 -3"), None, "trailing white space in ms");
    assert_eq!(p(b"05-03"), Some(id(5, 3)), "leading zeros");
    assert_eq!(p(b"-0"), None, "empty ms");
    assert_eq!(
        p(b"1--0"),
        Some(id(1, 0)),
        "\"-0\" seq: string2ll fails, strtoull gives 0"
    );
    assert_eq!(
        p(b"1--1"),
        None,
        "string2ll parses -1: negative is rejected"
    );
    assert_eq!(p(b"1- -1"), Some(id(1, u64::MAX)), "strtoull negates");
    assert_eq!(
        p(b"1--9223372036854775809"),
        Some(id(1, 9223372036854775807)),
        "beyond i64: strtoull wraps the negation"
    );
    assert_eq!(
        p(b"1--9223372036854775808"),
        None,
        "i64::MIN parses with string2ll"
    );
    assert_eq!(p(b"1--18446744073709551616"), None, "ERANGE");
    assert_eq!(
        p(b"18446744073709551615-18446744073709551615"),
        Some(StreamId::MAX)
    );
    assert_eq!(p(b"18446744073709551616-0"), None);
    assert_eq!(p(b"5\0garbage"), Some(id(5, 0)), "C string");
    assert_eq!(p(b"\x005"), None, "empty C string");
    assert_eq!(p(b"-\0x"), None, "strict: '-' as a C string");
    assert_eq!(
        parse_id(b"-\0x", 0, false, false).map(|x| x.id),
        Some(StreamId::MIN)
    );
    assert_eq!(p(&[b'1'; 127]), None, "127 ones overflow");
    let mut long = vec![b'0'; 126];
    long.push(b'1');
    assert_eq!(p(&long), Some(id(1, 0)), "127 bytes is the limit");
    long.insert(0, b'0');
    assert_eq!(p(&long), None, "128 bytes rejected");
    assert_eq!(
        parse_id(b"7-*", 0, true, true).map(|x| (x.id, x.seq_given)),
        Some((id(7, 0), false))
    );
    assert_eq!(parse_id(b"7-**", 0, true, true), None);
    assert_eq!(parse_id(b"*", 0, true, true), None);
    assert_eq!(
        parse_interval_id(b"(", 0),
        None,
        "a lone '(' is parsed as an ID"
    );
    assert_eq!(parse_interval_id(b"(\0", 0), None);
    assert_eq!(parse_interval_id(b"(-", 0), None);
    assert_eq!(parse_interval_id(b"((1", 0), None);
}
