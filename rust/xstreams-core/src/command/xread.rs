//! XREAD and XREADGROUP (one implementation, as in redis-server), including
//! XREADGROUP's CLAIM option, the MAXCOUNT / MAXSIZE caps and blocking.
//!
//! Layers: [`parse`] (argument vector -> [`ReadArgs`]), [`resolve`] (keys, groups and
//! IDs, with the errors in redis-server's order), [`serve`] (the entries of each stream
//! into a [`ReadSink`]; delivery to a consumer is the group's ([`crate::structures::pel`]), its
//! propagation is here), then the reply or the block request ([`xread`]) or the typed
//! batch ([`read_typed`]).

use super::args::{block_timeout, eq, int, int_or, is, strict_id};
use super::{propagate_pel_events, setid_record, BlockRequest, Ctx, LogRecord};
use crate::command::reply::{Reply, ReplySink};
use crate::error::{CmdError, CmdResult};
use crate::structures::group::ConsumerIdx;
use crate::structures::id::StreamId;
use crate::structures::pel::{Delivery, GroupRead, PelEvent};
use crate::structures::read::{Budget, ReadSink};
use crate::structures::stream::GroupIdx;

/// Typed arguments of XREAD / XREADGROUP.
#[derive(Clone, Debug)]
pub struct ReadArgs<'a> {
    /// `GROUP group consumer` (XREADGROUP).
    pub group: Option<(&'a [u8], &'a [u8])>,
    /// `COUNT`: entries per stream (0: all).
    pub count: u64,
    /// `MAXCOUNT`: entries over all streams (0: no cap).
    pub max_count: u64,
    /// `MAXSIZE`: reply bytes over all streams, soft (0: no cap).
    pub max_size: u64,
    /// `BLOCK` timeout in ms (0: forever; -1: not blocking). [`read_typed`] never blocks;
    /// [`crate::Store::start_read`] does.
    pub timeout: i64,
    /// `CLAIM min-idle-time` (-1: none).
    pub min_idle: i64,
    pub noack: bool,
    pub keys: &'a [&'a [u8]],
    /// One ID argument per key (`$`, `+`, `>` or an ID).
    pub ids: &'a [&'a [u8]],
    /// Index of the first key in the argument vector (0 for typed callers).
    streams_arg: usize,
}

impl<'a> ReadArgs<'a> {
    /// `XREAD STREAMS keys... ids...`
    pub fn xread(keys: &'a [&'a [u8]], ids: &'a [&'a [u8]]) -> Self {
        ReadArgs {
            group: None,
            count: 0,
            max_count: 0,
            max_size: 0,
            timeout: -1,
            min_idle: -1,
            noack: false,
            keys,
            ids,
            streams_arg: 0,
        }
    }

    /// `XREADGROUP GROUP group consumer STREAMS keys... ids...`
    pub fn xreadgroup(
        group: &'a [u8],
        consumer: &'a [u8],
        keys: &'a [&'a [u8]],
        ids: &'a [&'a [u8]],
    ) -> Self {
        ReadArgs {
            group: Some((group, consumer)),
            ..ReadArgs::xread(keys, ids)
        }
    }
}

/// Parse XREAD / XREADGROUP arguments, with redis-server's errors in its order.
pub fn parse<'a>(ctx: &Ctx<'_>, args: &'a [&'a [u8]]) -> CmdResult<ReadArgs<'a>> {
    let group = args[0].len() == 10;
    let mut o = ReadArgs::xread(&[], &[]);
    let mut groupname: Option<(&[u8], &[u8])> = None;
    let argc = args.len();
    let mut i = 1;
    while i < argc {
        let more = argc - i - 1;
        let a = args[i];
        if is(a, "CLAIM") && more > 0 {
            if !group {
                return Err(CmdError::xread_option_only_group("CLAIM"));
            }
            i += 1;
            o.min_idle = int_or(args[i], CmdError::min_idle_not_integer)?;
            if o.min_idle < 0 {
                return Err(CmdError::min_idle_negative());
            }
        } else if is(a, "BLOCK") && more > 0 {
            i += 1;
            o.timeout = block_timeout(args[i], ctx.now)?;
        } else if is(a, "COUNT") && more > 0 {
            i += 1;
            let c = int(args[i])?;
            o.count = if c < 0 { 0 } else { c as u64 };
        } else if is(a, "MAXCOUNT") && more > 0 {
            i += 1;
            let c = int(args[i])?;
            if c <= 0 {
                return Err(CmdError::maxcount_not_positive());
            }
            o.max_count = c as u64;
        } else if is(a, "MAXSIZE") && more > 0 {
            i += 1;
            let c = int(args[i])?;
            if c <= 0 {
                return Err(CmdError::maxsize_not_positive());
            }
            o.max_size = c as u64;
        } else if is(a, "STREAMS") && more > 0 {
            o.streams_arg = i + 1;
            let n = argc - o.streams_arg;
            if !n.is_multiple_of(2) {
                return Err(CmdError::unbalanced_streams(group));
            }
            let n = n / 2;
            o.keys = &args[o.streams_arg..o.streams_arg + n];
            o.ids = &args[o.streams_arg + n..];
            break;
        } else if is(a, "GROUP") && more >= 2 {
            if !group {
                return Err(CmdError::xread_option_only_group("GROUP"));
            }
            groupname = Some((args[i + 1], args[i + 2]));
            i += 2;
        } else if is(a, "NOACK") {
            if !group {
                return Err(CmdError::xread_option_only_group("NOACK"));
            }
            o.noack = true;
        } else {
            return Err(CmdError::syntax());
        }
        i += 1;
    }
    if o.streams_arg == 0 {
        return Err(CmdError::syntax());
    }
    if group && groupname.is_none() {
        return Err(CmdError::missing_group_option());
    }
    if o.max_count != 0 && o.count > o.max_count {
        return Err(CmdError::maxcount_below_count());
    }
    o.group = groupname;
    Ok(o)
}

/// The checks a typed caller's options need (the parser makes them on arguments).
fn check_typed(o: &ReadArgs<'_>) -> CmdResult<()> {
    if o.keys.len() != o.ids.len() || o.keys.is_empty() {
        return Err(CmdError::unbalanced_streams(o.group.is_some()));
    }
    if o.max_count != 0 && o.count > o.max_count {
        return Err(CmdError::maxcount_below_count());
    }
    if o.timeout < -1 {
        return Err(CmdError::timeout_negative());
    }
    Ok(())
}

/// Keys, groups and start IDs of a read, failing on the first bad key, group or ID.
struct Resolved {
    ids: Vec<StreamId>,
    groups: Vec<GroupIdx>,
}

fn resolve(ctx: &mut Ctx<'_>, o: &ReadArgs<'_>) -> CmdResult<Resolved> {
    let n = o.keys.len();
    let mut ids: Vec<StreamId> = Vec::with_capacity(n);
    let mut groups: Vec<GroupIdx> = Vec::with_capacity(n);
    let grouped = o.group.is_some();
    for (idx, key) in o.keys.iter().enumerate() {
        let s = ctx.stream(key)?;
        if let Some((gname, _)) = o.group {
            let g = s.as_ref().and_then(|s| s.groups.lookup(gname));
            match g {
                Some(g) => groups.push(g),
                None => return Err(CmdError::nogroup_xreadgroup(key, gname)),
            }
        }
        let arg = o.ids[idx];
        if eq(arg, "$") {
            if grouped {
                return Err(CmdError::dollar_in_xreadgroup());
            }
            ids.push(s.map(|s| s.last_id).unwrap_or(StreamId::MIN));
        } else if eq(arg, "+") {
            if grouped {
                return Err(CmdError::plus_in_xreadgroup());
            }
            let id = match s {
                Some(s) if s.length > 0 => s
                    .last_live_id()
                    .and_then(|i| i.decr())
                    .unwrap_or(StreamId::MAX),
                _ => StreamId::MIN,
            };
            ids.push(id);
        } else if eq(arg, ">") {
            if !grouped {
                return Err(CmdError::gt_in_xread());
            }
            ids.push(StreamId::MAX);
        } else {
            ids.push(strict_id(arg)?);
        }
    }
    Ok(Resolved { ids, groups })
}

/// What serving the streams left for blocking: the CLAIM option still in force, and the
/// oldest delivery time of a pending entry seen.
struct Served {
    min_idle: i64,
    min_pel_delivery_time: i64,
}

/// `XREAD [COUNT count] [MAXCOUNT n] [MAXSIZE bytes] [BLOCK ms] STREAMS key [key ...] id
/// [id ...]` and `XREADGROUP GROUP group consumer [COUNT count] [MAXCOUNT n] [MAXSIZE
/// bytes] [BLOCK ms] [CLAIM min-idle-time] [NOACK] STREAMS key [key ...] id [id ...]`
pub fn xread(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let o = parse(ctx, args)?;
    let r = resolve(ctx, &o)?;
    let mut sink = ReplySink::new();
    let served = serve(ctx, &o, &r, &mut sink)?;
    if !sink.is_empty() {
        return Ok(sink.into_reply(ctx.protocol));
    }
    if o.timeout != -1 && !ctx.deny_blocking {
        ctx.block = Some(block_request(ctx.now, args, &o, &r, &served));
    }
    Ok(Reply::NilArray)
}

/// XREAD / XREADGROUP from typed arguments into `sink`, never blocking: writes refused
/// when the context says so (XREADGROUP), the checks, then the streams served.
pub fn read_typed(ctx: &mut Ctx<'_>, o: &ReadArgs<'_>, sink: &mut impl ReadSink) -> CmdResult<()> {
    if o.group.is_some() {
        if let Some(e) = &ctx.reject_writes {
            return Err(e.clone());
        }
    }
    check_typed(o)?;
    let r = resolve(ctx, o)?;
    serve(ctx, o, &r, sink)?;
    Ok(())
}

/// The request to block with: the keys, the arguments to run again (`$` replaced by the
/// ID it stood for), and for CLAIM when pending entries become claimable.
fn block_request(
    now: i64,
    args: &[&[u8]],
    o: &ReadArgs<'_>,
    r: &Resolved,
    served: &Served,
) -> BlockRequest {
    let n = o.keys.len();
    let mut new_args: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
    for (idx, arg) in o.ids.iter().enumerate() {
        if eq(arg, "$") {
            new_args[o.streams_arg + n + idx] = r.ids[idx].to_bytes();
        }
    }
    let mut req = typed_block_request(now, o, served);
    req.args = new_args;
    req
}

/// The request to block with, without arguments to run again (a typed read keeps its
/// [`OwnedReadArgs`]).
fn typed_block_request(now: i64, o: &ReadArgs<'_>, served: &Served) -> BlockRequest {
    let claim_wake_at = (served.min_idle != -1).then(|| {
        let base = if served.min_pel_delivery_time != i64::MAX {
            served.min_pel_delivery_time
        } else {
            now
        };
        base.saturating_add(served.min_idle)
    });
    BlockRequest {
        keys: o.keys.iter().map(|k| k.to_vec()).collect(),
        timeout_ms: o.timeout,
        args: Vec::new(),
        claim_wake_at,
        unblock_on_nokey: o.group.is_some(),
    }
}

/// [`ReadArgs`] owned, with `$` replaced by the ID it stood for: what a blocked typed read
/// runs again when woken (nothing is parsed again).
#[derive(Clone, Debug)]
pub struct OwnedReadArgs {
    group: Option<(Vec<u8>, Vec<u8>)>,
    count: u64,
    max_count: u64,
    max_size: u64,
    timeout: i64,
    min_idle: i64,
    noack: bool,
    keys: Vec<Vec<u8>>,
    ids: Vec<Vec<u8>>,
}

impl OwnedReadArgs {
    fn new(o: &ReadArgs<'_>, r: &Resolved) -> Self {
        OwnedReadArgs {
            group: o.group.map(|(g, c)| (g.to_vec(), c.to_vec())),
            count: o.count,
            max_count: o.max_count,
            max_size: o.max_size,
            timeout: o.timeout,
            min_idle: o.min_idle,
            noack: o.noack,
            keys: o.keys.iter().map(|k| k.to_vec()).collect(),
            ids: o
                .ids
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    if eq(a, "$") {
                        r.ids[i].to_bytes()
                    } else {
                        a.to_vec()
                    }
                })
                .collect(),
        }
    }

    /// Run `f` on these arguments as [`ReadArgs`].
    pub fn with<R>(&self, f: impl FnOnce(&ReadArgs<'_>) -> R) -> R {
        let keys: Vec<&[u8]> = self.keys.iter().map(|k| k.as_slice()).collect();
        let ids: Vec<&[u8]> = self.ids.iter().map(|k| k.as_slice()).collect();
        let mut a = ReadArgs::xread(&keys, &ids);
        a.group = self
            .group
            .as_ref()
            .map(|(g, c)| (g.as_slice(), c.as_slice()));
        a.count = self.count;
        a.max_count = self.max_count;
        a.max_size = self.max_size;
        a.timeout = self.timeout;
        a.min_idle = self.min_idle;
        a.noack = self.noack;
        f(&a)
    }
}

/// A sink that counts the streams served (an unserved stream is taken back).
struct Counted<'s, S> {
    inner: &'s mut S,
    streams: usize,
}

impl<S: ReadSink> ReadSink for Counted<'_, S> {
    fn stream(&mut self, key: &[u8]) {
        self.streams += 1;
        self.inner.stream(key);
    }
    fn entry(&mut self, e: &crate::structures::node::EntryView<'_>, delivery: Option<(u64, u64)>) {
        self.inner.entry(e, delivery);
    }
    fn missing(&mut self, id: StreamId) {
        self.inner.missing(id);
    }
    fn unstream(&mut self) {
        self.streams -= 1;
        self.inner.unstream();
    }
}

/// XREAD / XREADGROUP from typed arguments into `sink`, blocking as the commands do: when
/// no stream was served and `o.timeout` is not -1 (and the context allows blocking), the
/// request to block with and the arguments to run again when woken.
pub fn read_typed_or_block(
    ctx: &mut Ctx<'_>,
    o: &ReadArgs<'_>,
    sink: &mut impl ReadSink,
) -> CmdResult<Option<(BlockRequest, OwnedReadArgs)>> {
    if o.group.is_some() {
        if let Some(e) = &ctx.reject_writes {
            return Err(e.clone());
        }
    }
    check_typed(o)?;
    if o.timeout > 0 && o.timeout > i64::MAX - ctx.now {
        return Err(CmdError::timeout_out_of_range());
    }
    let r = resolve(ctx, o)?;
    let mut counted = Counted {
        inner: sink,
        streams: 0,
    };
    let served = serve(ctx, o, &r, &mut counted)?;
    if counted.streams > 0 || o.timeout == -1 || ctx.deny_blocking {
        return Ok(None);
    }
    Ok(Some((
        typed_block_request(ctx.now, o, &served),
        OwnedReadArgs::new(o, &r),
    )))
}

/// Serve every stream that has something for the reader, in the caller's order, until
/// the MAXCOUNT / MAXSIZE budget is spent.
fn serve(
    ctx: &mut Ctx<'_>,
    o: &ReadArgs<'_>,
    r: &Resolved,
    sink: &mut impl ReadSink,
) -> CmdResult<Served> {
    let n = o.keys.len();
    let keys = o.keys;
    let now = ctx.now;
    let mut min_idle = o.min_idle;
    let mut budget = Budget::new(o.max_count, o.max_size, ctx.protocol == 3);
    if o.group.is_some() {
        // Group reads are logged as the claims and group updates they cause.
        ctx.prevent_propagation();
    }
    let mut min_pel_delivery_time = i64::MAX;
    for i in 0..n {
        if budget.exhausted() {
            break;
        }
        let key = keys[i];
        let Some(s) = ctx.stream(key)? else { continue };
        let mut gt = r.ids[i];
        let mut serve_claimed = false;
        let mut serve_sync = false;
        let mut serve_history = false;
        let mut read: Option<GroupRead> = None;
        if let Some((_, cname)) = o.group {
            let gr = s
                .group_mut(r.groups[i])
                .start_read(cname, gt, min_idle, now);
            if let Some(t) = gr.oldest_delivery {
                min_pel_delivery_time = min_pel_delivery_time.min(t);
            }
            serve_claimed = gr.claimable;
            serve_sync = gr.new_entries;
            serve_history = gr.history;
            gt = gr.after;
            if gr.created {
                ctx.dirty += 1;
            }
            read = Some(gr);
        } else if s.length > 0 {
            let maxid = s.last_live_id().unwrap_or(StreamId::MIN);
            if maxid > gt {
                serve_sync = true;
            }
        }
        let mut claimed_only = false;
        if serve_history {
            // CLAIM is ignored when serving a consumer's history, for the rest of the command.
            min_idle = -1;
        } else if !serve_sync && serve_claimed {
            serve_sync = true;
            claimed_only = true;
        }
        let start = gt.incr().unwrap_or(StreamId::MIN);
        let Some((gname, cname)) = o.group else {
            if serve_sync {
                let s = ctx.stream(key)?.expect("stream exists");
                sink.stream(key);
                budget.stream(key);
                let before = budget.served();
                let limit = if o.count == 0 { u64::MAX } else { o.count };
                for e in s.range(start, StreamId::MAX, false).take(limit as usize) {
                    if !budget.admit(Some(&e), e.id, None) {
                        break;
                    }
                    sink.entry(&e, None);
                }
                budget.end_stream(budget.served() - before);
            }
            continue;
        };
        let g = r.groups[i];
        let GroupRead {
            consumer: c,
            created,
            ..
        } = read.expect("a group read started");
        if !serve_sync {
            if ctx.recording() {
                if created {
                    ctx.also_propagate(createconsumer_record(key, gname, cname));
                }
                let (seen, active) = consumer_times(ctx, key, g, c)?;
                ctx.propagate_consumer_times(key, gname, cname, seen, active);
            }
            continue;
        }
        let record = ctx.recording();
        let s = ctx.stream(key)?.expect("stream exists");
        let mut dirty = 0u64;
        let mut events: Vec<PelEvent> = Vec::new();
        let last_before = s.groups.get(g).last_id;
        let er_before = s.groups.get(g).entries_read;
        sink.stream(key);
        budget.stream(key);
        let before = budget.served();
        let mut d = Delivery {
            c,
            count: o.count,
            now,
            record,
            dirty: &mut dirty,
            events: &mut events,
            budget: &mut budget,
        };
        let mut grp = s.group_mut(g);
        if serve_history {
            grp.deliver_history(start, &mut d, sink);
        } else {
            grp.deliver_new(start, min_idle, claimed_only, o.noack, &mut d, sink);
        }
        budget.end_stream(budget.served() - before);
        let (last_after, er_after) = (s.groups.get(g).last_id, s.groups.get(g).entries_read);
        // Redis counts one change per key served with something to propagate, and
        // none for a read of the consumer's own history.
        if !serve_history && dirty > 0 {
            ctx.dirty += 1;
        }
        if ctx.recording() {
            propagate_pel_events(ctx, key, gname, cname, &events, last_before);
            if last_after != last_before || er_after != er_before {
                ctx.also_propagate(setid_record(key, gname, last_after, er_after));
                // XGROUP SETID clamps ENTRIESREAD to entries-added; the exact value:
                let (key, group) = (key.to_vec(), gname.to_vec());
                ctx.propagate_record(LogRecord::EntriesRead {
                    key,
                    group,
                    value: er_after,
                });
            }
            if created && (o.noack || events.is_empty()) {
                ctx.also_propagate(createconsumer_record(key, gname, cname));
            }
            let (seen, active) = consumer_times(ctx, key, g, c)?;
            ctx.propagate_consumer_times(key, gname, cname, seen, active);
        }
    }
    Ok(Served {
        min_idle,
        min_pel_delivery_time,
    })
}

fn createconsumer_record(key: &[u8], group: &[u8], consumer: &[u8]) -> Vec<Vec<u8>> {
    vec![
        b"XGROUP".to_vec(),
        b"CREATECONSUMER".to_vec(),
        key.to_vec(),
        group.to_vec(),
        consumer.to_vec(),
    ]
}

/// Seen and active times of a group's consumer.
fn consumer_times(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    g: GroupIdx,
    c: ConsumerIdx,
) -> CmdResult<(i64, i64)> {
    let s = ctx.stream(key)?.expect("stream exists");
    Ok(s.group_mut(g).consumer_times(c))
}
