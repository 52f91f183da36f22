//! `xadd_batch`: one XADD per Arrow row, outcomes back as an Arrow batch.

use std::sync::Arc;

use super::handoff::batch_to_pyarrow;
use arrow_array::{ArrayRef, BooleanArray, RecordBatch, StringArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Schema};
use pyo3::prelude::*;
use xstreams_core::interop::batch::{Col, Idmp, RowOutcome, XaddRows};

use crate::convert::arg_bytes;
use crate::errors::{cmd_err, data_err};
use crate::store::{guarded, Store};

use super::columns::{
    column_index, input_batches, names_arg, no_nulls, prepare, times_ms, values_across, Src,
};
use super::entries::bytes_array;
use super::{id_arg, value_err};
use xstreams_core::error::data;

pub(super) fn outcomes_batch(outcomes: &[RowOutcome], with_error: bool) -> PyResult<RecordBatch> {
    let n = outcomes.len();
    let mut off = Vec::with_capacity(n + 1);
    off.push(0i64);
    let mut data = Vec::with_capacity(n * 16);
    let mut valid = Vec::with_capacity(n);
    let mut dup = Vec::with_capacity(n);
    let mut err: Vec<Option<&str>> = Vec::new();
    for o in outcomes {
        if let Some(id) = o.id() {
            id.write_to(&mut data);
        }
        off.push(data.len() as i64);
        valid.push(o.id().is_some());
        dup.push(matches!(o, RowOutcome::Duplicate(_)));
        if with_error {
            err.push(match o {
                RowOutcome::Error(e) => Some(e.line()),
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
    /// One atomic step (one block in a durable store's log), with `after` run last.
    pub atomic: bool,
    pub after: Vec<Vec<Vec<u8>>>,
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
    let values = |c: usize| values_across(&sources[c], n);
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
        (None, _, _) => return Err(data_err(py, data::IDMP_NEEDS_PRODUCER.into())),
        (Some(_), Some(_), true) => return Err(data_err(py, data::IDMPAUTO_OR_IID.into())),
        (Some(_), None, false) => return Err(data_err(py, data::PRODUCER_NEEDS_IID.into())),
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
    // Under fsync="always" the rows are durable before the call returns (`settle`).
    let settle = || store.settle();
    if !o.atomic && o.after.is_empty() {
        return guarded(py, || {
            let out = store.xadd_rows(o.db, &rows)?;
            settle().map(|()| out)
        })?
        .map_err(|e| cmd_err(py, &e));
    }
    let (out, after) = guarded(py, || {
        let out = store.xadd_rows_atomic(o.db, &rows, &o.after)?;
        settle().map(|()| out)
    })?
    .map_err(|e| cmd_err(py, &e))?;
    // `after` is the caller's own bookkeeping (a sink's marker): its failure is raised.
    if let Some(xstreams_core::Reply::Error(e)) = after
        .iter()
        .find(|r| matches!(r, xstreams_core::Reply::Error(_)))
    {
        return Err(cmd_err(py, e));
    }
    Ok(out)
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
            let err = cmd_err(py, line);
            let exc = err.value(py);
            let result = batch_to_pyarrow(py, outcomes_batch(outcomes, true)?)?;
            let _ = exc.setattr("row", row);
            let _ = exc.setattr("result", result);
            return Err(err);
        }
    }
    batch_to_pyarrow(py, outcomes_batch(outcomes, !raise_errors)?)
}

#[pymethods]
impl Store {
    /// Append the rows of an Arrow batch to stream ``key``, one ``XADD`` per row, under one
    /// lock: each row has exactly the semantics of that XADD sent alone (see
    /// ``docs/spark.md`` for how columns become arguments). Returns a
    /// ``pyarrow.RecordBatch`` with ``id`` (the reply, null for a nil reply or an error)
    /// and ``duplicate`` (an IDMP duplicate: ``id`` is then the first entry's), plus
    /// ``error`` with ``errors="return"``; with ``errors="raise"`` every row runs, then
    /// the first failing row's error is raised (``exc.row``, ``exc.result``). In a durable
    /// store the rows' log records are written together (ahead, in chunks, while a large
    /// batch runs), not one write per row; a failed write raises the MISCONF error under
    /// ``fsync="always"`` (else later writes raise it until the log takes writes again).
    /// ``atomic=True`` makes the rows one step, as a MULTI/EXEC: one block in a durable
    /// store's log (after a crash the store has all of them or none, as a transaction in
    /// Redis's AOF), and one command time (every ``*`` ID in the same millisecond); ``after``
    /// (argument lists, e.g. ``[[b"XADD", b"marker", b"*", b"batch", b"7"]]``) runs last
    /// in that same step, and an error reply of it is raised.
    #[pyo3(signature = (key, batch, *, fields=None, id=None, producer=None, pid=None, iid=None, idmpauto=false, maxlen=None, minid=None, approximate=true, limit=None, nomkstream=false, ref_policy=None, clock=None, key_column=None, errors="raise", db=0, atomic=false, after=None))]
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
        atomic: bool,
        after: Option<Vec<Vec<Vec<u8>>>>,
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
            return Err(data_err(py, data::MAXLEN_OR_MINID.into()));
        }
        let mut options: Vec<Vec<u8>> = Vec::new();
        if nomkstream {
            options.push(b"NOMKSTREAM".to_vec());
        }
        if let Some(p) = ref_policy {
            if !["KEEPREF", "DELREF", "ACKED"].contains(&p.as_str()) {
                return Err(data_err(py, data::REF_POLICY.into()));
            }
            options.push(p.into_bytes());
        }
        let mut trim: Vec<Vec<u8>> = Vec::new();
        if let Some(m) = maxlen {
            if m < 0 {
                return Err(data_err(py, data::MAXLEN_NEGATIVE.into()));
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
            forget: false,
            db,
            atomic,
            after: after.unwrap_or_default(),
            _p: std::marker::PhantomData,
        };
        let outcomes = xadd_arrow(py, self.core(), batch, &opts)?;
        xadd_reply(py, &outcomes, raise_errors)
    }
}
