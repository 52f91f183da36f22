//! XADD and XTRIM, which share their option parser (trimming strategies, reference
//! policies, and for XADD: NOMKSTREAM, IDMP/IDMPAUTO and the ID).

use super::args::{eq, int, is};
use super::{encode_arg, encode_header, Ctx, LogRecord};
use crate::command::reply::Reply;
use crate::error::{CmdError, CmdResult};
use crate::structures::id::{parse_id, IdText, StreamId};
use crate::structures::idmp::auto_iid;
use crate::structures::stream::{AppendError, RefPolicy, TrimArgs, TrimStrategy};

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
    out.trim = trim_args(
        ctx,
        strategy,
        approx,
        limit_given.then_some(limit),
        policy,
        xadd,
    )?;
    Ok(out)
}

/// The trimming options of XADD / XTRIM once their words are read (a `LIMIT` already
/// checked for being a non-negative integer): the checks redis-server makes after its
/// option loop, in its order, and the default limit of an approximate trim
/// (100 × `stream-node-max-entries`, within 1..=1,000,000). Typed callers that take
/// the options in another form (the bindings' client) build their trim with it, so
/// their errors are the parser's. `Ok(None)`: no strategy (XADD only).
pub fn trim_args(
    ctx: &Ctx<'_>,
    strategy: Option<TrimStrategy>,
    approx: bool,
    limit: Option<i64>,
    policy: Option<RefPolicy>,
    xadd: bool,
) -> CmdResult<Option<TrimArgs>> {
    let limit_given = limit.is_some();
    let mut limit = limit.unwrap_or(0);
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
    Ok(strategy.map(|strategy| TrimArgs {
        strategy,
        approx,
        limit: limit as u64,
        policy: policy.unwrap_or(RefPolicy::KeepRef),
    }))
}

/// Typed arguments of one XADD: what [`parse_xadd`] makes of its argument vector, and
/// what typed callers (the batch paths, [`crate::Store::xadd`]) build directly.
///
/// ```
/// use xstreams_core::command::XaddArgs;
/// let pairs: [&[u8]; 2] = [b"field", b"value"];
/// let args = XaddArgs::new(b"events", &pairs);
/// assert!(args.id.is_none()); // `*`: the store picks the next ID
/// ```
#[derive(Clone, Debug)]
pub struct XaddArgs<'a> {
    pub key: &'a [u8],
    /// Explicit ID (`None` for `*`) and whether its sequence was given (`5-*` has not).
    pub id: Option<(StreamId, bool)>,
    /// `NOMKSTREAM`: a missing key is not created (the outcome is `None`).
    pub no_mkstream: bool,
    /// `IDMP pid iid` (`Some(iid)`) or `IDMPAUTO pid` (`None`).
    pub idmp: Option<(&'a [u8], Option<&'a [u8]>)>,
    /// `MAXLEN|MINID [=|~] threshold [LIMIT n]` with its reference policy.
    pub trim: Option<TrimArgs>,
    /// Field names and values, alternating.
    pub pairs: &'a [&'a [u8]],
}

impl<'a> XaddArgs<'a> {
    /// `XADD key * field value ...` with no option.
    pub fn new(key: &'a [u8], pairs: &'a [&'a [u8]]) -> Self {
        XaddArgs {
            key,
            id: None,
            no_mkstream: false,
            idmp: None,
            trim: None,
            pairs,
        }
    }

    /// The checks XADD's parser makes on options that typed callers set directly (empty
    /// producer or IID, an explicit ID with IDMP unless `replaying`), with the parser's
    /// errors.
    pub fn check_typed(&self, replaying: bool) -> CmdResult<()> {
        if let Some((pid, iid)) = self.idmp {
            if pid.is_empty() {
                return Err(if iid.is_some() {
                    CmdError::idmp_empty_pid()
                } else {
                    CmdError::idmpauto_empty_pid()
                });
            }
            if iid.is_some_and(|i| i.is_empty()) {
                return Err(CmdError::idmp_empty_iid());
            }
            if self.id.is_some() && !replaying {
                return Err(CmdError::idmp_needs_auto_id());
            }
        }
        Ok(())
    }

    /// The XADD command these arguments stand for, in the form the log records: the
    /// options in canonical order, `id` in place of the requested one, and the trimming
    /// threshold replaced by `threshold` (an approximate trim rewritten as exact).
    /// Written straight in RESP: one buffer per row of a batch, no argument vector.
    fn log_record(&self, id: Option<StreamId>, threshold: Option<&[u8]>) -> LogRecord {
        // Texts of the numbers and IDs the words below point into (on the stack; only
        // an `<ms>-*` ID is written into a vector).
        let (mut num, mut limit) = (itoa::Buffer::new(), itoa::Buffer::new());
        let minid: IdText;
        let id_text: IdText;
        let mut ms_star = Vec::new();
        // The words before the pairs: XADD key, at most 10 option words, the ID.
        let mut words: [&[u8]; 13] = [b""; 13];
        let mut n = 0;
        let mut push = |w| {
            words[n] = w;
            n += 1;
        };
        push(b"XADD");
        push(self.key);
        if self.no_mkstream {
            push(b"NOMKSTREAM");
        }
        match self.idmp {
            Some((pid, Some(iid))) => {
                push(b"IDMP");
                push(pid);
                push(iid);
            }
            Some((pid, None)) => {
                push(b"IDMPAUTO");
                push(pid);
            }
            None => {}
        }
        if let Some(t) = &self.trim {
            push(match t.policy {
                RefPolicy::KeepRef => b"KEEPREF",
                RefPolicy::DelRef => b"DELREF",
                RefPolicy::Acked => b"ACKED",
            });
            let (name, value): (&[u8], &[u8]) = match t.strategy {
                TrimStrategy::MaxLen(v) => (b"MAXLEN", num.format(v).as_bytes()),
                TrimStrategy::MinId(v) => {
                    minid = v.text();
                    (b"MINID", minid.as_bytes())
                }
            };
            push(name);
            match threshold {
                Some(th) => {
                    push(b"=");
                    push(th);
                }
                None if t.approx => {
                    push(b"~");
                    push(value);
                    push(b"LIMIT");
                    push(limit.format(t.limit).as_bytes());
                }
                None => {
                    push(b"=");
                    push(value);
                }
            }
        }
        push(match (id, self.id) {
            (Some(id), _) | (None, Some((id, true))) => {
                id_text = id.text();
                id_text.as_bytes()
            }
            (None, Some((id, false))) => {
                ms_star.extend_from_slice(itoa::Buffer::new().format(id.ms).as_bytes());
                ms_star.extend_from_slice(b"-*");
                &ms_star
            }
            (None, None) => b"*",
        });
        let words = &words[..n];
        let size: usize = words.iter().chain(self.pairs).map(|w| w.len() + 16).sum();
        let mut out = Vec::with_capacity(size + 16);
        encode_header(&mut out, words.len() + self.pairs.len());
        for w in words.iter().chain(self.pairs) {
            encode_arg(&mut out, w);
        }
        LogRecord::Resp(out)
    }
}

/// What one XADD did: the entry's ID, or for an IDMP duplicate (`duplicate`) the ID of
/// the entry first added for that (producer, IID) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XaddOutcome {
    pub id: StreamId,
    pub duplicate: bool,
}

/// An executed XADD, with what its propagation needs.
struct Executed {
    outcome: XaddOutcome,
    /// The exact threshold an approximate KEEPREF trim reached.
    threshold: Option<Vec<u8>>,
}

/// Parse XADD's argument vector into typed arguments. Errors come in redis-server's
/// order.
pub fn parse_xadd<'a>(ctx: &Ctx<'_>, args: &'a [&'a [u8]]) -> CmdResult<XaddArgs<'a>> {
    let opts = parse_add_trim(ctx, args, true)?;
    let field_pos = (opts.id_pos + 1).min(args.len());
    Ok(XaddArgs {
        key: args[1],
        id: opts.id,
        no_mkstream: opts.no_mkstream,
        idmp: opts.idmp,
        trim: opts.trim,
        pairs: &args[field_pos..],
    })
}

/// The one implementation of XADD, shared by the argument-vector handler and typed
/// callers: checks in redis-server's order after parsing, the IDMP lookup, the append,
/// trimming. `Ok(None)`: NOMKSTREAM on a missing key.
fn execute(ctx: &mut Ctx<'_>, a: &XaddArgs<'_>) -> CmdResult<Option<Executed>> {
    if a.pairs.len() < 2 || a.pairs.len() % 2 == 1 {
        return Err(CmdError::arity("xadd"));
    }
    if let Some((id, true)) = a.id {
        if id.is_zero() {
            return Err(CmdError::xadd_id_zero());
        }
    }
    let key = a.key;
    let pairs = a.pairs;
    let now = ctx.now;
    let (cfg, s) = match ctx.stream_and_config(key)? {
        Some(found) => found,
        None => {
            if a.no_mkstream {
                return Ok(None);
            }
            ctx.stream_or_create(key)?;
            ctx.stream_and_config(key)?.expect("stream just created")
        }
    };
    // IDMP: a known (pid, iid) returns the recorded ID before anything else is checked.
    let auto: [u8; 16];
    let mut idmp_iid: Option<(&[u8], &[u8])> = None;
    let mut new_producer = false;
    if let Some((pid, iid)) = a.idmp {
        // Nothing expires here: as in redis-server, expired IIDs stay until the periodic
        // sweep (Keyspace::cron) drops them.
        let iid = match iid {
            Some(i) => i,
            None => {
                auto = auto_iid(pairs);
                &auto
            }
        };
        let (created, recorded) = s.idmp.ensure_and_lookup(pid, iid);
        new_producer = created;
        if let Some(orig) = recorded {
            s.idmp.iids_duplicates += 1;
            ctx.dirty += 1;
            return Ok(Some(Executed {
                outcome: XaddOutcome {
                    id: orig,
                    duplicate: true,
                },
                threshold: None,
            }));
        }
        idmp_iid = Some((pid, iid));
    }
    let appended = if s.last_id == StreamId::MAX {
        Err(CmdError::xadd_exhausted())
    } else {
        match s.append(cfg, now, a.id, pairs) {
            Ok(id) => Ok(id),
            Err(AppendError::IdTooSmall) => Err(CmdError::xadd_id_too_small()),
            Err(AppendError::TooLarge) => Err(CmdError::elements_too_large()),
        }
    };
    let id = match appended {
        Ok(id) => id,
        Err(e) => {
            if let (true, Some((pid, _))) = (new_producer, a.idmp) {
                // A failed XADD leaves no producer it created: redis-server 8.8 keeps it
                // on a key its expiry never visits, so nothing frees it (upstream issue
                // #15840, docs/differences.md "idmp-failed-producer").
                s.idmp.remove_empty_producer(pid);
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
    let mut threshold = None;
    if let Some(t) = &a.trim {
        s.trim(t);
        if t.approx && t.policy == RefPolicy::KeepRef {
            threshold = Some(trim_threshold(s, t));
        }
    }
    if tracked {
        ctx.track_idmp(key);
    }
    ctx.dirty += 1;
    ctx.signal(key);
    ctx.touch(key);
    Ok(Some(Executed {
        outcome: XaddOutcome {
            id,
            duplicate: false,
        },
        threshold,
    }))
}

/// `XADD key [NOMKSTREAM] [KEEPREF|DELREF|ACKED] [IDMPAUTO pid | IDMP pid iid]
/// [MAXLEN|MINID [=|~] threshold [LIMIT count]] <*|id> field value [field value ...]`
pub fn xadd(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Reply> {
    Ok(xadd_argv(ctx, args)?.map_or(Reply::Nil, |o| Reply::id(&o.id)))
}

/// XADD from its argument vector, with its typed outcome (`None`: NOMKSTREAM on a missing
/// key): its parser, then [`xadd_typed`].
pub fn xadd_argv(ctx: &mut Ctx<'_>, args: &[&[u8]]) -> CmdResult<Option<XaddOutcome>> {
    let a = parse_xadd(ctx, args)?;
    xadd_typed(ctx, &a)
}

/// XADD from typed arguments, as one whole command: write refusal (read-only store, log
/// failure, `maxmemory`), the parser's checks on the typed options, execution, and the
/// command's one log record (in canonical form, with the ID and an approximate trim
/// rewritten, as redis-server propagates it). `None`: NOMKSTREAM on a missing key.
pub fn xadd_typed(ctx: &mut Ctx<'_>, a: &XaddArgs<'_>) -> CmdResult<Option<XaddOutcome>> {
    super::check_write(ctx)?;
    a.check_typed(ctx.replaying)?;
    let ex = execute(ctx, a);
    // The record is this one (the argument vector it may come from is not logged).
    ctx.recorded = true;
    let ex = ex?;
    if ctx.dirty > 0 && ctx.ks.mem.tracking() {
        let n = a.key.len() + a.pairs.iter().map(|p| p.len()).sum::<usize>();
        ctx.ks.mem.note_write(n as u64);
    }
    if ctx.dirty > 0 && ctx.recording() {
        let record = match &ex {
            Some(ex) if !ex.outcome.duplicate => {
                let id = (!matches!(a.id, Some((_, true)))).then_some(ex.outcome.id);
                a.log_record(id, ex.threshold.as_deref())
            }
            _ => a.log_record(None, None),
        };
        ctx.propagate_record(record);
    }
    Ok(ex.map(|e| e.outcome))
}

/// The exact threshold an approximate KEEPREF trim reached, for the log (MAXLEN: the
/// length left; MINID: the first ID still accounted, deleted or not), as redis-server
/// rewrites it. Approximate trims with DELREF/ACKED work entry by entry within a limit
/// and have no exact equivalent: they are logged as given and replayed with their limit.
fn trim_threshold(s: &crate::structures::stream::Stream, t: &TrimArgs) -> Vec<u8> {
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
    let pending = |s: &crate::structures::stream::Stream| -> usize {
        s.groups.iter().map(|(_, _, g)| g.pel_len()).sum()
    };
    let pending_before = (t.policy == RefPolicy::DelRef).then(|| pending(s));
    let deleted = s.trim(&t);
    // A DELREF trim that deleted no entry may still have dropped the references of the
    // tombstones it passed ("delref-tombstones", docs/differences.md): that is a change,
    // logged (and replayed) like any other.
    let refs_dropped = pending_before.is_some_and(|n| n != pending(s));
    let rewrite = if deleted > 0 && t.approx && t.policy == RefPolicy::KeepRef {
        Some(trim_threshold(s, &t))
    } else {
        None
    };
    ctx.dirty += deleted.max(u64::from(refs_dropped));
    if deleted > 0 || refs_dropped {
        ctx.touch(args[1]);
    }
    if let Some(v) = rewrite {
        ctx.rewrite_arg(args, opts.trim_arg - 1, b"=".to_vec());
        ctx.rewrite_arg(args, opts.trim_arg, v);
    }
    Ok(Reply::Int(deleted as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::encode_command;

    fn logged(a: &XaddArgs<'_>, id: Option<StreamId>, threshold: Option<&[u8]>) -> String {
        match a.log_record(id, threshold) {
            LogRecord::Resp(b) => String::from_utf8(b).unwrap(),
            other => panic!("XADD logs RESP, got {other:?}"),
        }
    }

    fn resp(line: &str) -> String {
        let words: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        let mut out = Vec::new();
        encode_command(&mut out, &words);
        String::from_utf8(out).unwrap()
    }

    fn trim(strategy: TrimStrategy, approx: bool, policy: RefPolicy) -> Option<TrimArgs> {
        Some(TrimArgs {
            strategy,
            approx,
            limit: 100,
            policy,
        })
    }

    #[test]
    fn log_record_is_the_canonical_command_in_resp() {
        let pairs: [&[u8]; 4] = [b"f", b"v", b"g", b""];
        let mut a = XaddArgs::new(b"k", &pairs);
        let id = Some(StreamId::new(5, 1));
        assert_eq!(logged(&a, None, None), resp("XADD k * f v g "));
        assert_eq!(logged(&a, id, None), resp("XADD k 5-1 f v g "));
        a.no_mkstream = true;
        a.idmp = Some((b"p", Some(b"i")));
        a.trim = trim(TrimStrategy::MaxLen(10), true, RefPolicy::KeepRef);
        assert_eq!(
            logged(&a, id, None),
            resp("XADD k NOMKSTREAM IDMP p i KEEPREF MAXLEN ~ 10 LIMIT 100 5-1 f v g ")
        );
        assert_eq!(
            logged(&a, id, Some(b"7")),
            resp("XADD k NOMKSTREAM IDMP p i KEEPREF MAXLEN = 7 5-1 f v g ")
        );
        a.no_mkstream = false;
        a.idmp = Some((b"p", None));
        a.trim = trim(
            TrimStrategy::MinId(StreamId::new(3, 4)),
            false,
            RefPolicy::Acked,
        );
        assert_eq!(
            logged(&a, None, None),
            resp("XADD k IDMPAUTO p ACKED MINID = 3-4 * f v g ")
        );
        a.idmp = None;
        a.trim = trim(TrimStrategy::MaxLen(0), false, RefPolicy::DelRef);
        a.id = Some((StreamId::new(1_700_000_000_000, 0), false));
        assert_eq!(
            logged(&a, None, None),
            resp("XADD k DELREF MAXLEN = 0 1700000000000-* f v g ")
        );
        a.id = Some((StreamId::new(u64::MAX, u64::MAX), true));
        let max = "18446744073709551615-18446744073709551615";
        assert_eq!(
            logged(&a, None, None),
            resp(&format!("XADD k DELREF MAXLEN = 0 {max} f v g "))
        );
    }
}
