//! Byte sizes of Redis's listpack encoding.
//!
//! redis-server stores each stream node as a listpack and starts a new node when the
//! current one would reach `stream-node-max-bytes` (or `stream-node-max-entries`). We
//! store nodes in our own, more compact format, but to split nodes at exactly the same
//! entries (so that `XINFO STREAM`'s `radix-tree-keys` and `radix-tree-nodes` match) we
//! compute what the listpack's size would be. This module is that arithmetic: element
//! sizes for integers and strings (strings that look like canonical integers are stored
//! as integers by listpack), plus the header and terminator.

use crate::base::num::string2ll;
use crate::structures::id::StreamId;

/// Listpack header: 32-bit total bytes + 16-bit element count.
pub const LP_HDR_SIZE: u64 = 6;
/// Listpack end-of-list byte.
pub const LP_EOF_SIZE: u64 = 1;

/// Bytes of the integer encoding of `v` (without the back-length).
pub fn int_encoding_len(v: i64) -> u64 {
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

/// Bytes of the back-length field that follows an element of `l` bytes.
pub fn backlen_len(l: u64) -> u64 {
    if l <= 127 {
        1
    } else if l <= 16383 {
        2
    } else if l <= 2_097_151 {
        3
    } else if l <= 268_435_455 {
        4
    } else {
        5
    }
}

/// Total bytes of an integer element.
pub fn int_element(v: i64) -> u64 {
    let e = int_encoding_len(v);
    e + backlen_len(e)
}

/// Total bytes of a string element (integer-encoded when it is a canonical integer).
pub fn str_element(s: &[u8]) -> u64 {
    if let Some(v) = string2ll(s) {
        return int_element(v);
    }
    let len = s.len() as u64;
    let e = if len < 64 {
        1 + len
    } else if len < 4096 {
        2 + len
    } else {
        5 + len
    };
    e + backlen_len(e)
}

/// Bytes of the master entry's fixed part: field count, the field names and the zero
/// terminator (the live and deleted counters are accounted separately because they
/// change).
pub fn master_entry_bytes(fields: &[&[u8]]) -> u64 {
    master_entry_bytes_of(fields.iter())
}

/// [`master_entry_bytes`] of the field names an iterator yields.
pub fn master_entry_bytes_of<'a, 'b: 'a>(
    fields: impl ExactSizeIterator<Item = &'a &'b [u8]>,
) -> u64 {
    let mut n = int_element(fields.len() as i64) + int_element(0);
    for f in fields {
        n += str_element(f);
    }
    n
}

/// Bytes of one stream entry as redis-server appends it to a node whose master ID is
/// `master`. `pairs` alternates fields and values.
pub fn entry_bytes(master: StreamId, id: StreamId, pairs: &[&[u8]], same_fields: bool) -> u64 {
    let numfields = pairs.len() / 2;
    let flags: i64 = if same_fields { 2 } else { 0 };
    let mut n = int_element(flags);
    n += int_element(id.ms.wrapping_sub(master.ms) as i64);
    n += int_element(id.seq.wrapping_sub(master.seq) as i64);
    let mut lp_count = numfields as i64 + 3;
    if !same_fields {
        n += int_element(numfields as i64);
        lp_count += numfields as i64 + 1;
    }
    for (i, p) in pairs.iter().enumerate() {
        if same_fields && i % 2 == 0 {
            continue;
        }
        n += str_element(p);
    }
    n + int_element(lp_count)
}

/// Total listpack bytes of a node given its counters and the bytes of everything else.
pub fn node_bytes(live: u64, deleted: u64, body: u64) -> u64 {
    LP_HDR_SIZE + LP_EOF_SIZE + int_element(live as i64) + int_element(deleted as i64) + body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_sizes_match_listpack() {
        assert_eq!(int_element(0), 2);
        assert_eq!(int_element(127), 2);
        assert_eq!(int_element(128), 3);
        assert_eq!(int_element(-1), 3);
        assert_eq!(int_element(40_000), 5);
        assert_eq!(int_element(i64::MAX), 10);
        assert_eq!(str_element(b"v"), 3);
        assert_eq!(str_element(b"123"), 2);
        assert_eq!(str_element(b"0123"), 6);
        assert_eq!(str_element(&[b'x'; 63]), 65);
        assert_eq!(str_element(&[b'x'; 64]), 67);
        assert_eq!(str_element(&[b'x'; 126]), 130);
        assert_eq!(str_element(&[b'x'; 4096]), 4101 + 2);
    }

    #[test]
    fn first_entry_of_a_node() {
        // XADD s 1-1 a 1 creates: header 6, count 1 (2), deleted 0 (2), numfields 1 (2),
        // "a" (3), terminator 0 (2), flags (2), ms delta (2), seq delta (2), value 1 (2),
        // lp-count 4 (2), EOF 1 => 28 bytes.
        let master = StreamId::new(1, 1);
        let body = master_entry_bytes(&[b"a"]) + entry_bytes(master, master, &[b"a", b"1"], true);
        assert_eq!(node_bytes(1, 0, body), 28);
    }
}
