//! Arrow batch paths of `Store`: `xadd_batch` (Arrow columns -> one XADD per row, run by
//! `xstreams_core::Store::xadd_rows`), `xrange_arrow` / `xrevrange_arrow` / `xread_arrow`
//! (entries -> an Arrow record batch). Arrow data crosses the boundary through the Arrow C
//! data interface (pyo3-arrow); no Python object is created per row.
//!
//! Column values become XADD arguments as Python clients would send them: strings as
//! UTF-8, binary as is, integers in decimal, floats as Python's `repr` (float32 as the
//! shortest repr of the float32 value), booleans as `1`/`0`, other types through Arrow's
//! cast to string (dates and timestamps in ISO 8601, decimals in plain notation). A null
//! value leaves the field out of that row; a null ID means `*`.

mod columns;
mod entries;
mod handoff;
mod read;
mod wire;
mod xadd;

pub(crate) use columns::{prepare, times_ms, values_across, Src};
pub use entries::{entries_to_py_list, schema_arg, EntriesShape};
pub(crate) use handoff::batch_to_pyarrow;
pub use wire::{_reply_arrow, _xadd_wire};
pub(crate) use xadd::{xadd_arrow, xadd_reply, XaddOpts};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::convert::arg_bytes;

fn type_err(msg: impl Into<String>) -> PyErr {
    PyTypeError::new_err(msg.into())
}

/// A `ValueError` with `msg`: the Arrow paths' (and the Spark dedup kernel's) bad input.
pub(crate) fn value_err(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

fn id_arg(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    Ok(arg_bytes(py, v)?.into_owned())
}
