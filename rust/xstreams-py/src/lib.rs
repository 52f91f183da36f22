//! Python bindings of xstreams-core. Thin by design: argument and reply conversion
//! ([`convert`]), error mapping ([`errors`]) and GIL handling ([`store`]); every command's
//! behaviour lives in the core crate.
#![allow(unsafe_code)] // pyo3's macros expand to unsafe blocks

mod arrow;
mod blocked;
mod client;
mod convert;
mod dedup;
mod dedup_output;
mod deduper;
mod errors;
mod inspect;
mod prefetch;
mod rdb;
mod replay;
mod server;
mod store;
mod watch;

use pyo3::prelude::*;

/// The engine allocates many small buffers per command (replies, entries): mimalloc makes
/// them cheaper than the system allocator (docs/spark-speed.md, "Why the code is as it
/// is"). Only Rust allocations use it; Python objects do not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _xstreams(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<store::Store>()?;
    m.add_class::<watch::Watch>()?;
    m.add_class::<blocked::Blocked>()?;
    m.add_class::<dedup_output::DedupOutput>()?;
    m.add_class::<deduper::Dedup>()?;
    m.add_class::<client::NativeClient>()?;
    m.add_class::<client::NativePipeline>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("_DATA_ERRORS", errors::data_errors(m.py())?)?;
    m.add_function(wrap_pyfunction!(client::_register_client, m)?)?;
    m.add_function(wrap_pyfunction!(store::command_names, m)?)?;
    m.add_function(wrap_pyfunction!(store::auto_iid, m)?)?;
    m.add_function(wrap_pyfunction!(server::serve, m)?)?;
    m.add_function(wrap_pyfunction!(inspect::inspect_store, m)?)?;
    m.add_function(wrap_pyfunction!(inspect::key_internals, m)?)?;
    m.add_function(wrap_pyfunction!(rdb::rdb_import, m)?)?;
    m.add_function(wrap_pyfunction!(rdb::rdb_export, m)?)?;
    m.add_class::<rdb::ExportProgress>()?;
    m.add_function(wrap_pyfunction!(replay::_replay_plan, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::_reply_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::_xadd_wire, m)?)?;
    m.add_function(wrap_pyfunction!(replay::_replay_read, m)?)?;
    m.add_class::<replay::ReplayStore>()?;
    Ok(())
}
