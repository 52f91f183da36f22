//! Blocking reads: the calls waiting for data, served in line order when a writer signals
//! one of their keys, re-executed when woken; pending entries that become claimable with
//! time wake XREADGROUP ... CLAIM callers.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::command::reply::Reply;
use crate::command::{self, BlockRequest, Outcome, OwnedReadArgs, ReadArgs};
use crate::error::CmdError;
use crate::keyspace::db::{Value, NUM_DBS};
use crate::structures::entries::Entries;

use super::{Shared, State, Store};

/// A blocked call as the store tracks it: what to run when one of its keys is ready, and
/// its place in line.
pub(super) struct Waiter {
    db: usize,
    protocol: u8,
    req: BlockRequest,
    deadline: Option<Instant>,
    /// Place in line (redis-server serves the clients blocked on a key in the order they
    /// blocked); a re-executed command that blocks again goes to the end.
    order: u64,
    /// A typed read (its arguments; served as [`Entries`]), or `None` for a command
    /// given as arguments (served a reply).
    typed: Option<OwnedReadArgs>,
    /// The result, once a writer has served it (the caller collects it in `wait`).
    done: Option<Served>,
}

/// What a blocked call was served.
enum Served {
    Reply(Reply),
    Entries(Box<Result<Entries, CmdError>>),
}

/// How a wait ended.
enum Waited {
    Served(Served),
    TimedOut,
    Closed,
    Blocked(BlockedCall),
}

/// Progress of a typed read that may block (see [`Store::start_read`]).
// Returned once per call and matched at once: boxing the entries would only add an
// allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum ReadStep {
    /// The read finished: the entries served (none when its timeout expired), or its
    /// error.
    Done(Result<Entries, CmdError>),
    /// The read waits for data.
    Blocked(BlockedCall),
}

/// What a command signaled for blocked readers.
#[derive(Default)]
pub(super) struct Signals {
    pub(super) keys: Vec<(usize, Vec<u8>)>,
    pub(super) flushed_dbs: u32,
}

impl Signals {
    #[inline]
    pub(super) fn add(&mut self, keys: Vec<(usize, Vec<u8>)>, flushed_dbs: u32) {
        self.flushed_dbs |= flushed_dbs;
        for k in keys {
            if !self.keys.contains(&k) {
                self.keys.push(k);
            }
        }
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
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
    /// Returns whether any call got its reply. Inside a step run in parts
    /// ([`Store::begin_parts`]) the keys are kept for its end instead.
    pub(super) fn serve(&mut self, mut sig: Signals) -> bool {
        if let Some(held) = self.held.as_mut() {
            // A step run in parts: its callers are served when it ends (`end_parts`).
            held.add(sig.keys, sig.flushed_dbs);
            return false;
        }
        let mut served = false;
        while !sig.is_empty() && !self.waiters.is_empty() {
            let now = Instant::now();
            let mut next = Signals::default();
            let run = |st: &mut State, id: u64, next: &mut Signals| {
                let (out, s) = st.run_waiter(id);
                next.add(s.keys, s.flushed_dbs);
                let order = st.next_order();
                let w = st.waiters.get_mut(&id).expect("waiting call");
                match out {
                    Ok(done) => {
                        w.done = Some(done);
                        true
                    }
                    Err(req) => {
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

    /// Run waiting call `id` again: what it was served, or the request to keep blocking
    /// with; and what it signaled.
    fn run_waiter(&mut self, id: u64) -> (Result<Served, BlockRequest>, Signals) {
        let w = self.waiters.get(&id).expect("waiting call");
        let (db, protocol) = (w.db, w.protocol);
        if let Some(typed) = w.typed.clone() {
            let mut out = Entries::new();
            let (r, sig, failed) = Store::run_with(self, db, 2, false, |ctx| {
                typed.with(|a| command::read_typed_or_block(ctx, a, &mut out))
            });
            let done = match (failed, r) {
                (Some(e), _) | (None, Err(e)) => Ok(Served::Entries(Box::new(Err(e)))),
                (None, Ok(Some((req, _)))) => Err(req),
                (None, Ok(None)) => Ok(Served::Entries(Box::new(Ok(out)))),
            };
            return (done, sig);
        }
        let args = w.req.args.clone();
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        let (out, sig) = Store::run(self, db, protocol, &refs, false);
        let done = match out {
            Outcome::Reply(r) => Ok(Served::Reply(r)),
            Outcome::Block(req) => Err(req),
        };
        (done, sig)
    }

    fn next_order(&mut self) -> u64 {
        self.next_order += 1;
        self.next_order
    }

    fn block(
        &mut self,
        db: usize,
        protocol: u8,
        req: BlockRequest,
        typed: Option<OwnedReadArgs>,
    ) -> (u64, Option<Instant>) {
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
                typed,
                done: None,
            },
        );
        (self.next_call, deadline)
    }
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

/// Progress of a possibly blocking command.
#[derive(Debug)]
pub enum Step {
    /// The command finished with this reply.
    Done(Reply),
    /// The command waits for data.
    Blocked(BlockedCall),
}

impl Store {
    /// Start a command; a blocking command that must wait returns [`Step::Blocked`].
    pub fn start(&self, db: usize, protocol: u8, args: &[&[u8]]) -> Step {
        if let Err(r) = Self::check_db(db) {
            return Step::Done(r);
        }
        let mut st = self.shared.state.lock();
        if st.closed {
            return Step::Done(CmdError::closed().into());
        }
        let (out, sig) = Self::run(&mut st, db, protocol, args, false);
        if st.serve(sig) {
            self.shared.cond.notify_all();
        }
        self.maybe_compact(&mut st);
        match out {
            Outcome::Reply(r) => Step::Done(r),
            Outcome::Block(req) => Step::Blocked(self.blocked(&mut st, db, protocol, req, None)),
        }
    }

    fn blocked(
        &self,
        st: &mut State,
        db: usize,
        protocol: u8,
        req: BlockRequest,
        typed: Option<OwnedReadArgs>,
    ) -> BlockedCall {
        let (id, deadline) = st.block(db, protocol, req, typed);
        BlockedCall {
            id,
            deadline,
            shared: Arc::downgrade(&self.shared),
        }
    }

    /// XREAD / XREADGROUP from typed arguments on database `db`, blocking as the commands
    /// do when `args.timeout` is not -1 (0: forever): the entries served, or
    /// [`ReadStep::Blocked`] to [`Store::wait_read`] on. A blocked read is served in line
    /// with the blocked commands, and what it is served goes straight into [`Entries`].
    ///
    /// ```
    /// use xstreams_core::command::ReadArgs;
    /// use xstreams_core::store::ReadStep;
    /// use xstreams_core::Store;
    ///
    /// let store = Store::default();
    /// let (keys, ids): ([&[u8]; 1], [&[u8]; 1]) = ([b"events"], [b"$"]);
    /// let mut args = ReadArgs::xread(&keys, &ids);
    /// args.timeout = 0; // BLOCK 0
    /// let ReadStep::Blocked(call) = store.start_read(0, &args) else { panic!() };
    /// store.execute(&[b"XADD", b"events", b"1-1", b"f", b"v"]);
    /// let ReadStep::Done(got) = store.wait_read(call, None) else { panic!() };
    /// assert_eq!(got.unwrap().len(), 1);
    /// ```
    pub fn start_read(&self, db: usize, args: &ReadArgs<'_>) -> ReadStep {
        if db >= NUM_DBS {
            return ReadStep::Done(Err(CmdError::db_index_out_of_range()));
        }
        let mut st = self.shared.state.lock();
        if st.closed {
            return ReadStep::Done(Err(CmdError::closed()));
        }
        let mut out = Entries::new();
        let (r, sig, failed) = Self::run_with(&mut st, db, 2, false, |ctx| {
            command::read_typed_or_block(ctx, args, &mut out)
        });
        if st.serve(sig) {
            self.shared.cond.notify_all();
        }
        self.maybe_compact(&mut st);
        match (failed, r) {
            (Some(e), _) | (None, Err(e)) => ReadStep::Done(Err(e)),
            (None, Ok(None)) => ReadStep::Done(Ok(out)),
            (None, Ok(Some((req, typed)))) => {
                ReadStep::Blocked(self.blocked(&mut st, db, 2, req, Some(typed)))
            }
        }
    }

    /// Wait for a blocked typed read (see [`Store::start_read`]), for at most `max_wait`
    /// when given; no entry when its timeout expired.
    pub fn wait_read(&self, call: BlockedCall, max_wait: Option<Duration>) -> ReadStep {
        match self.wait_served(call, max_wait) {
            Waited::Served(Served::Entries(r)) => ReadStep::Done(*r),
            Waited::Served(Served::Reply(_)) => unreachable!("a typed read is served entries"),
            Waited::TimedOut => ReadStep::Done(Ok(Entries::new())),
            Waited::Closed => ReadStep::Done(Err(CmdError::closed())),
            Waited::Blocked(call) => ReadStep::Blocked(call),
        }
    }

    /// Wait for a blocked call to be served (for at most `max_wait` when given). Returns
    /// [`Step::Blocked`] again when it must keep waiting, and a null array when its
    /// timeout expired.
    pub fn wait(&self, call: BlockedCall, max_wait: Option<Duration>) -> Step {
        match self.wait_served(call, max_wait) {
            Waited::Served(Served::Reply(r)) => Step::Done(r),
            Waited::Served(Served::Entries(_)) => unreachable!("a command is served a reply"),
            Waited::TimedOut => Step::Done(Reply::NilArray),
            Waited::Closed => Step::Done(CmdError::closed().into()),
            Waited::Blocked(call) => Step::Blocked(call),
        }
    }

    fn wait_served(&self, mut call: BlockedCall, max_wait: Option<Duration>) -> Waited {
        let started = Instant::now();
        let mut st = self.shared.state.lock();
        // The claim time of the last re-run: never re-run twice for the same one.
        let mut rerun_at: Option<i64> = None;
        loop {
            if st.closed {
                st.waiters.remove(&call.id);
                call.id = 0;
                return Waited::Closed;
            }
            let Some(w) = st.waiters.get_mut(&call.id) else {
                call.id = 0;
                return Waited::Closed;
            };
            if let Some(r) = w.done.take() {
                st.waiters.remove(&call.id);
                call.id = 0;
                return Waited::Served(r);
            }
            let now_inst = Instant::now();
            if call.deadline.is_some_and(|d| now_inst >= d) {
                st.waiters.remove(&call.id);
                call.id = 0;
                return Waited::TimedOut;
            }
            // XREADGROUP ... CLAIM: pending entries became claimable with time, not with a
            // write; the caller runs its command again itself.
            // An entry idle for exactly min-idle-time is claimable (Redis compares `>=`).
            let claim_at = w.req.claim_wake_at;
            if claim_at.is_some_and(|t| st.ks.clock.now_ms() >= t && rerun_at != Some(t)) {
                rerun_at = claim_at;
                if let Some(r) = self.rerun(&mut st, call.id) {
                    call.id = 0;
                    return Waited::Served(r);
                }
                continue;
            }
            // Active expiry while no command comes: a key whose time passed is removed at
            // the expiry tick, as redis-server's cron removes it, and its readers served
            // (XREADGROUP fails, XREAD keeps waiting).
            let now_ms = st.ks.clock.now_ms();
            let mut expiry_at = st.ks.next_expiry_tick();
            if expiry_at.is_some_and(|t| t <= now_ms) {
                if Self::expire_between_commands(&mut st, now_ms) {
                    self.shared.cond.notify_all();
                    continue;
                }
                // Not due on the cron's cadence yet: its next tick.
                let period = crate::keyspace::db::EXPIRE_CYCLE_PERIOD_MS;
                expiry_at = Some(now_ms - now_ms.rem_euclid(period) + period);
            }
            if max_wait.is_some_and(|m| now_inst.duration_since(started) >= m) {
                return Waited::Blocked(call);
            }
            // Sleep until the earliest of: deadline, claim time, next expiry (system clock),
            // max_wait.
            let mut until: Option<Instant> = call.deadline;
            if let (Some(t), false) = (expiry_at, st.ks.clock.is_pinned()) {
                let at = now_inst + Duration::from_millis((t - now_ms).max(0) as u64 + 1);
                until = Some(until.map_or(at, |u| u.min(at)));
            }
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

    /// Re-execute blocked call `id` now; what it was served, or `None` (back in line) if
    /// it must keep waiting.
    fn rerun(&self, st: &mut State, id: u64) -> Option<Served> {
        let (out, sig) = st.run_waiter(id);
        let order = st.next_order();
        let result = match out {
            Ok(done) => {
                st.waiters.remove(&id);
                Some(done)
            }
            Err(req) => {
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
}
