//! Arrow input: tabular data in, each column value as the XADD argument a Python client
//! would send.

use std::io::Write;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef, TimeUnit};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::input::AnyRecordBatch;

use super::{type_err, value_err};

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
pub(super) fn python_float_repr(out: &mut Vec<u8>, x: f64, short32: Option<f32>) {
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
    // Shortest round-trip digits (ryu, without allocating), as "ddd.ddd" or "d.ddde-N".
    let mut rb = ryu::Buffer::new();
    let s = match short32 {
        Some(f) => rb.format_finite(f),
        None => rb.format_finite(x),
    }
    .as_bytes();
    let (neg, s) = match s.split_first() {
        Some((b'-', m)) => (true, m),
        _ => (false, s),
    };
    let (mant, exp10) = match s.iter().position(|&b| b == b'e') {
        Some(at) => {
            let e: i32 = std::str::from_utf8(&s[at + 1..])
                .ok()
                .and_then(|e| e.parse().ok())
                .expect("ryu's exponent is an integer");
            (&s[..at], e)
        }
        None => (s, 0),
    };
    let point = mant.iter().position(|&b| b == b'.').unwrap_or(mant.len());
    let mut dbuf = [0u8; 40];
    let mut nd = 0;
    for &b in mant {
        if b != b'.' {
            dbuf[nd] = b;
            nd += 1;
        }
    }
    // value = 0.d1d2... x 10^decpt, with no leading or trailing zero digit.
    let mut decpt = point as i32 + exp10;
    let mut digits = &dbuf[..nd];
    while let Some((b'0', rest)) = digits.split_first() {
        digits = rest;
        decpt -= 1;
    }
    while let Some((b'0', rest)) = digits.split_last() {
        digits = rest;
    }
    let exp = decpt - 1;
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
pub(crate) enum Src {
    /// A string or binary array, sliced in place.
    Arrow(ArrayRef),
    /// Values formatted here (numbers): data, end offsets, validity.
    Text {
        data: Vec<u8>,
        ends: Vec<usize>,
        valid: Vec<bool>,
    },
}

pub(super) fn text_from<T>(n: usize, valid: impl Fn(usize) -> bool, mut fmt: T) -> Src
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
                out.extend_from_slice(itoa::Buffer::new().format(a.value(i)).as_bytes());
            },
        )
    }};
}

/// Prepare a column for [`src_values`].
pub(crate) fn prepare(arr: &ArrayRef, name: &str) -> PyResult<Src> {
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

/// The `n` values of one column across batches (its [`Src`] per batch), nulls as `None`.
pub(crate) fn values_across(srcs: &[Src], n: usize) -> Vec<Option<&[u8]>> {
    let mut out = Vec::with_capacity(n);
    for s in srcs {
        src_values(s, &mut out);
    }
    out
}

/// Per-row command times in ms from an integer, timestamp or date column.
pub(crate) fn times_ms(batches: &[RecordBatch], idx: usize, name: &str) -> PyResult<Vec<i64>> {
    let mut out = Vec::with_capacity(batches.iter().map(|b| b.num_rows()).sum());
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

pub(super) fn column_index(schema: &Schema, name: &str, what: &str) -> PyResult<usize> {
    schema
        .index_of(name)
        .map_err(|_| value_err(format!("{what} column {name:?} is not in the batch")))
}

pub(super) fn no_nulls(values: &[Option<&[u8]>], name: &str, what: &str) -> PyResult<()> {
    if let Some(row) = values.iter().position(|v| v.is_none()) {
        return Err(value_err(format!(
            "{what} column {name:?} is null on row {row}"
        )));
    }
    Ok(())
}

/// Column names as a Python caller gives them (str).
pub(super) fn names_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<String>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_instance_of::<pyo3::types::PyString>() => Ok(Some(vec![o.extract()?])),
        Some(o) => Ok(Some(o.extract()?)),
    }
}
