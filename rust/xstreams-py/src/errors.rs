//! Map core errors to the Python exception classes of `xstreams.exceptions`.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyAny, PyDict};
use xstreams_core::error::{data, CmdError, ErrorKind};

static INTERNAL_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static DATA_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static INVARIANT_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn exceptions_attr(
    py: Python<'_>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    name: &str,
) -> PyResult<Py<PyAny>> {
    if let Some(v) = cell.get(py) {
        return Ok(v.clone_ref(py));
    }
    let v = py.import("xstreams.exceptions")?.getattr(name)?.unbind();
    let _ = cell.set(py, v.clone_ref(py));
    Ok(v)
}

static FROM_KIND: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The `xstreams.exceptions` class of each family of core error (by name; a family with
/// no class of its own is a plain `ResponseError`).
fn class_of(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::WrongType => "WrongTypeError",
        ErrorKind::NoGroup => "NoGroupError",
        ErrorKind::BusyGroup => "BusyGroupError",
        _ => "ResponseError",
    }
}

/// The exception instance for a core error (a command's, or one inside a reply value):
/// its class from the error's kind, its code and line from the error itself (nothing
/// parsed from the line).
pub fn cmd_error<'py>(py: Python<'py>, e: &CmdError) -> PyResult<Bound<'py, PyAny>> {
    let f = exceptions_attr(py, &FROM_KIND, "_from_kind")?;
    f.bind(py).call1((class_of(e.kind()), e.code(), e.line()))
}

/// A `PyErr` raising the exception for a core error (see [`cmd_error`]).
pub fn cmd_err(py: Python<'_>, e: &CmdError) -> PyErr {
    match cmd_error(py, e) {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// `xstreams.exceptions.InternalError(msg)` (a caught Rust panic).
pub fn internal_err(py: Python<'_>, msg: String) -> PyErr {
    match exceptions_attr(py, &INTERNAL_ERROR, "InternalError")
        .and_then(|c| c.bind(py).call1((msg,)))
    {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// `xstreams.exceptions.DataError(msg)` (an argument Python cannot send).
pub fn data_err(py: Python<'_>, msg: String) -> PyErr {
    match exceptions_attr(py, &DATA_ERROR, "DataError").and_then(|c| c.bind(py).call1((msg,))) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// `xstreams.exceptions.InvariantError(msg)` (`Store.validate()` found a violation).
pub fn invariant_err(py: Python<'_>, msg: &str) -> PyErr {
    match exceptions_attr(py, &INVARIANT_ERROR, "InvariantError")
        .and_then(|c| c.bind(py).call1((msg,)))
    {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// The exception for a refused setting: ``ValueError`` for an unknown name or a bad
/// value, the persistence error's class when a durable store could not log it.
pub fn config_err(py: Python<'_>, e: xstreams_core::error::ConfigError) -> PyErr {
    match e {
        xstreams_core::error::ConfigError::Persist(p) => persist_err(py, &p),
        other => pyo3::exceptions::PyValueError::new_err(other.to_string()),
    }
}

/// The exception for a persistence error: `StoreLockedError`, `CorruptStoreError` or
/// `StoreError`.
pub fn persist_err(py: Python<'_>, e: &xstreams_core::store::persist::PersistError) -> PyErr {
    use xstreams_core::store::persist::ErrorKind;
    let name = match e.kind() {
        ErrorKind::Locked { .. } => "StoreLockedError",
        ErrorKind::Corrupt { .. } => "CorruptStoreError",
        _ => "StoreError",
    };
    match py
        .import("xstreams.exceptions")
        .and_then(|m| m.getattr(name))
        .and_then(|c| c.call1((e.message(),)))
    {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// The `DataError` texts that both the extension and the Python client raise, by name
/// (`xstreams._xstreams._DATA_ERRORS`): the Python methods read them here, so each text
/// has one copy, in the core's `error::data`.
pub fn data_errors(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, text) in [
        ("XREAD_STREAMS_EMPTY", data::XREAD_STREAMS_EMPTY),
        ("MAXLEN_OR_MINID", data::MAXLEN_OR_MINID),
        ("REF_POLICY", data::REF_POLICY),
        ("MAXLEN_NEGATIVE", data::MAXLEN_NEGATIVE),
    ] {
        d.set_item(name, text)?;
    }
    Ok(d)
}
