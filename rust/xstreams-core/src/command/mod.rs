//! The command layer: dispatch through the one command table ([`table`]: name, arity,
//! flags, keys, docs, handler of every command) with Redis's arity and unknown-command
//! errors, and the execution context handlers use.
//!
//! Each handler parses its arguments into typed arguments with the shared parsers in
//! [`args`] (checking arguments and keys in the same order as redis-server, because the
//! first failing check decides which error the client sees), calls the command's one
//! implementation, and builds the [`Reply`] from its typed outcome (in [`crate::command::reply`]).
//! The typed implementations are public (`xadd_typed`, `read_typed`,
//! `read_typed_or_block`, `xclaim_typed`, `xautoclaim_typed`, `xack_typed`,
//! `xackdel_typed`, `xnack_typed`, `xpending_summary`, `xpending_range`, `range_typed`,
//! `restore_typed`), and each is a whole command: a typed write refuses writes as the
//! table would and builds its own log record (`typed_write`; XADD writes its record
//! in RESP itself), so its argument-vector handler is only its parser followed by the
//! same function, and [`crate::Store`]'s typed API runs each in one session, building no
//! log arguments. Group delivery, claiming and NACKs are the group types'
//! ([`crate::structures::pel`]); what they change is logged here (`propagate_pel_events`).

mod admin;
pub mod args;
mod dump;
mod expire;
mod keyspace;
mod record;
pub mod reply;
mod xack;
mod xadd;
mod xclaim;
mod xgroup;
mod xidmp;
mod xinfo;
mod xpending;
mod xrange;
mod xread;

pub use record::{encode_arg, encode_command, encode_header, LogRecord, Propagation};

pub mod table;

pub use dump::{restore_typed, RestoreArgs};
pub use xack::{xack_ids, xack_typed, xackdel_ids, xackdel_typed, xnack_typed, XackdelArgs};
pub(crate) use xadd::parse_add_trim;
pub use xadd::{parse_xadd, trim_args, xadd_argv, xadd_typed, XaddArgs, XaddOutcome};
pub use xclaim::{xautoclaim_typed, xclaim_typed};
pub use xpending::{xpending_range, xpending_summary};
pub use xrange::{range_typed, RangeArgs};
pub use xread::{read_typed, read_typed_or_block, OwnedReadArgs, ReadArgs};

use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::db::{Db, KeyEntry, Keyspace, Value};
use crate::structures::stream::Stream;

/// A request to block the caller until one of `keys` is signaled or the timeout expires;
/// then the command (`args`, possibly rewritten, e.g. `$` replaced by the last ID) runs
/// again, as redis-server re-executes blocked commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockRequest {
    /// Keys (in the command's database) whose changes wake the caller.
    pub keys: Vec<Vec<u8>>,
    /// Timeout in milliseconds, 0 = forever.
    pub timeout_ms: i64,
    /// Arguments to run on wake-up.
    pub args: Vec<Vec<u8>>,
    /// Store-clock time at which pending entries become claimable (XREADGROUP CLAIM).
    pub claim_wake_at: Option<i64>,
    /// Wake also when a key is deleted or stops being a stream (XREADGROUP, whose group
    /// goes with the key); otherwise only a key that is a stream when signaled wakes.
    pub unblock_on_nokey: bool,
}

/// Result of executing a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The reply to send.
    Reply(Reply),
    /// The command must block (see [`BlockRequest`]).
    Block(BlockRequest),
}

/// Execution context of one command.
pub struct Ctx<'a> {
    pub ks: &'a mut Keyspace,
    /// Selected database.
    pub db: usize,
    /// Command time snapshot (ms).
    pub now: i64,
    /// Reply protocol (2 or 3).
    pub protocol: u8,
    /// When set, a blocking command replies as if its timeout expired (inside a batch).
    pub deny_blocking: bool,
    /// Set by blocking commands that must block.
    pub block: Option<BlockRequest>,
    /// Keys signaled as ready for blocked readers, with their database.
    pub signals: Vec<(usize, Vec<u8>)>,
    /// Does any blocked reader wait? When not, signals are not recorded: nobody could
    /// be served by them (a reader that blocks later re-reads the keyspace itself), and
    /// a write need not copy its key. True unless the store knows no call waits.
    pub readers_waiting: bool,
    /// Databases whose every key may have changed (flushed, swapped): bit `1 << db`.
    pub flushed_dbs: u32,
    /// Count of changes made (Redis's `server.dirty`).
    pub dirty: u64,
    /// When recording (durable stores), the commands that reproduce this command's
    /// effects, in the deterministic form redis-server propagates.
    pub prop: Option<Propagation>,
    /// Replaying a log (Redis's "must obey client"): trimming limits are ignored and
    /// IDMP accepts explicit IDs.
    pub replaying: bool,
    /// When set, write commands are refused with this error (read-only store, or a log
    /// that could not be written).
    pub reject_writes: Option<CmdError>,
    /// What the store knows of itself beyond the keyspace (INFO).
    pub facts: crate::keyspace::info::StoreFacts,
    /// The command recorded itself (a typed command, see `typed_write`): the argument
    /// vector it may have been parsed from is not recorded again.
    recorded: bool,
}

impl<'a> Ctx<'a> {
    /// A context on database `db` at time `now`.
    pub fn new(ks: &'a mut Keyspace, db: usize, now: i64, protocol: u8) -> Self {
        Ctx {
            ks,
            db,
            now,
            protocol,
            deny_blocking: false,
            block: None,
            signals: Vec::new(),
            readers_waiting: true,
            flushed_dbs: 0,
            dirty: 0,
            prop: None,
            replaying: false,
            reject_writes: None,
            facts: crate::keyspace::info::StoreFacts::default(),
            recorded: false,
        }
    }

    /// The selected database.
    pub fn db(&mut self) -> &mut Db {
        &mut self.ks.dbs[self.db]
    }

    /// Look a key up (expiring it first if its time has passed).
    pub fn lookup(&mut self, key: &[u8]) -> Option<&mut KeyEntry> {
        let now = self.now;
        if self.ks.dbs[self.db].expire_if_needed(key, now) {
            self.expired(self.db, key);
        }
        self.ks.dbs[self.db].get_mut(key)
    }

    /// `key` of database `db` was just removed because its time had passed: as
    /// redis-server's `deleteExpiredKeyAndPropagate`, blocked readers are signalled,
    /// and the log deletes it (the database touched it for its watchers when removing it).
    pub fn expired(&mut self, db: usize, key: &[u8]) {
        self.signal_in(db, key);
        if db == self.db {
            self.also_propagate(vec![b"DEL".to_vec(), key.to_vec()]);
        }
    }

    /// `key` was modified as redis-server's `keyModified(..., signal=1)` says: its
    /// watchers see it now, with the key's current existence (see [`crate::keyspace::watch`]), so
    /// call it right after the change.
    pub fn touch(&mut self, key: &[u8]) {
        self.touch_in(self.db, key);
    }

    /// [`Ctx::touch`] for a key of database `db`.
    pub fn touch_in(&mut self, db: usize, key: &[u8]) {
        self.ks.dbs[db].touch_watched(key);
    }

    /// Does the key exist?
    pub fn exists(&mut self, key: &[u8]) -> bool {
        self.lookup(key).is_some()
    }

    /// The stream under `key`: `Ok(None)` if missing, WRONGTYPE if another type.
    pub fn stream(&mut self, key: &[u8]) -> CmdResult<Option<&mut Stream>> {
        Ok(self.stream_and_config(key)?.map(|(_, s)| s))
    }

    /// [`Ctx::stream`] with the store's configuration beside it, for a command that
    /// reads the node limits while it holds the stream (XADD): one lookup of the key.
    pub fn stream_and_config(
        &mut self,
        key: &[u8],
    ) -> CmdResult<Option<(&crate::base::config::Config, &mut Stream)>> {
        // `Ctx::lookup`, split so that the configuration can be borrowed beside the key.
        let now = self.now;
        if self.ks.dbs[self.db].expire_if_needed(key, now) {
            self.expired(self.db, key);
        }
        let ks = &mut *self.ks;
        match ks.dbs[self.db].get_mut(key) {
            None => Ok(None),
            Some(KeyEntry {
                value: Value::Stream(s),
                ..
            }) => Ok(Some((&ks.config, s.as_mut()))),
            Some(_) => Err(CmdError::wrong_type()),
        }
    }

    /// The stream under `key`, creating an empty one when missing.
    pub fn stream_or_create(&mut self, key: &[u8]) -> CmdResult<&mut Stream> {
        let exists = match self.lookup(key) {
            None => false,
            Some(KeyEntry {
                value: Value::Stream(_),
                ..
            }) => true,
            Some(_) => return Err(CmdError::wrong_type()),
        };
        if !exists {
            let s = Stream::new(&self.ks.config);
            self.db().set(key, Value::Stream(Box::new(s)), None);
        }
        Ok(self.stream(key)?.expect("stream just created"))
    }

    /// Signal that `key` changed in a way blocked readers must see.
    pub fn signal(&mut self, key: &[u8]) {
        self.signal_in(self.db, key);
    }

    /// Signal `key` of database `db` (commands that write to another database).
    pub fn signal_in(&mut self, db: usize, key: &[u8]) {
        if self.readers_waiting && !self.signals.iter().any(|(d, k)| *d == db && k == key) {
            self.signals.push((db, key.to_vec()));
        }
    }

    /// Every key of database `db` may have changed (FLUSHDB, SWAPDB).
    pub fn flushed(&mut self, db: usize) {
        self.flushed_dbs |= 1 << db;
    }

    /// Is the command's propagation being recorded?
    pub fn recording(&self) -> bool {
        self.prop.is_some()
    }

    /// Record an extra command reproducing part of this command's effects.
    pub fn also_propagate(&mut self, argv: Vec<Vec<u8>>) {
        if let Some(p) = &mut self.prop {
            p.also.push(LogRecord::Cmd(argv));
        }
    }

    /// Record an annotation (see [`LogRecord`]).
    pub fn propagate_record(&mut self, r: LogRecord) {
        if let Some(p) = &mut self.prop {
            p.also.push(r);
        }
    }

    /// Record the exact seen/active times of a consumer.
    pub fn propagate_consumer_times(
        &mut self,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        seen: i64,
        active: i64,
    ) {
        if let Some(p) = &mut self.prop {
            p.also.push(LogRecord::ConsumerTimes {
                key: key.to_vec(),
                group: group.to_vec(),
                consumer: consumer.to_vec(),
                seen,
                active,
            });
        }
    }

    /// The command's own arguments must not be recorded (its effects are recorded by
    /// [`Ctx::also_propagate`]).
    pub fn prevent_propagation(&mut self) {
        if let Some(p) = &mut self.prop {
            p.prevented = true;
        }
    }

    /// Record the command with argument `pos` replaced by `value`.
    pub fn rewrite_arg(&mut self, args: &[&[u8]], pos: usize, value: Vec<u8>) {
        if let Some(p) = &mut self.prop {
            let r = p
                .rewritten
                .get_or_insert_with(|| args.iter().map(|a| a.to_vec()).collect());
            if pos < r.len() {
                r[pos] = value;
            }
        }
    }

    /// Track a stream as holding IDMP producers (for the periodic sweep).
    pub fn track_idmp(&mut self, key: &[u8]) {
        let db = self.db();
        if !db.idmp_keys.contains(key) {
            db.idmp_keys.insert(key.to_vec());
        }
    }
}

/// The `XCLAIM` that reproduces one delivery or claim on replay (redis-server's
/// propagation form): `XCLAIM key group consumer 0 id TIME t RETRYCOUNT n [FORCE] JUSTID
/// LASTID last-id`.
pub(crate) fn xclaim_record(
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    id: crate::structures::id::StreamId,
    time: i64,
    count: u64,
    force: bool,
    last_id: crate::structures::id::StreamId,
) -> Vec<Vec<u8>> {
    let mut v = vec![
        b"XCLAIM".to_vec(),
        key.to_vec(),
        group.to_vec(),
        consumer.to_vec(),
        b"0".to_vec(),
        id.to_bytes(),
        b"TIME".to_vec(),
        time.to_string().into_bytes(),
        b"RETRYCOUNT".to_vec(),
        count.to_string().into_bytes(),
    ];
    if force {
        v.push(b"FORCE".to_vec());
    }
    v.push(b"JUSTID".to_vec());
    v.push(b"LASTID".to_vec());
    v.push(last_id.to_bytes());
    v
}

/// Record what a PEL operation changed, in order: a claim or delivery as the XCLAIM that
/// reproduces it (plus its move to the tail of the time list when it was appended out of
/// time order), a record dropped for a deleted entry as an XACK.
pub(crate) fn propagate_pel_events(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    events: &[crate::structures::pel::PelEvent],
    last_id: crate::structures::id::StreamId,
) {
    use crate::structures::pel::PelEvent;
    for ev in events {
        match *ev {
            PelEvent::Dropped(id) => {
                ctx.also_propagate(vec![
                    b"XACK".to_vec(),
                    key.to_vec(),
                    group.to_vec(),
                    id.to_bytes(),
                ]);
            }
            PelEvent::Delivered(d) => {
                ctx.also_propagate(xclaim_record(
                    key, group, consumer, d.id, d.time, d.count, d.force, last_id,
                ));
                if d.to_tail {
                    let (key, group, id) = (key.to_vec(), group.to_vec(), d.id);
                    ctx.propagate_record(LogRecord::PelToTail { key, group, id });
                }
            }
        }
    }
}

/// `XGROUP SETID key group id ENTRIESREAD n` (propagates a group's read position).
pub(crate) fn setid_record(
    key: &[u8],
    group: &[u8],
    id: crate::structures::id::StreamId,
    entries_read: i64,
) -> Vec<Vec<u8>> {
    vec![
        b"XGROUP".to_vec(),
        b"SETID".to_vec(),
        key.to_vec(),
        group.to_vec(),
        id.to_bytes(),
        b"ENTRIESREAD".to_vec(),
        entries_read.to_string().into_bytes(),
    ]
}

/// Command handler.
pub type Handler = fn(&mut Ctx<'_>, &[&[u8]]) -> CmdResult<Reply>;

pub use table::{
    commands, lookup, lookup_fullname, slot_count, slot_name, Begin, CommandSpec, Doc, Flags,
    KeySpec, Resolved, Run, Scope, ServerCmd, Unresolved,
};

/// Every engine command name (lower case, top level).
pub fn command_names() -> impl Iterator<Item = &'static str> {
    commands()
        .iter()
        .filter(|c| c.runs_in(Scope::Engine))
        .map(|c| c.name)
}

/// Find the engine command for `args`, or the error redis-server gives for an unknown
/// command or subcommand or a wrong number of arguments (the server's commands are
/// unknown here: see [`table::resolve`]).
pub fn resolve<A: AsRef<[u8]>>(args: &[A]) -> CmdResult<Resolved> {
    table::resolve(args, Scope::Engine).map_err(|u| u.error)
}

/// Execute one command. Errors become error replies; a blocking command that must wait
/// returns [`Outcome::Block`].
pub fn execute(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> Outcome {
    try_execute(ctx, args).unwrap_or_else(|e| Outcome::Reply(e.into()))
}

/// Execute one command with its error typed (the log replay tells a failed command by
/// it, without looking at a reply).
pub fn try_execute(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Outcome> {
    let resolved = resolve(args)?;
    if resolved.spec.flags.has(Flags::WRITE) {
        if let Some(e) = &ctx.reject_writes {
            return Err(e.clone());
        }
    }
    if resolved.spec.flags.has(Flags::DENYOOM)
        && !ctx.replaying
        && crate::keyspace::memory::over_maxmemory(ctx.ks)
    {
        return Err(CmdError::oom());
    }
    let Some(handler) = resolved.spec.handler() else {
        // A container without a subcommand reaches here only through arity: unreachable
        // because its arity (-2) demands a subcommand.
        return Err(CmdError::missing_subcommand(
            &resolved.fullname().to_ascii_uppercase(),
        ));
    };
    ctx.recorded = false;
    let result = handler(ctx, args);
    record_own(ctx, args);
    match ctx.block.take() {
        Some(b) => Ok(Outcome::Block(b)),
        None => result.map(Outcome::Reply),
    }
}

/// The contract of every typed write command (`xack_typed`, `xnack_typed`,
/// `xclaim_typed`, `restore_typed`, ...), which is a whole command whether a typed caller
/// or its argument-vector handler runs it: refused when the context says so (read-only
/// store, log failure), then `f`, then, when it changed something, `argv()` (the command
/// in canonical form, built here and nowhere else) counted as written memory and logged,
/// unless the command logged its effects itself or rewrote its record. The argument
/// vector the command was parsed from, if any, is then not recorded again.
pub(crate) fn typed_write<R>(
    ctx: &mut Ctx<'_>,
    argv: impl FnOnce() -> Vec<Vec<u8>>,
    f: impl FnOnce(&mut Ctx<'_>) -> CmdResult<R>,
) -> CmdResult<R> {
    check_refused(ctx)?;
    let out = f(ctx);
    if ctx.dirty > 0 && (ctx.ks.mem.tracking() || ctx.recording()) {
        let argv = argv();
        let refs: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
        record_own(ctx, &refs);
    }
    ctx.recorded = true;
    out
}

/// The refusal of a write command before it runs (read-only store, log failure), the
/// table's first check.
pub(crate) fn check_refused(ctx: &Ctx<'_>) -> CmdResult<()> {
    match &ctx.reject_writes {
        Some(e) => Err(e.clone()),
        None => Ok(()),
    }
}

/// The refusals of a DENYOOM write command before it runs.
pub(crate) fn check_write(ctx: &mut Ctx<'_>) -> CmdResult<()> {
    check_refused(ctx)?;
    if !ctx.replaying && crate::keyspace::memory::over_maxmemory(ctx.ks) {
        return Err(CmdError::oom());
    }
    Ok(())
}

/// A command that changed something counts its arguments as written memory and is logged
/// as its (possibly rewritten) arguments, after what it recorded itself, unless it
/// prevented that.
fn record_own(ctx: &mut Ctx<'_>, args: &[&[u8]]) {
    if std::mem::replace(&mut ctx.recorded, true) {
        return;
    }
    if ctx.dirty > 0 && ctx.ks.mem.tracking() {
        ctx.ks
            .mem
            .note_write(args.iter().map(|a| a.len() as u64).sum());
    }
    if ctx.dirty > 0 {
        if let Some(p) = &mut ctx.prop {
            if !p.prevented {
                let own = p
                    .rewritten
                    .take()
                    .unwrap_or_else(|| args.iter().map(|a| a.to_vec()).collect());
                p.also.push(LogRecord::Cmd(own));
            }
        }
    }
}

#[cfg(test)]
mod tests;
