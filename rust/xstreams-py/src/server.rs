//! `xstreams serve` from Python: parse the command line with the server crate's parser,
//! start the RESP server, and wait for it with the GIL released. Python signal handlers
//! run between waits (every 100 ms): an exception they raise (KeyboardInterrupt on
//! Ctrl-C, or whatever the caller's SIGTERM handler raises) shuts the server down
//! gracefully — connections closed, the log flushed, the store closed — and is then
//! re-raised. SHUTDOWN from a client ends the call normally; a server that stopped by
//! itself (a failed fsync with `appendfsync always`) raises `OSError` with the reason.

use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use xstreams_server::cli::{self, Action};

/// How often the wait returns to Python to run signal handlers.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Run `xstreams serve` with the given command-line arguments (without `serve`) until
/// it is shut down. Returns the text to print for `--help` / `--version` (without
/// serving), or None after serving. `on_ready(addresses)` is called once listening.
#[pyfunction]
#[pyo3(signature = (argv, on_ready=None))]
pub fn serve(
    py: Python<'_>,
    argv: Vec<String>,
    on_ready: Option<Bound<'_, PyAny>>,
) -> PyResult<Option<String>> {
    let cfg = match cli::parse(&argv).map_err(PyValueError::new_err)? {
        Action::Help => return Ok(Some(cli::USAGE.to_string())),
        Action::Version => {
            return Ok(Some(format!(
                "xstreams serve v={} (redis_version {})\n",
                env!("CARGO_PKG_VERSION"),
                xstreams_server::REDIS_VERSION
            )))
        }
        Action::Serve(c) => *c,
    };
    let handle = py
        .detach(move || xstreams_server::start(cfg))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    if let Some(cb) = on_ready {
        let addrs: Vec<String> = handle.local_addrs().iter().map(|a| a.to_string()).collect();
        if let Err(e) = cb.call1((addrs,)) {
            handle.shutdown();
            py.detach(|| handle.join());
            return Err(e);
        }
    }
    loop {
        if py.detach(|| handle.wait_timeout(SIGNAL_CHECK)) {
            break;
        }
        if let Err(e) = py.check_signals() {
            handle.shutdown();
            py.detach(|| handle.join());
            return Err(e);
        }
    }
    match py.detach(|| handle.join()) {
        None => Ok(None),
        Some(why) => Err(PyOSError::new_err(why)),
    }
}
