//! A pipeline's queued commands run natively: `Pipeline.execute` hands its command stack
//! to `_NativeClient._pipeline_run`, which encodes every command in Rust, runs them all in
//! one store call (`Store::execute_batch`: atomically for a transaction, one after the
//! other otherwise) with the GIL released, and builds each result as redis-py's pipeline
//! returns it: the stream commands the client's native methods cover are converted here,
//! every other reply goes through the client's `_parse` (decoding and its response
//! callback), exactly as the Python path does. A failed command's slot holds its exception.
//! `_NativePipeline`, the base class of `Pipeline`, queues the common XADD, XACK and XDEL
//! from Rust.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use xstreams_core::command::table::{self, NativeReply};
use xstreams_core::Reply;

use super::{convert, fallback, Conv, NativeClient};
use crate::convert::arg_bytes;
use crate::errors::{cmd_err, cmd_error};
use crate::store::guarded;

/// The conversion of a command named `name` with `rest` arguments: the native one when
/// the client's own method would use it (no options such as `keys`/`EMPTY_RESPONSE`).
fn conv_for<'py>(
    name: &Bound<'py, PyAny>,
    tokens: &[Vec<u8>],
    options: &Bound<'py, PyDict>,
) -> Conv<'py> {
    let parse = || Conv::Parse(name.clone(), options.clone());
    if !options.is_empty() || !name.is_exact_instance_of::<PyString>() || tokens.is_empty() {
        return parse();
    }
    let cmd = tokens[0].to_ascii_uppercase();
    // The command name must be the whole first argument (no "XINFO STREAM" splitting).
    let Ok(s) = name.cast::<PyString>() else {
        return parse();
    };
    if s.to_cow()
        .map(|c| c.len() != tokens[0].len())
        .unwrap_or(true)
    {
        return parse();
    }
    // XREADGROUP ... CLAIM adds fields to each entry: left to the callback.
    if cmd == b"XREADGROUP" && tokens.iter().any(|t| t.eq_ignore_ascii_case(b"CLAIM")) {
        return parse();
    }
    native_conv(&cmd).unwrap_or_else(parse)
}

/// How a pipeline converts the reply of a command the client's native methods build
/// redis-py's value for: the command table's list ([`table::native_client_commands`]),
/// also read by `Redis._native_config` (the client takes the Python path for all when its
/// callback for one of them is not redis-py's).
pub(crate) fn native_conv(cmd: &[u8]) -> Option<Conv<'static>> {
    table::native_client_commands()
        .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(cmd))
        .map(|(_, r)| match r {
            NativeReply::Raw => Conv::Raw,
            NativeReply::Int => Conv::Int,
            NativeReply::Entries => Conv::Entries,
            NativeReply::Read => Conv::Read,
        })
}

/// The command's arguments for the store, as `Redis._tokens` makes them: a command name
/// holding spaces is split into words, the rest encoded as redis-py's Encoder does.
fn tokens(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Vec<Vec<u8>>> {
    let mut out = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        if i == 0 {
            let split = if let Ok(s) = a.cast::<PyString>() {
                let text = s.to_cow()?;
                if !text.is_empty() && text.bytes().all(|b| b.is_ascii_graphic()) {
                    None
                } else {
                    Some(a.call_method0("encode")?.call_method0("split")?)
                }
            } else if let Ok(b) = a.cast::<PyBytes>() {
                b.as_bytes()
                    .contains(&b' ')
                    .then(|| a.call_method0("split"))
                    .transpose()?
            } else {
                None
            };
            if let Some(words) = split {
                for w in words.try_iter()? {
                    out.push(w?.cast::<PyBytes>()?.as_bytes().to_vec());
                }
                continue;
            }
        }
        out.push(arg_bytes(py, &a)?.into_owned());
    }
    Ok(out)
}

#[pymethods]
impl NativeClient {
    /// The commands whose native methods build redis-py's value themselves.
    #[staticmethod]
    fn _native_commands() -> Vec<String> {
        table::native_client_commands()
            .map(|(n, _)| n.to_ascii_uppercase())
            .collect()
    }

    /// Run a pipeline's command stack (``[(args, options), ...]``) in one store call and
    /// return one result per command (redis-py's value, or the exception of a failed
    /// command); ``None`` when this client has no native path (the caller runs it).
    fn _pipeline_run(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        stack: &Bound<'_, PyAny>,
        atomic: bool,
    ) -> PyResult<Option<Py<PyList>>> {
        let Some(f) = slf.get().fast(slf)? else {
            return Ok(None);
        };
        let mut cmds = Vec::new();
        let mut how = Vec::new();
        for item in stack.try_iter()? {
            let item = item?;
            let args = item.get_item(0)?.cast_into::<PyTuple>()?;
            let options = item.get_item(1)?.cast_into::<PyDict>()?;
            let t = tokens(py, &args)?;
            let name = args.get_item(0)?;
            how.push(conv_for(&name, &t, &options));
            cmds.push(t);
        }
        let core = f.store.get().core();
        let (db, wire) = (f.db, f.wire);
        // Transactions with WATCH take the Python path (`Store.execute_many(watch=)`).
        let replies = guarded(py, || {
            let replies = core.execute_batch(db, wire, &cmds, atomic, None);
            // Under fsync="always": durable before any reply is returned.
            core.settle().map(|()| replies)
        })?
        .map_err(|e| cmd_err(py, &e))?
        .expect("a batch without a watch always runs");
        let out = PyList::empty(py);
        for (r, conv) in replies.iter().zip(how) {
            // A failed command's slot holds its exception.
            match r {
                Reply::Error(e) => out.append(cmd_error(py, e)?)?,
                r => out.append(convert(slf, py, r, f, conv)?)?,
            }
        }
        Ok(Some(out.unbind()))
    }
}

/// Base class of `xstreams.Pipeline` whose `xadd` queues the common call (a non-empty
/// dict, no option) from Rust: the same `(("XADD", name, "*", field, value, ...), {})`
/// stack entry the Python method queues through `Pipeline.execute_command`, without the
/// Python frame and argument list; `xack` and `xdel` likewise queue
/// `(("XACK", name, group, *ids), {})` and `(("XDEL", name, *ids), {})`. Any other call, a pipeline running commands at once
/// (watching, before MULTI) and a subclass with its own `execute_command` take the Python
/// method.
#[pyclass(
    module = "xstreams._xstreams",
    name = "_NativePipeline",
    subclass,
    frozen
)]
pub struct NativePipeline;

/// Does `slf` queue an XADD as `Pipeline.execute_command` would, with nothing else run?
fn queues_directly(slf: &Bound<'_, NativePipeline>) -> PyResult<bool> {
    let py = slf.py();
    let base = &super::registered(py)?.pipeline_execute;
    let own = slf.get_type().getattr(intern!(py, "execute_command"))?;
    if !own.is(base.bind(py)) {
        return Ok(false);
    }
    // `execute_command` runs a command at once while watching, outside MULTI.
    Ok(!slf.getattr(intern!(py, "watching"))?.is_truthy()?
        || slf
            .getattr(intern!(py, "explicit_transaction"))?
            .is_truthy()?)
}

#[pymethods]
impl NativePipeline {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        NativePipeline
    }

    /// Queue an XADD (redis-py's ``xadd``); returns the pipeline. Only ``name`` and
    /// ``fields`` are taken here: a call with anything more is the Python method's.
    #[pyo3(signature = (name, fields, *args, **kwargs))]
    fn xadd(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        fields: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let dict = fields.cast_exact::<PyDict>().ok().filter(|d| !d.is_empty());
        let plain = args.is_empty() && kwargs.is_none_or(|k| k.is_empty());
        if let (true, Some(dict)) = (plain, dict) {
            if queues_directly(slf)? {
                let mut argv = Vec::with_capacity(3 + 2 * dict.len());
                argv.push(intern!(py, "XADD").clone().into_any());
                argv.push(name.clone());
                argv.push(intern!(py, "*").clone().into_any());
                for (k, v) in dict.iter() {
                    argv.push(k);
                    argv.push(v);
                }
                return queue(slf, argv);
            }
        }
        let mut all = vec![slf.clone().into_any(), name.clone(), fields.clone()];
        all.extend(args.iter());
        fallback(py, "xadd")?
            .call(PyTuple::new(py, all)?, kwargs)
            .map(Bound::unbind)
    }

    /// Queue an XACK (redis-py's ``xack``); returns the pipeline.
    #[pyo3(signature = (name, groupname, *ids))]
    fn xack(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        groupname: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let cmd = intern!(slf.py(), "XACK");
        queue_or_call(slf, "xack", command_then_ids(cmd, &[name, groupname], ids))
    }

    /// Queue an XDEL (redis-py's ``xdel``); returns the pipeline.
    #[pyo3(signature = (name, *ids))]
    fn xdel(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        ids: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let cmd = intern!(slf.py(), "XDEL");
        queue_or_call(slf, "xdel", command_then_ids(cmd, &[name], ids))
    }
}

/// The arguments `cmd, *fixed, *ids` of a queued command, as redis-py's method passes them.
fn command_then_ids<'py>(
    cmd: &Bound<'py, PyString>,
    fixed: &[&Bound<'py, PyAny>],
    ids: &Bound<'py, PyTuple>,
) -> Vec<Bound<'py, PyAny>> {
    let mut argv = Vec::with_capacity(1 + fixed.len() + ids.len());
    argv.push(cmd.clone().into_any());
    argv.extend(fixed.iter().map(|a| (*a).clone()));
    argv.extend(ids.iter());
    argv
}

/// Append `(argv, {})` to the pipeline's command stack, as `pipeline_execute_command`
/// does; returns the pipeline.
fn queue(slf: &Bound<'_, NativePipeline>, argv: Vec<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
    let py = slf.py();
    let entry = (PyTuple::new(py, argv)?, PyDict::new(py));
    slf.getattr(intern!(py, "command_stack"))?
        .cast_into::<PyList>()?
        .append(entry)?;
    Ok(slf.clone().into_any().unbind())
}

/// Queue `argv` (the command the Python method `method` would pass to
/// `execute_command`, with no options) when the pipeline queues directly; otherwise
/// call the Python method with the same arguments.
fn queue_or_call(
    slf: &Bound<'_, NativePipeline>,
    method: &str,
    argv: Vec<Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    if queues_directly(slf)? {
        return queue(slf, argv);
    }
    let mut all = vec![slf.clone().into_any()];
    all.extend(argv.into_iter().skip(1));
    fallback(slf.py(), method)?
        .call1(PyTuple::new(slf.py(), all)?)
        .map(Bound::unbind)
}
