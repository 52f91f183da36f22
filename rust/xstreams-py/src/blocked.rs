//! `_Blocked`: a command waiting for data, for a caller that must not block its thread
//! while it waits (the asyncio client). `Store._start` runs the command; when it blocks,
//! the caller gets this handle and waits in short slices on a worker thread
//! (`wait(seconds)`, the GIL released), or gives up (`cancel()`), which takes the call out
//! of the store's line at once when no slice is running, or when the running slice ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use xstreams_core::store::{BlockedCall, Step};
use xstreams_core::Reply;

use crate::convert::reply_to_py;
use crate::errors::cmd_err;
use crate::store::{collect_args, guarded, settled, Store};

/// A blocked command of a `Store` (see the module documentation).
#[pyclass(module = "xstreams._xstreams", name = "_Blocked", frozen)]
pub struct Blocked {
    store: Py<Store>,
    protocol: u8,
    /// The call while it is in line and no slice waits on it.
    call: Mutex<Option<BlockedCall>>,
    cancelled: AtomicBool,
}

impl Blocked {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<BlockedCall>> {
        self.call.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The reply as `Store.execute_command` returns it (an error reply raised).
fn reply_obj(py: Python<'_>, r: &Reply, protocol: u8) -> PyResult<Py<PyAny>> {
    match r {
        Reply::Error(e) => Err(cmd_err(py, e)),
        r => reply_to_py(py, r, protocol),
    }
}

/// Start a command on `store`: its reply, or a [`Blocked`] handle when it waits.
pub(crate) fn start(
    py: Python<'_>,
    store: &Bound<'_, Store>,
    args: &[&[u8]],
    db: usize,
    protocol: u8,
) -> PyResult<Py<PyAny>> {
    let core = store.get().core();
    match guarded(py, || settled(core, core.start(db, protocol, args)))? {
        Step::Done(r) => reply_obj(py, &r, protocol),
        Step::Blocked(call) => Ok(Py::new(
            py,
            Blocked {
                store: store.clone().unbind(),
                protocol,
                call: Mutex::new(Some(call)),
                cancelled: AtomicBool::new(false),
            },
        )?
        .into_any()),
    }
}

#[pymethods]
impl Blocked {
    /// Wait at most ``seconds`` (the GIL released): ``(True, reply)`` once the command
    /// was served or timed out (its reply as ``Store.execute_command`` returns it),
    /// ``(False, None)`` while it still waits, ``(True, None)`` once cancelled.
    fn wait(&self, py: Python<'_>, seconds: f64) -> PyResult<(bool, Py<PyAny>)> {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(PyValueError::new_err(
                "seconds must be a finite number >= 0",
            ));
        }
        let Some(call) = self.slot().take() else {
            return Ok((true, py.None()));
        };
        let store = self.store.get().core();
        let slice = Duration::from_secs_f64(seconds);
        match guarded(py, move || settled(store, store.wait(call, Some(slice))))? {
            Step::Done(r) => Ok((true, reply_obj(py, &r, self.protocol)?)),
            Step::Blocked(call) => {
                // Checked and put back under the lock `cancel` sets the flag under.
                let mut slot = self.slot();
                if self.cancelled.load(Ordering::Acquire) {
                    drop(slot);
                    store.cancel(call);
                    return Ok((true, py.None()));
                }
                *slot = Some(call);
                Ok((false, py.None()))
            }
        }
    }

    /// Leave the store's line: nothing is served to this call from now on (when a slice
    /// is waiting, as soon as that slice ends).
    fn cancel(&self) {
        let taken = {
            let mut slot = self.slot();
            self.cancelled.store(true, Ordering::Release);
            slot.take()
        };
        if let Some(call) = taken {
            self.store.get().core().cancel(call);
        }
    }

    /// Whether ``cancel()`` was called.
    #[getter]
    fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
}

/// `Store._start` lives beside the handle it returns, so `store.rs` needs nothing of this
/// module.
#[pymethods]
impl Store {
    /// Start one command without waiting for it (the asyncio client's blocking reads):
    /// its reply as :meth:`execute_command` returns it, or a ``_Blocked`` handle when it
    /// waits for data.
    #[pyo3(signature = (*args, db=0, protocol=2))]
    fn _start(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        db: usize,
        protocol: u8,
    ) -> PyResult<Py<PyAny>> {
        Self::check_protocol(protocol)?;
        let py = slf.py();
        let items: Vec<Bound<'_, PyAny>> = args.iter().collect();
        let owned = collect_args(py, items.iter())?;
        let refs: Vec<&[u8]> = owned.iter().map(|c| c.as_ref()).collect();
        start(py, slf, &refs, db, protocol)
    }
}
