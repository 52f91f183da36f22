//! XREAD and XREADGROUP (one implementation, as in redis-server), including
//! XREADGROUP's CLAIM option, the MAXCOUNT / MAXSIZE caps and blocking.
//!
//! Layers: [`parse`] (argument vector -> [`ReadArgs`]), [`resolve`] (keys, groups and
//! IDs, with the errors in redis-server's order), [`serve`] (the entries of each stream
//! into a [`ReadSink`], group delivery and its propagation), then the reply or the block
//! request ([`xread`]) or the typed batch ([`read_typed`]).

use super::args::{block_timeout, eq, int, int_or, is, strict_id};
use super::{setid_record, xclaim_record, BlockRequest, Ctx, LogRecord};
use crate::error::{CmdError, CmdResult};
use crate::group::{ConsumerIdx, INVALID_ENTRIES_READ};
use crate::id::StreamId;
use crate::read::{Budget, ReadSink, ReplySink};
use crate::reply::Reply;
use crate::stream::{GroupIdx, RangeIter, Stream};

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
    /// `BLOCK` timeout in ms (-1: not blocking; typed reads never block).
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
        args: new_args,
        claim_wake_at,
        unblock_on_nokey: o.group.is_some(),
    }
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
    let mut budget = Budget::new(o.max_count, o.max_size);
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
        let mut consumer: Option<ConsumerIdx> = None;
        let mut created = false;
        if let Some((_, cname)) = o.group {
            let g = r.groups[i];
            if min_idle != -1 {
                let cg = s.groups.get(g);
                let oldest = cg
                    .time_order()
                    .map(|(_, r)| r)
                    .find(|r| s.contains(r.id))
                    .map(|r| r.delivery_time);
                if let Some(t) = oldest {
                    min_pel_delivery_time = min_pel_delivery_time.min(t);
                    if (now.wrapping_sub(t)) as u64 >= min_idle as u64 {
                        serve_claimed = true;
                    }
                }
            }
            if gt != StreamId::MAX {
                serve_sync = true;
                serve_history = true;
            } else if s.length > 0 {
                let last = s.groups.get(g).last_id;
                let maxid = s.last_live_id().unwrap_or(StreamId::MIN);
                if maxid > last {
                    serve_sync = true;
                    gt = last;
                }
            }
            let cg = s.groups.get_mut(g);
            let c = match cg.consumer_idx(cname) {
                Some(c) => c,
                None => {
                    created = true;
                    cg.create_consumer(cname, now).expect("consumer absent")
                }
            };
            cg.consumer_mut(c).seen_time = now;
            consumer = Some(c);
            if created {
                ctx.dirty += 1;
            }
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
                    if !budget.admit(Some(&e), e.id, false) {
                        break;
                    }
                    sink.entry(&e, None);
                }
                if budget.exhausted() && budget.served() == before {
                    sink.unstream();
                }
            }
            continue;
        };
        let g = r.groups[i];
        let c = consumer.expect("group read has a consumer");
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
        let s = ctx.stream(key)?.expect("stream exists");
        let mut dirty = 0u64;
        let mut rec: Delivered = Vec::new();
        let last_before = s.groups.get(g).last_id;
        let er_before = s.groups.get(g).entries_read;
        sink.stream(key);
        budget.stream(key);
        let before = budget.served();
        let mut d = Delivery {
            g,
            c,
            count: o.count,
            now,
            dirty: &mut dirty,
            rec: &mut rec,
            budget: &mut budget,
        };
        if serve_history {
            serve_history_entries(s, start, &mut d, sink);
        } else {
            serve_group(s, start, min_idle, claimed_only, o.noack, &mut d, sink);
        }
        if budget.exhausted() && budget.served() == before {
            sink.unstream();
        }
        let (last_after, er_after) = (s.groups.get(g).last_id, s.groups.get(g).entries_read);
        // Redis counts one change per key served with something to propagate, and
        // none for a read of the consumer's own history.
        if !serve_history && dirty > 0 {
            ctx.dirty += 1;
        }
        if ctx.recording() {
            for (id, t, n, force, to_tail) in &rec {
                ctx.also_propagate(xclaim_record(
                    key,
                    gname,
                    cname,
                    *id,
                    *t,
                    *n,
                    *force,
                    last_before,
                ));
                if *to_tail {
                    let (key, group, id) = (key.to_vec(), gname.to_vec(), *id);
                    ctx.propagate_record(LogRecord::PelToTail { key, group, id });
                }
            }
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
            if created && (o.noack || rec.is_empty()) {
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
    let cons = s.groups.get(g).consumer(c);
    Ok((cons.seen_time, cons.active_time))
}

/// A delivery to record in the log: (id, delivery time, delivery count, force, appended
/// at the tail out of time order).
type Delivered = Vec<(StreamId, i64, u64, bool, bool)>;

/// One group delivery in progress: the group and consumer, the per-stream COUNT, the
/// command time, and what it changed, records and may still serve.
struct Delivery<'d> {
    g: GroupIdx,
    c: ConsumerIdx,
    count: u64,
    now: i64,
    dirty: &'d mut u64,
    rec: &'d mut Delivered,
    budget: &'d mut Budget,
}

/// A group read from a consumer's own history (`XREADGROUP ... <id>`): entries of its PEL
/// with ID >= start; deleted entries come as `[id, nil]`. Each served entry counts a
/// delivery.
fn serve_history_entries(
    s: &mut Stream,
    start: StreamId,
    d: &mut Delivery<'_>,
    sink: &mut impl ReadSink,
) {
    let (g, c, now) = (d.g, d.c, d.now);
    let ids: Vec<StreamId> = {
        let cg = s.groups.get(g);
        let it = cg.consumer(c).pel.range(start..).copied();
        if d.count == 0 {
            it.collect()
        } else {
            it.take(d.count as usize).collect()
        }
    };
    for id in ids {
        match s.get(id) {
            Some(e) => {
                if !d.budget.admit(Some(&e), id, false) {
                    return;
                }
                sink.entry(&e, None);
                let cg = s.groups.get_mut(g);
                if let Some(p) = cg.pel_idx(&id) {
                    cg.incr_delivery_count(p);
                    cg.update_delivery_time(p, now);
                    d.rec
                        .push((id, now, cg.record(p).delivery_count, false, false));
                    *d.dirty += 1;
                }
            }
            None => {
                if !d.budget.admit(None, id, false) {
                    return;
                }
                sink.missing(id);
            }
        }
    }
}

/// A group read of new entries (`>`), optionally preceded by claiming idle pending entries
/// (CLAIM): NACKed entries first, then pending entries idle at least `min_idle`, oldest
/// delivery first, then new entries, `count` in total.
fn serve_group(
    s: &mut Stream,
    start: StreamId,
    min_idle: i64,
    claimed_only: bool,
    noack: bool,
    d: &mut Delivery<'_>,
    sink: &mut impl ReadSink,
) {
    let (g, c, now, count) = (d.g, d.c, d.now, d.count);
    let mut served = 0u64;
    if min_idle != -1 {
        let cg = s.groups.get(g);
        let tail = cg.time_tail();
        let mut cur = cg.time_head();
        while let Some(p) = cur {
            let (next, id, dt, dc) = {
                let cg = s.groups.get(g);
                let r = cg.record(p);
                (cg.time_next(p), r.id, r.delivery_time, r.delivery_count)
            };
            let idle = (now.wrapping_sub(dt)) as u64;
            if idle < min_idle as u64 {
                break;
            }
            if let Some(e) = s.get(id) {
                if !d.budget.admit(Some(&e), id, true) {
                    return;
                }
                sink.entry(&e, Some((idle, dc)));
                let cg = s.groups.get_mut(g);
                cg.set_owner(p, c);
                cg.incr_delivery_count(p);
                cg.update_delivery_time(p, now);
                cg.consumer_mut(c).active_time = now;
                d.rec
                    .push((id, now, cg.record(p).delivery_count, true, false));
                *d.dirty += 1;
                served += 1;
                if count != 0 && served >= count {
                    break;
                }
            }
            cur = if Some(p) == tail { None } else { next };
        }
    }
    if claimed_only || (count != 0 && count == served) {
        return;
    }
    let meta = s.meta();
    let four = min_idle != -1;
    let Stream { rax, groups, .. } = s;
    for e in RangeIter::new(rax, start, StreamId::MAX, false) {
        let id = e.id;
        if !d.budget.admit(Some(&e), id, four) {
            return;
        }
        let cg = groups.get(g);
        if id > cg.last_id {
            let mut er = cg.entries_read;
            if er != INVALID_ENTRIES_READ
                && cg.last_id >= meta.first_id
                && !meta.range_has_tombstones(Some(cg.last_id), None)
            {
                er = er.wrapping_add(1);
            } else if meta.entries_added != 0 {
                er = meta.estimate_distance(id);
            }
            groups.get_mut(g).entries_read = er;
            groups.set_last_id(g, id);
            *d.dirty += 1;
        }
        sink.entry(&e, four.then_some((0, 0)));
        served += 1;
        if !noack {
            let mut to_tail = false;
            match groups.get(g).pel_idx(&id) {
                None => {
                    if let Some(p) = groups.add_pending(g, id, Some(c), now) {
                        to_tail = groups.get(g).out_of_order(p);
                    }
                }
                Some(p) => {
                    let cg = groups.get_mut(g);
                    cg.set_owner(p, c);
                    cg.set_delivery_count(p, 1);
                    cg.update_delivery_time(p, now);
                }
            }
            d.rec.push((id, now, 1, true, to_tail));
            groups.get_mut(g).consumer_mut(c).active_time = now;
            *d.dirty += 1;
        }
        if count != 0 && count == served {
            break;
        }
    }
}
