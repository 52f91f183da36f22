//! The thread-safe store: a keyspace behind a mutex, command execution, atomic batches,
//! and blocking reads that wait (without holding the lock) until a writer signals one of
//! their keys, the timeout expires, or pending entries become claimable.
//!
//! A blocked command is re-executed when woken, as redis-server does; a spurious wake-up
//! only re-blocks it with its original deadline, so correctness never depends on which
//! writes signal which keys — only latency does.

use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::command::{self, BlockRequest, Ctx, Outcome, Propagation};
use crate::config::Config;
use crate::db::{Keyspace, Value, NUM_DBS};
use crate::error::CmdError;
use crate::persist::{self, Fsync, Journal, LoadReport, Options, PersistError};
use crate::reply::Reply;

/// A blocked call as the store tracks it.
struct Waiter {
    db: usize,
    keys: Vec<Vec<u8>>,
    /// See [`BlockRequest::unblock_on_nokey`].
    unblock_on_nokey: bool,
    /// Signaled since it blocked: it will run again when no older woken waiter on one of
    /// its keys is still waiting to run (redis-server serves blocked clients of a key in
    /// the order they blocked).
    woken: bool,
}

struct State {
    ks: Keyspace,
    /// Blocked calls by ticket (the order they blocked in).
    waiters: std::collections::BTreeMap<u64, Waiter>,
    next_ticket: u64,
    closed: bool,
    /// The log of a durable store.
    journal: Option<Journal>,
    /// Opened read-only (write commands are refused).
    read_only: bool,
}

impl State {
    /// Mark as woken the waiters that `signals` (and the databases in `flushed_dbs`) make
    /// ready, as redis-server serves keys made ready: a reader wakes when one of its
    /// signaled keys is a stream, and XREADGROUP also when it was deleted or replaced.
    fn publish(&mut self, signals: &[(usize, Vec<u8>)], flushed_dbs: u32) -> bool {
        if self.waiters.is_empty() || (signals.is_empty() && flushed_dbs == 0) {
            return false;
        }
        let now = self.ks.clock.now_ms();
        let dbs = &self.ks.dbs;
        let mut wake = false;
        for w in self.waiters.values_mut() {
            let all = flushed_dbs & (1 << w.db) != 0;
            let ready = w.keys.iter().any(|k| {
                if !all && !signals.iter().any(|(d, s)| *d == w.db && s == k) {
                    return false;
                }
                w.unblock_on_nokey
                    || matches!(
                        dbs[w.db].get(k),
                        Some(e) if matches!(e.value, Value::Stream(_))
                            && e.expire_at.is_none_or(|t| t > now)
                    )
            });
            if ready {
                w.woken = true;
                wake = true;
            }
        }
        wake
    }

    /// Wake every waiter (close).
    fn wake_all(&mut self) {
        for w in self.waiters.values_mut() {
            w.woken = true;
        }
    }

    fn block(&mut self, db: usize, req: &BlockRequest) -> u64 {
        self.next_ticket += 1;
        self.waiters.insert(
            self.next_ticket,
            Waiter {
                db,
                keys: req.keys.clone(),
                unblock_on_nokey: req.unblock_on_nokey,
                woken: false,
            },
        );
        self.next_ticket
    }

    /// May this woken waiter run now: no older woken waiter shares a key with it?
    fn first_in_line(&self, ticket: u64) -> bool {
        let Some(me) = self.waiters.get(&ticket) else {
            return true;
        };
        !self
            .waiters
            .range(..ticket)
            .any(|(_, w)| w.woken && w.db == me.db && w.keys.iter().any(|k| me.keys.contains(k)))
    }
}

struct Shared {
    state: Mutex<State>,
    cond: Condvar,
}

/// A store of streams. Cloning gives another handle to the same store.
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
}

/// A command waiting for data (see [`Store::start`] and [`Store::wait`]).
#[derive(Debug)]
pub struct BlockedCall {
    db: usize,
    protocol: u8,
    req: BlockRequest,
    deadline: Option<Instant>,
    /// Place in line; 0 once the store no longer tracks it.
    ticket: u64,
    shared: Weak<Shared>,
}

impl Drop for BlockedCall {
    fn drop(&mut self) {
        // A call abandoned while still in line must leave it, or younger waiters on its
        // keys would wait for it forever.
        if self.ticket != 0 {
            if let Some(sh) = self.shared.upgrade() {
                sh.state.lock().waiters.remove(&self.ticket);
                sh.cond.notify_all();
            }
        }
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared")
    }
}

/// Progress of a possibly blocking command.
#[derive(Debug)]
pub enum Step {
    /// The command finished with this reply.
    Done(Reply),
    /// The command waits for data.
    Blocked(BlockedCall),
}

/// Error of the commands of an atomic batch discarded because one was rejected.
pub const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";

/// Error of write commands on a store opened read-only.
pub const READ_ONLY_ERROR: &str = "READONLY You can't write against a read only store.";

/// Error line returned to a blocked caller when the store is closed.
pub const CLOSED_ERROR: &str = "ERR the store was closed";

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
                    waiters: std::collections::BTreeMap::new(),
                    next_ticket: 0,
                    closed: false,
                    journal: None,
                    read_only: false,
                }),
                cond: Condvar::new(),
            }),
        }
    }

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
                ks.config.set(n, v).map_err(|m| PersistError {
                    kind: persist::ErrorKind::Io,
                    message: m,
                })?;
            }
            let store = Store::from_keyspace(ks);
            store.shared.state.lock().read_only = true;
            return Ok((store, report));
        }
        let (ks, journal, report) = persist::open(dir, config, &opts)?;
        let store = Store::from_keyspace(ks);
        let fsync = journal.fsync;
        store.shared.state.lock().journal = Some(journal);
        if fsync == Fsync::EverySec {
            let weak = Arc::downgrade(&store.shared);
            std::thread::Builder::new()
                .name("xstreams-fsync".into())
                .spawn(move || fsync_loop(weak))
                .map_err(|e| PersistError {
                    kind: persist::ErrorKind::Io,
                    message: e.to_string(),
                })?;
        }
        Ok((store, report))
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

    fn run(
        st: &mut State,
        db: usize,
        protocol: u8,
        args: &[&[u8]],
        deny_blocking: bool,
    ) -> (Outcome, bool) {
        let now = st.ks.command_time();
        st.ks.sweep(now, false);
        let reject = if st.read_only {
            Some(CmdError::coded(READ_ONLY_ERROR))
        } else {
            st.journal
                .as_ref()
                .and_then(|j| j.failed.as_ref())
                .map(|e| CmdError::coded(format!("MISCONF Errors writing to the AOF file: {e}")))
        };
        let mut ctx = Ctx::new(&mut st.ks, db, now, protocol);
        ctx.deny_blocking = deny_blocking;
        ctx.reject_writes = reject;
        if st.journal.is_some() {
            ctx.prop = Some(Propagation::default());
        }
        let mut out = command::execute(&mut ctx, args);
        let signals = std::mem::take(&mut ctx.signals);
        let flushed_dbs = ctx.flushed_dbs;
        let prop = ctx.prop.take();
        if let (Some(j), Some(p)) = (st.journal.as_mut(), prop) {
            if !p.also.is_empty() {
                if let Err(e) = j.append(db, now, &p.also) {
                    // As redis-server: the change is in memory but not durable; say so and
                    // refuse further writes until the store is reopened.
                    let msg = e.to_string();
                    j.failed = Some(msg.clone());
                    out = Outcome::Reply(Reply::Error(format!(
                        "MISCONF Errors writing to the AOF file: {msg}"
                    )));
                }
            }
        }
        let wake = st.publish(&signals, flushed_dbs);
        (out, wake)
    }

    fn maybe_compact(&self, st: &mut State) {
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

    /// Start a command; a blocking command that must wait returns [`Step::Blocked`].
    pub fn start(&self, db: usize, protocol: u8, args: &[&[u8]]) -> Step {
        if let Err(r) = Self::check_db(db) {
            return Step::Done(r);
        }
        let mut st = self.shared.state.lock();
        if st.closed {
            return Step::Done(Reply::Error(CLOSED_ERROR.into()));
        }
        let (out, wake) = Self::run(&mut st, db, protocol, args, false);
        if wake {
            self.shared.cond.notify_all();
        }
        self.maybe_compact(&mut st);
        match out {
            Outcome::Reply(r) => Step::Done(r),
            Outcome::Block(req) => {
                let deadline = if req.timeout_ms > 0 {
                    Some(Instant::now() + Duration::from_millis(req.timeout_ms as u64))
                } else {
                    None
                };
                let ticket = st.block(db, &req);
                let shared = Arc::downgrade(&self.shared);
                Step::Blocked(BlockedCall {
                    db,
                    protocol,
                    req,
                    deadline,
                    ticket,
                    shared,
                })
            }
        }
    }

    /// Wait for a blocked call to be woken (for at most `max_wait` when given), then
    /// re-execute it. Returns [`Step::Blocked`] again when it must keep waiting, and a null
    /// array when its timeout expired.
    pub fn wait(&self, mut call: BlockedCall, max_wait: Option<Duration>) -> Step {
        let started = Instant::now();
        let mut st = self.shared.state.lock();
        loop {
            if st.closed {
                st.waiters.remove(&call.ticket);
                call.ticket = 0;
                return Step::Done(Reply::Error(CLOSED_ERROR.into()));
            }
            let now_inst = Instant::now();
            if call.deadline.is_some_and(|d| now_inst >= d) {
                st.waiters.remove(&call.ticket);
                call.ticket = 0;
                self.shared.cond.notify_all();
                return Step::Done(Reply::NilArray);
            }
            let claim_due = call
                .req
                .claim_wake_at
                .is_some_and(|t| st.ks.clock.now_ms() > t);
            if claim_due {
                if let Some(w) = st.waiters.get_mut(&call.ticket) {
                    w.woken = true;
                }
            }
            let woken = st.waiters.get(&call.ticket).is_none_or(|w| w.woken);
            if woken && st.first_in_line(call.ticket) {
                return self.reexecute(st, call);
            }
            if max_wait.is_some_and(|m| now_inst.duration_since(started) >= m) {
                return Step::Blocked(call);
            }
            // Sleep until the earliest of: deadline, claim time (system clock), max_wait.
            let mut until: Option<Instant> = call.deadline;
            if let (Some(t), false) = (call.req.claim_wake_at, st.ks.clock.is_pinned()) {
                let ms = (t - st.ks.clock.now_ms()).max(0) as u64 + 1;
                let at = now_inst + Duration::from_millis(ms);
                until = Some(until.map_or(at, |u| u.min(at)));
            }
            if let Some(m) = max_wait {
                let at = started + m;
                until = Some(until.map_or(at, |u| u.min(at)));
            }
            match until {
                Some(at) => {
                    self.shared.cond.wait_until(&mut st, at);
                }
                None => self.shared.cond.wait(&mut st),
            }
        }
    }

    fn reexecute(&self, mut st: MutexGuard<'_, State>, mut call: BlockedCall) -> Step {
        st.waiters.remove(&call.ticket);
        call.ticket = 0;
        let args: Vec<Vec<u8>> = std::mem::take(&mut call.req.args);
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        let (out, _) = Self::run(&mut st, call.db, call.protocol, &refs, false);
        // Whatever happened, the next waiter in line may run now.
        self.shared.cond.notify_all();
        match out {
            Outcome::Reply(r) => Step::Done(r),
            Outcome::Block(req) => {
                // Back at the end of the line, keeping the original deadline, as
                // redis-server does for re-executed commands.
                call.ticket = st.block(call.db, &req);
                call.req = req;
                Step::Blocked(call)
            }
        }
    }

    /// Abandon a blocked call (e.g. the caller was interrupted).
    pub fn cancel(&self, mut call: BlockedCall) {
        let mut st = self.shared.state.lock();
        st.waiters.remove(&call.ticket);
        call.ticket = 0;
        drop(st);
        self.shared.cond.notify_all();
    }

    /// Execute several commands in order. With `atomic`, no other command runs in
    /// between and, as with MULTI/EXEC, a command rejected before running (unknown
    /// command, wrong number of arguments) discards the whole batch: its slot holds its
    /// error, every other slot `EXECABORT`. Blocking commands never wait inside a batch.
    pub fn execute_batch(
        &self,
        db: usize,
        protocol: u8,
        cmds: &[Vec<Vec<u8>>],
        atomic: bool,
    ) -> Vec<Reply> {
        if let Err(r) = Self::check_db(db) {
            return cmds.iter().map(|_| r.clone()).collect();
        }
        if atomic {
            let checks: Vec<Option<CmdError>> = cmds
                .iter()
                .map(|c| {
                    let refs: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
                    command::resolve(&refs).err()
                })
                .collect();
            if checks.iter().any(|c| c.is_some()) {
                return checks
                    .into_iter()
                    .map(|c| match c {
                        Some(e) => e.into(),
                        None => Reply::Error(EXECABORT.into()),
                    })
                    .collect();
            }
        }
        let mut out = Vec::with_capacity(cmds.len());
        let mut st = self.shared.state.lock();
        let mut wake_any = false;
        for c in cmds {
            if st.closed {
                out.push(Reply::Error(CLOSED_ERROR.into()));
                continue;
            }
            let refs: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            let (o, wake) = Self::run(&mut st, db, protocol, &refs, true);
            wake_any |= wake;
            out.push(match o {
                Outcome::Reply(r) => r,
                Outcome::Block(_) => Reply::NilArray,
            });
            if !atomic {
                if wake_any {
                    self.shared.cond.notify_all();
                    wake_any = false;
                }
                MutexGuard::bump(&mut st);
            }
        }
        self.maybe_compact(&mut st);
        drop(st);
        if wake_any {
            self.shared.cond.notify_all();
        }
        out
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

    /// Change a setting (logged in a durable store: node sizes affect replay).
    pub fn config_set(&self, name: &str, value: &str) -> Result<(), String> {
        let mut st = self.shared.state.lock();
        st.ks.config.set(name, value)?;
        let v = st.ks.config.get(name).unwrap_or_default();
        if let Some(j) = st.journal.as_mut() {
            j.append_config(&name.to_ascii_lowercase(), &v)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Run `f` with exclusive access to the keyspace.
    pub fn with_keyspace<R>(&self, f: impl FnOnce(&mut Keyspace) -> R) -> R {
        let mut st = self.shared.state.lock();
        f(&mut st.ks)
    }

    /// Like [`Store::with_keyspace`] for code that runs commands on the keyspace directly:
    /// the keys they signal (collected by `f`) wake blocked readers afterwards.
    pub(crate) fn with_keyspace_signaling<R>(
        &self,
        f: impl FnOnce(&mut Keyspace, &mut Vec<(usize, Vec<u8>)>, &mut u32) -> R,
    ) -> R {
        let mut st = self.shared.state.lock();
        let (mut signals, mut flushed_dbs) = (Vec::new(), 0);
        let r = f(&mut st.ks, &mut signals, &mut flushed_dbs);
        if st.publish(&signals, flushed_dbs) {
            self.shared.cond.notify_all();
        }
        r
    }

    /// Was the store opened read-only?
    pub fn is_read_only(&self) -> bool {
        self.shared.state.lock().read_only
    }

    /// Run the IDMP sweep and key expiry now.
    pub fn sweep(&self) {
        let mut st = self.shared.state.lock();
        let now = st.ks.clock.now_ms();
        st.ks.sweep(now, true);
    }

    /// Check every invariant of every stream.
    pub fn validate(&self) -> Result<(), String> {
        self.shared.state.lock().ks.validate()
    }

    /// Close the store: blocked callers wake with an error, later commands fail; a
    /// durable store's log is flushed and its lock released.
    pub fn close(&self) {
        let mut st = self.shared.state.lock();
        if let Some(mut j) = st.journal.take() {
            let _ = j.close();
        }
        st.closed = true;
        st.wake_all();
        drop(st);
        self.shared.cond.notify_all();
    }

    /// Has the store been closed?
    pub fn is_closed(&self) -> bool {
        self.shared.state.lock().closed
    }
}

/// Background fsync once per second (`appendfsync everysec`); ends with the store.
fn fsync_loop(weak: Weak<Shared>) {
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let Some(shared) = weak.upgrade() else { return };
        let handle = {
            let mut st = shared.state.lock();
            match st.journal.as_mut() {
                Some(j) if j.unsynced => {
                    j.unsynced = false;
                    j.sync_handle().ok()
                }
                Some(_) => None,
                None => return,
            }
        };
        if let Some(f) = handle {
            if let Err(e) = f.sync_data() {
                // As redis-server: stop accepting writes that could not be made durable.
                if let Some(j) = shared.state.lock().journal.as_mut() {
                    j.failed = Some(format!("fsync failed: {e}"));
                }
            }
        }
        drop(shared);
    }
}

fn compact_shared(shared: &Arc<Shared>) -> Result<(), PersistError> {
    let io = |e: std::io::Error| PersistError {
        kind: persist::ErrorKind::Io,
        message: e.to_string(),
    };
    let (dir, seq, copy, now) = {
        let mut st = shared.state.lock();
        let now = st.ks.clock.now_ms();
        let cfg = st.ks.config.clone();
        let Some(j) = st.journal.as_mut() else {
            return Err(PersistError {
                kind: persist::ErrorKind::Io,
                message: "not a durable store".into(),
            });
        };
        if j.compacting {
            return Err(PersistError {
                kind: persist::ErrorKind::Io,
                message: "a compaction is already running".into(),
            });
        }
        let seq = j.begin_compaction(&cfg).map_err(io)?;
        let dir = j.dir().to_path_buf();
        (dir, seq, st.ks.clone(), now)
    };
    let written = persist::write_snapshot(&dir, seq, &copy, now);
    drop(copy);
    let mut st = shared.state.lock();
    let Some(j) = st.journal.as_mut() else {
        return Err(PersistError {
            kind: persist::ErrorKind::Io,
            message: "the store was closed".into(),
        });
    };
    match written {
        Ok(size) => {
            let old = j.finish_compaction(seq, size).map_err(io)?;
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
