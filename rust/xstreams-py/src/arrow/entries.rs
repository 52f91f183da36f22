//! Arrow output: entries as a record batch (or Python lists).

use std::io::Write;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, Int64Array, LargeBinaryArray, LargeStringArray, MapArray,
    RecordBatch, StringArray, StructArray, UInt64Array,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3_arrow::PySchema;

use super::handoff::batch_to_pyarrow;
use xstreams_core::interop::batch::Entries;

use super::{type_err, value_err};

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

pub(super) fn bytes_array(
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

pub(super) fn utf8_err(e: arrow_schema::ArrowError) -> PyErr {
    value_err(format!(
        "an entry holds bytes that are not UTF-8 text ({e}); read with decode=False"
    ))
}

pub(super) fn slice_offsets(offsets: &[i64], from: usize, to: usize) -> (Vec<i64>, usize, usize) {
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
    batch_to_pyarrow(py, entries_batch(e, 0, e.len(), shape)?)
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
        out.append(batch_to_pyarrow(py, entries_batch(e, from, to, shape)?)?)?;
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
