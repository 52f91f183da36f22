//! Arrow batch paths of `Store`: `xadd_batch` (Arrow columns -> one XADD per row, run by
//! `xstreams_core::Store::xadd_rows`), `xrange_arrow` / `xrevrange_arrow` / `xread_arrow`
//! (entries -> an Arrow record batch). Arrow data crosses the boundary through the Arrow C
//! data interface (pyo3-arrow); no Python object is created per row.
//!
//! Column values become XADD arguments as Python clients would send them: strings as
//! UTF-8, binary as is, integers in decimal, floats as Python's `repr` (float32 as the
//! shortest repr of the float32 value), booleans as `1`/`0`, other types through Arrow's
//! cast to string (dates and timestamps in ISO 8601, decimals in plain notation). A null
//! value leaves the field out of that row; a null ID means `*`.

use std::io::Write;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Int64Array, LargeBinaryArray, LargeStringArray,
    MapArray, RecordBatch, StringArray, StructArray, UInt64Array,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_arrow::input::AnyRecordBatch;
use pyo3_arrow::{PyRecordBatch, PySchema};
use xstreams_core::batch::{Col, Entries, Idmp, RowOutcome, XaddRows};
use xstreams_core::command::ReadArgs;
use xstreams_core::Reply;

use crate::convert::arg_bytes;
use crate::errors::{data_err, reply_err};
use crate::store::{guarded, Store};

fn type_err(msg: impl Into<String>) -> PyErr {
    PyTypeError::new_err(msg.into())
}

fn value_err(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

// ------------------------------------------------------------------ input: Arrow -> bytes

/// Read any Arrow tabular input (a pyarrow RecordBatch or Table, an object with
/// `__arrow_c_array__` / `__arrow_c_stream__`, or a pandas DataFrame) into batches.
pub fn input_batches(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let mut obj = obj.clone();
    let module: String = obj
        .get_type()
        .getattr("__module__")
        .and_then(|m| m.extract())
        .unwrap_or_default();
    if module.starts_with("pandas") {
        let pa = py.import("pyarrow")?;
        let kw = PyDict::new(py);
        kw.set_item("preserve_index", false)?;
        obj = pa
            .getattr("Table")?
            .call_method("from_pandas", (obj,), Some(&kw))?;
    }
    let any: AnyRecordBatch = obj.extract().map_err(|_| {
        type_err(
            "batch must be a pyarrow RecordBatch or Table, a pandas DataFrame, or an object \
             with __arrow_c_array__ / __arrow_c_stream__",
        )
    })?;
    let reader = any.into_reader()?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| value_err(e.to_string()))?;
    Ok((schema, batches))
}

/// Python's `repr` of a float: the shortest digits that round-trip, in fixed notation
/// when the decimal exponent is in [-4, 16), else as `d.ddde+XX`.
fn python_float_repr(out: &mut Vec<u8>, x: f64, short32: Option<f32>) {
    if x.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
        return;
    }
    // Shortest round-trip digits, without allocating: "d.ddde-N".
    let mut buf = [0u8; 48];
    let len = {
        let mut cur = std::io::Cursor::new(&mut buf[..]);
        let _ = match short32 {
            Some(f) => write!(cur, "{f:e}"),
            None => write!(cur, "{x:e}"),
        };
        cur.position() as usize
    };
    let s = &buf[..len];
    let e_at = s
        .iter()
        .position(|&b| b == b'e')
        .expect("{:e} has an exponent");
    let (mant, exp) = (&s[..e_at], &s[e_at + 1..]);
    let exp: i32 = std::str::from_utf8(exp)
        .ok()
        .and_then(|e| e.parse().ok())
        .expect("{:e} exponent is an integer");
    let (neg, mant) = match mant.split_first() {
        Some((b'-', m)) => (true, m),
        _ => (false, mant),
    };
    let mut dbuf = [0u8; 40];
    let mut nd = 0;
    for &b in mant {
        if b != b'.' {
            dbuf[nd] = b;
            nd += 1;
        }
    }
    let digits = &dbuf[..nd];
    let decpt = exp + 1; // value = 0.d1d2... x 10^decpt
    if neg {
        out.push(b'-');
    }
    if decpt <= -4 || decpt > 16 {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let _ = write!(out, "{:02}", exp.unsigned_abs());
    } else if decpt <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-decpt) as usize));
        out.extend_from_slice(digits);
    } else if decpt as usize >= digits.len() {
        out.extend_from_slice(digits);
        out.extend(std::iter::repeat_n(b'0', decpt as usize - digits.len()));
        out.extend_from_slice(b".0");
    } else {
        out.extend_from_slice(&digits[..decpt as usize]);
        out.push(b'.');
        out.extend_from_slice(&digits[decpt as usize..]);
    }
}

/// Values of a column ready to be sliced into arguments.
enum Src {
    /// A string or binary array, sliced in place.
    Arrow(ArrayRef),
    /// Values formatted here (numbers): data, end offsets, validity.
    Text {
        data: Vec<u8>,
        ends: Vec<usize>,
        valid: Vec<bool>,
    },
}

fn text_from<T>(n: usize, valid: impl Fn(usize) -> bool, mut fmt: T) -> Src
where
    T: FnMut(usize, &mut Vec<u8>),
{
    let mut data = Vec::with_capacity(n * 8);
    let mut ends = Vec::with_capacity(n);
    let mut ok = Vec::with_capacity(n);
    for i in 0..n {
        let v = valid(i);
        if v {
            fmt(i, &mut data);
        }
        ok.push(v);
        ends.push(data.len());
    }
    Src::Text {
        data,
        ends,
        valid: ok,
    }
}

macro_rules! ints {
    ($arr:expr, $t:ty) => {{
        let a = $arr.as_primitive::<$t>();
        text_from(
            a.len(),
            |i| a.is_valid(i),
            |i, out| {
                let _ = write!(out, "{}", a.value(i));
            },
        )
    }};
}

/// Prepare a column for [`src_values`].
fn prepare(arr: &ArrayRef, name: &str) -> PyResult<Src> {
    use DataType::*;
    Ok(match arr.data_type() {
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => {
            Src::Arrow(arr.clone())
        }
        Int8 => ints!(arr, Int8Type),
        Int16 => ints!(arr, Int16Type),
        Int32 => ints!(arr, Int32Type),
        Int64 => ints!(arr, Int64Type),
        UInt8 => ints!(arr, UInt8Type),
        UInt16 => ints!(arr, UInt16Type),
        UInt32 => ints!(arr, UInt32Type),
        UInt64 => ints!(arr, UInt64Type),
        Float64 => {
            let a = arr.as_primitive::<Float64Type>();
            text_from(
                a.len(),
                |i| a.is_valid(i),
                |i, out| python_float_repr(out, a.value(i), None),
            )
        }
        Float32 => {
            let a = arr.as_primitive::<Float32Type>();
            text_from(
                a.len(),
                |i| a.is_valid(i),
                |i, out| python_float_repr(out, a.value(i) as f64, Some(a.value(i))),
            )
        }
        Float16 => {
            let a = arr.as_primitive::<Float16Type>();
            text_from(
                a.len(),
                |i| a.is_valid(i),
                |i, out| {
                    let f = a.value(i).to_f32();
                    python_float_repr(out, f as f64, Some(f))
                },
            )
        }
        Boolean => {
            let a = arr.as_boolean();
            text_from(
                a.len(),
                |i| a.is_valid(i),
                |i, out| out.push(if a.value(i) { b'1' } else { b'0' }),
            )
        }
        Null => text_from(arr.len(), |_| false, |_, _| {}),
        Dictionary(_, value) => {
            let target = match value.as_ref() {
                Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => LargeBinary,
                _ => LargeUtf8,
            };
            let cast = arrow_cast::cast(arr, &target)
                .map_err(|e| type_err(format!("column {name:?}: {e}")))?;
            return prepare(&cast, name);
        }
        other => {
            let cast = arrow_cast::cast(arr, &LargeUtf8).map_err(|e| {
                type_err(format!(
                    "column {name:?} has type {other}, which has no text form: cast it first ({e})"
                ))
            })?;
            Src::Arrow(cast)
        }
    })
}

/// Append the values of `src` (nulls as `None`) to `out`.
fn src_values<'a>(src: &'a Src, out: &mut Vec<Option<&'a [u8]>>) {
    match src {
        Src::Text { data, ends, valid } => {
            let mut start = 0;
            for (i, &end) in ends.iter().enumerate() {
                out.push(valid[i].then(|| &data[start..end]));
                start = end;
            }
        }
        Src::Arrow(arr) => {
            macro_rules! push_all {
                ($a:expr, $conv:expr) => {{
                    let a = $a;
                    for i in 0..a.len() {
                        out.push(a.is_valid(i).then(|| $conv(a.value(i))));
                    }
                }};
            }
            match arr.data_type() {
                DataType::Utf8 => push_all!(arr.as_string::<i32>(), str::as_bytes),
                DataType::LargeUtf8 => push_all!(arr.as_string::<i64>(), str::as_bytes),
                DataType::Utf8View => push_all!(arr.as_string_view(), str::as_bytes),
                DataType::Binary => push_all!(arr.as_binary::<i32>(), |v| v),
                DataType::LargeBinary => push_all!(arr.as_binary::<i64>(), |v| v),
                DataType::BinaryView => push_all!(arr.as_binary_view(), |v| v),
                DataType::FixedSizeBinary(_) => {
                    push_all!(arr.as_fixed_size_binary(), |v| v)
                }
                _ => unreachable!("prepare only keeps string and binary arrays"),
            }
        }
    }
}

/// Per-row command times in ms from an integer, timestamp or date column.
fn times_ms(batches: &[RecordBatch], idx: usize, name: &str) -> PyResult<Vec<i64>> {
    let mut out = Vec::new();
    for b in batches {
        let arr = b.column(idx);
        if arr.null_count() > 0 {
            let row = out.len() + (0..arr.len()).find(|&i| arr.is_null(i)).unwrap_or(0);
            return Err(value_err(format!(
                "clock column {name:?} is null on row {row}"
            )));
        }
        macro_rules! conv {
            ($t:ty, $f:expr) => {{
                let a = arr.as_primitive::<$t>();
                for v in a.values().iter() {
                    let f: fn(_) -> Option<i64> = $f;
                    out.push(f(*v).ok_or_else(|| {
                        value_err(format!("clock column {name:?}: {v} is out of range"))
                    })?);
                }
            }};
        }
        match arr.data_type() {
            DataType::Int8 => conv!(Int8Type, |v: i8| Some(v as i64)),
            DataType::Int16 => conv!(Int16Type, |v: i16| Some(v as i64)),
            DataType::Int32 => conv!(Int32Type, |v: i32| Some(v as i64)),
            DataType::Int64 => conv!(Int64Type, |v: i64| Some(v)),
            DataType::UInt8 => conv!(UInt8Type, |v: u8| Some(v as i64)),
            DataType::UInt16 => conv!(UInt16Type, |v: u16| Some(v as i64)),
            DataType::UInt32 => conv!(UInt32Type, |v: u32| Some(v as i64)),
            DataType::UInt64 => conv!(UInt64Type, |v: u64| i64::try_from(v).ok()),
            DataType::Timestamp(TimeUnit::Second, _) => {
                conv!(TimestampSecondType, |v: i64| v.checked_mul(1000))
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                conv!(TimestampMillisecondType, |v: i64| Some(v))
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                conv!(TimestampMicrosecondType, |v: i64| Some(v.div_euclid(1000)))
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                conv!(TimestampNanosecondType, |v: i64| Some(
                    v.div_euclid(1_000_000)
                ))
            }
            DataType::Date32 => conv!(Date32Type, |v: i32| (v as i64).checked_mul(86_400_000)),
            DataType::Date64 => conv!(Date64Type, |v: i64| Some(v)),
            other => {
                return Err(type_err(format!(
                "clock column {name:?} must hold integers (ms), timestamps or dates, not {other}"
            )))
            }
        }
    }
    Ok(out)
}

fn column_index(schema: &Schema, name: &str, what: &str) -> PyResult<usize> {
    schema
        .index_of(name)
        .map_err(|_| value_err(format!("{what} column {name:?} is not in the batch")))
}

fn no_nulls(values: &[Option<&[u8]>], name: &str, what: &str) -> PyResult<()> {
    if let Some(row) = values.iter().position(|v| v.is_none()) {
        return Err(value_err(format!(
            "{what} column {name:?} is null on row {row}"
        )));
    }
    Ok(())
}

/// Column names as a Python caller gives them (str).
fn names_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<String>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_instance_of::<pyo3::types::PyString>() => Ok(Some(vec![o.extract()?])),
        Some(o) => Ok(Some(o.extract()?)),
    }
}

fn outcomes_batch(outcomes: &[RowOutcome], with_error: bool) -> PyResult<RecordBatch> {
    let n = outcomes.len();
    let mut off = Vec::with_capacity(n + 1);
    off.push(0i64);
    let mut data = Vec::with_capacity(n * 16);
    let mut valid = Vec::with_capacity(n);
    let mut dup = Vec::with_capacity(n);
    let mut err: Vec<Option<&str>> = Vec::new();
    for o in outcomes {
        if let Some(id) = o.id() {
            let _ = write!(data, "{}-{}", id.ms, id.seq);
        }
        off.push(data.len() as i64);
        valid.push(o.id().is_some());
        dup.push(matches!(o, RowOutcome::Duplicate(_)));
        if with_error {
            err.push(match o {
                RowOutcome::Error(e) => Some(e.as_str()),
                _ => None,
            });
        }
    }
    let ids = bytes_array(off, data, Some(NullBuffer::from(valid)), false)?;
    let mut fields = vec![
        Field::new("id", DataType::Utf8, true),
        Field::new("duplicate", DataType::Boolean, false),
    ];
    let mut cols: Vec<ArrayRef> = vec![ids, Arc::new(BooleanArray::from(dup))];
    if with_error {
        fields.push(Field::new("error", DataType::Utf8, true));
        cols.push(Arc::new(StringArray::from(err)));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).map_err(|e| value_err(e.to_string()))
}

/// Options of `xadd_batch` after argument checks.
pub struct XaddOpts<'a> {
    pub key: Option<Vec<u8>>,
    pub key_column: Option<String>,
    pub fields: Option<Vec<String>>,
    pub id: Option<String>,
    pub producer: Option<String>,
    pub pid: Option<Vec<u8>>,
    pub iid: Option<String>,
    pub idmpauto: bool,
    pub options: Vec<Vec<u8>>,
    pub trim: Vec<Vec<u8>>,
    pub clock: Option<String>,
    pub forget: bool,
    pub db: usize,
    pub _p: std::marker::PhantomData<&'a ()>,
}

/// Run `xadd_batch` on `store`: outcomes, one per row.
pub fn xadd_arrow(
    py: Python<'_>,
    store: &xstreams_core::Store,
    batch: &Bound<'_, PyAny>,
    o: &XaddOpts<'_>,
) -> PyResult<Vec<RowOutcome>> {
    let (schema, batches) = input_batches(py, batch)?;
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    let col = |name: &str, what: &str| column_index(&schema, name, what);
    let key_idx = match &o.key_column {
        Some(c) => Some(col(c, "key")?),
        None => None,
    };
    let id_idx = match &o.id {
        Some(c) => Some(col(c, "id")?),
        None => None,
    };
    let producer_idx = match &o.producer {
        Some(c) => Some(col(c, "producer")?),
        None => None,
    };
    let iid_idx = match &o.iid {
        Some(c) => Some(col(c, "iid")?),
        None => None,
    };
    let clock_idx = match &o.clock {
        Some(c) => Some(col(c, "clock")?),
        None => None,
    };
    let reserved: Vec<usize> = [key_idx, id_idx, producer_idx, iid_idx, clock_idx]
        .into_iter()
        .flatten()
        .collect();
    let field_idx: Vec<usize> = match &o.fields {
        Some(names) => names
            .iter()
            .map(|f| column_index(&schema, f, "field"))
            .collect::<PyResult<_>>()?,
        None => (0..schema.fields().len())
            .filter(|i| !reserved.contains(i))
            .collect(),
    };
    if field_idx.is_empty() && n > 0 {
        return Err(value_err("the batch has no field column"));
    }
    // Phase 1: sources (owned formatted text, or the Arrow arrays), per column and batch.
    let mut wanted: Vec<usize> = reserved.clone();
    wanted.extend(field_idx.iter().copied());
    wanted.sort_unstable();
    wanted.dedup();
    let mut sources: Vec<Vec<Src>> = Vec::with_capacity(schema.fields().len());
    for c in 0..schema.fields().len() {
        let mut per = Vec::new();
        if wanted.contains(&c) && Some(c) != clock_idx {
            let name = schema.field(c).name();
            for b in &batches {
                per.push(prepare(b.column(c), name)?);
            }
        }
        sources.push(per);
    }
    // Phase 2: slices.
    let values = |c: usize| -> Vec<Option<&[u8]>> {
        let mut v = Vec::with_capacity(n);
        for s in &sources[c] {
            src_values(s, &mut v);
        }
        v
    };
    let name_of = |c: usize| schema.field(c).name().as_str();
    let key = match key_idx {
        Some(c) => {
            let v = values(c);
            no_nulls(&v, name_of(c), "key")?;
            Col::Rows(v)
        }
        None => Col::Const(o.key.as_deref().unwrap_or(b"")),
    };
    let pid = match producer_idx {
        Some(c) => {
            let v = values(c);
            no_nulls(&v, name_of(c), "producer")?;
            Some(Col::Rows(v))
        }
        None => o.pid.as_deref().map(Col::Const),
    };
    let idmp = match (pid, iid_idx, o.idmpauto) {
        (None, None, false) => Idmp::Off,
        (Some(pid), Some(c), false) => {
            let v = values(c);
            no_nulls(&v, name_of(c), "iid")?;
            Idmp::Iid {
                pid,
                iid: Col::Rows(v),
            }
        }
        (Some(pid), None, true) => Idmp::Auto { pid },
        (None, _, _) => {
            return Err(data_err(
                py,
                "iid and idmpauto need a producer (a producer column or a pid)".into(),
            ))
        }
        (Some(_), Some(_), true) => {
            return Err(data_err(
                py,
                "Only one of ```idmpauto``` or ```iid``` may be specified".into(),
            ))
        }
        (Some(_), None, false) => {
            return Err(data_err(
                py,
                "a producer needs an iid column or idmpauto=True".into(),
            ))
        }
    };
    let fields: Vec<(&[u8], Col<'_>)> = field_idx
        .iter()
        .map(|&c| (name_of(c).as_bytes(), Col::Rows(values(c))))
        .collect();
    let times = match clock_idx {
        Some(c) => Some(times_ms(&batches, c, name_of(c))?),
        None => None,
    };
    let rows = XaddRows {
        len: n,
        key: Some(key),
        id: id_idx.map(|c| Col::Rows(values(c))),
        options: o.options.iter().map(|v| v.as_slice()).collect(),
        idmp,
        trim: o.trim.iter().map(|v| v.as_slice()).collect(),
        fields,
        times,
        forget: o.forget,
    };
    guarded(py, || store.xadd_rows(o.db, &rows))?.map_err(|e| reply_err(py, &e))
}

/// Build the `xadd_batch` reply from the outcomes: an Arrow batch, or the first row
/// error raised (with `.row` and `.result` set on the exception) when `raise_errors`.
pub fn xadd_reply<'py>(
    py: Python<'py>,
    outcomes: &[RowOutcome],
    raise_errors: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let first_err = outcomes
        .iter()
        .position(|o| matches!(o, RowOutcome::Error(_)));
    if raise_errors {
        if let Some(row) = first_err {
            let RowOutcome::Error(line) = &outcomes[row] else {
                unreachable!()
            };
            let err = reply_err(py, line);
            let exc = err.value(py);
            let result = PyRecordBatch::new(outcomes_batch(outcomes, true)?).into_pyarrow(py)?;
            let _ = exc.setattr("row", row);
            let _ = exc.setattr("result", result);
            return Err(err);
        }
    }
    PyRecordBatch::new(outcomes_batch(outcomes, !raise_errors)?).into_pyarrow(py)
}

// ------------------------------------------------------------------ output: entries -> Arrow

/// How entries are turned into a record batch.
#[derive(Clone, Default)]
pub struct EntriesShape {
    /// Add a `stream` column first.
    pub stream_column: bool,
    /// Field names and values as binary instead of UTF-8 text.
    pub binary: bool,
    /// `ms` and `seq` as int64 (an ID above 2^63 - 1 is an error) instead of uint64.
    pub signed_ids: bool,
    /// Typed field columns instead of the `fields` map: each column holds the value of
    /// the field of that name (the last one if an entry repeats it), cast from text.
    pub schema: Option<SchemaRef>,
}

fn bytes_array(
    offsets: Vec<i64>,
    data: Vec<u8>,
    nulls: Option<NullBuffer>,
    binary: bool,
) -> PyResult<ArrayRef> {
    let big = *offsets.last().unwrap_or(&0) > i32::MAX as i64;
    if big {
        let off = OffsetBuffer::new(ScalarBuffer::from(offsets));
        let buf = Buffer::from_vec(data);
        return Ok(if binary {
            Arc::new(
                LargeBinaryArray::try_new(off, buf, nulls).map_err(|e| value_err(e.to_string()))?,
            )
        } else {
            Arc::new(LargeStringArray::try_new(off, buf, nulls).map_err(utf8_err)?)
        });
    }
    let off: Vec<i32> = offsets.into_iter().map(|o| o as i32).collect();
    let off = OffsetBuffer::new(ScalarBuffer::from(off));
    let buf = Buffer::from_vec(data);
    Ok(if binary {
        Arc::new(BinaryArray::try_new(off, buf, nulls).map_err(|e| value_err(e.to_string()))?)
    } else {
        Arc::new(StringArray::try_new(off, buf, nulls).map_err(utf8_err)?)
    })
}

fn utf8_err(e: arrow_schema::ArrowError) -> PyErr {
    value_err(format!(
        "an entry holds bytes that are not UTF-8 text ({e}); read with decode=False"
    ))
}

fn slice_offsets(offsets: &[i64], from: usize, to: usize) -> (Vec<i64>, usize, usize) {
    let base = offsets[from];
    let v = offsets[from..=to].iter().map(|o| o - base).collect();
    (v, base as usize, offsets[to] as usize)
}

/// Rows `[from, to)` of `e` as a record batch.
pub fn entries_batch(
    e: &Entries,
    from: usize,
    to: usize,
    shape: &EntriesShape,
) -> PyResult<RecordBatch> {
    let n = to - from;
    let mut fields: Vec<Field> = Vec::new();
    let mut cols: Vec<ArrayRef> = Vec::new();
    if shape.stream_column {
        let mut off = vec![0i64];
        let mut data = Vec::new();
        for &s in &e.stream[from..to] {
            data.extend_from_slice(&e.keys[s as usize]);
            off.push(data.len() as i64);
        }
        let arr = bytes_array(off, data, None, shape.binary)?;
        fields.push(Field::new("stream", arr.data_type().clone(), false));
        cols.push(arr);
    }
    let mut off = vec![0i64];
    let mut data = Vec::with_capacity(n * 16);
    for id in &e.ids[from..to] {
        let _ = write!(data, "{}-{}", id.ms, id.seq);
        off.push(data.len() as i64);
    }
    cols.push(bytes_array(off, data, None, false)?);
    fields.push(Field::new("id", DataType::Utf8, false));
    if shape.signed_ids {
        let conv = |v: u64| {
            i64::try_from(v).map_err(|_| value_err(format!("ID part {v} does not fit in int64")))
        };
        let ms: Vec<i64> = e.ids[from..to]
            .iter()
            .map(|i| conv(i.ms))
            .collect::<PyResult<_>>()?;
        let seq: Vec<i64> = e.ids[from..to]
            .iter()
            .map(|i| conv(i.seq))
            .collect::<PyResult<_>>()?;
        cols.push(Arc::new(Int64Array::from(ms)));
        cols.push(Arc::new(Int64Array::from(seq)));
        fields.push(Field::new("ms", DataType::Int64, false));
        fields.push(Field::new("seq", DataType::Int64, false));
    } else {
        cols.push(Arc::new(UInt64Array::from_iter_values(
            e.ids[from..to].iter().map(|i| i.ms),
        )));
        cols.push(Arc::new(UInt64Array::from_iter_values(
            e.ids[from..to].iter().map(|i| i.seq),
        )));
        fields.push(Field::new("ms", DataType::UInt64, false));
        fields.push(Field::new("seq", DataType::UInt64, false));
    }
    let all_present = e.present[from..to].iter().all(|p| *p);
    let entry_nulls = (!all_present).then(|| NullBuffer::from(e.present[from..to].to_vec()));
    match &shape.schema {
        None => {
            let (pair_off, p0, p1) = slice_offsets(&e.pair_offsets, from, to);
            let (noff, n0, n1) = slice_offsets(&e.name_offsets, p0, p1);
            let (voff, v0, v1) = slice_offsets(&e.value_offsets, p0, p1);
            let keys = bytes_array(noff, e.names[n0..n1].to_vec(), None, shape.binary)?;
            let vals = bytes_array(voff, e.values[v0..v1].to_vec(), None, shape.binary)?;
            let kf = Field::new("key", keys.data_type().clone(), false);
            let vf = Field::new("value", vals.data_type().clone(), true);
            let entries = StructArray::try_new(Fields::from(vec![kf, vf]), vec![keys, vals], None)
                .map_err(|e| value_err(e.to_string()))?;
            let entries_field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
            if pair_off.last().copied().unwrap_or(0) > i32::MAX as i64 {
                return Err(value_err(
                    "too many field/value pairs in one batch: read fewer entries",
                ));
            }
            let off: Vec<i32> = pair_off.into_iter().map(|o| o as i32).collect();
            let map = MapArray::try_new(
                entries_field,
                OffsetBuffer::new(ScalarBuffer::from(off)),
                entries,
                entry_nulls,
                false,
            )
            .map_err(|e| value_err(e.to_string()))?;
            fields.push(Field::new("fields", map.data_type().clone(), true));
            cols.push(Arc::new(map));
        }
        Some(schema) => {
            for f in schema.fields() {
                let want = f.name().as_bytes();
                let mut off = vec![0i64];
                let mut data = Vec::new();
                let mut valid = Vec::with_capacity(n);
                for i in from..to {
                    let (a, b) = (e.pair_offsets[i] as usize, e.pair_offsets[i + 1] as usize);
                    let mut found: Option<&[u8]> = None;
                    for j in a..b {
                        let name =
                            &e.names[e.name_offsets[j] as usize..e.name_offsets[j + 1] as usize];
                        if name == want {
                            found = Some(
                                &e.values
                                    [e.value_offsets[j] as usize..e.value_offsets[j + 1] as usize],
                            );
                        }
                    }
                    if let Some(v) = found {
                        data.extend_from_slice(v);
                    }
                    valid.push(found.is_some());
                    off.push(data.len() as i64);
                }
                let target = f.data_type();
                let binary_target = matches!(
                    target,
                    DataType::Binary | DataType::LargeBinary | DataType::BinaryView
                );
                let nulls = Some(NullBuffer::from(valid));
                let raw = bytes_array(off, data, nulls, binary_target)?;
                let arr = if raw.data_type() == target {
                    raw
                } else {
                    let opts = arrow_cast::CastOptions {
                        safe: false,
                        ..Default::default()
                    };
                    arrow_cast::cast_with_options(&raw, target, &opts).map_err(|err| {
                        value_err(format!(
                            "field {:?} cannot be read as {target}: {err}",
                            f.name()
                        ))
                    })?
                };
                fields.push(Field::new(f.name(), target.clone(), true));
                cols.push(arr);
            }
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).map_err(|e| value_err(e.to_string()))
}

/// All of `e` as one pyarrow RecordBatch.
pub fn entries_to_py<'py>(
    py: Python<'py>,
    e: &Entries,
    shape: &EntriesShape,
) -> PyResult<Bound<'py, PyAny>> {
    PyRecordBatch::new(entries_batch(e, 0, e.len(), shape)?).into_pyarrow(py)
}

/// `e` as a list of pyarrow RecordBatches of at most `max_rows` rows.
pub fn entries_to_py_list<'py>(
    py: Python<'py>,
    e: &Entries,
    shape: &EntriesShape,
    max_rows: usize,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    let max_rows = max_rows.max(1);
    let mut from = 0;
    while from < e.len() {
        let to = (from + max_rows).min(e.len());
        out.append(PyRecordBatch::new(entries_batch(e, from, to, shape)?).into_pyarrow(py)?)?;
        from = to;
    }
    Ok(out)
}

pub fn schema_arg(schema: Option<&Bound<'_, PyAny>>) -> PyResult<Option<SchemaRef>> {
    match schema {
        None => Ok(None),
        Some(s) => {
            let s: PySchema = s
                .extract()
                .map_err(|_| type_err("schema must be a pyarrow.Schema of the field columns"))?;
            Ok(Some(s.into_inner()))
        }
    }
}

// ------------------------------------------------------------------ Store methods

fn id_arg(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    Ok(arg_bytes(py, v)?.into_owned())
}

#[pymethods]
impl Store {
    /// Append the rows of an Arrow batch to stream ``key``, one ``XADD`` per row, under one
    /// lock: each row has exactly the semantics of that XADD sent alone (see
    /// ``docs/spark.md`` for how columns become arguments). Returns a
    /// ``pyarrow.RecordBatch`` with ``id`` (the reply, null for a nil reply or an error)
    /// and ``duplicate`` (an IDMP duplicate: ``id`` is then the first entry's), plus
    /// ``error`` with ``errors="return"``; with ``errors="raise"`` every row runs, then
    /// the first failing row's error is raised (``exc.row``, ``exc.result``).
    #[pyo3(signature = (key, batch, *, fields=None, id=None, producer=None, pid=None, iid=None, idmpauto=false, maxlen=None, minid=None, approximate=true, limit=None, nomkstream=false, ref_policy=None, clock=None, key_column=None, errors="raise", db=0, _forget=false))]
    #[allow(clippy::too_many_arguments)]
    fn xadd_batch<'py>(
        &self,
        py: Python<'py>,
        key: Option<&Bound<'py, PyAny>>,
        batch: &Bound<'py, PyAny>,
        fields: Option<&Bound<'py, PyAny>>,
        id: Option<String>,
        producer: Option<String>,
        pid: Option<&Bound<'py, PyAny>>,
        iid: Option<String>,
        idmpauto: bool,
        maxlen: Option<i64>,
        minid: Option<&Bound<'py, PyAny>>,
        approximate: bool,
        limit: Option<i64>,
        nomkstream: bool,
        ref_policy: Option<String>,
        clock: Option<String>,
        key_column: Option<String>,
        errors: &str,
        db: usize,
        _forget: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let raise_errors = match errors {
            "raise" => true,
            "return" => false,
            _ => return Err(value_err("errors must be 'raise' or 'return'")),
        };
        let key = match key {
            Some(k) if !k.is_none() => Some(arg_bytes(py, k)?.into_owned()),
            _ => None,
        };
        if key.is_some() == key_column.is_some() {
            return Err(value_err("give either key or key_column"));
        }
        if maxlen.is_some() && minid.is_some() {
            return Err(data_err(
                py,
                "Only one of ```maxlen``` or ```minid``` may be specified".into(),
            ));
        }
        let mut options: Vec<Vec<u8>> = Vec::new();
        if nomkstream {
            options.push(b"NOMKSTREAM".to_vec());
        }
        if let Some(p) = ref_policy {
            if !["KEEPREF", "DELREF", "ACKED"].contains(&p.as_str()) {
                return Err(data_err(
                    py,
                    "XADD ref_policy must be one of: KEEPREF, DELREF, ACKED".into(),
                ));
            }
            options.push(p.into_bytes());
        }
        let mut trim: Vec<Vec<u8>> = Vec::new();
        if let Some(m) = maxlen {
            if m < 0 {
                return Err(data_err(
                    py,
                    "XADD maxlen must be non-negative integer".into(),
                ));
            }
            trim.push(b"MAXLEN".to_vec());
            if approximate {
                trim.push(b"~".to_vec());
            }
            trim.push(m.to_string().into_bytes());
        }
        if let Some(m) = minid {
            trim.push(b"MINID".to_vec());
            if approximate {
                trim.push(b"~".to_vec());
            }
            trim.push(id_arg(py, m)?);
        }
        if let Some(l) = limit {
            trim.push(b"LIMIT".to_vec());
            trim.push(l.to_string().into_bytes());
        }
        let pid = match pid {
            Some(p) if !p.is_none() => Some(arg_bytes(py, p)?.into_owned()),
            _ => None,
        };
        if pid.is_some() && producer.is_some() {
            return Err(value_err(
                "give either producer (a column) or pid (a value)",
            ));
        }
        let opts = XaddOpts {
            key,
            key_column,
            fields: names_arg(fields)?,
            id,
            producer,
            pid,
            iid,
            idmpauto,
            options,
            trim,
            clock,
            forget: _forget,
            db,
            _p: std::marker::PhantomData,
        };
        let outcomes = xadd_arrow(py, self.core(), batch, &opts)?;
        xadd_reply(py, &outcomes, raise_errors)
    }

    /// ``XRANGE key start end [COUNT count]`` as a ``pyarrow.RecordBatch``: ``id``
    /// (string), ``ms`` and ``seq`` (uint64), and ``fields`` (a map of field to value, in
    /// entry order), or with ``schema`` (a ``pyarrow.Schema``) one typed column per
    /// schema field instead of ``fields``. ``decode=False`` gives binary instead of text.
    #[pyo3(signature = (key, start=None, end=None, count=None, *, schema=None, decode=true, db=0))]
    #[allow(clippy::too_many_arguments)]
    fn xrange_arrow<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        count: Option<i64>,
        schema: Option<&Bound<'py, PyAny>>,
        decode: bool,
        db: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.range_arrow(py, key, start, end, count, schema, decode, db, false)
    }

    /// ``XREVRANGE key end start [COUNT count]`` as a ``pyarrow.RecordBatch`` (newest
    /// first; columns as ``xrange_arrow``).
    #[pyo3(signature = (key, end=None, start=None, count=None, *, schema=None, decode=true, db=0))]
    #[allow(clippy::too_many_arguments)]
    fn xrevrange_arrow<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        end: Option<&Bound<'py, PyAny>>,
        start: Option<&Bound<'py, PyAny>>,
        count: Option<i64>,
        schema: Option<&Bound<'py, PyAny>>,
        decode: bool,
        db: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.range_arrow(py, key, start, end, count, schema, decode, db, true)
    }

    /// ``XREAD [COUNT n] [BLOCK ms] STREAMS key... id...`` (or, with ``group`` and
    /// ``consumer``, ``XREADGROUP GROUP group consumer [NOACK] ...``) as a
    /// ``pyarrow.RecordBatch`` with a ``stream`` column first, then the columns of
    /// ``xrange_arrow``; no entry (or a timeout) gives an empty batch. An XREADGROUP
    /// history entry that was deleted has a null ``fields``.
    #[pyo3(signature = (streams, count=None, block=None, *, group=None, consumer=None, noack=false, schema=None, decode=true, db=0, max_count=None, max_size=None))]
    #[allow(clippy::too_many_arguments)]
    fn xread_arrow<'py>(
        &self,
        py: Python<'py>,
        streams: &Bound<'py, PyDict>,
        count: Option<i64>,
        block: Option<i64>,
        group: Option<&Bound<'py, PyAny>>,
        consumer: Option<&Bound<'py, PyAny>>,
        noack: bool,
        schema: Option<&Bound<'py, PyAny>>,
        decode: bool,
        db: usize,
        max_count: Option<i64>,
        max_size: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if streams.is_empty() {
            return Err(data_err(
                py,
                "XREAD streams must be a non empty dict".into(),
            ));
        }
        let shape = EntriesShape {
            stream_column: true,
            binary: !decode,
            signed_ids: false,
            schema: schema_arg(schema)?,
        };
        if block.is_none() {
            // Typed read: no arguments built, no reply parsed.
            let mut keys = Vec::with_capacity(streams.len());
            let mut ids = Vec::with_capacity(streams.len());
            for (k, v) in streams.iter() {
                keys.push(arg_bytes(py, &k)?.into_owned());
                ids.push(arg_bytes(py, &v)?.into_owned());
            }
            let (gname, cname) = match (group, consumer) {
                (Some(g), Some(c)) => (
                    Some(arg_bytes(py, g)?.into_owned()),
                    Some(arg_bytes(py, c)?.into_owned()),
                ),
                (None, None) => (None, None),
                _ => return Err(data_err(py, "group and consumer go together".into())),
            };
            let key_refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
            let id_refs: Vec<&[u8]> = ids.iter().map(|k| k.as_slice()).collect();
            let mut a = match (&gname, &cname) {
                (Some(g), Some(c)) => ReadArgs::xreadgroup(g, c, &key_refs, &id_refs),
                _ => ReadArgs::xread(&key_refs, &id_refs),
            };
            a.count = count.map_or(0, |c| c.max(0) as u64);
            a.noack = noack;
            a.max_count = positive(py, "max_count", max_count)?;
            a.max_size = positive(py, "max_size", max_size)?;
            let store = self.core();
            let entries = guarded(py, || store.read(db, &a))?.map_err(|e| reply_err(py, &e.0))?;
            return entries_to_py(py, &entries, &shape);
        }
        let mut args: Vec<Vec<u8>> = Vec::new();
        match (group, consumer) {
            (Some(g), Some(c)) => {
                args.push(b"XREADGROUP".to_vec());
                args.push(b"GROUP".to_vec());
                args.push(arg_bytes(py, g)?.into_owned());
                args.push(arg_bytes(py, c)?.into_owned());
            }
            (None, None) => args.push(b"XREAD".to_vec()),
            _ => return Err(data_err(py, "group and consumer go together".into())),
        }
        if let Some(c) = count {
            args.push(b"COUNT".to_vec());
            args.push(c.to_string().into_bytes());
        }
        if let Some(c) = max_count {
            args.push(b"MAXCOUNT".to_vec());
            args.push(c.to_string().into_bytes());
        }
        if let Some(c) = max_size {
            args.push(b"MAXSIZE".to_vec());
            args.push(c.to_string().into_bytes());
        }
        if let Some(b) = block {
            args.push(b"BLOCK".to_vec());
            args.push(b.to_string().into_bytes());
        }
        if noack {
            args.push(b"NOACK".to_vec());
        }
        args.push(b"STREAMS".to_vec());
        let mut ids = Vec::new();
        for (k, v) in streams.iter() {
            args.push(arg_bytes(py, &k)?.into_owned());
            ids.push(arg_bytes(py, &v)?.into_owned());
        }
        args.extend(ids);
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        let reply = self.run(py, &refs, db, 2)?;
        if let Reply::Error(e) = &reply {
            return Err(reply_err(py, e));
        }
        // A blocked call is served a reply (the store's waiters run commands).
        let entries =
            guarded(py, || Entries::from_read_reply(&reply))?.map_err(|e| reply_err(py, &e))?;
        entries_to_py(py, &entries, &shape)
    }
}

/// A MAXCOUNT / MAXSIZE keyword: absent (0) or a positive integer; the command's own
/// error otherwise.
fn positive(py: Python<'_>, name: &str, v: Option<i64>) -> PyResult<u64> {
    match v {
        None => Ok(0),
        Some(n) if n > 0 => Ok(n as u64),
        Some(_) => {
            let e = if name == "max_count" {
                xstreams_core::CmdError::maxcount_not_positive()
            } else {
                xstreams_core::CmdError::maxsize_not_positive()
            };
            Err(reply_err(py, &e.0))
        }
    }
}

impl Store {
    #[allow(clippy::too_many_arguments)]
    fn range_arrow<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        count: Option<i64>,
        schema: Option<&Bound<'py, PyAny>>,
        decode: bool,
        db: usize,
        rev: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let key = arg_bytes(py, key)?.into_owned();
        let start = match start {
            Some(s) => id_arg(py, s)?,
            None => b"-".to_vec(),
        };
        let end = match end {
            Some(e) => id_arg(py, e)?,
            None => b"+".to_vec(),
        };
        let shape = EntriesShape {
            stream_column: false,
            binary: !decode,
            signed_ids: false,
            schema: schema_arg(schema)?,
        };
        let store = self.core();
        let entries = guarded(py, || {
            store.range_entries(db, &key, &start, &end, count, rev)
        })?
        .map_err(|e| reply_err(py, &e))?;
        let batch = guarded(py, || entries_batch(&entries, 0, entries.len(), &shape))??;
        PyRecordBatch::new(batch).into_pyarrow(py)
    }
}
