//! The consumer-group methods of `_NativeClient`: XACK, XACKDEL and XNACK (the core's
//! `command::xack`), XGROUP, XCLAIM, XAUTOCLAIM and XINFO (XPENDING: `pending`). XACK and
//! XACKDEL run the core's typed commands from the IDs as given (`xack_ids`,
//! `xackdel_ids`: the command's checks in its order, its log record); the others run
//! their arguments, the replies of XCLAIM, XAUTOCLAIM and XINFO through the client's own
//! redis-py callback (it depends on the protocol), on the raw value built in Rust.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};
use xstreams_core::command::{xack_ids, xackdel_ids};
use xstreams_core::structures::stream::{DeleteOutcome, RefPolicy};

use super::{
    exact_int, given, is_exact_false, is_one_of, keys_call, locked, native_or, option, policy_call,
    with_opts, words_then_args_methods, Cmd, Conv, Fast, NativeClient,
};
use crate::convert::arg_bytes;

const NACK_MODES: &[&str] = &["SILENT", "FAIL", "FATAL"];

words_then_args_methods! {
    /// Delete a consumer; return the number of messages it had pending.
    xgroup_delconsumer(name, groupname, consumername) => [b"XGROUP", b"DELCONSUMER"], Conv::Int;
    /// Create a consumer; return 1 if it was created, 0 if it existed.
    xgroup_createconsumer(name, groupname, consumername) => [b"XGROUP", b"CREATECONSUMER"], Conv::Int;
    /// Destroy a consumer group; return whether it existed.
    xgroup_destroy(name, groupname) => [b"XGROUP", b"DESTROY"], Conv::Bool;
    /// Information about the consumer groups of a stream.
    xinfo_groups(name) => [b"XINFO", b"GROUPS"], Conv::Callback("XINFO GROUPS", None);
    /// Information about the consumers of a group.
    xinfo_consumers(name, groupname) => [b"XINFO", b"CONSUMERS"], Conv::Callback("XINFO CONSUMERS", None);
}

/// Consumer groups, pending entries, claiming and XINFO.
#[pymethods]
impl NativeClient {
    /// Acknowledge messages; return how many were pending.
    #[pyo3(signature = (name, groupname, *ids))]
    fn xack(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        if !ids.is_empty() {
            if let Some(f) = slf.get().fast(slf)? {
                return xack_fast(py, f, name, groupname, ids);
            }
        }
        let mut all = vec![name.clone(), groupname.clone()];
        all.extend(ids.iter());
        keys_call(slf, "xack", b"XACK", &all)
    }

    /// XACK and XDEL in one command; one status code per ID.
    #[pyo3(signature = (name, groupname, *ids, ref_policy=None))]
    fn xackdel(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
        ref_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let policy = match ref_policy {
            None => Some(RefPolicy::KeepRef),
            Some(p) if is_one_of(p, &["KEEPREF"]) => Some(RefPolicy::KeepRef),
            Some(p) if is_one_of(p, &["DELREF"]) => Some(RefPolicy::DelRef),
            Some(p) if is_one_of(p, &["ACKED"]) => Some(RefPolicy::Acked),
            Some(_) => None,
        };
        if let (Some(policy), false) = (policy, ids.is_empty()) {
            if let Some(f) = slf.get().fast(slf)? {
                return xackdel_fast(slf.py(), f, name, groupname, ids, policy);
            }
        }
        let head = [name, groupname];
        policy_call(slf, "xackdel", b"XACKDEL", &head, ids, ref_policy)
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
        let items: Vec<Bound<'_, PyAny>> = ids.iter().collect();
        native_or(
            slf,
            simple,
            |c| {
                c.word(b"XNACK").args([name, groupname, mode])?;
                c.word(b"IDS").int(items.len() as i64).args(&items)?;
                if let Some(Some(n)) = retry {
                    c.word(b"RETRYCOUNT").int(n);
                }
                if let Some((_, on)) = force_on {
                    if on? {
                        c.word(b"FORCE");
                    }
                }
                Ok(Conv::Int)
            },
            "xnack",
            || {
                let all = [
                    vec![name.clone(), groupname.clone(), mode.clone()],
                    items.clone(),
                ];
                let kwargs = given(py, [("retrycount", retrycount), ("force", force)])?;
                Ok((all.concat(), Some(kwargs)))
            },
        )
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
        let python = || {
            let id = match id {
                Some(i) => i.clone(),
                None => PyString::new(py, "$").into_any(),
            };
            let mkstream = PyBool::new(py, mk).to_owned().into_any();
            let all = vec![name.clone(), groupname.clone(), id, mkstream];
            Ok((with_opts(py, all, [entries_read]), None))
        };
        native_or(
            slf,
            true,
            |c| {
                c.word(b"XGROUP").word(b"CREATE").args([name, groupname])?;
                c.arg_or(id, b"$")?;
                if mk {
                    c.word(b"MKSTREAM");
                }
                c.opt(b"ENTRIESREAD", entries_read)?;
                Ok(Conv::BoolOk)
            },
            "xgroup_create",
            python,
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
        let python = || {
            let all = vec![name.clone(), groupname.clone(), id.clone()];
            Ok((with_opts(py, all, [entries_read]), None))
        };
        native_or(
            slf,
            true,
            |c| {
                c.word(b"XGROUP")
                    .word(b"SETID")
                    .args([name, groupname, id])?;
                c.opt(b"ENTRIESREAD", entries_read)?;
                Ok(Conv::BoolOk)
            },
            "xgroup_setid",
            python,
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
        let python = || {
            let full = match full {
                Some(f) => f.clone(),
                None => PyBool::new(py, false).to_owned().into_any(),
            };
            Ok((vec![name.clone(), full], None))
        };
        native_or(
            slf,
            true,
            |c| {
                c.word(b"XINFO").word(b"STREAM").arg(name)?;
                let mut options = None;
                if let (true, Some(f)) = (full_on, full) {
                    c.word(b"FULL");
                    options = Some(option(py, "full", f)?);
                }
                Ok(Conv::Callback("XINFO STREAM", options))
            },
            "xinfo_stream",
            python,
        )
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
        let python = || {
            let f = PyBool::new(py, false).to_owned().into_any();
            let all = vec![
                name.clone(),
                groupname.clone(),
                consumername.clone(),
                min_idle_time.clone(),
                message_ids.clone(),
            ];
            let mut all = with_opts(py, all, [idle, time, retrycount]);
            all.push(force.cloned().unwrap_or_else(|| f.clone()));
            all.push(justid.cloned().unwrap_or(f));
            Ok((all, None))
        };
        native_or(
            slf,
            simple,
            |c| {
                c.word(b"XCLAIM").args([name, groupname, consumername])?;
                c.int(min_idle.unwrap_or_default());
                c.args(ids.iter().flatten())?;
                if force_on == Some(true) {
                    c.word(b"FORCE");
                }
                Ok(Conv::Callback("XCLAIM", justid_option(py, c, justid_on)?))
            },
            "xclaim",
            python,
        )
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
        let simple = !matches!(count_n, Some(None)) && min_idle.is_some() && justid_on.is_some();
        let python = || {
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
            ];
            let mut all = with_opts(py, all, [count]);
            all.push(
                justid
                    .cloned()
                    .unwrap_or_else(|| PyBool::new(py, false).to_owned().into_any()),
            );
            Ok((all, None))
        };
        native_or(
            slf,
            simple,
            |c| {
                c.word(b"XAUTOCLAIM")
                    .args([name, groupname, consumername])?;
                c.int(min_idle.unwrap_or_default());
                c.arg_or(start_id, b"0-0")?;
                if let Some(Some(n)) = count_n {
                    c.word(b"COUNT").int(n);
                }
                Ok(Conv::Callback(
                    "XAUTOCLAIM",
                    justid_option(py, c, justid_on)?,
                ))
            },
            "xautoclaim",
            python,
        )
    }
}

/// `JUSTID` when asked, and the callback's `parse_justid` option with it.
fn justid_option<'py>(
    py: Python<'py>,
    c: &mut Cmd<'_>,
    justid: Option<bool>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    if justid != Some(true) {
        return Ok(None);
    }
    c.word(b"JUSTID");
    option(py, "parse_justid", true).map(Some)
}

/// XACK of at least one ID as a typed call (no argument vector, no command lookup): the
/// IDs' bytes borrowed from the tuple, checked in the command's order by `xack_ids`.
fn xack_fast(
    py: Python<'_>,
    f: &Fast,
    name: &Bound<'_, PyAny>,
    groupname: &Bound<'_, PyAny>,
    ids: &Bound<'_, PyTuple>,
) -> PyResult<Py<PyAny>> {
    let key = arg_bytes(py, name)?;
    let group = arg_bytes(py, groupname)?;
    let (key, group) = (key.as_ref(), group.as_ref());
    let db = f.db;
    let acked = with_id_bytes(py, ids, |raw| {
        locked(py, f, false, |sess| {
            sess.run(db, |ctx| xack_ids(ctx, key, group, raw))
        })
    })?;
    Ok(acked.into_pyobject(py)?.into_any().unbind())
}

/// `f` of the bytes of each ID of `ids` (a tuple holds its items: they cannot change, so
/// their bytes are borrowed), for XACK's and XACKDEL's typed calls.
fn with_id_bytes<R>(
    py: Python<'_>,
    ids: &Bound<'_, PyTuple>,
    f: impl FnOnce(&[&[u8]]) -> PyResult<R>,
) -> PyResult<R> {
    let items: Vec<_> = (0..ids.len())
        .map(|i| ids.get_borrowed_item(i))
        .collect::<PyResult<_>>()?;
    let raw_ids = items
        .iter()
        .map(|i| arg_bytes(py, i))
        .collect::<PyResult<Vec<_>>>()?;
    let raw: Vec<&[u8]> = raw_ids.iter().map(|i| i.as_ref()).collect();
    f(&raw)
}

/// XACKDEL of at least one ID under a known policy as a typed call (no argument vector,
/// no command lookup), in the order the command checks: writes refused, the key's type,
/// every ID not found without the key or the group (the IDs not even parsed), then every
/// ID strictly; one status code per ID.
fn xackdel_fast(
    py: Python<'_>,
    f: &Fast,
    name: &Bound<'_, PyAny>,
    groupname: &Bound<'_, PyAny>,
    ids: &Bound<'_, PyTuple>,
    policy: RefPolicy,
) -> PyResult<Py<PyAny>> {
    let key = arg_bytes(py, name)?;
    let group = arg_bytes(py, groupname)?;
    let (key, group) = (key.as_ref(), group.as_ref());
    let db = f.db;
    let codes = with_id_bytes(py, ids, |raw| {
        locked(py, f, false, |sess| {
            sess.run(db, |ctx| xackdel_ids(ctx, key, group, policy, raw))
        })
    })?;
    let codes = codes.into_iter().map(|c| match c {
        DeleteOutcome::NotFound => -1i64,
        DeleteOutcome::Deleted => 1,
        DeleteOutcome::Referenced => 2,
    });
    Ok(PyList::new(py, codes)?.into_any().unbind())
}
