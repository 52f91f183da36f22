//! IDMP configuration and records: XCFGSET (Redis 8.6), XIDMPRECORD (8.6.2), and the
//! `XIDMP CFGSET/CFGGET` spelling of the design document, kept as an alias.

use super::args::{int, is, strict_id};
use super::Ctx;
use crate::base::config::{
    IDMP_MAX_DURATION, IDMP_MAX_MAXSIZE, IDMP_MIN_DURATION, IDMP_MIN_MAXSIZE,
};
use crate::command::reply::{map, Reply};
use crate::error::{CmdError, CmdResult};

struct CfgNames {
    duration: &'static str,
    maxsize: &'static str,
}

const XCFGSET_NAMES: CfgNames = CfgNames {
    duration: "IDMP-DURATION",
    maxsize: "IDMP-MAXSIZE",
};
const XIDMP_NAMES: CfgNames = CfgNames {
    duration: "DURATION",
    maxsize: "MAXSIZE",
};

fn cfgset(ctx: &mut Ctx<'_>, args: &[&[u8]], names: &CfgNames) -> CmdResult<Reply> {
    let key = args[1];
    if ctx.stream(key)?.is_none() {
        return Err(CmdError::no_such_key());
    }
    let mut duration: i64 = -1;
    let mut maxsize: i64 = -1;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - i - 1;
        if is(args[i], names.duration) && more > 0 {
            if duration != -1 {
                return Err(CmdError::err(format!(
                    "{} specified multiple times",
                    names.duration
                )));
            }
            i += 1;
            duration = int(args[i])?;
            if !(IDMP_MIN_DURATION..=IDMP_MAX_DURATION).contains(&duration) {
                return Err(CmdError::err(format!(
                    "{} must be between {IDMP_MIN_DURATION} and {IDMP_MAX_DURATION} seconds",
                    names.duration
                )));
            }
        } else if is(args[i], names.maxsize) && more > 0 {
            if maxsize != -1 {
                return Err(CmdError::err(format!(
                    "{} specified multiple times",
                    names.maxsize
                )));
            }
            i += 1;
            maxsize = int(args[i])?;
            if !(IDMP_MIN_MAXSIZE..=IDMP_MAX_MAXSIZE).contains(&maxsize) {
                return Err(CmdError::err(format!(
                    "{} must be between {IDMP_MIN_MAXSIZE} and {IDMP_MAX_MAXSIZE} entries",
                    names.maxsize
                )));
            }
        } else {
            return Err(CmdError::syntax());
        }
        i += 1;
    }
    if duration == -1 && maxsize == -1 {
        return Err(CmdError::xcfgset_no_param());
    }
    let s = ctx.stream(key)?.expect("checked");
    let mut changed = false;
    if duration != -1 && s.idmp.duration != duration as u64 {
        s.idmp.duration = duration as u64;
        s.idmp.clear();
        changed = true;
    }
    if maxsize != -1 && s.idmp.maxsize != maxsize as u64 {
        s.idmp.maxsize = maxsize as u64;
        s.idmp.clear();
        changed = true;
    }
    if changed {
        ctx.db().idmp_keys.remove(key);
        ctx.dirty += 1;
    }
    Ok(Reply::ok())
}

/// `XCFGSET key [IDMP-DURATION seconds] [IDMP-MAXSIZE entries]`
pub fn xcfgset(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    cfgset(ctx, args, &XCFGSET_NAMES)
}

/// `XIDMP CFGSET key [DURATION seconds] [MAXSIZE entries]` (alias of XCFGSET).
pub fn xidmp_cfgset(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    cfgset(ctx, &args[1..], &XIDMP_NAMES)
}

/// `XIDMP CFGGET key [DURATION] [MAXSIZE]`: the stream's IDMP settings (both when none is
/// named).
pub fn xidmp_cfgget(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let Some(s) = ctx.stream(args[2])? else {
        return Err(CmdError::no_such_key());
    };
    let (mut want_d, mut want_m) = (false, false);
    for a in &args[3..] {
        if is(a, "DURATION") {
            want_d = true;
        } else if is(a, "MAXSIZE") {
            want_m = true;
        } else {
            return Err(CmdError::syntax());
        }
    }
    if !want_d && !want_m {
        want_d = true;
        want_m = true;
    }
    let mut fields = Vec::new();
    if want_d {
        fields.push(("duration", Reply::Int(s.idmp.duration as i64)));
    }
    if want_m {
        fields.push(("maxsize", Reply::Int(s.idmp.maxsize as i64)));
    }
    Ok(map(fields))
}

/// `XIDMPRECORD key pid iid stream-id`: record an IID for an existing entry.
pub fn xidmprecord(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let id = strict_id(args[4])?;
    let (pid, iid) = (args[2], args[3]);
    if pid.is_empty() {
        return Err(CmdError::xidmprecord_empty_pid());
    }
    if iid.is_empty() {
        return Err(CmdError::xidmprecord_empty_iid());
    }
    let Some(s) = ctx.stream(args[1])? else {
        return Err(CmdError::no_such_key());
    };
    if !s.contains(id) {
        return Err(CmdError::xidmprecord_no_message());
    }
    match s.idmp.ensure_and_lookup(pid, iid).1 {
        Some(existing) if existing == id => return Ok(Reply::ok()),
        Some(_) => return Err(CmdError::xidmprecord_conflict()),
        None => {}
    }
    s.idmp.insert(pid, iid, id);
    ctx.track_idmp(args[1]);
    ctx.dirty += 1;
    Ok(Reply::ok())
}
