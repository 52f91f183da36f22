//! The errors of durable stores (opening, loading, writing, compacting, the replay
//! reader), in the commands' style: a kind the callers branch on (the Python binding's
//! `StoreLockedError` / `CorruptStoreError` / `StoreError`) beside the message, which
//! names the file (and offset) involved. Every one is made by a constructor here.

use std::fmt;
use std::path::Path;

/// What went wrong opening or writing a store.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// The file system refused (or the store cannot do it: closed, not durable, a config
    /// the store cannot take).
    Io,
    /// Another process holds the writer lock.
    Locked { pid: Option<u32> },
    /// A file is damaged or foreign.
    Corrupt { file: String, offset: u64 },
    /// No store exists at the path (read-only open).
    NotFound,
    /// A compaction is already running.
    Busy,
}

/// A persistence error: its kind and a message naming the file (and offset) involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistError {
    kind: StoreErrorKind,
    message: String,
}

impl PersistError {
    /// What went wrong.
    pub fn kind(&self) -> &StoreErrorKind {
        &self.kind
    }
    /// The message (names the file and offset involved).
    pub fn message(&self) -> &str {
        &self.message
    }

    fn of(kind: StoreErrorKind, message: String) -> Self {
        PersistError { kind, message }
    }

    /// An I/O error on `path`.
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        PersistError::of(StoreErrorKind::Io, format!("{}: {e}", path.display()))
    }
    /// An I/O failure described by `message` (a refused log write, a failed fsync, a
    /// snapshot that could not be written, a configuration the store refused).
    pub fn io_failure(message: impl Into<String>) -> Self {
        PersistError::of(StoreErrorKind::Io, message.into())
    }
    /// `file` is damaged at `offset`: `msg` says how.
    pub fn corrupt(file: &Path, offset: u64, msg: &str) -> Self {
        PersistError::of(
            StoreErrorKind::Corrupt {
                file: file.display().to_string(),
                offset,
            },
            format!("{} is damaged at offset {offset}: {msg}", file.display()),
        )
    }
    /// Another process (`pid` when its lock file says) holds the store's writer lock.
    pub fn locked(dir: &Path, pid: Option<u32>) -> Self {
        let who = pid
            .map(|p| format!("process {p}"))
            .unwrap_or_else(|| "another process".into());
        PersistError::of(
            StoreErrorKind::Locked { pid },
            format!("the store at {} is locked by {who}", dir.display()),
        )
    }
    /// No store at `dir`: it has no `manifest` file.
    pub fn no_store(dir: &Path, manifest: &str) -> Self {
        PersistError::of(
            StoreErrorKind::NotFound,
            format!("no xstreams store at {} (no {manifest})", dir.display()),
        )
    }
    /// The replay reader's plan is older than the store's last compaction.
    pub fn compacted_since_planned(dir: &Path) -> Self {
        PersistError::of(
            StoreErrorKind::Io,
            format!(
                "the store at {} was compacted after the read was planned: plan it again",
                dir.display()
            ),
        )
    }
    /// Compaction of an in-memory store.
    pub fn not_durable() -> Self {
        PersistError::io_failure("not a durable store")
    }
    /// A compaction while another runs.
    pub fn compaction_running() -> Self {
        PersistError::of(
            StoreErrorKind::Busy,
            "a compaction is already running".into(),
        )
    }
    /// A compaction of a closed store.
    pub fn store_closed() -> Self {
        PersistError::io_failure("the store was closed")
    }
}

impl fmt::Display for PersistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PersistError {}
