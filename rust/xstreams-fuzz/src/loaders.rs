//! The loaders of a store directory's files: a command log (`log.<n>.aof`) replayed into
//! a keyspace, and a snapshot (`snapshot.<n>.xss`). Damaged input must be refused with an
//! error (never a panic), and whatever loads must pass `validate()`.

use std::path::Path;

use xstreams_core::keyspace::db::Keyspace;
use xstreams_core::keyspace::db::Value;
use xstreams_core::keyspace::rdb::{restore_payload, RDB_VERSION};
use xstreams_core::store::persist::{replay_log, snapshot};
use xstreams_core::{Config, StreamId};

/// Replay `data` as a command log into an empty keyspace.
pub fn log(data: &[u8]) {
    let mut ks = Keyspace::new(Config::default());
    if replay_log(&mut ks, Path::new("fuzz.aof"), data).is_ok() {
        if let Err(e) = ks.validate() {
            panic!("a log that loads left a keyspace failing validate(): {e}");
        }
    }
}

/// Recompute the CRC-32 of every section that fits in `buf`, so that mutated payloads
/// reach the section decoders instead of stopping at the checksum (which is tested by
/// the unmodified input too: the harness runs both).
fn fix_checksums(buf: &mut [u8]) {
    let Ok(mut off) = snapshot::read_header(buf) else {
        return;
    };
    while off + 9 <= buf.len() {
        let len = u64::from_le_bytes(buf[off + 1..off + 9].try_into().expect("8 bytes"));
        let Some(end) = (off as u64 + 9)
            .checked_add(len)
            .and_then(|e| e.checked_add(4))
            .filter(|&e| e <= buf.len() as u64)
        else {
            return;
        };
        let end = end as usize;
        let crc = crc32(&buf[off..end - 4]);
        buf[end - 4..end].copy_from_slice(&crc.to_le_bytes());
        off = end;
    }
}

/// CRC-32 (IEEE), as the snapshot's sections use (bitwise: this is a test harness).
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Load `data` as a snapshot, as given and with its section checksums fixed up.
pub fn snapshot(data: &[u8]) {
    let mut fixed = data.to_vec();
    fix_checksums(&mut fixed);
    for buf in [data, &fixed[..]] {
        if let Ok(ks) = snapshot::load(buf, Config::default()) {
            if let Err(e) = ks.validate() {
                panic!("a snapshot that loads failed validate(): {e}");
            }
        }
        // The partial reader (one stream, one ID range, through the index).
        for key in [&b"s0"[..], b"s1"] {
            let (lo, hi) = (StreamId::MIN, StreamId::MAX);
            if let Ok(Some(s)) = snapshot::load_stream_range(buf, 0, key, lo, hi) {
                drop(s);
            }
        }
    }
}

/// Decode `data` as a DUMP payload (RESTORE's decoder), as given and with its footer
/// replaced by the current RDB version and a zero checksum (which RESTORE accepts), so
/// mutated bodies reach the decoder. A stream that decodes must pass `validate()`.
pub fn restore(data: &[u8]) {
    let mut fixed = data.to_vec();
    if fixed.len() >= 10 {
        let n = fixed.len();
        fixed[n - 10..n - 8].copy_from_slice(&RDB_VERSION.to_le_bytes());
        fixed[n - 8..].fill(0);
    }
    for buf in [data, &fixed[..]] {
        if let Ok(Value::Stream(s)) = restore_payload(buf, 1_700_000_000_000, &Config::default()) {
            if let Err(e) = s.validate() {
                panic!("a RESTORE payload that decodes failed validate(): {e}");
            }
        }
    }
}
