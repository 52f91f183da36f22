//! `xrange_arrow` / `xrevrange_arrow` / `xread_arrow`: reads as Arrow record batches.

use super::handoff::batch_to_pyarrow;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use xstreams_core::command::ReadArgs;
use xstreams_core::store::ReadStep;

use crate::convert::arg_bytes;
use crate::errors::{cmd_err, data_err};
use crate::store::{guarded, Store, SIGNAL_CHECK};

use super::entries::{entries_batch, entries_to_py, schema_arg, EntriesShape};
use super::id_arg;
use xstreams_core::error::data;

#[pymethods]
impl Store {
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
            return Err(data_err(py, data::XREAD_STREAMS_EMPTY.into()));
        }
        let shape = EntriesShape {
            stream_column: true,
            binary: !decode,
            signed_ids: false,
            schema: schema_arg(schema)?,
        };
        // A typed read, blocking or not: no arguments built, no reply parsed.
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
            _ => return Err(data_err(py, data::GROUP_AND_CONSUMER.into())),
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
        a.timeout = match block {
            None => -1,
            Some(b) if b < 0 => {
                return Err(cmd_err(py, &xstreams_core::CmdError::timeout_negative()))
            }
            Some(b) => b,
        };
        let store = self.core();
        // A group read writes (its PEL): under fsync="always" that is durable before the
        // entries are returned (`settle`).
        let settled = |step: ReadStep| match step {
            ReadStep::Done(Ok(r)) => ReadStep::Done(store.settle().map(|()| r)),
            other => other,
        };
        let mut step = guarded(py, || settled(store.start_read(db, &a)))?;
        loop {
            match step {
                ReadStep::Done(r) => {
                    let entries = r.map_err(|e| cmd_err(py, &e))?;
                    return entries_to_py(py, &entries, &shape);
                }
                ReadStep::Blocked(call) => {
                    if let Err(e) = py.check_signals() {
                        store.cancel(call);
                        return Err(e);
                    }
                    step = guarded(py, || settled(store.wait_read(call, Some(SIGNAL_CHECK))))?;
                }
            }
        }
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
            Err(cmd_err(py, &e))
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
        .map_err(|e| cmd_err(py, &e))?;
        let batch = guarded(py, || entries_batch(&entries, 0, entries.len(), &shape))??;
        batch_to_pyarrow(py, batch)
    }
}
