//! Handing a record batch to pyarrow through the Arrow C data interface, with the schema
//! imported once.
//!
//! The capsule protocol (`pyarrow.record_batch(obj)`, what pyo3-arrow's `into_pyarrow`
//! calls) exports and re-imports the schema with every batch; for the small batches of a
//! read (`xrange_arrow ... COUNT 100`) parsing the schema cost as much as the data. The
//! readers produce a handful of schemas, so the pyarrow `Schema` of each is kept, and a
//! batch crosses as its struct array alone (`pyarrow.RecordBatch._import_from_c` with
//! that `Schema`, the import pyarrow's own `record_batch` performs after parsing).

use std::sync::Mutex;

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::{intern, Py, PyAny};
use pyo3_arrow::PySchema;

/// Schemas kept (user schemas of `schema=` can vary; the oldest goes first).
const KEPT: usize = 32;

/// The pyarrow `Schema` objects of the schemas handed over, most recent last.
static SCHEMAS: Mutex<Vec<(SchemaRef, Py<PyAny>)>> = Mutex::new(Vec::new());
/// `pyarrow.RecordBatch`.
static RECORD_BATCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The pyarrow `Schema` of `schema`, imported on first use.
fn pyarrow_schema(py: Python<'_>, schema: &SchemaRef) -> PyResult<Py<PyAny>> {
    {
        let kept = SCHEMAS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, s)) = kept.iter().find(|(k, _)| k == schema) {
            return Ok(s.clone_ref(py));
        }
    }
    let s = PySchema::new(schema.clone()).into_pyarrow(py)?.unbind();
    let mut kept = SCHEMAS.lock().unwrap_or_else(|e| e.into_inner());
    if kept.len() >= KEPT {
        kept.remove(0);
    }
    kept.push((schema.clone(), s.clone_ref(py)));
    Ok(s)
}

/// `batch` as a `pyarrow.RecordBatch`.
pub fn batch_to_pyarrow(py: Python<'_>, batch: RecordBatch) -> PyResult<Bound<'_, PyAny>> {
    let schema = pyarrow_schema(py, batch.schema_ref())?;
    let class = RECORD_BATCH.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("pyarrow")?.getattr("RecordBatch")?.unbind())
    })?;
    let data = StructArray::from(batch).into_data();
    // pyarrow moves the array out of this struct (its release callback with it); if the
    // import fails before that, dropping the struct releases the data.
    let mut array = Box::new(FFI_ArrowArray::new(&data));
    let addr = std::ptr::addr_of_mut!(*array) as usize;
    let out = class
        .bind(py)
        .call_method1(intern!(py, "_import_from_c"), (addr, schema));
    drop(array);
    out
}
