//! XRANGE, XREVRANGE, XLEN, XDEL, XDELEX and XSETID.

use super::args::{int, is, range_end, range_start, strict_id};
use super::Ctx;
use crate::base::num::string2ll;
use crate::command::reply::entry_reply;
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::structures::id::StreamId;
use crate::structures::node::EntryView;
use crate::structures::stream::{DeleteOutcome, RefPolicy, Stream};

/// Typed arguments of XRANGE / XREVRANGE: the entries of `key` from `start` to `end`
/// (both included), in descending order with `rev`.
#[derive(Clone, Copy, Debug)]
pub struct RangeArgs<'a> {
    pub key: &'a [u8],
    pub start: StreamId,
    pub end: StreamId,
    /// COUNT (`None`: every entry; 0 reads nothing).
    pub count: Option<usize>,
    pub rev: bool,
}

impl<'a> RangeArgs<'a> {
    /// Parse `XRANGE key start end [COUNT count]` (or `XREVRANGE key end start ...`):
    /// the bounds, then the count (a negative one reads nothing, as 0).
    fn parse(args: &[&'a [u8]], rev: bool) -> CmdResult<Self> {
        let (start_arg, end_arg) = if rev {
            (args[3], args[2])
        } else {
            (args[2], args[3])
        };
        let start = range_start(start_arg)?;
        let end = range_end(end_arg)?;
        let mut count = None;
        let mut j = 4;
        while j < args.len() {
            let additional = args.len() - j - 1;
            if is(args[j], "COUNT") && additional >= 1 {
                count = Some(int(args[j + 1])?.max(0) as usize);
                j += 1;
            } else {
                return Err(CmdError::syntax());
            }
            j += 1;
        }
        Ok(RangeArgs {
            key: args[1],
            start,
            end,
            count,
            rev,
        })
    }
}

/// XRANGE / XREVRANGE from typed arguments: `each` is given the entries in order.
/// `Ok(false)`: no such key (WRONGTYPE for another type).
pub fn range_typed(
    ctx: &mut Ctx<'_>,
    a: &RangeArgs<'_>,
    mut each: impl FnMut(&EntryView<'_>),
) -> CmdResult<bool> {
    let Some(s) = ctx.stream(a.key)? else {
        return Ok(false);
    };
    for e in s
        .range(a.start, a.end, a.rev)
        .take(a.count.unwrap_or(usize::MAX))
    {
        each(&e);
    }
    Ok(true)
}

fn xrange_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], rev: bool) -> CmdResult<Reply> {
    let a = RangeArgs::parse(args, rev)?;
    let mut out = Vec::new();
    if !range_typed(ctx, &a, |e| out.push(entry_reply(e)))? {
        return Ok(Reply::empty_array());
    }
    if a.count == Some(0) {
        return Ok(Reply::NilArray);
    }
    Ok(Reply::Array(out))
}

/// `XRANGE key start end [COUNT count]`
pub fn xrange(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    xrange_generic(ctx, args, false)
}

/// `XREVRANGE key end start [COUNT count]`
pub fn xrevrange(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    xrange_generic(ctx, args, true)
}

/// `XLEN key`
pub fn xlen(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Int(
        ctx.stream(args[1])?.map(|s| s.length as i64).unwrap_or(0),
    ))
}

/// `XDEL key id [id ...]`
pub fn xdel(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    if ctx.stream(args[1])?.is_none() {
        return Ok(Reply::Int(0));
    }
    let ids = args[2..]
        .iter()
        .map(|a| strict_id(a))
        .collect::<CmdResult<Vec<StreamId>>>()?;
    let s = ctx.stream(args[1])?.expect("checked");
    let n = s.xdel(&ids);
    ctx.dirty += n;
    if n > 0 {
        ctx.touch(args[1]);
    }
    Ok(Reply::Int(n as i64))
}

/// The `[KEEPREF|DELREF|ACKED] IDS numids id...` block of XDELEX and XACKDEL.
pub struct AckDelArgs {
    pub start: usize,
    pub numids: usize,
    pub policy: RefPolicy,
}

/// Parse the reference policy and IDS block starting at `start_pos`.
pub fn parse_ackdel(args: &[&[u8]], start_pos: usize) -> CmdResult<AckDelArgs> {
    let mut policy: Option<RefPolicy> = None;
    let mut startidx: Option<usize> = None;
    let mut numids = 0usize;
    let mut j = start_pos;
    while j < args.len() {
        let opt = args[j];
        if is(opt, "KEEPREF") && policy.is_none() {
            policy = Some(RefPolicy::KeepRef);
            j += 1;
        } else if is(opt, "DELREF") && policy.is_none() {
            policy = Some(RefPolicy::DelRef);
            j += 1;
        } else if is(opt, "ACKED") && policy.is_none() {
            policy = Some(RefPolicy::Acked);
            j += 1;
        } else if is(opt, "IDS") && j + 1 < args.len() {
            let n = string2ll(args[j + 1])
                .filter(|&n| n >= 1)
                .ok_or_else(CmdError::numids_positive)?;
            if n > (args.len() - j - 2) as i64 {
                return Err(CmdError::numids_mismatch());
            }
            numids = n as usize;
            startidx = Some(j + 2);
            j = j + 2 + numids;
        } else {
            return Err(CmdError::syntax());
        }
    }
    let Some(start) = startidx else {
        return Err(CmdError::ids_required());
    };
    Ok(AckDelArgs {
        start,
        numids,
        policy: policy.unwrap_or(RefPolicy::KeepRef),
    })
}

/// Parse the IDs of an IDS block strictly.
pub fn parse_ids(args: &[&[u8]], a: &AckDelArgs) -> CmdResult<Vec<StreamId>> {
    args[a.start..a.start + a.numids]
        .iter()
        .map(|x| strict_id(x))
        .collect()
}

/// Delete one entry honouring a reference policy (shared by XDELEX and XACKDEL, after
/// XACKDEL's acknowledgement). Returns what happened and the PEL references dropped.
pub fn delete_with_policy(
    s: &mut Stream,
    id: StreamId,
    policy: RefPolicy,
) -> (DeleteOutcome, usize) {
    let mut refs = 0;
    match policy {
        RefPolicy::Acked if s.groups.entry_is_referenced(id) => {
            return (DeleteOutcome::Referenced, 0)
        }
        RefPolicy::DelRef => refs = s.groups.cleanup_entry_refs(id),
        _ => {}
    }
    if s.delete_item(id) {
        (DeleteOutcome::Deleted, refs)
    } else {
        (DeleteOutcome::NotFound, refs)
    }
}

/// `XDELEX key [KEEPREF|DELREF|ACKED] IDS numids id [id ...]`
pub fn xdelex(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let exists = ctx.stream(args[1])?.is_some();
    let a = parse_ackdel(args, 2)?;
    if !exists {
        return Ok(vec![DeleteOutcome::NotFound; a.numids].into());
    }
    let ids = parse_ids(args, &a)?;
    let s = ctx.stream(args[1])?.expect("checked");
    let mut out = Vec::with_capacity(ids.len());
    let mut deleted = 0u64;
    let mut ctx_refs = 0u64;
    let mut first_entry = false;
    for id in ids {
        let (code, refs) = delete_with_policy(s, id, a.policy);
        // DELREF can drop PEL references of an entry already gone from the stream: a
        // change even though nothing was deleted (it must reach the log).
        ctx_refs += refs as u64;
        if code == DeleteOutcome::Deleted {
            if id == s.first_id {
                first_entry = true;
            }
            if id > s.max_deleted_id {
                s.max_deleted_id = id;
            }
            deleted += 1;
        }
        out.push(code);
    }
    if deleted > 0 {
        s.fix_first_after_delete(first_entry);
        ctx.touch(args[1]);
    }
    ctx.dirty += deleted + ctx_refs;
    Ok(out.into())
}

/// `XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]`
pub fn xsetid(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let id = strict_id(args[2])?;
    let mut entries_added: i64 = -1;
    let mut max_xdel = StreamId::MIN;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - 1 - i;
        if is(args[i], "ENTRIESADDED") && more > 0 {
            entries_added = int(args[i + 1])?;
            if entries_added < 0 {
                return Err(CmdError::xsetid_entries_added_negative());
            }
            i += 2;
        } else if is(args[i], "MAXDELETEDID") && more > 0 {
            max_xdel = strict_id(args[i + 1])?;
            if id < max_xdel {
                return Err(CmdError::xsetid_maxdeleted_larger());
            }
            i += 2;
        } else {
            return Err(CmdError::syntax());
        }
    }
    let Some(s) = ctx.stream(args[1])? else {
        return Err(CmdError::no_such_key());
    };
    if id < s.max_deleted_id {
        return Err(CmdError::xsetid_smaller_than_maxdeleted());
    }
    if s.length > 0 {
        let maxid = s.last_live_id().unwrap_or(StreamId::MIN);
        if id < maxid {
            return Err(CmdError::xsetid_smaller_than_top());
        }
        if entries_added != -1 && s.length > entries_added as u64 {
            return Err(CmdError::xsetid_entries_added_small());
        }
    }
    s.last_id = id;
    if entries_added != -1 {
        s.entries_added = entries_added as u64;
    }
    if !max_xdel.is_zero() {
        s.max_deleted_id = max_xdel;
    }
    ctx.dirty += 1;
    Ok(Reply::ok())
}
