//! `_idmp_dedup`: the kernel of `xstreams.spark.dedup` for one Spark partition, Arrow in
//! and Arrow out, one call per partition.
//!
//! It reads the whole partition from an iterable of batches, then groups the rows by
//! producer and sorts each producer's rows by (time, ties, input position) -- the order
//! the Python reference sorts them in -- and asks
//! [`xstreams_core::interop::dedup::IdmpDedup`] for each row's XADD IDMP answer. The IID is the IID
//! column's value, or with IDMPAUTO the hash ([`xstreams_core::structures::idmp::auto_iid`]) of the
//! content columns' field/value pairs (values as text the way `xadd_batch` converts
//! them, nulls left out). The ties are the IID, an order column or the content columns.
//! The input batches come back as they are (no copy of their columns), with the answer
//! columns the caller names appended in its order: `entry_id`, `duplicate`,
//! `original_id` (`original_id` is the `entry_id` array itself, shared, not a copy:
//! Spark copying it in a projection after `mapInArrow` cost a second copy of every
//! output row). With `keep_first` only the rows that are not duplicates. IDs are
//! formatted only when a column needs them, batch by batch as the caller takes the
//! output ([`crate::dedup_output`]).
//!
//! Input the kernel does not take (nulls in the producer, time or IID columns, an empty
//! producer or IID, a row with no content value, other column types, a tie column it
//! cannot order such as floats, a row the XADD would refuse) makes it return `None`:
//! the caller then sorts the partition with Arrow and runs
//! [`crate::dedup_sorted::_idmp_dedup_sorted`], or the general path
//! (`Store.xadd_batch`), which give the same answers and the store's errors.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Schema};
use hashbrown::HashMap;
use pyo3::prelude::*;
use pyo3_arrow::PyRecordBatch;
use xstreams_core::interop::dedup::IdmpDedup;
use xstreams_core::structures::idmp::auto_iid;

use crate::arrow::{prepare, times_ms, value_err, values_across, Src};
use crate::dedup_output::{answer_columns, no_output, output, Answers, DedupOutput};

/// The values of a string or binary column across batches, appended to `out`; false if
/// it has nulls or another type.
pub(crate) fn byte_values<'a>(
    batches: &'a [RecordBatch],
    idx: usize,
    out: &mut Vec<&'a [u8]>,
) -> bool {
    each_bytes(batches, idx, |_, v| out.push(v))
}

/// `f(row, value)` for each value of a string or binary column across batches, rows
/// counted across them; false (at the first such batch) if it has nulls or another type.
/// A pass over the column without a vector of its values (16 bytes a row).
pub(crate) fn each_bytes<'a>(
    batches: &'a [RecordBatch],
    idx: usize,
    mut f: impl FnMut(usize, &'a [u8]),
) -> bool {
    fn values<'a, T: ByteArrayType>(
        arr: &'a ArrayRef,
        row: &mut usize,
        f: &mut impl FnMut(usize, &'a [u8]),
    ) {
        use arrow_buffer::ArrowNativeType;
        let a = arr.as_bytes::<T>();
        let data = a.value_data();
        for w in a.value_offsets().windows(2) {
            f(*row, &data[w[0].as_usize()..w[1].as_usize()]);
            *row += 1;
        }
    }
    let mut row = 0usize;
    for b in batches {
        let arr = b.column(idx);
        if arr.null_count() > 0 {
            return false;
        }
        match arr.data_type() {
            DataType::Utf8 => values::<Utf8Type>(arr, &mut row, &mut f),
            DataType::LargeUtf8 => values::<LargeUtf8Type>(arr, &mut row, &mut f),
            DataType::Binary => values::<BinaryType>(arr, &mut row, &mut f),
            DataType::LargeBinary => values::<LargeBinaryType>(arr, &mut row, &mut f),
            DataType::Utf8View => {
                for v in arr.as_string_view().iter().flatten() {
                    f(row, v.as_bytes());
                    row += 1;
                }
            }
            DataType::BinaryView => {
                for v in arr.as_binary_view().iter().flatten() {
                    f(row, v);
                    row += 1;
                }
            }
            _ => return false,
        }
    }
    true
}

/// A tie column (other than the IID): integers, timestamps, dates and booleans as their
/// stored integer, float32/float64 as [`float_key`], strings and binary as bytes; nulls
/// first, as the reference (Arrow's sort) puts them.
enum Tie<'a> {
    Ints(Vec<Option<i64>>),
    Bytes(Vec<Option<&'a [u8]>>),
}

/// A float's place in Arrow's ascending sort (the reference's), as an integer: NaN
/// before every number (and after the nulls, which `None` puts first), -0.0 equal to
/// 0.0 (so the row decides between them, as in Arrow's stable sort), the rest by value.
fn float_key(x: f64) -> i64 {
    if x.is_nan() {
        return i64::MIN;
    }
    let x = if x == 0.0 { 0.0 } else { x };
    let bits = x.to_bits() as i64;
    // Negative floats order backwards as integers: flip all but their sign bit.
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

fn tie_values<'a>(batches: &'a [RecordBatch], idx: usize) -> Option<Tie<'a>> {
    let first = batches.first()?.column(idx).data_type().clone();
    macro_rules! floats {
        ($t:ty) => {{
            let mut v = Vec::new();
            for b in batches {
                let a = b.column(idx).as_primitive::<$t>();
                v.extend(a.iter().map(|x| x.map(|x| float_key(f64::from(x)))));
            }
            Some(Tie::Ints(v))
        }};
    }
    macro_rules! ints {
        ($t:ty) => {{
            let mut v = Vec::new();
            for b in batches {
                let a = b.column(idx).as_primitive::<$t>();
                v.extend(a.iter().map(|x| x.map(|x| x as i64)));
            }
            Some(Tie::Ints(v))
        }};
    }
    macro_rules! bytes {
        ($e:expr) => {{
            let mut v = Vec::new();
            for b in batches {
                let a = b.column(idx);
                #[allow(clippy::redundant_closure_call)]
                v.extend(($e)(a));
            }
            Some(Tie::Bytes(v))
        }};
    }
    use DataType::*;
    match first {
        Int8 => ints!(Int8Type),
        Int16 => ints!(Int16Type),
        Int32 => ints!(Int32Type),
        Int64 => ints!(Int64Type),
        UInt8 => ints!(UInt8Type),
        UInt16 => ints!(UInt16Type),
        UInt32 => ints!(UInt32Type),
        Float32 => floats!(Float32Type),
        Float64 => floats!(Float64Type),
        Date32 => ints!(Date32Type),
        Date64 => ints!(Date64Type),
        Timestamp(arrow_schema::TimeUnit::Second, _) => ints!(TimestampSecondType),
        Timestamp(arrow_schema::TimeUnit::Millisecond, _) => ints!(TimestampMillisecondType),
        Timestamp(arrow_schema::TimeUnit::Microsecond, _) => ints!(TimestampMicrosecondType),
        Timestamp(arrow_schema::TimeUnit::Nanosecond, _) => ints!(TimestampNanosecondType),
        Utf8 => bytes!(|a: &'a ArrayRef| a.as_string::<i32>().iter().map(|x| x.map(str::as_bytes))),
        LargeUtf8 => {
            bytes!(|a: &'a ArrayRef| a.as_string::<i64>().iter().map(|x| x.map(str::as_bytes)))
        }
        Boolean => {
            let mut v = Vec::new();
            for b in batches {
                v.extend(b.column(idx).as_boolean().iter().map(|x| x.map(i64::from)));
            }
            Some(Tie::Ints(v))
        }
        Binary => bytes!(|a: &'a ArrayRef| a.as_binary::<i32>().iter()),
        LargeBinary => bytes!(|a: &'a ArrayRef| a.as_binary::<i64>().iter()),
        _ => None,
    }
}

impl Tie<'_> {
    fn cmp_rows(&self, a: usize, b: usize) -> std::cmp::Ordering {
        match self {
            Tie::Ints(v) => v[a].cmp(&v[b]),
            Tie::Bytes(v) => v[a].cmp(&v[b]),
        }
    }
}

/// What orders a producer's rows of equal time: the IID itself (read from the grouped
/// IID bytes, in memory order), or tie columns compared in turn by input row.
enum Ties<'a> {
    Iid,
    Columns(Vec<Tie<'a>>),
}

impl Ties<'_> {
    fn cmp(&self, a: &Rec, b: &Rec, bytes: &[u8]) -> std::cmp::Ordering {
        match self {
            Ties::Iid => a.iid(bytes).cmp(b.iid(bytes)),
            Ties::Columns(cols) => {
                let (ra, rb) = (a.row as usize, b.row as usize);
                cols.iter()
                    .map(|c| c.cmp_rows(ra, rb))
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            }
        }
    }
}

/// Where a row's IID comes from: the IID column, or IDMPAUTO over the content columns.
pub(crate) enum IidFrom<'a> {
    Column(&'a str),
    Content(Vec<String>),
}

impl<'a> IidFrom<'a> {
    /// The kernels' `iid`/`content` arguments: exactly one of them, content not empty.
    pub(crate) fn new(iid: Option<&'a str>, content: Option<Vec<String>>) -> PyResult<Self> {
        match (iid, content) {
            (Some(i), None) => Ok(IidFrom::Column(i)),
            (None, Some(c)) if !c.is_empty() => Ok(IidFrom::Content(c)),
            _ => Err(value_err("give iid or content columns")),
        }
    }
}

/// Each row's IDMPAUTO IID and its entry's size (field and value bytes), by input row.
pub(crate) struct AutoIids {
    pub(crate) hashes: Vec<[u8; 16]>,
    pub(crate) sizes: Vec<u64>,
}

/// Each row's IDMPAUTO IID (the hash of its content pairs, values as text the way
/// `xadd_batch` converts them, nulls left out) and its entry's size; `None` if a column
/// has a type with no text form or a row has no content value (the store's error).
pub(crate) fn auto_iids(
    batches: &[RecordBatch],
    schema: &Schema,
    content: &[String],
    n: usize,
) -> PyResult<Option<AutoIids>> {
    let idx: Vec<usize> = content
        .iter()
        .map(|name| column(schema, name))
        .collect::<PyResult<_>>()?;
    let (mut iids, mut sizes) = (Vec::with_capacity(n), Vec::with_capacity(n));
    // A batch at a time: the values' text and views live only as long as their batch.
    for b in batches {
        let mut prepared: Vec<Src> = Vec::with_capacity(content.len());
        for (name, &i) in content.iter().zip(&idx) {
            let Ok(src) = prepare(b.column(i), name) else {
                return Ok(None);
            };
            prepared.push(src);
        }
        let values: Vec<Vec<Option<&[u8]>>> = prepared
            .iter()
            .map(|s| values_across(std::slice::from_ref(s), b.num_rows()))
            .collect();
        let mut pairs: Vec<&[u8]> = Vec::with_capacity(2 * content.len());
        for row in 0..b.num_rows() {
            pairs.clear();
            let mut size = 0u64;
            for (name, vals) in content.iter().zip(&values) {
                if let Some(v) = vals[row] {
                    pairs.push(name.as_bytes());
                    pairs.push(v);
                    size += (name.len() + v.len()) as u64;
                }
            }
            if pairs.is_empty() {
                return Ok(None);
            }
            iids.push(auto_iid(&pairs));
            sizes.push(size);
        }
    }
    Ok(Some(AutoIids {
        hashes: iids,
        sizes,
    }))
}

/// One row as the kernel visits it: its time inline and its IID as a place in the
/// grouped IID bytes ([`Grouped::iids`]), so that sorting a producer's rows and feeding
/// them to the IDMP state read memory in order. Reading each IID from the input's
/// string buffer in sorted order missed the cache on nearly every row (perf: 91% of the
/// IID hash's samples on its first load). 16 bytes: the IID's length is in the grouped
/// bytes, just before it.
#[derive(Clone, Copy)]
struct Rec {
    time: i64,
    off: u32,
    row: u32,
}

/// The rows grouped by producer (first-seen order), each group sorted by (time, tie,
/// row): the order the reference's stable sort by (producer, time, tie) gives within a
/// producer.
struct Grouped {
    order: Vec<Rec>,
    /// Where each group starts in `order`, and the end.
    starts: Vec<usize>,
    /// Each IID as its length (4 bytes, little-endian) and its bytes, group after group
    /// in input order: one producer's IIDs are one short stretch of memory.
    iids: Vec<u8>,
}

/// Bytes of an IID's length in [`Grouped::iids`].
const LEN: usize = 4;

impl Rec {
    /// This row's IID in the grouped IID bytes.
    fn iid<'b>(&self, iids: &'b [u8]) -> &'b [u8] {
        let at = self.off as usize;
        let (len, rest) = iids[at..].split_at(LEN);
        let len = u32::from_le_bytes(len.try_into().expect("a 4-byte length")) as usize;
        &rest[..len]
    }
}

/// Where the rows' IIDs are read from, in input order.
enum IidRows<'a> {
    /// The IID column (its index in the batches).
    Column(&'a [RecordBatch], usize),
    /// IDMPAUTO: the hash of each row's content pairs.
    Hashes(&'a [[u8; 16]]),
}

impl<'a> IidRows<'a> {
    /// `f(row, iid)` for every row in input order; false if the IID column has nulls or
    /// another type.
    fn each(&self, mut f: impl FnMut(usize, &'a [u8])) -> bool {
        match self {
            IidRows::Column(batches, idx) => each_bytes(batches, *idx, f),
            IidRows::Hashes(hashes) => {
                for (row, h) in hashes.iter().enumerate() {
                    f(row, h);
                }
                true
            }
        }
    }
}

/// The rows of `batches` grouped by the producer column `p_idx` and sorted (see
/// [`Grouped`]); `None` for input the kernel does not take: an empty or null producer,
/// an IID column with nulls or of another type, IIDs of more than 4 GiB in all. Reads
/// the producer and IID columns in passes over the batches, with no vector of their
/// values (16 bytes a row each), and fills the grouped rows without zeroing them first:
/// the kernel's memory traffic, more than its arithmetic, is its cost inside Spark.
fn producer_order(
    batches: &[RecordBatch],
    p_idx: usize,
    times: &[i64],
    iids: &IidRows,
    ties: &Ties,
) -> Option<Grouped> {
    let n = times.len();
    let mut index: HashMap<&[u8], u32> = HashMap::new();
    let mut group: Vec<u32> = Vec::with_capacity(n);
    let mut empty = false;
    let read = each_bytes(batches, p_idx, |_, p| {
        empty |= p.is_empty();
        let next = index.len() as u32;
        group.push(*index.entry(p).or_insert(next));
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
    if !iids.each(|row, iid| byte_starts[group[row] as usize + 1] += LEN + iid.len()) {
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
    let (mut fill, mut byte_fill) = (starts.clone(), byte_starts.clone());
    let mut order: Vec<Rec> = Vec::with_capacity(n);
    let mut bytes = vec![0u8; total];
    let slots = order.spare_capacity_mut();
    let mut filled = 0usize;
    iids.each(|row, iid| {
        let g = group[row] as usize;
        let off = byte_fill[g];
        bytes[off..off + LEN].copy_from_slice(&(iid.len() as u32).to_le_bytes());
        bytes[off + LEN..off + LEN + iid.len()].copy_from_slice(iid);
        byte_fill[g] += LEN + iid.len();
        slots[fill[g]].write(Rec {
            time: times[row],
            off: off as u32,
            row: row as u32,
        });
        fill[g] += 1;
        filled += 1;
    });
    if filled != n {
        return None;
    }
    // SAFETY: every slot of `0..n` was written above, exactly once: each of the `n`
    // rows (`filled`) wrote the slot `fill[g]` of its group `g` and moved it on, and
    // group `g` has `starts[g + 1] - starts[g]` rows (counted from the same `group`),
    // so its rows filled `starts[g]..starts[g + 1]`, one slot each.
    unsafe { order.set_len(n) };
    // The stable sort: it finds the runs already in order (a producer's rows come in
    // time order from each map task of Spark's shuffle) and merges them; the unstable
    // one took a tenth of the kernel's time more on the bench's rows. Both give the same
    // order: the row breaks every tie.
    for w in starts.windows(2) {
        order[w[0]..w[1]].sort_by(|a, b| {
            a.time
                .cmp(&b.time)
                .then_with(|| ties.cmp(a, b, &bytes))
                .then(a.row.cmp(&b.row))
        });
    }
    Some(Grouped {
        order,
        starts,
        iids: bytes,
    })
}

/// Dedup one partition (see the module docs): `batches` is an iterable of record
/// batches, all read before any work (empty ones left out); `iid` names the IID column,
/// or `content` the IDMPAUTO columns (one of them is given); `ties` the columns that
/// order a producer's rows of equal time; `columns` the answer columns to append, in
/// order. `None`: input the kernel does not take.
#[pyfunction]
#[pyo3(signature = (batches, producer, iid, content, time, ties, duration, maxsize, keep_first, large, columns))]
#[allow(clippy::too_many_arguments)]
pub fn _idmp_dedup<'py>(
    batches: &Bound<'py, PyAny>,
    producer: &str,
    iid: Option<&str>,
    content: Option<Vec<String>>,
    time: &str,
    ties: Vec<String>,
    duration: u64,
    maxsize: u64,
    keep_first: bool,
    large: bool,
    columns: Vec<String>,
) -> PyResult<Option<DedupOutput>> {
    let answer = answer_columns(&columns)?;
    let mode = IidFrom::new(iid, content)?;
    let (batches, schema) = match read_partition(batches)? {
        Partition::Rows(b, s) => (b, s),
        Partition::Empty => return Ok(Some(no_output())),
        Partition::Mixed => return Ok(None),
    };
    let (p_idx, t_idx) = (column(&schema, producer)?, column(&schema, time)?);
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    if n > u32::MAX as usize {
        return Ok(None);
    }
    let Ok(times) = times_ms(&batches, t_idx, time) else {
        return Ok(None);
    };
    // Where each row's IID comes from, and with IDMPAUTO each row's entry size (in IID
    // mode: the IID column's name and value, its one field pair).
    let (hashes, sizes) = match &mode {
        IidFrom::Content(content) => match auto_iids(&batches, &schema, content, n)? {
            Some(a) => (a.hashes, Some(a.sizes)),
            None => return Ok(None),
        },
        IidFrom::Column(_) => (Vec::new(), None),
    };
    let iid_rows = match &mode {
        IidFrom::Content(_) => IidRows::Hashes(&hashes),
        IidFrom::Column(i) => IidRows::Column(&batches, column(&schema, i)?),
    };
    let ties = match (iid, ties.as_slice()) {
        (Some(i), [t]) if t == i => Ties::Iid,
        _ => {
            let mut cols = Vec::with_capacity(ties.len());
            for t in &ties {
                match tie_values(&batches, column(&schema, t)?) {
                    Some(v) => cols.push(v),
                    None => return Ok(None),
                }
            }
            Ties::Columns(cols)
        }
    };
    let Some(grouped) = producer_order(&batches, p_idx, &times, &iid_rows, &ties) else {
        return Ok(None);
    };
    drop((times, iid_rows, ties));
    drop(hashes);
    let field_len = iid.map_or(0, |i| i.len() as u64);
    let mut kernel = IdmpDedup::new(duration, maxsize);
    let mut answers = Answers::new(n, &answer);
    for w in grouped.starts.windows(2) {
        kernel.next_producer();
        for rec in &grouped.order[w[0]..w[1]] {
            let iid = rec.iid(&grouped.iids);
            let size = match &sizes {
                None => field_len + iid.len() as u64,
                Some(s) => s[rec.row as usize],
            };
            match kernel.add(rec.time, iid, size) {
                Ok(o) => answers.set(rec.row as usize, o.id, o.duplicate),
                Err(_) => return Ok(None),
            }
        }
    }
    drop(grouped);
    Ok(Some(output(
        batches, answers, answer, &columns, keep_first, large,
    )))
}

/// A partition as the kernels read it.
pub(crate) enum Partition {
    /// No rows: the answer is an empty list.
    Empty,
    /// Batches of different schemas: left to the store path.
    Mixed,
    /// The non-empty batches and their one schema.
    Rows(Vec<RecordBatch>, arrow_schema::SchemaRef),
}

/// Read a partition from an iterable of record batches, empty ones left out.
pub(crate) fn read_partition(batches: &Bound<'_, PyAny>) -> PyResult<Partition> {
    let mut all: Vec<RecordBatch> = Vec::new();
    for b in batches.try_iter()? {
        let b = b?.extract::<PyRecordBatch>()?.into_inner();
        if b.num_rows() > 0 {
            all.push(b);
        }
    }
    let Some(schema) = all.first().map(|b| b.schema()) else {
        return Ok(Partition::Empty);
    };
    if all.iter().any(|b| b.schema() != schema) {
        return Ok(Partition::Mixed);
    }
    Ok(Partition::Rows(all, schema))
}

/// The index of the column `name`.
pub(crate) fn column(schema: &Schema, name: &str) -> PyResult<usize> {
    schema
        .index_of(name)
        .map_err(|_| value_err(format!("column {name:?} is not in the batch")))
}
