//! Key expiry commands, as redis-server's `expire.c`: EXPIRE, PEXPIRE, EXPIREAT,
//! PEXPIREAT (with NX | XX | GT | LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME and PERSIST.
//!
//! Times are the command's time snapshot (`Ctx::now`, the store clock). An expiry set in
//! the past deletes the key at once (and is logged as `DEL`); any other is logged as
//! `PEXPIREAT key <absolute ms>`, as redis-server propagates it, so replay is exact.

use super::args::int;
use super::Ctx;
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};

/// Which condition an expiry must meet (redis-server's `EXPIRE_NX` ... flags).
#[derive(Default)]
struct Cond {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

/// `parseExtendedExpireArgumentsOrReply`: options after the time, in any order.
fn parse_cond(args: &[&[u8]]) -> CmdResult<Cond> {
    let mut c = Cond::default();
    for opt in &args[3..] {
        let name = crate::base::num::c_str(opt);
        if name.eq_ignore_ascii_case(b"nx") {
            c.nx = true;
        } else if name.eq_ignore_ascii_case(b"xx") {
            c.xx = true;
        } else if name.eq_ignore_ascii_case(b"gt") {
            c.gt = true;
        } else if name.eq_ignore_ascii_case(b"lt") {
            c.lt = true;
        } else {
            return Err(CmdError::expire_unsupported_option(name));
        }
    }
    if c.nx && (c.xx || c.gt || c.lt) {
        return Err(CmdError::expire_nx_incompatible());
    }
    if c.gt && c.lt {
        return Err(CmdError::expire_gt_lt_incompatible());
    }
    Ok(c)
}

/// `expireGenericCommand`: `base` is 0 for absolute times, `seconds` the unit.
fn expire_generic(
    ctx: &mut Ctx<'_>,
    args: &[&[u8]],
    fullname: &str,
    relative: bool,
    seconds: bool,
) -> CmdResult<Reply> {
    let cond = parse_cond(args)?;
    let mut when = int(args[2])?;
    if seconds {
        when = when
            .checked_mul(1000)
            .ok_or_else(|| CmdError::invalid_expire(fullname))?;
    }
    if relative {
        when = when
            .checked_add(ctx.now)
            .ok_or_else(|| CmdError::invalid_expire(fullname))?;
    }
    let key = args[1];
    let Some(entry) = ctx.lookup(key) else {
        return Ok(Reply::Int(0));
    };
    let current = entry.expire_at;
    if (cond.nx && current.is_some())
        || (cond.xx && current.is_none())
        || (cond.gt && current.is_none_or(|t| when <= t))
        || (cond.lt && current.is_some_and(|t| when >= t))
    {
        return Ok(Reply::Int(0));
    }
    ctx.dirty += 1;
    if when <= ctx.now && !ctx.replaying {
        // Already expired: deleted now, and logged as the DEL it amounts to.
        ctx.db().remove(key);
        ctx.touch(key);
        ctx.signal(key);
        ctx.prevent_propagation();
        ctx.also_propagate(vec![b"DEL".to_vec(), key.to_vec()]);
        return Ok(Reply::Int(1));
    }
    ctx.db().set_expire(key, Some(when));
    ctx.touch(key);
    ctx.rewrite_arg(args, 0, b"PEXPIREAT".to_vec());
    ctx.rewrite_arg(args, 2, when.to_string().into_bytes());
    Ok(Reply::Int(1))
}

/// `EXPIRE key seconds [NX | XX | GT | LT]`
pub fn expire(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    expire_generic(ctx, args, "expire", true, true)
}

/// `PEXPIRE key milliseconds [NX | XX | GT | LT]`
pub fn pexpire(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    expire_generic(ctx, args, "pexpire", true, false)
}

/// `EXPIREAT key unix-time-seconds [NX | XX | GT | LT]`
pub fn expireat(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    expire_generic(ctx, args, "expireat", false, true)
}

/// `PEXPIREAT key unix-time-milliseconds [NX | XX | GT | LT]`
pub fn pexpireat(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    expire_generic(ctx, args, "pexpireat", false, false)
}

/// `ttlGenericCommand`: -2 for a missing key, -1 without expiry, else the time left (or
/// the absolute time), in ms or rounded to seconds.
fn ttl_generic(ctx: &mut Ctx<'_>, key: &[u8], ms: bool, absolute: bool) -> CmdResult<Reply> {
    let now = ctx.now;
    let Some(entry) = ctx.lookup(key) else {
        return Ok(Reply::Int(-2));
    };
    let Some(at) = entry.expire_at else {
        return Ok(Reply::Int(-1));
    };
    let ttl = if absolute { at } else { at.saturating_sub(now) }.max(0);
    Ok(Reply::Int(if ms { ttl } else { (ttl + 500) / 1000 }))
}

/// `TTL key`
pub fn ttl(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    ttl_generic(ctx, args[1], false, false)
}

/// `PTTL key`
pub fn pttl(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    ttl_generic(ctx, args[1], true, false)
}

/// `EXPIRETIME key`
pub fn expiretime(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    ttl_generic(ctx, args[1], false, true)
}

/// `PEXPIRETIME key`
pub fn pexpiretime(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    ttl_generic(ctx, args[1], true, true)
}

/// `PERSIST key`
pub fn persist(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let key = args[1];
    match ctx.lookup(key) {
        Some(e) if e.expire_at.is_some() => {
            ctx.db().set_expire(key, None);
            ctx.touch(key);
            ctx.dirty += 1;
            Ok(Reply::Int(1))
        }
        _ => Ok(Reply::Int(0)),
    }
}
