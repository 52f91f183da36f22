//! The durable store: opening a directory, background fsync and compaction.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::base::config::Config;
use crate::error::CmdError;
use crate::store::persist::{self, Fsync, LoadReport, Options, PersistError};

use super::{Shared, State, Store};

impl Store {
    /// Open the durable store in directory `dir` (created if missing): load its snapshot
    /// and logs, then log every write. With `opts.read_only`, load without locking and
    /// refuse writes.
    pub fn open(
        dir: &Path,
        config: Config,
        opts: Options,
    ) -> Result<(Store, LoadReport), PersistError> {
        if opts.read_only {
            let (mut ks, _, report) = persist::load(dir, config)?;
            for (n, v) in &opts.config_overrides {
                ks.config.set(n, v)?;
            }
            let store = Store::from_keyspace(ks);
            store.shared.state.lock().read_only = true;
            return Ok((store, report));
        }
        let (ks, journal, report) = persist::open(dir, config, &opts)?;
        let store = Store::from_keyspace(ks);
        let fsync = journal.fsync;
        let settles = fsync == Fsync::Always && journal.group_commit;
        store.shared.state.lock().journal = Some(journal);
        store.shared.settles.store(settles, Ordering::Relaxed);
        if fsync == Fsync::EverySec {
            let weak = Arc::downgrade(&store.shared);
            std::thread::Builder::new()
                .name("xstreams-fsync".into())
                .spawn(move || fsync_loop(weak))
                .map_err(|e| PersistError::io_failure(e.to_string()))?;
        }
        Ok((store, report))
    }

    /// Write everything logged so far to disk now (fsync), whatever the `fsync` policy:
    /// for a writer that keeps a store open and must know a write is durable before it
    /// reports it done (the Spark sink's commit). Nothing to do for an in-memory or
    /// read-only store. A failed fsync stops later writes, as the background fsync does.
    pub fn flush(&self) -> Result<(), PersistError> {
        self.sync_logged()
    }

    /// Group commit: return once every write logged so far is durable. Callers that
    /// come while an fsync runs wait for it, then find their writes covered or run the
    /// next fsync for all who wrote meanwhile: one fsync per group, outside the store
    /// lock (redis-server's `appendfsync always` fsyncs once per event-loop turn). A
    /// store opened with `Options::group_commit` needs this call before a write is
    /// acknowledged; for any other it is [`Store::flush`]. Fails, and stops later
    /// writes, when an fsync fails.
    pub fn sync_logged(&self) -> Result<(), PersistError> {
        match sync_logged(&self.shared, true) {
            Some(Err(e)) => Err(e.persist_error()),
            _ => Ok(()),
        }
    }

    /// [`Store::sync_logged`] without waiting for another caller's fsync: `None` when
    /// one is running (the caller can wait for it elsewhere), else the result of
    /// making every write logged so far durable (with an fsync here if needed).
    pub fn try_sync_logged(&self) -> Option<Result<(), PersistError>> {
        sync_logged(&self.shared, false).map(|r| r.map_err(|e| e.persist_error()))
    }

    /// What a reply owes on a store opened with `Options::group_commit` under
    /// `appendfsync always`, for a caller that answers in its own thread (the embedded
    /// API; the server has its commit thread): return once every write logged so far
    /// is durable, in one fsync with the writes of every thread that came meanwhile
    /// ([`Store::sync_logged`]), run outside the store lock. The error is the MISCONF
    /// line that replaces the reply when they cannot be made durable. Under `always` a
    /// failure is for good: writes logged before it stay not durable, so every later
    /// reply is the error too (redis-server exits), until the store is reopened. Nothing
    /// for any other store, nor when no write waits.
    pub fn settle(&self) -> Result<(), CmdError> {
        if !self.shared.settles.load(Ordering::Relaxed) {
            return Ok(());
        }
        let waiting = {
            let st = self.shared.state.lock();
            st.journal.as_ref().is_some_and(|j| j.unsynced())
        };
        if !waiting {
            return Ok(());
        }
        match sync_logged(&self.shared, true) {
            Some(Err(Unsynced::Stopped(why))) => Err(CmdError::misconf(why)),
            Some(Err(Unsynced::Fsync(e))) => Err(CmdError::misconf(crate::error::io_reason(&e))),
            _ => Ok(()),
        }
    }

    /// Does this store owe each reply [`Store::settle`]?
    pub fn settles(&self) -> bool {
        self.shared.settles.load(Ordering::Relaxed)
    }

    /// How many writes the log has taken since the store was opened, and how many of
    /// them are durable: what [`Store::sync_logged`] would wait for. `None` for an
    /// in-memory, read-only or closed store.
    pub fn log_writes(&self) -> Option<LogWrites> {
        let st = self.shared.state.lock();
        st.journal.as_ref().map(|j| LogWrites {
            written: j.writes,
            durable: j.durable,
            failed: j.failed.clone(),
        })
    }

    /// Is this a durable store?
    pub fn is_durable(&self) -> bool {
        self.shared.state.lock().journal.is_some()
    }

    /// Compact now: write a snapshot of the current state and drop the logs it covers.
    /// Commands keep running meanwhile (only a copy of the keyspace is taken under the
    /// lock). Fails if the store is not durable or a compaction is already running.
    pub fn compact(&self) -> Result<(), PersistError> {
        compact_shared(&self.shared)
    }

    /// [`Store::compact`], first waiting for a compaction already running (an automatic
    /// one, or another thread's) to end: the snapshot it writes covers every command
    /// that ran before this call.
    pub fn compact_waiting(&self) -> Result<(), PersistError> {
        loop {
            match compact_shared(&self.shared) {
                Err(e) if *e.kind() == persist::ErrorKind::Busy => {
                    std::thread::sleep(COMPACTION_POLL);
                }
                done => return done,
            }
        }
    }

    pub(super) fn maybe_compact(&self, st: &mut State) {
        if let Some(j) = st.journal.as_mut().filter(|j| j.wants_compaction()) {
            j.scheduled = true;
            let weak = Arc::downgrade(&self.shared);
            let _ = std::thread::Builder::new()
                .name("xstreams-compact".into())
                .spawn(move || {
                    if let Some(shared) = weak.upgrade() {
                        let _ = compact_shared(&shared);
                    }
                });
        }
    }
}

/// [`Store::log_writes`]: writes to the log since the store was opened, and how many
/// of them are durable (fsynced), and why the log stopped taking writes if it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogWrites {
    pub written: u64,
    pub durable: u64,
    /// Why the log stopped taking writes (a write or an fsync failed), if it did.
    pub failed: Option<String>,
}

impl LogWrites {
    /// Is a write not yet durable?
    pub fn unsynced(&self) -> bool {
        self.written > self.durable
    }
}

/// How often [`Store::compact_waiting`] looks whether a running compaction has ended.
const COMPACTION_POLL: Duration = Duration::from_millis(5);

/// The error of a failed fsync as [`Store::sync_logged`] returns it.
fn fsync_failed(e: &std::io::Error) -> String {
    format!("fsync failed: {e}")
}

/// Why a compaction is refused while the log takes no writes.
fn log_stopped(why: &str) -> String {
    format!("the log stopped taking writes: {why}")
}

/// The error of a compaction whose snapshot writer panicked, with the panic's message.
fn snapshot_panicked(panic: &(dyn std::any::Any + Send)) -> std::io::Error {
    let why = crate::error::panic_message(panic);
    std::io::Error::other(format!("the snapshot writer panicked: {why}"))
}

/// Background fsync once per second (`appendfsync everysec`); ends with the store.
fn fsync_loop(weak: Weak<Shared>) {
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let Some(shared) = weak.upgrade() else { return };
        if shared.state.lock().journal.is_none() {
            return;
        }
        // A failure is kept in the journal: later writes get MISCONF, as in redis-server,
        // until a retry (sync_logged's first step here, or at a later command) writes and
        // fsyncs what waits.
        let _ = sync_logged(&shared, true);
        drop(shared);
    }
}

/// [`Store::sync_logged`]: a caller whose writes are not durable waits while an fsync
/// runs, or runs the next one itself (the leader): it notes the writes done so far and
/// takes a handle on the log under the store lock, fsyncs without any lock, then wakes
/// every waiter at once. A log switched meanwhile was fsynced by the switch
/// (`begin_compaction`).
/// With `wait` false, returns `None` instead of waiting for another caller's fsync.
fn sync_logged(shared: &Shared, wait: bool) -> Option<Result<(), Unsynced>> {
    let want = {
        let mut st = shared.state.lock();
        let Some(j) = st.journal.as_mut() else {
            return Some(Ok(()));
        };
        // A stopped log is tried again first (at most every RETRY_EVERY).
        if let Some(why) = j.stopped() {
            return Some(Err(Unsynced::Stopped(why.to_owned())));
        }
        if !j.unsynced() {
            return Some(Ok(()));
        }
        j.writes
    };
    let mut syncing = shared.commit.lock();
    loop {
        // What the last fsync covered (every lock order here is commit, then state).
        let step = {
            let mut st = shared.state.lock();
            match st.journal.as_mut() {
                None => return Some(Ok(())), // closed: the close fsynced the log
                Some(j) if j.durable >= want => return Some(Ok(())),
                Some(_) if *syncing => None,
                Some(j) => {
                    // The log may have stopped since.
                    if let Some(why) = j.stopped() {
                        return Some(Err(Unsynced::Stopped(why.to_owned())));
                    }
                    Some((j.writes, j.sync_handle()))
                }
            }
        };
        let Some((target, handle)) = step else {
            if !wait {
                return None;
            }
            shared.committed.wait(&mut syncing);
            continue;
        };
        *syncing = true;
        drop(syncing);
        let res = handle.and_then(|f| f.sync_data());
        {
            let mut st = shared.state.lock();
            if let Some(j) = st.journal.as_mut() {
                match &res {
                    Ok(()) => j.durable = j.durable.max(target),
                    // As redis-server: stop accepting writes that could not be made
                    // durable.
                    Err(e) => j.fail(e, true),
                }
            }
        }
        syncing = shared.commit.lock();
        *syncing = false;
        shared.committed.notify_all();
        if let Err(e) = res {
            return Some(Err(Unsynced::Fsync(e)));
        }
    }
}

/// Why [`sync_logged`] could not make the writes durable.
enum Unsynced {
    /// The log had stopped taking writes (the reason), and a retry did not resume it.
    Stopped(String),
    /// The fsync failed.
    Fsync(std::io::Error),
}

impl Unsynced {
    /// As [`Store::sync_logged`] reports it.
    fn persist_error(self) -> PersistError {
        match self {
            Unsynced::Stopped(why) => io_failure(why),
            Unsynced::Fsync(e) => io_failure(fsync_failed(&e)),
        }
    }
}

/// The error of a failed (or refused) fsync, with the reason later writes are refused.
fn io_failure(message: String) -> PersistError {
    PersistError::io_failure(message)
}

fn compact_shared(shared: &Arc<Shared>) -> Result<(), PersistError> {
    let io = |e: std::io::Error| PersistError::io_failure(e.to_string());
    let (dir, disk, seq, copy, now, dirty_before) = {
        let mut st = shared.state.lock();
        let dirty_before = st.dirty;
        let now = st.ks.clock.now_ms();
        let cfg = st.ks.config.clone();
        let Some(j) = st.journal.as_mut() else {
            return Err(PersistError::not_durable());
        };
        if j.compacting {
            return Err(PersistError::compaction_running());
        }
        if let Some(why) = &j.failed {
            // The snapshot would hold changes still waiting for the old log, which the
            // retry would then write after it.
            return Err(io_failure(log_stopped(why)));
        }
        let seq = j.begin_compaction(&cfg).map_err(io)?;
        let dir = j.dir().to_path_buf();
        (dir, j.disk().clone(), seq, st.ks.clone(), now, dirty_before)
    };
    // A panic in the writer ends this compaction as an I/O error does: left running,
    // it would refuse every later compaction and keep `compact_waiting` waiting.
    let written = std::panic::catch_unwind(AssertUnwindSafe(|| {
        disk.write_snapshot(&dir, seq, &copy, now)
    }))
    .unwrap_or_else(|panic| Err(snapshot_panicked(&*panic)));
    drop(copy);
    let mut st = shared.state.lock();
    let Some(j) = st.journal.as_mut() else {
        return Err(PersistError::store_closed());
    };
    match written {
        Ok(size) => {
            let old = j.finish_compaction(seq, size).map_err(io)?;
            st.dirty -= dirty_before;
            drop(st);
            for f in old {
                let _ = std::fs::remove_file(f);
            }
            Ok(())
        }
        Err(e) => {
            j.compacting = false;
            Err(io(e))
        }
    }
}

impl State {
    /// Start an atomic block in the log of a durable store: the records of the commands
    /// run until [`State::end_log_block`] reach the log together or not at all.
    pub(super) fn begin_log_block(&mut self) {
        if let Some(j) = self.journal.as_mut() {
            j.begin_block();
        }
    }

    /// Start a batch in the log of a durable store: the records of the commands run until
    /// [`State::end_log_block`] are written together (see `Journal::begin_batch`).
    pub(super) fn begin_log_batch(&mut self) {
        if let Some(j) = self.journal.as_mut() {
            j.begin_batch();
        }
    }

    /// Write the open block (atomic or batch). A failed write is returned as the MISCONF
    /// error and, as after any failed log write, further writes are refused until a
    /// retry writes what waits (`Journal::retry`).
    pub(super) fn end_log_block(&mut self) -> Option<crate::error::CmdError> {
        let j = self.journal.as_mut()?;
        let e = j.end_block().err()?;
        Some(crate::error::CmdError::misconf(crate::error::io_reason(&e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsynced(s: &Store) -> Option<bool> {
        s.shared.state.lock().journal.as_ref().map(|j| j.unsynced())
    }

    /// `flush` fsyncs what was logged whatever the policy (here `no`, which never syncs
    /// by itself), and is a no-op for an in-memory store.
    #[test]
    fn flush_syncs_what_was_logged_whatever_the_policy() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            fsync: Fsync::No,
            ..Options::default()
        };
        let (s, _) = Store::open(dir.path(), Config::default(), opts).unwrap();
        s.execute(&[b"XADD".as_slice(), b"s", b"*", b"f", b"v"]);
        assert_eq!(unsynced(&s), Some(true));
        s.flush().unwrap();
        assert_eq!(unsynced(&s), Some(false));
        s.flush().unwrap(); // nothing new: nothing to do
        assert_eq!(unsynced(&s), Some(false));
        s.close();
        let mem = Store::new(Config::default());
        mem.flush().unwrap();
        assert_eq!(unsynced(&mem), None);
    }

    fn set_compacting(s: &Store, on: bool) {
        s.shared.state.lock().journal.as_mut().unwrap().compacting = on;
    }

    /// While a compaction runs, `compact` fails at once with `Busy` (SAVE's error) and
    /// `compact_waiting` waits for it to end, then compacts what is there by then.
    #[test]
    fn compact_waiting_waits_for_the_running_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let (s, _) = Store::open(dir.path(), Config::default(), Options::default()).unwrap();
        s.execute(&[b"XADD".as_slice(), b"s", b"*", b"f", b"v"]);
        set_compacting(&s, true);
        let err = s.compact().unwrap_err();
        assert_eq!(*err.kind(), persist::ErrorKind::Busy, "{err:?}");
        let other = s.clone();
        let ends = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            set_compacting(&other, false);
        });
        let t0 = std::time::Instant::now();
        s.compact_waiting().unwrap();
        assert!(t0.elapsed() >= Duration::from_millis(50));
        ends.join().unwrap();
        s.close();
        let (r, report) = Store::open(dir.path(), Config::default(), Options::default()).unwrap();
        assert!(report.snapshot.is_some(), "{report:?}");
        assert_eq!(r.execute(&[b"XLEN".as_slice(), b"s"]), crate::Reply::Int(1));
    }
}
