//! The consumer-group methods of `_NativeClient` (see `client.rs`): XGROUP, XINFO,
//! XPENDING, XCLAIM and XAUTOCLAIM. Their replies go through the client's own redis-py
//! callback (it depends on the protocol), on the raw value built in Rust.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

use crate::client::{exact_int, is_exact_false, push_int, Args, NativeClient};
use crate::client_commands::{call_fallback, native, on_native, opt_or, Conv};
use crate::convert::arg_bytes;

/// Consumer groups, pending entries, claiming and XINFO.
#[pymethods]
impl NativeClient {
    /// Create a consumer group (``mkstream`` creates the stream if missing).
    #[pyo3(signature = (name, groupname, id=None, mkstream=None, entries_read=None))]
    fn xgroup_create(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        id: Option<&Bound<'_, PyAny>>,
        mkstream: Option<&Bound<'_, PyAny>>,
        entries_read: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let mk = match mkstream {
            None => false,
            Some(m) => m.is_truthy()?,
        };
        if on_native(slf)? {
            let mut args: Args<'_> = vec![
                Cow::Borrowed(b"XGROUP"),
                Cow::Borrowed(b"CREATE"),
                arg_bytes(py, name)?,
                arg_bytes(py, groupname)?,
            ];
            match id {
                Some(i) => args.push(arg_bytes(py, i)?),
                None => args.push(Cow::Borrowed(b"$")),
            }
            if mk {
                args.push(Cow::Borrowed(b"MKSTREAM"));
            }
            if let Some(e) = entries_read {
                args.push(Cow::Borrowed(b"ENTRIESREAD"));
                args.push(arg_bytes(py, e)?);
            }
            if let Some(v) = native(slf, py, &args, Conv::BoolOk)? {
                return Ok(v);
            }
        }
        let id = match id {
            Some(i) => i.clone(),
            None => PyString::new(py, "$").into_any(),
        };
        let mkstream = PyBool::new(py, mk).to_owned().into_any();
        let all = vec![
            name.clone(),
            groupname.clone(),
            id,
            mkstream,
            opt_or(py, entries_read),
        ];
        call_fallback(slf, py, "xgroup_create", all, None)
    }

    /// Delete a consumer; return the number of messages it had pending.
    fn xgroup_delconsumer(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        consumername: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        group_call(
            slf,
            py,
            "xgroup_delconsumer",
            b"DELCONSUMER",
            name,
            groupname,
            Some(consumername),
            Conv::Int,
        )
    }

    /// Create a consumer; return 1 if it was created, 0 if it existed.
    fn xgroup_createconsumer(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        consumername: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        group_call(
            slf,
            py,
            "xgroup_createconsumer",
            b"CREATECONSUMER",
            name,
            groupname,
            Some(consumername),
            Conv::Int,
        )
    }

    /// Destroy a consumer group; return whether it existed.
    fn xgroup_destroy(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        group_call(
            slf,
            py,
            "xgroup_destroy",
            b"DESTROY",
            name,
            groupname,
            None,
            Conv::Bool,
        )
    }

    /// Set a consumer group's last delivered ID.
    #[pyo3(signature = (name, groupname, id, entries_read=None))]
    fn xgroup_setid(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        id: &Bound<'_, PyAny>,
        entries_read: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if on_native(slf)? {
            let mut args: Args<'_> = vec![
                Cow::Borrowed(b"XGROUP"),
                Cow::Borrowed(b"SETID"),
                arg_bytes(py, name)?,
                arg_bytes(py, groupname)?,
                arg_bytes(py, id)?,
            ];
            if let Some(e) = entries_read {
                args.push(Cow::Borrowed(b"ENTRIESREAD"));
                args.push(arg_bytes(py, e)?);
            }
            if let Some(v) = native(slf, py, &args, Conv::BoolOk)? {
                return Ok(v);
            }
        }
        let all = vec![
            name.clone(),
            groupname.clone(),
            id.clone(),
            opt_or(py, entries_read),
        ];
        call_fallback(slf, py, "xgroup_setid", all, None)
    }

    /// Information about the consumer groups of a stream.
    fn xinfo_groups(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if on_native(slf)? {
            let args: Args<'_> = vec![
                Cow::Borrowed(b"XINFO"),
                Cow::Borrowed(b"GROUPS"),
                arg_bytes(py, name)?,
            ];
            if let Some(v) = native(slf, py, &args, Conv::Callback("XINFO GROUPS", None))? {
                return Ok(v);
            }
        }
        call_fallback(slf, py, "xinfo_groups", vec![name.clone()], None)
    }

    /// Information about the consumers of a group.
    fn xinfo_consumers(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if on_native(slf)? {
            let args: Args<'_> = vec![
                Cow::Borrowed(b"XINFO"),
                Cow::Borrowed(b"CONSUMERS"),
                arg_bytes(py, name)?,
                arg_bytes(py, groupname)?,
            ];
            if let Some(v) = native(slf, py, &args, Conv::Callback("XINFO CONSUMERS", None))? {
                return Ok(v);
            }
        }
        call_fallback(
            slf,
            py,
            "xinfo_consumers",
            vec![name.clone(), groupname.clone()],
            None,
        )
    }

    /// Information about a stream (``full=True`` for XINFO STREAM FULL).
    #[pyo3(signature = (name, full=None))]
    fn xinfo_stream(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        full: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let full_on = match full {
            None => false,
            Some(f) => f.is_truthy()?,
        };
        if on_native(slf)? {
            let mut args: Args<'_> = vec![
                Cow::Borrowed(b"XINFO"),
                Cow::Borrowed(b"STREAM"),
                arg_bytes(py, name)?,
            ];
            let mut options = None;
            if let (true, Some(f)) = (full_on, full) {
                args.push(Cow::Borrowed(b"FULL"));
                let d = PyDict::new(py);
                d.set_item("full", f)?;
                options = Some(d);
            }
            if let Some(v) = native(slf, py, &args, Conv::Callback("XINFO STREAM", options))? {
                return Ok(v);
            }
        }
        let full = match full {
            Some(f) => f.clone(),
            None => PyBool::new(py, false).to_owned().into_any(),
        };
        call_fallback(slf, py, "xinfo_stream", vec![name.clone(), full], None)
    }

    /// The summary of a group's pending messages.
    fn xpending(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if on_native(slf)? {
            let args: Args<'_> = vec![
                Cow::Borrowed(b"XPENDING"),
                arg_bytes(py, name)?,
                arg_bytes(py, groupname)?,
            ];
            if let Some(v) = native(slf, py, &args, Conv::Callback("XPENDING", None))? {
                return Ok(v);
            }
        }
        call_fallback(
            slf,
            py,
            "xpending",
            vec![name.clone(), groupname.clone()],
            None,
        )
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
        if simple && on_native(slf)? {
            let mut args: Args<'_> = vec![
                Cow::Borrowed(b"XPENDING"),
                arg_bytes(py, name)?,
                arg_bytes(py, groupname)?,
            ];
            if let Some(Some(i)) = idle_n {
                args.push(Cow::Borrowed(b"IDLE"));
                push_int(&mut args, i);
            }
            args.push(arg_bytes(py, min)?);
            args.push(arg_bytes(py, max)?);
            args.push(arg_bytes(py, count)?);
            if let Some(c) = consumername {
                if c.is_truthy()? {
                    args.push(arg_bytes(py, c)?);
                }
            }
            let options = PyDict::new(py);
            options.set_item("parse_detail", true)?;
            if let Some(v) = native(slf, py, &args, Conv::Callback("XPENDING", Some(options)))? {
                return Ok(v);
            }
        }
        let all = vec![
            name.clone(),
            groupname.clone(),
            min.clone(),
            max.clone(),
            count.clone(),
            opt_or(py, consumername),
            opt_or(py, idle),
        ];
        call_fallback(slf, py, "xpending_range", all, None)
    }

    /// Change the ownership of pending messages; the claimed entries (or IDs).
    #[pyo3(signature = (name, groupname, consumername, min_idle_time, message_ids, idle=None, time=None, retrycount=None, force=None, justid=None))]
    #[allow(clippy::too_many_arguments)]
    fn xclaim(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        consumername: &Bound<'_, PyAny>,
        min_idle_time: &Bound<'_, PyAny>,
        message_ids: &Bound<'_, PyAny>,
        idle: Option<&Bound<'_, PyAny>>,
        time: Option<&Bound<'_, PyAny>>,
        retrycount: Option<&Bound<'_, PyAny>>,
        force: Option<&Bound<'_, PyAny>>,
        justid: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let min_idle = exact_int(min_idle_time).filter(|n| *n >= 0);
        let ids: Option<Vec<Bound<'_, PyAny>>> = if let Ok(l) = message_ids.cast::<PyList>() {
            Some(l.iter().collect())
        } else if let Ok(t) = message_ids.cast::<PyTuple>() {
            Some(t.iter().collect())
        } else {
            None
        };
        let flag = |v: Option<&Bound<'_, PyAny>>| match v {
            None => Some(false),
            Some(b) if b.is_exact_instance_of::<PyBool>() => Some(!is_exact_false(b)),
            Some(_) => None,
        };
        let (force_on, justid_on) = (flag(force), flag(justid));
        let simple = min_idle.is_some()
            && ids.as_ref().is_some_and(|v| !v.is_empty())
            && idle.is_none()
            && time.is_none()
            && retrycount.is_none()
            && force_on.is_some()
            && justid_on.is_some();
        if let (true, Some(ids), Some(m)) = (simple && on_native(slf)?, ids.as_ref(), min_idle) {
            let mut args: Args<'_> = vec![
                Cow::Borrowed(b"XCLAIM"),
                arg_bytes(py, name)?,
                arg_bytes(py, groupname)?,
                arg_bytes(py, consumername)?,
            ];
            push_int(&mut args, m);
            for i in ids {
                args.push(arg_bytes(py, i)?);
            }
            if force_on == Some(true) {
                args.push(Cow::Borrowed(b"FORCE"));
            }
            let mut options = None;
            if justid_on == Some(true) {
                args.push(Cow::Borrowed(b"JUSTID"));
                let d = PyDict::new(py);
                d.set_item("parse_justid", true)?;
                options = Some(d);
            }
            if let Some(v) = native(slf, py, &args, Conv::Callback("XCLAIM", options))? {
                return Ok(v);
            }
        }
        let f = PyBool::new(py, false).to_owned().into_any();
        let all = vec![
            name.clone(),
            groupname.clone(),
            consumername.clone(),
            min_idle_time.clone(),
            message_ids.clone(),
            opt_or(py, idle),
            opt_or(py, time),
            opt_or(py, retrycount),
            force.cloned().unwrap_or_else(|| f.clone()),
            justid.cloned().unwrap_or(f),
        ];
        call_fallback(slf, py, "xclaim", all, None)
    }

    /// Claim pending entries idle for at least ``min_idle_time`` ms, SCAN-like.
    #[pyo3(signature = (name, groupname, consumername, min_idle_time, start_id=None, count=None, justid=None))]
    #[allow(clippy::too_many_arguments)]
    fn xautoclaim(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        consumername: &Bound<'_, PyAny>,
        min_idle_time: &Bound<'_, PyAny>,
        start_id: Option<&Bound<'_, PyAny>>,
        count: Option<&Bound<'_, PyAny>>,
        justid: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let min_idle = exact_int(min_idle_time).filter(|n| *n >= 0);
        let count_n = count.map(|c| exact_int(c).filter(|n| *n >= 0));
        let justid_on = match justid {
            None => Some(false),
            Some(b) if b.is_exact_instance_of::<PyBool>() => Some(!is_exact_false(b)),
            Some(_) => None,
        };
        let ok = !matches!(count_n, Some(None)) && on_native(slf)?;
        if let (Some(m), true, Some(j)) = (min_idle, ok, justid_on) {
            let mut args: Args<'_> = vec![
                Cow::Borrowed(b"XAUTOCLAIM"),
                arg_bytes(py, name)?,
                arg_bytes(py, groupname)?,
                arg_bytes(py, consumername)?,
            ];
            push_int(&mut args, m);
            match start_id {
                Some(s) => args.push(arg_bytes(py, s)?),
                None => args.push(Cow::Borrowed(b"0-0")),
            }
            if let Some(Some(c)) = count_n {
                args.push(Cow::Borrowed(b"COUNT"));
                push_int(&mut args, c);
            }
            let mut options = None;
            if j {
                args.push(Cow::Borrowed(b"JUSTID"));
                let d = PyDict::new(py);
                d.set_item("parse_justid", true)?;
                options = Some(d);
            }
            if let Some(v) = native(slf, py, &args, Conv::Callback("XAUTOCLAIM", options))? {
                return Ok(v);
            }
        }
        let start_id = match start_id {
            Some(s) => s.clone(),
            None => PyString::new(py, "0-0").into_any(),
        };
        let all = vec![
            name.clone(),
            groupname.clone(),
            consumername.clone(),
            min_idle_time.clone(),
            start_id,
            opt_or(py, count),
            justid
                .cloned()
                .unwrap_or_else(|| PyBool::new(py, false).to_owned().into_any()),
        ];
        call_fallback(slf, py, "xautoclaim", all, None)
    }
}

/// `XGROUP <sub> name group [consumer]`.
#[allow(clippy::too_many_arguments)]
fn group_call(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    method: &str,
    sub: &'static [u8],
    name: &Bound<'_, PyAny>,
    groupname: &Bound<'_, PyAny>,
    consumer: Option<&Bound<'_, PyAny>>,
    conv: Conv<'_>,
) -> PyResult<Py<PyAny>> {
    if on_native(slf)? {
        let mut args: Args<'_> = vec![
            Cow::Borrowed(b"XGROUP"),
            Cow::Borrowed(sub),
            arg_bytes(py, name)?,
            arg_bytes(py, groupname)?,
        ];
        if let Some(c) = consumer {
            args.push(arg_bytes(py, c)?);
        }
        if let Some(v) = native(slf, py, &args, conv)? {
            return Ok(v);
        }
    }
    let mut all = vec![name.clone(), groupname.clone()];
    all.extend(consumer.cloned());
    call_fallback(slf, py, method, all, None)
}
