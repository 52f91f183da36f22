//! The other stream methods of `_NativeClient` (see `client.rs`): consumer groups,
//! pending entries, claiming, deletion with reference policies, trimming, XINFO and
//! XCFGSET. Replies with a redis-py callback that depends on the protocol (XINFO, XPENDING,
//! XCLAIM, XAUTOCLAIM) go through the client's own callback, on the raw value built here.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};
use xstreams_core::Reply;

use crate::client::{
    exact_int, fallback, int_reply, is_exact_false, is_one_of, push_int, raw, Args, Fast,
    NativeClient, REF_POLICIES,
};
use crate::convert::arg_bytes;
use crate::errors::reply_err;

/// How a native method turns its reply into redis-py's value.
enum Conv<'py> {
    /// An integer (or whatever raw value the engine answered).
    Int,
    /// The raw reply, decoded when asked (no callback).
    Raw,
    /// redis-py's `bool_ok`: ``True`` for an OK status.
    BoolOk,
    /// ``bool(int)``.
    Bool,
    /// The client's Python response callback for a command, with options.
    Callback(&'static str, Option<Bound<'py, PyDict>>),
}

fn convert(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    reply: &Reply,
    f: &Fast,
    conv: Conv<'_>,
) -> PyResult<Py<PyAny>> {
    match (conv, reply) {
        (_, Reply::Error(e)) => Err(reply_err(py, e)),
        (Conv::Int, r) => int_reply(py, r, f),
        (Conv::Raw, r) => raw(py, r, f),
        (Conv::BoolOk, Reply::Status(s)) => {
            Ok(PyBool::new(py, s == "OK").to_owned().into_any().unbind())
        }
        (Conv::Bool, Reply::Int(i)) => Ok(PyBool::new(py, *i != 0).to_owned().into_any().unbind()),
        (Conv::Callback(cmd, options), r) => {
            let value = raw(py, r, f)?;
            let cb = slf.getattr("response_callbacks")?.get_item(cmd)?;
            cb.call((value,), options.as_ref()).map(Bound::unbind)
        }
        (_, r) => raw(py, r, f),
    }
}

/// Run `args` on the native path and convert; `None` when the client has no native path.
fn native(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    args: &Args<'_>,
    conv: Conv<'_>,
) -> PyResult<Option<Py<PyAny>>> {
    match slf.get().fast(slf)? {
        Some(f) => {
            let reply = NativeClient::run(py, f, args)?;
            convert(slf, py, &reply, f, conv).map(Some)
        }
        None => Ok(None),
    }
}

fn call_fallback(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    method: &str,
    args: Vec<Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let mut all = vec![slf.clone().into_any()];
    all.extend(args);
    fallback(py, method)?
        .call(PyTuple::new(py, all)?, kwargs)
        .map(Bound::unbind)
}

const NACK_MODES: &[&str] = &["SILENT", "FAIL", "FATAL"];

fn opt_or<'py>(py: Python<'py>, v: Option<&Bound<'py, PyAny>>) -> Bound<'py, PyAny> {
    match v {
        Some(v) => v.clone(),
        None => py.None().into_bound(py),
    }
}

/// The other stream commands of `_NativeClient`: consumer groups, pending entries,
/// claiming, deletion with reference policies, trimming, XINFO, XCFGSET.
#[pymethods]
impl NativeClient {
    /// XACK and XDEL in one command; one status code per ID.
    #[pyo3(signature = (name, groupname, *ids, ref_policy=None))]
    fn xackdel(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
        ref_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if !ids.is_empty()
            && ref_policy.is_none_or(|p| is_one_of(p, REF_POLICIES))
            && on_native(slf)?
        {
            let items: Vec<Bound<'_, PyAny>> = ids.iter().collect();
            let mut args: Args<'_> = vec![
                Cow::Borrowed(b"XACKDEL"),
                arg_bytes(py, name)?,
                arg_bytes(py, groupname)?,
            ];
            match ref_policy {
                Some(p) => args.push(arg_bytes(py, p)?),
                None => args.push(Cow::Borrowed(b"KEEPREF")),
            }
            args.push(Cow::Borrowed(b"IDS"));
            push_int(&mut args, items.len() as i64);
            for i in &items {
                args.push(arg_bytes(py, i)?);
            }
            if let Some(v) = native(slf, py, &args, Conv::Raw)? {
                return Ok(v);
            }
        }
        let mut all = vec![name.clone(), groupname.clone()];
        all.extend(ids.iter());
        let kwargs = PyDict::new(py);
        if let Some(p) = ref_policy {
            kwargs.set_item("ref_policy", p)?;
        }
        call_fallback(slf, py, "xackdel", all, Some(&kwargs))
    }

    /// XDEL with control over consumer-group references; one status code per ID.
    #[pyo3(signature = (name, *ids, ref_policy=None))]
    fn xdelex(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
        ref_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if !ids.is_empty()
            && ref_policy.is_none_or(|p| is_one_of(p, REF_POLICIES))
            && on_native(slf)?
        {
            let items: Vec<Bound<'_, PyAny>> = ids.iter().collect();
            let mut args: Args<'_> = vec![Cow::Borrowed(b"XDELEX"), arg_bytes(py, name)?];
            match ref_policy {
                Some(p) => args.push(arg_bytes(py, p)?),
                None => args.push(Cow::Borrowed(b"KEEPREF")),
            }
            args.push(Cow::Borrowed(b"IDS"));
            push_int(&mut args, items.len() as i64);
            for i in &items {
                args.push(arg_bytes(py, i)?);
            }
            if let Some(v) = native(slf, py, &args, Conv::Raw)? {
                return Ok(v);
            }
        }
        let mut all = vec![name.clone()];
        all.extend(ids.iter());
        let kwargs = PyDict::new(py);
        if let Some(p) = ref_policy {
            kwargs.set_item("ref_policy", p)?;
        }
        call_fallback(slf, py, "xdelex", all, Some(&kwargs))
    }

    /// Negatively acknowledge pending messages (mode SILENT, FAIL or FATAL).
    #[pyo3(signature = (name, groupname, mode, *ids, retrycount=None, force=None))]
    #[allow(clippy::too_many_arguments)]
    fn xnack(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        mode: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
        retrycount: Option<&Bound<'_, PyAny>>,
        force: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let retry = retrycount.map(exact_int);
        let force_on = force.map(|f| (f.is_exact_instance_of::<PyBool>(), f.is_truthy()));
        let simple = !ids.is_empty()
            && is_one_of(mode, NACK_MODES)
            && !matches!(retry, Some(None) | Some(Some(i64::MIN..=-1)))
            && !matches!(force_on, Some((false, _)));
        if simple && on_native(slf)? {
            let items: Vec<Bound<'_, PyAny>> = ids.iter().collect();
            let mut args: Args<'_> = vec![
                Cow::Borrowed(b"XNACK"),
                arg_bytes(py, name)?,
                arg_bytes(py, groupname)?,
                arg_bytes(py, mode)?,
                Cow::Borrowed(b"IDS"),
            ];
            push_int(&mut args, items.len() as i64);
            for i in &items {
                args.push(arg_bytes(py, i)?);
            }
            if let Some(Some(n)) = retry {
                args.push(Cow::Borrowed(b"RETRYCOUNT"));
                push_int(&mut args, n);
            }
            if let Some((_, on)) = force_on {
                if on? {
                    args.push(Cow::Borrowed(b"FORCE"));
                }
            }
            if let Some(v) = native(slf, py, &args, Conv::Int)? {
                return Ok(v);
            }
        }
        let mut all = vec![name.clone(), groupname.clone(), mode.clone()];
        all.extend(ids.iter());
        let kwargs = PyDict::new(py);
        if let Some(r) = retrycount {
            kwargs.set_item("retrycount", r)?;
        }
        if let Some(f) = force {
            kwargs.set_item("force", f)?;
        }
        call_fallback(slf, py, "xnack", all, Some(&kwargs))
    }

    /// Trim a stream by ``maxlen`` or ``minid``; return the number of deleted entries.
    #[pyo3(signature = (name, maxlen=None, approximate=None, minid=None, limit=None, ref_policy=None))]
    fn xtrim(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        maxlen: Option<&Bound<'_, PyAny>>,
        approximate: Option<&Bound<'_, PyAny>>,
        minid: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
        ref_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let approx = approximate.map(|a| (a.is_exact_instance_of::<PyBool>(), a.is_truthy()));
        let simple = maxlen.is_some() != minid.is_some()
            && ref_policy.is_none_or(|p| is_one_of(p, REF_POLICIES))
            && !matches!(approx, Some((false, _)));
        if simple && on_native(slf)? {
            let mut args: Args<'_> = vec![Cow::Borrowed(b"XTRIM"), arg_bytes(py, name)?];
            let (kw, value): (&'static [u8], _) = match (maxlen, minid) {
                (Some(m), _) => (b"MAXLEN", m),
                (None, Some(m)) => (b"MINID", m),
                (None, None) => unreachable!("one of maxlen/minid is set"),
            };
            args.push(Cow::Borrowed(kw));
            let approx_on = match approx {
                None => true,
                Some((_, on)) => on?,
            };
            if approx_on {
                args.push(Cow::Borrowed(b"~"));
            }
            args.push(arg_bytes(py, value)?);
            if let Some(l) = limit {
                args.push(Cow::Borrowed(b"LIMIT"));
                args.push(arg_bytes(py, l)?);
            }
            if let Some(p) = ref_policy {
                args.push(arg_bytes(py, p)?);
            }
            if let Some(v) = native(slf, py, &args, Conv::Int)? {
                return Ok(v);
            }
        }
        let approximate = match approximate {
            Some(a) => a.clone(),
            None => PyBool::new(py, true).to_owned().into_any(),
        };
        let all = vec![
            name.clone(),
            opt_or(py, maxlen),
            approximate,
            opt_or(py, minid),
            opt_or(py, limit),
            opt_or(py, ref_policy),
        ];
        call_fallback(slf, py, "xtrim", all, None)
    }

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

    /// Configure a stream's idempotency map (IDMP-DURATION 1..300 s, IDMP-MAXSIZE).
    #[pyo3(signature = (name, idmp_duration=None, idmp_maxsize=None))]
    fn xcfgset(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        idmp_duration: Option<&Bound<'_, PyAny>>,
        idmp_maxsize: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let duration = idmp_duration.map(exact_int);
        let maxsize = idmp_maxsize.map(exact_int);
        let simple = (duration.is_some() || maxsize.is_some())
            && matches!(duration, None | Some(Some(1..=300)))
            && matches!(maxsize, None | Some(Some(1..=1_000_000)));
        if simple && on_native(slf)? {
            let mut args: Args<'_> = vec![Cow::Borrowed(b"XCFGSET"), arg_bytes(py, name)?];
            if let Some(Some(d)) = duration {
                args.push(Cow::Borrowed(b"IDMP-DURATION"));
                push_int(&mut args, d);
            }
            if let Some(Some(m)) = maxsize {
                args.push(Cow::Borrowed(b"IDMP-MAXSIZE"));
                push_int(&mut args, m);
            }
            if let Some(v) = native(slf, py, &args, Conv::Raw)? {
                return Ok(v);
            }
        }
        let all = vec![
            name.clone(),
            opt_or(py, idmp_duration),
            opt_or(py, idmp_maxsize),
        ];
        call_fallback(slf, py, "xcfgset", all, None)
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

/// Does this client take the native path? (Decided on first use.)
fn on_native(slf: &Bound<'_, NativeClient>) -> PyResult<bool> {
    Ok(slf.get().fast(slf)?.is_some())
}
