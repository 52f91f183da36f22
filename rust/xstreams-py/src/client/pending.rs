//! XPENDING's two forms as methods of `_NativeClient` (see `client/mod.rs`): the typed core
//! queries (`xpending_summary`, `xpending_range`) run in one store session, and redis-py's
//! values — `{"pending", "min", "max", "consumers": [{"name", "pending"}]}` and
//! `[{"message_id", "consumer", "time_since_delivered", "times_delivered"}, ...]` — built
//! from their typed outcomes, with no reply tree and no Python callback in between.
//!
//! The value is what the client's XPENDING response callback gives; when that callback
//! is not redis-py's (the client's `response_callbacks` changed), it is called on the raw
//! reply as before, so a custom callback still sees what it always saw.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use xstreams_core::command::{args as cmd_args, xpending_range, xpending_summary};
use xstreams_core::structures::pel::{PendingRange, PendingRow, PendingSummary};
use xstreams_core::Reply;

use super::sink::id_obj;
use super::{call_fallback, option, with_opts};
use super::{exact_int, locked, raw, Fast, NativeClient};
use crate::convert::arg_bytes;

/// The client's XPENDING callback when it is not redis-py's (`_parse_xpending`).
fn custom_callback<'py>(slf: &Bound<'py, NativeClient>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = slf.py();
    let default = &super::registered(py)?.xpending_callback;
    let name = intern!(py, "XPENDING");
    let callbacks = slf.getattr(intern!(py, "response_callbacks"))?;
    // The client's `CaseInsensitiveDict` keeps its keys upper-case: a plain dict lookup
    // finds what its `__getitem__` would, without running Python code.
    let found = match callbacks.cast::<PyDict>() {
        Ok(d) => d.get_item(name)?,
        Err(_) => None,
    };
    let cb = match found {
        Some(cb) => cb,
        None => callbacks.get_item(name)?,
    };
    Ok((!cb.is(default.bind(py))).then_some(cb))
}

/// redis-py's `_parse_xpending` of a summary.
fn summary_obj(py: Python<'_>, s: &PendingSummary, decode: bool) -> PyResult<Py<PyAny>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "pending"), s.count)?;
    match s.bounds {
        Some((lo, hi)) => {
            d.set_item(intern!(py, "min"), id_obj(py, lo, decode))?;
            d.set_item(intern!(py, "max"), id_obj(py, hi, decode))?;
        }
        None => {
            d.set_item(intern!(py, "min"), py.None())?;
            d.set_item(intern!(py, "max"), py.None())?;
        }
    }
    let consumers = PyList::empty(py);
    for (name, n) in &s.consumers {
        let c = PyDict::new(py);
        c.set_item(intern!(py, "name"), super::text(py, name, decode)?)?;
        c.set_item(intern!(py, "pending"), n)?;
        consumers.append(c)?;
    }
    d.set_item(intern!(py, "consumers"), consumers)?;
    Ok(d.into_any().unbind())
}

/// redis-py's `_parse_xpending_range` of the extended form's rows.
fn rows_obj(py: Python<'_>, rows: &[PendingRow], decode: bool) -> PyResult<Py<PyAny>> {
    let out = PyList::empty(py);
    // Rows of one consumer in a row share its name's object (equal, immutable values).
    let mut last: Option<(&[u8], Py<PyAny>)> = None;
    for r in rows {
        let d = PyDict::new(py);
        d.set_item(intern!(py, "message_id"), id_obj(py, r.id, decode))?;
        let consumer = match &last {
            Some((name, obj)) if *name == r.consumer.as_slice() => obj.clone_ref(py),
            _ => {
                let obj = super::text(py, &r.consumer, decode)?;
                last = Some((&r.consumer, obj.clone_ref(py)));
                obj
            }
        };
        d.set_item(intern!(py, "consumer"), consumer)?;
        d.set_item(intern!(py, "time_since_delivered"), r.idle)?;
        d.set_item(intern!(py, "times_delivered"), r.delivery_count)?;
        out.append(d)?;
    }
    Ok(out.into_any().unbind())
}

/// Convert with the client's own callback when it is not redis-py's, else build the value.
fn finish<T: Into<Reply>>(
    slf: &Bound<'_, NativeClient>,
    f: &Fast,
    got: T,
    options: Option<Bound<'_, PyDict>>,
    build: impl FnOnce(Python<'_>, &T, bool) -> PyResult<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let py = slf.py();
    match custom_callback(slf)? {
        Some(cb) => {
            let value = raw(py, &got.into(), f)?;
            cb.call((value,), options.as_ref()).map(Bound::unbind)
        }
        None => build(py, &got, f.decode),
    }
}

#[pymethods]
impl NativeClient {
    /// The summary of a group's pending messages (redis-py's ``xpending``).
    fn xpending(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let Some(f) = slf.get().fast(slf)? else {
            let args = vec![name.clone(), groupname.clone()];
            return call_fallback(slf, py, "xpending", args, None);
        };
        let key = arg_bytes(py, name)?;
        let group = arg_bytes(py, groupname)?;
        let db = f.db;
        let got = locked(py, f, false, |sess| {
            sess.run(db, |ctx| xpending_summary(ctx, &key, &group))
        })?;
        finish(slf, f, got, None, |py, s, decode| {
            summary_obj(py, s, decode)
        })
    }

    /// The pending messages of a group in an ID range (extended XPENDING).
    #[pyo3(signature = (name, groupname, min, max, count, consumername=None, idle=None))]
    #[allow(clippy::too_many_arguments)]
    fn xpending_range(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        min: &Bound<'_, PyAny>,
        max: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
        consumername: Option<&Bound<'_, PyAny>>,
        idle: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let count_n = exact_int(count).filter(|n| *n >= 0);
        let idle_n = idle.map(|i| exact_int(i).filter(|n| *n >= 0));
        let simple =
            !min.is_none() && !max.is_none() && count_n.is_some() && !matches!(idle_n, Some(None));
        let fast = if simple { slf.get().fast(slf)? } else { None };
        let (Some(f), Some(count)) = (fast, count_n) else {
            let all = vec![
                name.clone(),
                groupname.clone(),
                min.clone(),
                max.clone(),
                count.clone(),
            ];
            let all = with_opts(py, all, [consumername, idle]);
            return call_fallback(slf, py, "xpending_range", all, None);
        };
        // Encoded in the order of the command's arguments: key, group, start, end, consumer.
        let key = arg_bytes(py, name)?;
        let group = arg_bytes(py, groupname)?;
        let (lo, hi) = (arg_bytes(py, min)?, arg_bytes(py, max)?);
        let consumer = match consumername {
            Some(c) if c.is_truthy()? => Some(arg_bytes(py, c)?),
            _ => None,
        };
        let min_idle = idle_n.flatten().unwrap_or(0);
        let db = f.db;
        let got = locked(py, f, false, |sess| {
            sess.run(db, |ctx| {
                // XPENDING's checks in its order: the bounds, then the key and the group.
                let mut q = PendingRange::new(
                    cmd_args::range_start(&lo)?,
                    cmd_args::range_end(&hi)?,
                    count as u64,
                );
                q.min_idle = min_idle;
                q.consumer = consumer.as_deref();
                xpending_range(ctx, &key, &group, &q)
            })
        })?;
        let options = option(py, "parse_detail", true)?;
        finish(slf, f, got, Some(options), |py, rows, decode| {
            rows_obj(py, rows, decode)
        })
    }
}
