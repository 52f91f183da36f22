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

pub mod disk;
pub mod inspect;
pub mod log;
pub mod snapshot;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::command::{self, Ctx, LogRecord};
use crate::config::Config;
use crate::db::{KeyEntry, Keyspace, Value, NUM_DBS};
pub use disk::Disk;
use disk::LogFile;
use log::{LogCursor, LogItem, ParseStop};

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
            read_only: false,
            compact_ratio: 1.0,
            compact_min_bytes: 64 * 1024 * 1024,
            config_overrides: Vec::new(),
            disk: Disk::default(),
        }
    }
}

/// What went wrong opening or writing a store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Io,
    /// Another process holds the writer lock.
    Locked {
        pid: Option<u32>,
    },
    /// A file is damaged or foreign.
    Corrupt {
        file: String,
        offset: u64,
    },
    /// No store exists at the path (read-only open).
    NotFound,
}

/// A persistence error with a message that names the file (and offset) involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistError {
    pub kind: ErrorKind,
    pub message: String,
}

impl std::fmt::Display for PersistError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PersistError {}

pub(crate) fn io_err(path: &Path, e: io::Error) -> PersistError {
    PersistError {
        kind: ErrorKind::Io,
        message: format!("{}: {e}", path.display()),
    }
}

pub(crate) fn corrupt(file: &Path, offset: u64, msg: &str) -> PersistError {
    PersistError {
        kind: ErrorKind::Corrupt {
            file: file.display().to_string(),
            offset,
        },
        message: format!("{} is damaged at offset {offset}: {msg}", file.display()),
    }
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

// ---------------------------------------------------------------- manifest

/// The live files of a store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<u64>,
    pub incr: Vec<u64>,
}

pub const MANIFEST: &str = "MANIFEST";
pub const LOCK: &str = "LOCK";

pub fn snapshot_name(seq: u64) -> String {
    format!("snapshot.{seq}.xss")
}

pub fn log_name(seq: u64) -> String {
    format!("log.{seq}.aof")
}

impl Manifest {
    fn encode(&self) -> String {
        let mut s = String::from("# xstreams store manifest\n");
        if let Some(b) = self.base {
            s.push_str(&format!("file {} seq {b} type b\n", snapshot_name(b)));
        }
        for i in &self.incr {
            s.push_str(&format!("file {} seq {i} type i\n", log_name(*i)));
        }
        s
    }

    /// Parse a MANIFEST's bytes; an error is (offset, message).
    pub fn parse(data: &[u8]) -> Result<Manifest, (u64, &'static str)> {
        let text = std::str::from_utf8(data).map_err(|_| (0, "manifest is not text"))?;
        let mut m = Manifest::default();
        let mut offset = 0u64;
        for line in text.split_inclusive('\n') {
            let l = line.trim_end();
            let here = offset;
            offset += line.len() as u64;
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let parts: Vec<&str> = l.split(' ').collect();
            let bad = (here, "unrecognised manifest line");
            if parts.len() != 6 || parts[0] != "file" || parts[2] != "seq" || parts[4] != "type" {
                return Err(bad);
            }
            let seq: u64 = parts[3].parse().map_err(|_| bad)?;
            match parts[5] {
                "b" if parts[1] == snapshot_name(seq) && m.base.is_none() => m.base = Some(seq),
                "i" if parts[1] == log_name(seq) => m.incr.push(seq),
                _ => return Err(bad),
            }
        }
        if m.incr.is_empty() {
            return Err((0, "manifest lists no log"));
        }
        Ok(m)
    }

    /// The files listed, snapshot first, then the logs in replay order.
    pub fn files(&self) -> Vec<String> {
        self.base
            .map(snapshot_name)
            .into_iter()
            .chain(self.incr.iter().map(|&i| log_name(i)))
            .collect()
    }
}

// ---------------------------------------------------------------- journal

/// The writer side of a durable store: appends each command's log records.
pub struct Journal {
    dir: PathBuf,
    disk: Disk,
    file: LogFile,
    log_seq: u64,
    manifest: Manifest,
    cursor: LogCursor,
    buf: Vec<u8>,
    /// The records of an open atomic block (see [`Journal::begin_block`]).
    block: Option<Vec<u8>>,
    pub fsync: Fsync,
    /// Bytes in the live logs.
    pub log_bytes: u64,
    /// Bytes of the live snapshot.
    pub base_bytes: u64,
    /// Set after a failed write: further writes are refused (Redis's MISCONF).
    pub failed: Option<String>,
    /// A compaction is in progress.
    pub compacting: bool,
    /// An automatic compaction was requested and has not started yet.
    pub scheduled: bool,
    /// Written since the last fsync.
    pub unsynced: bool,
    pub compact_ratio: f64,
    pub compact_min_bytes: u64,
    _lock: File,
}

fn config_lines(cfg: &Config) -> Vec<u8> {
    let mut out = Vec::new();
    for n in crate::config::data_names() {
        log::encode_config(&mut out, n, &cfg.get(n).unwrap_or_default());
    }
    out
}

impl Journal {
    /// Append the records of one command.
    pub fn append(&mut self, db: usize, now: i64, records: &[LogRecord]) -> io::Result<()> {
        if let Some(block) = self.block.as_mut() {
            log::encode_records_in(block, &mut self.cursor, db, now, records, false);
            return Ok(());
        }
        self.buf.clear();
        log::encode_records(&mut self.buf, &mut self.cursor, db, now, records);
        self.write_buf()
    }

    /// Append a settings change.
    pub fn append_config(&mut self, name: &str, value: &str) -> io::Result<()> {
        if let Some(block) = self.block.as_mut() {
            log::encode_config(block, name, value);
            return Ok(());
        }
        self.buf.clear();
        log::encode_config(&mut self.buf, name, value);
        self.write_buf()
    }

    /// Start an atomic block: the records appended until [`Journal::end_block`] are
    /// written then, in one MULTI/EXEC block (as redis-server writes a transaction to its
    /// AOF), so a crash leaves all of them in the log or none (replay drops a block cut
    /// by the end of the log). A block already open stays the one block.
    pub fn begin_block(&mut self) {
        if self.block.is_none() {
            self.block = Some(Vec::new());
        }
    }

    /// Write the open atomic block (nothing if it is empty or none is open).
    pub fn end_block(&mut self) -> io::Result<()> {
        let Some(block) = self.block.take() else {
            return Ok(());
        };
        if block.is_empty() {
            return Ok(());
        }
        self.buf.clear();
        log::encode_command(&mut self.buf, &[b"MULTI".to_vec()]);
        self.buf.extend_from_slice(&block);
        log::encode_command(&mut self.buf, &[b"EXEC".to_vec()]);
        self.write_buf()
    }

    fn write_buf(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.file.write_all(&self.buf)?;
        self.log_bytes += self.buf.len() as u64;
        if self.fsync == Fsync::Always {
            self.file.sync_data()?;
        } else {
            self.unsynced = true;
        }
        Ok(())
    }

    /// fsync the current log.
    pub fn sync(&mut self) -> io::Result<()> {
        if self.unsynced {
            self.file.sync_data()?;
            self.unsynced = false;
        }
        Ok(())
    }

    /// A handle on the current log for fsync outside the store lock.
    pub fn sync_handle(&self) -> io::Result<LogFile> {
        self.file.try_clone()
    }

    /// Should a compaction start now?
    pub fn wants_compaction(&self) -> bool {
        !self.compacting
            && !self.scheduled
            && self.failed.is_none()
            && self.log_bytes > self.compact_min_bytes
            && self.log_bytes as f64 > self.compact_ratio * self.base_bytes as f64
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file layer the store's files are written through.
    pub fn disk(&self) -> &Disk {
        &self.disk
    }

    /// Compaction, step 1 (under the store lock): start a new log and list it in the
    /// manifest after the current files. Returns the new sequence number.
    pub fn begin_compaction(&mut self, cfg: &Config) -> io::Result<u64> {
        self.file.sync_data()?;
        self.unsynced = false;
        let seq = self.log_seq + 1;
        let path = self.dir.join(log_name(seq));
        self.scheduled = false;
        let mut f = self.disk.open_log(&path)?;
        let lines = config_lines(cfg);
        f.write_all(&lines)?;
        f.sync_data()?;
        let mut m = self.manifest.clone();
        m.incr.push(seq);
        self.disk
            .write_atomic(&self.dir, MANIFEST, m.encode().as_bytes())?;
        self.manifest = m;
        self.file = f;
        self.log_seq = seq;
        self.cursor = LogCursor::default();
        self.log_bytes += lines.len() as u64;
        self.compacting = true;
        Ok(seq)
    }

    /// Compaction, step 3 (under the store lock, after the snapshot `seq` is durable):
    /// switch the manifest to it and return the files no longer needed.
    pub fn finish_compaction(&mut self, seq: u64, snapshot_bytes: u64) -> io::Result<Vec<PathBuf>> {
        // Whatever happens, this compaction is over (a failed one leaves the previous,
        // still valid, MANIFEST in place and can be retried).
        self.compacting = false;
        let mut old = Vec::new();
        if let Some(b) = self.manifest.base {
            old.push(self.dir.join(snapshot_name(b)));
        }
        let mut m = Manifest {
            base: Some(seq),
            incr: Vec::new(),
        };
        for &i in &self.manifest.incr {
            if i >= seq {
                m.incr.push(i);
            } else {
                old.push(self.dir.join(log_name(i)));
            }
        }
        self.disk
            .write_atomic(&self.dir, MANIFEST, m.encode().as_bytes())?;
        self.manifest = m;
        self.base_bytes = snapshot_bytes;
        self.log_bytes = self.file.size().unwrap_or(0);
        Ok(old)
    }

    /// fsync (on close; the log is written unbuffered).
    pub fn close(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
}

/// Write a snapshot of `ks` as `snapshot.<seq>.xss` in `dir` on the real file system
/// (see [`Disk::write_snapshot`]). Returns its size.
pub fn write_snapshot(dir: &Path, seq: u64, ks: &Keyspace, created_ms: i64) -> io::Result<u64> {
    Disk::default().write_snapshot(dir, seq, ks, created_ms)
}

// ---------------------------------------------------------------- open / load

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
            let pid = s.trim().parse::<u32>().ok();
            let who = pid
                .map(|p| format!("process {p}"))
                .unwrap_or_else(|| "another process".into());
            Err(PersistError {
                kind: ErrorKind::Locked { pid },
                message: format!("the store at {} is locked by {who}", dir.display()),
            })
        }
        Err(fs::TryLockError::Error(e)) => Err(io_err(&path, e)),
    }
}

/// Apply a replayed consumer-times record.
fn apply_consumer_times(
    ks: &mut Keyspace,
    db: usize,
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    seen: i64,
    active: i64,
) -> Result<(), String> {
    let Some(KeyEntry {
        value: Value::Stream(s),
        ..
    }) = ks.dbs[db].get_mut(key)
    else {
        return Err("consumer times for a missing stream".into());
    };
    let g = s
        .groups
        .lookup(group)
        .ok_or("consumer times for a missing group")?;
    let cg = s.groups.get_mut(g);
    let c = match cg.consumer_idx(consumer) {
        Some(c) => c,
        None => cg.create_consumer(consumer, seen).expect("absent"),
    };
    let c = cg.consumer_mut(c);
    c.seen_time = seen;
    c.active_time = active;
    Ok(())
}

fn stream_mut<'a>(
    ks: &'a mut Keyspace,
    db: usize,
    key: &[u8],
) -> Result<&'a mut crate::stream::Stream, String> {
    match ks.dbs[db].get_mut(key) {
        Some(KeyEntry {
            value: Value::Stream(s),
            ..
        }) => Ok(s),
        _ => Err("annotation for a missing stream".into()),
    }
}

/// Apply one log item (anything but MULTI/EXEC) to `ks`.
fn apply_item(
    ks: &mut Keyspace,
    db: &mut usize,
    now: &mut i64,
    item: LogItem,
) -> Result<bool, String> {
    match item {
        LogItem::Time(t) => {
            *now = t;
            ks.last_now = ks.last_now.max(t);
        }
        LogItem::Config(n, v) => ks.config.set(&n, &v)?,
        LogItem::ConsumerTimes {
            key,
            group,
            consumer,
            seen,
            active,
        } => apply_consumer_times(ks, *db, &key, &group, &consumer, seen, active)?,
        LogItem::EntriesRead { key, group, value } => {
            let s = stream_mut(ks, *db, &key)?;
            let g = s
                .groups
                .lookup(&group)
                .ok_or("entries-read for a missing group")?;
            s.groups.get_mut(g).entries_read = value;
        }
        LogItem::EmptyProducer { key, pid } => {
            let _ = stream_mut(ks, *db, &key)?.idmp.ensure_producer(&pid);
        }
        LogItem::PelToTail { key, group, id } => {
            let s = stream_mut(ks, *db, &key)?;
            let g = s
                .groups
                .lookup(&group)
                .ok_or("pending annotation for a missing group")?;
            let cg = s.groups.get_mut(g);
            let p = cg
                .pel_idx(&id)
                .ok_or("pending annotation for an entry not pending")?;
            cg.move_to_tail(p);
        }
        LogItem::Other => {}
        LogItem::Command(argv) => {
            if argv[0].eq_ignore_ascii_case(b"SELECT") && argv.len() == 2 {
                *db = std::str::from_utf8(&argv[1])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .filter(|&d: &usize| d < NUM_DBS)
                    .ok_or("bad SELECT")?;
                return Ok(false);
            }
            let refs: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
            ks.cron_idmp(*now);
            let mut ctx = Ctx::new(ks, *db, *now, 2);
            ctx.replaying = true;
            ctx.deny_blocking = true;
            if let Err(e) = command::try_execute(&mut ctx, &refs) {
                let name = String::from_utf8_lossy(&argv[0]).into_owned();
                return Err(format!("{name} failed on replay: {e}"));
            }
            return Ok(true);
        }
    }
    Ok(false)
}

/// Replay one log file into `ks`. Returns (commands replayed, cut tail if any); see
/// [`log::parse_replayable`] for what counts as a cut tail.
pub fn replay_log(
    ks: &mut Keyspace,
    path: &Path,
    data: &[u8],
) -> Result<(u64, Option<u64>), PersistError> {
    let (items, stop) = log::parse_replayable(data);
    let mut db = 0usize;
    let mut now = ks.clock.now_ms();
    let mut commands = 0u64;
    for (offset, item) in items {
        if apply_item(ks, &mut db, &mut now, item).map_err(|m| corrupt(path, offset as u64, &m))? {
            commands += 1;
        }
    }
    match stop {
        ParseStop::Corrupt { offset, message } => Err(corrupt(path, offset as u64, &message)),
        ParseStop::End => Ok((commands, None)),
        ParseStop::Truncated { offset } => Ok((commands, Some(offset as u64))),
    }
}

fn no_store(dir: &Path) -> PersistError {
    PersistError {
        kind: ErrorKind::NotFound,
        message: format!("no xstreams store at {} (no {MANIFEST})", dir.display()),
    }
}

fn read_manifest(dir: &Path) -> Result<(Vec<u8>, Manifest), PersistError> {
    let mpath = dir.join(MANIFEST);
    let data = match fs::read(&mpath) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(no_store(dir)),
        Err(e) => return Err(io_err(&mpath, e)),
    };
    let m = Manifest::parse(&data).map_err(|(off, msg)| corrupt(&mpath, off, msg))?;
    Ok((data, m))
}

fn load_once(
    dir: &Path,
    manifest: &Manifest,
    config: Config,
) -> Result<(Keyspace, LoadReport), PersistError> {
    let missing = |p: &Path| corrupt(p, 0, "listed in the MANIFEST but missing");
    let open = |p: &Path| match fs::File::open(p) {
        Ok(f) => Ok(f),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(missing(p)),
        Err(e) => Err(io_err(p, e)),
    };
    let read = |p: &Path, mut f: fs::File| {
        let mut data = Vec::new();
        io::Read::read_to_end(&mut f, &mut data).map_err(|e| io_err(p, e))?;
        Ok::<_, PersistError>(data)
    };
    // Open every listed file before reading any: a compaction that deletes them later
    // cannot take an open file away, so the window for a concurrent writer is this loop.
    let base = match manifest.base {
        Some(b) => {
            let p = dir.join(snapshot_name(b));
            let f = open(&p)?;
            Some((b, p, f))
        }
        None => None,
    };
    let mut logs = Vec::with_capacity(manifest.incr.len());
    for &seq in &manifest.incr {
        let p = dir.join(log_name(seq));
        let f = open(&p)?;
        logs.push((seq, p, f));
    }
    let mut report = LoadReport::default();
    let mut ks = match base {
        Some((b, p, f)) => {
            let data = read(&p, f)?;
            report.snapshot = Some(snapshot_name(b));
            snapshot::load(&data, config).map_err(|e| corrupt(&p, e.offset, &e.message))?
        }
        None => Keyspace::new(config),
    };
    let last = logs.len().saturating_sub(1);
    for (i, (seq, p, f)) in logs.into_iter().enumerate() {
        let data = read(&p, f)?;
        let (n, cut) = replay_log(&mut ks, &p, &data)?;
        report.commands += n;
        report.logs.push(log_name(seq));
        if let Some(off) = cut {
            if i != last {
                return Err(corrupt(
                    &p,
                    off,
                    "log ends inside a command but is not the last log",
                ));
            }
            report
                .truncated
                .push((log_name(seq), off, data.len() as u64 - off));
        }
    }
    Ok((ks, report))
}

/// Load the keyspace of the store in `dir` without opening it for writing (no lock, no
/// repair): for tools and read-only opens. A writer compacting meanwhile can delete the
/// files an older MANIFEST lists; the load then starts over with the new MANIFEST.
pub fn load(dir: &Path, config: Config) -> Result<(Keyspace, Manifest, LoadReport), PersistError> {
    let mut attempts = 0;
    loop {
        let (text, manifest) = read_manifest(dir)?;
        match load_once(dir, &manifest, config.clone()) {
            Ok((ks, report)) => return Ok((ks, manifest, report)),
            Err(e) => {
                attempts += 1;
                let changed = read_manifest(dir).map(|(t, _)| t != text).unwrap_or(false);
                if !changed || attempts >= 100 {
                    return Err(e);
                }
            }
        }
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
            cfg.set(n, v).map_err(|m| PersistError {
                kind: ErrorKind::Io,
                message: m,
            })?;
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
            fsync: opts.fsync,
            log_bytes: lines.len() as u64,
            base_bytes: 0,
            failed: None,
            compacting: false,
            scheduled: false,
            unsynced: false,
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
            ks.config.set(n, v).map_err(|m| PersistError {
                kind: ErrorKind::Io,
                message: m,
            })?;
            if !crate::config::LIMIT_NAMES.contains(&n.to_ascii_lowercase().as_str()) {
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
        fsync: opts.fsync,
        log_bytes,
        base_bytes,
        failed: None,
        compacting: false,
        scheduled: false,
        unsynced: false,
        compact_ratio: opts.compact_ratio,
        compact_min_bytes: opts.compact_min_bytes,
        _lock: lock,
    };
    Ok((ks, j, report))
}
