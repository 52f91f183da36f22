//! The output of the Spark dedup's partitions: each input batch with the answer columns
//! appended, made one batch at a time as the Python worker asks for the next, so that
//! a batch's IDs are formatted while Spark takes the previous one (docs/spark-speed.md);
//! and the answers of a whole table as two arrays ([`answer_arrays`]).

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, GenericStringArray, OffsetSizeTrait, RecordBatch, RecordBatchOptions,
};
use arrow_buffer::{BooleanBuffer, Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use pyo3::prelude::*;
use pyo3_arrow::PyRecordBatch;
use xstreams_core::interop::dedup::Answers;

use crate::arrow::value_err;

/// An answer column the kernel can append.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Answer {
    EntryId,
    Duplicate,
    OriginalId,
}

/// Whether a column in `answer` shows the IDs.
pub(crate) fn with_ids(answer: &[Answer]) -> bool {
    answer.iter().any(|a| *a != Answer::Duplicate)
}

pub(crate) fn answer_columns(names: &[String]) -> PyResult<Vec<Answer>> {
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let a = match n.as_str() {
            "entry_id" => Answer::EntryId,
            "duplicate" => Answer::Duplicate,
            "original_id" => Answer::OriginalId,
            other => return Err(value_err(format!("no answer column {other:?}"))),
        };
        if out.contains(&a) {
            return Err(value_err(format!("answer column {n:?} named twice")));
        }
        out.push(a);
    }
    Ok(out)
}

/// The output batches of a partition (a Python iterator): each of `batches` with the
/// answer columns appended (by `answers`, indexed by row across the batches), or with
/// `keep_first` only its rows that are not duplicates; batches left empty are skipped.
#[pyclass(module = "xstreams._xstreams", name = "_DedupOutput")]
pub(crate) struct DedupOutput {
    /// The input batches not yet answered; each leaves as its output batch is made, so
    /// the partition's memory goes as the worker sends it.
    batches: VecDeque<RecordBatch>,
    answers: Answers,
    answer: Vec<Answer>,
    schema: SchemaRef,
    keep_first: bool,
    large: bool,
    /// The row of `answers` the next input batch starts at.
    base: usize,
}

/// The output of a partition (see [`DedupOutput`]): `columns` names the `answer`
/// columns, in order.
pub(crate) fn output(
    batches: Vec<RecordBatch>,
    answers: Answers,
    answer: Vec<Answer>,
    columns: &[String],
    keep_first: bool,
    large: bool,
) -> DedupOutput {
    let input = batches.first().map(|b| b.schema());
    let id_type = if large {
        DataType::LargeUtf8
    } else {
        DataType::Utf8
    };
    let mut fields: Vec<Arc<Field>> = input
        .as_ref()
        .map(|s| s.fields().iter().cloned().collect())
        .unwrap_or_default();
    for (a, name) in answer.iter().zip(columns) {
        let t = match a {
            Answer::Duplicate => DataType::Boolean,
            _ => id_type.clone(),
        };
        // Never null: Spark then reads each value without a validity check.
        fields.push(Arc::new(Field::new(name, t, false)));
    }
    let metadata = input.map(|s| s.metadata().clone()).unwrap_or_default();
    DedupOutput {
        batches: batches.into(),
        answers,
        answer,
        schema: Arc::new(Schema::new_with_metadata(fields, metadata)),
        keep_first,
        large,
        base: 0,
    }
}

/// The output of a partition with no rows: no batch (so no column to answer either).
pub(crate) fn no_output() -> DedupOutput {
    output(
        Vec::new(),
        Answers::new(0, false),
        Vec::new(),
        &[],
        false,
        false,
    )
}

#[pymethods]
impl DedupOutput {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        while let Some(b) = self.batches.pop_front() {
            let out = self.answered(&b)?;
            self.base += b.num_rows();
            if out.num_rows() > 0 {
                return Ok(Some(PyRecordBatch::new(out).into_pyarrow(py)?));
            }
        }
        // The last batch went: the answers are no longer needed.
        self.answers = Answers::new(0, false);
        Ok(None)
    }
}

impl DedupOutput {
    /// Input batch `b` (starting at row `self.base`) with its answers.
    fn answered(&self, b: &RecordBatch) -> PyResult<RecordBatch> {
        let (answers, base, len) = (&self.answers, self.base, b.num_rows());
        // The input columns of the rows out, and with `keep_first` those rows (indexes
        // into `answers`; else every row of the batch, without a list of them).
        let (mut cols, kept): (Vec<ArrayRef>, Option<Vec<usize>>) = if self.keep_first {
            let keep = BooleanArray::new(
                BooleanBuffer::collect_bool(len, |i| !answers.duplicate(base + i)),
                None,
            );
            let batch = arrow_select::filter::filter_record_batch(b, &keep)
                .map_err(|e| value_err(e.to_string()))?;
            let rows = keep.values().set_indices().map(|i| base + i).collect();
            (batch.columns().to_vec(), Some(rows))
        } else {
            (b.columns().to_vec(), None)
        };
        let count = kept.as_ref().map_or(len, Vec::len);
        let mut ids: Option<ArrayRef> = None;
        for a in &self.answer {
            cols.push(match a {
                // A kept row is not a duplicate.
                Answer::Duplicate if self.keep_first => {
                    Arc::new(BooleanArray::new(BooleanBuffer::new_unset(count), None))
                }
                Answer::Duplicate => Arc::new(BooleanArray::new(
                    BooleanBuffer::collect_bool(len, |i| answers.duplicate(base + i)),
                    None,
                )),
                Answer::EntryId | Answer::OriginalId => match &ids {
                    Some(a) => a.clone(),
                    None => {
                        let a = match &kept {
                            Some(rows) => {
                                id_strings(answers, rows.iter().copied(), count, self.large)?
                            }
                            None => id_strings(answers, base..base + len, count, self.large)?,
                        };
                        ids.insert(a).clone()
                    }
                },
            });
        }
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            cols,
            &RecordBatchOptions::new().with_row_count(Some(count)),
        )
        .map_err(|e| value_err(e.to_string()))
    }
}

/// Entry IDs as `<ms>-<seq>` text for the `count` rows `rows` of `answers` (a buffer
/// sized by one output batch, not by the partition: docs/spark-speed.md).
fn id_strings(
    answers: &Answers,
    rows: impl Iterator<Item = usize>,
    count: usize,
    large: bool,
) -> PyResult<ArrayRef> {
    if large {
        id_strings_as::<i64>(answers, rows, count)
    } else {
        id_strings_as::<i32>(answers, rows, count)
    }
}

fn id_strings_as<O: OffsetSizeTrait>(
    answers: &Answers,
    rows: impl Iterator<Item = usize>,
    count: usize,
) -> PyResult<ArrayRef> {
    let mut data = Vec::with_capacity(count * 16);
    let mut offsets: Vec<O> = Vec::with_capacity(count + 1);
    offsets.push(O::usize_as(0));
    for r in rows {
        answers.id(r).write_to(&mut data);
        offsets.push(O::usize_as(data.len()));
    }
    // Offsets grow with the text: the last one fitting means every one does.
    if O::from_usize(data.len()).is_none() {
        return Err(value_err(
            "an output batch's entry IDs exceed 2 GiB: use smaller Arrow batches",
        ));
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    Ok(Arc::new(GenericStringArray::<O>::new(
        offsets,
        Buffer::from_vec(data),
        None,
    )))
}

/// All rows' answers in row order, as one batch: `duplicate`, and with `ids` the entry
/// IDs as text (`entry_id`; large strings only past 2 GiB of them).
pub(crate) fn answer_batch(answers: &Answers, ids: bool) -> PyResult<RecordBatch> {
    let n = answers.len();
    let mut fields = vec![Field::new("duplicate", DataType::Boolean, false)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(BooleanArray::new(
        BooleanBuffer::collect_bool(n, |i| answers.duplicate(i)),
        None,
    ))];
    if ids {
        let a = match id_strings(answers, 0..n, n, false) {
            Ok(a) => a,
            Err(_) => id_strings(answers, 0..n, n, true)?,
        };
        fields.push(Field::new("entry_id", a.data_type().clone(), false));
        cols.push(a);
    }
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        cols,
        &RecordBatchOptions::new().with_row_count(Some(n)),
    )
    .map_err(|e| value_err(e.to_string()))
}
