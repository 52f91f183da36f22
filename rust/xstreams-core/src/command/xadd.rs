//! XADD and XTRIM, which share their option parser (trimming strategies, reference
//! policies, and for XADD: NOMKSTREAM, IDMP/IDMPAUTO and the ID).

use super::args::{eq, int, is};
use super::{Ctx, LogRecord};
use crate::error::{CmdError, CmdResult};
use crate::id::{parse_id, StreamId};
use crate::idmp::auto_iid;
use crate::reply::Reply;
use crate::stream::{AppendError, RefPolicy, TrimArgs, TrimStrategy};

/// Parsed options of XADD / XTRIM.
#[derive(Clone, Debug, Default)]
pub struct AddTrimArgs<'a> {
    /// Explicit ID (`None` for `*`) and whether its sequence was given.
    pub id: Option<(StreamId, bool)>,
    pub no_mkstream: bool,
    /// IDMP producer and explicit IID (`None` with IDMPAUTO).
    pub idmp: Option<(&'a [u8], Option<&'a [u8]>)>,
    pub trim: Option<TrimArgs>,
    /// Index of the ID argument (XADD).
    pub id_pos: usize,
    /// Index of the trimming threshold argument.
    pub trim_arg: usize,
}

/// Parse options exactly as redis-server (`streamParseAddOrTrimArgsOrReply`).
pub fn parse_add_trim<'a>(
    ctx: &Ctx<'_>,
    args: &[&'a [u8]],
    xadd: bool,
) -> CmdResult<AddTrimArgs<'a>> {
    let mut out = AddTrimArgs::default();
    let mut strategy: Option<TrimStrategy> = None;
    let mut approx = false;
    let mut limit: i64 = 0;
    let mut limit_given = false;
    let mut policy: Option<RefPolicy> = None;
    let argc = args.len();
    let mut i = 2;
    while i < argc {
        let more = argc - 1 - i;
        let opt = args[i];
        if xadd && eq(opt, "*") {
            break;
        } else if is(opt, "maxlen") && more > 0 {
            if strategy.is_some() {
                return Err(CmdError::maxlen_minid_together());
            }
            approx = false;
            let next = args[i + 1];
            if more >= 2 && eq(next, "~") {
                approx = true;
                i += 1;
            } else if more >= 2 && eq(next, "=") {
                i += 1;
            }
            let maxlen = int(args[i + 1])?;
            if maxlen < 0 {
                return Err(CmdError::maxlen_negative());
            }
            i += 1;
            out.trim_arg = i;
            strategy = Some(TrimStrategy::MaxLen(maxlen as u64));
        } else if is(opt, "minid") && more > 0 {
            if strategy.is_some() {
                return Err(CmdError::maxlen_minid_together());
            }
            approx = false;
            let next = args[i + 1];
            if more >= 2 && eq(next, "~") {
                approx = true;
                i += 1;
            } else if more >= 2 && eq(next, "=") {
                i += 1;
            }
            let minid = parse_id(args[i + 1], 0, true, false)
                .ok_or_else(CmdError::invalid_stream_id)?
                .id;
            i += 1;
            out.trim_arg = i;
            strategy = Some(TrimStrategy::MinId(minid));
        } else if is(opt, "limit") && more > 0 {
            limit = int(args[i + 1])?;
            if limit < 0 {
                return Err(CmdError::limit_negative());
            }
            limit_given = true;
            i += 1;
        } else if is(opt, "keepref") && policy.is_none() {
            policy = Some(RefPolicy::KeepRef);
        } else if is(opt, "delref") && policy.is_none() {
            policy = Some(RefPolicy::DelRef);
        } else if is(opt, "acked") && policy.is_none() {
            policy = Some(RefPolicy::Acked);
        } else if xadd && is(opt, "nomkstream") {
            out.no_mkstream = true;
        } else if xadd && is(opt, "idmpauto") && more > 0 {
            if out.idmp.is_some() {
                return Err(CmdError::idmp_twice());
            }
            if args[i + 1].is_empty() {
                return Err(CmdError::idmpauto_empty_pid());
            }
            out.idmp = Some((args[i + 1], None));
            i += 1;
        } else if xadd && is(opt, "idmp") && more >= 2 {
            if out.idmp.is_some() {
                return Err(CmdError::idmp_twice());
            }
            if args[i + 1].is_empty() {
                return Err(CmdError::idmp_empty_pid());
            }
            if args[i + 2].is_empty() {
                return Err(CmdError::idmp_empty_iid());
            }
            out.idmp = Some((args[i + 1], Some(args[i + 2])));
            i += 2;
        } else if xadd {
            let p = parse_id(opt, 0, true, true).ok_or_else(CmdError::invalid_stream_id)?;
            if out.idmp.is_some() && opt.first() != Some(&b'*') && !ctx.replaying {
                return Err(CmdError::idmp_needs_auto_id());
            }
            out.id = Some((p.id, p.seq_given));
            break;
        } else {
            return Err(CmdError::syntax());
        }
        i += 1;
    }
    out.id_pos = i;
    if limit != 0 && strategy.is_none() {
        return Err(CmdError::limit_without_strategy());
    }
    if !xadd && strategy.is_none() {
        return Err(CmdError::xtrim_without_strategy());
    }
    if ctx.replaying && !approx {
        // A replayed exact trim (possibly rewritten from `~`) carries the threshold it
        // reached: trim without limit, and accept a LIMIT left in its arguments.
        limit = 0;
    } else if limit_given {
        if !approx {
            return Err(CmdError::limit_without_tilde());
        }
    } else if approx {
        limit = 100i64.wrapping_mul(ctx.ks.config.stream_node_max_entries);
        if limit <= 0 {
            limit = 10_000;
        }
        if limit > 1_000_000 {
            limit = 1_000_000;
        }
    } else {
        limit = 0;
    }
    out.trim = strategy.map(|strategy| TrimArgs {
        strategy,
        approx,
        limit: limit as u64,
        policy: policy.unwrap_or(RefPolicy::KeepRef),
    });
    Ok(out)
}

/// `XADD key [NOMKSTREAM] [KEEPREF|DELREF|ACKED] [IDMPAUTO pid | IDMP pid iid]
/// [MAXLEN|MINID [=|~] threshold [LIMIT count]] <*|id> field value [field value ...]`
pub fn xadd(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let opts = parse_add_trim(ctx, args, true)?;
    let field_pos = opts.id_pos + 1;
    let nfv = args.len().saturating_sub(field_pos);
    if args.len() < field_pos + 2 || nfv % 2 == 1 {
        return Err(CmdError::arity("xadd"));
    }
    if let Some((id, true)) = opts.id {
        if id.is_zero() {
            return Err(CmdError::xadd_id_zero());
        }
    }
    let key = args[1];
    let pairs = &args[field_pos..];
    let now = ctx.now;
    let cfg = ctx.ks.config.clone();
    if ctx.stream(key)?.is_none() {
        if opts.no_mkstream {
            return Ok(Reply::Nil);
        }
        ctx.stream_or_create(key)?;
    }
    let s = ctx.stream(key)?.expect("stream exists");
    // IDMP: a known (pid, iid) returns the recorded ID before anything else is checked.
    let auto: [u8; 16];
    let mut idmp_iid: Option<(&[u8], &[u8])> = None;
    let mut new_producer = false;
    if let Some((pid, iid)) = opts.idmp {
        // Nothing expires here: as in redis-server, expired IIDs stay until the periodic
        // sweep (Keyspace::cron) drops them.
        new_producer = s.idmp.ensure_producer(pid);
        let iid = match iid {
            Some(i) => i,
            None => {
                auto = auto_iid(pairs);
                &auto
            }
        };
        if let Some(orig) = s.idmp.lookup(pid, iid) {
            s.idmp.iids_duplicates += 1;
            ctx.dirty += 1;
            return Ok(Reply::id(&orig));
        }
        idmp_iid = Some((pid, iid));
    }
    let appended = if s.last_id == StreamId::MAX {
        Err(CmdError::xadd_exhausted())
    } else {
        match s.append(&cfg, now, opts.id, pairs) {
            Ok(id) => Ok(id),
            Err(AppendError::IdTooSmall) => Err(CmdError::xadd_id_too_small()),
            Err(AppendError::TooLarge) => Err(CmdError::elements_too_large()),
        }
    };
    let id = match appended {
        Ok(id) => id,
        Err(e) => {
            if new_producer {
                // redis-server keeps the producer it created before failing.
                let pid = opts.idmp.map(|p| p.0.to_vec()).unwrap_or_default();
                ctx.propagate_record(LogRecord::EmptyProducer {
                    key: key.to_vec(),
                    pid,
                });
            }
            return Err(e);
        }
    };
    let tracked = if let Some((pid, iid)) = idmp_iid {
        s.idmp.insert(pid, iid, id);
        true
    } else {
        false
    };
    let mut trim_rewrite = None;
    if let Some(t) = &opts.trim {
        s.trim(t);
        if t.approx && t.policy == RefPolicy::KeepRef {
            trim_rewrite = Some(trim_threshold(s, t));
        }
    }
    if tracked {
        ctx.track_idmp(key);
    }
    ctx.dirty += 1;
    ctx.signal(key);
    if ctx.recording() {
        if !matches!(opts.id, Some((_, true))) {
            ctx.rewrite_arg(args, opts.id_pos, id.to_bytes());
        }
        if let Some(v) = trim_rewrite {
            ctx.rewrite_arg(args, opts.trim_arg - 1, b"=".to_vec());
            ctx.rewrite_arg(args, opts.trim_arg, v);
        }
    }
    Ok(Reply::id(&id))
}

/// The exact threshold an approximate KEEPREF trim reached, for the log (MAXLEN: the
/// length left; MINID: the first ID still accounted, deleted or not), as redis-server
/// rewrites it. Approximate trims with DELREF/ACKED work entry by entry within a limit
/// and have no exact equivalent: they are logged as given and replayed with their limit.
fn trim_threshold(s: &crate::stream::Stream, t: &TrimArgs) -> Vec<u8> {
    match t.strategy {
        TrimStrategy::MaxLen(_) => s.length.to_string().into_bytes(),
        TrimStrategy::MinId(_) => s.first_id_with_tombstones().to_bytes(),
    }
}

/// `XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count] [KEEPREF|DELREF|ACKED]`
pub fn xtrim(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    let opts = parse_add_trim(ctx, args, false)?;
    let Some(s) = ctx.stream(args[1])? else {
        return Ok(Reply::Int(0));
    };
    let t = opts.trim.expect("xtrim always has a strategy");
    let deleted = s.trim(&t);
    let rewrite = if deleted > 0 && t.approx && t.policy == RefPolicy::KeepRef {
        Some(trim_threshold(s, &t))
    } else {
        None
    };
    ctx.dirty += deleted;
    if let Some(v) = rewrite {
        ctx.rewrite_arg(args, opts.trim_arg - 1, b"=".to_vec());
        ctx.rewrite_arg(args, opts.trim_arg, v);
    }
    Ok(Reply::Int(deleted as i64))
}
