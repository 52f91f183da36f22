//! Arrow and a Redis server's wire: the Spark connector's executors read entries from,
//! and append rows to, redis-server or a Redis Cluster through redis-py. These two
//! functions do the per-row work of that traffic without a Python object per row: a
//! parsed `XRANGE` / `XREADGROUP` reply of one stream becomes a record batch shaped as
//! `xrange_arrow`'s, and a batch of rows becomes the packed `XADD` commands (RESP, as a
//! client sends them) that the connection writes as is.

use std::borrow::Cow;
use std::io::Write;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use xstreams_core::interop::batch::Entries;
use xstreams_core::structures::id::parse_id;
use xstreams_core::StreamId;

use super::columns::{column_index, input_batches, no_nulls, prepare, values_across, Src};
use super::entries::{entries_batch, schema_arg, EntriesShape};
use super::handoff::batch_to_pyarrow;
use super::value_err;
use crate::convert::arg_bytes;

/// An ID as XRANGE takes it (`ms-seq`, `ms`, `-`, `+`); `ms` alone is `ms-<missing_seq>`.
fn reply_id(py: Python<'_>, obj: &Bound<'_, PyAny>, missing_seq: u64) -> PyResult<StreamId> {
    let raw = arg_bytes(py, obj)?;
    parse_id(&raw, missing_seq, false, false)
        .map(|p| p.id)
        .ok_or_else(|| value_err(format!("a reply holds {raw:?}, which is not a stream ID")))
}

/// The entries of one stream's reply (`[[id, [field, value, ...]], ...]`, a deleted
/// history entry's fields `None`) up to `end` as a ``pyarrow.RecordBatch`` with the
/// columns of ``xrange_arrow`` and a ``stream`` column first; and how many entries it
/// kept (the reply's entries after `end` are left out).
#[pyfunction]
#[pyo3(signature = (stream, entries, end=None, *, decode=true, schema=None, signed=true))]
pub fn _reply_arrow<'py>(
    py: Python<'py>,
    stream: &Bound<'py, PyAny>,
    entries: &Bound<'py, PyAny>,
    end: Option<&Bound<'py, PyAny>>,
    decode: bool,
    schema: Option<&Bound<'py, PyAny>>,
    signed: bool,
) -> PyResult<(Bound<'py, PyAny>, usize)> {
    let end = end.map(|e| reply_id(py, e, u64::MAX)).transpose()?;
    let mut out = Entries::new();
    let key = out.add_key(&arg_bytes(py, stream)?);
    for item in entries.try_iter()? {
        let item = item?;
        let id = reply_id(py, &item.get_item(0)?, 0)?;
        if end.is_some_and(|end| id > end) {
            break;
        }
        let fv = item.get_item(1)?;
        if fv.is_none() {
            out.push_missing(key, id);
            continue;
        }
        let list = fv.cast::<PyList>()?;
        let vals: Vec<Bound<'py, PyAny>> = list.iter().collect();
        if !vals.len().is_multiple_of(2) {
            return Err(value_err(format!(
                "the reply's entry {id} has an odd number of fields and values"
            )));
        }
        let bytes: Vec<Cow<'_, [u8]>> = vals
            .iter()
            .map(|v| arg_bytes(py, v))
            .collect::<PyResult<_>>()?;
        out.push(
            key,
            id,
            bytes
                .chunks_exact(2)
                .map(|p| (p[0].as_ref(), p[1].as_ref())),
        );
    }
    let shape = EntriesShape {
        stream_column: true,
        binary: !decode,
        signed_ids: signed,
        schema: schema_arg(schema)?,
    };
    let kept = out.len();
    let batch = entries_batch(&out, 0, kept, &shape)?;
    Ok((batch_to_pyarrow(py, batch)?, kept))
}

fn bulk(buf: &mut Vec<u8>, arg: &[u8]) {
    let _ = write!(buf, "${}\r\n", arg.len());
    buf.extend_from_slice(arg);
    buf.extend_from_slice(b"\r\n");
}

/// One `XADD key [IDMP producer iid] [trim ...] * field value ...` per row of `batch`
/// (a pyarrow RecordBatch or Table), packed as RESP commands: the `fields` columns'
/// values as ``xadd_batch`` converts them (a null leaves the field out of its row),
/// `producer` / `iid` the IDMP columns (never null), `trim` the trimming arguments.
/// Returns the packed bytes and the number of commands.
#[pyfunction]
#[pyo3(signature = (key, batch, fields, *, producer=None, iid=None, trim=Vec::new()))]
pub fn _xadd_wire<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    batch: &Bound<'py, PyAny>,
    fields: Vec<String>,
    producer: Option<String>,
    iid: Option<String>,
    trim: Vec<Vec<u8>>,
) -> PyResult<(Bound<'py, PyBytes>, usize)> {
    let key = arg_bytes(py, key)?.into_owned();
    let (schema, batches) = input_batches(py, batch)?;
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    let sources = |name: &str, what: &str| -> PyResult<Vec<Src>> {
        let idx = column_index(&schema, name, what)?;
        batches
            .iter()
            .map(|b| prepare(b.column(idx), name))
            .collect()
    };
    let mut field_srcs = Vec::with_capacity(fields.len());
    for f in &fields {
        field_srcs.push(sources(f, "field")?);
    }
    let idmp_srcs = match (&producer, &iid) {
        (Some(p), Some(i)) => Some((sources(p, "producer")?, sources(i, "iid")?)),
        (None, None) => None,
        _ => return Err(value_err("IDMP takes both a producer and an iid column")),
    };
    let field_vals: Vec<Vec<Option<&[u8]>>> =
        field_srcs.iter().map(|s| values_across(s, n)).collect();
    let idmp_vals = match (&idmp_srcs, &producer, &iid) {
        (Some((p, i)), Some(pn), Some(inn)) => {
            let (p, i) = (values_across(p, n), values_across(i, n));
            no_nulls(&p, pn, "producer")?;
            no_nulls(&i, inn, "iid")?;
            Some((p, i))
        }
        _ => None,
    };
    let head = 2 + trim.len() + 1 + if idmp_vals.is_some() { 3 } else { 0 };
    let mut buf = Vec::with_capacity(n * (32 + key.len() + 24 * fields.len()));
    for row in 0..n {
        let present = field_vals.iter().filter(|v| v[row].is_some()).count();
        let _ = write!(buf, "*{}\r\n", head + 2 * present);
        bulk(&mut buf, b"XADD");
        bulk(&mut buf, &key);
        if let Some((p, i)) = &idmp_vals {
            bulk(&mut buf, b"IDMP");
            bulk(&mut buf, p[row].unwrap_or_default());
            bulk(&mut buf, i[row].unwrap_or_default());
        }
        for t in &trim {
            bulk(&mut buf, t);
        }
        bulk(&mut buf, b"*");
        for (name, vals) in fields.iter().zip(&field_vals) {
            if let Some(v) = vals[row] {
                bulk(&mut buf, name.as_bytes());
                bulk(&mut buf, v);
            }
        }
    }
    Ok((PyBytes::new(py, &buf), n))
}
