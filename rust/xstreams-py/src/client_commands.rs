//! The other entry methods of `_NativeClient` (see `client.rs`): deletion with reference
//! policies (XACKDEL, XDELEX), XNACK, trimming and XCFGSET, and the helpers of the native
//! methods that run a command's arguments (`client_groups.rs` holds the consumer-group,
//! pending and XINFO methods). Replies with a redis-py callback that depends on the
//! protocol go through the client's own callback, on the raw value built here.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyTuple};
use xstreams_core::Reply;

use crate::client::{
    exact_int, fallback, int_reply, is_one_of, push_int, raw, run_args, Args, Fast, NativeClient,
    REF_POLICIES,
};
use crate::convert::arg_bytes;
use crate::errors::reply_err;

/// How a native method turns its reply into redis-py's value.
pub(crate) enum Conv<'py> {
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
pub(crate) fn native(
    slf: &Bound<'_, NativeClient>,
    py: Python<'_>,
    args: &Args<'_>,
    conv: Conv<'_>,
) -> PyResult<Option<Py<PyAny>>> {
    match slf.get().fast(slf)? {
        Some(f) => {
            let reply = run_args(py, f, args)?;
            convert(slf, py, &reply, f, conv).map(Some)
        }
        None => Ok(None),
    }
}

pub(crate) fn call_fallback(
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

pub(crate) fn opt_or<'py>(py: Python<'py>, v: Option<&Bound<'py, PyAny>>) -> Bound<'py, PyAny> {
    match v {
        Some(v) => v.clone(),
        None => py.None().into_bound(py),
    }
}

/// Deletion with reference policies, XNACK, trimming and XCFGSET.
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
}

/// Does this client take the native path? (Decided on first use.)
pub(crate) fn on_native(slf: &Bound<'_, NativeClient>) -> PyResult<bool> {
    Ok(slf.get().fast(slf)?.is_some())
}
