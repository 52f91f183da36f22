//! The file layer under a durable store: how the journal appends to and syncs its log, and
//! how the MANIFEST and snapshots are written (temp file, fsync, rename, fsync of the
//! directory).
//!
//! In production every call goes straight to `std::fs` ([`LogFile::Real`], and a [`Disk`]
//! of size zero). With the `fault-injection` feature, tests can open a store on a
//! [`sim::SimDisk`] that counts every write and fsync, freezes the store at any of them
//! (that operation and every later one fail, as if the power went), and then simulates
//! the power loss: what was not synced is dropped or torn (see `tests/power_loss.rs` of
//! `xstreams-fuzz`). Without the feature the simulated variant does not exist, so the real
//! path is a plain `File` behind a one-variant enum.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::snapshot;
use crate::keyspace::db::Keyspace;

/// Where a store's files live: the real file system, or (tests) a simulated disk.
#[derive(Clone, Debug, Default)]
pub struct Disk {
    #[cfg(feature = "fault-injection")]
    pub sim: Option<std::sync::Arc<sim::SimDisk>>,
}

impl Disk {
    /// Open the log at `path` for appending.
    pub(crate) fn open_log(&self, path: &Path) -> io::Result<LogFile> {
        self.op()?;
        let f = OpenOptions::new().create(true).append(true).open(path)?;
        #[cfg(feature = "fault-injection")]
        if let Some(d) = &self.sim {
            return Ok(LogFile::Sim(d.track(path, f)?));
        }
        Ok(LogFile::Real(f))
    }

    /// One write or fsync outside the log (MANIFEST, snapshot): fails once frozen.
    #[inline]
    fn op(&self) -> io::Result<()> {
        #[cfg(feature = "fault-injection")]
        if let Some(d) = &self.sim {
            return d.op();
        }
        Ok(())
    }

    /// Write `data` as `dir/name` atomically: temp file, fsync, rename, fsync of `dir`.
    pub(crate) fn write_atomic(&self, dir: &Path, name: &str, data: &[u8]) -> io::Result<()> {
        self.op()?;
        let tmp = dir.join(format!("{name}.tmp"));
        {
            let mut f = File::create(&tmp)?;
            f.write_all(data)?;
            f.sync_all()?;
        }
        fs::rename(&tmp, dir.join(name))?;
        sync_dir(dir)
    }

    /// Write a snapshot of `ks` as `snapshot.<seq>.xss` in `dir` (temp file, fsync,
    /// rename, fsync of the directory). Returns its size.
    pub fn write_snapshot(
        &self,
        dir: &Path,
        seq: u64,
        ks: &Keyspace,
        created_ms: i64,
    ) -> io::Result<u64> {
        self.op()?;
        let name = super::snapshot_name(seq);
        let tmp = dir.join(format!("{name}.tmp"));
        let size = {
            let f = File::create(&tmp)?;
            #[cfg(feature = "fault-injection")]
            if let Some(d) = &self.sim {
                d.snapshot_started();
            }
            let mut w = BufWriter::with_capacity(1 << 20, f);
            let n = snapshot::write(ks, created_ms, &mut w)?;
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            n
        };
        self.op()?;
        fs::rename(&tmp, dir.join(&name))?;
        sync_dir(dir)?;
        Ok(size)
    }
}

/// ENOSPC ("No space left on device"; 28 on Linux, macOS and the BSDs).
fn no_space() -> io::Error {
    io::Error::from_raw_os_error(28)
}

pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The log file the journal appends to.
#[derive(Debug)]
pub enum LogFile {
    Real(File),
    #[cfg(feature = "fault-injection")]
    Sim(sim::SimFile),
}

impl LogFile {
    #[inline]
    pub fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            LogFile::Real(f) => f.write_all(buf),
            #[cfg(feature = "fault-injection")]
            LogFile::Sim(f) => f.write_all(buf),
        }
    }

    /// Write all of `buf`, counting in `written` the bytes that reached the file: after
    /// a failure (a full disk) a prefix of `buf` may have, and the rest is the caller's
    /// to write again. A failure after a short write is reported as ENOSPC, as
    /// redis-server reports a short AOF write.
    #[inline]
    pub fn append(&mut self, buf: &[u8], written: &mut usize) -> io::Result<()> {
        match self {
            LogFile::Real(f) => {
                let start = *written;
                while *written < buf.len() {
                    match f.write(&buf[*written..]) {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => *written += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) if *written > start => return Err(no_space()),
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            }
            #[cfg(feature = "fault-injection")]
            LogFile::Sim(f) => f.append(buf, written),
        }
    }

    #[inline]
    pub fn sync_data(&self) -> io::Result<()> {
        match self {
            LogFile::Real(f) => f.sync_data(),
            #[cfg(feature = "fault-injection")]
            LogFile::Sim(f) => f.sync_data(),
        }
    }

    /// A second handle on the same file (to fsync outside the store lock).
    pub fn try_clone(&self) -> io::Result<LogFile> {
        match self {
            LogFile::Real(f) => f.try_clone().map(LogFile::Real),
            #[cfg(feature = "fault-injection")]
            LogFile::Sim(f) => f.try_clone().map(LogFile::Sim),
        }
    }

    /// The file's length.
    pub fn size(&self) -> io::Result<u64> {
        match self {
            LogFile::Real(f) => f.metadata().map(|m| m.len()),
            #[cfg(feature = "fault-injection")]
            LogFile::Sim(f) => f.size(),
        }
    }
}

#[cfg(feature = "fault-injection")]
pub mod sim {
    //! A simulated disk for crash tests: counts operations, freezes at one of them, and
    //! applies a power loss to the files it tracked.

    use std::collections::HashMap;
    use std::fs::{File, OpenOptions};
    use std::io::{self, Write};
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    #[derive(Debug, Default)]
    struct Tracked {
        /// Bytes written through the simulated disk (the real file's length).
        len: u64,
        /// Bytes known durable: the length at the last fsync.
        synced: u64,
    }

    #[derive(Debug, Default)]
    struct State {
        ops: u64,
        syncs: u64,
        freeze_at: Option<u64>,
        frozen: bool,
        /// Second handles on a file are refused (a process out of file handles).
        refuse_clones: bool,
        /// Second handles asked for so far.
        clones: u64,
        /// The next snapshot writer panics after creating its temporary file.
        panic_in_snapshot: bool,
        /// The log writes stop after this many more bytes and fail (a disk that fills
        /// up), freezing the disk.
        short_write: Option<usize>,
        files: HashMap<PathBuf, Tracked>,
    }

    /// The simulated disk: shared by every file of one store.
    #[derive(Debug, Default)]
    pub struct SimDisk {
        state: Mutex<State>,
    }

    /// What a power loss leaves of one file's unsynced bytes.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Tear {
        /// Unsynced bytes kept (a prefix: appends reach the disk in order, the last one
        /// possibly in part).
        pub keep: u64,
        /// Zero bytes after them (the file's size was updated, its last block not).
        pub zeros: u64,
    }

    /// What a power loss did to one file.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Loss {
        pub path: PathBuf,
        pub synced: u64,
        pub written: u64,
        pub tear: Tear,
    }

    impl SimDisk {
        /// A disk whose operation number `freeze_at` (0-based) and every later one fail.
        pub fn new(freeze_at: Option<u64>) -> Arc<SimDisk> {
            Arc::new(SimDisk {
                state: Mutex::new(State {
                    freeze_at,
                    ..State::default()
                }),
            })
        }

        fn lock(&self) -> std::sync::MutexGuard<'_, State> {
            self.state.lock().unwrap_or_else(|e| e.into_inner())
        }

        /// Count one operation; fails if it is the freezing one or later.
        pub(crate) fn op(&self) -> io::Result<()> {
            let mut st = self.lock();
            if st.freeze_at == Some(st.ops) {
                st.frozen = true;
            }
            st.ops += 1;
            if st.frozen {
                return Err(io::Error::other("simulated power loss"));
            }
            Ok(())
        }

        /// Operations counted so far.
        pub fn ops(&self) -> u64 {
            self.lock().ops
        }

        /// fsyncs completed so far.
        pub fn syncs(&self) -> u64 {
            self.lock().syncs
        }

        /// Bytes written so far, over every file.
        pub fn written_bytes(&self) -> u64 {
            self.lock().files.values().map(|t| t.len).sum()
        }

        /// Bytes known durable (fsynced), over every file.
        pub fn synced_bytes(&self) -> u64 {
            self.lock().files.values().map(|t| t.synced).sum()
        }

        /// Has the store been frozen?
        pub fn is_frozen(&self) -> bool {
            self.lock().frozen
        }

        /// Freeze at the `n`-th operation from now (0: the next one fails).
        pub fn freeze_after(&self, n: u64) {
            let mut st = self.lock();
            st.freeze_at = Some(st.ops + n);
        }

        /// Freeze now: every later operation fails.
        pub fn freeze(&self) {
            self.lock().frozen = true;
        }

        /// The log takes `n` more bytes, then its write fails and freezes the disk (it
        /// filled up, possibly in the middle of a write).
        pub fn fill_up_after(&self, n: usize) {
            self.lock().short_write = Some(n);
        }

        /// Make the disk work again after a freeze (space freed, a device back): the
        /// next operations succeed.
        pub fn thaw(&self) {
            let mut st = self.lock();
            st.frozen = false;
            st.freeze_at = None;
        }

        /// Refuse every later request for a second handle on a file.
        pub fn refuse_clones(&self) {
            self.lock().refuse_clones = true;
        }

        /// Make the next snapshot writer panic (a bug in it) once its temporary file
        /// exists.
        pub fn panic_in_next_snapshot(&self) {
            self.lock().panic_in_snapshot = true;
        }

        /// A snapshot writer has created its temporary file.
        pub(crate) fn snapshot_started(&self) {
            let panic = std::mem::take(&mut self.lock().panic_in_snapshot);
            if panic {
                panic!("simulated: the snapshot writer panicked");
            }
        }

        /// Second handles on a file asked for so far (refused ones too).
        pub fn clones(&self) -> u64 {
            self.lock().clones
        }

        /// Count a request for a second handle; fails if they are refused.
        fn clone_op(&self) -> io::Result<()> {
            let mut st = self.lock();
            st.clones += 1;
            if st.refuse_clones {
                return Err(io::Error::other("simulated: no file handle left"));
            }
            Ok(())
        }

        pub(crate) fn track(self: &Arc<Self>, path: &Path, file: File) -> io::Result<SimFile> {
            let len = file.metadata()?.len();
            let mut st = self.lock();
            // What the file holds when the store opens it was made durable before.
            st.files
                .insert(path.to_path_buf(), Tracked { len, synced: len });
            Ok(SimFile {
                file,
                path: path.to_path_buf(),
                disk: Arc::clone(self),
            })
        }

        /// Simulate the power loss: every tracked file that still exists keeps its synced
        /// bytes plus what `tear(path, unsynced)` says of the rest. Call it once the
        /// store is closed or dropped.
        pub fn power_loss(
            &self,
            mut tear: impl FnMut(&Path, u64) -> Tear,
        ) -> io::Result<Vec<Loss>> {
            let mut st = self.lock();
            st.frozen = true;
            let mut out = Vec::new();
            for (path, t) in st.files.iter() {
                let Ok(mut f) = OpenOptions::new().write(true).open(path) else {
                    continue; // removed by a compaction
                };
                let unsynced = t.len.saturating_sub(t.synced);
                let mut cut = if unsynced > 0 {
                    tear(path, unsynced)
                } else {
                    Tear { keep: 0, zeros: 0 }
                };
                cut.keep = cut.keep.min(unsynced);
                let keep_to = t.synced + cut.keep;
                f.set_len(keep_to)?;
                if cut.zeros > 0 {
                    f.set_len(keep_to + cut.zeros)?;
                }
                f.flush()?;
                out.push(Loss {
                    path: path.clone(),
                    synced: t.synced,
                    written: t.len,
                    tear: cut,
                });
            }
            Ok(out)
        }
    }

    /// A log file on the simulated disk: writes go to the real file (so a reopen reads
    /// them) and are counted; fsyncs only record the durable length (no real fsync).
    #[derive(Debug)]
    pub struct SimFile {
        file: File,
        path: PathBuf,
        disk: Arc<SimDisk>,
    }

    impl SimFile {
        pub(crate) fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
            self.disk.op()?;
            self.file.write_all(buf)?;
            let mut st = self.disk.lock();
            if let Some(t) = st.files.get_mut(&self.path) {
                t.len += buf.len() as u64;
            }
            Ok(())
        }

        /// [`super::LogFile::append`]: a short write set by
        /// [`SimDisk::fill_up_after`] writes its bytes, then fails.
        pub(crate) fn append(&mut self, buf: &[u8], written: &mut usize) -> io::Result<()> {
            let left = buf.len() - *written;
            let short = {
                let mut st = self.disk.lock();
                let short = st.short_write.filter(|&n| n < left);
                st.short_write = st.short_write.and_then(|n| n.checked_sub(left));
                short
            };
            let Some(n) = short else {
                self.write_all(&buf[*written..])?;
                *written = buf.len();
                return Ok(());
            };
            self.write_all(&buf[*written..*written + n])?;
            *written += n;
            self.disk.freeze();
            Err(super::no_space())
        }

        pub(crate) fn sync_data(&self) -> io::Result<()> {
            self.disk.op()?;
            let mut st = self.disk.lock();
            st.syncs += 1;
            if let Some(t) = st.files.get_mut(&self.path) {
                t.synced = t.len;
            }
            Ok(())
        }

        pub(crate) fn try_clone(&self) -> io::Result<SimFile> {
            self.disk.clone_op()?;
            Ok(SimFile {
                file: self.file.try_clone()?,
                path: self.path.clone(),
                disk: Arc::clone(&self.disk),
            })
        }

        pub(crate) fn size(&self) -> io::Result<u64> {
            Ok(self.file.metadata()?.len())
        }
    }
}
