//! XCLAIM and XAUTOCLAIM: argument parsing into [`ClaimArgs`] / [`AutoclaimArgs`], the
//! group lookup, the claim itself ([`crate::structures::pel`]), its log records, and the reply built
//! from the outcome.

use super::args::{int_or, is, range_start, strict_id};
use super::{propagate_pel_events, setid_record, Ctx, LogRecord};
use crate::base::num::string2ll;
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::structures::id::parse_id;
use crate::structures::pel::{
    AutoclaimArgs, AutoclaimOutcome, ClaimArgs, ClaimDelivery, ClaimOutcome,
};
use crate::structures::stream::GroupIdx;

/// Largest XAUTOCLAIM COUNT (redis-server's bound, so COUNT * attempts cannot overflow).
const AUTOCLAIM_MAX_COUNT: u64 = (i64::MAX / 16) as u64;

/// The group `group` of stream `key`, or XCLAIM's NOGROUP error.
fn find_group(ctx: &mut Ctx<'_>, key: &[u8], group: &[u8]) -> CmdResult<GroupIdx> {
    let g = match ctx.stream(key)? {
        Some(s) => s.groups.lookup(group),
        None => None,
    };
    g.ok_or_else(|| CmdError::nogroup_key_or_group(key, group))
}

/// `XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
/// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]`
pub fn xclaim(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    // The group is looked up before the options are parsed, as in redis-server.
    find_group(ctx, args[1], args[2])?;
    let min_idle = int_or(args[4], CmdError::xclaim_min_idle)?;
    let mut ids = Vec::new();
    let mut j = 5;
    while j < args.len() {
        match parse_id(args[j], 0, true, false) {
            Some(p) => ids.push(p.id),
            None => break,
        }
        j += 1;
    }
    let mut a = ClaimArgs::new(args[1], args[2], args[3], min_idle, &[]);
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = args[j];
        if is(opt, "FORCE") {
            a.force = true;
        } else if is(opt, "JUSTID") {
            a.justid = true;
        } else if is(opt, "IDLE") && more > 0 {
            j += 1;
            a.delivery = Some(ClaimDelivery::Idle(int_or(args[j], CmdError::xclaim_idle)?));
        } else if is(opt, "TIME") && more > 0 {
            j += 1;
            a.delivery = Some(ClaimDelivery::Time(int_or(args[j], CmdError::xclaim_time)?));
        } else if is(opt, "RETRYCOUNT") && more > 0 {
            j += 1;
            let v = string2ll(args[j]).ok_or_else(CmdError::xclaim_retrycount)?;
            // A negative count means "not given", as in Redis.
            a.retry_count = (v >= 0).then_some(v as u64);
        } else if is(opt, "LASTID") && more > 0 {
            j += 1;
            a.last_id = Some(strict_id(args[j])?);
        } else {
            return Err(CmdError::xclaim_unrecognized(opt));
        }
        j += 1;
    }
    a.ids = &ids;
    Ok(xclaim_typed(ctx, &a)?.into())
}

/// XCLAIM from typed arguments, as one whole command (write refusal): the group lookup
/// (NOGROUP), the claim, its log records.
pub fn xclaim_typed(ctx: &mut Ctx<'_>, a: &ClaimArgs<'_>) -> CmdResult<ClaimOutcome> {
    super::typed_write(ctx, || a.to_argv(), |ctx| xclaim_run(ctx, a))
}

fn xclaim_run(ctx: &mut Ctx<'_>, a: &ClaimArgs<'_>) -> CmdResult<ClaimOutcome> {
    let g = find_group(ctx, a.key, a.group)?;
    let now = ctx.now;
    let recording = ctx.recording();
    ctx.prevent_propagation();
    let s = ctx.stream(a.key)?.expect("checked");
    let mut grp = s.group_mut(g);
    let (out, fx) = grp.claim(a, now);
    let cg = grp.group();
    let (er, last_id) = (cg.entries_read, cg.last_id);
    let cons = cg.consumer(fx.consumer);
    let (seen, active) = (cons.seen_time, cons.active_time);
    ctx.dirty += fx.dirty;
    if recording {
        propagate_pel_events(ctx, a.key, a.group, a.consumer, &fx.events, last_id);
        // A claim's record carries LASTID; without one, the moved last ID needs its own.
        if fx.last_id_set && out.entries.is_empty() {
            ctx.also_propagate(setid_record(a.key, a.group, last_id, er));
            let (key, group) = (a.key.to_vec(), a.group.to_vec());
            ctx.propagate_record(LogRecord::EntriesRead {
                key,
                group,
                value: er,
            });
        }
        ctx.propagate_consumer_times(a.key, a.group, a.consumer, seen, active);
    }
    Ok(out)
}

/// `XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]`
pub fn xautoclaim(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let min_idle = int_or(args[4], CmdError::xautoclaim_min_idle)?;
    let start = range_start(args[5])?;
    let mut a = AutoclaimArgs::new(args[1], args[2], args[3], min_idle, start);
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(args[j], "COUNT") && more > 0 {
            a.count = string2ll(args[j + 1])
                .filter(|&n| n >= 1 && n as u64 <= AUTOCLAIM_MAX_COUNT)
                .ok_or_else(CmdError::xautoclaim_count)? as u64;
            j += 1;
        } else if is(args[j], "JUSTID") {
            a.justid = true;
        } else {
            return Err(CmdError::syntax());
        }
        j += 1;
    }
    Ok(xautoclaim_typed(ctx, &a)?.into())
}

/// XAUTOCLAIM from typed arguments, as one whole command (write refusal): the COUNT
/// bound, the group lookup (NOGROUP), the claim, its log records.
pub fn xautoclaim_typed(ctx: &mut Ctx<'_>, a: &AutoclaimArgs<'_>) -> CmdResult<AutoclaimOutcome> {
    super::typed_write(ctx, || a.to_argv(), |ctx| xautoclaim_run(ctx, a))
}

fn xautoclaim_run(ctx: &mut Ctx<'_>, a: &AutoclaimArgs<'_>) -> CmdResult<AutoclaimOutcome> {
    if a.count == 0 || a.count > AUTOCLAIM_MAX_COUNT {
        return Err(CmdError::xautoclaim_count());
    }
    let g = find_group(ctx, a.key, a.group)?;
    let now = ctx.now;
    let recording = ctx.recording();
    ctx.prevent_propagation();
    let s = ctx.stream(a.key)?.expect("checked");
    let mut grp = s.group_mut(g);
    let (out, fx) = grp.autoclaim(a, now);
    let cg = grp.group();
    let last_id = cg.last_id;
    let cons = cg.consumer(fx.consumer);
    let (seen, active) = (cons.seen_time, cons.active_time);
    ctx.dirty += fx.dirty;
    if recording {
        propagate_pel_events(ctx, a.key, a.group, a.consumer, &fx.events, last_id);
        ctx.propagate_consumer_times(a.key, a.group, a.consumer, seen, active);
    }
    Ok(out)
}
