//! The `Store` Python class: converts arguments, releases the GIL while the core runs
//! (including while a blocking read waits), converts replies, and turns a Rust panic into
//! `xstreams.exceptions.InternalError` instead of letting it abort or escape.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use xstreams_core::store::persist::{Fsync, LoadReport, Options};
use xstreams_core::store::Step;
use xstreams_core::{Config, Reply};

use crate::convert::{arg_bytes, reply_to_py};
use crate::errors::{cmd_err, internal_err, persist_err};
use crate::watch::Watch;

/// How long a blocked read sleeps between checks for Python signals (Ctrl-C).
pub(crate) const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// The `InternalError` message of a caught panic.
pub(crate) fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    format!(
        "internal error: {}",
        xstreams_core::error::panic_message(&*p)
    )
}

/// Run `f` without the GIL, converting a panic into `InternalError`.
pub(crate) fn guarded<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    match py.detach(|| catch_unwind(AssertUnwindSafe(f))) {
        Ok(v) => Ok(v),
        Err(p) => Err(internal_err(py, panic_text(p))),
    }
}

/// `step` once the writes logged before its reply are durable, under `fsync="always"`
/// ([`xstreams_core::Store::settle`]); its reply becomes the MISCONF error if they
/// cannot be. Run while the GIL is released: the fsync may wait for other threads'.
pub(crate) fn settled(store: &xstreams_core::Store, step: Step) -> Step {
    match step {
        Step::Done(r) => match store.settle() {
            Ok(()) => Step::Done(r),
            Err(e) => Step::Done(e.into()),
        },
        blocked => blocked,
    }
}

/// An in-process store of Redis streams.
///
/// ``Store()`` is an in-memory store. ``execute_command(*args)`` runs one command and
/// returns the raw reply as redis-py returns it on a RESP2 connection (bytes, int, list,
/// None); a command error raises ``xstreams.exceptions.ResponseError``.
#[pyclass(module = "xstreams._xstreams", name = "Store", frozen)]
pub struct Store {
    inner: xstreams_core::Store,
    path: Option<PathBuf>,
    read_only: bool,
    report: Option<LoadReport>,
}

pub(crate) fn collect_args<'a>(
    py: Python<'_>,
    items: impl Iterator<Item = &'a Bound<'a, PyAny>>,
) -> PyResult<Vec<Cow<'a, [u8]>>> {
    items.map(|a| arg_bytes(py, a)).collect()
}

impl Store {
    /// The core store (for the Arrow methods in `arrow.rs`).
    pub(crate) fn core(&self) -> &xstreams_core::Store {
        &self.inner
    }

    pub(crate) fn run(
        &self,
        py: Python<'_>,
        args: &[&[u8]],
        db: usize,
        protocol: u8,
    ) -> PyResult<Reply> {
        let store = &self.inner;
        let mut step = guarded(py, || settled(store, store.start(db, protocol, args)))?;
        loop {
            match step {
                Step::Done(r) => return Ok(r),
                Step::Blocked(call) => {
                    if let Err(e) = py.check_signals() {
                        store.cancel(call);
                        return Err(e);
                    }
                    step = guarded(py, move || {
                        settled(store, store.wait(call, Some(SIGNAL_CHECK)))
                    })?;
                }
            }
        }
    }

    pub(crate) fn check_protocol(protocol: u8) -> PyResult<()> {
        if protocol == 2 || protocol == 3 {
            Ok(())
        } else {
            Err(PyValueError::new_err("protocol must be 2 or 3"))
        }
    }
}

#[pymethods]
impl Store {
    /// Open a store. ``path`` (a directory) is reserved for durable stores; ``config``
    /// maps Redis configuration names (``stream-node-max-entries``,
    /// ``stream-node-max-bytes``, ``stream-idmp-duration``, ``stream-idmp-maxsize``) to
    /// values; ``clock_ms`` pins the store clock (for deterministic tests).
    #[new]
    #[pyo3(signature = (path=None, *, config=None, clock_ms=None, fsync="everysec", read_only=false, compact_ratio=1.0, compact_min_bytes=67108864))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: Option<PathBuf>,
        config: Option<&Bound<'_, PyDict>>,
        clock_ms: Option<i64>,
        fsync: &str,
        read_only: bool,
        compact_ratio: f64,
        compact_min_bytes: u64,
    ) -> PyResult<Self> {
        let mut overrides = Vec::new();
        if let Some(d) = config {
            for (k, v) in d.iter() {
                let name: String = k.extract()?;
                let value = v.str()?.to_string();
                // Validate now, so a bad setting is a ValueError whatever the store kind.
                Config::default()
                    .set(&name, &value)
                    .map_err(|e| crate::errors::config_err(py, e))?;
                overrides.push((name, value));
            }
        }
        let fsync = Fsync::parse(fsync)
            .ok_or_else(|| PyValueError::new_err("fsync must be 'always', 'everysec' or 'no'"))?;
        if compact_ratio.is_nan() || compact_ratio <= 0.0 {
            return Err(PyValueError::new_err("compact_ratio must be > 0"));
        }
        let (inner, report) = match &path {
            None => {
                let mut cfg = Config::default();
                for (n, v) in &overrides {
                    cfg.set(n, v)
                        .map_err(|e| crate::errors::config_err(py, e))?;
                }
                (xstreams_core::Store::new(cfg), None)
            }
            Some(p) => {
                let opts = Options {
                    fsync,
                    read_only,
                    compact_ratio,
                    compact_min_bytes,
                    config_overrides: overrides,
                    // Under `always`, each call fsyncs after the store lock is released
                    // (`settle`): threads writing at once share one fsync, as
                    // redis-server's clients share one per event-loop turn.
                    group_commit: fsync == Fsync::Always,
                    ..Options::default()
                };
                let p = p.clone();
                let res = guarded(py, move || {
                    xstreams_core::Store::open(&p, Config::default(), opts)
                })?;
                let (store, report) = res.map_err(|e| persist_err(py, &e))?;
                for (file, offset, dropped) in &report.truncated {
                    let cat = py
                        .import("xstreams.exceptions")?
                        .getattr("StoreRepairedWarning")?;
                    let msg = if read_only {
                        format!(
                            "{file}: the log ends inside a command (a crash cut the last write); loaded up to offset {offset} and ignored the {dropped} bytes after it (read-only: the file was left as it is)"
                        )
                    } else {
                        format!(
                            "{file}: the log ended inside a command (a crash cut the last write); loaded up to offset {offset} and dropped the {dropped} bytes after it"
                        )
                    };
                    let msg = std::ffi::CString::new(msg)
                        .map_err(|e| PyValueError::new_err(e.to_string()))?;
                    PyErr::warn(py, &cat, &msg, 1)?;
                }
                (store, Some(report))
            }
        };
        if clock_ms.is_some() {
            inner.set_clock(clock_ms);
        }
        Ok(Store {
            inner,
            path,
            read_only,
            report,
        })
    }

    /// The store's directory (``None`` for an in-memory store).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    /// Opened read-only?
    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    /// What opening a durable store found: ``{"snapshot": name or None, "logs": [...],
    /// "commands": n, "truncated": [(file, offset, bytes_dropped), ...]}``; ``None`` for an
    /// in-memory store.
    #[getter]
    fn load_report<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(r) = &self.report else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("snapshot", r.snapshot.clone())?;
        d.set_item("logs", r.logs.clone())?;
        d.set_item("commands", r.commands)?;
        d.set_item("truncated", r.truncated.clone())?;
        Ok(Some(d))
    }

    /// Write a snapshot of the current state now and drop the logs it covers (commands
    /// keep running meanwhile); if a compaction is already running (an automatic one),
    /// wait for it to end first. Raises ``StoreError`` for an in-memory store.
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        let store = &self.inner;
        guarded(py, || store.compact_waiting())?.map_err(|e| persist_err(py, &e))
    }

    /// Write everything logged so far to disk now (fsync), whatever the store's
    /// ``fsync`` setting; nothing for an in-memory store. Raises ``StoreError`` if the
    /// fsync fails (later writes then fail too).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let store = &self.inner;
        guarded(py, || store.flush())?.map_err(|e| persist_err(py, &e))
    }

    /// The log of a durable store: ``{"written": n, "durable": m, "failed": None or
    /// why}``, the writes logged since the store was opened, how many of them are
    /// fsynced, and why the log stopped taking writes if it did (a failed write or
    /// fsync); ``None`` for an in-memory, read-only or closed store. Under
    /// ``fsync="always"`` every call returns once its writes (and every other thread's
    /// before them) are durable; under ``everysec`` up to a second of writes wait.
    fn log_writes<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(w) = self.inner.log_writes() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("written", w.written)?;
        d.set_item("durable", w.durable)?;
        d.set_item("failed", w.failed)?;
        Ok(Some(d))
    }

    /// Run one command: ``store.execute_command("XADD", "s", "*", "f", "v")``.
    #[pyo3(signature = (*args, db=0, protocol=2))]
    fn execute_command(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        db: usize,
        protocol: u8,
    ) -> PyResult<Py<PyAny>> {
        Self::check_protocol(protocol)?;
        let items: Vec<Bound<'_, PyAny>> = args.iter().collect();
        let owned = collect_args(py, items.iter())?;
        let refs: Vec<&[u8]> = owned.iter().map(|c| c.as_ref()).collect();
        let reply = self.run(py, &refs, db, protocol)?;
        match &reply {
            Reply::Error(e) => Err(cmd_err(py, e)),
            r => reply_to_py(py, r, protocol),
        }
    }

    /// Run several commands in order, atomically when ``atomic`` (no other command runs in
    /// between; blocking reads do not wait; all run at one command time, as the commands
    /// of an EXEC do). Returns one result per command; a failed
    /// command's slot holds its exception instead of raising. Without ``atomic`` it is a
    /// pipeline: each command runs as if sent alone, and a durable store writes their
    /// log records together, up to 256 commands a write.
    ///
    /// ``watch`` (a :class:`Watch`, or a sequence of them, from :meth:`watch`) makes the
    /// atomic batch conditional, as WATCH makes MULTI/EXEC: if a watched key was touched
    /// since it was watched, nothing runs and the result is ``None``.
    #[pyo3(signature = (commands, db=0, atomic=true, protocol=2, watch=None))]
    fn execute_many(
        &self,
        py: Python<'_>,
        commands: &Bound<'_, PyAny>,
        db: usize,
        atomic: bool,
        protocol: u8,
        watch: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        Self::check_protocol(protocol)?;
        let watches: Vec<Py<Watch>> = match watch {
            None => Vec::new(),
            Some(w) if w.is_none() => Vec::new(),
            Some(w) => match w.cast::<Watch>() {
                Ok(one) => vec![one.clone().unbind()],
                Err(_) => w
                    .try_iter()
                    .map_err(|_| {
                        PyTypeError::new_err("watch must be a Watch or a sequence of them")
                    })?
                    .map(|x| {
                        x?.cast_into::<Watch>().map(|b| b.unbind()).map_err(|_| {
                            PyTypeError::new_err("watch must be a Watch or a sequence of them")
                        })
                    })
                    .collect::<PyResult<_>>()?,
            },
        };
        if !watches.is_empty() && !atomic {
            return Err(PyValueError::new_err(
                "watch needs atomic=True (a transaction)",
            ));
        }
        let mut cmds: Vec<Vec<Vec<u8>>> = Vec::new();
        for c in commands.try_iter()? {
            let c = c?;
            let mut one = Vec::new();
            for a in c.try_iter()? {
                let a = a?;
                one.push(arg_bytes(py, &a)?.into_owned());
            }
            cmds.push(one);
        }
        let store = &self.inner;
        let watches: Vec<&Watch> = watches.iter().map(|w| w.get()).collect();
        let replies = guarded(py, || {
            let guards: Vec<_> = watches.iter().map(|w| w.lock()).collect();
            let live: Vec<&xstreams_core::Watch> =
                guards.iter().filter_map(|g| g.as_ref()).collect();
            let replies = store.execute_batch_watching(db, protocol, &cmds, atomic, &live);
            drop(guards);
            store.settle().map(|()| replies)
        })?
        .map_err(|e| cmd_err(py, &e))?;
        let Some(replies) = replies else {
            return Ok(py.None());
        };
        let out = PyList::empty(py);
        for r in &replies {
            out.append(reply_to_py(py, r, protocol)?)?;
        }
        Ok(out.into_any().unbind())
    }

    /// Whether every reply waits for an fsync (``fsync="always"`` on a durable store).
    #[getter]
    fn _settles(&self) -> bool {
        self.inner.settles()
    }

    /// WATCH ``keys`` of database ``db``: pass the returned :class:`Watch` to
    /// :meth:`execute_many` to run a transaction only if none of them changed meanwhile.
    #[pyo3(signature = (*keys, db=0))]
    fn watch(&self, py: Python<'_>, keys: &Bound<'_, PyTuple>, db: usize) -> PyResult<Watch> {
        if keys.is_empty() {
            return Err(cmd_err(py, &xstreams_core::CmdError::arity("watch")));
        }
        let items: Vec<Bound<'_, PyAny>> = keys.iter().collect();
        let owned = collect_args(py, items.iter())?;
        let refs: Vec<&[u8]> = owned.iter().map(|c| c.as_ref()).collect();
        let store = &self.inner;
        let w = guarded(py, || store.watch(db, &refs))?.map_err(|e| cmd_err(py, &e))?;
        Ok(Watch::new(w, db))
    }

    /// Run one command and return its reply RESP-encoded, exactly as redis-server would
    /// send it (used by the differential tests).
    #[pyo3(signature = (args, db=0, protocol=2))]
    fn _execute_resp<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyAny>,
        db: usize,
        protocol: u8,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Self::check_protocol(protocol)?;
        let items: Vec<Bound<'_, PyAny>> = args.try_iter()?.collect::<PyResult<_>>()?;
        let owned = collect_args(py, items.iter())?;
        let refs: Vec<&[u8]> = owned.iter().map(|c| c.as_ref()).collect();
        let reply = self.run(py, &refs, db, protocol)?;
        Ok(PyBytes::new(py, &reply.to_resp(protocol)))
    }

    /// Pin the store clock to ``ms`` (Unix milliseconds), or follow the system clock again
    /// with ``None``.
    #[pyo3(signature = (ms))]
    fn set_clock_ms(&self, ms: Option<i64>) {
        self.inner.set_clock(ms);
    }

    /// Move the clock forward by ``delta`` milliseconds (pinning it).
    fn advance_clock_ms(&self, delta: i64) {
        self.inner.advance_clock(delta);
    }

    /// The store's current time in Unix milliseconds.
    fn now_ms(&self) -> i64 {
        self.inner.now_ms()
    }

    /// Value of a configuration setting, or ``None`` for an unknown name.
    fn config_get(&self, name: &str) -> Option<String> {
        self.inner.config_get(name)
    }

    /// Change a configuration setting (raises ``ValueError`` for a bad name or value, the
    /// store's ``StoreError`` when a durable store cannot log it).
    fn config_set(&self, py: Python<'_>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = value.str()?.to_string();
        self.inner
            .config_set(name, &v)
            .map_err(|e| crate::errors::config_err(py, e))
    }

    /// Check every internal invariant (raises ``xstreams.InvariantError`` with the first
    /// violation).
    fn validate(&self, py: Python<'_>) -> PyResult<()> {
        let store = &self.inner;
        match guarded(py, || store.validate())? {
            Ok(()) => Ok(()),
            Err(e) => Err(crate::errors::invariant_err(py, e.message())),
        }
    }

    /// Drop expired IDMP entries and expired keys now.
    fn sweep(&self, py: Python<'_>) -> PyResult<()> {
        let store = &self.inner;
        guarded(py, || {
            store.sweep();
            store.settle()
        })?
        .map_err(|e| cmd_err(py, &e))
    }

    /// Close the store: blocked readers wake with an error; later commands fail.
    fn close(&self) {
        self.inner.close();
    }

    /// Has the store been closed?
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, PyTuple>) {
        self.inner.close();
    }
}

/// Names of the commands the engine implements (lower case).
#[pyfunction]
pub fn command_names() -> Vec<&'static str> {
    xstreams_core::command::command_names().collect()
}

/// The IID that ``XADD ... IDMPAUTO`` computes for field/value pairs (16 bytes).
#[pyfunction]
pub fn auto_iid<'py>(py: Python<'py>, pairs: Vec<Vec<u8>>) -> Bound<'py, PyBytes> {
    let refs: Vec<&[u8]> = pairs.iter().map(|p| p.as_slice()).collect();
    PyBytes::new(py, &xstreams_core::structures::idmp::auto_iid(&refs))
}
