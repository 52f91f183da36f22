//! Idempotent producers (XADD `IDMP pid iid` / `IDMPAUTO pid`, Redis 8.6).
//!
//! Each stream keeps, per producer ID, a map from idempotent ID (IID) to the stream ID it
//! produced, plus the same IIDs in insertion order (a FIFO) for eviction: by size when a
//! producer holds more than `maxsize` IIDs, and by time when the millisecond part of the
//! stream ID an IID maps to is at least `duration` seconds old.
//!
//! Memory: an IID entry is a 40-byte FIFO slot (16-byte IIDs, as IDMPAUTO makes, are
//! stored inline) plus an 8-byte slot in a SwissTable index (`hashbrown::HashTable`) of FIFO
//! sequence numbers — about 50 bytes per tracked IID, against 72 in redis-server. A
//! producer of at most [`SMALL`] IIDs (short windows keep only a few) has no index: its
//! lookups compare the FIFO's IIDs, which costs less than hashing, probing and keeping an
//! index up to date.

use std::collections::VecDeque;
use std::hash::BuildHasher;

use hashbrown::{HashMap, HashTable};
use smallvec::SmallVec;
use xxhash_rust::xxh3::xxh3_128;

use crate::structures::id::StreamId;

/// An idempotent ID; up to 16 bytes inline.
pub type Iid = SmallVec<[u8; 16]>;

#[derive(Clone, Debug)]
struct IidEntry {
    iid: Iid,
    id: StreamId,
}

/// Up to this many IIDs a producer keeps no index (see the module docs).
pub const SMALL: usize = 8;

/// The IIDs of one producer: FIFO of entries plus, above [`SMALL`] IIDs, a hash index of
/// FIFO positions.
#[derive(Clone, Default)]
pub struct Producer {
    fifo: VecDeque<IidEntry>,
    /// Sequence number of `fifo[0]`; entry `k` has sequence `head_seq + k`.
    head_seq: u64,
    /// Every FIFO entry's sequence number when `indexed`; empty otherwise.
    index: HashTable<u64>,
    /// Built once the FIFO outgrew [`SMALL`]; dropped when the FIFO empties.
    indexed: bool,
}

/// An IID about to be looked up and perhaps recorded: its hash is computed at most once,
/// and only if the producer has an index.
pub struct Probe<'a> {
    iid: &'a [u8],
    hash: std::cell::OnceCell<u64>,
}

impl<'a> Probe<'a> {
    /// A probe for `iid`.
    pub fn new(iid: &'a [u8]) -> Self {
        Probe {
            iid,
            hash: std::cell::OnceCell::new(),
        }
    }

    fn hash(&self) -> u64 {
        *self.hash.get_or_init(|| hash_iid(self.iid))
    }
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("fifo", &self.fifo)
            .finish()
    }
}

fn hasher() -> &'static hashbrown::DefaultHashBuilder {
    static H: std::sync::OnceLock<hashbrown::DefaultHashBuilder> = std::sync::OnceLock::new();
    H.get_or_init(hashbrown::DefaultHashBuilder::default)
}

fn hash_iid(iid: &[u8]) -> u64 {
    hasher().hash_one(iid)
}

impl Producer {
    /// Number of IIDs tracked.
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    /// Is the producer empty?
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    /// The stream ID an IID maps to.
    pub fn lookup(&self, iid: &[u8]) -> Option<StreamId> {
        self.lookup_probe(&Probe::new(iid))
    }

    /// [`Producer::lookup`] of a [`Probe`] that [`Producer::record_probe`] may record next.
    pub fn lookup_probe(&self, probe: &Probe) -> Option<StreamId> {
        let fifo = &self.fifo;
        if !self.indexed {
            return fifo
                .iter()
                .find(|e| e.iid.as_slice() == probe.iid)
                .map(|e| e.id);
        }
        let head = self.head_seq;
        self.index
            .find(probe.hash(), |&s| {
                fifo[(s - head) as usize].iid.as_slice() == probe.iid
            })
            .map(|&s| fifo[(s - head) as usize].id)
    }

    /// Record a new IID (the caller checked it is absent).
    pub fn insert(&mut self, iid: &[u8], id: StreamId) {
        self.insert_probe(&Probe::new(iid), id)
    }

    fn insert_probe(&mut self, probe: &Probe, id: StreamId) {
        let seq = self.head_seq + self.fifo.len() as u64;
        // The bytes go straight into the FIFO's slot, not built on the stack and moved
        // in (docs/spark-speed.md, "Why the code is as it is").
        self.fifo.push_back(IidEntry {
            iid: Iid::new(),
            id,
        });
        if let Some(e) = self.fifo.back_mut() {
            e.iid.extend_from_slice(probe.iid);
        }
        let head = self.head_seq;
        let fifo = &self.fifo;
        let rehash = |&s: &u64| hash_iid(&fifo[(s - head) as usize].iid);
        if self.indexed {
            self.index.insert_unique(probe.hash(), seq, rehash);
        } else if fifo.len() > SMALL {
            self.index.reserve(fifo.len(), rehash);
            for (k, e) in fifo.iter().enumerate() {
                self.index
                    .insert_unique(hash_iid(&e.iid), head + k as u64, rehash);
            }
            self.indexed = true;
        }
    }

    /// Record a new IID (absent before) and evict the oldest if the producer now holds
    /// more than `maxsize`; returns whether one was evicted.
    pub fn record(&mut self, iid: &[u8], id: StreamId, maxsize: u64) -> bool {
        self.record_probe(&Probe::new(iid), id, maxsize)
    }

    /// [`Producer::record`] of the [`Probe`] [`Producer::lookup_probe`] looked up.
    pub fn record_probe(&mut self, probe: &Probe, id: StreamId, maxsize: u64) -> bool {
        // A producer never holds more than maxsize + 1 IIDs (for a moment): stop the FIFO's
        // doubling there instead of allocating up to twice that.
        let (len, cap) = (self.fifo.len(), self.fifo.capacity());
        let bound = usize::try_from(maxsize)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        if len == cap && cap.saturating_mul(2) > bound && bound > len {
            self.fifo.reserve_exact(bound - len);
        }
        self.insert_probe(probe, id);
        if self.len() as u64 > maxsize {
            self.pop_oldest();
            return true;
        }
        false
    }

    /// Drop every IID whose stream ID's millisecond part is `<= now - duration*1000`,
    /// computed unsigned as redis-server does (a clock below the duration wraps and
    /// forgets everything); returns how many were dropped.
    pub fn expire(&mut self, now_ms: i64, duration: u64) -> u64 {
        let threshold = (now_ms as u64).wrapping_sub(duration.wrapping_mul(1000));
        let mut removed = 0u64;
        while let Some(id) = self.oldest_id() {
            if id.ms > threshold {
                break;
            }
            self.pop_oldest();
            removed += 1;
        }
        removed
    }

    /// Drop the oldest IID.
    pub fn pop_oldest(&mut self) {
        if let Some(e) = self.fifo.pop_front() {
            let seq = self.head_seq;
            if self.indexed {
                if self.fifo.is_empty() {
                    self.index.clear();
                    self.indexed = false;
                } else if let Ok(entry) = self.index.find_entry(hash_iid(&e.iid), |&s| s == seq) {
                    entry.remove();
                }
            }
            self.head_seq += 1;
        }
    }

    /// Stream ID of the oldest IID.
    pub fn oldest_id(&self) -> Option<StreamId> {
        self.fifo.front().map(|e| e.id)
    }

    /// IIDs in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], StreamId)> + '_ {
        self.fifo.iter().map(|e| (e.iid.as_slice(), e.id))
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        let spilled: usize = self
            .fifo
            .iter()
            .filter(|e| e.iid.spilled())
            .map(|e| e.iid.capacity())
            .sum();
        self.fifo.capacity() * std::mem::size_of::<IidEntry>() + self.index.capacity() * 9 + spilled
    }
}

/// A producer as stored in a snapshot: its ID and its IIDs, oldest first.
pub type ProducerImage = (Vec<u8>, Vec<(Vec<u8>, StreamId)>);

/// IDMP configuration, counters and producers of one stream.
#[derive(Clone, Debug)]
pub struct IdmpState {
    /// Seconds an IID is remembered.
    pub duration: u64,
    /// IIDs remembered per producer.
    pub maxsize: u64,
    /// Lifetime count of IIDs recorded.
    pub iids_added: u64,
    /// Lifetime count of duplicate submissions detected.
    pub iids_duplicates: u64,
    /// By pid. A hash map: an XADD with IDMP finds its producer twice (look up, then
    /// record), which a B-tree of a thousand pids made about forty key comparisons per
    /// XADD; the few callers that want pid order sort ([`IdmpState::producers`]).
    producers: HashMap<Vec<u8>, Producer>,
    iids_tracked: u64,
    /// Registered for time expiry (redis-server's `stream_idmp_keys`): set by a recorded
    /// IID, cleared when no producer is left or the maps are cleared. Expiry only visits
    /// tracked streams; a failed XADD removes the producer it created (unlike Redis 8.8).
    tracked: bool,
}

impl IdmpState {
    /// Empty state with the given configuration.
    pub fn new(duration: u64, maxsize: u64) -> Self {
        IdmpState {
            duration,
            maxsize,
            iids_added: 0,
            iids_duplicates: 0,
            producers: HashMap::new(),
            iids_tracked: 0,
            tracked: false,
        }
    }

    /// Producers currently tracked.
    pub fn pids_tracked(&self) -> usize {
        self.producers.len()
    }

    /// IIDs currently tracked, across producers.
    pub fn iids_tracked(&self) -> u64 {
        self.iids_tracked
    }

    /// Does any producer exist?
    pub fn has_producers(&self) -> bool {
        !self.producers.is_empty()
    }

    /// The stream ID recorded for `(pid, iid)`.
    pub fn lookup(&self, pid: &[u8], iid: &[u8]) -> Option<StreamId> {
        self.producers.get(pid)?.lookup(iid)
    }

    /// Create the producer if missing (redis-server does so before looking the IID up; a
    /// failed XADD then removes it with [`IdmpState::remove_empty_producer`]).
    pub fn ensure_producer(&mut self, pid: &[u8]) -> bool {
        if self.producers.contains_key(pid) {
            return false;
        }
        self.producers.insert(pid.to_vec(), Producer::default());
        true
    }

    /// Remove the producer `pid` if it holds no IID (an XADD that created it failed).
    pub fn remove_empty_producer(&mut self, pid: &[u8]) {
        if self.producers.get(pid).is_some_and(Producer::is_empty) {
            self.producers.remove(pid);
        }
    }

    /// [`IdmpState::ensure_producer`] then [`IdmpState::lookup`] in one walk of the
    /// producer map: whether the producer was created, and the stream ID recorded for
    /// `(pid, iid)`.
    pub fn ensure_and_lookup(&mut self, pid: &[u8], iid: &[u8]) -> (bool, Option<StreamId>) {
        if let Some(p) = self.producers.get(pid) {
            return (false, p.lookup(iid));
        }
        self.producers.insert(pid.to_vec(), Producer::default());
        (true, None)
    }

    /// Record `(pid, iid) -> id` (absent before), counting it in `iids_added` and evicting
    /// the producer's oldest IID if it now exceeds `maxsize`.
    pub fn insert(&mut self, pid: &[u8], iid: &[u8], id: StreamId) {
        let maxsize = self.maxsize;
        self.tracked = true;
        // One walk of the producer map when the producer exists (as after XADD's lookup).
        let evicted = match self.producers.get_mut(pid) {
            Some(p) => p.record(iid, id, maxsize),
            None => {
                let mut p = Producer::default();
                let evicted = p.record(iid, id, maxsize);
                self.producers.insert(pid.to_vec(), p);
                evicted
            }
        };
        self.iids_tracked += 1;
        self.iids_added += 1;
        if evicted {
            self.iids_tracked -= 1;
        }
    }

    /// Drop every IID whose stream ID's millisecond part is `<= now - duration*1000`, and
    /// producers left empty. Returns whether anything was removed.
    pub fn expire(&mut self, now_ms: i64) -> bool {
        if !self.tracked {
            return false;
        }
        let duration = self.duration;
        let mut removed = 0u64;
        let before = self.producers.len();
        self.producers.retain(|_, p| {
            removed += p.expire(now_ms, duration);
            !p.is_empty()
        });
        self.iids_tracked -= removed;
        if self.producers.is_empty() {
            self.tracked = false;
        }
        removed > 0 || self.producers.len() != before
    }

    /// Is the stream registered for time expiry?
    pub fn is_tracked(&self) -> bool {
        self.tracked
    }

    /// Rebuild from a snapshot: producers in pid order, each with its IIDs oldest first.
    pub fn restore(
        duration: u64,
        maxsize: u64,
        iids_added: u64,
        iids_duplicates: u64,
        tracked: bool,
        producers: Vec<ProducerImage>,
    ) -> Result<IdmpState, String> {
        let mut st = IdmpState::new(duration, maxsize);
        st.iids_added = iids_added;
        st.iids_duplicates = iids_duplicates;
        for (pid, iids) in producers {
            if st.producers.contains_key(&pid) {
                return Err("producer listed twice".into());
            }
            let mut p = Producer::default();
            for (iid, id) in iids {
                if p.lookup(&iid).is_some() {
                    return Err("IID listed twice for one producer".into());
                }
                p.insert(&iid, id);
                st.iids_tracked += 1;
            }
            st.producers.insert(pid, p);
        }
        st.tracked = tracked;
        st.validate()?;
        Ok(st)
    }

    /// Forget every producer (XCFGSET with a changed value).
    pub fn clear(&mut self) {
        self.producers.clear();
        self.iids_tracked = 0;
        self.tracked = false;
    }

    /// Producers in pid order.
    pub fn producers(&self) -> impl Iterator<Item = (&[u8], &Producer)> + '_ {
        let mut v: Vec<_> = self
            .producers
            .iter()
            .map(|(k, v)| (k.as_slice(), v))
            .collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v.into_iter()
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.producers
            .iter()
            .map(|(k, p)| k.capacity() + 64 + p.heap_bytes())
            .sum()
    }

    /// Check the invariants: counts agree and no producer exceeds `maxsize`.
    pub fn validate(&self) -> Result<(), String> {
        let total: u64 = self.producers.values().map(|p| p.len() as u64).sum();
        if total != self.iids_tracked {
            return Err(format!(
                "iids-tracked {} but producers hold {total}",
                self.iids_tracked
            ));
        }
        for (pid, p) in &self.producers {
            if p.len() as u64 > self.maxsize {
                return Err(format!(
                    "producer {pid:?} holds {} > maxsize {}",
                    p.len(),
                    self.maxsize
                ));
            }
            if p.indexed && p.index.len() != p.len() {
                return Err("producer index and FIFO sizes differ".into());
            }
            if !p.indexed && (!p.index.is_empty() || p.len() > SMALL) {
                return Err("producer of more than SMALL IIDs without an index".into());
            }
            for (iid, id) in p.iter() {
                if p.lookup(iid) != Some(id) {
                    return Err(format!("iid {iid:?} not found through the index"));
                }
            }
        }
        Ok(())
    }
}

/// The IID that `XADD ... IDMPAUTO pid` computes for a list of field/value pairs, exactly as
/// redis-server does: each pair is hashed with XXH3-128 over
/// `field || (field length as 8 little-endian bytes) || value`; the pair hashes are
/// combined order-independently (sums and XORs of both 64-bit halves, mixed with a
/// rotation), and the 16 result bytes are the low half then the high half, little-endian.
pub fn auto_iid(pairs: &[&[u8]]) -> [u8; 16] {
    let (mut sum_lo, mut sum_hi, mut xor_lo, mut xor_hi) = (0u64, 0u64, 0u64, 0u64);
    for pair in pairs.chunks_exact(2) {
        let d = pair_hash(pair[0], pair[1]);
        let lo = d as u64;
        let hi = (d >> 64) as u64;
        sum_lo = sum_lo.wrapping_add(lo);
        sum_hi = sum_hi.wrapping_add(hi);
        xor_lo ^= lo;
        xor_hi ^= hi;
    }
    let low = sum_lo ^ xor_hi.rotate_left(1);
    let high = sum_hi ^ xor_lo.rotate_left(1);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&low.to_le_bytes());
    out[8..].copy_from_slice(&high.to_le_bytes());
    out
}

/// XXH3-128 of `field || (field length as 8 little-endian bytes) || value`, hashed in one
/// call over the bytes laid end to end (on the stack when short): the streaming hasher's
/// set-up and buffering per pair was the larger part of IDMPAUTO's cost for short pairs.
fn pair_hash(field: &[u8], value: &[u8]) -> u128 {
    let len = field.len() + 8 + value.len();
    let mut stack = [0u8; 256];
    let mut heap = Vec::new();
    let buf: &mut [u8] = if len <= stack.len() {
        &mut stack[..len]
    } else {
        heap.resize(len, 0);
        &mut heap
    };
    let (f, rest) = buf.split_at_mut(field.len());
    f.copy_from_slice(field);
    rest[..8].copy_from_slice(&(field.len() as i64).to_le_bytes());
    rest[8..].copy_from_slice(value);
    xxh3_128(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_eviction_and_lookup() {
        let mut s = IdmpState::new(100, 3);
        for i in 0..5u64 {
            s.insert(b"p", format!("i{i}").as_bytes(), StreamId::new(1000 + i, 0));
        }
        s.validate().unwrap();
        assert_eq!(s.iids_tracked(), 3);
        assert_eq!(s.iids_added, 5);
        assert_eq!(s.lookup(b"p", b"i0"), None);
        assert_eq!(s.lookup(b"p", b"i4"), Some(StreamId::new(1004, 0)));
        assert_eq!(s.lookup(b"q", b"i4"), None);
        // Expire: ids 1002..1004 ms; duration 100 s; now = 1003 + 100_000 drops 1002, 1003.
        assert!(s.expire(1003 + 100_000));
        assert_eq!(s.iids_tracked(), 1);
        assert!(s.expire(1_000_000));
        assert_eq!(s.pids_tracked(), 0);
        s.validate().unwrap();
    }

    /// A producer crosses [`SMALL`] both ways: the index is built with every IID the
    /// FIFO holds, kept up to date while it shrinks, and dropped when the FIFO empties;
    /// lookups agree with a plain map throughout.
    #[test]
    fn producer_index_is_built_above_small_and_dropped_when_empty() {
        let mut p = Producer::default();
        let mut live: std::collections::VecDeque<(Vec<u8>, StreamId)> = Default::default();
        let check = |p: &Producer, live: &std::collections::VecDeque<(Vec<u8>, StreamId)>| {
            assert_eq!(p.len(), live.len());
            assert_eq!(
                p.indexed,
                p.len() > SMALL || (p.indexed && !live.is_empty())
            );
            if p.indexed {
                assert_eq!(p.index.len(), p.len());
            }
            for (iid, id) in live {
                assert_eq!(p.lookup(iid), Some(*id));
            }
            assert_eq!(p.lookup(b"never"), None);
        };
        let maxsize = 3 * SMALL as u64;
        for round in 0..3u64 {
            // Grow past the eviction size (oldest evicted), then shrink to empty.
            for i in 0..4 * SMALL as u64 {
                let iid = format!("r{round}-{i}-{}", "x".repeat(i as usize % 20)).into_bytes();
                let id = StreamId::new(round * 1000 + i, 0);
                assert_eq!(p.lookup(&iid), None);
                let evicted = p.record(&iid, id, maxsize);
                live.push_back((iid, id));
                assert_eq!(evicted, live.len() as u64 > maxsize);
                if evicted {
                    live.pop_front();
                }
                check(&p, &live);
            }
            assert!(p.indexed);
            while !live.is_empty() {
                p.pop_oldest();
                live.pop_front();
                check(&p, &live);
            }
            assert!(!p.indexed && p.index.is_empty());
        }
    }

    /// Snapshots, RDB and the inspector list producers in pid order (as redis-server's
    /// producer tree does), whatever the order they were made in.
    #[test]
    fn producers_come_in_pid_order() {
        let mut s = IdmpState::new(100, 10);
        let mut pids: Vec<Vec<u8>> = (0..300u32)
            .map(|i| format!("p{}", (i * 7919) % 1000).into_bytes())
            .collect();
        for (i, pid) in pids.iter().enumerate() {
            s.insert(pid, b"i", StreamId::new(i as u64 + 1, 0));
        }
        pids.sort();
        let got: Vec<&[u8]> = s.producers().map(|(pid, _)| pid).collect();
        assert_eq!(got, pids.iter().map(|p| p.as_slice()).collect::<Vec<_>>());
        s.validate().unwrap();
    }

    #[test]
    fn auto_iid_is_order_independent_and_content_sensitive() {
        let a = auto_iid(&[b"f1", b"v1", b"f2", b"v2"]);
        let b = auto_iid(&[b"f2", b"v2", b"f1", b"v1"]);
        assert_eq!(a, b);
        assert_ne!(a, auto_iid(&[b"f1", b"v1", b"f2", b"v3"]));
        // The field length separates "ab"+"c" from "a"+"bc".
        assert_ne!(auto_iid(&[b"ab", b"c"]), auto_iid(&[b"a", b"bc"]));
        // A single pair: low = lo ^ rotl(hi, 1), high = hi ^ rotl(lo, 1).
        let d = xxhash_rust::xxh3::xxh3_128(&[b"f".as_slice(), &1i64.to_le_bytes(), b"v"].concat());
        let (lo, hi) = (d as u64, (d >> 64) as u64);
        let got = auto_iid(&[b"f", b"v"]);
        assert_eq!(
            u64::from_le_bytes(got[..8].try_into().unwrap()),
            lo ^ hi.rotate_left(1)
        );
        assert_eq!(
            u64::from_le_bytes(got[8..].try_into().unwrap()),
            hi ^ lo.rotate_left(1)
        );
    }

    #[test]
    fn pair_hash_is_the_hash_of_the_pair_laid_end_to_end_at_every_length() {
        // Around the stack buffer's size (256 bytes in all) and well past it.
        for (flen, vlen) in [
            (0, 0),
            (1, 247),
            (1, 248),
            (100, 148),
            (100, 149),
            (3, 5000),
        ] {
            let field: Vec<u8> = (0..flen).map(|i| (i * 7 % 251) as u8).collect();
            let value: Vec<u8> = (0..vlen).map(|i| (i * 13 % 241) as u8).collect();
            let whole = [field.as_slice(), &(flen as i64).to_le_bytes(), &value].concat();
            assert_eq!(pair_hash(&field, &value), xxh3_128(&whole), "{flen}+{vlen}");
        }
    }
}
