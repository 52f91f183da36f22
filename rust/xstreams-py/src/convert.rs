//! Conversions between Python values and command arguments / replies.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMemoryView, PyString,
};
use xstreams_core::Reply;

use crate::errors::{cmd_error, data_err};
use xstreams_core::error::data;

/// Encode one argument the way redis-py's `Encoder` does: bytes as is, str as UTF-8,
/// int and float as their decimal text; bool and other types are rejected.
pub fn arg_bytes<'a>(py: Python<'_>, obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    // Exact bytes and str first: a type pointer compared, where the subclass checks below
    // call into the interpreter for the type's flags (abi3).
    if let Ok(b) = obj.cast_exact::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(s) = obj.cast_exact::<PyString>() {
        return Ok(Cow::Borrowed(s.to_str()?.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        // The str's own UTF-8 (cached in the object), borrowed: no copy.
        return Ok(Cow::Borrowed(s.to_str()?.as_bytes()));
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(data_err(py, data::invalid_input("bool")));
    }
    // repr, as redis-py's Encoder (it differs from str only for int/float subclasses).
    if obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>() {
        return Ok(Cow::Owned(obj.repr()?.to_cow()?.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        let b = obj.call_method0("tobytes")?;
        return Ok(Cow::Owned(b.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    let tname = obj.get_type().name()?.to_string();
    Err(data_err(py, data::invalid_input(&tname)))
}

/// Convert a reply to Python. Nested errors become exception instances; a top-level
/// error is returned as `Err` by the caller.
pub fn reply_to_py(py: Python<'_>, r: &Reply, protocol: u8) -> PyResult<Py<PyAny>> {
    Ok(match r {
        Reply::Status(s) => PyBytes::new(py, s.as_bytes()).into_any().unbind(),
        Reply::Bulk(b) => PyBytes::new(py, b).into_any().unbind(),
        Reply::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Reply::Nil | Reply::NilArray => py.None(),
        Reply::Error(e) => cmd_error(py, e)?.unbind(),
        Reply::Array(items) => {
            let list = PyList::empty(py);
            for it in items {
                list.append(reply_to_py(py, it, protocol)?)?;
            }
            list.into_any().unbind()
        }
        Reply::Map(pairs) => {
            if protocol >= 3 {
                let d = PyDict::new(py);
                for (k, v) in pairs {
                    d.set_item(reply_to_py(py, k, protocol)?, reply_to_py(py, v, protocol)?)?;
                }
                d.into_any().unbind()
            } else {
                let list = PyList::empty(py);
                for (k, v) in pairs {
                    list.append(reply_to_py(py, k, protocol)?)?;
                    list.append(reply_to_py(py, v, protocol)?)?;
                }
                list.into_any().unbind()
            }
        }
    })
}
