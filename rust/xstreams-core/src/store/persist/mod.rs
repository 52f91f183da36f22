//! Durable stores: a directory holding a snapshot (base) plus command logs written since
//! it (increments), named by a manifest, as in Redis 7's multi-part AOF.
//!
//! ```text
//! MANIFEST            which files are live (written atomically: temp, fsync, rename)
//! snapshot.<n>.xss    the keyspace when log.<n>.aof was started (see docs/format.md)
//! log.<n>.aof         RESP commands + annotations since then (see [`log`])
//! LOCK                held (flock) by the one writer; contains its pid
//! ```
//!
//! Opening loads the snapshot and replays the logs. A log cut inside its last command (a
//! crash during a write) is loaded up to the last whole command and truncated there, and
//! the load report says so; anything else that does not parse is an error naming the
//! file and offset. Compaction writes a new snapshot from a copy of the keyspace taken
//! under the store lock, while commands continue into a fresh log.

mod ahead;
pub mod disk;
pub mod inspect;
mod journal;
mod load;
pub mod log;
mod manifest;
pub mod snapshot;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

use crate::base::config::Config;
use crate::keyspace::db::Keyspace;
pub use disk::Disk;
use journal::{config_lines, Stalled};
pub use journal::{Journal, RETRY_EVERY};
pub use load::{load, replay_log};
use log::LogCursor;
pub(crate) use manifest::no_store;
pub use manifest::{log_name, snapshot_name, Manifest, LOCK, MANIFEST};

/// When the log is flushed to disk (Redis's `appendfsync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsync {
    /// After every write command, before it returns.
    Always,
    /// Once per second, by a background thread.
    EverySec,
    /// Never explicitly (the operating system decides).
    No,
}

impl Fsync {
    /// Parse `always` / `everysec` / `no`.
    pub fn parse(s: &str) -> Option<Fsync> {
        match s.to_ascii_lowercase().as_str() {
            "always" => Some(Fsync::Always),
            "everysec" => Some(Fsync::EverySec),
            "no" => Some(Fsync::No),
            _ => None,
        }
    }

    /// The setting's name.
    pub fn name(&self) -> &'static str {
        match self {
            Fsync::Always => "always",
            Fsync::EverySec => "everysec",
            Fsync::No => "no",
        }
    }
}

/// How a durable store is opened.
#[derive(Clone, Debug)]
pub struct Options {
    pub fsync: Fsync,
    /// With `fsync` always: commit in groups (see `Store::sync_logged`); the caller
    /// must call it before acknowledging a write. A server with many clients sets it.
    pub group_commit: bool,
    /// Open without taking the writer lock; write commands are refused.
    pub read_only: bool,
    /// Compact when the logs exceed `compact_ratio` times the snapshot size...
    pub compact_ratio: f64,
    /// ...and at least this many bytes (Redis: `auto-aof-rewrite-min-size`, 64 MiB).
    pub compact_min_bytes: u64,
    /// Settings to apply after loading (the stored ones are kept otherwise).
    pub config_overrides: Vec<(String, String)>,
    /// The file layer (the real file system; a simulated disk in crash tests).
    pub disk: Disk,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            fsync: Fsync::EverySec,
            group_commit: false,
            read_only: false,
            compact_ratio: 1.0,
            compact_min_bytes: 64 * 1024 * 1024,
            config_overrides: Vec::new(),
            disk: Disk::default(),
        }
    }
}

pub use crate::error::persist::{PersistError, StoreErrorKind as ErrorKind};

pub(crate) fn io_err(path: &Path, e: io::Error) -> PersistError {
    PersistError::io(path, e)
}

pub(crate) fn corrupt(file: &Path, offset: u64, msg: &str) -> PersistError {
    PersistError::corrupt(file, offset, msg)
}

/// What loading found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// The snapshot loaded, if any.
    pub snapshot: Option<String>,
    /// Logs replayed.
    pub logs: Vec<String>,
    /// Commands replayed.
    pub commands: u64,
    /// Logs whose incomplete tail was dropped: (file, offset of the cut, bytes dropped).
    pub truncated: Vec<(String, u64, u64)>,
}

/// Write a snapshot of `ks` as `snapshot.<seq>.xss` in `dir` on the real file system
/// (see [`Disk::write_snapshot`]). Returns its size.
pub fn write_snapshot(dir: &Path, seq: u64, ks: &Keyspace, created_ms: i64) -> io::Result<u64> {
    Disk::default().write_snapshot(dir, seq, ks, created_ms)
}

fn take_lock(dir: &Path) -> Result<File, PersistError> {
    let path = dir.join(LOCK);
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| io_err(&path, e))?;
    match f.try_lock() {
        Ok(()) => {
            f.set_len(0).map_err(|e| io_err(&path, e))?;
            let _ = f.write_all(format!("{}\n", std::process::id()).as_bytes());
            let _ = f.sync_all();
            Ok(f)
        }
        Err(fs::TryLockError::WouldBlock) => {
            let mut s = String::new();
            let _ = f.read_to_string(&mut s);
            Err(PersistError::locked(dir, s.trim().parse::<u32>().ok()))
        }
        Err(fs::TryLockError::Error(e)) => Err(io_err(&path, e)),
    }
}

/// Remove files of ours that the manifest does not list (left by a crash during a
/// compaction, or by a compaction whose cleanup was interrupted). Unknown files are left.
fn remove_leftovers(dir: &Path, m: &Manifest) {
    let mut keep: Vec<String> = m.incr.iter().map(|&i| log_name(i)).collect();
    if let Some(b) = m.base {
        keep.push(snapshot_name(b));
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = name.ends_with(".tmp")
            || (name.starts_with("snapshot.") && name.ends_with(".xss"))
            || (name.starts_with("log.") && name.ends_with(".aof"));
        if ours && !keep.contains(&name) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Open (creating if needed) the store in `dir` for writing: take the lock, load, drop a
/// cut tail, and return the keyspace with its journal.
pub fn open(
    dir: &Path,
    config: Config,
    opts: &Options,
) -> Result<(Keyspace, Journal, LoadReport), PersistError> {
    fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let lock = take_lock(dir)?;
    let fresh = !dir.join(MANIFEST).exists();
    if fresh {
        let mut cfg = config.clone();
        for (n, v) in &opts.config_overrides {
            cfg.set(n, v)?;
        }
        let seq = 1;
        let lp = dir.join(log_name(seq));
        let mut f = File::create(&lp).map_err(|e| io_err(&lp, e))?;
        let lines = config_lines(&cfg);
        f.write_all(&lines).map_err(|e| io_err(&lp, e))?;
        f.sync_all().map_err(|e| io_err(&lp, e))?;
        let m = Manifest {
            base: None,
            incr: vec![seq],
        };
        opts.disk
            .write_atomic(dir, MANIFEST, m.encode().as_bytes())
            .map_err(|e| io_err(dir, e))?;
        let file = opts.disk.open_log(&lp).map_err(|e| io_err(&lp, e))?;
        let ks = Keyspace::new(cfg);
        let j = Journal {
            dir: dir.to_path_buf(),
            disk: opts.disk.clone(),
            file,
            log_seq: seq,
            manifest: m,
            cursor: LogCursor::default(),
            buf: Vec::new(),
            block: None,
            block_atomic: false,
            ahead: None,
            ahead_refused: false,
            spares: Vec::new(),
            fsync: opts.fsync,
            group_commit: opts.group_commit,
            log_bytes: lines.len() as u64,
            base_bytes: 0,
            failed: None,
            stalled: Stalled::default(),
            compacting: false,
            scheduled: false,
            writes: 0,
            durable: 0,
            compact_ratio: opts.compact_ratio,
            compact_min_bytes: opts.compact_min_bytes,
            _lock: lock,
        };
        return Ok((
            ks,
            j,
            LoadReport {
                logs: vec![log_name(seq)],
                ..LoadReport::default()
            },
        ));
    }
    let (mut ks, manifest, report) = load(dir, config)?;
    remove_leftovers(dir, &manifest);
    let seq = *manifest.incr.last().expect("manifest has a log");
    let lp = dir.join(log_name(seq));
    if let Some((_, off, _)) = report.truncated.last() {
        let f = OpenOptions::new()
            .write(true)
            .open(&lp)
            .map_err(|e| io_err(&lp, e))?;
        f.set_len(*off).map_err(|e| io_err(&lp, e))?;
        f.sync_all().map_err(|e| io_err(&lp, e))?;
    }
    let mut file = opts.disk.open_log(&lp).map_err(|e| io_err(&lp, e))?;
    let mut log_bytes = 0;
    for s in &manifest.incr {
        log_bytes += fs::metadata(dir.join(log_name(*s)))
            .map(|m| m.len())
            .unwrap_or(0);
    }
    let base_bytes = manifest
        .base
        .and_then(|b| fs::metadata(dir.join(snapshot_name(b))).ok())
        .map(|m| m.len())
        .unwrap_or(0);
    // The next record starts a new time/database context.
    let mut tail = Vec::new();
    for (n, v) in &opts.config_overrides {
        if ks.config.get(n).as_deref() != Some(v.as_str()) {
            ks.config.set(n, v)?;
            if !crate::base::config::LIMIT_NAMES.contains(&n.to_ascii_lowercase().as_str()) {
                log::encode_config(&mut tail, n, &ks.config.get(n).unwrap_or_default());
            }
        }
    }
    if !tail.is_empty() {
        file.write_all(&tail).map_err(|e| io_err(&lp, e))?;
        file.sync_data().map_err(|e| io_err(&lp, e))?;
        log_bytes += tail.len() as u64;
    }
    // Replay ended in some database; a SELECT is written with the next record.
    let cursor = LogCursor {
        time: None,
        db: usize::MAX,
    };
    let j = Journal {
        dir: dir.to_path_buf(),
        disk: opts.disk.clone(),
        file,
        log_seq: seq,
        manifest,
        cursor,
        buf: Vec::new(),
        block: None,
        block_atomic: false,
        ahead: None,
        ahead_refused: false,
        spares: Vec::new(),
        fsync: opts.fsync,
        group_commit: opts.group_commit,
        log_bytes,
        base_bytes,
        failed: None,
        stalled: Stalled::default(),
        compacting: false,
        scheduled: false,
        writes: 0,
        durable: 0,
        compact_ratio: opts.compact_ratio,
        compact_min_bytes: opts.compact_min_bytes,
        _lock: lock,
    };
    Ok((ks, j, report))
}
