//! The order the dedup answers rows in: grouped by producer (first-seen order), each
//! producer's rows sorted by (time, ties, input row) -- the order a stable sort by
//! (producer, time, ties) gives within a producer, which is the order the rows are
//! sent as XADDs in.
//!
//! Columns come in through [`ByteColumn`] (a pass over a column's values, no vector of
//! them), so a caller holding Arrow batches or plain slices reads its own memory.

use std::cmp::Ordering;

use hashbrown::HashMap;

/// A column of byte strings read in one pass: `f(row, value)` for every row in order,
/// rows counted from 0. False if the column cannot give every row a value (a null, a
/// type with no bytes); the pass may then have stopped anywhere.
pub trait ByteColumn<'a> {
    fn each(&self, f: impl FnMut(usize, &'a [u8])) -> bool;
}

impl<'a> ByteColumn<'a> for &[&'a [u8]] {
    fn each(&self, mut f: impl FnMut(usize, &'a [u8])) -> bool {
        for (row, v) in self.iter().enumerate() {
            f(row, v);
        }
        true
    }
}

/// A tie column (other than the IID): integers, timestamps, dates and booleans as their
/// stored integer, floats as [`float_key`], strings and binary as bytes; nulls
/// (`None`) first, as an ascending sort with nulls at the start puts them.
pub enum Tie<'a> {
    Ints(Vec<Option<i64>>),
    Bytes(Vec<Option<&'a [u8]>>),
}

impl Tie<'_> {
    fn cmp_rows(&self, a: usize, b: usize) -> Ordering {
        match self {
            Tie::Ints(v) => v[a].cmp(&v[b]),
            Tie::Bytes(v) => v[a].cmp(&v[b]),
        }
    }
}

/// A float's place in Arrow's ascending sort, as an integer: NaN before every number
/// (and after the nulls, which `None` puts first), -0.0 equal to 0.0 (so the row
/// decides between them, as in a stable sort), the rest by value.
pub fn float_key(x: f64) -> i64 {
    if x.is_nan() {
        return i64::MIN;
    }
    let x = if x == 0.0 { 0.0 } else { x };
    let bits = x.to_bits() as i64;
    // Negative floats order backwards as integers: flip all but their sign bit.
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// What orders a producer's rows of equal time: the IID itself (read from the grouped
/// IID bytes, in memory order), or tie columns compared in turn by input row.
pub enum Ties<'a> {
    Iid,
    Columns(Vec<Tie<'a>>),
}

impl Ties<'_> {
    fn cmp(&self, a: &Rec, b: &Rec, bytes: &[u8]) -> Ordering {
        match self {
            Ties::Iid => a.iid(bytes).cmp(b.iid(bytes)),
            Ties::Columns(cols) => {
                let (ra, rb) = (a.row as usize, b.row as usize);
                cols.iter()
                    .map(|c| c.cmp_rows(ra, rb))
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            }
        }
    }
}

/// Where the rows' IIDs are read from, in input order.
pub enum IidRows<'a, C> {
    /// The IID column.
    Column(C),
    /// IDMPAUTO: the hash of each row's content pairs.
    Hashes(&'a [[u8; 16]]),
}

impl<'a, C: ByteColumn<'a>> IidRows<'a, C> {
    fn each(&self, mut f: impl FnMut(usize, &'a [u8])) -> bool {
        match self {
            IidRows::Column(c) => c.each(f),
            IidRows::Hashes(hashes) => {
                for (row, h) in hashes.iter().enumerate() {
                    f(row, h);
                }
                true
            }
        }
    }
}

/// One row as the kernel visits it: its time inline and its IID as a place in the
/// grouped IID bytes ([`Grouped::iids`]), so that sorting a producer's rows and feeding
/// them to the IDMP state read memory in order (docs/spark-speed.md). 16 bytes: the
/// IID's length is in the grouped bytes, just before it.
#[derive(Clone, Copy, Default)]
pub struct Rec {
    pub time: i64,
    off: u32,
    pub row: u32,
}

/// Bytes of an IID's length in [`Grouped::iids`].
const LEN: usize = 4;

impl Rec {
    /// This row's IID in the grouped IID bytes.
    pub fn iid<'b>(&self, iids: &'b [u8]) -> &'b [u8] {
        let at = self.off as usize;
        let (len, rest) = iids[at..].split_at(LEN);
        let len = u32::from_le_bytes(len.try_into().expect("a 4-byte length")) as usize;
        &rest[..len]
    }
}

/// The rows grouped by producer (first-seen order), each group sorted by (time, tie,
/// row).
pub struct Grouped<'a> {
    /// Each group's producer.
    pub producers: Vec<&'a [u8]>,
    pub order: Vec<Rec>,
    /// Where each group starts in `order`, and the end.
    pub starts: Vec<usize>,
    /// Each IID as its length (4 bytes, little-endian) and its bytes, group after group
    /// in input order: one producer's IIDs are one short stretch of memory.
    pub iids: Vec<u8>,
}

/// The `n` rows grouped by `producers` and sorted (see [`Grouped`]); `None` for input
/// the kernel does not take: a producer or IID column that cannot give every row a
/// value, an empty producer, more rows than a `u32` counts, IIDs of more than 4 GiB in
/// all. The kernel's memory traffic, more than its arithmetic, is its cost
/// (docs/spark-speed.md): each column is read in passes, with no vector of its values.
pub fn group<'a, P, C>(
    producers: &P,
    times: &[i64],
    iids: &IidRows<'a, C>,
    ties: &Ties,
) -> Option<Grouped<'a>>
where
    P: ByteColumn<'a>,
    C: ByteColumn<'a>,
{
    let n = times.len();
    if u32::try_from(n).is_err() {
        return None;
    }
    let mut index: HashMap<&'a [u8], u32> = HashMap::new();
    let mut names: Vec<&'a [u8]> = Vec::new();
    let mut group: Vec<u32> = Vec::with_capacity(n);
    let mut empty = false;
    let read = producers.each(|_, p| {
        empty |= p.is_empty();
        let next = index.len() as u32;
        let g = *index.entry(p).or_insert_with(|| {
            names.push(p);
            next
        });
        group.push(g);
    });
    if !read || empty || group.len() != n {
        return None;
    }
    // Rows and IID bytes per group, then where each group's rows and bytes start.
    let mut starts = vec![0usize; index.len() + 1];
    let mut byte_starts = vec![0usize; index.len() + 1];
    for &g in &group {
        starts[g as usize + 1] += 1;
    }
    let mut counted = 0usize;
    let read = iids.each(|row, iid| {
        if let Some(&g) = group.get(row) {
            byte_starts[g as usize + 1] += LEN + iid.len();
        }
        counted += 1;
    });
    if !read || counted != n {
        return None;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
        byte_starts[i] += byte_starts[i - 1];
    }
    let total = byte_starts[index.len()];
    if u32::try_from(total).is_err() {
        return None;
    }
    let (mut fill, mut byte_fill) = (starts.clone(), byte_starts);
    // Every slot is written below; the zeroes are one sequential pass.
    let mut order: Vec<Rec> = vec![Rec::default(); n];
    let mut bytes = vec![0u8; total];
    let mut filled = 0usize;
    iids.each(|row, iid| {
        let g = group[row] as usize;
        let off = byte_fill[g];
        bytes[off..off + LEN].copy_from_slice(&(iid.len() as u32).to_le_bytes());
        bytes[off + LEN..off + LEN + iid.len()].copy_from_slice(iid);
        byte_fill[g] += LEN + iid.len();
        order[fill[g]] = Rec {
            time: times[row],
            off: off as u32,
            row: row as u32,
        };
        fill[g] += 1;
        filled += 1;
    });
    if filled != n {
        return None;
    }
    // The stable sort: it finds the runs already in order (a producer's rows often come
    // in time order) and merges them. The row breaks every tie, so any sort gives this
    // order.
    for w in starts.windows(2) {
        order[w[0]..w[1]].sort_by(|a, b| {
            a.time
                .cmp(&b.time)
                .then_with(|| ties.cmp(a, b, &bytes))
                .then(a.row.cmp(&b.row))
        });
    }
    Some(Grouped {
        producers: names,
        order,
        starts,
        iids: bytes,
    })
}
