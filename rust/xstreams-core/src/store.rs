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

use crate::command::{self, BlockRequest, Ctx, LogRecord, Outcome, Propagation};
use crate::config::Config;
use crate::db::{Keyspace, Value, NUM_DBS};
use crate::error::CmdError;
use crate::persist::{self, Fsync, Journal, LoadReport, Options, PersistError};
use crate::reply::Reply;

/// A blocked call as the store tracks it: what to run when one of its keys is ready, and
/// its place in line.
struct Waiter {
    db: usize,
    protocol: u8,
    req: BlockRequest,
    deadline: Option<Instant>,
    /// Place in line (redis-server serves the clients blocked on a key in the order they
    /// blocked); a re-executed command that blocks again goes to the end.
    order: u64,
    /// The reply, once a writer has served it (the caller collects it in `wait`).
    done: Option<Reply>,
}

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
}

/// What a command signaled for blocked readers.
#[derive(Default)]
struct Signals {
    keys: Vec<(usize, Vec<u8>)>,
    flushed_dbs: u32,
}

impl Signals {
    fn add(&mut self, keys: Vec<(usize, Vec<u8>)>, flushed_dbs: u32) {
        for k in keys {
            if !self.keys.contains(&k) {
                self.keys.push(k);
            }
        }
        self.flushed_dbs |= flushed_dbs;
    }

    fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.flushed_dbs == 0
    }
}

impl State {
    /// May a change of `key` in `db` serve waiter `w`? A reader is served when the key is a
    /// stream; XREADGROUP also when it was deleted or replaced (its group went with it).
    fn serves(&self, w: &Waiter, db: usize, key: &[u8], now_ms: i64) -> bool {
        w.db == db
            && w.req.keys.iter().any(|k| k == key)
            && (w.req.unblock_on_nokey
                || matches!(
                    self.ks.dbs[db].get(key),
                    Some(e) if matches!(e.value, Value::Stream(_))
                        && e.expire_at.is_none_or(|t| t > now_ms)
                ))
    }

    /// Waiting calls (not served, not timed out) in line order.
    fn waiting(&self, now: Instant) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self
            .waiters
            .iter()
            .filter(|(_, w)| w.done.is_none() && w.deadline.is_none_or(|d| d > now))
            .map(|(&id, w)| (w.order, id))
            .collect();
        v.sort_unstable();
        v
    }

    /// Serve the blocked calls the signaled keys make ready, as redis-server does after
    /// every command: key by key in signal order, the callers blocked on a key in the
    /// order they blocked, each re-executed now; what they change is served in turn.
    /// Returns whether any call got its reply.
    fn serve(&mut self, mut sig: Signals) -> bool {
        let mut served = false;
        while !sig.is_empty() && !self.waiters.is_empty() {
            let now = Instant::now();
            let mut next = Signals::default();
            let run = |st: &mut State, id: u64, next: &mut Signals| {
                let w = st.waiters.get(&id).expect("waiting call");
                let (db, protocol) = (w.db, w.protocol);
                let args = w.req.args.clone();
                let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
                let (out, s) = Store::run(st, db, protocol, &refs, false);
                next.add(s.keys, s.flushed_dbs);
                let order = st.next_order();
                let w = st.waiters.get_mut(&id).expect("waiting call");
                match out {
                    Outcome::Reply(r) => {
                        w.done = Some(r);
                        true
                    }
                    Outcome::Block(req) => {
                        w.req = req;
                        w.order = order;
                        false
                    }
                }
            };
            let now_ms = self.ks.clock.now_ms();
            // The line is fixed for the round: a call runs at most once per round (`ran`)
            // and running one never adds another.
            let line = self.waiting(now);
            let mut ran: Vec<u64> = Vec::new();
            for (db, key) in &sig.keys {
                for &(_, id) in &line {
                    if ran.contains(&id) || !self.serves(&self.waiters[&id], *db, key, now_ms) {
                        continue;
                    }
                    ran.push(id);
                    served |= run(self, id, &mut next);
                }
            }
            if sig.flushed_dbs != 0 {
                for &(_, id) in &line {
                    let w = &self.waiters[&id];
                    if ran.contains(&id) || sig.flushed_dbs & (1 << w.db) == 0 {
                        continue;
                    }
                    let ready = w.req.keys.iter().any(|k| self.serves(w, w.db, k, now_ms));
                    if ready {
                        ran.push(id);
                        served |= run(self, id, &mut next);
                    }
                }
            }
            sig = next;
        }
        served
    }

    fn next_order(&mut self) -> u64 {
        self.next_order += 1;
        self.next_order
    }

    fn block(&mut self, db: usize, protocol: u8, req: BlockRequest) -> (u64, Option<Instant>) {
        self.next_call += 1;
        let deadline = (req.timeout_ms > 0)
            .then(|| Instant::now() + Duration::from_millis(req.timeout_ms as u64));
        let order = self.next_order();
        self.waiters.insert(
            self.next_call,
            Waiter {
                db,
                protocol,
                req,
                deadline,
                order,
                done: None,
            },
        );
        (self.next_call, deadline)
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
    /// The store's ID of the call; 0 once the store no longer tracks it.
    id: u64,
    deadline: Option<Instant>,
    shared: Weak<Shared>,
}

impl Drop for BlockedCall {
    fn drop(&mut self) {
        // A call abandoned while in line leaves it (a reply already served to it is lost,
        // as for a client that disconnects).
        if self.id != 0 {
            if let Some(sh) = self.shared.upgrade() {
                sh.state.lock().waiters.remove(&self.id);
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
                    waiters: std::collections::HashMap::new(),
                    next_call: 0,
                    next_order: 0,
                    closed: false,
                    journal: None,
                    read_only: false,
                    dirty: 0,
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
                    if let Err(e) = j.append(*edb, now, &del) {
                        j.failed = Some(e.to_string());
                    }
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
                if let Err(e) = j.append(db, now, &p.also) {
                    // As redis-server: the change is in memory but not durable; say so and
                    // refuse further writes until the store is reopened.
                    let msg = e.to_string();
                    j.failed = Some(msg.clone());
                    failed = Some(CmdError::coded(format!(
                        "MISCONF Errors writing to the AOF file: {msg}"
                    )));
                }
            }
        }
        (out, signals, failed)
    }

    /// Exclusive access to the store for a sequence of typed commands (see [`Session`]).
    /// Fails when the store is closed.
    pub fn session(&self) -> Result<Session<'_>, CmdError> {
        let st = self.shared.state.lock();
        if st.closed {
            return Err(CmdError::coded(CLOSED_ERROR));
        }
        Ok(Session {
            store: self,
            st,
            sig: Signals::default(),
        })
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
        let (out, sig) = Self::run(&mut st, db, protocol, args, false);
        if st.serve(sig) {
            self.shared.cond.notify_all();
        }
        self.maybe_compact(&mut st);
        match out {
            Outcome::Reply(r) => Step::Done(r),
            Outcome::Block(req) => {
                let (id, deadline) = st.block(db, protocol, req);
                Step::Blocked(BlockedCall {
                    id,
                    deadline,
                    shared: Arc::downgrade(&self.shared),
                })
            }
        }
    }

    /// Wait for a blocked call to be served (for at most `max_wait` when given). Returns
    /// [`Step::Blocked`] again when it must keep waiting, and a null array when its
    /// timeout expired.
    pub fn wait(&self, mut call: BlockedCall, max_wait: Option<Duration>) -> Step {
        let started = Instant::now();
        let mut st = self.shared.state.lock();
        // The claim time of the last re-run: never re-run twice for the same one.
        let mut rerun_at: Option<i64> = None;
        loop {
            if st.closed {
                st.waiters.remove(&call.id);
                call.id = 0;
                return Step::Done(Reply::Error(CLOSED_ERROR.into()));
            }
            let Some(w) = st.waiters.get_mut(&call.id) else {
                call.id = 0;
                return Step::Done(Reply::Error(CLOSED_ERROR.into()));
            };
            if let Some(r) = w.done.take() {
                st.waiters.remove(&call.id);
                call.id = 0;
                return Step::Done(r);
            }
            let now_inst = Instant::now();
            if call.deadline.is_some_and(|d| now_inst >= d) {
                st.waiters.remove(&call.id);
                call.id = 0;
                return Step::Done(Reply::NilArray);
            }
            // XREADGROUP ... CLAIM: pending entries became claimable with time, not with a
            // write; the caller runs its command again itself.
            // An entry idle for exactly min-idle-time is claimable (Redis compares `>=`).
            let claim_at = w.req.claim_wake_at;
            if claim_at.is_some_and(|t| st.ks.clock.now_ms() >= t && rerun_at != Some(t)) {
                rerun_at = claim_at;
                if let Some(r) = self.rerun(&mut st, call.id) {
                    call.id = 0;
                    return Step::Done(r);
                }
                continue;
            }
            if max_wait.is_some_and(|m| now_inst.duration_since(started) >= m) {
                return Step::Blocked(call);
            }
            // Sleep until the earliest of: deadline, claim time (system clock), max_wait.
            let mut until: Option<Instant> = call.deadline;
            if let (Some(t), false) = (claim_at, st.ks.clock.is_pinned()) {
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

    /// Re-execute blocked call `id` now; its reply, or `None` (back in line) if it must
    /// keep waiting.
    fn rerun(&self, st: &mut State, id: u64) -> Option<Reply> {
        let w = st.waiters.get(&id).expect("waiting call");
        let (db, protocol) = (w.db, w.protocol);
        let args = w.req.args.clone();
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        let (out, sig) = Self::run(st, db, protocol, &refs, false);
        let order = st.next_order();
        let result = match out {
            Outcome::Reply(r) => {
                st.waiters.remove(&id);
                Some(r)
            }
            Outcome::Block(req) => {
                let w = st.waiters.get_mut(&id).expect("waiting call");
                w.req = req;
                w.order = order;
                None
            }
        };
        if st.serve(sig) {
            self.shared.cond.notify_all();
        }
        result
    }

    /// Abandon a blocked call (e.g. the caller was interrupted).
    pub fn cancel(&self, mut call: BlockedCall) {
        self.shared.state.lock().waiters.remove(&call.id);
        call.id = 0;
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
        // MULTI/EXEC serves blocked readers after the whole batch; a pipeline after each
        // command.
        let mut sig = Signals::default();
        for c in cmds {
            if st.closed {
                out.push(Reply::Error(CLOSED_ERROR.into()));
                continue;
            }
            let refs: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            let (o, s) = Self::run(&mut st, db, protocol, &refs, true);
            sig.add(s.keys, s.flushed_dbs);
            out.push(match o {
                Outcome::Reply(r) => r,
                Outcome::Block(_) => Reply::NilArray,
            });
            if !atomic {
                if st.serve(std::mem::take(&mut sig)) {
                    self.shared.cond.notify_all();
                }
                MutexGuard::bump(&mut st);
            }
        }
        if st.serve(sig) {
            self.shared.cond.notify_all();
        }
        self.maybe_compact(&mut st);
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
        let limit = crate::config::LIMIT_NAMES.contains(&name.to_ascii_lowercase().as_str());
        if let (Some(j), false) = (st.journal.as_mut(), limit) {
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

    /// Changes made since the store was opened or last compacted (Redis's
    /// `rdb_changes_since_last_save`).
    pub fn dirty(&self) -> u64 {
        self.shared.state.lock().dirty
    }

    /// Was the store opened read-only?
    pub fn is_read_only(&self) -> bool {
        self.shared.state.lock().read_only
    }

    /// Run the IDMP sweep and key expiry now.
    pub fn sweep(&self) {
        let mut st = self.shared.state.lock();
        let now = st.ks.clock.now_ms();
        let expired = st.ks.sweep_now(now);
        if let Some(j) = st.journal.as_mut() {
            for (edb, key) in &expired {
                let del = [LogRecord::Cmd(vec![b"DEL".to_vec(), key.clone()])];
                if let Err(e) = j.append(*edb, now, &del) {
                    j.failed = Some(e.to_string());
                }
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
        drop(st);
        self.shared.cond.notify_all();
    }

    /// Has the store been closed?
    pub fn is_closed(&self) -> bool {
        self.shared.state.lock().closed
    }
}

/// The store locked for a sequence of typed commands (the batch paths): no other command
/// runs until it is dropped. Each [`Session::run`] is one command, exactly as if it had
/// been sent alone (its own command time, write refusal, log record); blocked readers are
/// served when the session ends, as after an atomic batch.
pub struct Session<'a> {
    store: &'a Store,
    st: MutexGuard<'a, State>,
    sig: Signals,
}

impl Session<'_> {
    /// Run `f` as one command on database `db` (RESP2 shapes, never blocking). The error
    /// of a failed log write replaces `f`'s result.
    pub fn run<R>(
        &mut self,
        db: usize,
        f: impl FnOnce(&mut Ctx<'_>) -> Result<R, CmdError>,
    ) -> Result<R, CmdError> {
        let (out, sig, failed) = Store::run_with(&mut self.st, db, 2, true, f);
        self.sig.add(sig.keys, sig.flushed_dbs);
        match failed {
            Some(e) => Err(e),
            None => out,
        }
    }

    /// The keyspace (e.g. to pin the clock between commands).
    pub fn keyspace(&mut self) -> &mut Keyspace {
        &mut self.st.ks
    }

    /// Is the store durable (every command logged)?
    pub fn is_durable(&self) -> bool {
        self.st.journal.is_some()
    }

    /// Was the store opened read-only?
    pub fn is_read_only(&self) -> bool {
        self.st.read_only
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if self.st.serve(std::mem::take(&mut self.sig)) {
            self.store.shared.cond.notify_all();
        }
        self.store.maybe_compact(&mut self.st);
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
    let (dir, disk, seq, copy, now, dirty_before) = {
        let mut st = shared.state.lock();
        let dirty_before = st.dirty;
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
        (dir, j.disk().clone(), seq, st.ks.clone(), now, dirty_before)
    };
    let written = disk.write_snapshot(&dir, seq, &copy, now);
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
