//! Atomic batches (MULTI/EXEC) and WATCH: [`Store::execute_batch`] with an optional
//! [`Watch`], and [`Store::watch`] registering keys in the databases' registries (see
//! [`crate::keyspace::watch`] for the rules).

use std::sync::Arc;

use parking_lot::MutexGuard;

use crate::command::reply::Reply;
use crate::command::{self, Outcome};
use crate::error::CmdError;
use crate::keyspace::db::NUM_DBS;
use crate::keyspace::watch::{Release, Watch};

use super::{Shared, Signals, State, Store};

/// The most commands of a pipeline (a batch that is not atomic) on a durable store whose
/// log records are written together, before another thread may take the store: as
/// redis-server writes its AOF buffer once per event-loop turn, for all the commands a
/// client's pipeline ran in it, rather than once per command (a write per command ran a
/// 20,000-command pipeline of XADDs at a third of an atomic batch's speed). Between
/// chunks, a thread waiting for the store runs first, as it does after every command of
/// an in-memory store's pipeline.
pub(crate) const PIPELINE_CHUNK: usize = 256;

/// One atomic step run as several calls, from [`Store::begin_parts`] until it is
/// dropped.
#[must_use = "the step ends when this is dropped"]
pub struct Parts {
    store: Store,
    /// The time the clock was frozen at (`None`: it was pinned already).
    frozen: Option<i64>,
}

impl Store {
    /// Begin one atomic step that the caller runs as several calls while it keeps every
    /// other caller out (the server's EXEC of a queue with INFO or CONFIG in it, whose
    /// parts lock the store one by one). Until the returned [`Parts`] is dropped, the
    /// clock stays at the present command time, so every part sees one time as the
    /// commands of an EXEC do in redis-server (a pinned clock stays as it is), and the
    /// blocked callers the parts make ready wait, to be served at the end, as
    /// redis-server serves them after the EXEC. One step at a time.
    pub fn begin_parts(&self) -> Parts {
        let mut st = self.shared.state.lock();
        let frozen = st.freeze_clock().then(|| st.ks.clock.now_ms());
        st.held.get_or_insert_with(Signals::default);
        Parts {
            store: self.clone(),
            frozen,
        }
    }
}

impl Drop for Parts {
    /// The end of the step: the system clock again (unless a part pinned the clock
    /// elsewhere: that pin stays), then the blocked callers its parts made ready are
    /// served.
    fn drop(&mut self) {
        let shared = &self.store.shared;
        let mut st = shared.state.lock();
        if self.frozen.is_some() && st.ks.clock.pinned_at() == self.frozen {
            st.ks.clock.set(None);
        }
        if let Some(sig) = st.held.take() {
            st.serve(sig);
        }
        drop(st);
        // Waiters re-check their deadlines against the clock, and the served ones wake.
        shared.cond.notify_all();
    }
}

impl Release for Shared {
    fn release(&self, id: u64, keys: &[(usize, Vec<u8>)]) {
        let mut st = self.state.lock();
        for (db, key) in keys {
            st.ks.dbs[*db].watched.remove(key, id);
        }
    }
}

impl Store {
    /// Execute several commands in order. With `atomic`, no other command runs in
    /// between and, as with MULTI/EXEC, a command rejected before running (unknown
    /// command, wrong number of arguments) discards the whole batch: its slot holds its
    /// error, every other slot `EXECABORT`. Blocking commands never wait inside a batch.
    ///
    /// With a `watch` (atomic batches only; see [`Store::watch`]), the batch runs nothing
    /// and answers `None` — EXEC's nil reply — when a watched key was touched since it
    /// was watched or has expired since; otherwise (and always without a watch) the
    /// replies, one per command.
    ///
    /// ```
    /// use xstreams_core::Store;
    ///
    /// let store = Store::default();
    /// let cmd = |s: &str| -> Vec<Vec<u8>> { s.split(' ').map(|a| a.into()).collect() };
    /// let w = store.watch(0, &[b"s"]).unwrap();
    /// store.execute_batch(0, 2, &[cmd("XADD s 1-1 f v")], false, None); // someone else
    /// assert_eq!(store.execute_batch(0, 2, &[cmd("XLEN s")], true, Some(&w)), None);
    /// ```
    pub fn execute_batch(
        &self,
        db: usize,
        protocol: u8,
        cmds: &[Vec<Vec<u8>>],
        atomic: bool,
        watch: Option<&Watch>,
    ) -> Option<Vec<Reply>> {
        let watches: Vec<&Watch> = watch.into_iter().collect();
        self.execute_batch_watching(db, protocol, cmds, atomic, &watches)
    }

    /// [`Store::execute_batch`] watching with several [`Watch`]es (each made by its own
    /// WATCH call): aborted when any of them sees a change.
    pub fn execute_batch_watching(
        &self,
        db: usize,
        protocol: u8,
        cmds: &[Vec<Vec<u8>>],
        atomic: bool,
        watches: &[&Watch],
    ) -> Option<Vec<Reply>> {
        if let Err(r) = Self::check_db(db) {
            return Some(cmds.iter().map(|_| r.clone()).collect());
        }
        let cmds: Vec<(usize, &[Vec<u8>])> = cmds.iter().map(|c| (db, c.as_slice())).collect();
        self.run_batch(db, protocol, &cmds, atomic, watches)
    }

    /// An atomic batch whose commands run in different databases (each command with its
    /// own): a MULTI/EXEC whose queue SELECTs databases between commands runs as one
    /// transaction. `db` is the database the WATCH check runs in (the connection's at
    /// EXEC). Otherwise as [`Store::execute_batch_watching`] with `atomic`.
    ///
    /// ```
    /// use xstreams_core::Store;
    ///
    /// let store = Store::default();
    /// let cmd = |s: &str| -> Vec<Vec<u8>> { s.split(' ').map(|a| a.into()).collect() };
    /// let replies = store
    ///     .execute_transaction(0, 2, &[(0, cmd("XADD s 1-1 f v")), (3, cmd("XLEN s"))], &[])
    ///     .unwrap();
    /// assert_eq!(replies[1], xstreams_core::Reply::Int(0));
    /// ```
    pub fn execute_transaction(
        &self,
        db: usize,
        protocol: u8,
        cmds: &[(usize, Vec<Vec<u8>>)],
        watches: &[&Watch],
    ) -> Option<Vec<Reply>> {
        for (d, _) in cmds.iter().chain(std::iter::once(&(db, Vec::new()))) {
            if let Err(r) = Self::check_db(*d) {
                return Some(cmds.iter().map(|_| r.clone()).collect());
            }
        }
        let cmds: Vec<(usize, &[Vec<u8>])> = cmds.iter().map(|(d, c)| (*d, c.as_slice())).collect();
        self.run_batch(db, protocol, &cmds, true, watches)
    }

    fn run_batch(
        &self,
        db: usize,
        protocol: u8,
        cmds: &[(usize, &[Vec<u8>])],
        atomic: bool,
        watches: &[&Watch],
    ) -> Option<Vec<Reply>> {
        if watches.iter().any(|w| w.store != self.address()) {
            let r: Reply = CmdError::watch_of_another_store().into();
            return Some(cmds.iter().map(|_| r.clone()).collect());
        }
        if atomic {
            let checks: Vec<Option<CmdError>> = cmds
                .iter()
                .map(|(_, c)| {
                    let refs: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
                    command::resolve(&refs).err()
                })
                .collect();
            if checks.iter().any(|c| c.is_some()) {
                // EXECABORT wins over a touched watch, as in redis-server.
                return Some(
                    checks
                        .into_iter()
                        .map(|c| match c {
                            Some(e) => e.into(),
                            None => CmdError::exec_abort().into(),
                        })
                        .collect(),
                );
            }
        }
        let mut out = Vec::with_capacity(cmds.len());
        let mut st = self.shared.state.lock();
        if atomic && !watches.is_empty() && !st.closed && self.watch_aborts(&mut st, db, watches) {
            return None;
        }
        // MULTI/EXEC serves blocked readers after the whole batch; a pipeline after each
        // command. An atomic batch is one block in the log, as a transaction in Redis's AOF.
        let mut sig = Signals::default();
        // ... and runs at one command time, as the commands of an EXEC do.
        let frozen = atomic && st.begin_atomic();
        // A pipeline on a durable store writes its commands' records together, up to
        // PIPELINE_CHUNK commands at a time, before another thread may take the store.
        let chunked = !atomic && st.journal.is_some();
        let mut logged: Vec<usize> = Vec::new();
        if chunked {
            st.begin_log_batch();
        }
        for (i, (cdb, c)) in cmds.iter().enumerate() {
            if st.closed {
                out.push(CmdError::closed().into());
            } else {
                let refs: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
                let before = st.logged;
                let (o, s) = Self::run(&mut st, *cdb, protocol, &refs, true);
                sig.add(s.keys, s.flushed_dbs);
                if st.logged != before {
                    logged.push(out.len());
                }
                out.push(match o {
                    Outcome::Reply(r) => r,
                    Outcome::Block(_) => Reply::NilArray,
                });
            }
            if !atomic {
                // A blocked call served now logs its own records (a group read's
                // deliveries) and its reply is final: the chunk so far is written first,
                // so that a failed write fails that call's reply as a lone command's.
                let serving = chunked && !sig.is_empty() && !st.waiters.is_empty();
                if serving {
                    Self::end_chunk(&mut st, &mut out, &mut logged);
                }
                if st.serve(std::mem::take(&mut sig)) {
                    self.shared.cond.notify_all();
                }
                if serving {
                    st.begin_log_batch();
                }
                if !chunked {
                    MutexGuard::bump(&mut st);
                } else if (i + 1) % PIPELINE_CHUNK == 0 && i + 1 < cmds.len() {
                    Self::end_chunk(&mut st, &mut out, &mut logged);
                    MutexGuard::bump(&mut st);
                    st.begin_log_batch();
                }
            }
        }
        if chunked {
            Self::end_chunk(&mut st, &mut out, &mut logged);
        }
        if atomic {
            if let Some(e) = st.end_log_block() {
                let r: Reply = e.into();
                out.iter_mut().for_each(|o| *o = r.clone());
            }
        }
        st.thaw_clock(frozen);
        if st.serve(sig) {
            self.shared.cond.notify_all();
        }
        self.maybe_compact(&mut st);
        Some(out)
    }

    /// Write a pipeline chunk's log records (see [`PIPELINE_CHUNK`]). When that fails
    /// under `always`, the replies of the commands that logged records (`logged`: their
    /// places in `out`) become the MISCONF error, as one command's reply does when its
    /// own record cannot be written: the changes are in memory but not durable. (Under
    /// `everysec`/`no` they are answered, as redis-server answers them; the records wait
    /// for a retry.)
    fn end_chunk(st: &mut State, out: &mut [Reply], logged: &mut Vec<usize>) {
        if let Some(e) = st.end_log_block() {
            let r: Reply = e.into();
            for &i in logged.iter() {
                out[i] = r.clone();
            }
        }
        logged.clear();
    }

    /// At EXEC: is any of `watches` dirty, or has one of its keys expired since it was
    /// watched (Redis's `isWatchedKeyExpired`)? Runs the periodic work due first, as
    /// redis-server's cron may have run before the EXEC.
    fn watch_aborts(&self, st: &mut State, db: usize, watches: &[&Watch]) -> bool {
        let (aborted, sig, _) = Self::run_with(st, db, 2, true, |ctx| {
            watches.iter().any(|w| {
                w.is_dirty()
                    || w.keys.iter().any(|(d, k)| {
                        let d = &ctx.ks.dbs[*d];
                        !d.watched.watched_expired(k, w.id) && d.is_expired(k, ctx.now)
                    })
            })
        });
        if st.serve(sig) {
            self.shared.cond.notify_all();
        }
        aborted
    }

    /// WATCH `keys` of database `db`: an atomic batch run with the returned [`Watch`] is
    /// aborted if one of them is touched (written, deleted, expired, flushed, swapped)
    /// before it runs. The keys stay watched until the `Watch` is dropped.
    pub fn watch(&self, db: usize, keys: &[&[u8]]) -> Result<Watch, CmdError> {
        let mut w = Watch {
            id: 0,
            store: self.address(),
            dirty: Default::default(),
            keys: Vec::new(),
            release: None,
        };
        self.watch_more(&mut w, db, keys)?;
        Ok(w)
    }

    /// WATCH more keys with `w` (a connection's later WATCH): keys it already watches are
    /// kept as they are, and a `Watch` that is already dirty watches nothing more, as in
    /// Redis.
    pub fn watch_more(&self, w: &mut Watch, db: usize, keys: &[&[u8]]) -> Result<(), CmdError> {
        if db >= NUM_DBS {
            return Err(CmdError::db_index_out_of_range());
        }
        if w.store != self.address() {
            return Err(CmdError::watch_of_another_store());
        }
        let mut st = self.shared.state.lock();
        if st.closed {
            return Err(CmdError::closed());
        }
        if w.id == 0 {
            st.next_watch += 1;
            w.id = st.next_watch;
            let shared: Arc<dyn Release> = self.shared.clone();
            w.release = Some(Arc::downgrade(&shared));
        }
        // WATCH is a command: the periodic work due runs first.
        let (_, sig, _) = Self::run_with(&mut st, db, 2, true, |ctx| {
            if w.is_dirty() {
                return;
            }
            let now = ctx.now;
            for key in keys {
                let d = &mut ctx.ks.dbs[db];
                let expired = d.is_expired(key, now);
                if d.watched.add(key, w.id, &w.dirty, expired) {
                    w.keys.push((db, key.to_vec()));
                }
            }
        });
        if st.serve(sig) {
            self.shared.cond.notify_all();
        }
        Ok(())
    }

    /// (watchers, watched keys): INFO's `watching_clients` and `total_watched_keys`.
    pub fn watch_stats(&self) -> (usize, usize) {
        self.shared.state.lock().ks.watch_stats()
    }

    /// The identity of this store (shared by its clones), which its [`Watch`]es carry.
    fn address(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }
}
