//! Keyspace commands a store user needs (DEL, EXISTS, TYPE, KEYS, SCAN, DBSIZE, FLUSHALL,
//! FLUSHDB, PING, ECHO, TIME) and the minimal string type (SET, GET).

use super::args::{int, is};
use super::Ctx;
use crate::base::num::string2ull;
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::db::{glob_match, KeyEntry, Value};

pub fn del(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let mut n = 0;
    for key in &args[1..] {
        let now = ctx.now;
        let db = ctx.db();
        if db.expire_if_needed(key, now) {
            continue;
        }
        if let Some(e) = db.remove(key) {
            if matches!(e.value, Value::Stream(_)) {
                ctx.signal(key);
            }
            ctx.touch(key);
            ctx.dirty += 1;
            n += 1;
        }
    }
    Ok(Reply::Int(n))
}

pub fn exists(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let mut n = 0;
    for key in &args[1..] {
        if ctx.exists(key) {
            n += 1;
        }
    }
    Ok(Reply::Int(n))
}

pub fn type_cmd(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::status(match ctx.lookup(args[1]) {
        None => "none",
        Some(e) => e.value.type_name(),
    }))
}

pub fn keys(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let pattern = args[1];
    let all = pattern == b"*";
    let now = ctx.now;
    let db = ctx.db();
    let out: Vec<Reply> = db
        .entries_in_order()
        .filter(|(_, e)| e.expire_at.is_none_or(|t| t > now))
        .filter(|(k, _)| all || glob_match(pattern, k))
        .map(|(k, _)| Reply::bulk(k))
        .collect();
    Ok(Reply::Array(out))
}

pub fn scan(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let cursor = string2ull(args[1]).ok_or_else(|| CmdError::err("invalid cursor"))?;
    let mut count: i64 = 10;
    let mut pattern: Option<&[u8]> = None;
    let mut type_name: Option<&[u8]> = None;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - i;
        if is(args[i], "count") && more >= 2 {
            count = int(args[i + 1])?;
            if count < 1 {
                return Err(CmdError::syntax());
            }
            i += 2;
        } else if is(args[i], "match") && more >= 2 {
            pattern = if args[i + 1] == b"*" {
                None
            } else {
                Some(args[i + 1])
            };
            i += 2;
        } else if is(args[i], "type") && more >= 2 {
            type_name = Some(crate::base::num::c_str(args[i + 1]));
            i += 2;
        } else if is(args[i], "novalues") {
            return Err(CmdError::err("NOVALUES option can only be used in HSCAN"));
        } else {
            return Err(CmdError::syntax());
        }
    }
    let now = ctx.now;
    let db = ctx.db();
    let (visited, next) = db.scan(cursor, count as usize);
    let keys: Vec<Reply> = visited
        .into_iter()
        .filter(|k| {
            let Some(e) = db.get(k) else { return false };
            if e.expire_at.is_some_and(|t| t <= now) {
                return false;
            }
            if let Some(t) = type_name {
                if !t.eq_ignore_ascii_case(e.value.type_name().as_bytes()) {
                    return false;
                }
            }
            pattern.is_none_or(|p| glob_match(p, k))
        })
        .map(Reply::bulk)
        .collect();
    Ok(Reply::Array(vec![
        Reply::Bulk(next.to_string().into_bytes()),
        Reply::Array(keys),
    ]))
}

pub fn dbsize(ctx: &mut Ctx<'_>, _args: &[&[u8]]) -> CmdResult<Reply> {
    let now = ctx.now;
    let db = ctx.db();
    db.expire_all(now);
    Ok(Reply::Int(db.len() as i64))
}

fn flush_flags(args: &[&[u8]]) -> CmdResult<()> {
    if args.len() == 1 || (args.len() == 2 && (is(args[1], "sync") || is(args[1], "async"))) {
        Ok(())
    } else {
        Err(CmdError::syntax())
    }
}

pub fn flushall(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    flush_flags(args)?;
    for db in &mut ctx.ks.dbs {
        db.flush();
    }
    ctx.dirty += 1;
    ctx.flushed_dbs = u32::MAX;
    Ok(Reply::ok())
}

pub fn flushdb(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    flush_flags(args)?;
    ctx.db().flush();
    ctx.dirty += 1;
    ctx.flushed(ctx.db);
    Ok(Reply::ok())
}

pub fn ping(_ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    match args.len() {
        1 => Ok(Reply::status("PONG")),
        2 => Ok(Reply::bulk(args[1])),
        _ => Err(CmdError::arity("ping")),
    }
}

pub fn echo(_ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::bulk(args[1]))
}

pub fn time(ctx: &mut Ctx<'_>, _args: &[&[u8]]) -> CmdResult<Reply> {
    let now = ctx.now;
    let secs = now.div_euclid(1000);
    let micros = now.rem_euclid(1000) * 1000;
    Ok(Reply::Array(vec![
        Reply::Bulk(secs.to_string().into_bytes()),
        Reply::Bulk(micros.to_string().into_bytes()),
    ]))
}

#[derive(Default)]
struct SetOpts {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    ex: bool,
    px: bool,
    exat: bool,
    pxat: bool,
    /// Position of the expire value argument.
    expire_pos: Option<usize>,
}

fn exact(arg: &[u8], kw: &str) -> bool {
    // Redis compares option names as C strings (up to the first NUL byte).
    crate::base::num::c_str(arg).eq_ignore_ascii_case(kw.as_bytes())
}

pub fn set(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let mut o = SetOpts::default();
    let mut j = 3;
    while j < args.len() {
        let opt = args[j];
        let next = j + 1 < args.len();
        if exact(opt, "nx") && !o.xx {
            o.nx = true;
        } else if exact(opt, "xx") && !o.nx {
            o.xx = true;
        } else if exact(opt, "get") {
            o.get = true;
        } else if exact(opt, "keepttl") && !o.ex && !o.exat && !o.px && !o.pxat {
            o.keepttl = true;
        } else if exact(opt, "ex") && !o.keepttl && !o.exat && !o.px && !o.pxat && next {
            o.ex = true;
            o.expire_pos = Some(j + 1);
            j += 1;
        } else if exact(opt, "px") && !o.keepttl && !o.ex && !o.exat && !o.pxat && next {
            o.px = true;
            o.expire_pos = Some(j + 1);
            j += 1;
        } else if exact(opt, "exat") && !o.keepttl && !o.ex && !o.px && !o.pxat && next {
            o.exat = true;
            o.expire_pos = Some(j + 1);
            j += 1;
        } else if exact(opt, "pxat") && !o.keepttl && !o.ex && !o.exat && !o.px && next {
            o.pxat = true;
            o.expire_pos = Some(j + 1);
            j += 1;
        } else {
            return Err(CmdError::syntax());
        }
        j += 1;
    }
    let key = args[1];
    let mut expire_at: Option<i64> = None;
    if let Some(pos) = o.expire_pos {
        let seconds = o.ex || o.exat;
        let relative = o.ex || o.px;
        let mut ms = int(args[pos])?;
        if ms <= 0 || (seconds && ms > i64::MAX / 1000) {
            return Err(CmdError::invalid_expire("set"));
        }
        if seconds {
            ms *= 1000;
        }
        if relative {
            ms = ms.checked_add(ctx.now).unwrap_or(-1);
        }
        if ms <= 0 {
            return Err(CmdError::invalid_expire("set"));
        }
        expire_at = Some(ms);
    }
    let mut old_reply = None;
    if o.get {
        old_reply = Some(get_value(ctx, key)?);
    }
    let found = ctx.exists(key);
    if (o.nx && found) || (o.xx && !found) {
        return Ok(old_reply.unwrap_or(Reply::Nil));
    }
    let keep = if o.keepttl {
        ctx.lookup(key).and_then(|e| e.expire_at)
    } else {
        None
    };
    let was_stream = matches!(
        ctx.lookup(key),
        Some(KeyEntry {
            value: Value::Stream(_),
            ..
        })
    );
    let expire_at = expire_at.or(keep);
    let now = ctx.now;
    let db = ctx.db();
    db.set(key, Value::Str(args[2].to_vec()), expire_at);
    let gone = expire_at.is_some_and(|t| t <= now);
    if gone {
        // Stored and expired at once: redis-server 8.8 counts it in `expired_keys`.
        db.remove(key);
        db.expired += 1;
    }
    // An expiry already past deletes the key: a change only if it existed.
    if found || !gone {
        ctx.touch(key);
    }
    if was_stream {
        ctx.signal(key);
    }
    ctx.dirty += 1;
    if let (Some(pos), Some(at)) = (o.expire_pos, expire_at) {
        if !o.pxat && !o.keepttl {
            // Relative and second-based expiries are logged as an absolute PXAT.
            ctx.rewrite_arg(args, pos - 1, b"PXAT".to_vec());
            ctx.rewrite_arg(args, pos, at.to_string().into_bytes());
        }
    }
    Ok(old_reply.unwrap_or_else(Reply::ok))
}

fn get_value(ctx: &mut Ctx<'_>, key: &[u8]) -> CmdResult<Reply> {
    match ctx.lookup(key) {
        None => Ok(Reply::Nil),
        Some(KeyEntry {
            value: Value::Str(v),
            ..
        }) => Ok(Reply::bulk(v)),
        Some(_) => Err(CmdError::wrong_type()),
    }
}

pub fn get(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    get_value(ctx, args[1])
}

fn same_object() -> CmdError {
    CmdError::err("source and destination objects are the same")
}

/// `getIntFromObjectOrReply`: an integer within the C `int` range.
fn db_index(arg: &[u8], msg: Option<&'static str>) -> CmdResult<i64> {
    let fail = |range: bool| match (msg, range) {
        (Some(m), _) => CmdError::err(m),
        (None, false) => CmdError::not_integer(),
        (None, true) => {
            CmdError::err("value is out of range, value must between -2147483648 and 2147483647")
        }
    };
    let v = crate::base::num::string2ll(arg).ok_or_else(|| fail(false))?;
    if i32::try_from(v).is_err() {
        return Err(fail(true));
    }
    Ok(v)
}

fn check_db(id: i64) -> CmdResult<usize> {
    if id < 0 || id as usize >= crate::keyspace::db::NUM_DBS {
        Err(CmdError::err("DB index is out of range"))
    } else {
        Ok(id as usize)
    }
}

fn rename_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], nx: bool) -> CmdResult<Reply> {
    let (src, dst) = (args[1], args[2]);
    if ctx.lookup(src).is_none() {
        return Err(CmdError::no_such_key());
    }
    if src == dst {
        return Ok(if nx { Reply::Int(0) } else { Reply::ok() });
    }
    if ctx.exists(dst) {
        if nx {
            return Ok(Reply::Int(0));
        }
        ctx.db().remove(dst);
    }
    let db = ctx.db();
    let entry = db.remove(src).expect("looked up");
    let tracked = matches!(&entry.value, Value::Stream(s) if s.idmp.is_tracked());
    db.set(dst, entry.value, entry.expire_at);
    if tracked {
        db.idmp_keys.insert(dst.to_vec());
    }
    ctx.touch(src);
    ctx.touch(dst);
    ctx.signal(src);
    ctx.signal(dst);
    ctx.dirty += 1;
    Ok(if nx { Reply::Int(1) } else { Reply::ok() })
}

/// `RENAME key newkey`
pub fn rename(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    rename_generic(ctx, args, false)
}

/// `RENAMENX key newkey`
pub fn renamenx(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    rename_generic(ctx, args, true)
}

/// `COPY source destination [DB destination-db] [REPLACE]`
pub fn copy(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let mut replace = false;
    let mut dst_db = ctx.db;
    let mut j = 3;
    while j < args.len() {
        let additional = args.len() - j - 1;
        if is(args[j], "replace") {
            replace = true;
        } else if is(args[j], "db") && additional >= 1 {
            dst_db = check_db(db_index(args[j + 1], None)?)?;
            j += 1;
        } else {
            return Err(CmdError::syntax());
        }
        j += 1;
    }
    let (src, dst) = (args[1], args[2]);
    if dst_db == ctx.db && src == dst {
        return Err(same_object());
    }
    let Some(entry) = ctx.lookup(src).cloned() else {
        return Ok(Reply::Int(0));
    };
    let now = ctx.now;
    let target = &mut ctx.ks.dbs[dst_db];
    target.expire_if_needed(dst, now);
    if target.get(dst).is_some() {
        if !replace {
            return Ok(Reply::Int(0));
        }
        target.remove(dst);
    }
    let tracked = matches!(&entry.value, Value::Stream(s) if s.idmp.is_tracked());
    target.set(dst, entry.value, entry.expire_at);
    if tracked {
        target.idmp_keys.insert(dst.to_vec());
    }
    ctx.touch_in(dst_db, dst);
    ctx.signal_in(dst_db, dst);
    ctx.dirty += 1;
    Ok(Reply::Int(1))
}

/// `MOVE key db`
pub fn move_cmd(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let dst_db = check_db(db_index(args[2], None)?)?;
    if dst_db == ctx.db {
        return Err(same_object());
    }
    let key = args[1];
    if ctx.lookup(key).is_none() {
        return Ok(Reply::Int(0));
    }
    let now = ctx.now;
    ctx.ks.dbs[dst_db].expire_if_needed(key, now);
    if ctx.ks.dbs[dst_db].get(key).is_some() {
        return Ok(Reply::Int(0));
    }
    let entry = ctx.db().remove(key).expect("looked up");
    let tracked = matches!(&entry.value, Value::Stream(s) if s.idmp.is_tracked());
    let target = &mut ctx.ks.dbs[dst_db];
    target.set(key, entry.value, entry.expire_at);
    if tracked {
        target.idmp_keys.insert(key.to_vec());
    }
    ctx.touch(key);
    ctx.touch_in(dst_db, key);
    ctx.signal(key);
    ctx.signal_in(dst_db, key);
    ctx.dirty += 1;
    Ok(Reply::Int(1))
}

/// `SWAPDB index1 index2`
pub fn swapdb(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let a = db_index(args[1], Some("invalid first DB index"))?;
    let b = db_index(args[2], Some("invalid second DB index"))?;
    let (a, b) = (check_db(a)?, check_db(b)?);
    let now = ctx.now;
    ctx.ks.swap_dbs(a, b, now);
    ctx.flushed(a);
    ctx.flushed(b);
    ctx.dirty += 1;
    Ok(Reply::ok())
}
