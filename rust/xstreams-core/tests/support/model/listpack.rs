//! Listpack byte sizes, recomputed from the encoding rules (`lpEncodeGetType`,
//! `lpEncodeBacklen`).

/// `lpEncodeBacklen` byte count.
pub fn lp_backlen(l: u64) -> u64 {
    match l {
        0..=127 => 1,
        128..=16383 => 2,
        16384..=2_097_151 => 3,
        2_097_152..=268_435_455 => 4,
        _ => 5,
    }
}

/// `lpEncodeIntegerGetType` encoded length.
pub fn lp_int_enc(v: i64) -> u64 {
    if (0..=127).contains(&v) {
        1
    } else if (-4096..=4095).contains(&v) {
        2
    } else if (-32768..=32767).contains(&v) {
        3
    } else if (-8_388_608..=8_388_607).contains(&v) {
        4
    } else if (-2_147_483_648..=2_147_483_647).contains(&v) {
        5
    } else {
        9
    }
}

pub fn lp_int(v: i64) -> u64 {
    let e = lp_int_enc(v);
    e + lp_backlen(e)
}

/// `lpStringToInt64`: the string is the canonical decimal form of an i64. Implemented
/// by round-tripping through Rust's formatter (an independent formulation).
pub fn canonical_i64(s: &[u8]) -> Option<i64> {
    let t = std::str::from_utf8(s).ok()?;
    let v: i64 = t.parse().ok()?;
    if v.to_string().as_bytes() == s {
        Some(v)
    } else {
        None
    }
}

pub fn lp_str(s: &[u8]) -> u64 {
    if let Some(v) = canonical_i64(s) {
        return lp_int(v);
    }
    let n = s.len() as u64;
    let e = if n < 64 {
        1 + n
    } else if n < 4096 {
        2 + n
    } else {
        5 + n
    };
    e + lp_backlen(e)
}
