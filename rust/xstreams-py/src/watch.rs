//! The `Watch` Python class: the keys a caller WATCHes on a store (see
//! `xstreams_core::keyspace::watch`), passed to `Store.execute_many(..., watch=...)`.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// Keys watched on a store, from ``Store.watch(*keys, db=0)``.
///
/// ``store.execute_many(commands, watch=w)`` then runs nothing and returns ``None`` (EXEC's
/// nil reply) if one of the keys was touched — written, deleted, expired, flushed,
/// swapped — since it was watched, exactly when redis-server would abort the EXEC.
/// The keys stay watched until :meth:`unwatch` or until the object is garbage collected.
#[pyclass(module = "xstreams._xstreams", name = "Watch", frozen)]
pub struct Watch {
    inner: Mutex<Option<xstreams_core::Watch>>,
    db: usize,
}

impl Watch {
    /// The core handle (`None` once unwatched). Never held while waiting for the GIL.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Option<xstreams_core::Watch>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn new(inner: xstreams_core::Watch, db: usize) -> Self {
        Watch {
            inner: Mutex::new(Some(inner)),
            db,
        }
    }
}

#[pymethods]
impl Watch {
    /// The watched keys (empty once unwatched).
    #[getter]
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let g = self.lock();
        let keys: Vec<Bound<'py, PyBytes>> = g
            .as_ref()
            .map(|w| w.keys().iter().map(|(_, k)| PyBytes::new(py, k)).collect())
            .unwrap_or_default();
        PyList::new(py, keys)
    }

    /// The database of the keys.
    #[getter]
    fn db(&self) -> usize {
        self.db
    }

    /// Was a watched key touched since it was watched? (A key that merely expired is
    /// noticed by the store only when the transaction runs.)
    #[getter]
    fn dirty(&self) -> bool {
        self.lock().as_ref().is_some_and(|w| w.is_dirty())
    }

    /// Stop watching (as UNWATCH). A transaction given an unwatched ``Watch`` runs
    /// unconditionally.
    fn unwatch(&self, py: Python<'_>) {
        py.detach(|| {
            let w = self.lock().take();
            drop(w);
        });
    }

    fn __repr__(&self) -> String {
        let g = self.lock();
        let n = g.as_ref().map_or(0, |w| w.keys().len());
        format!("<xstreams.Watch db={} keys={n}>", self.db)
    }
}
