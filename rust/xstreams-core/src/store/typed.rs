//! The store's typed API: XADD, XREAD / XREADGROUP, XRANGE / XREVRANGE, XPENDING (both
//! forms), XCLAIM, XAUTOCLAIM, XACK, XACKDEL, XNACK and RESTORE from typed arguments,
//! with typed outcomes. Each call is one command run in one session exactly as if it had
//! been sent as arguments: the same implementation (`command::*_typed`, a whole command
//! that refuses writes and builds its own log record), the same errors.

use crate::command::{
    self, Ctx, RangeArgs, ReadArgs, RestoreArgs, XackdelArgs, XaddArgs, XaddOutcome,
};
use crate::error::{CmdError, CmdResult};
use crate::keyspace::db::NUM_DBS;
use crate::structures::entries::Entries;
use crate::structures::id::StreamId;
use crate::structures::pel::{
    AutoclaimArgs, AutoclaimOutcome, ClaimArgs, ClaimOutcome, NackArgs, PendingRange, PendingRow,
    PendingSummary,
};
use crate::structures::stream::DeleteOutcome;

use super::Store;

impl Store {
    /// Run `f` as one command on database `db`.
    fn typed<R>(&self, db: usize, f: impl FnOnce(&mut Ctx<'_>) -> CmdResult<R>) -> CmdResult<R> {
        if db >= NUM_DBS {
            return Err(CmdError::db_index_out_of_range());
        }
        self.session()?.run(db, f)
    }

    /// `XPENDING key group`: how many entries are pending, the smallest and largest
    /// pending IDs, and each consumer's count. NOGROUP when the key or group is missing.
    ///
    /// ```
    /// use xstreams_core::command::ReadArgs;
    /// use xstreams_core::Store;
    ///
    /// let store = Store::default();
    /// store.execute(&[b"XADD", b"jobs", b"1-1", b"task", b"a"]);
    /// store.execute(&[b"XGROUP", b"CREATE", b"jobs", b"workers", b"0"]);
    /// store.read(0, &ReadArgs::xreadgroup(b"workers", b"alice", &[&b"jobs"[..]], &[&b">"[..]])).unwrap();
    /// let summary = store.xpending(0, b"jobs", b"workers").unwrap();
    /// assert_eq!(summary.count, 1);
    /// assert_eq!(summary.consumers, vec![(b"alice".to_vec(), 1)]);
    /// ```
    pub fn xpending(&self, db: usize, key: &[u8], group: &[u8]) -> CmdResult<PendingSummary> {
        self.typed(db, |ctx| command::xpending_summary(ctx, key, group))
    }

    /// `XPENDING key group [IDLE min-idle] start end count [consumer]`: the pending
    /// entries of the range, in ID order.
    ///
    /// ```
    /// use xstreams_core::command::ReadArgs;
    /// use xstreams_core::structures::pel::PendingRange;
    /// use xstreams_core::{Store, StreamId};
    ///
    /// let store = Store::default();
    /// store.set_clock(Some(1_000));
    /// store.execute(&[b"XADD", b"jobs", b"1-1", b"task", b"a"]);
    /// store.execute(&[b"XGROUP", b"CREATE", b"jobs", b"workers", b"0"]);
    /// store.read(0, &ReadArgs::xreadgroup(b"workers", b"alice", &[&b"jobs"[..]], &[&b">"[..]])).unwrap();
    /// store.advance_clock(250);
    /// let rows = store
    ///     .xpending_range(0, b"jobs", b"workers", &PendingRange::new(StreamId::MIN, StreamId::MAX, 10))
    ///     .unwrap();
    /// assert_eq!((rows[0].id, rows[0].idle, rows[0].delivery_count), (StreamId::new(1, 1), 250, 1));
    /// ```
    pub fn xpending_range(
        &self,
        db: usize,
        key: &[u8],
        group: &[u8],
        range: &PendingRange<'_>,
    ) -> CmdResult<Vec<PendingRow>> {
        self.typed(db, |ctx| command::xpending_range(ctx, key, group, range))
    }

    /// XCLAIM: the pending entries of `args.ids` idle at least `args.min_idle` go to
    /// `args.consumer`; the outcome lists them (with their fields unless JUSTID).
    ///
    /// ```
    /// use xstreams_core::command::ReadArgs;
    /// use xstreams_core::structures::pel::ClaimArgs;
    /// use xstreams_core::{Store, StreamId};
    ///
    /// let store = Store::default();
    /// store.execute(&[b"XADD", b"jobs", b"1-1", b"task", b"a"]);
    /// store.execute(&[b"XGROUP", b"CREATE", b"jobs", b"workers", b"0"]);
    /// store.read(0, &ReadArgs::xreadgroup(b"workers", b"alice", &[&b"jobs"[..]], &[&b">"[..]])).unwrap();
    /// let ids = [StreamId::new(1, 1)];
    /// let out = store.xclaim(0, &ClaimArgs::new(b"jobs", b"workers", b"bob", 0, &ids)).unwrap();
    /// assert_eq!(out.entries[0].pairs, vec![b"task".to_vec(), b"a".to_vec()]);
    /// ```
    pub fn xclaim(&self, db: usize, args: &ClaimArgs<'_>) -> CmdResult<ClaimOutcome> {
        self.typed(db, |ctx| command::xclaim_typed(ctx, args))
    }

    /// XAUTOCLAIM: scan the PEL from `args.start`, claiming entries idle at least
    /// `args.min_idle` for `args.consumer` and dropping those whose entries were deleted.
    ///
    /// ```
    /// use xstreams_core::command::ReadArgs;
    /// use xstreams_core::structures::pel::AutoclaimArgs;
    /// use xstreams_core::{Store, StreamId};
    ///
    /// let store = Store::default();
    /// store.execute(&[b"XADD", b"jobs", b"1-1", b"task", b"a"]);
    /// store.execute(&[b"XGROUP", b"CREATE", b"jobs", b"workers", b"0"]);
    /// store.read(0, &ReadArgs::xreadgroup(b"workers", b"alice", &[&b"jobs"[..]], &[&b">"[..]])).unwrap();
    /// let args = AutoclaimArgs::new(b"jobs", b"workers", b"bob", 0, StreamId::MIN);
    /// let out = store.xautoclaim(0, &args).unwrap();
    /// assert_eq!(out.next, StreamId::MIN); // the whole PEL was scanned
    /// assert_eq!(out.entries[0].id, StreamId::new(1, 1));
    /// ```
    pub fn xautoclaim(&self, db: usize, args: &AutoclaimArgs<'_>) -> CmdResult<AutoclaimOutcome> {
        self.typed(db, |ctx| command::xautoclaim_typed(ctx, args))
    }

    /// XACK: how many of `ids` were pending in `group` (0 without the key or group).
    ///
    /// ```
    /// use xstreams_core::command::ReadArgs;
    /// use xstreams_core::{Store, StreamId};
    ///
    /// let store = Store::default();
    /// store.execute(&[b"XADD", b"jobs", b"1-1", b"task", b"a"]);
    /// store.execute(&[b"XGROUP", b"CREATE", b"jobs", b"workers", b"0"]);
    /// store.read(0, &ReadArgs::xreadgroup(b"workers", b"alice", &[&b"jobs"[..]], &[&b">"[..]])).unwrap();
    /// let ids = [StreamId::new(1, 1), StreamId::new(9, 9)];
    /// assert_eq!(store.xack(0, b"jobs", b"workers", &ids).unwrap(), 1);
    /// ```
    pub fn xack(&self, db: usize, key: &[u8], group: &[u8], ids: &[StreamId]) -> CmdResult<u64> {
        self.typed(db, |ctx| command::xack_typed(ctx, key, group, ids))
    }

    /// XACKDEL: acknowledge `args.ids` in the group and delete the acknowledged entries
    /// under `args.policy`; one [`DeleteOutcome`] per ID.
    ///
    /// ```
    /// use xstreams_core::command::{ReadArgs, XackdelArgs};
    /// use xstreams_core::structures::stream::{DeleteOutcome, RefPolicy};
    /// use xstreams_core::{Store, StreamId};
    ///
    /// let store = Store::default();
    /// store.execute(&[b"XADD", b"jobs", b"1-1", b"task", b"a"]);
    /// store.execute(&[b"XGROUP", b"CREATE", b"jobs", b"workers", b"0"]);
    /// store.read(0, &ReadArgs::xreadgroup(b"workers", b"alice", &[&b"jobs"[..]], &[&b">"[..]])).unwrap();
    /// let ids = [StreamId::new(1, 1), StreamId::new(9, 9)];
    /// let args = XackdelArgs { key: b"jobs", group: b"workers", policy: RefPolicy::KeepRef, ids: &ids };
    /// let out = store.xackdel(0, &args).unwrap();
    /// assert_eq!(out, vec![DeleteOutcome::Deleted, DeleteOutcome::NotFound]);
    /// ```
    pub fn xackdel(&self, db: usize, args: &XackdelArgs<'_>) -> CmdResult<Vec<DeleteOutcome>> {
        self.typed(db, |ctx| command::xackdel_typed(ctx, args))
    }

    /// XNACK: release pending entries into the group's NACK zone; how many were released.
    ///
    /// ```
    /// use xstreams_core::command::ReadArgs;
    /// use xstreams_core::structures::pel::{NackArgs, NackMode};
    /// use xstreams_core::{Store, StreamId};
    ///
    /// let store = Store::default();
    /// store.execute(&[b"XADD", b"jobs", b"1-1", b"task", b"a"]);
    /// store.execute(&[b"XGROUP", b"CREATE", b"jobs", b"workers", b"0"]);
    /// store.read(0, &ReadArgs::xreadgroup(b"workers", b"alice", &[&b"jobs"[..]], &[&b">"[..]])).unwrap();
    /// let ids = [StreamId::new(1, 1)];
    /// let args = NackArgs::new(b"jobs", b"workers", NackMode::Fail, &ids);
    /// assert_eq!(store.xnack(0, &args).unwrap(), 1);
    /// ```
    pub fn xnack(&self, db: usize, args: &NackArgs<'_>) -> CmdResult<u64> {
        self.typed(db, |ctx| command::xnack_typed(ctx, args))
    }

    /// One XADD from typed arguments on database `db`: the entry's ID, or for an IDMP
    /// duplicate the ID first added for its (producer, IID) pair; `None` with NOMKSTREAM
    /// on a missing key. The errors are XADD's; a durable store logs the XADD as
    /// redis-server would propagate it.
    ///
    /// ```
    /// use xstreams_core::command::XaddArgs;
    /// use xstreams_core::{Store, StreamId};
    ///
    /// let store = Store::default();
    /// store.set_clock(Some(1_700_000_000_000));
    /// let pairs: [&[u8]; 2] = [b"temp", b"21.5"];
    /// let mut args = XaddArgs::new(b"sensor", &pairs);
    /// args.idmp = Some((b"producer-1", Some(b"msg-1")));
    /// let first = store.xadd(0, &args).unwrap().unwrap();
    /// assert_eq!(first.id, StreamId::new(1_700_000_000_000, 0));
    /// assert!(!first.duplicate);
    /// // The same (producer, IID) again: nothing added, the first entry's ID.
    /// let again = store.xadd(0, &args).unwrap().unwrap();
    /// assert_eq!((again.id, again.duplicate), (first.id, true));
    /// ```
    pub fn xadd(&self, db: usize, args: &XaddArgs<'_>) -> CmdResult<Option<XaddOutcome>> {
        self.typed(db, |ctx| command::xadd_typed(ctx, args))
    }

    /// XREAD / XREADGROUP from typed arguments on database `db`, never blocking: the
    /// entries served, per stream in the caller's order, with their delivery information
    /// (see [`crate::structures::read`] for an example). The errors are the commands'; an XREADGROUP
    /// is logged as the claims and group updates it causes.
    pub fn read(&self, db: usize, args: &ReadArgs<'_>) -> CmdResult<Entries> {
        let mut out = Entries::new();
        self.typed(db, |ctx| command::read_typed(ctx, args, &mut out))?;
        Ok(out)
    }

    /// The entries `XRANGE key start end [COUNT count]` (or, with `rev`, `XREVRANGE key
    /// end start [COUNT count]`) replies with, as flat buffers. The same checks, in the
    /// same order, and the same error lines as the commands: the bounds, then the count,
    /// then the key's type. A negative count reads nothing, as `COUNT 0`.
    pub fn range_entries(
        &self,
        db: usize,
        key: &[u8],
        start: &[u8],
        end: &[u8],
        count: Option<i64>,
        rev: bool,
    ) -> CmdResult<Entries> {
        if db >= NUM_DBS {
            return Err(CmdError::db_index_out_of_range());
        }
        let a = RangeArgs {
            key,
            start: command::args::range_start(start)?,
            end: command::args::range_end(end)?,
            count: count.map(|c| c.max(0) as usize),
            rev,
        };
        let mut out = Entries::new();
        self.typed(db, |ctx| {
            let si = out.add_key(key);
            command::range_typed(ctx, &a, |e| out.push(si, e.id, e.pairs()))
        })?;
        Ok(out)
    }

    /// RESTORE from typed arguments on database `db`: one command exactly as if sent as
    /// arguments (write refusal, `maxmemory`, RESTORE's checks and errors, its log record).
    ///
    /// ```
    /// use xstreams_core::command::RestoreArgs;
    /// use xstreams_core::{Reply, Store};
    ///
    /// let store = Store::default();
    /// store.execute(&[b"XADD", b"s", b"1-1", b"f", b"v"]);
    /// let Reply::Bulk(payload) = store.execute(&[b"DUMP", b"s"]) else { panic!() };
    /// let args = RestoreArgs { key: b"copy", ttl: 0, payload: &payload, replace: false, absttl: false };
    /// store.restore(0, &args).unwrap();
    /// assert!(store.restore(0, &args).unwrap_err().into_line().starts_with("BUSYKEY"));
    /// ```
    pub fn restore(&self, db: usize, args: &RestoreArgs<'_>) -> CmdResult<()> {
        self.typed(db, |ctx| command::restore_typed(ctx, args))
    }
}
