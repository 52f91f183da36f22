//! `rdb_import(store, path)` and `rdb_export(store, path)`: RDB files of redis-server into
//! and out of a store (`xstreams import` / `xstreams export`). The file format is the
//! core's `rdb::file`; conversion only.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use xstreams_core::command::RestoreArgs;
use xstreams_core::interop::export::verify_file;
use xstreams_core::keyspace::rdb::file;

use xstreams_core::error::CmdError;

use crate::errors::{cmd_err, internal_err};
use crate::store::{guarded, Store};

enum ImportFailure {
    Io(String),
    Malformed(String),
    Key(CmdError),
}

/// Restore every string and stream of the RDB file at ``path`` into ``store`` (through
/// RESTORE ... ABSTTL REPLACE, so a durable store logs them): returns ``{"keys": n,
/// "skipped": {type: count}, "functions_skipped": n, "version": v}``. Raises
/// ``ValueError`` for a damaged file, ``ResponseError`` for a value RESTORE refuses.
#[pyfunction]
pub fn rdb_import<'py>(
    py: Python<'py>,
    store: &Bound<'py, Store>,
    path: PathBuf,
) -> PyResult<Bound<'py, PyDict>> {
    let core = store.get().core();
    let res = guarded(py, || -> Result<(u64, file::FileSummary), ImportFailure> {
        let buf = std::fs::read(&path).map_err(|e| ImportFailure::Io(e.to_string()))?;
        let mut failure = None;
        let mut keys = 0u64;
        let summary = file::read_file(&buf, |k| {
            if k.db as usize >= xstreams_core::keyspace::db::NUM_DBS {
                return Err(xstreams_core::keyspace::rdb::codec::Malformed::new(
                    format!("database {} out of range", k.db),
                ));
            }
            let payload = file::payload_of(k.ty, k.body);
            let args = RestoreArgs {
                key: &k.key,
                ttl: k.expire_ms.unwrap_or(0).max(0),
                payload: &payload,
                replace: true,
                absttl: true,
            };
            match core.restore(k.db as usize, &args) {
                Err(e) => {
                    failure = Some(e.in_rdb_key(&k.key, u64::from(k.db)));
                    Err(xstreams_core::keyspace::rdb::codec::Malformed::new(
                        "stopped",
                    ))
                }
                Ok(()) => {
                    keys += 1;
                    Ok(())
                }
            }
        });
        match (summary, failure) {
            (_, Some(f)) => Err(ImportFailure::Key(f)),
            (Err(m), None) => Err(ImportFailure::Malformed(m.0)),
            // Under fsync="always": durable before the call returns.
            (Ok(s), None) => core
                .settle()
                .map(|()| (keys, s))
                .map_err(ImportFailure::Key),
        }
    })?;
    let (keys, summary) = match res {
        Ok(v) => v,
        Err(ImportFailure::Io(e)) => return Err(PyOSError::new_err(e)),
        Err(ImportFailure::Malformed(m)) => {
            return Err(PyValueError::new_err(format!("damaged RDB file: {m}")))
        }
        Err(ImportFailure::Key(e)) => return Err(cmd_err(py, &e)),
    };
    let d = PyDict::new(py);
    d.set_item("keys", keys)?;
    d.set_item("version", summary.version)?;
    d.set_item("skipped", summary.skipped.into_iter().collect::<Vec<_>>())?;
    d.set_item("functions_skipped", summary.functions_skipped)?;
    Ok(d)
}

/// The keys an ``rdb_export`` has written so far (read from any thread while it runs).
#[pyclass(frozen)]
#[derive(Default)]
pub struct ExportProgress(Arc<AtomicU64>);

#[pymethods]
impl ExportProgress {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Keys written so far.
    #[getter]
    fn keys(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why an export wrote nothing.
enum ExportFailure {
    Io(String),
    /// The file written did not read back as the store (a bug of the writer).
    Check(String),
}

/// Write every key of ``store`` (expired keys left out) as an RDB file redis-server 8.8
/// loads, at ``path``: written to a temporary file, read back from the disk with the
/// project's own loader and checked against the store, then renamed. Returns the bytes
/// written. Raises ``OSError`` when the file cannot be written and ``InternalError`` when
/// it does not read back as the store (the temporary file is removed; nothing is left
/// at ``path``). ``progress`` (an ``ExportProgress``) counts the keys written so far, for
/// another thread to show while the export runs.
#[pyfunction]
#[pyo3(signature = (store, path, progress=None))]
pub fn rdb_export(
    py: Python<'_>,
    store: &Bound<'_, Store>,
    path: PathBuf,
    progress: Option<&Bound<'_, ExportProgress>>,
) -> PyResult<usize> {
    let written = progress.map_or_else(|| Arc::new(AtomicU64::new(0)), |p| p.get().0.clone());
    let core = store.get().core();
    let res = guarded(py, || -> Result<usize, ExportFailure> {
        let io = |e: std::io::Error| ExportFailure::Io(e.to_string());
        let now = core.now_ms();
        let bytes = core.with_keyspace(|ks| file::write_file_counted(ks, now, &written));
        let tmp = path.with_extension("rdb.tmp");
        std::fs::write(&tmp, &bytes).map_err(io)?;
        let checked = std::fs::read(&tmp).map_err(io).and_then(|back| {
            core.with_keyspace(|ks| verify_file(&back, ks, now))
                .map_err(ExportFailure::Check)
        });
        if let Err(e) = checked {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        std::fs::rename(&tmp, &path).map_err(io)?;
        Ok(bytes.len())
    })?;
    res.map_err(|e| match e {
        ExportFailure::Io(m) => PyOSError::new_err(m),
        ExportFailure::Check(m) => internal_err(
            py,
            format!(
                "the RDB file written did not read back as the store ({m}); it was removed \
                 and {} was not written (a bug, please report it)",
                path.display()
            ),
        ),
    })
}
