//! The thread-safe store: a keyspace behind a mutex, command execution, atomic batches,
//! and blocking reads that wait (without holding the lock) until a writer signals one of
//! their keys, the timeout expires, or pending entries become claimable.
//!
//! A blocked command is re-executed when woken, as redis-server does; a spurious wake-up
//! only re-blocks it with its original deadline, so correctness never depends on which
//! writes signal which keys — only latency does.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::command::{self, BlockRequest, Ctx, Outcome};
use crate::config::Config;
use crate::db::{Keyspace, NUM_DBS};
use crate::error::CmdError;
use crate::reply::Reply;

struct State {
    ks: Keyspace,
    /// Sequence number of the latest signal.
    seq: u64,
    /// Number of blocked calls watching each (db, key).
    watched: HashMap<(usize, Vec<u8>), usize>,
    /// Last signal sequence of each watched key.
    signaled: HashMap<(usize, Vec<u8>), u64>,
    /// Bumped by FLUSHALL/FLUSHDB, clock changes and close: wakes every blocked call.
    global_seq: u64,
    closed: bool,
}

impl State {
    fn publish(&mut self, db: usize, signals: Vec<Vec<u8>>, flushed: bool) -> bool {
        let mut wake = false;
        if flushed {
            self.global_seq += 1;
            wake = true;
        }
        if !self.watched.is_empty() {
            for k in signals {
                let key = (db, k);
                if self.watched.contains_key(&key) {
                    self.seq += 1;
                    self.signaled.insert(key, self.seq);
                    wake = true;
                }
            }
        }
        wake
    }

    fn watch(&mut self, db: usize, keys: &[Vec<u8>]) {
        for k in keys {
            *self.watched.entry((db, k.clone())).or_insert(0) += 1;
        }
    }

    fn unwatch(&mut self, db: usize, keys: &[Vec<u8>]) {
        for k in keys {
            let key = (db, k.clone());
            if let Some(n) = self.watched.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    self.watched.remove(&key);
                    self.signaled.remove(&key);
                }
            }
        }
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
    seq: u64,
    global_seq: u64,
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
                    seq: 0,
                    watched: HashMap::new(),
                    signaled: HashMap::new(),
                    global_seq: 0,
                    closed: false,
                }),
                cond: Condvar::new(),
            }),
        }
    }

    fn run(
        st: &mut State,
        db: usize,
        protocol: u8,
        args: &[&[u8]],
        deny_blocking: bool,
    ) -> (Outcome, bool) {
        let now = st.ks.clock.now_ms();
        st.ks.sweep(now, false);
        let mut ctx = Ctx::new(&mut st.ks, db, now, protocol);
        ctx.deny_blocking = deny_blocking;
        let out = command::execute(&mut ctx, args);
        let signals = std::mem::take(&mut ctx.signals);
        let flushed = ctx.flushed;
        let wake = st.publish(db, signals, flushed);
        (out, wake)
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
        match out {
            Outcome::Reply(r) => Step::Done(r),
            Outcome::Block(req) => {
                let deadline = if req.timeout_ms > 0 {
                    Some(Instant::now() + Duration::from_millis(req.timeout_ms as u64))
                } else {
                    None
                };
                st.watch(db, &req.keys);
                let call = BlockedCall {
                    db,
                    protocol,
                    seq: st.seq,
                    global_seq: st.global_seq,
                    req,
                    deadline,
                };
                Step::Blocked(call)
            }
        }
    }

    /// Wait for a blocked call to be woken (for at most `max_wait` when given), then
    /// re-execute it. Returns [`Step::Blocked`] again when it must keep waiting, and a null
    /// array when its timeout expired.
    pub fn wait(&self, call: BlockedCall, max_wait: Option<Duration>) -> Step {
        let started = Instant::now();
        let mut st = self.shared.state.lock();
        loop {
            if st.closed {
                st.unwatch(call.db, &call.req.keys);
                return Step::Done(Reply::Error(CLOSED_ERROR.into()));
            }
            let now_inst = Instant::now();
            if call.deadline.is_some_and(|d| now_inst >= d) {
                st.unwatch(call.db, &call.req.keys);
                return Step::Done(Reply::NilArray);
            }
            let signaled = st.global_seq != call.global_seq
                || call.req.keys.iter().any(|k| {
                    st.signaled
                        .get(&(call.db, k.clone()))
                        .is_some_and(|&s| s > call.seq)
                });
            let claim_due = call
                .req
                .claim_wake_at
                .is_some_and(|t| st.ks.clock.now_ms() > t);
            if signaled || claim_due {
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
        st.unwatch(call.db, &call.req.keys);
        let args: Vec<Vec<u8>> = std::mem::take(&mut call.req.args);
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        let (out, wake) = Self::run(&mut st, call.db, call.protocol, &refs, false);
        if wake {
            self.shared.cond.notify_all();
        }
        match out {
            Outcome::Reply(r) => Step::Done(r),
            Outcome::Block(req) => {
                // Keep the original deadline, as redis-server does for re-executed commands.
                st.watch(call.db, &req.keys);
                call.seq = st.seq;
                call.global_seq = st.global_seq;
                call.req = req;
                Step::Blocked(call)
            }
        }
    }

    /// Abandon a blocked call (e.g. the caller was interrupted).
    pub fn cancel(&self, call: BlockedCall) {
        let mut st = self.shared.state.lock();
        st.unwatch(call.db, &call.req.keys);
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
        st.global_seq += 1;
        drop(st);
        self.shared.cond.notify_all();
    }

    /// Advance the (pinned) clock by `delta` ms.
    pub fn advance_clock(&self, delta: i64) {
        let mut st = self.shared.state.lock();
        st.ks.clock.advance(delta);
        st.global_seq += 1;
        drop(st);
        self.shared.cond.notify_all();
    }

    /// Read a setting.
    pub fn config_get(&self, name: &str) -> Option<String> {
        self.shared.state.lock().ks.config.get(name)
    }

    /// Change a setting.
    pub fn config_set(&self, name: &str, value: &str) -> Result<(), String> {
        self.shared.state.lock().ks.config.set(name, value)
    }

    /// Run `f` with exclusive access to the keyspace.
    pub fn with_keyspace<R>(&self, f: impl FnOnce(&mut Keyspace) -> R) -> R {
        let mut st = self.shared.state.lock();
        f(&mut st.ks)
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

    /// Close the store: blocked callers wake with an error, later commands fail.
    pub fn close(&self) {
        let mut st = self.shared.state.lock();
        st.closed = true;
        st.global_seq += 1;
        drop(st);
        self.shared.cond.notify_all();
    }

    /// Has the store been closed?
    pub fn is_closed(&self) -> bool {
        self.shared.state.lock().closed
    }
}
