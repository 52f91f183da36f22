//! The thread-safe store: a keyspace behind a mutex, command execution, atomic batches,
//! and blocking reads that wait (without holding the lock) until a writer signals one of
//! their keys, the timeout expires, or pending entries become claimable.
//!
//! A blocked command is re-executed when woken, as redis-server does; a spurious wake-up
//! only re-blocks it with its original deadline, so correctness never depends on which
//! writes signal which keys — only latency does.

mod blocking;
mod durable;
pub mod persist;
mod session;
mod typed;
mod watching;

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::base::config::Config;
use crate::command::reply::Reply;
use crate::command::{self, Ctx, LogRecord, Outcome, Propagation};
use crate::error::persist::PersistError;
use crate::error::{CmdError, ConfigError};
use crate::keyspace::db::{Keyspace, NUM_DBS};
use crate::store::persist::Journal;

pub use blocking::{BlockedCall, ReadStep, Step};
use blocking::{Signals, Waiter};
pub use durable::LogWrites;
pub use session::Session;
pub use watching::Parts;

struct State {
    ks: Keyspace,
    /// Blocked calls by call ID.
    waiters: std::collections::HashMap<u64, Waiter>,
    next_call: u64,
    next_order: u64,
    closed: bool,
    /// The log of a durable store.
    journal: Option<Journal>,
    /// Opened read-only (write commands are refused).
    read_only: bool,
    /// Changes made (Redis's `server.dirty`).
    dirty: u64,
    /// Commands whose records were appended to the log (a pipeline tells by it which of
    /// its commands a failed log write leaves not durable).
    logged: u64,
    /// The last [`crate::Watch`] ID handed out.
    next_watch: u64,
    /// While a step run in parts runs ([`Store::begin_parts`]): the keys its parts made
    /// ready, whose blocked callers are served when it ends.
    held: Option<Signals>,
}

struct Shared {
    state: Mutex<State>,
    cond: Condvar,
    /// A group commit's fsync is running (`durable::sync_logged`)...
    commit: Mutex<bool>,
    /// ...and its end is signalled here.
    committed: Condvar,
    /// Opened with `Options::group_commit` under `appendfsync always`: a caller that
    /// answers in its own thread owes each reply [`Store::settle`]. Set once, at open.
    settles: std::sync::atomic::AtomicBool,
}

/// A store of streams. Cloning gives another handle to the same store.
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared")
    }
}

pub use crate::error::{CLOSED_ERROR, EXECABORT, READ_ONLY_ERROR};

impl State {
    /// Freeze the store clock at the present command time for an atomic batch.
    /// redis-server takes one time snapshot per execution unit, and the commands an EXEC
    /// runs are nested in the EXEC's: every command of a MULTI/EXEC sees the same time
    /// (the `XADD *` IDs share one millisecond; a key does not expire half-way through).
    /// Returns whether it froze the clock (a pinned clock is left as it is); undo with
    /// [`State::thaw_clock`].
    fn freeze_clock(&mut self) -> bool {
        if self.ks.clock.is_pinned() {
            return false;
        }
        let now = self.ks.command_time();
        self.ks.clock.set(Some(now));
        true
    }

    /// Start an atomic step, as a MULTI/EXEC: one block in the log of a durable store
    /// ([`State::begin_log_block`]) and one command time ([`State::freeze_clock`], whose
    /// answer it returns).
    fn begin_atomic(&mut self) -> bool {
        self.begin_log_block();
        self.freeze_clock()
    }

    /// Back to the system clock after [`State::freeze_clock`] froze it.
    fn thaw_clock(&mut self, frozen: bool) {
        if frozen {
            self.ks.clock.set(None);
        }
    }
}

impl Default for Store {
    fn default() -> Self {
        Store::new(Config::default())
    }
}

impl Store {
    /// An empty in-memory store.
    pub fn new(config: Config) -> Self {
        Self::from_keyspace(Keyspace::new(config))
    }

    /// A store over an existing keyspace (used when loading persisted data).
    pub fn from_keyspace(ks: Keyspace) -> Self {
        Store {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    ks,
                    waiters: std::collections::HashMap::new(),
                    next_call: 0,
                    next_order: 0,
                    closed: false,
                    journal: None,
                    read_only: false,
                    dirty: 0,
                    logged: 0,
                    next_watch: 0,
                    held: None,
                }),
                cond: Condvar::new(),
                commit: Mutex::new(false),
                committed: Condvar::new(),
                settles: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    fn run(
        st: &mut State,
        db: usize,
        protocol: u8,
        args: &[&[u8]],
        deny_blocking: bool,
    ) -> (Outcome, Signals) {
        let (out, sig, failed) = Self::run_with(st, db, protocol, deny_blocking, |ctx| {
            command::execute(ctx, args)
        });
        match failed {
            Some(e) => (Outcome::Reply(e.into()), sig),
            None => (out, sig),
        }
    }

    /// Run `f` as one command on database `db`: the store clock read once, the IDMP
    /// sweep, writes refused on a read-only store or after a log failure
    /// (`Ctx::reject_writes`), and in a durable store what `f` records appended to the
    /// log. Returns `f`'s result, the keys it signaled, and the error that replaces the
    /// command's reply when its log record could not be written (the change stays in
    /// memory, as in redis-server).
    fn run_with<R>(
        st: &mut State,
        db: usize,
        protocol: u8,
        deny_blocking: bool,
        f: impl FnOnce(&mut Ctx<'_>) -> R,
    ) -> (R, Signals, Option<CmdError>) {
        let now = st.ks.command_time();
        let expired = st.ks.cron(now);
        let reject = if st.read_only {
            Some(CmdError::read_only())
        } else {
            match st.journal.as_mut() {
                // A stopped log is tried again first (at most every RETRY_EVERY).
                Some(j) if j.failed.is_some() => j.stopped().map(CmdError::misconf),
                _ => None,
            }
        };
        let facts = crate::keyspace::info::StoreFacts {
            dirty: st.dirty,
            blocked_clients: st.waiters.len(),
        };
        let mut ctx = Ctx::new(&mut st.ks, db, now, protocol);
        ctx.facts = facts;
        ctx.deny_blocking = deny_blocking;
        // Signals only serve calls already waiting: a call blocks after its command ran
        // and the signals were served, and no call joins while the store is locked.
        ctx.readers_waiting = !st.waiters.is_empty();
        ctx.reject_writes = reject;
        if st.journal.is_some() {
            ctx.prop = Some(Propagation::default());
        }
        let out = f(&mut ctx);
        let mut keys = std::mem::take(&mut ctx.signals);
        let flushed_dbs = ctx.flushed_dbs;
        let dirty = ctx.dirty;
        let prop = ctx.prop.take();
        st.dirty += dirty;
        // Keys the active expiry removed before the command: blocked readers see them go
        // (XREADGROUP fails as after DEL) and the log deletes them, as redis-server
        // propagates a DEL for each expired key.
        if !expired.is_empty() {
            if let Some(j) = st.journal.as_mut() {
                for (edb, key) in &expired {
                    let del = [LogRecord::Cmd(vec![b"DEL".to_vec(), key.clone()])];
                    // A failure stops the log (the journal keeps the record).
                    let _ = j.append(*edb, now, &del);
                }
            }
            for k in expired {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        let signals = Signals { keys, flushed_dbs };
        let mut failed = None;
        if let (Some(j), Some(p)) = (st.journal.as_mut(), prop) {
            if !p.also.is_empty() {
                st.logged += 1;
                if let Err(e) = j.append(db, now, &p.also) {
                    // Under `always` (an error only there): the change is in memory but
                    // not durable; say so. Further writes are refused.
                    failed = Some(CmdError::misconf(crate::error::io_reason(&e)));
                }
            }
        }
        (out, signals, failed)
    }

    fn check_db(db: usize) -> Result<(), Reply> {
        if db >= NUM_DBS {
            return Err(CmdError::err("DB index is out of range").into());
        }
        Ok(())
    }

    /// Execute a command (blocking commands wait as long as needed).
    pub fn execute(&self, args: &[&[u8]]) -> Reply {
        self.execute_in(0, 2, args)
    }

    /// Execute a command on database `db`, replying with RESP `protocol` shapes.
    pub fn execute_in(&self, db: usize, protocol: u8, args: &[&[u8]]) -> Reply {
        let mut step = self.start(db, protocol, args);
        loop {
            match step {
                Step::Done(r) => return r,
                Step::Blocked(call) => step = self.wait(call, None),
            }
        }
    }

    /// Current store time in ms.
    pub fn now_ms(&self) -> i64 {
        self.shared.state.lock().ks.clock.now_ms()
    }

    /// Pin the clock to `ms`, or return to the system clock with `None`.
    pub fn set_clock(&self, ms: Option<i64>) {
        let mut st = self.shared.state.lock();
        st.ks.clock.set(ms);
        // Waiters re-check their claim deadlines against the new time.
        drop(st);
        self.shared.cond.notify_all();
    }

    /// Advance the (pinned) clock by `delta` ms.
    pub fn advance_clock(&self, delta: i64) {
        let mut st = self.shared.state.lock();
        st.ks.clock.advance(delta);
        drop(st);
        self.shared.cond.notify_all();
    }

    /// Read a setting.
    pub fn config_get(&self, name: &str) -> Option<String> {
        self.shared.state.lock().ks.config.get(name)
    }

    /// Change a setting (logged in a durable store: node sizes affect replay). The new
    /// value is checked on a copy and applied only once the log has it, so a refused
    /// value or a failed log write leaves the setting as it was.
    pub fn config_set(&self, name: &str, value: &str) -> Result<(), ConfigError> {
        let mut st = self.shared.state.lock();
        let mut next = st.ks.config.clone();
        next.set(name, value)?;
        let lower = name.to_ascii_lowercase();
        let limit = crate::base::config::LIMIT_NAMES.contains(&lower.as_str());
        if let (Some(j), false) = (st.journal.as_mut(), limit) {
            let v = next.get(name).unwrap_or_default();
            j.append_config(&lower, &v).map_err(|e| {
                ConfigError::Persist(PersistError::io_failure(crate::error::io_reason(&e)))
            })?;
        }
        st.ks.config = next;
        Ok(())
    }

    /// Run `f` with exclusive access to the keyspace.
    pub fn with_keyspace<R>(&self, f: impl FnOnce(&mut Keyspace) -> R) -> R {
        let mut st = self.shared.state.lock();
        f(&mut st.ks)
    }

    /// Changes made since the store was opened or last compacted (Redis's
    /// `rdb_changes_since_last_save`).
    pub fn dirty(&self) -> u64 {
        self.shared.state.lock().dirty
    }

    /// Was the store opened read-only?
    pub fn is_read_only(&self) -> bool {
        self.shared.state.lock().read_only
    }

    /// The active expiry of keys that redis-server's cron runs whether or not commands
    /// come: keys whose time passed by the store clock's latest expiry tick are removed
    /// (logged as DELs, their blocked readers served). A server calls it on a timer, so
    /// keys nobody touches go on time (INFO's `keyspace` and `expired_keys`); a command
    /// runs the same work before it runs, so calling it or not never changes a reply.
    pub fn cron(&self) {
        let mut st = self.shared.state.lock();
        if st.closed {
            return;
        }
        let now = st.ks.clock.now_ms();
        if st.ks.next_expiry_tick().is_some_and(|t| t <= now)
            && Self::expire_between_commands(&mut st, now)
        {
            self.shared.cond.notify_all();
        }
    }

    /// The active expiry of keys between commands ([`Keyspace::cron_keys`] at `now`):
    /// removed keys are logged as DELs and their blocked readers served. Returns whether
    /// a waiter must be woken.
    fn expire_between_commands(st: &mut State, now: i64) -> bool {
        let expired = st.ks.cron_keys(now);
        if expired.is_empty() {
            return false;
        }
        if let Some(j) = st.journal.as_mut() {
            for (edb, key) in &expired {
                let del = [LogRecord::Cmd(vec![b"DEL".to_vec(), key.clone()])];
                // A failure stops the log (the journal keeps the record).
                let _ = j.append(*edb, now, &del);
            }
        }
        st.serve(Signals {
            keys: expired,
            flushed_dbs: 0,
        });
        true
    }

    /// Run the IDMP sweep and key expiry now.
    pub fn sweep(&self) {
        let mut st = self.shared.state.lock();
        let now = st.ks.clock.now_ms();
        let expired = st.ks.sweep_now(now);
        if let Some(j) = st.journal.as_mut() {
            for (edb, key) in &expired {
                let del = [LogRecord::Cmd(vec![b"DEL".to_vec(), key.clone()])];
                // A failure stops the log (the journal keeps the record).
                let _ = j.append(*edb, now, &del);
            }
        }
        let sig = Signals {
            keys: expired,
            flushed_dbs: 0,
        };
        if st.serve(sig) {
            self.shared.cond.notify_all();
        }
    }

    /// Check every invariant of every stream.
    pub fn validate(&self) -> Result<(), crate::error::Violation> {
        self.shared
            .state
            .lock()
            .ks
            .validate()
            .map_err(crate::error::Violation::new)
    }

    /// Close the store: blocked callers wake with an error, later commands fail; a
    /// durable store's log is flushed and its lock released.
    pub fn close(&self) {
        let mut st = self.shared.state.lock();
        if let Some(mut j) = st.journal.take() {
            let _ = j.close();
        }
        st.closed = true;
        drop(st);
        self.shared.cond.notify_all();
    }

    /// Has the store been closed?
    pub fn is_closed(&self) -> bool {
        self.shared.state.lock().closed
    }
}
