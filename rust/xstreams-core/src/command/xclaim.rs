//! XCLAIM and XAUTOCLAIM.

use super::args::{int_or, is, range_start, strict_id};
use super::{setid_record, xclaim_record, Ctx};
use crate::error::{CmdError, CmdResult};
use crate::id::{parse_id, StreamId};
use crate::num::string2ll;
use crate::reply::Reply;
use crate::stream::{entry_reply, GroupIdx, Stream};

/// Log record for a pending entry dropped because its stream entry is gone: an XACK.
/// (redis-server propagates an XCLAIM by the owner, which would also refresh the owner's
/// seen-time on replay; XACK has exactly the effect of dropping the record.)
fn dropped_records(s: &Stream, g: GroupIdx, p: usize, key: &[u8], group: &[u8]) -> Vec<Vec<u8>> {
    let r = s.groups.get(g).record(p);
    vec![
        b"XACK".to_vec(),
        key.to_vec(),
        group.to_vec(),
        r.id.to_bytes(),
    ]
}

/// Log record reproducing a claim just made.
fn claimed_record(
    s: &Stream,
    g: GroupIdx,
    p: usize,
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
) -> Vec<Vec<u8>> {
    let cg = s.groups.get(g);
    let r = cg.record(p);
    xclaim_record(
        key,
        group,
        consumer,
        r.id,
        r.delivery_time,
        r.delivery_count,
        true,
        cg.last_id,
    )
}

fn claim_one(
    s: &mut Stream,
    g: GroupIdx,
    p: usize,
    c: usize,
    time: i64,
    retry: Option<u64>,
    justid: bool,
    now: i64,
) {
    let cg = s.groups.get_mut(g);
    cg.update_delivery_time(p, time);
    match retry {
        Some(r) => cg.set_delivery_count(p, r),
        None if !justid => cg.incr_delivery_count(p),
        None => {}
    }
    cg.set_owner(p, c);
    cg.consumer_mut(c).active_time = now;
}

/// `XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
/// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]`
pub fn xclaim(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let group = match ctx.stream(args[1])? {
        Some(s) => s.groups.lookup(args[2]),
        None => None,
    };
    let Some(g) = group else {
        return Err(CmdError::nogroup_key_or_group(args[1], args[2]));
    };
    let minidle = int_or(args[4], CmdError::xclaim_min_idle)?.max(0);
    let mut ids = Vec::new();
    let mut j = 5;
    while j < args.len() {
        match parse_id(args[j], 0, true, false) {
            Some(p) => ids.push(p.id),
            None => break,
        }
        j += 1;
    }
    let now = ctx.now;
    let mut last_id = StreamId::MIN;
    let mut deliverytime: i64 = -1;
    let mut retry: Option<u64> = None;
    let mut force = false;
    let mut justid = false;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = args[j];
        if is(opt, "FORCE") {
            force = true;
        } else if is(opt, "JUSTID") {
            justid = true;
        } else if is(opt, "IDLE") && more > 0 {
            j += 1;
            let v = int_or(args[j], CmdError::xclaim_idle)?;
            deliverytime = now.wrapping_sub(v);
        } else if is(opt, "TIME") && more > 0 {
            j += 1;
            deliverytime = int_or(args[j], CmdError::xclaim_time)?;
        } else if is(opt, "RETRYCOUNT") && more > 0 {
            j += 1;
            let v = string2ll(args[j]).ok_or_else(CmdError::xclaim_retrycount)?;
            // A negative count means "not given", as in Redis.
            retry = if v >= 0 { Some(v as u64) } else { None };
        } else if is(opt, "LASTID") && more > 0 {
            j += 1;
            last_id = strict_id(args[j])?;
        } else {
            return Err(CmdError::xclaim_unrecognized(opt));
        }
        j += 1;
    }
    let recording = ctx.recording();
    ctx.prevent_propagation();
    let mut records: Vec<Vec<Vec<u8>>> = Vec::new();
    let s = ctx.stream(args[1])?.expect("checked");
    let mut dirty = 0u64;
    let mut propagate_last_id = false;
    if last_id > s.groups.get(g).last_id {
        s.groups.set_last_id(g, last_id);
        dirty += 1;
        propagate_last_id = true;
    }
    if deliverytime != -1 {
        if deliverytime < 0 || deliverytime > now {
            deliverytime = now;
        }
    } else {
        deliverytime = now;
    }
    let c = match s.groups.get(g).consumer_idx(args[3]) {
        Some(c) => c,
        None => {
            dirty += 1;
            s.groups
                .get_mut(g)
                .create_consumer(args[3], now)
                .expect("absent")
        }
    };
    s.groups.get_mut(g).consumer_mut(c).seen_time = now;
    let mut out = Vec::new();
    for id in ids {
        let mut pel = s.groups.get(g).pel_idx(&id);
        if !s.contains(id) {
            if let Some(p) = pel {
                if recording {
                    records.push(dropped_records(s, g, p, args[1], args[2]));
                }
                s.groups.remove_pending(g, p);
                dirty += 1;
            }
            continue;
        }
        if force && pel.is_none() {
            pel = s.groups.add_pending(g, id, None, now);
        }
        let Some(p) = pel else { continue };
        {
            let r = s.groups.get(g).record(p);
            if r.consumer.is_some() && minidle != 0 && now - r.delivery_time < minidle {
                continue;
            }
        }
        claim_one(s, g, p, c, deliverytime, retry, justid, now);
        if justid {
            out.push(Reply::id(&id));
        } else {
            out.push(entry_reply(&s.get(id).expect("entry exists")));
        }
        if recording {
            records.push(claimed_record(s, g, p, args[1], args[2], args[3]));
            propagate_last_id = false;
        }
        dirty += 1;
    }
    let (er, gl) = (s.groups.get(g).entries_read, s.groups.get(g).last_id);
    let cons = s.groups.get(g).consumer(c);
    let (seen, active) = (cons.seen_time, cons.active_time);
    ctx.dirty += dirty;
    if recording {
        for r in records {
            ctx.also_propagate(r);
        }
        if propagate_last_id {
            ctx.also_propagate(setid_record(args[1], args[2], gl, er));
            let (key, group) = (args[1].to_vec(), args[2].to_vec());
            ctx.propagate_record(super::LogRecord::EntriesRead {
                key,
                group,
                value: er,
            });
        }
        ctx.propagate_consumer_times(args[1], args[2], args[3], seen, active);
    }
    Ok(Reply::Array(out))
}

/// `XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]`
pub fn xautoclaim(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    const ATTEMPTS_FACTOR: i64 = 10;
    let minidle = int_or(args[4], CmdError::xautoclaim_min_idle)?.max(0);
    let start = range_start(args[5])?;
    let mut count: i64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(args[j], "COUNT") && more > 0 {
            let max_count = i64::MAX / 16;
            count = string2ll(args[j + 1])
                .filter(|&n| (1..=max_count).contains(&n))
                .ok_or_else(CmdError::xautoclaim_count)?;
            j += 1;
        } else if is(args[j], "JUSTID") {
            justid = true;
        } else {
            return Err(CmdError::syntax());
        }
        j += 1;
    }
    let group = match ctx.stream(args[1])? {
        Some(s) => s.groups.lookup(args[2]),
        None => None,
    };
    let Some(g) = group else {
        return Err(CmdError::nogroup_key_or_group(args[1], args[2]));
    };
    let now = ctx.now;
    let recording = ctx.recording();
    ctx.prevent_propagation();
    let mut records: Vec<Vec<Vec<u8>>> = Vec::new();
    let s = ctx.stream(args[1])?.expect("checked");
    let mut dirty = 0u64;
    let c = match s.groups.get(g).consumer_idx(args[3]) {
        Some(c) => c,
        None => {
            dirty += 1;
            s.groups
                .get_mut(g)
                .create_consumer(args[3], now)
                .expect("absent")
        }
    };
    s.groups.get_mut(g).consumer_mut(c).seen_time = now;
    let mut attempts = count.saturating_mul(ATTEMPTS_FACTOR);
    let mut claimed = Vec::new();
    let mut deleted = Vec::new();
    let mut cursor = start;
    let mut next_cursor: Option<StreamId> = None;
    loop {
        if attempts == 0 || count == 0 {
            // The reply cursor is the next pending ID after the last one examined.
            next_cursor = s.groups.get(g).pel_seek_ge(cursor).map(|(id, _)| id);
            break;
        }
        attempts -= 1;
        let Some((id, p)) = s.groups.get(g).pel_seek_ge(cursor) else {
            break;
        };
        cursor = match id.incr() {
            Some(n) => n,
            None => StreamId::MAX,
        };
        let at_end = id == StreamId::MAX;
        if !s.contains(id) {
            if recording {
                records.push(dropped_records(s, g, p, args[1], args[2]));
            }
            s.groups.remove_pending(g, p);
            deleted.push(id);
            dirty += 1;
            count -= 1;
            if at_end {
                break;
            }
            continue;
        }
        {
            let r = s.groups.get(g).record(p);
            if r.consumer.is_some() && minidle != 0 && now - r.delivery_time < minidle {
                if at_end {
                    break;
                }
                continue;
            }
        }
        claim_one(s, g, p, c, now, None, justid, now);
        if justid {
            claimed.push(Reply::id(&id));
        } else {
            claimed.push(entry_reply(&s.get(id).expect("entry exists")));
        }
        if recording {
            records.push(claimed_record(s, g, p, args[1], args[2], args[3]));
        }
        count -= 1;
        dirty += 1;
        if at_end {
            break;
        }
    }
    let end_id = next_cursor.unwrap_or(StreamId::MIN);
    let cons = s.groups.get(g).consumer(c);
    let (seen, active) = (cons.seen_time, cons.active_time);
    ctx.dirty += dirty;
    if recording {
        for r in records {
            ctx.also_propagate(r);
        }
        ctx.propagate_consumer_times(args[1], args[2], args[3], seen, active);
    }
    Ok(Reply::Array(vec![
        Reply::id(&end_id),
        Reply::Array(claimed),
        Reply::Array(deleted.iter().map(Reply::id).collect()),
    ]))
}
