//! The dedup's Arrow side: the columns of a partition's record batches read as the
//! core's dedup takes them ([`xstreams_core::interop::dedup`]): producers and IIDs as
//! byte columns ([`ArrowBytes`]), times in ms, tie columns ([`tie_values`]), the
//! IDMPAUTO content as text the way `xadd_batch` converts it ([`auto_iids`]). The
//! grouping, ordering, hashing and answers are the core's; the kernel object
//! Python calls is [`crate::deduper`], its output batches [`crate::dedup_output`].

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Schema};
use pyo3::prelude::*;
use pyo3_arrow::PyRecordBatch;
use xstreams_core::error::data;
use xstreams_core::interop::dedup::{float_key, AutoIids, ByteColumn, Tie};

use crate::arrow::{prepare, value_err, values_across, Src};

/// A string or binary column of a partition's batches, rows counted across them.
#[derive(Clone, Copy)]
pub(crate) struct ArrowBytes<'a> {
    pub(crate) batches: &'a [RecordBatch],
    pub(crate) idx: usize,
}

impl<'a> ByteColumn<'a> for ArrowBytes<'a> {
    fn each(&self, f: impl FnMut(usize, &'a [u8])) -> bool {
        each_bytes(self.batches, self.idx, f)
    }
}

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

pub(crate) fn tie_values<'a>(batches: &'a [RecordBatch], idx: usize) -> Option<Tie<'a>> {
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

/// Each row's IDMPAUTO IID and entry size ([`AutoIids`]), the content columns' values
/// as text the way `xadd_batch` converts them, nulls left out; `None` if a column has a
/// type with no text form or a row has no content value (the store's error).
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
    let names: Vec<&[u8]> = content.iter().map(|c| c.as_bytes()).collect();
    let mut out = AutoIids::with_capacity(n);
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
        if !out.push_rows(&names, &values, b.num_rows()) {
            return Ok(None);
        }
    }
    Ok(Some(out))
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
        .map_err(|_| value_err(data::dedup_no_column(name)))
}
