//! Python bindings of xstreams-core. Thin by design: argument and reply conversion
//! ([`convert`]), error mapping ([`errors`]) and GIL handling ([`store`]); every command's
//! behaviour lives in the core crate.
#![allow(unsafe_code)] // pyo3's macros expand to unsafe blocks

mod convert;
mod errors;
mod store;

use pyo3::prelude::*;

#[pymodule]
fn _xstreams(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<store::Store>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(store::command_names, m)?)?;
    m.add_function(wrap_pyfunction!(store::auto_iid, m)?)?;
    Ok(())
}
