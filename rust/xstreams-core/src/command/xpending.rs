//! XPENDING: the summary form and the extended form (IDLE, range, count, consumer),
//! parsed here, answered by the group ([`crate::structures::pel`]), the reply built from the outcome.

use super::args::{int, is, range_end, range_start};
use super::Ctx;
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::structures::group::ConsumerGroup;
use crate::structures::pel::{PendingRange, PendingRow, PendingSummary};

/// `XPENDING key group [[IDLE min-idle-time] start end count [consumer]]`
pub fn xpending(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let argc = args.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        return Err(CmdError::syntax());
    }
    if argc == 3 {
        return Ok(xpending_summary(ctx, args[1], args[2])?.into());
    }
    let mut startidx = 3;
    let mut min_idle = 0;
    if is(args[3], "IDLE") {
        min_idle = int(args[4])?;
        if argc < 8 {
            return Err(CmdError::syntax());
        }
        startidx += 2;
    }
    let count = int(args[startidx + 2])?.max(0) as u64;
    let mut q = PendingRange::new(
        range_start(args[startidx])?,
        range_end(args[startidx + 1])?,
        count,
    );
    q.min_idle = min_idle;
    if startidx + 3 < argc {
        q.consumer = Some(args[startidx + 3]);
    }
    Ok(xpending_range(ctx, args[1], args[2], &q)?.into())
}

/// The group `group` of stream `key`, or XPENDING's NOGROUP error.
fn group<'c>(ctx: &'c mut Ctx<'_>, key: &[u8], group: &[u8]) -> CmdResult<&'c ConsumerGroup> {
    let s = ctx.stream(key)?;
    match s.and_then(|s| s.groups.lookup(group).map(|g| (s, g))) {
        Some((s, g)) => Ok(s.groups.get(g)),
        None => Err(CmdError::nogroup_key_or_group(key, group)),
    }
}

/// XPENDING's summary form, typed.
pub fn xpending_summary(ctx: &mut Ctx<'_>, key: &[u8], grp: &[u8]) -> CmdResult<PendingSummary> {
    Ok(group(ctx, key, grp)?.pending_summary())
}

/// XPENDING's extended form, typed.
pub fn xpending_range(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    grp: &[u8],
    q: &PendingRange<'_>,
) -> CmdResult<Vec<PendingRow>> {
    let now = ctx.now;
    Ok(group(ctx, key, grp)?.pending_range(q, now))
}
