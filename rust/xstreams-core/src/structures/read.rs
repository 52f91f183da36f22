//! Typed results of the reading commands (XRANGE, XREVRANGE, XREAD, XREADGROUP).
//!
//! A read pushes what it serves into a [`ReadSink`]: the streams served in order, each
//! with its entries and, for an XREADGROUP with CLAIM, the delivery information of each
//! entry. Two sinks exist: [`crate::command::reply::ReplySink`] builds the RESP2/RESP3 reply the
//! commands send, and [`crate::structures::entries::Entries`] collects flat Arrow-shaped
//! buffers for the batch paths. Both see the same calls, so the command is implemented once and nothing a read
//! replies is ever parsed back.
//!
//! ```
//! use xstreams_core::interop::batch::Entries;
//! use xstreams_core::command::ReadArgs;
//! use xstreams_core::Store;
//!
//! let store = Store::default();
//! store.execute(&[b"XADD", b"a", b"1-1", b"f", b"x"]);
//! store.execute(&[b"XADD", b"b", b"2-1", b"f", b"y"]);
//! // XREAD MAXCOUNT 1 STREAMS a b 0 0: one entry in all, from `a` (the caller's order).
//! let mut args = ReadArgs::xread(&[b"a", b"b"], &[b"0", b"0"]);
//! args.max_count = 1;
//! let got: Entries = store.read(0, &args).unwrap();
//! assert_eq!(got.len(), 1);
//! assert_eq!(got.keys, vec![b"a".to_vec()]);
//! ```

use crate::structures::id::StreamId;
use crate::structures::node::EntryView;

/// Where a read puts what it serves.
pub trait ReadSink {
    /// A stream is served (its entries follow).
    fn stream(&mut self, key: &[u8]);
    /// An entry; `delivery` is (idle ms, delivery count) for a group read with CLAIM.
    fn entry(&mut self, e: &EntryView<'_>, delivery: Option<(u64, u64)>);
    /// An entry of a consumer's history that no longer exists.
    fn missing(&mut self, id: StreamId);
    /// The stream just begun is left out: the budget refused its first entry.
    fn unstream(&mut self);
}

/// A sink behind a reference (a `&mut dyn ReadSink` among them) is a sink: callers that
/// choose their sink at run time pass it to the generic readers.
impl<S: ReadSink + ?Sized> ReadSink for &mut S {
    fn stream(&mut self, key: &[u8]) {
        (**self).stream(key);
    }
    fn entry(&mut self, e: &EntryView<'_>, delivery: Option<(u64, u64)>) {
        (**self).entry(e, delivery);
    }
    fn missing(&mut self, id: StreamId) {
        (**self).missing(id);
    }
    fn unstream(&mut self) {
        (**self).unstream();
    }
}

/// The caps of a read over all the streams it serves: `MAXCOUNT` (entries) and `MAXSIZE`
/// (reply bytes). MAXSIZE is checked as Redis 8.10 checks it (redis/redis#15282): against
/// the reply bytes written so far, before each stream and each entry, so the entry that
/// crosses the cap is served, and the first entry of a reply always is. A stream's header
/// (under RESP2 the pair's array, then its key) counts when the stream is begun, its
/// entries' array length when it is done, each entry as it is served; a stream begun when
/// the cap is then reached stays in the reply with no entries.
#[derive(Clone, Copy, Debug, Default)]
pub struct Budget {
    /// Entries left (`u64::MAX`: no cap).
    count_left: u64,
    /// Byte cap (0: none) and bytes written so far.
    max_size: u64,
    used: u64,
    served: u64,
    /// RESP3 reply (no array around each stream's key and entries; `_` for null).
    resp3: bool,
}

impl Budget {
    /// A budget of `max_count` entries and `max_size` bytes (0: no cap) for a reply in
    /// RESP3 (`resp3`) or RESP2.
    pub fn new(max_count: u64, max_size: u64, resp3: bool) -> Self {
        Budget {
            count_left: if max_count == 0 { u64::MAX } else { max_count },
            max_size,
            used: 0,
            served: 0,
            resp3,
        }
    }

    /// Entries served so far.
    pub fn served(&self) -> u64 {
        self.served
    }

    /// Is there room for nothing more?
    pub fn exhausted(&self) -> bool {
        self.count_left == 0
            || (self.max_size != 0 && self.served > 0 && self.used >= self.max_size)
    }

    /// A stream of the reply is begun (its key written).
    pub fn stream(&mut self, key: &[u8]) {
        if !self.resp3 {
            self.used += 4; // the [key, entries] pair
        }
        self.used += bulk_len(key.len());
    }

    /// The stream begun last is done, with `entries` entries (its array's length written).
    pub fn end_stream(&mut self, entries: u64) {
        self.used += 1 + digits(entries as usize) + 2;
    }

    /// May the entry `e` (`None`: a deleted history entry) be served, with `delivery`
    /// (CLAIM's idle time and delivery count) after it? Takes it from the budget when so.
    pub fn admit(
        &mut self,
        e: Option<&EntryView<'_>>,
        id: StreamId,
        delivery: Option<(u64, u64)>,
    ) -> bool {
        if self.exhausted() {
            return false;
        }
        if self.max_size != 0 {
            self.used += entry_len(e, id, delivery, self.resp3);
        }
        self.count_left -= 1;
        self.served += 1;
        true
    }
}

fn digits(mut n: usize) -> u64 {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// RESP bytes of a bulk string of `len` bytes.
fn bulk_len(len: usize) -> u64 {
    1 + digits(len) + 2 + len as u64 + 2
}

/// RESP bytes of one entry of a read reply (`[id, [f, v, ...]]`, with CLAIM `[id, [...],
/// idle, count]`, a deleted history entry `[id, nil]`).
fn entry_len(
    e: Option<&EntryView<'_>>,
    id: StreamId,
    delivery: Option<(u64, u64)>,
    resp3: bool,
) -> u64 {
    let idlen = bulk_len(id.to_bytes().len());
    let mut n = 4 + idlen;
    match e {
        Some(e) => {
            let nf = e.num_fields() * 2;
            n += 1 + digits(nf) + 2;
            for (f, v) in e.pairs() {
                n += bulk_len(f.len()) + bulk_len(v.len());
            }
        }
        None => n += if resp3 { 3 } else { 5 },
    }
    if let Some((idle, count)) = delivery {
        n += 1 + digits(idle as usize) + 2 + 1 + digits(count as usize) + 2;
    }
    n
}
