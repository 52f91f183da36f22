//! `_idmp_dedup`: the kernel of `xstreams.spark.dedup` (IID mode) for one Spark partition,
//! Arrow in and Arrow out, one call per partition.
//!
//! It reads the partition's batches from any iterable, one at a time, and files each
//! batch's rows under their producer (the Spark caller hands it the collected partition:
//! filing while Spark was still sending competed with the JVM for the cores), then sorts
//! each producer's rows by (time, tie column, input position) -- the order the Python
//! reference sorts them in -- and asks
//! [`xstreams_core::dedup::IdmpDedup`] for each row's XADD IDMP answer. The input batches
//! come back as they are (no copy of their columns), with `entry_id`, `duplicate` and
//! `original_id` appended (`original_id` is the `entry_id` array itself, shared, not a
//! copy: Spark copying it in a projection after `mapInArrow` cost a second copy of every
//! output row); with `keep_first` only the rows that are not duplicates, with `entry_id`.
//!
//! Input the kernel does not take (nulls in the producer, time or IID columns, an empty
//! producer or IID, other column types, a row the XADD would refuse) makes it return
//! `None`: the caller then runs the general path (`Store.xadd_batch`), which gives the
//! same answers and the store's errors.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, BooleanArray, LargeStringArray, RecordBatch, StringArray};
use arrow_buffer::{BooleanBuffer, Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use hashbrown::HashMap;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3_arrow::PyRecordBatch;
use xstreams_core::dedup::IdmpDedup;
use xstreams_core::StreamId;

use crate::arrow::times_ms;

fn value_err(e: impl ToString) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The values of a string or binary column across batches; `None` if it has nulls or
/// another type.
fn byte_values<'a>(batches: &'a [RecordBatch], idx: usize, out: &mut Vec<&'a [u8]>) -> bool {
    for b in batches {
        let arr = b.column(idx);
        if arr.null_count() > 0 {
            return false;
        }
        match arr.data_type() {
            DataType::Utf8 => {
                out.extend(arr.as_string::<i32>().iter().flatten().map(str::as_bytes))
            }
            DataType::LargeUtf8 => {
                out.extend(arr.as_string::<i64>().iter().flatten().map(str::as_bytes))
            }
            DataType::Utf8View => {
                out.extend(arr.as_string_view().iter().flatten().map(str::as_bytes))
            }
            DataType::Binary => out.extend(arr.as_binary::<i32>().iter().flatten()),
            DataType::LargeBinary => out.extend(arr.as_binary::<i64>().iter().flatten()),
            DataType::BinaryView => out.extend(arr.as_binary_view().iter().flatten()),
            _ => return false,
        }
    }
    true
}

/// A tie column (other than the IID): integers, timestamps and dates as their stored
/// integer, strings and binary as bytes; nulls first, as the reference sorts.
enum Tie<'a> {
    Ints(Vec<Option<i64>>),
    Bytes(Vec<Option<&'a [u8]>>),
}

fn tie_values<'a>(batches: &'a [RecordBatch], idx: usize) -> Option<Tie<'a>> {
    let first = batches.first()?.column(idx).data_type().clone();
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
        Binary => bytes!(|a: &'a ArrayRef| a.as_binary::<i32>().iter()),
        LargeBinary => bytes!(|a: &'a ArrayRef| a.as_binary::<i64>().iter()),
        _ => None,
    }
}

/// One row as the kernel visits it: its time inline and its IID as a range of its
/// producer's IID bytes ([`Partition::iids`]), so that sorting a producer's rows and
/// feeding them to the IDMP state read memory in order. Reading each IID from the
/// input's string buffer in sorted order missed the cache on nearly every row (perf: 91%
/// of the IID hash's samples on its first load).
#[derive(Clone, Copy)]
struct Rec {
    time: i64,
    off: usize,
    len: u32,
    row: u32,
}

impl Rec {
    /// This row's IID in its producer's IID bytes.
    fn iid<'b>(&self, iids: &'b [u8]) -> &'b [u8] {
        &iids[self.off..self.off + self.len as usize]
    }
}

/// The columns the kernel reads, by position in the batches.
#[derive(Clone, Copy)]
struct Cols {
    producer: usize,
    iid: usize,
    time: usize,
    tie: usize,
}

/// One partition's rows as they are read: each batch is checked and its rows are filed
/// under their producer, so that after the last one only each producer's sort, the IDMP
/// pass and the output remain.
#[derive(Default)]
struct Partition {
    batches: Vec<RecordBatch>,
    cols: Option<Cols>,
    /// Producer -> its number (first-seen order).
    groups: HashMap<Vec<u8>, u32>,
    /// Each producer's rows, in input order until sorted.
    recs: Vec<Vec<Rec>>,
    /// Each producer's IIDs' bytes, in input order: one short stretch of memory.
    iids: Vec<Vec<u8>>,
    rows: usize,
    /// Input the kernel does not take came (see the module docs): the rest is only kept.
    refused: bool,
}

impl Partition {
    /// File `batch`'s rows (`names`: producer, IID, time and tie columns). `Err`: a
    /// column is missing from the first batch.
    fn add(&mut self, batch: RecordBatch, names: [&str; 4]) -> PyResult<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if !self.refused {
            let c = match self.cols {
                Some(c) => c,
                None => *self.cols.insert(columns(&batch, names)?),
            };
            // Every batch has the first one's schema, and rows the kernel takes.
            let same = self
                .batches
                .first()
                .is_none_or(|f| f.schema() == batch.schema());
            self.refused = !same || !self.file(&batch, c, names[2]);
        }
        self.batches.push(batch);
        Ok(())
    }

    /// File the rows of `batch` under their producers; `false` if the kernel does not
    /// take them.
    fn file(&mut self, batch: &RecordBatch, c: Cols, time: &str) -> bool {
        let one = std::slice::from_ref(batch);
        let (mut pids, mut iids) = (Vec::new(), Vec::new());
        if !byte_values(one, c.producer, &mut pids) || !byte_values(one, c.iid, &mut iids) {
            return false;
        }
        let Ok(times) = times_ms(one, c.time, time) else {
            return false;
        };
        if self.rows + batch.num_rows() > u32::MAX as usize
            || pids.iter().any(|p| p.is_empty())
            || (c.tie != c.iid && self.batches.is_empty() && tie_values(one, c.tie).is_none())
        {
            return false;
        }
        for ((pid, iid), time) in pids.into_iter().zip(iids).zip(times) {
            let g = match self.groups.get(pid) {
                Some(&g) => g as usize,
                None => {
                    self.groups.insert(pid.to_vec(), self.recs.len() as u32);
                    self.recs.push(Vec::new());
                    self.iids.push(Vec::new());
                    self.recs.len() - 1
                }
            };
            let bytes = &mut self.iids[g];
            self.recs[g].push(Rec {
                time,
                off: bytes.len(),
                len: iid.len() as u32,
                row: self.rows as u32,
            });
            bytes.extend_from_slice(iid);
            self.rows += 1;
        }
        true
    }

    /// Each row's answer, in input order: the ID, and whether it is a duplicate. `None`:
    /// input the kernel does not take.
    fn answers(
        &mut self,
        duration: u64,
        maxsize: u64,
        field_len: u64,
    ) -> Option<Vec<(StreamId, bool)>> {
        let c = self.cols?;
        let tie_vals = if c.tie == c.iid {
            None
        } else {
            Some(tie_values(&self.batches, c.tie)?)
        };
        let mut kernel = IdmpDedup::new(duration, maxsize);
        let mut answers = vec![(StreamId::MIN, false); self.rows];
        for (recs, iids) in self.recs.iter_mut().zip(&self.iids) {
            // (time, tie, input position): the order the reference's stable sort by
            // (producer, time, tie) gives within a producer.
            recs.sort_unstable_by(|a, b| {
                let tie = match &tie_vals {
                    None => a.iid(iids).cmp(b.iid(iids)),
                    Some(Tie::Ints(v)) => v[a.row as usize].cmp(&v[b.row as usize]),
                    Some(Tie::Bytes(v)) => v[a.row as usize].cmp(&v[b.row as usize]),
                };
                a.time.cmp(&b.time).then(tie).then(a.row.cmp(&b.row))
            });
            kernel.next_producer();
            for rec in recs.iter() {
                let o = kernel
                    .add(rec.time, rec.iid(iids), field_len + rec.len as u64)
                    .ok()?;
                answers[rec.row as usize] = (o.id, o.duplicate);
            }
        }
        Some(answers)
    }
}

/// The positions of the kernel's columns in `batch`.
fn columns(batch: &RecordBatch, names: [&str; 4]) -> PyResult<Cols> {
    let schema = batch.schema();
    let col = |name: &str| {
        schema
            .index_of(name)
            .map_err(|_| value_err(format!("column {name:?} is not in the batch")))
    };
    Ok(Cols {
        producer: col(names[0])?,
        iid: col(names[1])?,
        time: col(names[2])?,
        tie: col(names[3])?,
    })
}

/// Entry IDs as `<ms>-<seq>` text for the `count` rows `rows` of `answers` (sized by the
/// rows of one output batch, not by the partition's: a partition-sized buffer per batch
/// cost more in zeroed pages than the whole dedup).
fn id_strings(
    answers: &[(StreamId, bool)],
    rows: impl Iterator<Item = usize>,
    count: usize,
    large: bool,
) -> ArrayRef {
    let mut data = Vec::with_capacity(count * 16);
    let mut offsets: Vec<i64> = Vec::with_capacity(count + 1);
    offsets.push(0);
    for r in rows {
        answers[r].0.write_to(&mut data);
        offsets.push(data.len() as i64);
    }
    let data = Buffer::from_vec(data);
    if large {
        let off = OffsetBuffer::new(ScalarBuffer::from(offsets));
        Arc::new(LargeStringArray::new(off, data, None))
    } else {
        let off: Vec<i32> = offsets.into_iter().map(|o| o as i32).collect();
        Arc::new(StringArray::new(
            OffsetBuffer::new(ScalarBuffer::from(off)),
            data,
            None,
        ))
    }
}

/// Dedup one partition (see the module docs): `batches` is an iterable of record
/// batches, read one at a time. `None`: input the kernel does not take.
#[pyfunction]
#[pyo3(signature = (batches, producer, iid, time, tie, duration, maxsize, keep_first, large))]
#[allow(clippy::too_many_arguments)]
pub fn _idmp_dedup<'py>(
    py: Python<'py>,
    batches: &Bound<'py, PyAny>,
    producer: &str,
    iid: &str,
    time: &str,
    tie: &str,
    duration: u64,
    maxsize: u64,
    keep_first: bool,
    large: bool,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let mut part = Partition::default();
    for b in batches.try_iter()? {
        let b: PyRecordBatch = b?.extract()?;
        part.add(b.into_inner(), [producer, iid, time, tie])?;
    }
    let Some(first) = part.batches.first() else {
        return Ok(Some(PyList::empty(py)));
    };
    let schema = first.schema();
    if part.refused {
        return Ok(None);
    }
    let Some(answers) = part.answers(duration, maxsize, iid.len() as u64) else {
        return Ok(None);
    };
    let batches = std::mem::take(&mut part.batches);
    drop(part);
    // Output: the input batches with the answers appended.
    let id_type = if large {
        DataType::LargeUtf8
    } else {
        DataType::Utf8
    };
    let mut fields: Vec<Arc<Field>> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(Field::new("entry_id", id_type.clone(), true)));
    if !keep_first {
        fields.push(Arc::new(Field::new("duplicate", DataType::Boolean, true)));
        fields.push(Arc::new(Field::new("original_id", id_type, true)));
    }
    let out_schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    let out = PyList::empty(py);
    let mut base = 0usize;
    for b in &batches {
        let len = b.num_rows();
        let rows = base..base + len;
        let batch = if keep_first {
            let keep = BooleanArray::new(
                BooleanBuffer::collect_bool(len, |i| !answers[base + i].1),
                None,
            );
            let kept = arrow_select::filter::filter_record_batch(b, &keep).map_err(value_err)?;
            let kept_rows = kept.num_rows();
            let idcol = id_strings(&answers, rows.filter(|&r| !answers[r].1), kept_rows, large);
            let mut cols = kept.columns().to_vec();
            cols.push(idcol);
            RecordBatch::try_new(out_schema.clone(), cols).map_err(value_err)?
        } else {
            let idcol = id_strings(&answers, rows, len, large);
            let mut cols = b.columns().to_vec();
            cols.push(idcol.clone());
            let dup = BooleanBuffer::collect_bool(len, |i| answers[base + i].1);
            cols.push(Arc::new(BooleanArray::new(dup, None)));
            cols.push(idcol);
            RecordBatch::try_new(out_schema.clone(), cols).map_err(value_err)?
        };
        base += len;
        if batch.num_rows() > 0 {
            out.append(PyRecordBatch::new(batch).into_pyarrow(py)?)?;
        }
    }
    Ok(Some(out))
}
