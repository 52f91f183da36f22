//! XREAD and XREADGROUP (one implementation, as in redis-server), including
//! XREADGROUP's CLAIM option and blocking.

use super::args::{block_timeout, eq, int, int_or, is, strict_id};
use super::{setid_record, xclaim_record, BlockRequest, Ctx, LogRecord};
use crate::error::{CmdError, CmdResult};
use crate::group::{ConsumerIdx, INVALID_ENTRIES_READ};
use crate::id::StreamId;
use crate::reply::Reply;
use crate::stream::{entry_reply, GroupIdx, RangeIter, Stream};

struct ReadOpts<'a> {
    group: bool,
    min_idle: i64,
    timeout: i64,
    count: u64,
    noack: bool,
    streams_arg: usize,
    streams_count: usize,
    groupname: Option<&'a [u8]>,
    consumer: Option<&'a [u8]>,
}

fn parse<'a>(ctx: &Ctx<'_>, args: &[&'a [u8]]) -> CmdResult<ReadOpts<'a>> {
    let group = args[0].len() == 10;
    let mut o = ReadOpts {
        group,
        min_idle: -1,
        timeout: -1,
        count: 0,
        noack: false,
        streams_arg: 0,
        streams_count: 0,
        groupname: None,
        consumer: None,
    };
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
        } else if is(a, "STREAMS") && more > 0 {
            o.streams_arg = i + 1;
            let n = argc - o.streams_arg;
            if !n.is_multiple_of(2) {
                return Err(CmdError::unbalanced_streams(group));
            }
            o.streams_count = n / 2;
            break;
        } else if is(a, "GROUP") && more >= 2 {
            if !group {
                return Err(CmdError::xread_option_only_group("GROUP"));
            }
            o.groupname = Some(args[i + 1]);
            o.consumer = Some(args[i + 2]);
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
    if group && o.groupname.is_none() {
        return Err(CmdError::missing_group_option());
    }
    Ok(o)
}

/// `XREAD [COUNT count] [BLOCK ms] STREAMS key [key ...] id [id ...]` and
/// `XREADGROUP GROUP group consumer [COUNT count] [BLOCK ms] [CLAIM min-idle-time]
/// [NOACK] STREAMS key [key ...] id [id ...]`
pub fn xread(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let o = parse(ctx, args)?;
    let n = o.streams_count;
    let keys = &args[o.streams_arg..o.streams_arg + n];
    let id_args = &args[o.streams_arg + n..];
    let mut ids: Vec<StreamId> = Vec::with_capacity(n);
    let mut groups: Vec<GroupIdx> = Vec::with_capacity(n);

    // Resolve IDs and groups, failing on the first bad key, group or ID.
    for (idx, key) in keys.iter().enumerate() {
        let s = ctx.stream(key)?;
        if let Some(gname) = o.groupname {
            let g = s.as_ref().and_then(|s| s.groups.lookup(gname));
            match g {
                Some(g) => groups.push(g),
                None => return Err(CmdError::nogroup_xreadgroup(key, gname)),
            }
        }
        let arg = id_args[idx];
        if eq(arg, "$") {
            if o.group {
                return Err(CmdError::dollar_in_xreadgroup());
            }
            ids.push(s.map(|s| s.last_id).unwrap_or(StreamId::MIN));
        } else if eq(arg, "+") {
            if o.group {
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
            if !o.group {
                return Err(CmdError::gt_in_xread());
            }
            ids.push(StreamId::MAX);
        } else {
            ids.push(strict_id(arg)?);
        }
    }

    let now = ctx.now;
    let protocol = ctx.protocol;
    let mut min_idle = o.min_idle;
    if o.group {
        // Group reads are logged as the claims and group updates they cause.
        ctx.prevent_propagation();
    }
    let mut served: Vec<(Reply, Reply)> = Vec::new();
    let mut min_pel_delivery_time = i64::MAX;
    for i in 0..n {
        let key = keys[i];
        let Some(s) = ctx.stream(key)? else { continue };
        let mut gt = ids[i];
        let mut serve_claimed = false;
        let mut serve_sync = false;
        let mut serve_history = false;
        let mut consumer: Option<ConsumerIdx> = None;
        let mut created = false;
        if o.group {
            let g = groups[i];
            if min_idle != -1 {
                let cg = s.groups.get(g);
                for (_, r) in cg.time_order() {
                    if !s.contains(r.id) {
                        continue;
                    }
                    if r.delivery_time < min_pel_delivery_time {
                        min_pel_delivery_time = r.delivery_time;
                    }
                    let idle = (now.wrapping_sub(r.delivery_time)) as u64;
                    if idle >= min_idle as u64 {
                        serve_claimed = true;
                    }
                    break;
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
            let cname = o.consumer.expect("group implies consumer");
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
        if !serve_sync {
            if o.group && ctx.recording() {
                let gname = o.groupname.expect("group read");
                let cname = o.consumer.expect("group read");
                if created {
                    ctx.also_propagate(vec![
                        b"XGROUP".to_vec(),
                        b"CREATECONSUMER".to_vec(),
                        key.to_vec(),
                        gname.to_vec(),
                        cname.to_vec(),
                    ]);
                }
                let (seen, active) = consumer_times(ctx, key, groups[i], consumer)?;
                ctx.propagate_consumer_times(key, gname, cname, seen, active);
            }
            continue;
        }
        let start = gt.incr().unwrap_or(StreamId::MIN);
        let s = ctx.stream(key)?.expect("stream exists");
        let entries = if o.group {
            let g = groups[i];
            let c = consumer.expect("group read has a consumer");
            let mut dirty = 0u64;
            let mut rec: Delivered = Vec::new();
            let last_before = s.groups.get(g).last_id;
            let er_before = s.groups.get(g).entries_read;
            let r = if serve_history {
                serve_history_entries(s, g, c, start, o.count, now, &mut dirty, &mut rec)
            } else {
                serve_group(
                    s,
                    g,
                    c,
                    start,
                    o.count,
                    min_idle,
                    claimed_only,
                    o.noack,
                    now,
                    &mut dirty,
                    &mut rec,
                )
            };
            let (last_after, er_after) = (s.groups.get(g).last_id, s.groups.get(g).entries_read);
            // Redis counts one change per key served with something to propagate, and
            // none for a read of the consumer's own history.
            if !serve_history && dirty > 0 {
                ctx.dirty += 1;
            }
            if ctx.recording() {
                let gname = o.groupname.expect("group read");
                let cname = o.consumer.expect("group read");
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
                    ctx.also_propagate(vec![
                        b"XGROUP".to_vec(),
                        b"CREATECONSUMER".to_vec(),
                        key.to_vec(),
                        gname.to_vec(),
                        cname.to_vec(),
                    ]);
                }
                let (seen, active) = consumer_times(ctx, key, g, Some(c))?;
                ctx.propagate_consumer_times(key, gname, cname, seen, active);
            }
            r
        } else {
            let limit = if o.count == 0 {
                usize::MAX
            } else {
                o.count as usize
            };
            Reply::Array(
                s.range(start, StreamId::MAX, false)
                    .take(limit)
                    .map(|e| entry_reply(&e))
                    .collect(),
            )
        };
        served.push((Reply::bulk(key), entries));
    }

    if !served.is_empty() {
        return Ok(if protocol >= 3 {
            Reply::Map(served)
        } else {
            Reply::Array(
                served
                    .into_iter()
                    .map(|(k, v)| Reply::Array(vec![k, v]))
                    .collect(),
            )
        });
    }

    if o.timeout != -1 {
        if ctx.deny_blocking {
            return Ok(Reply::NilArray);
        }
        let mut new_args: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
        for (idx, arg) in id_args.iter().enumerate() {
            if eq(arg, "$") {
                new_args[o.streams_arg + n + idx] = ids[idx].to_bytes();
            }
        }
        let claim_wake_at = if min_idle != -1 {
            let base = if min_pel_delivery_time != i64::MAX {
                min_pel_delivery_time
            } else {
                now
            };
            Some(base.saturating_add(min_idle))
        } else {
            None
        };
        ctx.block = Some(BlockRequest {
            keys: keys.iter().map(|k| k.to_vec()).collect(),
            timeout_ms: o.timeout,
            args: new_args,
            claim_wake_at,
            unblock_on_nokey: o.group,
        });
        return Ok(Reply::NilArray);
    }
    Ok(Reply::NilArray)
}

/// Seen and active times of a group's consumer.
fn consumer_times(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    g: GroupIdx,
    c: Option<ConsumerIdx>,
) -> CmdResult<(i64, i64)> {
    let s = ctx.stream(key)?.expect("stream exists");
    let c = c.expect("group read has a consumer");
    let cons = s.groups.get(g).consumer(c);
    Ok((cons.seen_time, cons.active_time))
}

/// A delivery to record in the log: (id, delivery time, delivery count, force, appended
/// at the tail out of time order).
type Delivered = Vec<(StreamId, i64, u64, bool, bool)>;

/// A group read from a consumer's own history (`XREADGROUP ... <id>`): entries of its PEL
/// with ID >= start; deleted entries come as `[id, nil]`. Each served entry counts a
/// delivery.
fn serve_history_entries(
    s: &mut Stream,
    g: GroupIdx,
    c: ConsumerIdx,
    start: StreamId,
    count: u64,
    now: i64,
    dirty: &mut u64,
    rec: &mut Delivered,
) -> Reply {
    let ids: Vec<StreamId> = {
        let cg = s.groups.get(g);
        let it = cg.consumer(c).pel.range(start..).copied();
        if count == 0 {
            it.collect()
        } else {
            it.take(count as usize).collect()
        }
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        match s.get(id) {
            Some(e) => {
                out.push(entry_reply(&e));
                let cg = s.groups.get_mut(g);
                if let Some(p) = cg.pel_idx(&id) {
                    cg.incr_delivery_count(p);
                    cg.update_delivery_time(p, now);
                    rec.push((id, now, cg.record(p).delivery_count, false, false));
                    *dirty += 1;
                }
            }
            None => out.push(Reply::Array(vec![Reply::id(&id), Reply::NilArray])),
        }
    }
    Reply::Array(out)
}

fn claimed_entry_reply(e: &crate::node::EntryView<'_>, idle: u64, count: u64) -> Reply {
    let mut fv = Vec::with_capacity(e.num_fields() * 2);
    for (f, v) in e.pairs() {
        fv.push(Reply::Bulk(f.to_vec()));
        fv.push(Reply::Bulk(v.to_vec()));
    }
    Reply::Array(vec![
        Reply::id(&e.id),
        Reply::Array(fv),
        Reply::Int(idle as i64),
        Reply::Int(count as i64),
    ])
}

/// A group read of new entries (`>`), optionally preceded by claiming idle pending entries
/// (CLAIM): NACKed entries first, then pending entries idle at least `min_idle`, oldest
/// delivery first, then new entries, `count` in total.
#[allow(clippy::too_many_arguments)]
fn serve_group(
    s: &mut Stream,
    g: GroupIdx,
    c: ConsumerIdx,
    start: StreamId,
    count: u64,
    min_idle: i64,
    claimed_only: bool,
    noack: bool,
    now: i64,
    dirty: &mut u64,
    rec: &mut Delivered,
) -> Reply {
    let mut out: Vec<Reply> = Vec::new();
    if min_idle != -1 {
        let cg = s.groups.get(g);
        let tail = cg.time_tail();
        let mut cur = cg.time_head();
        let mut processed = 0u64;
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
            let mut stop = false;
            if let Some(e) = s.get(id) {
                out.push(claimed_entry_reply(&e, idle, dc));
                let cg = s.groups.get_mut(g);
                cg.set_owner(p, c);
                cg.incr_delivery_count(p);
                cg.update_delivery_time(p, now);
                cg.consumer_mut(c).active_time = now;
                rec.push((id, now, cg.record(p).delivery_count, true, false));
                *dirty += 1;
                processed += 1;
                if count != 0 && processed >= count {
                    stop = true;
                }
            }
            if stop {
                break;
            }
            cur = if Some(p) == tail { None } else { next };
        }
    }
    if claimed_only || (count != 0 && count == out.len() as u64) {
        return Reply::Array(out);
    }
    let meta = s.meta();
    let four = min_idle != -1;
    let Stream { rax, groups, .. } = s;
    for e in RangeIter::new(rax, start, StreamId::MAX, false) {
        let id = e.id;
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
            *dirty += 1;
        }
        if four {
            let mut r = entry_reply(&e);
            if let Reply::Array(v) = &mut r {
                v.push(Reply::Int(0));
                v.push(Reply::Int(0));
            }
            out.push(r);
        } else {
            out.push(entry_reply(&e));
        }
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
            rec.push((id, now, 1, true, to_tail));
            groups.get_mut(g).consumer_mut(c).active_time = now;
            *dirty += 1;
        }
        if count != 0 && count == out.len() as u64 {
            break;
        }
    }
    Reply::Array(out)
}
