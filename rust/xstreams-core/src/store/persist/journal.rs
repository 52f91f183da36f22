//! The writer side of a durable store ([`Journal`]): appends each command's log records
//! (single commands or atomic MULTI/EXEC blocks), fsyncs, and switches logs and the
//! MANIFEST during a compaction.
//!
//! A failed write or fsync stops the log taking writes (the store answers MISCONF), as
//! in redis-server. What a failed write did not put in the log, and what is logged after
//! it, waits in memory, in order; [`Journal::retry`] writes it (redis-server retries its
//! AOF buffer from its event loop) and the log takes writes again once that and, after a
//! failed fsync, an fsync succeed. A failure under `always` is for good, as
//! redis-server exits then: the store must be reopened.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::ahead::{WriteAhead, AHEAD_CHUNK};
use super::disk::{Disk, LogFile};
use super::log::{self, LogCursor};
use super::manifest::{log_name, snapshot_name, Manifest, MANIFEST};
use super::Fsync;
use crate::base::config::Config;
use crate::command::LogRecord;

/// The writer side of a durable store: appends each command's log records.
pub struct Journal {
    pub(super) dir: PathBuf,
    pub(super) disk: Disk,
    pub(super) file: LogFile,
    pub(super) log_seq: u64,
    pub(super) manifest: Manifest,
    pub(super) cursor: LogCursor,
    pub(super) buf: Vec<u8>,
    /// The records of an open block (see [`Journal::begin_block`]).
    pub(super) block: Option<Vec<u8>>,
    /// The open block is atomic (MULTI/EXEC), not a batch of commands written together
    /// (see [`Journal::begin_batch`]).
    pub(super) block_atomic: bool,
    /// The writer of an open block too large to build whole before writing it.
    pub(super) ahead: Option<WriteAhead>,
    /// No writer could be started for the open block (no file handle or thread): it is
    /// written whole at its end, and not tried again for each later record.
    pub(super) ahead_refused: bool,
    /// Buffers of earlier written-ahead blocks, kept for the next one.
    pub(super) spares: Vec<Vec<u8>>,
    pub fsync: Fsync,
    /// With `fsync` always: writes are not fsynced one by one under the store lock; the
    /// caller makes them durable before acknowledging them (`Store::sync_logged`, one
    /// fsync for the writes of every caller waiting then: a group commit).
    pub group_commit: bool,
    /// Bytes in the live logs.
    pub log_bytes: u64,
    /// Bytes of the live snapshot.
    pub base_bytes: u64,
    /// Set after a failed write or fsync: further writes are refused (Redis's MISCONF)
    /// until [`Journal::retry`] succeeds.
    pub failed: Option<String>,
    /// What waits for the log after a failure.
    pub(super) stalled: Stalled,
    /// A compaction is in progress.
    pub compacting: bool,
    /// An automatic compaction was requested and has not started yet.
    pub scheduled: bool,
    /// Writes completed since the store was opened...
    pub writes: u64,
    /// ...and how many of them are known durable (fsynced).
    pub durable: u64,
    pub compact_ratio: f64,
    pub compact_min_bytes: u64,
    pub(super) _lock: File,
}

/// The state of a log that stopped taking writes (see the module doc).
#[derive(Debug, Default)]
pub struct Stalled {
    /// Bytes of commands that ran but are not in the log: the rest of a failed write,
    /// then whatever was logged after it.
    bytes: Vec<u8>,
    /// The failure was an fsync's: the log takes writes again after a successful one.
    sync: bool,
    /// No retry: a failure under `always`, or a written-ahead block whose writer
    /// panicked (where it stopped is unknown).
    for_good: bool,
    /// When the last retry ran.
    tried: Option<Instant>,
}

/// How often a stopped log is tried again at most (redis-server's event loop does at
/// its `hz`, 10 a second by default).
pub const RETRY_EVERY: Duration = Duration::from_millis(100);

/// The largest write buffer a journal keeps between writes (an atomic block of a big
/// batch grows it; anything larger is freed after the write).
pub const KEEP_BUF: usize = 64 << 20;

/// Written-ahead buffers kept between blocks (see [`Journal::end_block`]).
const SPARES: usize = 3;

/// How an atomic block starts in the log.
const MULTI: &[u8] = b"*1\r\n$5\r\nMULTI\r\n";

pub(super) fn config_lines(cfg: &Config) -> Vec<u8> {
    let mut out = Vec::new();
    for n in crate::base::config::data_names() {
        log::encode_config(&mut out, n, &cfg.get(n).unwrap_or_default());
    }
    out
}

impl Journal {
    /// Append the records of one command.
    pub fn append(&mut self, db: usize, now: i64, records: &[LogRecord]) -> io::Result<()> {
        if let Some(block) = self.block.as_mut() {
            // MULTI blocks do not nest: in an atomic block a command's records are not
            // wrapped again; in a batch they are, as when written alone.
            let wrap = !self.block_atomic;
            log::encode_records_in(block, &mut self.cursor, db, now, records, wrap);
            self.write_ahead();
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
            self.write_ahead();
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
    ///
    /// The block is built in the write buffer itself (after its MULTI), whose capacity
    /// is kept from one write to the next up to [`KEEP_BUF`]: a sink appending a large
    /// batch per commit neither grows a new buffer page by page nor copies it again.
    pub fn begin_block(&mut self) {
        self.open_block(true);
    }

    /// Start a batch: the records appended until [`Journal::end_block`] are written
    /// together then (as redis-server writes its AOF buffer once per event-loop turn,
    /// whatever number of commands a pipeline ran in it), or ahead in chunks while the
    /// batch runs (see [`WriteAhead`]). Each command keeps its own record, so a crash
    /// keeps the whole commands written before it. A block already open stays the one
    /// block.
    pub fn begin_batch(&mut self) {
        self.open_block(false);
    }

    fn open_block(&mut self, atomic: bool) {
        if self.block.is_none() {
            let mut b = std::mem::take(&mut self.buf);
            b.clear();
            if atomic {
                b.extend_from_slice(MULTI);
            }
            self.block = Some(b);
            self.block_atomic = atomic;
            self.ahead_refused = false;
        }
    }

    /// Write the open block (nothing if it is empty or none is open).
    pub fn end_block(&mut self) -> io::Result<()> {
        let Some(mut block) = self.block.take() else {
            return Ok(());
        };
        if let Some(ahead) = self.ahead.take() {
            if self.block_atomic {
                log::encode_command(&mut block, &[b"EXEC"]);
            }
            let (res, mut bufs) = ahead.finish(block);
            bufs.retain(|b| b.capacity() <= 2 * AHEAD_CHUNK);
            self.buf = bufs.pop().unwrap_or_default();
            bufs.truncate(SPARES);
            self.spares = bufs;
            self.log_bytes += res.written;
            if let Some(e) = res.failed {
                self.stalled.bytes.extend_from_slice(&res.rest);
                self.fail(&e, false);
                // Where a panicked writer stopped is unknown: no retry may follow it.
                self.stalled.for_good |= res.lost;
                return self.after_failure(e);
            }
            return self.written();
        }
        if self.block_atomic {
            if block.len() > MULTI.len() {
                log::encode_command(&mut block, &[b"EXEC"]);
            } else {
                block.clear();
            }
        }
        self.buf = block;
        let r = self.write_buf();
        if self.buf.capacity() > KEEP_BUF {
            self.buf = Vec::new();
        }
        r
    }

    /// Once the open block holds [`AHEAD_CHUNK`] bytes, hand them to its writer thread
    /// (started with the first chunk) and go on in an empty buffer; see [`WriteAhead`].
    fn write_ahead(&mut self) {
        if self.ahead_refused || self.failed.is_some() {
            return;
        }
        let Some(block) = self.block.as_mut().filter(|b| b.len() >= AHEAD_CHUNK) else {
            return;
        };
        if self.ahead.is_none() {
            // Without a second handle or a thread the block is written whole at its end.
            let started = match self.file.try_clone() {
                Ok(file) => WriteAhead::start(file, std::mem::take(&mut self.spares)),
                Err(_) => Err(std::mem::take(&mut self.spares)),
            };
            match started {
                Ok(ahead) => self.ahead = Some(ahead),
                Err(spares) => {
                    self.spares = spares;
                    self.ahead_refused = true;
                    return;
                }
            }
        }
        if let Some(ahead) = self.ahead.as_mut() {
            let full = std::mem::take(block);
            *block = ahead.send(full);
        }
    }

    fn write_buf(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        if self.failed.is_some() {
            // Nothing goes to the log before what a failed write left out. This write did
            // not fail: a write command was refused before it ran, so what comes here
            // (a read's lazy-expiry DEL) waits behind the rest and its command is answered.
            self.stalled.bytes.extend_from_slice(&self.buf);
            return Ok(());
        }
        let mut done = 0;
        let res = self.file.append(&self.buf, &mut done);
        self.log_bytes += done as u64;
        if let Err(e) = res {
            self.stalled.bytes.extend_from_slice(&self.buf[done..]);
            self.fail(&e, false);
            return self.after_failure(e);
        }
        self.written()
    }

    /// What a write whose bytes wait in [`Stalled`] returns: under `always` the error
    /// (the command's reply becomes MISCONF: nothing is acknowledged before it is
    /// durable), else success, as redis-server answers the command whose AOF write
    /// failed and refuses only the writes after it.
    fn after_failure(&self, e: io::Error) -> io::Result<()> {
        if self.stalled.for_good {
            Err(e)
        } else {
            Ok(())
        }
    }

    /// After a write: fsync it (`always`, unless the caller commits in groups) or leave
    /// it waiting for one.
    fn written(&mut self) -> io::Result<()> {
        self.writes += 1;
        if self.fsync == Fsync::Always && !self.group_commit {
            self.sync()?;
        }
        Ok(())
    }

    /// Stop taking writes after `e` (a write's, or an fsync's if `sync`). Under
    /// `always` it is for good: redis-server exits there, as a reply may not leave
    /// before its write is durable.
    #[cold]
    #[inline(never)]
    pub fn fail(&mut self, e: &io::Error, sync: bool) {
        self.failed = Some(crate::error::io_reason(e));
        self.stalled.sync |= sync;
        self.stalled.for_good |= self.fsync == Fsync::Always;
        self.stalled.tried = Some(Instant::now());
    }

    /// Why the log takes no writes, if it still does not after a retry (see
    /// [`Journal::retry`]).
    pub fn stopped(&mut self) -> Option<&str> {
        if self.failed.is_some() {
            self.retry();
        }
        self.failed.as_deref()
    }

    /// After a failure, at most every [`RETRY_EVERY`]: write what waits and, after a
    /// failed fsync, fsync. Returns whether the log takes writes (again).
    #[cold]
    #[inline(never)]
    fn retry(&mut self) -> bool {
        if self.failed.is_none() {
            return true;
        }
        let now = Instant::now();
        let st = &self.stalled;
        if st.for_good
            || st
                .tried
                .is_some_and(|t| now.saturating_duration_since(t) < RETRY_EVERY)
        {
            return false;
        }
        let mut done = 0;
        let wrote = self.file.append(&self.stalled.bytes, &mut done);
        self.log_bytes += done as u64;
        self.stalled.bytes.drain(..done);
        if done > 0 {
            self.writes += 1;
        }
        if let Err(e) = wrote {
            self.fail(&e, false);
            return false;
        }
        if self.stalled.sync {
            if let Err(e) = self.file.sync_data() {
                self.fail(&e, true);
                return false;
            }
            self.durable = self.writes;
        }
        self.failed = None;
        self.stalled = Stalled::default();
        true
    }

    /// Is a completed write not yet fsynced?
    pub fn unsynced(&self) -> bool {
        self.writes > self.durable
    }

    /// fsync the current log (under the store lock). A failure stops the log.
    pub fn sync(&mut self) -> io::Result<()> {
        if self.unsynced() {
            if let Err(e) = self.file.sync_data() {
                self.fail(&e, true);
                return Err(e);
            }
            self.durable = self.writes;
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
        // Every write so far is durable before the log changes: an fsync of the new
        // log's handle would not cover them.
        self.file.sync_data()?;
        self.durable = self.writes;
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

    /// On close: a last try to write what waits (not a retry's interval apart), then
    /// fsync (the log is written unbuffered). What still waits is lost, as in a crash.
    pub fn close(&mut self) -> io::Result<()> {
        if self.failed.is_some() {
            self.stalled.tried = None;
            self.retry();
        }
        self.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn multi_is_the_logged_multi_command() {
        let mut out = Vec::new();
        super::log::encode_command(&mut out, &[b"MULTI"]);
        assert_eq!(out, super::MULTI);
    }
}
