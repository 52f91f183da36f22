//! DEL, EXISTS and TYPE: the keyspace commands the client's stream code uses most, run
//! as their arguments.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::{keys_call, words_then_args_methods, Conv, NativeClient};

words_then_args_methods! {
    /// The type of key ``name``.
    type_ as "type"(name) => [b"TYPE"], Conv::Raw;
}

#[pymethods]
impl NativeClient {
    /// Delete keys; return how many existed.
    #[pyo3(signature = (*names))]
    fn delete(slf: &Bound<'_, Self>, names: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let all: Vec<Bound<'_, PyAny>> = names.iter().collect();
        keys_call(slf, "delete", b"DEL", &all)
    }

    /// Number of ``names`` that exist.
    #[pyo3(signature = (*names))]
    fn exists(slf: &Bound<'_, Self>, names: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let all: Vec<Bound<'_, PyAny>> = names.iter().collect();
        keys_call(slf, "exists", b"EXISTS", &all)
    }
}
