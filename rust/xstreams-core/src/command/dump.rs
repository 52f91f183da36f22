//! DUMP and RESTORE: a key's value in Redis's serialization (see [`crate::keyspace::rdb`]).

use super::args::{int, is};
use super::Ctx;
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::rdb::{self, RestoreError};

/// `DUMP key`
pub fn dump(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let now = ctx.now;
    let payload = match ctx.lookup(args[1]) {
        None => return Ok(Reply::Nil),
        Some(e) => rdb::dump_payload(&e.value, now),
    };
    // What leaves the store always loads: every payload DUMP builds is one RESTORE takes.
    debug_assert!(
        rdb::restore_payload(&payload, now, &ctx.ks.config).is_ok(),
        "DUMP built a payload RESTORE refuses: {:?}",
        rdb::restore_payload(&payload, now, &ctx.ks.config).err()
    );
    Ok(Reply::Bulk(payload))
}

/// `RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ
/// frequency]` as typed arguments (IDLETIME and FREQ, validated by the parser and
/// otherwise ignored, have no field).
#[derive(Clone, Debug)]
pub struct RestoreArgs<'a> {
    pub key: &'a [u8],
    /// Milliseconds to live (0: no expiry), or with `absttl` the expiry time.
    pub ttl: i64,
    /// A DUMP payload.
    pub payload: &'a [u8],
    pub replace: bool,
    pub absttl: bool,
}

impl RestoreArgs<'_> {
    /// The command in canonical form (for the log).
    pub fn to_argv(&self) -> Vec<Vec<u8>> {
        let mut v = vec![
            b"RESTORE".to_vec(),
            self.key.to_vec(),
            self.ttl.to_string().into_bytes(),
            self.payload.to_vec(),
        ];
        if self.replace {
            v.push(b"REPLACE".to_vec());
        }
        if self.absttl {
            v.push(b"ABSTTL".to_vec());
        }
        v
    }
}

/// `RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]`
///
/// Checks in redis-server's order: options, an existing key, the TTL, the payload's
/// footer, the payload. IDLETIME and FREQ are validated and otherwise ignored (xstreams
/// keeps no LRU/LFU data).
pub fn restore(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq) = (None::<i64>, None::<i64>);
    let mut j = 4;
    while j < args.len() {
        let additional = args.len() - j - 1;
        if is(args[j], "replace") {
            replace = true;
        } else if is(args[j], "absttl") {
            absttl = true;
        } else if is(args[j], "idletime") && additional >= 1 && freq.is_none() {
            let v = int(args[j + 1])?;
            if v < 0 {
                return Err(CmdError::restore_invalid_idletime());
            }
            idle = Some(v);
            j += 1;
        } else if is(args[j], "freq") && additional >= 1 && idle.is_none() {
            let v = int(args[j + 1])?;
            if !(0..=255).contains(&v) {
                return Err(CmdError::restore_invalid_freq());
            }
            freq = Some(v);
            j += 1;
        } else {
            return Err(CmdError::syntax());
        }
        j += 1;
    }
    let key = args[1];
    if ctx.exists(key) && !replace {
        return Err(CmdError::busykey());
    }
    let a = RestoreArgs {
        key,
        ttl: int(args[2])?,
        payload: args[3],
        replace,
        absttl,
    };
    restore_typed(ctx, &a)?;
    Ok(Reply::ok())
}

/// RESTORE from typed arguments, as one whole command (write refusal, `maxmemory`): the
/// checks from the existing key on, the value created
/// (or, already expired, only the old key replaced); the log records the command with an
/// absolute TTL, or a DEL when only the old key went.
pub fn restore_typed(ctx: &mut Ctx<'_>, a: &RestoreArgs<'_>) -> CmdResult<()> {
    super::typed_write(
        ctx,
        || a.to_argv(),
        |ctx| {
            super::check_write(ctx)?;
            restore_run(ctx, a)
        },
    )
}

fn restore_run(ctx: &mut Ctx<'_>, a: &RestoreArgs<'_>) -> CmdResult<()> {
    let key = a.key;
    let existed = ctx.exists(key);
    if existed && !a.replace {
        return Err(CmdError::busykey());
    }
    let mut ttl = a.ttl;
    if ttl < 0 {
        return Err(CmdError::restore_invalid_ttl());
    }
    let now = ctx.now;
    let value = match rdb::restore_payload(a.payload, now, &ctx.ks.config) {
        Ok(v) => v,
        Err(RestoreError::VersionOrChecksum) => return Err(CmdError::dump_payload_wrong()),
        Err(RestoreError::BadFormat(_)) => return Err(CmdError::bad_data_format()),
        Err(RestoreError::Unsupported(t)) => return Err(CmdError::restore_unsupported_type(t)),
    };
    if ttl != 0 && !a.absttl {
        ttl = ttl.saturating_add(now);
    }
    let deleted = a.replace && existed && ctx.db().remove(key).is_some();
    if ttl != 0 && ttl <= now {
        // Already expired: nothing is created (an old key is still replaced).
        if deleted {
            ctx.signal(key);
            ctx.touch(key);
            ctx.dirty += 1;
            if let Some(p) = &mut ctx.prop {
                p.rewritten = Some(vec![b"DEL".to_vec(), key.to_vec()]);
            }
        }
        return Ok(());
    }
    let tracked = matches!(&value, crate::keyspace::db::Value::Stream(s) if s.idmp.is_tracked());
    ctx.db().set(key, value, (ttl != 0).then_some(ttl));
    if tracked {
        ctx.track_idmp(key);
    }
    if let Some(p) = &mut ctx.prop {
        let logged = RestoreArgs {
            ttl,
            absttl: a.absttl || ttl != 0,
            ..a.clone()
        };
        p.rewritten = Some(logged.to_argv());
    }
    ctx.signal(key);
    ctx.touch(key);
    ctx.dirty += 1;
    Ok(())
}
