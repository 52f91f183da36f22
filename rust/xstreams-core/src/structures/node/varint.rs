//! The integer encodings inside a node: LEB128 varints and reverse-readable back lengths.

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(super) fn get_varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut v: u64 = 0;
    let mut shift = 0;
    loop {
        let b = buf[*pos];
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

pub(super) fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Append `l` as a back-length: the last byte holds the low 7 bits and has bit 7 set when
/// more (higher) groups precede it.
pub(super) fn put_backlen(out: &mut Vec<u8>, l: u64) {
    let mut groups = [0u8; 10];
    let mut n = 0;
    let mut v = l;
    loop {
        groups[n] = (v & 0x7f) as u8;
        n += 1;
        v >>= 7;
        if v == 0 {
            break;
        }
    }
    // groups[0] is the lowest; write highest first.
    for i in (0..n).rev() {
        let mut b = groups[i];
        if i != n - 1 {
            b |= 0x80;
        }
        out.push(b);
    }
}

pub(super) fn backlen_size(l: u64) -> usize {
    varint_len(l)
}

/// Read a back-length ending just before `end`; returns (value, bytes used).
pub(super) fn get_backlen(buf: &[u8], end: usize) -> (u64, usize) {
    let mut p = end - 1;
    let mut v = u64::from(buf[p] & 0x7f);
    let mut shift = 7;
    let mut used = 1;
    while buf[p] & 0x80 != 0 {
        p -= 1;
        v |= u64::from(buf[p] & 0x7f) << shift;
        shift += 7;
        used += 1;
    }
    (v, used)
}
