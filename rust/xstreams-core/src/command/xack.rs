//! XACK, XACKDEL and XNACK: arguments parsed here, the PEL changed by the group
//! ([`crate::structures::pel`]).

use super::args::{int, is, strict_id};
use super::xrange::{delete_with_policy, parse_ackdel};
use super::Ctx;
use crate::base::num::string2ll;
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::structures::id::StreamId;
use crate::structures::pel::{NackArgs, NackMode};
use crate::structures::stream::{DeleteOutcome, RefPolicy};

/// `XACK key group id [id ...]`
pub fn xack(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    Ok(Reply::Int(
        xack_ids(ctx, args[1], args[2], &args[3..])? as i64
    ))
}

/// XACK with its IDs as given, in the command's order: writes refused, the key's type,
/// 0 without the key or the group (the IDs not even parsed, as in redis-server), every ID
/// strictly; then [`xack_typed`].
pub fn xack_ids(ctx: &mut Ctx<'_>, key: &[u8], group: &[u8], ids: &[&[u8]]) -> CmdResult<u64> {
    super::check_refused(ctx)?;
    if !has_group(ctx, key, group)? {
        return Ok(0);
    }
    let ids = ids
        .iter()
        .map(|a| strict_id(a))
        .collect::<CmdResult<Vec<StreamId>>>()?;
    xack_typed(ctx, key, group, &ids)
}

/// Does stream `key` have group `group`? (WRONGTYPE for another type.)
fn has_group(ctx: &mut Ctx<'_>, key: &[u8], group: &[u8]) -> CmdResult<bool> {
    Ok(ctx
        .stream(key)?
        .is_some_and(|s| s.groups.lookup(group).is_some()))
}

/// XACK from typed arguments, as one whole command (write refusal, its log record): how
/// many of `ids` were pending (0 without the key or the group).
pub fn xack_typed(ctx: &mut Ctx<'_>, key: &[u8], group: &[u8], ids: &[StreamId]) -> CmdResult<u64> {
    let argv = || {
        let mut v = Vec::with_capacity(3 + ids.len());
        v.extend([b"XACK".to_vec(), key.to_vec(), group.to_vec()]);
        v.extend(ids.iter().map(|id| id.to_bytes()));
        v
    };
    super::typed_write(ctx, argv, |ctx| {
        let Some(s) = ctx.stream(key)? else {
            return Ok(0);
        };
        let Some(g) = s.groups.lookup(group) else {
            return Ok(0);
        };
        let acked = s.group_mut(g).ack(ids);
        ctx.dirty += acked;
        Ok(acked)
    })
}

/// `XACKDEL key group [KEEPREF|DELREF|ACKED] IDS numids id [id ...]`
pub fn xackdel(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    ctx.stream(args[1])?;
    let a = parse_ackdel(args, 3)?;
    let ids = &args[a.start..a.start + a.numids];
    Ok(xackdel_ids(ctx, args[1], args[2], a.policy, ids)?.into())
}

/// XACKDEL with its IDs as given, in the command's order: writes refused, the key's
/// type, every ID not found without the key or the group (the IDs not even parsed, as in
/// redis-server), every ID strictly; then [`xackdel_typed`].
pub fn xackdel_ids(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    group: &[u8],
    policy: RefPolicy,
    ids: &[&[u8]],
) -> CmdResult<Vec<DeleteOutcome>> {
    super::check_refused(ctx)?;
    if !has_group(ctx, key, group)? {
        return Ok(vec![DeleteOutcome::NotFound; ids.len()]);
    }
    let ids = ids
        .iter()
        .map(|a| strict_id(a))
        .collect::<CmdResult<Vec<StreamId>>>()?;
    let typed = XackdelArgs {
        key,
        group,
        policy,
        ids: &ids,
    };
    xackdel_typed(ctx, &typed)
}

/// Typed arguments of XACKDEL: acknowledge `ids` in `group` of `key`, then delete the
/// acknowledged entries from the stream under `policy`.
#[derive(Clone, Debug)]
pub struct XackdelArgs<'a> {
    pub key: &'a [u8],
    pub group: &'a [u8],
    pub policy: RefPolicy,
    pub ids: &'a [StreamId],
}

impl XackdelArgs<'_> {
    /// The command in canonical form, for the log.
    pub fn to_argv(&self) -> Vec<Vec<u8>> {
        let policy: &[u8] = match self.policy {
            RefPolicy::KeepRef => b"KEEPREF",
            RefPolicy::DelRef => b"DELREF",
            RefPolicy::Acked => b"ACKED",
        };
        let mut v = vec![
            b"XACKDEL".to_vec(),
            self.key.to_vec(),
            self.group.to_vec(),
            policy.to_vec(),
            b"IDS".to_vec(),
            self.ids.len().to_string().into_bytes(),
        ];
        v.extend(self.ids.iter().map(|id| id.to_bytes()));
        v
    }
}

/// XACKDEL from typed arguments, as one whole command (write refusal, its log record):
/// per ID, [`DeleteOutcome::NotFound`] when it was not
/// pending in the group (every ID without the key or the group), else acknowledged and
/// [`DeleteOutcome::Deleted`] (deleted, or already gone from the stream) or
/// [`DeleteOutcome::Referenced`] (kept under ACKED: another group still references it).
pub fn xackdel_typed(ctx: &mut Ctx<'_>, a: &XackdelArgs<'_>) -> CmdResult<Vec<DeleteOutcome>> {
    super::typed_write(ctx, || a.to_argv(), |ctx| xackdel_run(ctx, a))
}

fn xackdel_run(ctx: &mut Ctx<'_>, a: &XackdelArgs<'_>) -> CmdResult<Vec<DeleteOutcome>> {
    let Some(s) = ctx.stream(a.key)? else {
        return Ok(vec![DeleteOutcome::NotFound; a.ids.len()]);
    };
    let Some(g) = s.groups.lookup(a.group) else {
        return Ok(vec![DeleteOutcome::NotFound; a.ids.len()]);
    };
    let mut out = Vec::with_capacity(a.ids.len());
    let mut deleted = 0u64;
    let mut first_entry = false;
    let mut dirty = 0u64;
    for &id in a.ids {
        let mut code = DeleteOutcome::NotFound;
        if let Some(p) = s.groups.get(g).pel_idx(&id) {
            s.groups.remove_pending(g, p);
            dirty += 1;
            let (c, _) = delete_with_policy(s, id, a.policy);
            if c == DeleteOutcome::Deleted {
                if id == s.first_id {
                    first_entry = true;
                }
                if id > s.max_deleted_id {
                    s.max_deleted_id = id;
                }
                deleted += 1;
            }
            // An acknowledged entry missing from the stream still counts as deleted.
            code = match c {
                DeleteOutcome::Referenced => DeleteOutcome::Referenced,
                _ => DeleteOutcome::Deleted,
            };
        }
        out.push(code);
    }
    if deleted > 0 {
        s.fix_first_after_delete(first_entry);
        ctx.touch(a.key);
    }
    ctx.dirty += dirty + deleted;
    Ok(out)
}

/// `XNACK key group <SILENT|FAIL|FATAL> IDS numids id [id ...] [RETRYCOUNT count] [FORCE]`
pub fn xnack(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    // The group is looked up before the options are parsed, as in redis-server.
    let group = match ctx.stream(args[1])? {
        Some(s) => s.groups.lookup(args[2]),
        None => None,
    };
    if group.is_none() {
        return Err(CmdError::nogroup_key_or_group(args[1], args[2]));
    }
    let mode = if is(args[3], "SILENT") {
        NackMode::Silent
    } else if is(args[3], "FAIL") {
        NackMode::Fail
    } else if is(args[3], "FATAL") {
        NackMode::Fatal
    } else {
        return Err(CmdError::xnack_mode());
    };
    let argc = args.len();
    let mut ids_start = 0usize;
    let mut numids = 0usize;
    let mut force = false;
    let mut retrycount: Option<u64> = None;
    let mut i = 4;
    while i < argc {
        let more = argc - 1 - i;
        let opt = args[i];
        if is(opt, "IDS") && more > 0 {
            let n = string2ll(args[i + 1])
                .filter(|&n| (1..=i64::from(i32::MAX)).contains(&n))
                .ok_or_else(CmdError::xnack_numids)?;
            ids_start = i + 2;
            if n as usize > argc - ids_start {
                return Err(CmdError::xnack_numids_mismatch());
            }
            numids = n as usize;
            i = ids_start + numids - 1;
        } else if is(opt, "FORCE") {
            force = true;
        } else if is(opt, "RETRYCOUNT") && more > 0 {
            i += 1;
            let r = int(args[i])?;
            if r < 0 {
                return Err(CmdError::xnack_retrycount());
            }
            retrycount = Some(r as u64);
        } else {
            return Err(CmdError::xnack_unrecognized(opt));
        }
        i += 1;
    }
    if ids_start == 0 {
        return Err(CmdError::xnack_expected_ids());
    }
    let ids = args[ids_start..ids_start + numids]
        .iter()
        .map(|a| strict_id(a))
        .collect::<CmdResult<Vec<StreamId>>>()?;
    let mut a = NackArgs::new(args[1], args[2], mode, &ids);
    a.retry_count = retrycount;
    a.force = force;
    Ok(Reply::Int(xnack_typed(ctx, &a)? as i64))
}

/// XNACK from typed arguments, as one whole command (write refusal, its log record): the
/// group lookup (NOGROUP), then the release; how many entries were released. Readers
/// blocked on the key are woken.
pub fn xnack_typed(ctx: &mut Ctx<'_>, a: &NackArgs<'_>) -> CmdResult<u64> {
    super::typed_write(ctx, || a.to_argv(), |ctx| xnack_run(ctx, a))
}

fn xnack_run(ctx: &mut Ctx<'_>, a: &NackArgs<'_>) -> CmdResult<u64> {
    let g = match ctx.stream(a.key)? {
        Some(s) => s.groups.lookup(a.group),
        None => None,
    };
    let Some(g) = g else {
        return Err(CmdError::nogroup_key_or_group(a.key, a.group));
    };
    let s = ctx.stream(a.key)?.expect("checked");
    let nacked = s.group_mut(g).nack(a.ids, a.mode, a.retry_count, a.force);
    if nacked > 0 {
        ctx.dirty += nacked;
        ctx.signal(a.key);
    }
    Ok(nacked)
}
